# Shared by hip.sh and rocrand.sh (sourced, not run): options, test selection, one process per test case under
# `wavejit exec` with a time limit, and the JSON results. A suite script defines, before calling suite_main:
#   SUITE, TAG          the suite's name and the upstream tag its --src must be at
#   suite_usage         prints the suite's own part of --help
#   suite_build         builds into $BUILD; prints nothing on stdout
#   suite_binaries      prints "NAME<TAB>PATH<TAB>WORKDIR" per built test program, in run order
#   suite_list PATH     prints the test case names of one program (run under wavejit exec: $EXEC)
#   suite_cmd PATH NAME prints nothing; sets CMD (an array) to run that one test case
#   suite_status RC LOG prints passed, failed or skipped for a finished test case

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SRC=""
BUILD=""
WAVEJIT="$REPO/target/release/wavejit"
COMMIT=""
DRIVER=hsa
DEVICE=""
JOBS=1
TIMEOUT=300
SHARD=1/1
FILTER=""
EXCLUDE=${DEFAULT_EXCLUDE:-}
RESULTS=""
ONLY=""
BUILD_ONLY=0
NO_BUILD=0

common_usage() {
    cat <<EOF
Options:
  --src DIR         checkout of $SUITE at tag $TAG (required), for example
                      git clone --branch $TAG --depth 1 <$SUITE's repository> DIR
  --build DIR       where to build and keep logs, outside this repository (default: $DEFAULT_BUILD)
  --wavejit PATH    the wavejit binary; libhsa_runtime64.so and libwavejit_driver.so must sit beside it
                    (default: target/release/wavejit of this checkout, $WAVEJIT)
  --commit REV      the wavejit commit to record in the results (default: \`git rev-parse HEAD\` of the
                    checkout holding --wavejit, else of this checkout)
  --driver hsa|kfd  passed to \`wavejit exec --driver\` (default: hsa)
  --device LIST     passed to \`wavejit exec --device\` (default: wavejit's, one MI210 for gfx90a programs)
  --jobs N          compile jobs and test processes at a time (default: 1)
  --timeout SECS    limit per test case, after which it counts as timed out (default: 300)
  --shard K/N       run only the test cases whose position in the whole list, counted from 0, is K-1 modulo N
                    (default: 1/1, all); the list is in program order, so each shard gets some of every program
  --filter REGEX    run only test cases whose "PROGRAM:TEST NAME" matches this extended regex (grep -E)
  --exclude REGEX   leave out test cases whose "PROGRAM:TEST NAME" matches this extended regex
                    (default: ${DEFAULT_EXCLUDE:-none}; --exclude '' runs them all)
  --only LIST       build and run only these test programs (comma-separated names, as in the results)
  --build-only      build, then stop
  --no-build        run what BUILD holds, without bringing the build up to date first
  --results FILE    write the results as JSON here (default: BUILD/results-DRIVER-K-of-N.json)
  -h, --help        this text

Each test case runs alone: \`timeout SECS wavejit exec --driver DRIVER -- PROGRAM ONE-TEST\`, its output kept in
BUILD/run-DRIVER-DATE-*/logs/PROGRAM/ (the run's directory also holds its list of test cases). A test case is
"timed out" when the limit ends it, "skipped" when the test itself says so, "failed" on any other non-zero exit
(crashes included), "passed" otherwise.
The results file: {"suite", "tag", "wavejit", "wavejit_commit", "driver", "device", "shard", "filter",
"exclude", "timeout", "jobs", "elapsed_seconds", "programs": {NAME: {"passed", "failed", "skipped", "timed_out",
"wall_seconds", "failures": [{"name", "status", "seconds", "log", "tail"}]}}, "totals": {...}}; "tail" is the last
lines of a failure's output, wall_seconds the sum of the test processes' times, elapsed_seconds the whole
run's (its test cases only).
A summary table goes to stdout, ending with a line "N passed, N failed, N skipped, N timed out".
scripts/suites/selftest.sh checks these scripts with stand-in programs (no ROCm, no upstream source).
EOF
}

die() {
    echo "${0##*/}: $*" >&2
    exit 2
}

parse_args() {
    while [ $# -gt 0 ]; do
        case "$1" in
        --src) SRC=${2:?--src needs a directory}; shift ;;
        --build) BUILD=${2:?--build needs a directory}; shift ;;
        --wavejit) WAVEJIT=${2:?--wavejit needs a path}; shift ;;
        --commit) COMMIT=${2:?--commit needs a revision}; shift ;;
        --driver) DRIVER=${2:?--driver needs hsa or kfd}; shift ;;
        --device) DEVICE=${2:?--device needs a list of GPUs}; shift ;;
        --jobs) JOBS=${2:?--jobs needs a number}; shift ;;
        --timeout) TIMEOUT=${2:?--timeout needs seconds}; shift ;;
        --shard) SHARD=${2:?--shard needs K/N}; shift ;;
        --filter) FILTER=${2:?--filter needs a regex}; shift ;;
        --exclude) EXCLUDE=${2?--exclude needs a regex}; shift ;;
        --only) ONLY=${2:?--only needs program names}; shift ;;
        --build-only) BUILD_ONLY=1 ;;
        --no-build) NO_BUILD=1 ;;
        --results) RESULTS=${2:?--results needs a file}; shift ;;
        -h | --help) suite_usage; common_usage; exit 0 ;;
        *) die "unknown argument '$1' (see --help)" ;;
        esac
        shift
    done
    [ -n "$SRC" ] || die "--src DIR is required (see --help)"
    [ -d "$SRC" ] || die "--src $SRC is not a directory"
    SRC=$(cd "$SRC" && pwd)
    BUILD=${BUILD:-$DEFAULT_BUILD}
    mkdir -p "$BUILD"
    BUILD=$(cd "$BUILD" && pwd)
    case "$BUILD/" in "$REPO"/*) die "--build $BUILD is inside this repository; choose a directory outside it" ;; esac
    case "$DRIVER" in hsa | kfd) ;; *) die "--driver must be hsa or kfd, not '$DRIVER'" ;; esac
    [[ "$JOBS" =~ ^[1-9][0-9]*$ ]] || die "--jobs must be a positive number, not '$JOBS'"
    [[ "$TIMEOUT" =~ ^[1-9][0-9]*$ ]] || die "--timeout must be a positive number of seconds, not '$TIMEOUT'"
    [[ "$SHARD" =~ ^([1-9][0-9]*)/([1-9][0-9]*)$ ]] || die "--shard must be K/N, not '$SHARD'"
    SHARD_K=${BASH_REMATCH[1]}
    SHARD_N=${BASH_REMATCH[2]}
    [ "$SHARD_K" -le "$SHARD_N" ] || die "--shard $SHARD: K must not exceed N"
    local re rc
    for re in "$FILTER" "$EXCLUDE"; do
        rc=0
        [ -z "$re" ] || echo | grep -Eq -- "$re" 2>/dev/null || rc=$?
        [ "$rc" -le 1 ] || die "'$re' is not a valid extended regex"
    done
    RESULTS=${RESULTS:-$BUILD/results-$DRIVER-$SHARD_K-of-$SHARD_N.json}
    if [ "$BUILD_ONLY" = 0 ]; then
        [ -x "$WAVEJIT" ] || die "--wavejit $WAVEJIT is not an executable (build it: cargo build --release)"
        WAVEJIT=$(cd "$(dirname "$WAVEJIT")" && pwd)/$(basename "$WAVEJIT")
        if [ -z "$COMMIT" ]; then
            COMMIT=$(git -C "$(dirname "$WAVEJIT")" rev-parse HEAD 2>/dev/null || git -C "$REPO" rev-parse HEAD)
        fi
    fi
    EXEC=(timeout -k 10 "$TIMEOUT" "$WAVEJIT" exec --driver "$DRIVER" ${DEVICE:+--device "$DEVICE"} --)
}

# Whether program $1 was asked for with --only.
wanted() {
    [ -z "$ONLY" ] || [[ ",$ONLY," == *",$1,"* ]]
}

# Runs one test case: $1 is its line "INDEX<TAB>PROGRAM<TAB>PATH<TAB>WORKDIR<TAB>NAME" of the selected list.
# Writes RUN/records/INDEX: "PROGRAM<TAB>STATUS<TAB>SECONDS<TAB>LOG<TAB>NAME".
run_one() {
    local index program path workdir name log start rc status seconds
    IFS=$'\t' read -r index program path workdir name <<<"$1"
    log="$RUN/logs/$program/$index.log"
    mkdir -p "$(dirname "$log")"
    suite_cmd "$path" "$name"
    start=$(date +%s.%N)
    rc=0
    { (cd "$workdir" && "${EXEC[@]}" "${CMD[@]}") >"$log" 2>&1 </dev/null; } 2>/dev/null || rc=$?
    seconds=$(echo "$(date +%s.%N) - $start" | bc)
    if [ "$rc" = 124 ] || { [ "$rc" = 137 ] && [ "$(echo "$seconds >= $TIMEOUT" | bc)" = 1 ]; }; then
        status=timed_out
        echo "(stopped by the ${TIMEOUT} s limit)" >>"$log"
    else
        [ "$rc" -le 128 ] || echo "(ended by signal $((rc - 128)))" >>"$log"
        status=$(suite_status "$rc" "$log")
    fi
    printf '%s\t%s\t%.1f\t%s\t%s\n' "$program" "$status" "$seconds" "$log" "$name" >"$RUN/records/$index"
    printf '%-8s %6.1fs %s: %s\n' "$status" "$seconds" "$program" "$name"
}

write_results() {
    python3 - "$RUN/records" "$RESULTS" "$SUITE" "$TAG" "$WAVEJIT" "$COMMIT" "$DRIVER" "$DEVICE" "$SHARD" "$FILTER" \
        "$EXCLUDE" "$TIMEOUT" "$(($(date +%s) - STARTED))" "$JOBS" <<'EOF'
import json, os, sys
records, out, suite, tag, wavejit, commit, driver, device, shard, flt, exclude, timeout, elapsed, jobs = sys.argv[1:]
programs = {}
for f in sorted(os.listdir(records), key=int):
    program, status, seconds, log, name = open(os.path.join(records, f)).read().rstrip("\n").split("\t", 4)
    p = programs.setdefault(program, dict(passed=0, failed=0, skipped=0, timed_out=0, wall_seconds=0.0, failures=[]))
    p[status] += 1
    p["wall_seconds"] = round(p["wall_seconds"] + float(seconds), 1)
    if status in ("failed", "timed_out"):
        lines = open(log, errors="replace").read().splitlines()
        tail = "\n".join(lines[-25:])[-3000:]
        p["failures"].append(dict(name=name, status=status, seconds=float(seconds), log=log, tail=tail))
keys = ("passed", "failed", "skipped", "timed_out", "wall_seconds")
totals = {k: round(sum(p[k] for p in programs.values()), 1) for k in keys}
json.dump(dict(suite=suite, tag=tag, wavejit=wavejit, wavejit_commit=commit, driver=driver, device=device or "default",
               shard=shard, filter=flt, exclude=exclude, timeout=int(timeout), jobs=int(jobs),
               elapsed_seconds=int(elapsed), programs=programs, totals=totals), open(out, "w"), indent=1)
print(f"{'program':32} {'passed':>7} {'failed':>7} {'skipped':>7} {'timeout':>7} {'wall s':>8}")
for name, p in list(programs.items()) + [("all", totals)]:
    print(f"{name:32} {p['passed']:7} {p['failed']:7} {p['skipped']:7} {p['timed_out']:7} {p['wall_seconds']:8.0f}")
print(f"results: {out}")
print(f"{totals['passed']} passed, {totals['failed']} failed, {totals['skipped']} skipped, {totals['timed_out']} timed out")
EOF
}

suite_main() {
    parse_args "$@"
    [ "$NO_BUILD" = 1 ] || suite_build
    [ "$BUILD_ONLY" = 0 ] || return 0
    # This run's directory: the whole list, in program order, this shard's part of it, filtered, the records
    # of the test cases run and their output.
    RUN=$(mktemp -d "$BUILD/run-$DRIVER-$(date +%Y%m%d-%H%M%S)-XXXX")
    mkdir -p "$RUN/records" "$RUN/logs"
    local all="$RUN/tests.tsv" selected="$RUN/selected.tsv"
    local program path workdir name i=0
    : >"$all"
    while IFS=$'\t' read -r program path workdir; do
        wanted "$program" || continue
        local names
        names=$(cd "$workdir" && suite_list "$path") || die "could not list the test cases of $path"
        [ -n "$names" ] || echo "warning: $path lists no test cases" >&2
        while IFS= read -r name; do
            [ -n "$name" ] && printf '%s\t%s\t%s\t%s\n' "$program" "$path" "$workdir" "$name"
        done <<<"$names" >>"$all"
    done < <(suite_binaries)
    : >"$selected"
    while IFS=$'\t' read -r program path workdir name; do
        if [ $((i % SHARD_N)) = $((SHARD_K - 1)) ] && { [ -z "$FILTER" ] || grep -Eq -- "$FILTER" <<<"$program:$name"; } &&
            { [ -z "$EXCLUDE" ] || ! grep -Eq -- "$EXCLUDE" <<<"$program:$name"; }; then
            printf '%s\t%s\t%s\t%s\t%s\n' "$i" "$program" "$path" "$workdir" "$name" >>"$selected"
        fi
        i=$((i + 1))
    done <"$all"
    echo "$SUITE $TAG: $(wc -l <"$selected") of $i test cases (shard $SHARD${FILTER:+, filter $FILTER}${EXCLUDE:+, excluding $EXCLUDE}), driver $DRIVER, wavejit $COMMIT"
    echo "output of each test case: $RUN/logs"
    STARTED=$(date +%s)
    export -f run_one suite_cmd suite_status
    export RUN TIMEOUT
    export EXEC_STR
    EXEC_STR=$(declare -p EXEC)
    tr '\n' '\0' <"$selected" | xargs -0 -r -n 1 -P "$JOBS" bash -c 'eval "$EXEC_STR"; run_one "$1"' _
    write_results
}

# shellcheck shell=bash
# Shared by the suite scripts (sourced, not run): options, the upstream checkout, test selection, test cases run
# under `wavejit exec` with a time limit per test case, and the JSON results. A suite script defines, before
# calling suite_main:
#   SUITE, TAG, UPSTREAM  the suite's name, the upstream tag its source must be at, the repository to clone it from
#   DEFAULT_BUILD         where it builds unless --build says otherwise
#   DEFAULT_BATCH         test cases per process unless --batch says otherwise (1 if unset)
#   suite_usage           prints the suite's own part of --help
#   suite_build           builds into $BUILD from the checkout in $SRC (call need_src first); prints nothing on
#                         stdout; writes the names of all the suite's test programs to BUILD/programs, one a line
#                         (those of them not built are the results' not_built)
#   suite_binaries        prints "NAME<TAB>PATH<TAB>WORKDIR" per built test program, in run order; PATH is what
#                         suite_list and suite_cmd are given (a program, or for rocSPARSE a routine's test data)
#   suite_list PATH       prints the test case names of one program (run under wavejit exec: $EXEC)
#   suite_cmd PATH NAME.. prints nothing; sets CMD (an array) to run these test cases in one process
# and either, for programs that run one test case a process:
#   suite_status RC LOG   prints passed, failed or skipped for a finished test case
# or, for googletest programs, which say where each test starts and ends and so may run several a process:
#   suite_outcomes ...    gtest_outcomes, below
#   suite_started LOG     prints how many test cases the log shows started (gtest_started, below)
# A suite may also define suite_option NAME VALUE, for options of its own: it sets SHIFT to the number of words
# it took (1 or 2) and returns 0, or returns 1 for a name it does not know.

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
BATCH=${DEFAULT_BATCH:-1}
BUILD_ONLY=0
NO_BUILD=0
# The longest --gtest_filter a batch gets: Linux limits one argument to 128 KiB.
FILTER_BYTES=100000

common_usage() {
    cat <<EOF
Options:
  --src DIR         checkout of $SUITE at tag $TAG; without it the script clones the tag into BUILD/upstream
                      (git clone --branch $TAG --depth 1 $UPSTREAM), or uses the clone made before
  --upstream URL    the repository to clone when there is no --src (default: $UPSTREAM)
  --build DIR       where to build and keep logs, outside this repository (default: $DEFAULT_BUILD)
  --wavejit PATH    the wavejit binary: a release build's, beside libhsa_runtime64.so and libwavejit_driver.so,
                    or bin/wavejit of the release tarball (scripts/package.sh)
                    (default: target/release/wavejit of this checkout, $WAVEJIT)
  --commit REV      the wavejit commit to record in the results (default: the one \`wavejit --version\`
                    names, else \`git rev-parse HEAD\` of the checkout holding --wavejit, else "unknown")
  --driver hsa|kfd  passed to \`wavejit exec --driver\` (default: hsa)
  --device LIST     passed to \`wavejit exec --device\` (default: wavejit's, one MI210 for gfx90a programs)
  --jobs N          compile jobs and test processes at a time (default: 1)
  --timeout SECS    limit per test case, after which it counts as timed out (default: 300)
  --batch N         test cases a process at most (default: ${DEFAULT_BATCH:-1}); more than 1 only for googletest
                    programs, which print where each test starts and ends
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

Test cases run as \`setsid wavejit exec --driver DRIVER -- PROGRAM TEST-CASES\`, one process at a time per job.
The run's directory, BUILD/run-DRIVER-DATE-*, holds its list of test cases and, in logs/PROGRAM/, each
process's output as N.out and a googletest failure's own output as N.log (N: the test case's position in the
list). A test case is "timed out" when it runs longer than the limit (the process's group is ended and the rest
of its batch runs in a new process), "skipped" when the test itself says so, "failed" on any other failure
(crashes included: in a batch, the test case that was running), "passed" otherwise.
The results file: {"suite", "tag", "upstream", "wavejit", "wavejit_commit", "driver", "device", "shard",
"filter", "exclude", "timeout", "jobs", "batch", "elapsed_seconds", "not_built": [NAME...], "programs": {NAME:
{"listed", "passed", "failed", "skipped", "timed_out", "wall_seconds", "failures": [{"name", "status",
"seconds", "log", "tail"}]}}, "totals": {...}}; "listed" counts the program's test cases before --shard,
--filter and --exclude, "tail" is the last lines of a failure's output, wall_seconds the sum of the test
processes' times (a batch's start counted to its first test case), elapsed_seconds the whole run's (its test
cases only). scripts/suites/tables.py merges the results of shards and makes the tables of
docs/compatibility.md from results files.
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
        --upstream) UPSTREAM=${2:?--upstream needs a repository}; shift ;;
        --build) BUILD=${2:?--build needs a directory}; shift ;;
        --wavejit) WAVEJIT=${2:?--wavejit needs a path}; shift ;;
        --commit) COMMIT=${2:?--commit needs a revision}; shift ;;
        --driver) DRIVER=${2:?--driver needs hsa or kfd}; shift ;;
        --device) DEVICE=${2:?--device needs a list of GPUs}; shift ;;
        --jobs) JOBS=${2:?--jobs needs a number}; shift ;;
        --timeout) TIMEOUT=${2:?--timeout needs seconds}; shift ;;
        --batch) BATCH=${2:?--batch needs a number}; shift ;;
        --shard) SHARD=${2:?--shard needs K/N}; shift ;;
        --filter) FILTER=${2:?--filter needs a regex}; shift ;;
        --exclude) EXCLUDE=${2?--exclude needs a regex}; shift ;;
        --only) ONLY=${2:?--only needs program names}; shift ;;
        --build-only) BUILD_ONLY=1 ;;
        --no-build) NO_BUILD=1 ;;
        --results) RESULTS=${2:?--results needs a file}; shift ;;
        -h | --help) suite_usage; common_usage; exit 0 ;;
        *)
            SHIFT=0
            if declare -F suite_option >/dev/null && suite_option "$1" "${2-}"; then
                shift $((SHIFT - 1))
            else
                die "unknown argument '$1' (see --help)"
            fi
            ;;
        esac
        shift
    done
    if [ -n "$SRC" ]; then
        [ -d "$SRC" ] || die "--src $SRC is not a directory"
        SRC=$(cd "$SRC" && pwd)
    fi
    BUILD=${BUILD:-$DEFAULT_BUILD}
    mkdir -p "$BUILD"
    BUILD=$(cd "$BUILD" && pwd)
    case "$BUILD/" in "$REPO"/*) die "--build $BUILD is inside this repository; choose a directory outside it" ;; esac
    case "$DRIVER" in hsa | kfd) ;; *) die "--driver must be hsa or kfd, not '$DRIVER'" ;; esac
    [[ "$JOBS" =~ ^[1-9][0-9]*$ ]] || die "--jobs must be a positive number, not '$JOBS'"
    [[ "$TIMEOUT" =~ ^[1-9][0-9]*$ ]] || die "--timeout must be a positive number of seconds, not '$TIMEOUT'"
    [[ "$BATCH" =~ ^[1-9][0-9]*$ ]] || die "--batch must be a positive number, not '$BATCH'"
    [ "$BATCH" = 1 ] || declare -F suite_outcomes >/dev/null ||
        die "--batch $BATCH: $SUITE's programs run one test case a process"
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
            COMMIT=$("$WAVEJIT" --version 2>/dev/null | sed -n 's/.*(commit \([0-9a-f]*\)).*/\1/p')
        fi
        if [ -z "$COMMIT" ]; then
            COMMIT=$(git -C "$(dirname "$WAVEJIT")" rev-parse HEAD 2>/dev/null || echo unknown)
        fi
    fi
    # Listing a program's test cases is limited as one test case is; test cases run under the watchdog.
    RUN_EXEC=("$WAVEJIT" exec --driver "$DRIVER" ${DEVICE:+--device "$DEVICE"} --)
    EXEC=(timeout -k 10 "$TIMEOUT" "${RUN_EXEC[@]}")
}

# Sets SRC to the upstream checkout: --src, else BUILD/upstream, cloned at TAG if it is not there yet. Warns when
# a git checkout is at another tag.
need_src() {
    if [ -z "$SRC" ]; then
        SRC=$BUILD/upstream
        if [ ! -d "$SRC/.git" ]; then
            echo "cloning $UPSTREAM at $TAG into $SRC" >&2
            rm -rf "$SRC"
            git clone --quiet --depth 1 --branch "$TAG" "$UPSTREAM" "$SRC" >&2 ||
                die "could not clone $UPSTREAM at $TAG; give a checkout of it with --src DIR"
        fi
    fi
    if ! git -C "$SRC" rev-parse --git-dir >/dev/null 2>&1; then
        echo "note: --src is not a git checkout; its tag is not checked" >&2
    elif ! git -C "$SRC" tag --points-at HEAD | grep -qxF "$TAG"; then
        echo "warning: --src is at $(git -C "$SRC" describe --tags --always 2>/dev/null), not $TAG" >&2
    fi
}

# Whether program $1 was asked for with --only.
wanted() {
    [ -z "$ONLY" ] || [[ ",$ONLY," == *",$1,"* ]]
}

# googletest, shared by the suites whose programs use it.
# Prints the test names a program lists ("Suite." lines, then its tests indented by two spaces, each perhaps
# followed by a "# ..." comment), leaving out DISABLED_ tests as gtest does. $@: the program and its arguments.
gtest_list() {
    "${EXEC[@]}" "$@" --gtest_list_tests | awk '
        /^[^ ]/ { suite = $1 }
        /^  [^ ]/ { if (suite !~ /^DISABLED_/ && $1 !~ /^DISABLED_/) print suite $1 }'
}

# Prints the --gtest_filter= argument that selects exactly the tests named in $@. gtest reads the first '-' of a
# filter as the start of its negative part, so a '-' in a name is matched by '?' (any one character).
gtest_filter() {
    local IFS=:
    printf -- '--gtest_filter=%s' "${*//-/?}"
}

gtest_started() {
    grep -c '^\[ RUN      \] ' "$1" || true
}

# Accounts for one process of a batch from its log. Arguments: LOG RC TIMED_OUT SECONDS UNIT RECORDS REST, where
# UNIT holds the batch's lines ("INDEX<TAB>PROGRAM<TAB>PATH<TAB>WORKDIR<TAB>NAME"). Appends a record per test
# case that ran (see run_unit) to RECORDS, writes each failure's own output to LOG's directory as INDEX.log
# (what the process printed after the test before it ended, through its end), and writes the lines of the test
# cases the process did not reach to REST, for another process. A test case that started and did not end
# timed out (TIMED_OUT=1) or failed (the process crashed or exited in it). A process that ends with a non-zero
# status after its last test passed fails that test; one that starts no test fails (or times out) every test
# case of the batch; one that exits 0 without running a test case it was given fails that test case.
gtest_outcomes() {
    python3 - "$@" <<'EOF'
import os, re, sys
log, rc, timed_out, seconds, unit, records, rest = sys.argv[1:]
rc, timed_out, seconds = int(rc), timed_out == "1", float(seconds)
cases = [l.rstrip("\n").split("\t", 4) for l in open(unit) if l.strip()]
lines = open(log, errors="replace").read().splitlines()
ends = {"[       OK ] ": "passed", "[  SKIPPED ] ": "skipped", "[  FAILED  ] ": "failed"}
done, order, current, since = {}, [], None, 0
for i, line in enumerate(lines):
    if line.startswith("[ RUN      ] "):
        current, start = line[13:].strip(), i
        continue
    status = ends.get(line[:13])
    if current is None or status is None:
        continue
    rest_of = line[13:]
    if rest_of == current or rest_of.startswith(current + ",") or rest_of.startswith(current + " ("):
        m = re.search(r"\((\d+) ms\)$", rest_of)
        done[current] = [status, int(m.group(1)) / 1000 if m else 0.0, since, i + 1]
        order.append(current)
        current, since = None, i + 1
started = bool(order) or current is not None
note = {}
if current is not None:
    done[current] = ["timed_out" if timed_out else "failed", None, since, len(lines)]
    order.append(current)
elif order and (rc != 0 or timed_out) and all(done[n][0] in ("passed", "skipped") for n in order):
    last = done[order[-1]]
    last[0], last[3] = ("timed_out" if timed_out else "failed"), len(lines)
    note[order[-1]] = f"(the process {'was stopped' if timed_out else f'exited with status {rc}'} after this test)"
out, left = [], []
for index, program, path, workdir, name in cases:
    if name in done:
        out.append((index, program, name, done[name]))
    elif not started or (current is None and rc == 0 and not timed_out):
        # Nothing ran (the process failed before its first test, or hung there), or the program had no such test.
        out.append((index, program, name, ["timed_out" if timed_out else "failed", None, 0, len(lines)]))
        if rc == 0 and not timed_out:
            note[name] = "(the program ran no test of this name)"
    else:
        left.append("\t".join((index, program, path, workdir, name)))
spent = sum(o[3][1] or 0.0 for o in out)
remainder = max(seconds - spent, 0.0)
for o in out:
    if o[3][1] is None:
        o[3][1], remainder = remainder, 0.0
if out and remainder:
    out[0][3][1] += remainder
with open(records, "a") as r:
    for index, program, name, (status, secs, first, last) in out:
        where = log
        if status in ("failed", "timed_out"):
            where = os.path.join(os.path.dirname(log), index + ".log")
            text = "\n".join(lines[first:last] + ([note[name]] if name in note else []))
            open(where, "w").write(text + "\n")
        r.write(f"{program}\t{status}\t{secs:.1f}\t{where}\t{name}\n")
        print(f"{status:8} {secs:6.1f}s {program}: {name}")
open(rest, "w").write("".join(l + "\n" for l in left))
EOF
}

# Runs a process under the watchdog: $1 the log, $2 the directory to run in, CMD the command. Returns its exit
# status; BUILD-side marker LOG.timed-out exists when the watchdog ended it.
watched() {
    local log=$1 workdir=$2 pid dog rc=0
    (cd "$workdir" && exec setsid "${RUN_EXEC[@]}" "${CMD[@]}") >"$log" 2>&1 </dev/null &
    pid=$!
    watchdog "$pid" "$log" &
    dog=$!
    # A run that is stopped (Ctrl-C, or its process group ended) ends the test process, in a session of its own.
    trap 'kill -TERM -- "-$pid" "$dog" 2>/dev/null; exit 143' INT TERM
    { wait "$pid"; } 2>/dev/null || rc=$?
    trap - INT TERM
    kill "$dog" 2>/dev/null || true
    wait "$dog" 2>/dev/null || true
    return "$rc"
}

# Ends process group $1 when no test case has started in it for TIMEOUT seconds (for programs without
# suite_started: when it has run TIMEOUT seconds), SIGTERM first, SIGKILL 10 s later.
watchdog() {
    local pid=$1 log=$2 count seen=0 since=$SECONDS
    while kill -0 "$pid" 2>/dev/null; do
        sleep 1
        if declare -F suite_started >/dev/null; then
            count=$(suite_started "$log")
            [ "$count" = "$seen" ] || { seen=$count; since=$SECONDS; }
        fi
        if [ $((SECONDS - since)) -ge "$TIMEOUT" ]; then
            : >"$log.timed-out"
            kill -TERM -- "-$pid" 2>/dev/null || true
            for _ in 1 2 3 4 5 6 7 8 9 10; do
                sleep 1
                kill -0 "$pid" 2>/dev/null || return 0
            done
            kill -KILL -- "-$pid" 2>/dev/null || true
            return 0
        fi
    done
}

# Runs one unit, the file $1 of lines "INDEX<TAB>PROGRAM<TAB>PATH<TAB>WORKDIR<TAB>NAME" of the selected list, all
# of one program, in one process; a batch's test cases not reached run in further processes. Appends to
# RUN/records/FIRST-INDEX a line per test case: "PROGRAM<TAB>STATUS<TAB>SECONDS<TAB>LOG<TAB>NAME".
run_unit() {
    local unit=$1 name names=() log start rc seconds timed_out=0 status
    local first program path workdir
    IFS=$'\t' read -r first program path workdir name <"$unit"
    while IFS=$'\t' read -r _ _ _ _ name; do
        names+=("$name")
    done <"$unit"
    log="$RUN/logs/$program/$first.out"
    mkdir -p "$(dirname "$log")"
    suite_cmd "$path" "${names[@]}"
    start=$(date +%s.%N)
    rc=0
    watched "$log" "$workdir" || rc=$?
    seconds=$(echo "$(date +%s.%N) - $start" | bc)
    if [ -e "$log.timed-out" ]; then
        timed_out=1
        echo "(stopped by the ${TIMEOUT} s limit)" >>"$log"
    elif [ "$rc" -gt 128 ]; then
        echo "(ended by signal $((rc - 128)))" >>"$log"
    fi
    if declare -F suite_outcomes >/dev/null; then
        suite_outcomes "$log" "$rc" "$timed_out" "$seconds" "$unit" "$RUN/records/$first" "$unit.rest"
        [ ! -s "$unit.rest" ] || run_unit "$unit.rest"
    else
        if [ "$timed_out" = 1 ]; then
            status=timed_out
        else
            status=$(suite_status "$rc" "$log")
        fi
        printf '%s\t%s\t%.1f\t%s\t%s\n' "$program" "$status" "$seconds" "$log" "${names[0]}" >>"$RUN/records/$first"
        printf '%-8s %6.1fs %s: %s\n' "$status" "$seconds" "$program" "${names[0]}"
    fi
}

write_results() {
    python3 - "$RUN" "$RESULTS" "$SUITE" "$TAG" "$UPSTREAM" "$WAVEJIT" "$COMMIT" "$DRIVER" "$DEVICE" "$SHARD" \
        "$FILTER" "$EXCLUDE" "$TIMEOUT" "$(($(date +%s) - STARTED))" "$JOBS" "$BATCH" <<'EOF'
import json, os, sys
(run, out, suite, tag, upstream, wavejit, commit, driver, device, shard, flt, exclude, timeout, elapsed, jobs,
 batch) = sys.argv[1:]
listed = {}
for line in open(os.path.join(run, "tests.tsv")):
    listed[line.split("\t", 1)[0]] = listed.get(line.split("\t", 1)[0], 0) + 1
not_built = open(os.path.join(run, "not_built")).read().split()
programs = {}
records = os.path.join(run, "records")
for f in sorted(os.listdir(records), key=int):
    for line in open(os.path.join(records, f)).read().splitlines():
        program, status, seconds, log, name = line.split("\t", 4)
        p = programs.setdefault(program, dict(listed=listed.get(program, 0), passed=0, failed=0, skipped=0,
                                              timed_out=0, wall_seconds=0.0, failures=[]))
        p[status] += 1
        p["wall_seconds"] = round(p["wall_seconds"] + float(seconds), 1)
        if status in ("failed", "timed_out"):
            lines = open(log, errors="replace").read().splitlines()
            tail = "\n".join(lines[-25:])[-3000:]
            p["failures"].append(dict(name=name, status=status, seconds=float(seconds), log=log, tail=tail))
keys = ("listed", "passed", "failed", "skipped", "timed_out", "wall_seconds")
totals = {k: round(sum(p[k] for p in programs.values()), 1) for k in keys}
json.dump(dict(suite=suite, tag=tag, upstream=upstream, wavejit=wavejit, wavejit_commit=commit, driver=driver,
               device=device or "default", shard=shard, filter=flt, exclude=exclude, timeout=int(timeout),
               jobs=int(jobs), batch=int(batch), elapsed_seconds=int(elapsed), not_built=not_built,
               programs=programs, totals=totals), open(out, "w"), indent=1)
print(f"{'program':32} {'passed':>7} {'failed':>7} {'skipped':>7} {'timeout':>7} {'wall s':>8}")
for name, p in list(programs.items()) + [("all", totals)]:
    print(f"{name:32} {p['passed']:7} {p['failed']:7} {p['skipped']:7} {p['timed_out']:7} {p['wall_seconds']:8.0f}")
if not_built:
    print(f"not built: {' '.join(not_built)}")
print(f"results: {out}")
print(f"{totals['passed']} passed, {totals['failed']} failed, {totals['skipped']} skipped, {totals['timed_out']} timed out")
EOF
}

suite_main() {
    parse_args "$@"
    [ "$NO_BUILD" = 1 ] || suite_build
    [ "$BUILD_ONLY" = 0 ] || return 0
    # This run's directory: the whole list, in program order, this shard's part of it, filtered, cut into units
    # (a process each), the records of the test cases run and their output.
    RUN=$(mktemp -d "$BUILD/run-$DRIVER-$(date +%Y%m%d-%H%M%S)-XXXX")
    mkdir -p "$RUN/records" "$RUN/logs" "$RUN/units"
    local all="$RUN/tests.tsv" selected="$RUN/selected.tsv"
    local program path workdir name names
    : >"$all"
    while IFS=$'\t' read -r program path workdir; do
        wanted "$program" || continue
        names=$(cd "$workdir" && suite_list "$path") || die "could not list the test cases of $path"
        [ -n "$names" ] || echo "warning: $path lists no test cases" >&2
        while IFS= read -r name; do
            [ -n "$name" ] && printf '%s\t%s\t%s\t%s\n' "$program" "$path" "$workdir" "$name"
        done <<<"$names" >>"$all"
    done < <(suite_binaries)
    touch "$BUILD/programs"
    LC_ALL=C comm -23 <(while read -r program; do wanted "$program" && echo "$program"; done <"$BUILD/programs" |
        LC_ALL=C sort -u) <(suite_binaries | cut -f1 | LC_ALL=C sort -u) >"$RUN/not_built"
    # The shard's part, filtered: one awk over the list (it may hold 10^5 test cases), the regexes applied by grep.
    awk -F'\t' -v k="$SHARD_K" -v n="$SHARD_N" 'BEGIN { OFS = "\t" } (NR - 1) % n == k - 1 { print NR - 1, $0 }' \
        "$all" >"$RUN/shard.tsv"
    cp "$RUN/shard.tsv" "$selected"
    if [ -n "$FILTER" ]; then
        awk -F'\t' '{ print $2 ":" $5 }' "$selected" | grep -nE -- "$FILTER" | cut -d: -f1 >"$RUN/keep" || true
        awk 'FILENAME == ARGV[1] { keep[$1]; next } FNR in keep' "$RUN/keep" "$selected" >"$selected.new"
        mv "$selected.new" "$selected"
    fi
    if [ -n "$EXCLUDE" ]; then
        awk -F'\t' '{ print $2 ":" $5 }' "$selected" | grep -nE -- "$EXCLUDE" | cut -d: -f1 >"$RUN/drop" || true
        awk 'FILENAME == ARGV[1] { drop[$1]; next } !(FNR in drop)' "$RUN/drop" "$selected" >"$selected.new"
        mv "$selected.new" "$selected"
    fi
    # Units: runs of consecutive test cases of one program, BATCH at most, their names within FILTER_BYTES.
    awk -F'\t' -v batch="$BATCH" -v bytes="$FILTER_BYTES" -v dir="$RUN/units" '
        $2 != program || count == batch || size + length($5) + 1 > bytes {
            if (file) close(file)
            file = sprintf("%s/%08d", dir, $1); program = $2; count = 0; size = 0
        }
        { print > file; count++; size += length($5) + 1 }' "$selected"
    echo "$SUITE $TAG: $(wc -l <"$selected") of $(wc -l <"$all") test cases (shard $SHARD${FILTER:+, filter $FILTER}${EXCLUDE:+, excluding $EXCLUDE}) in $(find "$RUN/units" -type f | wc -l) processes, driver $DRIVER, wavejit $COMMIT"
    echo "output of each test case: $RUN/logs"
    STARTED=$(date +%s)
    export -f run_unit watched watchdog suite_cmd gtest_filter gtest_outcomes gtest_started
    local f
    for f in suite_status suite_outcomes suite_started; do
        if declare -F "$f" >/dev/null; then export -f "${f?}"; fi
    done
    export RUN BUILD TIMEOUT RUN_EXEC_STR
    RUN_EXEC_STR=$(declare -p RUN_EXEC)
    # shellcheck disable=SC2016 # expanded by the bash that xargs starts
    find "$RUN/units" -type f -print0 | sort -z |
        xargs -0 -r -n 1 -P "$JOBS" bash -c 'eval "$RUN_EXEC_STR"; run_unit "$1"' _
    write_results
}

#!/usr/bin/env bash
# Checks the suite scripts without ROCm, upstream sources or wavejit: a stand-in `wavejit exec` runs stand-in
# Catch2 and googletest programs whose test cases pass, fail, skip themselves, crash or hang, alone or several a
# process, and the results files must count each as it happened. Usage: scripts/suites/selftest.sh (exit status
# 0 when every check holds).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
T=$(mktemp -d /tmp/wavejit-suites-selftest.XXXXXX)
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/src/tests/catch" "$T/src/test" "$T/src/library/src" "$T/bin"

# wavejit exec [--driver D] [--device X] -- PROGRAM ARGS: runs PROGRAM, telling it the driver it was given.
cat >"$T/bin/wavejit" <<'EOF'
#!/usr/bin/env bash
[ "$1" != --version ] || { echo "wavejit 0.1.0 (commit 0123abc)"; exit 0; }
[ "$1" = exec ] || exit 99
shift
while [ "$1" != -- ]; do
    case "$1" in --driver) export FAKE_DRIVER=$2; shift ;; --device) export FAKE_DEVICE=$2; shift ;; esac
    shift
done
shift
exec "$@"
EOF
chmod +x "$T/bin/wavejit"
# One test case's behaviour from its name: pass, fail, skip, crash or hang; "driver" fails unless on kfd.
cat >"$T/bin/behave" <<'EOF'
case "$1" in
*fail*) echo "expected 1, got 2: FAILED"; exit 1 ;;
*skip*) echo "$2"; exit 0 ;;
*crash*) kill -SEGV $$ ;;
*hang*) sleep 30 ;;
*driver*) [ "$FAKE_DRIVER" = kfd ] || { echo "driver $FAKE_DRIVER"; exit 1; } ;;
esac
EOF
# A Catch2 program (its names in NAMES, one a line, its expected directory in DIR): lists its names, runs the one
# a test spec names as Catch2 reads a spec (a backslash escapes a character, an unescaped ',' separates names and
# '[' starts a tag, so neither may reach a name).
cat >"$T/bin/catch" <<'EOF'
#!/usr/bin/env bash
names=$(cat "$NAMES")
if [ "$1" = --list-test-names-only ]; then echo "$names"; exit 3; fi
if grep -qE '(^|[^\\])[,[]' <<<"$1"; then echo "No test cases matched"; exit 0; fi
name=$(sed 's/\\\(.\)/\1/g' <<<"$1")
grep -qxF -- "$name" <<<"$names" || { echo "No test cases matched"; exit 0; }
[ "$name" != pwd ] || [ "$PWD" = "$DIR" ] || { echo "ran in $PWD"; exit 1; }
. "$(dirname "$0")/behave" "$name" HIP_SKIP_THIS_TEST
echo "All tests passed"
EOF
chmod +x "$T/bin/catch"
catch_program() {
    mkdir -p "$(dirname "$1")"
    printf '%s\n' "$2" >"$1.names"
    printf '#!/bin/sh\nNAMES=%s DIR=%s exec %s "$@"\n' "$1.names" "$3" "$T/bin/catch" >"$1"
    chmod +x "$1"
}
B=$T/hip
catch_program "$B/catch/unit/device/DeviceTest" $'pass one\nfail one\nskip one\ncrash one\nwith, comma [and] brackets\ndriver' "$B"
catch_program "$B/catch/unit/printf/printfTests" $'pwd\nhang' "$B/catch/unit/printf"
catch_program "$B/catch/unit/memory/MemoryTest" $'Unit_HMM_OverSubscriptionTst\nfine' "$B"

# A googletest program: its listing (gtest's --gtest_list_tests output) in LIST. It runs the listed tests that
# --gtest_filter's patterns (':'-separated, '*' and '?' wildcards; no negative part expected) match, printing
# gtest's markers, and exits 1 when one failed. A test's behaviour from its name, as above; "exits" passes,
# then the process exits with status 3.
cat >"$T/bin/gtest" <<'EOF'
#!/usr/bin/env bash
names=$(awk '/^[^ ]/ { s = $1 } /^  [^ ]/ { print s $1 }' "$LIST")
filter='*'
for a; do
    case "$a" in
    --gtest_list_tests) cat "$LIST"; exit 0 ;;
    --gtest_filter=*) filter=${a#--gtest_filter=} ;;
    esac
done
[[ "$filter" != *-* ]] || { echo "a negative filter: $filter"; exit 98; }
IFS=: read -ra patterns <<<"$filter"
failed=0 ran=0
while read -r name; do
    [[ "$name" != DISABLED_* && "$name" != *.DISABLED_* ]] || continue
    match=0
    for p in "${patterns[@]}"; do
        # shellcheck disable=SC2053 # a gtest pattern is a glob
        [[ "$name" == $p ]] && match=1
    done
    [ "$match" = 1 ] || continue
    ran=$((ran + 1))
    echo "[ RUN      ] $name"
    case "$name" in
    *fail*) echo "expected 1, got 2"; echo "[  FAILED  ] $name, where GetParam() = 1 (3 ms)"; failed=1; continue ;;
    *skip*) echo "[  SKIPPED ] $name (0 ms)"; continue ;;
    *crash*) kill -SEGV $$ ;;
    *hang*) sleep 30 ;;
    *driver*) [ "$FAKE_DRIVER" = kfd ] || { echo "[  FAILED  ] $name (1 ms)"; failed=1; continue; } ;;
    esac
    echo "[       OK ] $name (250 ms)"
    [[ "$name" != *exits* ]] || exit 3
done <<<"$names"
echo "[  PASSED  ] $ran tests."
[ "$failed" = 0 ] || { echo "[  FAILED  ] a summary line naming a failed test"; exit 1; }
EOF
chmod +x "$T/bin/gtest"
gtest_program() {
    mkdir -p "$(dirname "$1")"
    printf '%s\n' "$2" >"$1.list"
    printf '#!/bin/sh\nLIST=%s exec %s "$@"\n' "$1.list" "$T/bin/gtest" >"$1"
    chmod +x "$1"
}
gtest_program "$T/rocrand/bin/test_fake" "Suite.
  passes
  fails
  skips
  DISABLED_off
Param/Suite.
  hangs/0  # GetParam() = 1
  minus-one  # a '-' in a name
DISABLED_Suite.
  passes"

failures=0
check() {
    if python3 -c "import json, sys; d = json.load(open(sys.argv[1])); sys.exit(0 if ($2) else 1)" "$1"; then
        echo "ok: $3"
    else
        echo "FAILED: $3 ($1)"
        failures=$((failures + 1))
    fi
}
# check_out FILE REGEX WHAT: a line of FILE matches REGEX.
check_out() {
    if grep -qE -- "$2" "$1"; then
        echo "ok: $3"
    else
        echo "FAILED: $3 ($1)"
        failures=$((failures + 1))
    fi
}
common=(--commit test --wavejit "$T/bin/wavejit" --no-build --timeout 2 --jobs 2)

"$HERE/hip.sh" --src "$T/src" --build "$B" "${common[@]}" --driver hsa --results "$T/hip.json" >"$T/hip.out"
check "$T/hip.json" "d['programs']['DeviceTest'] | {'failures': 0} == dict(listed=6, passed=2, failed=3, skipped=1,
    timed_out=0, wall_seconds=d['programs']['DeviceTest']['wall_seconds'], failures=0)" \
    "Catch2: passed, failed, crashed, skipped"
check "$T/hip.json" "sorted(f['name'] for f in d['programs']['DeviceTest']['failures']) == ['crash one', 'driver',
    'fail one']" "Catch2: the failures by name (a name with a comma and brackets reaches its test case)"
check "$T/hip.json" "'expected 1, got 2' in d['programs']['DeviceTest']['failures'][0]['tail']" "the failure's output"
check "$T/hip.json" "d['programs']['printfTests']['passed'] == 1 and d['programs']['printfTests']['timed_out'] == 1" \
    "printfTests runs in its own directory; a hang is timed out"
check "$T/hip.json" "d['programs']['MemoryTest']['passed'] == 1 and d['programs']['MemoryTest']['listed'] == 2
    and d['totals']['passed'] == 4" "Unit_HMM_OverSubscriptionTst is left out by default"
check "$T/hip.json" "d['driver'] == 'hsa' and d['wavejit_commit'] == 'test' and d['suite'] == 'HIP'" "run's fields"
check_out "$T/hip.out" '^4 passed, 3 failed, 1 skipped, 1 timed out$' "closing line"

"$HERE/hip.sh" --src "$T/src" --build "$B" "${common[@]}" --driver kfd --only DeviceTest --filter 'driver|one' \
    --exclude 'crash' --results "$T/kfd.json" >/dev/null
check "$T/kfd.json" "d['totals']['passed'] == 2 and d['totals']['failed'] == 1 and d['totals']['skipped'] == 1
    and list(d['programs']) == ['DeviceTest']" "--driver reaches wavejit exec; --only, --filter and --exclude"

for k in 1 2 3; do
    "$HERE/hip.sh" --src "$T/src" --build "$B" "${common[@]}" --shard "$k/3" --exclude '' \
        --results "$T/shard$k.json" >/dev/null
done
check "$T/shard1.json" "sum(sum(json.load(open(f'$T/shard{k}.json'))['totals'][s] for s in ('passed', 'failed',
    'skipped', 'timed_out')) for k in (1, 2, 3)) == 10" "three shards run all 10 test cases between them"

"$HERE/rocrand.sh" --src "$T/src" --build "$T/rocrand" "${common[@]:2}" --results "$T/rocrand.json" >"$T/rocrand.out"
check "$T/rocrand.json" "d['programs']['test_fake'] | {'failures': 0} == dict(listed=5, passed=2, failed=1, skipped=1,
    timed_out=1, wall_seconds=d['programs']['test_fake']['wall_seconds'], failures=0)" \
    "googletest: passed, failed, skipped, timed out; DISABLED_ tests not run; parameterized names; a '-' in a name"
check_out "$T/rocrand.out" ' in 5 processes,' "googletest: one process a test case by default"
check "$T/rocrand.json" "d['wavejit_commit'] == '0123abc'" "the commit wavejit --version names is recorded"
mkdir -p "$T/old"
sed 's/ (commit 0123abc)//' "$T/bin/wavejit" >"$T/old/wavejit"
chmod +x "$T/old/wavejit"
"$HERE/rocrand.sh" --src "$T/src" --build "$T/rocrand" "${common[@]:2}" --wavejit "$T/old/wavejit" \
    --filter passes --results "$T/old.json" >/dev/null
check "$T/old.json" "d['wavejit_commit'] == 'unknown'" "a wavejit that names no commit, outside a checkout: unknown"
check "$T/rocrand.json" "[(f['name'], f['tail']) for f in d['programs']['test_fake']['failures']] == [('Suite.fails',
    '[ RUN      ] Suite.fails\nexpected 1, got 2\n[  FAILED  ] Suite.fails, where GetParam() = 1 (3 ms)'),
    ('Param/Suite.hangs/0', '[ RUN      ] Param/Suite.hangs/0\n(stopped by the 2 s limit)')]" \
    "googletest: a failure's output is its own test's"

"$HERE/rocrand.sh" --src "$T/src" --build "$T/rocrand" "${common[@]}" --batch 10 \
    --results "$T/rocrand-batch.json" >"$T/rocrand-batch.out"
check "$T/rocrand-batch.json" "[d['programs']['test_fake'][k] for k in ('passed', 'failed', 'skipped', 'timed_out')]
    == [2, 1, 1, 1] and [f['name'] for f in d['programs']['test_fake']['failures']] == ['Suite.fails',
    'Param/Suite.hangs/0'] and d['batch'] == 10" "--batch 10: the same outcomes"
check_out "$T/rocrand-batch.out" ' in 1 processes,' "--batch 10: one process for five test cases"
check_out "$T/rocrand-batch.out" '^passed .*Param/Suite.minus-one$' "--batch 10: the test after a hang runs"

# Stopping a run (its process group ended, as Ctrl-C does) ends the test processes it started, each in a session
# of its own.
setsid "$HERE/hip.sh" --src "$T/src" --build "$B" "${common[@]}" --timeout 60 --only printfTests --filter hang \
    --results "$T/stopped.json" >/dev/null 2>&1 &
stopped=$!
sleep 3
pgrep -f "$T/bin/catch hang" >/dev/null || echo "(the hanging test had not started)"
kill -TERM -- "-$stopped"
sleep 2
if pgrep -f "$T/bin/catch hang" >/dev/null; then
    echo "FAILED: a stopped run leaves its test processes running"
    failures=$((failures + 1))
    kill $(pgrep -f "$T/bin/catch hang") 2>/dev/null || true
else
    echo "ok: a stopped run ends its test processes"
fi

# rocPRIM: two of its programs, another missing from the build; batches of 50 by default.
P=$T/rocprim
gtest_program "$P/bin/test_block_reduce" "RocprimBlockReduceSingleValueTests/0.  # TypeParam = block_param_type<int>
  Reduce
  ReduceMultiplies
RocprimBlockReduceSingleValueTests/1.  # TypeParam = block_param_type<float>
  Reduce
  skipsSomeSizes"
gtest_program "$P/bin/test_device_scan" "RocprimDeviceScanTests/0.
  InclusiveScan
  crashes
  ExclusiveScan
  hangs
  LargeIndicesInclusiveScan
  exits
  ScanByKey
  failsLast
RocprimDeviceScanTests.
  LargeIndicesExclusiveScan"
printf '%s\n' test_block_reduce test_device_scan test_warp_scan >"$P/programs"
"$HERE/rocprim.sh" --build "$P" "${common[@]}" --jobs 1 --results "$T/rocprim.json" >"$T/rocprim.out"
check "$T/rocprim.json" "{n: [p[k] for k in ('listed', 'passed', 'failed', 'skipped', 'timed_out')] for n, p in
    d['programs'].items()} == {'test_block_reduce': [4, 3, 0, 1, 0], 'test_device_scan': [9, 3, 3, 0, 1]}" \
    "rocPRIM: a crash, a hang and an exit after a pass in a batch each count; LargeIndices left out by default"
check "$T/rocprim.json" "[(f['name'], f['status']) for f in d['programs']['test_device_scan']['failures']] ==
    [('RocprimDeviceScanTests/0.crashes', 'failed'), ('RocprimDeviceScanTests/0.hangs', 'timed_out'),
    ('RocprimDeviceScanTests/0.exits', 'failed'), ('RocprimDeviceScanTests/0.failsLast', 'failed')]
    and 'exited with status 3' in d['programs']['test_device_scan']['failures'][2]['tail']
    and 'ended by signal 11' in d['programs']['test_device_scan']['failures'][0]['tail']" \
    "rocPRIM: the failures by name, each with its cause in its output"
check_out "$T/rocprim.out" '^passed .*test_device_scan: RocprimDeviceScanTests/0.ScanByKey$' \
    "rocPRIM: the tests after a crash, a hang and an exit run in new processes"
check "$T/rocprim.json" "d['not_built'] == ['test_warp_scan'] and d['batch'] == 50" "a program not built is named"
check_out "$T/rocprim.out" ' in 2 processes,' "rocPRIM: a process a program"
for k in 1 2; do
    "$HERE/rocprim.sh" --build "$P" "${common[@]}" --shard "$k/2" --only test_block_reduce \
        --results "$T/rocprim$k.json" >/dev/null
done
check "$T/rocprim1.json" "[json.load(open(f'$T/rocprim{k}.json'))['programs']['test_block_reduce']['passed'] for k in
    (1, 2)] == [2, 1] and d['not_built'] == []" "rocPRIM: --shard 1/2 and 2/2 split a program's test cases"

# rocSPARSE: one program, a routine a data file (here the stand-in's listing), the category's tests only.
S=$T/rocsparse
mkdir -p "$S/data"
cat >"$S/rocsparse-test" <<EOF
#!/usr/bin/env bash
[ "\$1" = --data ] || { echo "no --data"; exit 97; }
[ -s "\$2" ] || { echo "Fatal error: Binary test data does match input format."; exit 134; }
LIST=\$2 exec '$T/bin/gtest' "\${@:3}"
EOF
chmod +x "$S/rocsparse-test"
printf 'quick/axpby.\n  level1/i32_f32_r_1200_1p5\n  level1/i32_f64_r_1200_1p5_fails\npre_checkin/axpby.\n  bad_arg/i32\n' \
    >"$S/data/axpby.data"
printf 'quick/csrmv.\n  level2/i32_f32_laplace2d\n  level2/i64_f32_skips\n' >"$S/data/csrmv.data"
printf 'pre_checkin/csricsv.\n  precond/i32\n' >"$S/data/csricsv.data"
: >"$S/data/csrilusv.data"
printf '%s\n' axpby csrmv csricsv csrilusv gemvi >"$S/programs"
"$HERE/rocsparse.sh" --build "$S" "${common[@]}" --results "$T/rocsparse.json" >"$T/rocsparse.out" 2>"$T/rocsparse.err"
check "$T/rocsparse.json" "{n: [p[k] for k in ('listed', 'passed', 'failed', 'skipped')] for n, p in
    d['programs'].items()} == {'axpby': [2, 1, 1, 0], 'csrmv': [2, 1, 0, 1]} and d['not_built'] == ['gemvi']" \
    "rocSPARSE: a routine's quick tests from its data; a routine without data is not built"
check_out "$T/rocsparse.out" ' in 2 processes,' "rocSPARSE: a process a routine"
check_out "$T/rocsparse.err" 'csricsv.data lists no test cases' "rocSPARSE: a routine without quick tests is named"
check_out "$T/rocsparse.err" 'csrilusv.data lists no test cases' "rocSPARSE: an empty data file holds no test"
"$HERE/rocsparse.sh" --build "$S" "${common[@]}" --category pre_checkin --results "$T/pre.json" >/dev/null 2>&1
check "$T/pre.json" "{n: p['passed'] for n, p in d['programs'].items()} == {'axpby': 1, 'csricsv': 1}" \
    "rocSPARSE: --category pre_checkin"

# Without --src the scripts clone the pinned tag (here from a local repository standing in for upstream's).
git init -q "$T/upstream"
mkdir -p "$T/upstream/test/rocprim"
echo "# stand-in" >"$T/upstream/test/rocprim/CMakeLists.txt"
git -C "$T/upstream" add -A
git -C "$T/upstream" -c user.name=t -c user.email=t@t commit -qm stand-in
git -C "$T/upstream" tag rocm-5.3.3
"$HERE/rocprim.sh" --upstream "file://$T/upstream" --build "$T/clone" --build-only --only test_none >/dev/null 2>&1
if [ "$(git -C "$T/clone/upstream" describe --tags --exact-match 2>&1)" = rocm-5.3.3 ]; then
    echo "ok: without --src the pinned tag is cloned into BUILD/upstream"
else
    echo "FAILED: without --src the pinned tag is cloned into BUILD/upstream"
    failures=$((failures + 1))
fi
if "$HERE/rocprim.sh" --upstream "file://$T/nowhere" --build "$T/noclone" --build-only >"$T/bad.out" 2>&1; then
    echo "FAILED: a clone that fails is accepted"
    failures=$((failures + 1))
else
    echo "ok: a clone that fails stops the script: $(tail -1 "$T/bad.out")"
fi

for bad in "hip --driver cuda" "hip --shard 3/2" "hip --jobs 0" "hip --filter (" "hip --build $HERE" "hip --batch 2" \
    "rocprim --batch 0" "rocprim --timeout 1s" "rocsparse --category quick/*" "rocsparse --frobnicate 1"; do
    # shellcheck disable=SC2086 # a script's name and two words
    if "$HERE/${bad%% *}.sh" --src "$T/src" --wavejit "$T/bin/wavejit" ${bad#* } >"$T/bad.out" 2>&1; then
        echo "FAILED: $bad accepted"
        failures=$((failures + 1))
    else
        echo "ok: $bad refused: $(tail -1 "$T/bad.out")"
    fi
done
for script in hip rocrand rocprim rocsparse tinygrad; do
    "$HERE/$script.sh" --help >"$T/help.out"
    check_out "$T/help.out" '^  --batch N ' "$script.sh --help says the options"
done

# tables.py: the shards merged are the whole run; a table from stand-in results is the expected text; a
# document's tables are rewritten from the results files its markers name, and --check finds a stale one.
TABLES=$HERE/tables.py
python3 "$TABLES" merge "$T/merged.json" "$T/shard2.json" "$T/shard3.json" "$T/shard1.json" >/dev/null
"$HERE/hip.sh" --src "$T/src" --build "$B" "${common[@]}" --exclude '' --results "$T/whole.json" >/dev/null
check "$T/merged.json" "(lambda w: d['totals'] | {'wall_seconds': 0} == w['totals'] | {'wall_seconds': 0} and
    list(d['programs']) == list(w['programs']) and d['shard'] == '1/1' and
    [(n, p['listed'], p['passed'], sorted(f['name'] for f in p['failures'])) for n, p in d['programs'].items()] ==
    [(n, p['listed'], p['passed'], sorted(f['name'] for f in p['failures'])) for n, p in w['programs'].items()])
    (json.load(open('$T/whole.json')))" "tables.py merge: three shards make the whole run's results"
for bad in "shard1 shard2" "shard1 shard2 shard2 shard3" "shard1 shard2 shard3 hip" "shard1 nothing"; do
    # shellcheck disable=SC2046,SC2086 # the files' names, split
    if python3 "$TABLES" merge "$T/bad.json" $(printf "$T/%s.json " $bad) 2>"$T/bad.out"; then
        echo "FAILED: tables.py merge of $bad accepted"
        failures=$((failures + 1))
    else
        echo "ok: tables.py merge of $bad refused: $(cat "$T/bad.out")"
    fi
done
mkdir -p "$T/doc/results"
python3 - "$T/doc/results" <<'EOF'
import json, sys
def run(driver, commit, programs):
    return dict(suite="rocPRIM", tag="rocm-5.3.3", wavejit_commit=commit, driver=driver, device="default",
                shard="1/1", filter="", exclude="", timeout=300, jobs=2, not_built=["test_warp_scan"],
                programs={n: dict(listed=l, passed=p, failed=f, skipped=s, timed_out=t, wall_seconds=w, failures=[])
                          for n, (l, p, f, s, t, w) in programs.items()}, totals={})
json.dump(run("hsa", "0123abcdef", {"test_basic": (2, 2, 0, 0, 0, 0.4), "test_device_scan": (140, 136, 1, 0, 1, 1201.6)}),
          open(sys.argv[1] + "/a.json", "w"))
json.dump(run("kfd", "4567abcdef", {"test_basic": (2, 1, 1, 0, 0, 0.6)}), open(sys.argv[1] + "/b.json", "w"))
EOF
cat >"$T/expected.md" <<'EOF'
Per program: passed / failed / skipped / timed out, and the test processes' summed wall time. From `results/a.json`: rocPRIM `rocm-5.3.3`, wavejit `0123abc`, `--driver hsa`, 300 s limit, 2 at a time, not built: test_warp_scan; `results/b.json`: rocPRIM `rocm-5.3.3`, wavejit `4567abc`, `--driver kfd`, 300 s limit, 2 at a time, not built: test_warp_scan.

| program | test cases | drop-in (`--driver hsa`), wavejit `0123abc` | wall | ROCr (`--driver kfd`), wavejit `4567abc` | wall |
| --- | --- | --- | --- | --- | --- |
| test_basic | 2 | 2 / 0 / 0 / 0 | 0 s | 1 / 1 / 0 / 0 | 1 s |
| test_device_scan | 138 of 140 | 136 / 1 / 0 / 1 | 1,202 s | not run |  |
| **all 2** | **140 of 142** | **138 / 1 / 0 / 1** | 1,202 s | **1 / 1 / 0 / 0** | 1 s |
EOF
(cd "$T/doc" && python3 "$TABLES" table results/a.json results/b.json) >"$T/table.md"
if cmp -s "$T/table.md" "$T/expected.md"; then
    echo "ok: tables.py table: stand-in results give the expected table"
else
    echo "FAILED: tables.py table: stand-in results give the expected table"
    diff "$T/expected.md" "$T/table.md" || true
    failures=$((failures + 1))
fi
# A results file's own "route" heads its column, its "env" is named in the note.
python3 - "$T/doc/results" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1] + "/b.json"))
json.dump(d | dict(route="`DEV=CPU`", env={"DEV": "CPU"}), open(sys.argv[1] + "/c.json", "w"))
EOF
(cd "$T/doc" && python3 "$TABLES" table results/c.json) >"$T/table.md"
if grep -q '^| program | test cases | `DEV=CPU`, wavejit `4567abc` | wall |$' "$T/table.md" &&
    grep -q '`--driver kfd`, `DEV=CPU`, 300 s limit' "$T/table.md"; then
    echo "ok: tables.py table: a results file's route heads its column and its env is in the note"
else
    echo "FAILED: tables.py table: a results file's route heads its column and its env is in the note"
    cat "$T/table.md"
    failures=$((failures + 1))
fi
printf '# Doc\ntext before\n<!-- tables.py: results/a.json results/b.json -->\nold table\n<!-- end of tables.py -->\ntext after\n' \
    >"$T/doc/doc.md"
if python3 "$TABLES" update --check "$T/doc/doc.md" >/dev/null; then
    echo "FAILED: tables.py update --check passes a stale table"
    failures=$((failures + 1))
else
    echo "ok: tables.py update --check finds a stale table"
fi
python3 "$TABLES" update "$T/doc/doc.md" >/dev/null
{ printf '# Doc\ntext before\n<!-- tables.py: results/a.json results/b.json -->\n'; cat "$T/expected.md"
    printf '<!-- end of tables.py -->\ntext after\n'; } >"$T/doc/expected.md"
if cmp -s "$T/doc/doc.md" "$T/doc/expected.md" && python3 "$TABLES" update --check "$T/doc/doc.md" >/dev/null; then
    echo "ok: tables.py update rewrites the table between its markers, and --check then passes"
else
    echo "FAILED: tables.py update rewrites the table between its markers, and --check then passes"
    failures=$((failures + 1))
fi

if python3 "$TABLES" update --check "$HERE/../../docs/compatibility.md"; then
    echo "ok: docs/compatibility.md's generated tables are those of docs/results/"
else
    echo "FAILED: docs/compatibility.md's generated tables are those of docs/results/ (run tables.py update)"
    failures=$((failures + 1))
fi

[ "$failures" = 0 ] || { echo "$failures checks failed"; exit 1; }
echo "every check holds"

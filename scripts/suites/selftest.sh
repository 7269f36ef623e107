#!/usr/bin/env bash
# Checks hip.sh and rocrand.sh without ROCm, upstream sources or wavejit: a stand-in `wavejit exec` runs stand-in
# Catch2 and googletest programs whose test cases pass, fail, skip themselves, crash or hang, and the results
# files must count each as it happened. Usage: scripts/suites/selftest.sh (exit status 0 when every check holds).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
T=$(mktemp -d /tmp/wavejit-suites-selftest.XXXXXX)
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/src/tests/catch" "$T/src/test" "$T/src/library/src" "$T/bin"

# wavejit exec [--driver D] [--device X] -- PROGRAM ARGS: runs PROGRAM, telling it the driver it was given.
cat >"$T/bin/wavejit" <<'EOF'
#!/usr/bin/env bash
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

# A googletest program.
mkdir -p "$T/rocrand/bin"
cat >"$T/rocrand/bin/test_fake" <<EOF
#!/usr/bin/env bash
if [ "\$1" = --gtest_list_tests ]; then
    printf 'Suite.\n  passes\n  fails\n  skips\n  DISABLED_off\nParam/Suite.\n  hangs/0  # GetParam() = 1\nDISABLED_Suite.\n  passes\n'
    exit 0
fi
name=\${1#--gtest_filter=}
. '$T/bin/behave' "\$name" '[  SKIPPED ] 1 test'
echo '[  PASSED  ] 1 test.'
EOF
chmod +x "$T/rocrand/bin/test_fake"

failures=0
check() {
    if python3 -c "import json, sys; d = json.load(open(sys.argv[1])); sys.exit(0 if ($2) else 1)" "$1"; then
        echo "ok: $3"
    else
        echo "FAILED: $3 ($1)"
        failures=$((failures + 1))
    fi
}
common=(--wavejit "$T/bin/wavejit" --commit test --no-build --timeout 2 --jobs 2)

"$HERE/hip.sh" --src "$T/src" --build "$B" "${common[@]}" --driver hsa --results "$T/hip.json" >"$T/hip.out"
check "$T/hip.json" "d['programs']['DeviceTest'] | {'failures': 0} == dict(passed=2, failed=3, skipped=1, timed_out=0,
    wall_seconds=d['programs']['DeviceTest']['wall_seconds'], failures=0)" "Catch2: passed, failed, crashed, skipped"
check "$T/hip.json" "sorted(f['name'] for f in d['programs']['DeviceTest']['failures']) == ['crash one', 'driver',
    'fail one']" "Catch2: the failures by name (a name with a comma and brackets reaches its test case)"
check "$T/hip.json" "'expected 1, got 2' in d['programs']['DeviceTest']['failures'][0]['tail']" "the failure's output"
check "$T/hip.json" "d['programs']['printfTests']['passed'] == 1 and d['programs']['printfTests']['timed_out'] == 1" \
    "printfTests runs in its own directory; a hang is timed out"
check "$T/hip.json" "d['programs']['MemoryTest']['passed'] == 1 and d['totals']['passed'] == 4" \
    "Unit_HMM_OverSubscriptionTst is left out by default"
check "$T/hip.json" "d['driver'] == 'hsa' and d['wavejit_commit'] == 'test' and d['suite'] == 'HIP'" "run's fields"
grep -qx '4 passed, 3 failed, 1 skipped, 1 timed out' "$T/hip.out" && echo "ok: closing line" ||
    { echo "FAILED: closing line"; failures=$((failures + 1)); }

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

"$HERE/rocrand.sh" --src "$T/src" --build "$T/rocrand" "${common[@]}" --results "$T/rocrand.json" >/dev/null
check "$T/rocrand.json" "d['programs']['test_fake'] | {'failures': 0} == dict(passed=1, failed=1, skipped=1,
    timed_out=1, wall_seconds=d['programs']['test_fake']['wall_seconds'], failures=0)" \
    "googletest: passed, failed, skipped, timed out; DISABLED_ tests not run; parameterized names"

for bad in "--driver cuda" "--shard 3/2" "--jobs 0" "--filter (" "--build $HERE"; do
    # shellcheck disable=SC2086 # each bad argument is two words
    if "$HERE/hip.sh" --src "$T/src" --wavejit "$T/bin/wavejit" $bad >"$T/bad.out" 2>&1; then
        echo "FAILED: $bad accepted"
        failures=$((failures + 1))
    else
        echo "ok: $bad refused: $(tail -1 "$T/bad.out")"
    fi
done

[ "$failures" = 0 ] || { echo "$failures checks failed"; exit 1; }
echo "every check holds"

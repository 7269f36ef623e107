#!/usr/bin/env bash
# Builds rocRAND's tests (ROCm/rocRAND, test/) against Debian's librocrand and googletest and runs every test
# case in its own process under `wavejit exec`. See --help.
set -euo pipefail

SUITE=rocRAND
TAG=rocm-5.3.3
UPSTREAM=https://github.com/ROCm/rocRAND.git
DEFAULT_BUILD=/tmp/wavejit-suites/rocrand

suite_usage() {
    cat <<EOF
Usage: scripts/suites/rocrand.sh [--src DIR] [options]

Builds rocRAND's tests (test/test_*.cpp of ROCm/rocRAND at tag $TAG) outside this repository, each source on
its own as upstream's CMake does, with Debian's hipcc (apt-get install hipcc librocrand-dev libgtest-dev):
  hipcc --offload-arch=gfx90a -O3 -DNDEBUG -std=c++14 -I SRC/library/src test_X.cpp -lrocrand -lgtest_main -lgtest
(the rocrand headers are Debian's, upstream's library/src supplies the generator sources the *_prng, *_qrng
and distribution tests compile in), then runs each test case in its own process under \`wavejit exec\`:
listed with --gtest_list_tests, run with --gtest_filter=ONE.NAME (DISABLED_ tests are not run; --batch N
runs up to N a process). Skipped means gtest reported the test skipped.
Example:
  scripts/suites/rocrand.sh --src /tmp/rocRAND --driver kfd --jobs 2 --filter '^test_rocrand_kernel_'

EOF
}

suite_build() {
    need_src
    { [ -d "$SRC/test" ] && [ -d "$SRC/library/src" ]; } || die "--src $SRC has no test/ and library/src/ (want ROCm/rocRAND at $TAG)"
    mkdir -p "$BUILD/bin"
    local src name stale=()
    for src in "$SRC"/test/test_*.cpp; do
        basename "$src" .cpp
    done >"$BUILD/programs"
    for src in "$SRC"/test/test_*.cpp; do
        name=$(basename "$src" .cpp)
        wanted "$name" || continue
        [ "$BUILD/bin/$name" -nt "$src" ] || stale+=("$src")
    done
    [ ${#stale[@]} != 0 ] || return 0
    echo "building ${#stale[@]} test programs" >&2
    export SRC BUILD
    # shellcheck disable=SC2016 # expanded by the bash that xargs starts
    printf '%s\0' "${stale[@]}" | xargs -0 -r -n 1 -P "$JOBS" bash -c '
        name=$(basename "$1" .cpp)
        nice -n 19 hipcc --offload-arch=gfx90a -O3 -DNDEBUG -std=c++14 -I "$SRC/library/src" "$1" \
            -o "$BUILD/bin/$name" -lrocrand -lgtest_main -lgtest >"$BUILD/build-$name.log" 2>&1 ||
            echo "warning: $name did not build: $BUILD/build-$name.log" >&2' _
}

suite_binaries() {
    local path
    for path in "$BUILD"/bin/test_*; do
        [ -x "$path" ] && printf '%s\t%s\t%s\n' "$(basename "$path")" "$path" "$BUILD"
    done
    return 0
}

suite_list() {
    gtest_list "$1"
}

suite_cmd() {
    CMD=("$1" "$(gtest_filter "${@:2}")")
}

suite_outcomes() {
    gtest_outcomes "$@"
}

suite_started() {
    gtest_started "$1"
}

# shellcheck source=scripts/suites/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
suite_main "$@"

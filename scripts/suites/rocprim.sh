#!/usr/bin/env bash
# Builds rocPRIM's tests (ROCm/rocPRIM, test/rocprim) against Debian's librocprim-dev and googletest and runs
# their test cases under `wavejit exec`. See --help.
set -euo pipefail

SUITE=rocPRIM
TAG=rocm-5.3.3
UPSTREAM=https://github.com/ROCm/rocPRIM.git
DEFAULT_BUILD=/tmp/wavejit-suites/rocprim
DEFAULT_BATCH=50
# Algorithms over counting iterators of 2^30 to 2^37 items: each runs for half an hour to over two hours here.
DEFAULT_EXCLUDE='^test_device_[a-z_]+:.*[.](LargeIndices|LargeIndicesInclusiveScan|LargeIndicesExclusiveScan|LargeInputFlagged/[0-9]+|SortKeysOver4G)$'
# The test programs, in run order, as upstream's test/rocprim/CMakeLists.txt lists them (a .cpp.in is split
# into slices as upstream's add_rocprim_test_parallel splits it).
PROGRAMS="test_basic test_arg_index_iterator test_block_adjacent_difference test_block_discontinuity
test_block_exchange test_block_histogram test_block_load_store test_block_radix_sort test_block_reduce
test_block_scan test_block_shuffle test_block_sort test_constant_iterator test_counting_iterator
test_device_binary_search test_device_adjacent_difference test_device_histogram test_device_merge
test_device_merge_sort test_device_partition test_device_radix_sort test_device_reduce_by_key test_device_reduce
test_device_run_length_encode test_device_scan test_device_segmented_radix_sort test_device_segmented_reduce
test_device_segmented_scan test_device_select test_device_transform test_discard_iterator test_reverse_iterator
test_texture_cache_iterator test_thread test_thread_algos test_transform_iterator test_intrinsics
test_warp_exchange test_warp_load test_warp_reduce test_warp_scan test_warp_sort test_warp_store test_zip_iterator"
FLAGS=(--offload-arch=gfx90a -std=c++14 -O2)

suite_usage() {
    cat <<EOF
Usage: scripts/suites/rocprim.sh [--src DIR] [options]

Builds rocPRIM's 44 test programs (test/rocprim of ROCm/rocPRIM at tag $TAG) outside this repository against
Debian's headers and googletest (apt-get install hipcc librocprim-dev libgtest-dev), each source on its own:
  hipcc ${FLAGS[*]} -I SRC/test -I SRC/test/rocprim -c SOURCE, linked with -lgtest_main -lgtest
test_basic links upstream's second source, detail/get_rocprim_version.cpp, as its CMake does. A .cpp.in
source is split as upstream's CMake splits it: one source per value of ROCPRIM_TEST_SLICE, and one per pair
of ROCPRIM_TEST_SUITE_SLICE and ROCPRIM_TEST_TYPE_SLICE, compiled apart and linked into one program.
test_device_adjacent_difference is built at -O1: at -O2 and upstream's -O3 Debian's clang 15 stops with
"error in backend: failed to annotate CFG". A device test takes minutes to compile, the sliced radix sorts
most of an hour or more; sources are compiled --jobs at a time (make -k), and a program that does not build
is reported on stderr and in the results' not_built.
Test cases are listed with --gtest_list_tests (DISABLED_ tests are not run) and run --batch at a time
(default $DEFAULT_BATCH) with --gtest_filter naming them, in the build directory; the time limit is per test case.
Skipped means gtest reported the test skipped (test_block_sort skips its multi-item sorts of block sizes that
are not powers of two, test_device_reduce one of its own).
Left out unless --exclude says otherwise: the LargeIndices, LargeInputFlagged and SortKeysOver4G tests of
the device algorithms, which run them over counting iterators of 2^30 to 2^37 items (up to 10^12 items a
test: from half an hour to over two hours each under the emulator; docs/compatibility.md).
Programs: $(tr '\n' ' ' <<<"$PROGRAMS")
Example:
  scripts/suites/rocprim.sh --src /tmp/rocPRIM --jobs 2 --only test_block_reduce,test_warp_scan --shard 1/2

EOF
}

# Prints the sources of one program, generating a .cpp.in's slices in BUILD/sliced (rewritten only when they
# change, so that make rebuilds what changed).
program_sources() {
    local name=$1 dir=$SRC/test/rocprim in slice suite type
    if [ -f "$dir/$name.cpp" ]; then
        echo "$dir/$name.cpp"
        [ "$name" != test_basic ] || echo "$dir/detail/get_rocprim_version.cpp"
        return 0
    fi
    in=$dir/$name.cpp.in
    [ -f "$in" ] || return 0
    mkdir -p "$BUILD/sliced"
    # slice_values VAR: the values "VAR == N" names in the source.
    slice_values() { grep -oE "$1 *== *[0-9]+" "$in" | grep -oE '[0-9]+$' | sort -nu | tr '\n' ' '; }
    # configure OUT SLICE SUITE TYPE: the source with its #cmakedefine lines set, as CMake's configure_file.
    configure() {
        sed -E -e "s/^#cmakedefine ROCPRIM_TEST_SLICE +@ROCPRIM_TEST_SLICE@/#define ROCPRIM_TEST_SLICE $2/" \
            -e "s/^#cmakedefine ROCPRIM_TEST_SUITE_SLICE +@ROCPRIM_TEST_SUITE_SLICE@/#define ROCPRIM_TEST_SUITE_SLICE $3/" \
            -e "s/^#cmakedefine ROCPRIM_TEST_TYPE_SLICE +@ROCPRIM_TEST_TYPE_SLICE@/#define ROCPRIM_TEST_TYPE_SLICE $4/" \
            "$in" >"$1.new"
        if cmp -s "$1.new" "$1"; then rm "$1.new"; else mv "$1.new" "$1"; fi
        echo "$1"
    }
    for slice in $(slice_values ROCPRIM_TEST_SLICE); do
        configure "$BUILD/sliced/${name}_$slice.cpp" "$slice" -1 -1
    done
    for suite in $(slice_values ROCPRIM_TEST_SUITE_SLICE); do
        for type in $(slice_values ROCPRIM_TEST_TYPE_SLICE); do
            configure "$BUILD/sliced/${name}_typed_${suite}_$type.cpp" -1 "$suite" "$type"
        done
    done
}

suite_build() {
    need_src
    [ -f "$SRC/test/rocprim/CMakeLists.txt" ] || die "--src $SRC has no test/rocprim/CMakeLists.txt (want ROCm/rocPRIM at $TAG)"
    tr -s ' \n' '\n' <<<"$PROGRAMS" >"$BUILD/programs"
    # A makefile of the wanted programs: an object per source, a program per list of objects.
    local name src obj objs flags make="$BUILD/Makefile" targets=()
    {
        echo "# Generated by scripts/suites/rocprim.sh"
        for name in $PROGRAMS; do
            wanted "$name" || continue
            flags="${FLAGS[*]}"
            [ "$name" != test_device_adjacent_difference ] || flags=${flags/-O2/-O1}
            objs=()
            while read -r src; do
                obj="obj/$name/$(basename "$src" .cpp).o"
                objs+=("$obj")
                printf '%s: %s\n\t@mkdir -p obj/%s\n' "$obj" "$src" "$name"
                printf '\tnice -n 19 hipcc %s -I %s/test -I %s/test/rocprim -c $< -o $@ >$@.log 2>&1 || { cat $@.log; exit 1; }\n' \
                    "$flags" "$SRC" "$SRC"
            done < <(program_sources "$name")
            [ ${#objs[@]} != 0 ] || { echo "warning: $name has no source in $SRC/test/rocprim" >&2; continue; }
            printf 'bin/%s: %s\n\t@mkdir -p bin\n\tnice -n 19 hipcc --offload-arch=gfx90a $^ -o $@ -lgtest_main -lgtest\n' \
                "$name" "${objs[*]}"
            targets+=("bin/$name")
        done
    } >"$make"
    [ ${#targets[@]} != 0 ] || return 0
    echo "building ${#targets[@]} test programs (log: $BUILD/build.log)" >&2
    make -C "$BUILD" -f "$make" -k -j "$JOBS" "${targets[@]}" >"$BUILD/build.log" 2>&1 || true
    for name in "${targets[@]}"; do
        [ -x "$BUILD/$name" ] || echo "warning: ${name#bin/} did not build: $BUILD/build.log" >&2
    done
}

suite_binaries() {
    local name
    for name in $PROGRAMS; do
        [ ! -x "$BUILD/bin/$name" ] || printf '%s\t%s\t%s\n' "$name" "$BUILD/bin/$name" "$BUILD"
    done
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

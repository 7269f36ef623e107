#!/usr/bin/env bash
# Builds HIP's catch tests (ROCm/HIP, tests/catch) against Debian's ROCm packages and runs every test case in its
# own process under `wavejit exec`. See --help.
set -euo pipefail

SUITE=HIP
TAG=rocm-5.2.3
UPSTREAM=https://github.com/ROCm/HIP.git
DEFAULT_BUILD=/tmp/wavejit-suites/hip
# Forks 148 processes that each write 1 GiB of managed (host) memory at once: six times a 24 GiB machine.
DEFAULT_EXCLUDE='^MemoryTest:Unit_HMM_OverSubscriptionTst$'
# Test programs in run order (the unit directories first), as "NAME DIRECTORY" under tests/catch.
PROGRAMS="DeviceTest unit/device
OccupancyTest unit/occupancy
KernelTest unit/kernel
EventTest unit/event
RTC unit/rtc
printfTests unit/printf
StreamPerThreadTest unit/streamperthread
TextureTest unit/texture
UnitDeviceTests unit/deviceLib
StreamTest unit/stream
GraphsTest unit/graph
MemoryTest unit/memory
MultiProc multiproc
TypeQualifiers TypeQualifiers
ABMAddKernels ABM/AddKernels"

suite_usage() {
    cat <<EOF
Usage: scripts/suites/hip.sh [--src DIR] [options]

Builds HIP's catch tests (tests/catch of ROCm/HIP at tag $TAG) with upstream's CMake, Debian's hipcc and
libamdhip64-dev (apt-get install hipcc libamdhip64-dev cmake), for gfx90a, outside this repository, and runs
each test case in its own process under \`wavejit exec\` (the unit programs first, then MultiProc,
TypeQualifiers, ABMAddKernels). The source is copied to BUILD/source and changed there only as Debian's
toolchain needs:
  - deviceLib's AtomicAdd_withunsafeflag.cc and FlatAtomicAdd_withunsafeflag.cc are left out: they stop with
    their own #error when the compiler defines __AMDGCN_UNSAFE_FP_ATOMICS__, as clang 15 does;
  - stress/ is left out (clang 15 rejects hipMallocManagedStress.cc);
  - deviceLib and rtc link without -lhiprtc: HIP 5.2 keeps hiprtc inside libamdhip64;
  - Catch2 2.13.4 is built with CATCH_CONFIG_NO_POSIX_SIGNALS (its alternate signal stack does not compile
    with glibc 2.36).
unit/cooperativeGrps is not built: upstream's unit/CMakeLists.txt at this tag does not list it. A program
that does not compile is reported on stderr and left out of the run.
The CMake build directory is BUILD/catch and test cases run in BUILD (deviceLib's checks read the compiler's
--save-temps output from ./catch/unit/deviceLib/), printfTests in its own directory (it starts
../printfExe/*). Test cases are listed with --list-test-names-only and run by name; skipped means the
program printed HIP_SKIP_THIS_TEST.
Left out unless --exclude says otherwise: Unit_HMM_OverSubscriptionTst, which forks one process per GiB of
the GPU's memory plus ten, and again as many from a child (148 for an MI210), each writing 1 GiB of managed
memory: under the emulator that is host memory, 148 GiB at once.
Programs: $(echo "$PROGRAMS" | cut -d' ' -f1 | tr '\n' ' ')
Example:
  scripts/suites/hip.sh --src /tmp/HIP --driver kfd --jobs 2 --shard 1/4 --filter '^(EventTest|DeviceTest):'

EOF
}

suite_build() {
    need_src
    [ -f "$SRC/tests/catch/CMakeLists.txt" ] || die "--src $SRC has no tests/catch/CMakeLists.txt (want ROCm/HIP at $TAG)"
    echo "$PROGRAMS" | cut -d' ' -f1 >"$BUILD/programs"
    if [ ! -d "$BUILD/source" ]; then
        mkdir -p "$BUILD/source"
        cp -a "$SRC/tests/catch/." "$BUILD/source/"
        sed -i -e '/^ *\(Flat\)\?AtomicAdd_withunsafeflag\.cc$/d' -e 's/LINKER_LIBS hiprtc)/)/' \
            "$BUILD/source/unit/deviceLib/CMakeLists.txt" "$BUILD/source/unit/rtc/CMakeLists.txt"
        sed -i -e '/^add_subdirectory(stress)$/d' "$BUILD/source/CMakeLists.txt"
    fi
    if [ ! -f "$BUILD/catch/Makefile" ]; then
        nice -n 19 cmake -S "$BUILD/source" -B "$BUILD/catch" -DHIP_PLATFORM=amd -DHIP_PATH=/usr -DROCM_PATH=/usr \
            -DOFFLOAD_ARCH_STR=--offload-arch=gfx90a -DCMAKE_CXX_FLAGS=-DCATCH_CONFIG_NO_POSIX_SIGNALS \
            >"$BUILD/cmake.log" 2>&1 || die "cmake failed: $BUILD/cmake.log"
    fi
    local name dir targets
    while read -r name dir; do
        wanted "$name" || continue
        targets=$name
        [ "$name" != printfTests ] || targets="printfTests printfFlags printfSepcifiers"
        echo "building $name ($dir)" >&2
        # shellcheck disable=SC2086 # targets is a list of words
        nice -n 19 make -C "$BUILD/catch" -j "$JOBS" $targets >"$BUILD/build-$name.log" 2>&1 ||
            echo "warning: $name did not build: $BUILD/build-$name.log" >&2
    done <<<"$PROGRAMS"
}

suite_binaries() {
    local name dir workdir
    while read -r name dir; do
        [ -x "$BUILD/catch/$dir/$name" ] || continue
        workdir=$BUILD
        [ "$name" != printfTests ] || workdir=$BUILD/catch/$dir
        printf '%s\t%s\t%s\n' "$name" "$BUILD/catch/$dir/$name" "$workdir"
    done <<<"$PROGRAMS"
}

# Catch2's exit code after a listing is the number of test cases listed.
suite_list() {
    { "${EXEC[@]}" "$1" --list-test-names-only || true; } | grep -v '^HIP_SKIP_THIS_TEST$' | sed 's/\r$//'
}

# Catch2 reads its argument as a test spec: a backslash makes the next character literal (',' separates
# specs, '[' starts a tag).
suite_cmd() {
    # shellcheck disable=SC2001 # one sed for three characters
    CMD=("$1" "$(sed 's/[][\\,]/\\&/g' <<<"$2")")
}

suite_status() {
    if [ "$1" != 0 ]; then
        echo failed
    elif grep -q '^HIP_SKIP_THIS_TEST$' "$2"; then
        echo skipped
    elif grep -q 'No test cases matched' "$2"; then
        echo failed
    else
        echo passed
    fi
}

# shellcheck source=scripts/suites/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
suite_main "$@"

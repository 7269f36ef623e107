#!/usr/bin/env bash
# Rebuilds the prebuilt code objects in prebuilt/ from src/kernels/ with clang-19 (gfx90a and gfx942).
# The results are checked in, so building wavejit does not need clang; rerun after changing a kernel.
# OpenCL C sources whose first line is `// needs: device-libs`, and every HIP source, link the ROCm device
# libraries (rocm-device-libs); their 5.2 release has no gfx942 ISA-version library, so one is generated (see
# ../shared/toolchain.md). HIP sources compile device-only against Debian's HIP 5.2 headers (libamdhip64-dev);
# assembly sources go through llvm-mc-19 and ld.lld-19.
# Usage: build.sh [OUT_DIR]   (default: prebuilt/; the tests rebuild into a temporary directory and compare)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/prebuilt}
mkdir -p "$out"
command -v clang-19 >/dev/null || { echo "build.sh: clang-19 is needed (apt-get install clang-19 lld-19)" >&2; exit 1; }
[ -f /usr/include/hip/hip_runtime.h ] || { echo "build.sh: HIP headers missing (apt-get install libamdhip64-dev)" >&2; exit 1; }
dl=/usr/lib/x86_64-linux-gnu/amdgcn/bitcode
dl942=$(mktemp -d)
trap 'rm -rf "$dl942"' EXIT
prepare_device_libs() {
  [ -f "$dl/ocml.bc" ] || { echo "build.sh: $dl/ocml.bc missing (apt-get install rocm-device-libs)" >&2; exit 1; }
  [ -f "$dl942/oclc_isa_version_942.bc" ] && return
  ln -sf "$dl"/*.bc "$dl942/"
  echo '__attribute__((visibility("protected"))) const __constant int __oclc_ISA_version = 9402;' > "$dl942/isa.cl"
  clang-19 -target amdgcn-amd-amdhsa -nogpulib -cl-std=CL2.0 -Xclang -mcode-object-version=none -emit-llvm \
    -c "$dl942/isa.cl" -o "$dl942/oclc_isa_version_942.bc"
}
for src in "$here"/src/kernels/*.cl; do
  name=$(basename "$src" .cl)
  for target in gfx90a gfx942; do
    libs=(-nogpulib)
    if head -1 "$src" | grep -q "needs: device-libs"; then
      prepare_device_libs
      libs=(--rocm-device-lib-path="$([ $target = gfx942 ] && echo "$dl942" || echo "$dl")")
    fi
    clang-19 -x cl -cl-std=CL2.0 -target amdgcn-amd-amdhsa -mcpu=$target "${libs[@]}" -O3 \
      "$src" -o "$out/$name-$target.co"
  done
done
for src in "$here"/src/kernels/*.hip; do
  name=$(basename "$src" .hip)
  for target in gfx90a gfx942; do
    prepare_device_libs
    clang++-19 -x hip --offload-arch=$target --cuda-device-only --no-gpu-bundle-output -fuse-cuid=none --rocm-path=/usr \
      --rocm-device-lib-path="$([ $target = gfx942 ] && echo "$dl942" || echo "$dl")" -O3 \
      "$src" -o "$out/$name-$target.co"
  done
done
# hand-written assembly: `@TARGET@` in the metadata becomes the target
for src in "$here"/src/kernels/*.s; do
  name=$(basename "$src" .s)
  for target in gfx90a gfx942; do
    tmp=$(mktemp -d)
    sed "s/@TARGET@/$target/" "$src" > "$tmp/$name.s"
    llvm-mc-19 -triple amdgcn-amd-amdhsa -mcpu=$target -filetype=obj "$tmp/$name.s" -o "$tmp/$name.o"
    ld.lld-19 -shared "$tmp/$name.o" -o "$out/$name-$target.co"
    rm -rf "$tmp"
  done
done
echo "rebuilt $(ls "$out"/*.co | wc -l) code objects in $out"

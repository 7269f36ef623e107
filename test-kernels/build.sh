#!/usr/bin/env bash
# Rebuilds the prebuilt code objects in prebuilt/ from src/kernels/ with clang-19 (gfx90a and gfx942).
# The results are checked in, so building wavejit does not need clang; rerun after changing a kernel.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
command -v clang-19 >/dev/null || { echo "build.sh: clang-19 is needed (apt-get install clang-19 lld-19)" >&2; exit 1; }
for src in "$here"/src/kernels/*.cl; do
  name=$(basename "$src" .cl)
  for target in gfx90a gfx942; do
    clang-19 -x cl -cl-std=CL2.0 -target amdgcn-amd-amdhsa -mcpu=$target -nogpulib -O3 \
      "$src" -o "$here/prebuilt/$name-$target.co"
  done
done
echo "rebuilt $(ls "$here"/prebuilt/*.co | wc -l) code objects in $here/prebuilt"

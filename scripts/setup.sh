#!/usr/bin/env bash
# Installs the system packages wavejit's build and tests use, if missing (Debian 12). Idempotent.
#   clang-19 llvm-19 lld-19      oracle disassembler/assembler, compiler of test kernels
#   clang-22 llvm-22 lld-22      the same for gfx950 (LLVM 19 does not know it): the gfx950 instruction table is
#                                probed with llvm-mc-22, and isa-amdgpu's gfx950 tests compare with llvm-objdump-22
#   librocrand1 librocsparse0    real gfx90a kernels (corpus for the disassembler and engine tests)
#   rocm-device-libs libamdhip64-dev   device libraries and HIP headers: the test that rebuilds test-kernels/
#   hipcc libhsa-runtime-dev rocminfo librocrand-dev gcc   the runtime-shim tests: HIP programs, HSA C tests
#                                and rocminfo run through `wavejit exec` (tools/tests/exec.rs)
#   rocm-smi librocm-smi-dev     rocm-smi run unmodified through `wavejit exec` (tools/tests/smi.rs)
#   sqlite3 fonts-dejavu-core    the profile database queried by the sqlite3 CLI, the roofline chart's font
#                                (tools/tests/profile.rs)
#   chromium                     headless browser the wavefront explorer's page is tested in (inspect/tests/explorer.rs)
#   librocsparse-dev             a rocSPARSE program built by the tests (runtime-shim/tests/hip/rocsparse.hip)
#   libhsa-runtime64-1 libhsakmt1  ROCm's own runtime and thunk, run over the emulated driver (tools/tests/driver.rs)
#   mmdebstrap                   Debian 12 root filesystems for the container image and the GitHub Action (tools/tests/image.rs)
# and a Python virtual environment in target/venv with, from PyPI, tinygrad and numpy (tools/tests/driver.rs runs
# tinygrad's own KFD runtime on the emulated MI300X), and maturin, pytest and Triton (scripts/python.sh builds the
# Python package into it and runs its tests, Triton's kernels among them).
set -euo pipefail
want=(mmdebstrap clang-19 llvm-19 lld-19 clang-22 llvm-22 lld-22 librocrand1 librocsparse0 rocm-device-libs libamdhip64-dev hipcc libhsa-runtime-dev rocminfo librocrand-dev gcc rocm-smi librocm-smi-dev sqlite3 fonts-dejavu-core chromium librocsparse-dev libhsa-runtime64-1 libhsakmt1)
missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
# tinygrad (its KFD runtime and its LLVM compiler, which loads Debian's libLLVM-19), numpy, and what builds and
# tests the Python package
venv=target/venv
pins=("tinygrad==0.14.0" "numpy==2.4.6" "triton==3.9.0" "maturin==1.16.0" "pytest==9.2.0")
if ! "$venv/bin/python" -c "import tinygrad, numpy, triton, pytest, maturin" 2>/dev/null; then
  echo "setup: making $venv with ${pins[*]}" >&2
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
  # pip unpacks wheels in TMPDIR (Triton's is hundreds of MB): keep that, and no download cache, beside the build
  # rather than in a /tmp that may be a small tmpfs.
  pip_tmp=target/pip-tmp
  mkdir -p "$pip_tmp"
  if ! TMPDIR="$PWD/$pip_tmp" "$venv/bin/pip" install -q --no-cache-dir "${pins[@]}"; then
    echo "setup: pip could not install ${pins[*]}; free space:" >&2
    df -h . /tmp >&2 || true
    exit 1
  fi
  rm -rf "$pip_tmp"
fi
if ! command -v cargo >/dev/null; then
  echo "setup: cargo not found; install Rust (https://rustup.rs) first" >&2
  exit 1
fi

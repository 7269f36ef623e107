#!/usr/bin/env bash
# The Python package (python/): builds its wheel with maturin (abi3: one wheel for every CPython >= 3.9), installs it
# into the virtual environment scripts/setup.sh makes (target/venv, with numpy, Triton and pytest) and runs its
# tests there; then installs it as a user does, `pip install ./python` into a new venv, and runs an example.
#   scripts/python.sh [test]           build (release), install, run python/tests
#   scripts/python.sh wheel            build the release wheel into target/wheels
#   scripts/python.sh install          build it and install it into target/venv
#   WAVEJIT_WHEEL_PROFILE=NAME ...     build with another cargo profile (not `test`: cargo builds a test harness)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
venv=$PWD/target/venv
profile=${WAVEJIT_WHEEL_PROFILE:-release}
rm -rf target/wheels/wavejit-*.whl
"$venv/bin/maturin" build --locked --profile "$profile" -m python/Cargo.toml -i "$venv/bin/python" -o target/wheels
wheel=$(ls target/wheels/wavejit-*.whl)
echo "python: built $wheel ($(du -k "$wheel" | cut -f1) KiB)" >&2
[ "${1:-test}" = wheel ] && exit 0
"$venv/bin/pip" install -q --force-reinstall --no-deps "$wheel"
[ "${1:-test}" = install ] && exit 0
# Triton's AMD backend warns on every compile until this default is set (it changes in Triton 3.10)
export TRITON_DEFAULT_FP_FUSION=${TRITON_DEFAULT_FP_FUSION:-1}
# run from the tests' directory, so that `import wavejit` is the installed wheel, not the source tree
(cd python/tests && "$venv/bin/python" -m pytest -q -p no:cacheprovider .)
# `pip install ./python` as a user runs it: a new venv holding nothing, pip's build isolation bringing maturin
# from PyPI, numpy as the package's dependency, cargo building the wheel (with $profile, reusing that build); then
# the package's first example in that venv.
fresh=target/venv-fresh
rm -rf "$fresh"
python3 -m venv "$fresh"
mkdir -p target/pip-tmp
TMPDIR="$PWD/target/pip-tmp" MATURIN_PEP517_ARGS="--locked --profile $profile" \
  "$fresh/bin/pip" install -q --no-cache-dir ./python
"$fresh/bin/python" - <<'PY'
import numpy as np
import wavejit

dev = wavejit.Device("mi300x")
reduce_sum = dev.load(wavejit.bundled("reduce-gfx942.co"))["reduce_sum"]
x = dev.array(np.ones(1 << 16, np.float32))
sums = dev.zeros(256, np.float32)
reduce_sum(x, sums, 1 << 16, grid=1 << 16, block=256)
assert (sums.numpy() == 256).all(), sums.numpy()
print("python: pip install ./python in a new venv: reduce_sum gives 256 in each of 256 sums")
PY
rm -rf "$fresh" target/pip-tmp

#!/usr/bin/env bash
# The Python package (python/): builds its wheel with maturin (abi3: one wheel for every CPython >= 3.9), installs it
# into the virtual environment scripts/setup.sh makes (target/venv, with numpy, Triton and pytest) and runs its
# tests there.
#   scripts/python.sh [test]           build (release), install, run python/tests
#   scripts/python.sh wheel            build the release wheel into target/wheels
#   scripts/python.sh install          build it and install it into target/venv
#   WAVEJIT_WHEEL_PROFILE=test ...     build with another cargo profile (scripts/test.sh reuses its test build)
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
cd python/tests
"$venv/bin/python" -m pytest -q -p no:cacheprovider .

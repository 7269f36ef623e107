#!/usr/bin/env bash
# Runs every wavejit test: installs what is missing, builds the tests once, then runs the whole workspace's tests
# (all of them, reporting every failure, not only the first test program's).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# One build of the test profile, without incremental state (it would double the build's disk use on a machine
# that builds the tree once).
export CARGO_INCREMENTAL=0
# The house's floor: formatted as rustfmt.toml says, and clippy without a warning (lints in Cargo.toml).
cargo fmt --all --check
cargo clippy --workspace --all-targets --locked -- -D warnings
cargo test --workspace --locked --no-run 2>&1 | tail -n 3
status=0
cargo test --workspace --locked --no-fail-fast || status=$?
# The scripts that build and run AMD's suites, checked against stand-in programs (no upstream code needed).
bash scripts/suites/selftest.sh || status=$?
# The Python package's tests (python/tests, pytest in target/venv), its wheel built with the release profile (the
# end-to-end tests above built most of it; the test profile would build the library as a test harness)
bash scripts/python.sh || status=$?
exit $status

#!/usr/bin/env bash
# Runs every wavejit test: installs what is missing, builds once, then the whole workspace's tests.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cargo build --workspace --all-targets --locked 2>&1 | tail -n 3
cargo test --workspace --locked

#!/usr/bin/env bash
# The main job on the built-in default: run the bundled kernels on an emulated MI300X, check them against
# their CPU references, then show the start of one kernel's disassembly. Pass --device mi210 for an MI210.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v cargo >/dev/null || { echo "demo: install Rust (https://rustup.rs) first" >&2; exit 1; }
cargo build --release --quiet -p wavejit-tools --bin wavejit
./target/release/wavejit demo "$@"
echo
./target/release/wavejit disasm | head -n 16

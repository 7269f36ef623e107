#!/usr/bin/env bash
# The main job on the built-in default: disassemble the bundled sample kernel (an LDS reduction for MI300X).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v cargo >/dev/null || { echo "demo: install Rust (https://rustup.rs) first" >&2; exit 1; }
cargo run --release --quiet -p wavejit-tools --bin wavejit -- disasm "$@"

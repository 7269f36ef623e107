#!/usr/bin/env bash
# Benchmarks in one run on this machine: the interpreter and the JIT (`wavejit bench`, one host thread and
# all), and the same ALU loop as native C (gcc -O3 -mavx2 -mfma), for the ratios reported in the issue notes.
# Criterion statistics: cargo bench -p emu-core.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -p wavejit-tools --bin wavejit 2>&1 | tail -n 1
./target/release/wavejit bench --threads 1
./target/release/wavejit bench
if command -v gcc >/dev/null; then
  tmp=$(mktemp -d)
  gcc -O3 -mavx2 -mfma jit/benches/native_alu_loop.c -o "$tmp/native_alu_loop" -lm
  "$tmp/native_alu_loop" 1000
  rm -rf "$tmp"
fi

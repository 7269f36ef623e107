#!/usr/bin/env bash
# Benchmarks in one run on this machine: the interpreter and the JIT (`wavejit bench`, one host thread and
# all), the same ALU loop as native C (gcc -O3 -mavx2 -mfma), and the launch overhead of an empty kernel from
# Python against `wavejit run`'s (python/bench/launch_overhead.py, with the release wheel in target/venv).
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
bash scripts/python.sh install
target/venv/bin/python python/bench/launch_overhead.py target/release/wavejit

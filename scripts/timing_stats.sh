#!/usr/bin/env bash
# Runs bundled kernels with `wavejit run --timing --stats-json` on both devices and writes their statistics to one
# JSON file per kernel and device in OUT_DIR, and the checksums of the buffers the kernels wrote. What depends on the
# host (wall-clock seconds, the JIT's tiering counts, which race its background compiler) is left out, so diffing two
# builds' directories shows whether a change moved any modeled cycle, counter or result:
#   scripts/timing_stats.sh old/wavejit /tmp/before
#   scripts/timing_stats.sh target/release/wavejit /tmp/after
#   diff -r /tmp/before /tmp/after
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 WAVEJIT_BINARY OUT_DIR" >&2; exit 2; }
bin=$(realpath "$1")
out=$(mkdir -p "$2" && realpath "$2")
kernels=$(realpath "$(dirname "$0")/../test-kernels/prebuilt")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

python3 - <<'EOF'
import struct
n = 100_000
open("a.bin", "wb").write(struct.pack(f"<{n}f", *[i * 0.5 for i in range(n)]))
open("b.bin", "wb").write(struct.pack(f"<{n}f", *[(i % 1000) / 8.0 for i in range(n)]))
open("seeds.bin", "wb").write(struct.pack(f"<{20_000}I", *[((i * 2_654_435_761) % 2**32) >> (i % 23) for i in range(20_000)]))
open("m64.bin", "wb").write(struct.pack(f"<{64 * 64}f", *[(i % 7) - 3.0 for i in range(64 * 64)]))
open("bytes.bin", "wb").write(bytes((i * 37 + i // 256) % 256 for i in range(65_536)))
open("u32.bin", "wb").write(struct.pack(f"<{4096}I", *[(i * 7) % 100 for i in range(4096)]))
open("next.bin", "wb").write(struct.pack(f"<{4096}I", *[(i * 1021 + 17) % 4096 for i in range(4096)]))
EOF

# name, code object, kernel, grid, block, arguments
cases=(
  "vadd|vadd|vadd|100000|256|in=a.bin in=b.bin out=c.bin:400000 u32=100000"
  "saxpy|saxpy|saxpy|100000|256|f32=2.5 in=a.bin inout=b.bin u32=100000"
  "reduce|reduce|reduce_sum|100096|256|in=a.bin out=sums.bin:1564 u32=100000"
  "divergence|divergence|divergence|20000|128|out=d.bin:160000 in=seeds.bin u32=20000"
  "alu_loop|alu_loop|alu_loop|16384|256|out=l.bin:65536 u32=100"
  "sgemm|sgemm|sgemm|64,64|16,16|in=m64.bin in=m64.bin out=g.bin:16384 u32=64"
  "histogram|histogram|histogram|16384|256|in=bytes.bin u32=65536 u32=16384 out=h.bin:256"
  "scan|scan|scan|4096|256|in=u32.bin out=s.bin:16384"
  "lds_banks|lds_banks|lds_banks|64|64|out=lb.bin:512 u32=3 u32=64"
  "stream_triad|stream|stream_triad|8192|256|out=t.bin:131072 in=a.bin in=b.bin f32=3 u32=8192 u32=8192"
  "chase_vector|chase|chase_vector|64|64|in=next.bin u32=256 out=cv.bin:512"
  "chase_lds|chase|chase_lds|64|64|in=next.bin u32=256 out=cl.bin:512"
)
for device in mi300x mi210; do
  case $device in mi300x) target=gfx942 ;; *) target=gfx90a ;; esac
  for case in "${cases[@]}"; do
    IFS='|' read -r name co kernel grid block args <<<"$case"
    argv=()
    for a in $args; do argv+=(--arg "$a"); done
    "$bin" run "$kernels/$co-$target.co" --kernel "$kernel" --grid "$grid" --block "$block" --device "$device" \
      --timing --stats-json stats.json "${argv[@]}" > /dev/null 2> >(grep -v '^wrote ' >&2)
    python3 -c '
import json, sys
def strip(v):
    if isinstance(v, dict):
        return {k: strip(x) for k, x in v.items() if k != "seconds" and not k.startswith("jit_")}
    if isinstance(v, list):
        return [strip(x) for x in v]
    return v
json.dump(strip(json.load(open("stats.json"))), open(sys.argv[1], "w"), indent=1, sort_keys=True)
' "$out/$name-$device.json"
  done
  sha256sum ./*.bin > "$out/outputs-$device.txt"
done
echo "wrote $(ls "$out" | wc -l) statistics files to $out"

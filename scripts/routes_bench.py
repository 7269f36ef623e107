#!/usr/bin/env python3
"""The two routes into the emulated GPU compared: the same HIP programs under `wavejit exec --driver hsa` (wavejit's
HSA runtime) and `--driver kfd` (Debian's ROCr and thunk over the emulated kernel driver).

- Dispatch overhead: runtime-shim/tests/hip/launch.hip (an empty kernel launched and synchronized, and launched
  back to back), microseconds per launch.
- Kernel speed: runtime-shim/tests/hip/bandwidth.hip (a kernel reading 64 MiB, timed with HIP events), GB/s of
  host throughput, once with HIP's default wait (the host thread spins while the GPU runs, taking a core from the
  emulator) and once with hipDeviceScheduleBlockingSync (`--blocking-sync`: the host thread sleeps).

Prints the best of --rounds per figure and the kfd/hsa ratio of each (for times: > 1 is slower through ROCr; for
bandwidth: < 1 is slower). --json PATH writes every figure.

    python3 scripts/routes_bench.py [--rounds 3] [--json out.json] [--no-build]

Needs Debian's hipcc and the ROCm runtime packages scripts/setup.sh installs; fails if they are missing.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HIP = os.path.join(ROOT, "runtime-shim", "tests", "hip")
ROUTES = ["hsa", "kfd"]

# figure: (program, arguments, pattern of its value, unit, higher is better)
FIGURES = {
    "round trip": ("launch", ["2000", "20000"], r"round trips of launch \+ synchronize: ([\d.]+) us", "us", False),
    "async launch": ("launch", ["2000", "20000"], r"asynchronous launches: ([\d.]+) us", "us", False),
    "stream, HIP's spin wait": ("bandwidth", [], r"again: ([\d.]+) ms", "GB/s", True),
    "stream, blocking sync": ("bandwidth", ["--blocking-sync"], r"again: ([\d.]+) ms", "GB/s", True),
}
STREAM_BYTES = 64 << 20


def die(msg):
    print(f"routes_bench: {msg}", file=sys.stderr)
    sys.exit(1)


def build(target_dir):
    r = subprocess.run(
        ["cargo", "build", "--release", "-p", "wavejit-tools", "-p", "runtime-shim", "-p", "wavejit-driver"], cwd=ROOT
    )
    if r.returncode != 0:
        die("cargo build failed")
    return os.path.join(target_dir, "release", "wavejit")


def compile_program(name, out_dir):
    if shutil.which("hipcc") is None:
        die("hipcc is missing (Debian's hipcc: scripts/setup.sh installs it)")
    out = os.path.join(out_dir, name)
    r = subprocess.run(
        ["hipcc", "--offload-arch=gfx90a", "-I", HIP, os.path.join(HIP, name + ".hip"), "-o", out],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    if r.returncode != 0:
        die(f"hipcc {name}.hip failed:\n{r.stderr}")
    return out


def measure(wavejit, route, binary, args, pattern, unit):
    r = subprocess.run(
        [wavejit, "exec", "--driver", route, "--", binary] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    if r.returncode != 0:
        die(f"{os.path.basename(binary)} failed on --driver {route}:\n{r.stdout}\n{r.stderr}")
    m = re.search(pattern, r.stdout)
    if not m:
        die(f"{os.path.basename(binary)} on --driver {route} printed no figure:\n{r.stdout}")
    value = float(m.group(1))
    return STREAM_BYTES / (value * 1e-3) / 1e9 if unit == "GB/s" else value


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json")
    ap.add_argument("--no-build", action="store_true")
    a = ap.parse_args()
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    wavejit = os.path.join(target, "release", "wavejit") if a.no_build else build(target)
    work = tempfile.mkdtemp(prefix="wavejit-routes-")
    try:
        bins = {p: compile_program(p, work) for p in {f[0] for f in FIGURES.values()}}
        best = {f: {r: None for r in ROUTES} for f in FIGURES}
        for rnd in range(a.rounds):
            for fig, (prog, args, pattern, unit, higher) in FIGURES.items():
                for route in ROUTES:
                    v = measure(wavejit, route, bins[prog], args, pattern, unit)
                    b = best[fig][route]
                    best[fig][route] = v if b is None else (max(b, v) if higher else min(b, v))
            print(f"round {rnd + 1}/{a.rounds} done", file=sys.stderr)
        print(f"{'figure':26} {'--driver hsa':>14} {'--driver kfd':>14} {'kfd/hsa':>8}")
        report = {}
        for fig, (_, _, _, unit, _) in FIGURES.items():
            h, k = best[fig]["hsa"], best[fig]["kfd"]
            print(f"{fig:26} {h:>10.2f} {unit:>4}{k:>10.2f} {unit:>4} {k / h:>8.2f}")
            report[fig] = {"unit": unit, "hsa": h, "kfd": k, "kfd_over_hsa": k / h}
        if a.json:
            with open(a.json, "w") as f:
                json.dump({"rounds": a.rounds, "figures": report}, f, indent=2)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

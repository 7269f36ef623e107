#!/usr/bin/env python3
"""BabelStream (UoB-HPC's GPU memory-bandwidth benchmark, HIP version, tag v5.0) run whole under the timing model.

Builds BabelStream's HIP version with Debian's hipcc for gfx90a outside this repository, runs it under
`wavejit profile --timing` on each emulated device (HIP 5.2 runs on gfx90a devices only: MI210 and the MI250X's
GCD), and takes each kernel's modeled time from the profile (`kernel_trace.csv`'s timestamps, which are modeled
nanoseconds under --timing). BabelStream's own printed bandwidths are the host's wall-clock time of the emulation
and are not used; its validation of the results is (a run whose arrays are wrong fails).

Bandwidth per kernel as BabelStream counts it (bytes of the arrays read and written: Copy and Mul 2, Add and
Triad 3, Dot 2 arrays of --size doubles) over the mean modeled time of its dispatches after the first (BabelStream
leaves the first iteration out too).

    scripts/suites/babelstream.py [--src DIR] [--build DIR] [--devices mi210,mi250x-gcd] [--size N]
                                  [--numtimes N] [--driver hsa|kfd] [--results FILE] [--update FILE]
    scripts/suites/babelstream.py --from FILE [--update FILE]

--src is a checkout of BabelStream at v5.0; without it the script clones the tag into BUILD/upstream (git clone
--branch v5.0 --depth 1 https://github.com/UoB-HPC/BabelStream). --update replaces the text between the markers
`<!-- babelstream-table -->` and `<!-- /babelstream-table -->` in that file with the table it prints; --from
makes the table from the results file of an earlier run instead of running.
Needs target/release/wavejit (cargo build --release -p wavejit-tools -p runtime-shim -p wavejit-driver) or
--wavejit PATH, and hipcc (scripts/setup.sh installs it).
"""
import argparse
import csv
import json
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TAG = "v5.0"
UPSTREAM = "https://github.com/UoB-HPC/BabelStream"
BEGIN, END = "<!-- babelstream-table -->", "<!-- /babelstream-table -->"
# BabelStream's kernels: the name it prints, the kernel's name in the code object, arrays it moves
KERNELS = [
    ("Copy", "copy_kernel", 2),
    ("Mul", "mul_kernel", 2),
    ("Add", "add_kernel", 3),
    ("Triad", "triad_kernel", 3),
    ("Dot", "dot_kernel", 2),
]
DOUBLE = 8


def fail(msg):
    sys.exit(f"babelstream.py: {msg}")


def run(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if p.returncode != 0:
        fail(f"`{' '.join(cmd)}` failed ({p.returncode}):\n{p.stdout[-2000:]}\n{p.stderr[-4000:]}")
    return p


def source(args):
    if args.src:
        src = args.src
        tags = subprocess.run(["git", "-C", src, "tag", "--points-at", "HEAD"], capture_output=True, text=True)
        if tags.returncode == 0 and TAG not in tags.stdout.split():
            print(f"babelstream.py: warning: {src} is not at tag {TAG}", file=sys.stderr)
        return src
    src = os.path.join(args.build, "upstream")
    if not os.path.isdir(src):
        run(["git", "clone", "--quiet", "--branch", TAG, "--depth", "1", args.upstream, src])
    return src


def build(src, out_dir):
    exe = os.path.join(out_dir, "hip-stream")
    hip = os.path.join(src, "src", "hip")
    if not os.path.isfile(os.path.join(hip, "HIPStream.cpp")):
        fail(f"{src} holds no src/hip/HIPStream.cpp: not a BabelStream {TAG} checkout")
    run(["hipcc", "--offload-arch=gfx90a", "-O3", "-std=c++17", "-DHIP", "-DDEFAULT",
         "-I" + os.path.join(src, "src"), "-I" + hip,
         os.path.join(src, "src", "main.cpp"), os.path.join(hip, "HIPStream.cpp"), "-o", exe])
    return exe


def one_device(args, exe, device):
    prof = os.path.join(args.build, f"profile-{device}-{args.driver}")
    started = time.monotonic()
    p = run([args.wavejit, "profile", "--timing", "--format", "csv", "--counters", "GRBM_GUI_ACTIVE",
             "--device", device, "--driver", args.driver, "-o", prof, "--",
             exe, "--arraysize", str(args.size), "--numtimes", str(args.numtimes)])
    wall = time.monotonic() - started
    if "Validation failed" in p.stdout + p.stderr:
        fail(f"BabelStream's validation failed on {device}:\n{p.stdout}\n{p.stderr[-2000:]}")
    times = {}
    with open(os.path.join(prof, "kernel_trace.csv"), newline="") as f:
        for row in csv.DictReader(f):
            m = re.match(r"void (\w+)<double>", row["Kernel_Name"])
            if m:
                times.setdefault(m.group(1), []).append(int(row["End_Timestamp"]) - int(row["Start_Timestamp"]))
    kernels = {}
    for name, kernel, arrays in KERNELS:
        ns = times.get(kernel)
        if not ns or len(ns) != args.numtimes:
            fail(f"{device}: the profile has {len(ns or [])} dispatches of {kernel}, expected {args.numtimes}")
        counted = ns[1:] if len(ns) > 1 else ns
        mean_ns = sum(counted) / len(counted)
        moved = arrays * args.size * DOUBLE
        kernels[name] = {"bytes": moved, "modeled_ns": counted, "tb_per_s": moved / mean_ns / 1e3}
    return {"kernels": kernels, "wall_seconds": round(wall, 1)}


def commit(wavejit):
    v = subprocess.run([wavejit, "--version"], capture_output=True, text=True).stdout
    m = re.search(r"commit (\w+)", v)
    return m.group(1) if m else "unknown"


def table(results):
    devices = list(results["devices"])
    mib = results["size"] * DOUBLE / (1 << 20)
    lines = [
        f"BabelStream {results['tag']} (HIP, doubles), arrays of {results['size']} elements ({mib:.0f} MiB each), "
        f"{results['numtimes']} iterations, `--driver {results['driver']}`, wavejit `{results['wavejit_commit']}`: "
        "modeled TB/s as BabelStream counts bytes, mean of the iterations after the first.",
        "",
        "| kernel | " + " | ".join(devices) + " |",
        "|---|" + "---|" * len(devices),
    ]
    for name, _, _ in KERNELS:
        cells = [f"{results['devices'][d]['kernels'][name]['tb_per_s']:.2f}" for d in devices]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def update(path, text):
    with open(path) as f:
        doc = f.read()
    if BEGIN not in doc or END not in doc:
        fail(f"{path} has no {BEGIN} ... {END} markers")
    head, rest = doc.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    with open(path, "w") as f:
        f.write(f"{head}{BEGIN}\n{text}\n{END}{tail}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--src", help=f"a BabelStream checkout at {TAG}")
    ap.add_argument("--upstream", default=UPSTREAM, help="the repository to clone without --src")
    ap.add_argument("--build", default="/tmp/babelstream", help="where to build and profile, outside the repository")
    ap.add_argument("--wavejit", default=os.path.join(ROOT, "target", "release", "wavejit"))
    ap.add_argument("--devices", default="mi210,mi250x-gcd", help="gfx90a presets, comma-separated")
    ap.add_argument("--size", type=int, default=1 << 25, help="elements per array (BabelStream's default 2^25)")
    ap.add_argument("--numtimes", type=int, default=3, help="iterations of each kernel (at least 2)")
    ap.add_argument("--driver", choices=["hsa", "kfd"], default="hsa")
    ap.add_argument("--results", help="write the results as JSON here")
    ap.add_argument("--update", help="a file whose babelstream-table markers get the table")
    ap.add_argument("--from", dest="from_file", help="the results file of an earlier run: only make the table")
    args = ap.parse_args()
    if args.from_file:
        with open(args.from_file) as f:
            text = table(json.load(f))
        print(text)
        if args.update:
            update(args.update, text)
        return
    if args.numtimes < 2:
        fail("--numtimes must be at least 2 (the first iteration is left out)")
    if args.size % 1024:
        fail("--size must be a multiple of 1024 (BabelStream's HIP block size)")
    if not os.access(args.wavejit, os.X_OK):
        fail(f"no wavejit at {args.wavejit}: build it (cargo build --release -p wavejit-tools -p runtime-shim "
             "-p wavejit-driver) or pass --wavejit")
    os.makedirs(args.build, exist_ok=True)
    exe = build(source(args), args.build)
    results = {"suite": "babelstream", "tag": TAG, "upstream": args.upstream, "wavejit_commit": commit(args.wavejit),
               "size": args.size, "numtimes": args.numtimes, "driver": args.driver, "devices": {}}
    for device in args.devices.split(","):
        print(f"babelstream.py: {device} ...", file=sys.stderr, flush=True)
        results["devices"][device] = one_device(args, exe, device)
    text = table(results)
    print(text)
    if args.results:
        with open(args.results, "w") as f:
            json.dump(results, f, indent=1)
            f.write("\n")
    if args.update:
        update(args.update, text)


if __name__ == "__main__":
    main()

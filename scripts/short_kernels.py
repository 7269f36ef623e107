#!/usr/bin/env python3
"""The "many short kernels" workload: the HIP programs of the test suite (runtime-shim/tests/hip) and rocRAND's
generators, each run unmodified under `wavejit exec` on the interpreter, on the default engine with an empty
translation cache (first run) and on the default engine again with the cache that run left (second run).

Prints, per program and in total, the wall time and the CPU time (user + system, all threads: steadier than
wall time on a shared machine) of each configuration, best of --rounds, and what the JIT did (blocks
translated, blocks loaded from the disk cache); then the dispatch overhead measured by the launch benchmark
(an empty kernel launched and synchronized, and launched back to back). --json PATH writes every figure.

    python3 scripts/short_kernels.py [--rounds 3] [--json out.json] [--no-build] [--skip rocrand]

Needs Debian's hipcc and librocrand-dev (scripts/setup.sh installs them); fails if they are missing.
"""

import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HIP = os.path.join(ROOT, "runtime-shim", "tests", "hip")

# name: (hipcc flags, program arguments, wavejit exec --device)
PROGRAMS = {
    "vadd": ([], [], None),
    "memcpy": ([], [], None),
    "misc": ([], [], None),
    "streams": ([], [], None),
    "scratch": ([], [], None),
    "texture": ([], [], None),
    "reduce": ([], [], None),
    "events": ([], [], None),
    "printf": ([], [], None),
    "coop": ([], [], None),
    "devices": ([], [], "mi210,mi210"),
    "ipc": ([], [], None),
    "launch": ([], ["200", "2000"], None),
    "rocrand": (["-lrocrand"], [], None),
}

STATS = re.compile(r"wavejit: jit: (\d+) blocks translated .*?, (\d+) loaded from the disk cache")


def die(msg):
    print(f"short_kernels: {msg}", file=sys.stderr)
    sys.exit(1)


def build(target_dir):
    r = subprocess.run(["cargo", "build", "--release", "-p", "wavejit-tools", "-p", "runtime-shim"], cwd=ROOT)
    if r.returncode != 0:
        die("cargo build failed")
    return os.path.join(target_dir, "release", "wavejit")


def compile_programs(names, out_dir):
    if shutil.which("hipcc") is None:
        die("hipcc is missing (Debian's hipcc: scripts/setup.sh installs it)")
    bins = {}
    for name in names:
        flags, _, _ = PROGRAMS[name]
        out = os.path.join(out_dir, name)
        r = subprocess.run(["hipcc", "--offload-arch=gfx90a", "-I", HIP, os.path.join(HIP, name + ".hip"), "-o", out] + flags,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if r.returncode != 0:
            die(f"hipcc {name}.hip failed:\n{r.stderr}")
        bins[name] = out
    return bins


def run_one(wavejit, name, binary, engine, cache):
    """One run: (wall s, cpu s, blocks translated, blocks loaded)."""
    _, args, devices = PROGRAMS[name]
    cmd = [wavejit, "exec"]
    if devices:
        cmd += ["--device", devices]
    if engine == "interp":
        cmd += ["--engine", "interp"]
    cmd += ["--", binary] + args
    env = dict(os.environ, WAVEJIT_CACHE=cache, WAVEJIT_JIT_STATS="1")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.monotonic()
    r = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wall = time.monotonic() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if r.returncode != 0:
        die(f"{name} failed on {engine}:\n{r.stdout}\n{r.stderr}")
    m = STATS.search(r.stderr)
    translated, loaded = (int(m.group(1)), int(m.group(2))) if m else (0, 0)
    launch = None
    if name == "launch":
        rt = re.search(r"round trips of launch \+ synchronize: ([\d.]+) us", r.stdout)
        asy = re.search(r"asynchronous launches: ([\d.]+) us", r.stdout)
        launch = (float(rt.group(1)), float(asy.group(1)))
    return wall, cpu, translated, loaded, launch


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json")
    ap.add_argument("--no-build", action="store_true")
    ap.add_argument("--skip", action="append", default=[], help="leave out a program (repeatable)")
    ap.add_argument("--only", action="append", default=[], help="only these programs (repeatable)")
    ap.add_argument("--launch-trips", type=int, default=20000, help="round trips of the dispatch-overhead measurement")
    a = ap.parse_args()
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    wavejit = os.path.join(target, "release", "wavejit") if a.no_build else build(target)
    names = [n for n in PROGRAMS if n not in a.skip and (not a.only or n in a.only)]
    work = tempfile.mkdtemp(prefix="wavejit-short-")
    try:
        bins = compile_programs(names, work)
        configs = ["interp", "jit-first", "jit-second"]
        best = {c: {n: None for n in names} for c in configs}
        for rnd in range(a.rounds):
            cache = os.path.join(work, f"cache-{rnd}")
            for c in configs:
                for n in names:
                    engine = "interp" if c == "interp" else "jit"
                    r = run_one(wavejit, n, bins[n], engine, cache if engine == "jit" else os.path.join(work, "unused"))
                    b = best[c][n]
                    # best wall and best CPU time of the rounds; the JIT's counts from the last round
                    best[c][n] = r if b is None else (min(b[0], r[0]), min(b[1], r[1]), r[2], r[3], r[4] or b[4])
                print(f"round {rnd + 1}/{a.rounds}: {c} done", file=sys.stderr)
        print(f"{'program':10} " + " ".join(f"{c + ' wall/cpu s':>22}" for c in configs) + "   translated/loaded (first, second)")
        totals = {c: [0.0, 0.0] for c in configs}
        for n in names:
            cells = []
            for c in configs:
                w, u = best[c][n][0], best[c][n][1]
                totals[c][0] += w
                totals[c][1] += u
                cells.append(f"{w:10.2f} / {u:9.2f}")
            f, s = best["jit-first"][n], best["jit-second"][n]
            print(f"{n:10} " + " ".join(f"{x:>22}" for x in cells) + f"   {f[2]}/{f[3]}, {s[2]}/{s[3]}")
        print(f"{'total':10} " + " ".join(f"{totals[c][0]:10.2f} / {totals[c][1]:9.2f}".rjust(22) for c in configs))
        report = {
            "rounds": a.rounds,
            "programs": {n: {c: {"wall_s": best[c][n][0], "cpu_s": best[c][n][1], "translated": best[c][n][2], "loaded": best[c][n][3]} for c in configs} for n in names},
            "total": {c: {"wall_s": totals[c][0], "cpu_s": totals[c][1]} for c in configs},
        }
        if "launch" in bins:
            # the dispatch overhead alone, with many iterations (best of the rounds)
            overhead = {}
            for engine in ["jit", "interp"]:
                rt = asy = float("inf")
                for _ in range(a.rounds):
                    PROGRAMS["launch"] = ([], [str(a.launch_trips), str(10 * a.launch_trips)], None)
                    _, _, _, _, (x, y) = run_one(wavejit, "launch", bins["launch"], engine, os.path.join(work, "cache-launch"))
                    rt, asy = min(rt, x), min(asy, y)
                overhead[engine] = {"round_trip_us": rt, "async_launch_us": asy}
                print(f"dispatch overhead ({engine}): launch + synchronize {rt:.2f} us, back-to-back launches {asy:.2f} us each")
            report["dispatch_overhead"] = overhead
        if a.json:
            with open(a.json, "w") as f:
                json.dump(report, f, indent=2)
                f.write("\n")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

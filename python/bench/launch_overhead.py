"""The launch overhead of an empty kernel: from Python (a `wavejit.Device` made once, its kernel launched again and
again) against `wavejit run` (one process per launch, as a shell script or a test harness pays it).

    python launch_overhead.py WAVEJIT_BINARY [--launches N] [--runs N] [--device mi300x]

The empty kernel (`__kernel void empty(void) {}`: one wave, `s_endpgm`) is compiled with clang-19. Printed: the
median time of one launch from Python on each engine, with and without the hardware counters, and in the timing
model; the median wall time of one `wavejit run` of the same kernel, and the time `wavejit run` itself reports for
its dispatch; and the ratio of `wavejit run`'s wall time to Python's launch.
"""

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time

import wavejit


def empty_kernel(directory: str, gfx: str) -> str:
    src = os.path.join(directory, "empty.cl")
    with open(src, "w") as f:
        f.write("__kernel void empty(void) {}\n")
    out = os.path.join(directory, f"empty-{gfx}.co")
    subprocess.run(
        ["clang-19", "-x", "cl", "-cl-std=CL2.0", "-target", "amdgcn-amd-amdhsa", f"-mcpu={gfx}", "-nogpulib", "-O3",
         src, "-o", out],
        check=True,
    )
    return out


def python_launch_us(path: str, device: str, launches: int, **options) -> float:
    dev = wavejit.Device(device, **options)
    kernel = dev.load(path)["empty"]
    for _ in range(20):  # translated, caches warm
        kernel(grid=64, block=64)
    times = []
    for _ in range(launches):
        t0 = time.perf_counter()
        kernel(grid=64, block=64)
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e6


def cli_run_us(exe: str, path: str, device: str, runs: int):
    wall, reported = [], []
    stats = path + ".json"
    cmd = [exe, "run", path, "--kernel", "empty", "--device", device, "--grid", "64", "--block", "64",
           "--stats-json", stats]
    subprocess.run(cmd, check=True, capture_output=True)
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True)
        wall.append(time.perf_counter() - t0)
        with open(stats) as f:
            reported.append(json.load(f)["seconds"])
    return statistics.median(wall) * 1e6, statistics.median(reported) * 1e6


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("wavejit", help="the wavejit binary (target/release/wavejit)")
    p.add_argument("--launches", type=int, default=2000, help="launches from Python per configuration")
    p.add_argument("--runs", type=int, default=100, help="wavejit run processes")
    p.add_argument("--device", default="mi300x")
    a = p.parse_args()
    gfx = next(d.gfx for d in wavejit.devices() if d.id == a.device)
    with tempfile.TemporaryDirectory() as tmp:
        path = empty_kernel(tmp, gfx)
        rows = []
        for label, options in [
            ("jit", dict(engine="jit", counters=False)),
            ("jit, counters", dict(engine="jit")),
            ("interp", dict(engine="interp", counters=False)),
            ("jit, timing", dict(engine="jit", timing=True, counters=False)),
        ]:
            rows.append((label, python_launch_us(path, a.device, a.launches, **options)))
        wall, reported = cli_run_us(a.wavejit, path, a.device, a.runs)
    print(f"empty kernel (one wave) on an emulated {a.device}, median of {a.launches} launches / {a.runs} runs:")
    for label, us in rows:
        print(f"  Python launch ({label:14}) {us:10.1f} us")
    print(f"  wavejit run (process, wall)   {wall:10.1f} us")
    print(f"  wavejit run (its dispatch)    {reported:10.1f} us")
    print(f"  wavejit run / Python launch (jit): {wall / rows[0][1]:.0f}x")


if __name__ == "__main__":
    main()

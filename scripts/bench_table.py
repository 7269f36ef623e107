#!/usr/bin/env python3
"""The README's performance table, from one `wavejit bench --json` run.

    scripts/bench_table.py [--json FILE] [--update README.md] [-- BENCH ARGS...]

Without --json it runs `target/release/wavejit bench --json - BENCH ARGS` (default: --sgemm-n 1024
--iterations 1000) and builds the table from what that run measured; with --json it reads a file an earlier run
wrote. It prints the table (with the run's settings and the machine's load average in a line above it), and with
--update replaces the text between the markers `<!-- bench-table -->` and `<!-- /bench-table -->` in that file.
"""
import argparse
import json
import os
import subprocess
import sys

BEGIN, END = "<!-- bench-table -->", "<!-- /bench-table -->"
ROWS = [
    ("alu_loop", "ALU loop (FMAs)", "lanes"),
    ("alu_mixed", "ALU loop with a 32-bit integer multiply-add beside the FMAs", "lanes"),
    ("sgemm", "sgemm {n}³ (tiled, LDS)", "flops"),
    ("mfma_gemm", "mfma f16 gemm {n}³ (`v_mfma_f32_32x32x8f16`)", "flops"),
]


def rate(row, engine, kind):
    if kind == "lanes":
        v = row[f"{engine}_mlane_ops_per_s"]
        return f"{v / 1000:.1f} G lane-ops/s" if v >= 1000 else f"{v:.0f} M lane-ops/s"
    return f"{row[f'{engine}_s']:.3g} s, {row[f'{engine}_gflops']:.2f} GFLOP/s"


def table(figures):
    n = figures.get("sgemm_n", "")
    lines = [
        f"One `wavejit bench` run: device {figures['device']}, {figures['host_threads']} host threads, "
        f"{figures['iterations']} loop iterations, matrices {n}³; load average "
        f"{figures.get('load_average', 'not recorded')}.",
        "",
        "| kernel | interpreter | JIT | JIT / interpreter | JIT, 1 → "
        f"{figures['host_threads']} host threads |",
        "|---|---|---|---|---|",
    ]
    for key, name, kind in ROWS:
        row = figures.get(key)
        if row is None:
            sys.exit(f"bench_table.py: the bench figures have no `{key}`")
        scaling = row.get("scaling", {}).get("speedup")
        lines.append(
            f"| {name.format(n=n)} | {rate(row, 'interpreter', kind)} | {rate(row, 'jit', kind)} | "
            f"{row['jit_vs_interpreter']:.1f}x | {f'{scaling:.2f}x' if scaling else 'not measured'} |"
        )
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", help="figures an earlier `wavejit bench --json FILE` wrote")
    ap.add_argument("--update", help="a file whose bench-table markers get the table")
    ap.add_argument("bench_args", nargs="*", help="arguments for wavejit bench (after --)")
    a = ap.parse_args()
    if a.json:
        with open(a.json) as f:
            figures = json.load(f)
    else:
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        wavejit = os.path.join(root, "target", "release", "wavejit")
        if not os.path.exists(wavejit):
            sys.exit(f"bench_table.py: {wavejit} is missing: cargo build --release -p wavejit-tools")
        args = a.bench_args or ["--sgemm-n", "1024", "--iterations", "1000"]
        load = os.getloadavg()
        run = subprocess.run([wavejit, "bench", "--json", "-", *args], stdout=subprocess.PIPE, check=False)
        if run.returncode != 0:
            sys.exit(f"bench_table.py: wavejit bench exited {run.returncode}")
        figures = json.loads(run.stdout)
        after = os.getloadavg()
        figures["load_average"] = f"{min(load[0], after[0]):.1f}–{max(load[0], after[0]):.1f}"
    if "sgemm_n" not in figures and "sgemm" in figures:
        figures["sgemm_n"] = figures["sgemm"].get("n", "")
    text = table(figures)
    print(text)
    if a.update:
        with open(a.update) as f:
            doc = f.read()
        if BEGIN not in doc or END not in doc:
            sys.exit(f"bench_table.py: {a.update} has no {BEGIN} … {END} markers")
        head, rest = doc.split(BEGIN, 1)
        _, tail = rest.split(END, 1)
        with open(a.update, "w") as f:
            f.write(f"{head}{BEGIN}\n{text}\n{END}{tail}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Results files of the suite scripts (scripts/suites/*.sh): merges a run's shards, and makes the tables of
docs/compatibility.md from results files, each column naming the wavejit commit that produced it.

  tables.py merge OUT SHARD.json...   merge the results of one run's shards (--shard 1/N ... N/N) into OUT
  tables.py table RESULTS.json...     print the table of one suite: a row per test program, a column per file
                                      (one run each, a route each, say), then a row of totals; a file's
                                      "route", if it has one, heads its column instead of its driver's
                                      route, and its "env" ({NAME: VALUE}) is named in the note on it
  tables.py update [--check] DOC...   rewrite the tables between the markers
                                        <!-- tables.py: RESULTS.json... -->
                                        <!-- end of tables.py -->
                                      in each DOC from the files the marker names (paths relative to DOC's
                                      directory); with --check, change nothing and exit 1 if a table differs

Standard library only. Exit status 2 on bad input (a file that is not a results file, shards that do not make
up one whole run), with a message saying which.
"""

import json
import os
import re
import sys

COUNTS = ("passed", "failed", "skipped", "timed_out")
# What must agree between the shards of one run.
SAME_RUN = ("suite", "tag", "wavejit_commit", "driver", "device", "filter", "exclude", "timeout", "batch")
ROUTES = {"hsa": "drop-in (`--driver hsa`)", "kfd": "ROCr (`--driver kfd`)"}
BEGIN = re.compile(r"^<!-- tables\.py: (.+?) -->$")
END = "<!-- end of tables.py -->"


class Bad(Exception):
    pass


def load(path):
    try:
        with open(path) as f:
            d = json.load(f)
    except (OSError, ValueError) as e:
        raise Bad(f"{path}: not a results file ({e})")
    missing = [k for k in ("suite", "tag", "wavejit_commit", "driver", "programs", "totals") if k not in d]
    if missing:
        raise Bad(f"{path}: not a results file (no {', '.join(missing)})")
    for name, p in d["programs"].items():
        if any(not isinstance(p.get(k), int) for k in COUNTS):
            raise Bad(f"{path}: program {name} lacks its counts")
    return d


def merged_order(lists):
    """The programs of all the shards in run order: each shard lists its programs in the order of the whole run."""
    order = []
    for names in lists:
        at = 0
        for name in names:
            if name in order:
                at = order.index(name) + 1
            else:
                order.insert(at, name)
                at += 1
    return order


def merge(paths):
    shards = [(p, load(p)) for p in paths]
    if not shards:
        raise Bad("merge needs the results files of a run's shards")
    first_path, first = shards[0]
    seen = {}
    total = None
    for path, d in shards:
        for k in SAME_RUN:
            if d.get(k) != first.get(k):
                raise Bad(f"{path}: {k} is {d.get(k)!r}, {first_path} has {first.get(k)!r}: not one run")
        m = re.fullmatch(r"(\d+)/(\d+)", str(d.get("shard", "")))
        if not m:
            raise Bad(f"{path}: shard {d.get('shard')!r} is not K/N")
        k, n = int(m.group(1)), int(m.group(2))
        if total is not None and n != total:
            raise Bad(f"{path}: shard {k}/{n}, others are of {total}")
        total = n
        if k in seen:
            raise Bad(f"{path}: shard {k}/{n} again (also {seen[k]})")
        seen[k] = path
    missing = [f"{k}/{total}" for k in range(1, total + 1) if k not in seen]
    if missing:
        raise Bad(f"shards {', '.join(missing)} are missing")
    shards.sort(key=lambda s: int(s[1]["shard"].split("/")[0]))
    programs = {}
    for name in merged_order([list(d["programs"]) for _, d in shards]):
        p = dict(passed=0, failed=0, skipped=0, timed_out=0, wall_seconds=0.0, failures=[])
        listed = set()
        for _, d in shards:
            q = d["programs"].get(name)
            if q is None:
                continue
            for k in COUNTS:
                p[k] += q[k]
            p["wall_seconds"] = round(p["wall_seconds"] + q.get("wall_seconds", 0.0), 1)
            p["failures"] += q.get("failures", [])
            if "listed" in q:
                listed.add(q["listed"])
        if len(listed) > 1:
            raise Bad(f"program {name}: the shards list {sorted(listed)} test cases: not one build")
        programs[name] = ({"listed": listed.pop()} if listed else {}) | p
    out = {k: v for k, v in first.items() if k not in ("programs", "totals")}
    out["shard"] = "1/1"
    out["merged_shards"] = [dict(shard=d["shard"], elapsed_seconds=d.get("elapsed_seconds"), jobs=d.get("jobs"))
                            for _, d in shards]
    out["elapsed_seconds"] = max((d.get("elapsed_seconds") or 0) for _, d in shards)
    out["not_built"] = sorted({n for _, d in shards for n in d.get("not_built", [])})
    out["programs"] = programs
    keys = (("listed",) if all("listed" in p for p in programs.values()) else ()) + COUNTS + ("wall_seconds",)
    out["totals"] = {k: round(sum(p[k] for p in programs.values()), 1) for k in keys}
    return out


def seconds(s):
    return f"{round(s):,} s"


def table(paths, names=None):
    """The markdown table of one suite's results files; names are how the text calls the files."""
    runs = [load(p) for p in paths]
    names = names or paths
    suites = {(d["suite"], d["tag"]) for d in runs}
    if len(suites) != 1:
        raise Bad(f"one suite a table: {', '.join(f'{s} {t}' for s, t in sorted(suites))}")
    order = merged_order([list(d["programs"]) for d in runs])
    head = ["program", "test cases"]
    for d in runs:
        route = d.get("route") or ROUTES.get(d["driver"], f"`--driver {d['driver']}`")
        head += [f"{route}, wavejit `{d['wavejit_commit'][:7]}`", "wall"]
    rows = [head, ["---"] * len(head)]

    def cases(ps):
        """The test cases of a row: as many as a run ran at most, "of" as many as the program lists if more."""
        ran = max(sum(p[k] for k in COUNTS) for p in ps if p)
        listed = max((p["listed"] for p in ps if p and "listed" in p), default=ran)
        return f"{ran:,}" if listed == ran else f"{ran:,} of {listed:,}"

    def cells(p):
        if p is None:
            return ["not run", ""]
        return [" / ".join(str(p[k]) for k in COUNTS), seconds(p.get("wall_seconds", 0))]

    for name in order:
        ps = [d["programs"].get(name) for d in runs]
        rows.append([name, cases(ps)] + [c for p in ps for c in cells(p)])
    totals = []
    for d in runs:
        t = {k: sum(p[k] for p in d["programs"].values()) for k in COUNTS}
        t["wall_seconds"] = sum(p.get("wall_seconds", 0) for p in d["programs"].values())
        if all("listed" in p for p in d["programs"].values()):
            t["listed"] = sum(p["listed"] for p in d["programs"].values())
        totals.append(t)
    rows.append([f"**all {len(order)}**", f"**{cases(totals)}**"] +
                [c for t in totals for c in (f"**{cells(t)[0]}**", cells(t)[1])])
    lines = ["| " + " | ".join(r) + " |" for r in rows]
    notes = []
    for name, d in zip(names, runs):
        what = [f"`{name}`: {d['suite']} `{d['tag']}`, wavejit `{d['wavejit_commit'][:7]}`, `--driver {d['driver']}`"]
        if d.get("device") not in (None, "default"):
            what.append(f"`--device {d['device']}`")
        what += [f"`{k}={v}`" for k, v in d.get("env", {}).items()]
        what.append(f"{d.get('timeout')} s limit")
        if d.get("jobs"):
            what.append(f"{d['jobs']} at a time")
        if d.get("filter"):
            what.append(f"`--filter '{d['filter']}'`")
        if d.get("exclude"):
            what.append(f"`--exclude '{d['exclude']}'`")
        if d.get("merged_shards"):
            what.append(f"{len(d['merged_shards'])} shards merged")
        if d.get("not_built"):
            what.append(f"not built: {', '.join(d['not_built'])}")
        notes.append(", ".join(what))
    return ("Per program: passed / failed / skipped / timed out, and the test processes' summed wall time. "
            "From " + "; ".join(notes) + ".\n\n" + "\n".join(lines) + "\n")


def update(doc, check):
    text = open(doc).read().splitlines(keepends=True)
    out, i, changed = [], 0, False
    while i < len(text):
        line = text[i]
        out.append(line)
        i += 1
        m = BEGIN.match(line.rstrip("\n"))
        if not m:
            continue
        names = m.group(1).split()
        try:
            end = next(j for j in range(i, len(text)) if text[j].rstrip("\n") == END)
        except StopIteration:
            raise Bad(f"{doc}: '{line.strip()}' has no '{END}' after it")
        here = os.path.dirname(os.path.abspath(doc))
        new = table([os.path.join(here, n) for n in names], names)
        if "".join(text[i:end]) != new:
            changed = True
        out.append(new)
        i = end
    if changed and not check:
        open(doc, "w").write("".join(out))
    return changed


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if len(argv) >= 2 else 2
    cmd, args = argv[1], argv[2:]
    try:
        if cmd == "merge" and len(args) >= 2:
            d = merge(args[1:])
            with open(args[0], "w") as f:
                json.dump(d, f, indent=1)
            t = d["totals"]
            print(f"{args[0]}: {len(args) - 1} shards, " + ", ".join(f"{t[k]} {k.replace('_', ' ')}" for k in COUNTS))
        elif cmd == "table" and args:
            sys.stdout.write(table(args))
        elif cmd == "update" and args:
            check = args[0] == "--check"
            docs = args[1:] if check else args
            stale = [doc for doc in docs if update(doc, check)]
            for doc in stale:
                print(f"{doc}: {'tables differ from their results files' if check else 'tables rewritten'}")
            return 1 if check and stale else 0
        else:
            raise Bad(f"unknown command or missing arguments: {' '.join(argv[1:])} (see --help)")
    except Bad as e:
        print(f"tables.py: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

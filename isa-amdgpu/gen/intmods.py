#!/usr/bin/env python3
"""Third stage of the table pipeline: which source operands take integer input modifiers.

LLVM prints a set neg bit as `-x` on float operands and as `sext(x)` on integer ones (v_cvt_pk_u8_f32's src2,
v_ldexp_f16's src1 in DPP). For every VOP3 row and every DPP-capable VOP1/VOP2 row, probe each source with its
neg bit set and add flag `int_srcN` where LLVM answers with sext. Reads and writes the table on stdin/stdout.
"""
import struct
import sys

from gfx9_fields import ENCODINGS
from llvmprobe import LLVM_VERSION, disasm


def pack(ws):
    return b"".join(struct.pack("<I", x) for x in ws)


def main():
    lines = sys.stdin.read().split("\n")
    probes = {t: [] for t in LLVM_VERSION}
    for i, l in enumerate(lines):
        c = l.split("\t")
        if l.startswith("#") or len(c) < 8:
            continue
        enc, op = c[0], int(c[1], 16)
        fields = [o.split(":")[0] for o in c[4].split(",")] if c[4] != "-" else []
        fixed, _m, (olo, _w), _nd, _r, _f = ENCODINGS[enc] if enc in ENCODINGS else (0, 0, (0, 0), 0, 0, 0)
        for t in c[2].split("|"):
            if enc == "VOP3":
                for k, src in enumerate(("src0", "src1", "src2")):
                    if src in fields:
                        w0 = fixed | op << olo | 1  # vdst v1 / sdst
                        w1 = (258 << (9 * k)) | (1 << (29 + k))  # v2 in that source, its neg bit
                        for other, kk in (("src0", 0), ("src1", 1), ("src2", 2)):
                            if other in fields and other != src:
                                w1 |= 258 << (9 * kk)
                        probes[t].append((i, src, pack([w0, w1])))
            elif enc in ("VOP1", "VOP2") and "dpp" in c[7].split(","):
                w0 = fixed | op << olo | 0xFA | 1 << 17 | (4 << 9 if enc == "VOP2" else 0)
                for src, nb in (("src0", 20), ("src1", 22)):
                    if src == "src1" and enc != "VOP2":
                        continue
                    probes[t].append((i, src, pack([w0, 2 | 0xE4 << 8 | 0xFF << 24 | 1 << nb])))
    found = {}
    for t, items in probes.items():
        for (i, src, _p), r in zip(items, disasm(t, [p for _i, _s, p in items])):
            if r and "sext(" in r[0]:
                found.setdefault(i, set()).add("int_" + src)
    for i, flags in found.items():
        c = lines[i].split("\t")
        old = [] if c[7] == "-" else c[7].split(",")
        c[7] = ",".join(old + sorted(flags))
        lines[i] = "\t".join(c)
    sys.stdout.write("\n".join(lines))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Generate differential test vectors for the gfx9 table: random encodings of every opcode, as LLVM sees them.

Each output line: `HEX<TAB>TEXT<TAB>LLVMHEX` where HEX is the instruction bytes (dwords little-endian, as hex of the
byte string), TEXT what the target's llvm-mc --disassemble prints (llvm-mc-19; llvm-mc-22 for gfx950) or
`<invalid>`, LLVMHEX the bytes LLVM's own encoder produces for that instruction (its canonical assembly of
TEXT). Deterministic (seeded).

Run: python3 isa-amdgpu/gen/gen_vectors.py TARGET N > isa-amdgpu/tests/data/vectors-TARGET.txt
"""
import random
import struct
import sys

from gfx9_fields import ENCODINGS
from llvmprobe import disasm

SRC_FIELDS = ("src0", "src1", "src2", "ssrc0", "ssrc1")


def rand_src(rng, nine_bit):
    r = rng.random()
    if nine_bit and r < 0.35:
        return 256 + rng.choice([0, 1, 2, 3, 4, 6, 8, 9, 16, 31, 100, 128, 200, 254, 255, rng.randrange(256)])
    if r < 0.55:
        return rng.choice([0, 1, 2, 3, 4, 5, 8, 10, 12, 16, 33, 100, 101, rng.randrange(102)])
    if r < 0.70:
        return rng.choice(range(102, 128))           # special registers
    if r < 0.85:
        return rng.choice([128, 129, 140, 192, 193, 200, 208] + list(range(240, 249)))
    if r < 0.97:
        return 255                                    # literal
    return rng.randrange(1 << (9 if nine_bit else 8))


def rows_for(target):
    rows = []
    for line in open(__file__.replace("gen/gen_vectors.py", "data/gfx9.tsv")):
        if line.startswith("#"):
            continue
        c = line.rstrip("\n").split("\t")
        if target in c[2].split("|"):
            rows.append((c[0], int(c[1], 16), c[4], c[7]))
    return rows


def main(target, n):
    rng = random.Random(0x5EED ^ hash(target) & 0xFFFF)
    rng = random.Random(target + "-vectors")
    probes = []
    for enc, op, sig, flags in rows_for(target):
        fixed, _mask, (olo, ow), nd, _r, fields = ENCODINGS[enc]
        opmask = ((1 << ow) - 1) << olo
        for i in range(n):
            w = [fixed | op << olo] + [0] * (nd - 1)
            # every bit outside the fixed prefix and the opcode: random, but biased towards sane operands
            for dw in range(nd):
                free = 0xFFFFFFFF & ~(_mask | opmask) if dw == 0 else 0xFFFFFFFF
                if i < n // 4:
                    bits = 0            # zero modifiers / reserved bits: the plain form
                else:
                    bits = rng.getrandbits(32) & rng.getrandbits(32) & rng.getrandbits(32)  # sparse
                w[dw] |= bits & free
            for (name, dw, lo, width, val) in fields:
                m = ((1 << width) - 1) << lo
                if name in SRC_FIELDS:
                    v = rand_src(rng, width == 9)
                elif name in ("vdst", "vdata", "addr", "data", "data0", "data1", "vaddr", "vsrc1"):
                    v = rng.choice([0, 1, 2, 4, 6, 8, 10, 12, 16, 32, 64, 128, 200, 250, 254, 255, rng.randrange(256)])
                elif name in ("sdst", "sdata"):
                    v = rng.choice([0, 2, 4, 6, 8, 12, 16, 20, 100, 102, 104, 106, 124, 126, rng.randrange(128)])
                elif name in ("sbase", "srsrc", "ssamp"):
                    v = rng.randrange(1 << width) if rng.random() < 0.2 else rng.choice([0, 1, 2, 3, 4, 8, 16])
                elif name == "soffset" and enc in ("MUBUF", "MTBUF"):
                    v = rand_src(rng, False)
                elif name == "saddr_off":
                    v = rng.choice([0x7F, 0x7F, 0, 2, 4, 10, 20, 100, 102, 106, 124, 126, rng.randrange(128)])
                elif name in ("offset", "offset0", "offset1", "simm16"):
                    v = rng.choice([0, 1, 4, 8, 16, 0x7f, 0x80, 0xff, 0x7ff, 0x800, 0xfff, rng.getrandbits(width)])
                else:
                    continue    # keep the random bits
                w[dw] = (w[dw] & ~m) | ((v << lo) & m)
            if enc in ("VOP1", "VOP2", "VOPC") and i % 4 == 3:
                # SDWA / DPP forms
                w[0] = (w[0] & ~0x1FF) | rng.choice([0xF9, 0xFA])
                w.append(rng.getrandbits(32) & (rng.getrandbits(32) | 0xFF0000FF))
            else:
                wants_literal = (enc in ("VOP1", "VOP2", "VOPC") and (w[0] & 0x1FF) == 255) or (
                    enc in ("SOP1", "SOP2", "SOPC") and ((w[0] & 0xFF) == 255 or
                                                        (enc != "SOP1" and (w[0] >> 8) & 0xFF == 255)))
                if wants_literal or (enc == "SOPK" and op == 0x14):   # s_setreg_imm32_b32 carries one too
                    w.append(rng.choice([0, 1, 0x3F800000, 0x40490FDB, 0xFFFFFFFF, 0x3FF00000, 0x12345678, 0x4248, rng.getrandbits(32)]))
            probes.append(b"".join(struct.pack("<I", x) for x in w))
    res = disasm(target, probes)
    for p, r in zip(probes, res):
        if r is None or r[1] == -1:
            print("%s\t<invalid>\t-" % p.hex())
        else:
            hexenc = "".join(x.strip()[2:] for x in r[2].split(","))
            print("%s\t%s\t%s" % (p.hex(), r[0], hexenc))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))

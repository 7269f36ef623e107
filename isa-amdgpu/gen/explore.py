import sys, struct
from llvmprobe import disasm
def d(*ws): return b"".join(struct.pack("<I", w) for w in ws)
enc = {
 "SOP2": (range(0x60), lambda op: [d(0x80000000|op<<23|4<<16|6<<8|2), d(0x80000000|op<<23|4<<16|6<<8|2, 0)]),
 "SOPK": (range(0x1D), lambda op: [d(0xB0000000|op<<23|4<<16|0x1234), d(0xB0000000|op<<23|4<<16|0x1234, 0)]),
 "SOP1": (range(256), lambda op: [d(0xBE800000|4<<16|op<<8|2), d(0xBE800000|op<<8)]),
 "SOPC": (range(128), lambda op: [d(0xBF000000|op<<16|6<<8|2), d(0xBF000000|op<<16|6<<8|2,0)]),
 "SOPP": (range(128), lambda op: [d(0xBF800000|op<<16|0), d(0xBF800000|op<<16|1)]),
 "SMEM": (range(256), lambda op: [d(0xC0000000|op<<18|1<<17|4<<6|2, 0x10), d(0xC0000000|op<<18|1<<17|0<<6|2, 0x10), d(0xC0000000|op<<18|1<<17|4<<6|2|1<<16, 0x10), d(0xC0000000|op<<18|1<<14|4<<6|2|1<<16, 0x10<<0|(3<<25))]),
 "VOP2": (range(0x3E), lambda op: [d(op<<25|8<<17|4<<9|258)]),
 "VOP1": (range(256), lambda op: [d(0x7E000000|8<<17|op<<9|258), d(0x7E000000|8<<17|op<<9|2)]),
 "VOPC": (range(256), lambda op: [d(0x7C000000|op<<17|4<<9|258)]),
 "VOP3": (range(0x380), lambda op: [d(0xD0000000|op<<16|8, 258|260<<9|262<<18), d(0xD0000000|op<<16|8|10<<8, 258|260<<9|262<<18), d(0xD0000000|op<<16|8, 2|4<<9|6<<18), d(0xD0000000|op<<16|8, 258|4<<9|262<<18)]),
 "VOP3P": (range(128), lambda op: [d(0xD3800000|op<<16|8|1<<14, 258|260<<9|262<<18|3<<27), d(0xD3800000|op<<16|0, 258|260<<9|262<<18), d(0xD3800000|op<<16|8|1<<15, 258|260<<9|262<<18)]),
 "DS": (range(256), lambda op: [d(0xD8000000|op<<17|0x10, 2|4<<8|6<<16|8<<24), d(0xD8000000|op<<17|1<<16, 2|4<<8|6<<16|8<<24)]),
 "FLAT": (range(128), lambda op: [d(0xDC000000|op<<18, 2|4<<8|0x7f<<16|8<<24)]),
 "GLOBAL": (range(128), lambda op: [d(0xDC000000|2<<14|op<<18, 2|4<<8|0x7f<<16|8<<24)]),
 "SCRATCH": (range(128), lambda op: [d(0xDC000000|1<<14|op<<18, 2|4<<8|0x7f<<16|8<<24), d(0xDC000000|1<<14|op<<18, 2|4<<8|0x4<<16|8<<24)]),
 "MUBUF": (range(128), lambda op: [d(0xE0000000|op<<18|1<<12, 2|4<<8|2<<16|0x80<<24), d(0xE0000000|op<<18, 2|4<<8|2<<16|0x80<<24)]),
 "MTBUF": (range(16), lambda op: [d(0xE8000000|op<<15|1<<12|1<<19, 2|4<<8|2<<16|0x80<<24)]),
 "MIMG": (range(128), lambda op: [d(0xF0000000|op<<18|0xf<<8, 2|4<<8|2<<16|4<<21)]),
 "EXP": (range(1), lambda op: [d(0xC4000000|0xf, 0x04030201)]),
 "VINTRP": (range(4), lambda op: [d(0xD4000000|op<<16|8<<18|2)]),
}
tgt = sys.argv[1]
sel = sys.argv[2:] or list(enc)
for name in sel:
    rng, f = enc[name]
    probes = []; owner = []
    for op in rng:
        for p in f(op): probes.append(p); owner.append(op)
    res = disasm(tgt, probes)
    found = {}
    for op, p, r in zip(owner, probes, res):
        if r and op not in found: found[op] = r[0]
    for op in rng:
        print(name, hex(op), found.get(op, "-"))

"""Probe every (encoding, opcode) with each subset of its fields set, on a target; print JSON lines."""
import itertools, json, struct, sys
from gfx9_fields import ENCODINGS
from llvmprobe import disasm

def words(enc, op, fields_on):
    fixed, _mask, (olo, _ow), nd, _r, fields = ENCODINGS[enc]
    w = [fixed, 0][:nd]
    w[0] |= op << olo
    for (name, dw, lo, width, val) in fields:
        if name in fields_on:
            w[dw] |= (val & ((1 << width) - 1)) << lo
    return b"".join(struct.pack("<I", x) for x in w)

def main(target, encs):
    for enc in encs:
        fields = [f[0] for f in ENCODINGS[enc][5]]
        subsets = [s for n in range(len(fields) + 1) for s in itertools.combinations(fields, n)]
        probes, keys = [], []
        for op in ENCODINGS[enc][4]:
            for s in subsets:
                probes.append(words(enc, op, s)); keys.append((op, s))
        res = disasm(target, probes)
        byop = {}
        for (op, s), r in zip(keys, res):
            if r:
                byop.setdefault(op, []).append([list(s), r[0], r[1]])
        for op, v in sorted(byop.items()):
            print(json.dumps({"enc": enc, "op": op, "forms": v}))

if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:] or list(ENCODINGS))

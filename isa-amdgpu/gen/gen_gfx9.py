#!/usr/bin/env python3
"""Generate isa-amdgpu/data/gfx9.tsv, the gfx9-family instruction table, by probing LLVM's disassembler.

For every encoding and every opcode number we ask llvm-mc (LLVM 19 for gfx90a and gfx942, LLVM 22 for gfx950,
see llvmprobe.LLVM_VERSION) what the instruction is, with
each subset of its fields set to distinctive values; the printed text tells us the mnemonic, which fields are
operands, their widths and register files, and (with inline-constant and literal probes) the type of each source
operand. LLVM is the oracle for these facts; the table format and everything built on it are ours.

Run: python3 isa-amdgpu/gen/gen_gfx9.py > isa-amdgpu/data/gfx9.tsv   (needs llvm-19 and llvm-22; a few minutes).
Rows equal on several targets merge into one row listing them all, so a target's rows do not depend on which
other targets are generated with it.
"""
import itertools
import re
import struct
import sys

from gfx9_fields import ENCODINGS
from llvmprobe import disasm

TARGETS = ["gfx90a", "gfx942", "gfx950"]


# Bits of dword 0 outside the probed fields that an opcode needs set for LLVM to decode it at all, found by
# main(): a MUBUF opcode that exists only with its lds bit (16), as buffer_store_lds_dword, the store from LDS
# to a buffer (LLVM prints nothing for it without that bit). (enc, op) -> bits.
REQUIRED_BITS = {}
RETRY_BITS = {"MUBUF": 1 << 16}


def field_words(enc, op, values):
    fixed, _mask, (olo, _ow), nd, _r, fields = ENCODINGS[enc]
    w = [fixed, 0][:nd]
    w[0] |= op << olo | REQUIRED_BITS.get((enc, op), 0)
    for (name, dw, lo, width, _val) in fields:
        if name in values:
            w[dw] |= (values[name] & ((1 << width) - 1)) << lo
    return w


def pack(ws):
    return b"".join(struct.pack("<I", x) for x in ws)


def split_operands(text):
    """'name a, b, c mod:1 mod2' -> (name, [a, b, c], 'mod:1 mod2')"""
    if " " not in text:
        return text, [], ""
    name, rest = text.split(" ", 1)
    parts, depth, cur = [], 0, ""
    for ch in rest:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    parts.append(cur.strip())
    # the last part carries the modifiers after its first top-level space
    last, depth, cut = parts[-1], 0, None
    for i, ch in enumerate(last):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch == " " and depth == 0:
            cut = i
            break
    mods = ""
    if cut is not None:
        parts[-1], mods = last[:cut], last[cut + 1:]
    if parts == [""]:
        parts = []
    if len(parts) == 1 and ":" in parts[0] and not REG.match(parts[0].split(" ")[0]):
        return name, [], rest     # no operands, only modifiers (e.g. "ds_gws_sema_v offset:16 gds")
    return name, parts, mods


REG = re.compile(r"^(v|s|a)(?:(\d+)|\[(\d+):(\d+)\])$")
BAD = ("/*", "|", "op_sel:", "abid", "cbsz", "blgp", "neg_", "clamp", "mul:", "div:")


def clean(text):
    return not any(b in text for b in BAD)


REG_FIELDS = {"sdst", "ssrc0", "ssrc1", "sdata", "sbase", "soffset", "vdst", "src0", "src1", "src2", "vsrc1",
              "addr", "data", "data0", "data1", "vaddr", "vdata", "srsrc", "ssamp"}
SRC_FIELDS = ("src0", "src1", "src2", "ssrc0", "ssrc1")


def probe_all(target, items, literal=0x12345678):
    """items: list of (key, words). Returns {key: text or None}.

    A probe that LLVM decodes as wanting one more dword (an instruction that always carries a literal, such as
    v_madak_f32 or s_setreg_imm32_b32) is asked again with a literal appended."""
    res = disasm(target, [pack(w) for _k, w in items])
    out = {k: (r[0] if r and r[1] != -1 else None) for (k, _w), r in zip(items, res)}
    again = [(k, w + [literal]) for (k, w), r in zip(items, res) if r and r[1] == -1 and len(w) == 1]
    if again:
        res2 = disasm(target, [pack(w) for _k, w in again])
        for (k, _w), r in zip(again, res2):
            if r and r[1] != -1:
                out[k] = r[0]
                LITERAL_FORMS.add(k[:2] if len(k) == 3 else None)
    return out


LITERAL_FORMS = set()
ENC_NAMES = {}   # (target, enc, op) -> mnemonic, for src_type


def main():
    enum = {}   # (enc, op) -> {target: [(fields_on, text)]}
    for t in TARGETS:
        items = []
        for enc, spec in ENCODINGS.items():
            names = [f[0] for f in spec[5]]
            subsets = [s for n in range(len(names) + 1) for s in itertools.combinations(names, n)]
            for op in spec[4]:
                for s in subsets:
                    vals = {f[0]: f[4] for f in spec[5] if f[0] in s}
                    items.append(((enc, op, s), field_words(enc, op, vals)))
        for (enc, op, s), text in probe_all(t, items).items():
            if text:
                enum.setdefault((enc, op), {}).setdefault(t, []).append((s, text))
        # opcodes LLVM decoded in no form: again with RETRY_BITS set
        retry = [((enc, op, s), [w[0] | RETRY_BITS[enc]] + w[1:])
                 for (enc, op, s), w in items if enc in RETRY_BITS and t not in enum.get((enc, op), {})]
        for (enc, op, s), text in probe_all(t, retry).items():
            if text:
                enum.setdefault((enc, op), {}).setdefault(t, []).append((s, text))
                REQUIRED_BITS[(enc, op)] = RETRY_BITS[enc]
    rows = []
    for (enc, op), per_t in sorted(enum.items()):
        for t, forms in per_t.items():
            good = [f for f in forms if clean(f[1])] or forms
            best = max(good, key=lambda f: (len(f[0]), -len(f[1])))
            zero = [f[1] for f in forms if not f[0]]
            rows.append((enc, op, t, best, zero[0] if zero else None))
            ENC_NAMES[(t, enc, op)] = best[1].split(" ")[0]
    probes = {}
    for t in TARGETS:
        items = []
        for (enc, op, tt, (fs, text), _z) in rows:
            if tt != t:
                continue
            spec = ENCODINGS[enc]
            vals = {f[0]: f[4] for f in spec[5] if f[0] in fs}
            for src in SRC_FIELDS:
                for kind, v, lit in (("inl", 248, None), ("lit1", 255, 0x12345678), ("lit2", 255, 0x3FF00000),
                                     ("lit3", 255, 0x3F800000)):
                    if lit is not None and spec[3] == 2:
                        continue   # no literals in 64-bit encodings on gfx9
                    vv = dict(vals)
                    vv[src] = v
                    ws = field_words(enc, op, vv)
                    if lit is not None:
                        ws = ws + [lit]
                    items.append(((t, enc, op, src, kind), ws))
            # SDWA and DPP forms of VOP1/VOP2/VOPC
            if enc in ("VOP1", "VOP2", "VOPC"):
                vv = dict(vals)
                vv["src0"] = 0xF9
                items.append(((t, enc, op, "sdwa"), field_words(enc, op, vv) + [sdwa_dword(enc)]))
                vv["src0"] = 0xFA
                items.append(((t, enc, op, "dpp"), field_words(enc, op, vv) + [2 | 0xE4 << 8 | 0xFF << 24]))
                for form, x, ext in (("sdwa", 0xF9, sdwa_dword(enc)),
                                     ("dpp", 0xFA, 2 | 0xE4 << 8 | 0xFF << 24)):
                    vv["src0"] = x
                    items.append(((t, enc, op, form + "base"), field_words(enc, op, vv) + [ext]))
                    for b in range(8, 32):
                        items.append(((t, enc, op, form + "flip", b), field_words(enc, op, vv) + [ext ^ (1 << b)]))
            # single-bit flips outside the opcode and outside this form's operand fields
            nd = spec[3]
            for form_name, fvals in (("best", vals), ("zero", {})):
                base = field_words(enc, op, fvals)
                items.append(((t, enc, op, "base", form_name), base))
                add_flips(items, t, enc, op, spec, fs if form_name == "best" else (), base, form_name)
        probes.update(probe_all(t, items))
    emit(rows, probes)


# Selector fields of the SDWA and DPP dwords: a single flip that LLVM rejects there only says one value is
# invalid (sel 7), not that the field is fixed; such a field counts as fixed only if every bit of it is.
EXT_FIELDS = {"sdwa": [(8, 3), (11, 2), (14, 2), (16, 3), (24, 3)], "dpp": [(8, 9), (24, 4), (28, 4)]}


def whole_fields(mask, form):
    for lo, width in EXT_FIELDS[form]:
        fmask = ((1 << width) - 1) << lo
        if mask & fmask != fmask:
            mask &= ~fmask
    return mask


def sdwa_dword(enc):
    """A plain SDWA dword: src0 = v2, every used selector DWORD (VOP1 has no src1_sel, VOPC no dst_sel)."""
    w = 2 | 6 << 16
    if enc != "VOPC":
        w |= 6 << 8
    if enc != "VOP1":
        w |= 6 << 24
    return w


def add_flips(items, t, enc, op, spec, fs, base, form_name):
    if True:
        if True:
            nd = spec[3]
            busy = [0] * nd
            fixed_mask = spec[1]
            olo, ow = spec[2]
            busy[0] |= fixed_mask | (((1 << ow) - 1) << olo)
            for (name, dw, lo, width, _v) in spec[5]:
                if name in fs and name in REG_FIELDS:
                    busy[dw] |= ((1 << width) - 1) << lo
            for dw in range(nd):
                for bit in range(32):
                    if busy[dw] >> bit & 1:
                        continue
                    ws = list(base)
                    ws[dw] ^= 1 << bit
                    items.append(((t, enc, op, "flip", form_name, dw, bit), ws))


def emit(rows, probes):
    print("# wavejit gfx9 instruction table (gfx90a, gfx942, gfx950). GENERATED by isa-amdgpu/gen/gen_gfx9.py from probes")
    print("# of llvm-mc's disassembler (llvm-mc-19: gfx90a, gfx942; llvm-mc-22: gfx950); do not edit by hand.")
    print("# Columns: encoding, opcode, targets, printed mnemonic,")
    print("# operands (field:kind), fixed bits (mask:value) of dword 0 and 1, flags, modifiers LLVM prints for it,")
    print("# live bits of dwords 0:1 (flipping them changes the text), live bits of the SDWA:DPP dword,")
    print("# fixed bits (mask:value) of the SDWA dword and of the DPP dword.")
    merged = {}
    for (enc, op, t, (fs, text), zero) in rows:
        name, ops, mods = split_operands(text)
        spec = ENCODINGS[enc]
        vals = {f[0]: f[4] for f in spec[5] if f[0] in fs}
        sig = []
        used = set()
        for o in ops:
            d = describe(enc, op, t, vals, o, probes, name, used)
            sig.append(d)
            used.add(d.split(":")[0])
        # fixed bits: flipping them makes LLVM reject the instruction, in the full form and (where LLVM takes
        # it) in the all-zero form alike; their required value is the full form's.
        fmask, fval = [0, 0], [0, 0]
        best = field_words(enc, op, vals)
        zero_ok = probes.get((t, enc, op, "base", "zero")) is not None
        for dw in range(spec[3]):
            for bit in range(32):
                kb = (t, enc, op, "flip", "best", dw, bit)
                kz = (t, enc, op, "flip", "zero", dw, bit)
                if kb not in probes or probes[kb] is not None:
                    continue
                bv = best[dw] >> bit & 1
                required = dw == 0 and REQUIRED_BITS.get((enc, op), 0) >> bit & 1
                if zero_ok and kz in probes and (probes[kz] is not None or bv != 0) and not required:
                    continue
                fmask[dw] |= 1 << bit
                fval[dw] |= bv << bit
        flags = []
        if enc in ("VOP1", "VOP2", "VOPC"):
            if probes.get((t, enc, op, "sdwa")):
                flags.append("sdwa")
            if probes.get((t, enc, op, "dpp")):
                flags.append("dpp")
        if zero is not None and zero == name and ops:
            flags.append("optional_operands")
        if (enc, op) in LITERAL_FORMS:
            flags.append("literal")
        live = [0, 0]
        for form in ("best", "zero"):
            btext = probes.get((t, enc, op, "base", form))
            for dw in range(spec[3]):
                for bit in range(32):
                    r = probes.get((t, enc, op, "flip", form, dw, bit))
                    if r is not None and btext is not None and r != btext:
                        live[dw] |= 1 << bit
        ext_live, ext_fixed = {}, {}
        for form in ("sdwa", "dpp"):
            b = probes.get((t, enc, op, form + "base"))
            m = fm = 0
            for bit in range(8, 32):
                r = probes.get((t, enc, op, form + "flip", bit))
                if b is not None and r is not None and r != b:
                    m |= 1 << bit
                if b is not None and r is None:
                    fm |= 1 << bit
            base = sdwa_dword(enc) if form == "sdwa" else 2 | 0xE4 << 8 | 0xFF << 24
            fm = whole_fields(fm, form)
            ext_live[form] = m
            ext_fixed[form] = "%08x:%08x" % (fm, base & fm)
        modnames = sorted({m.split(":")[0] for m in mods.split()}) if mods else []
        key = (enc, op, name, ",".join(sig), "%08x:%08x" % (fmask[0], fval[0]), "%08x:%08x" % (fmask[1], fval[1]),
               ",".join(flags), ",".join(modnames), "%08x:%08x" % (live[0], live[1]),
               "%08x:%08x" % (ext_live["sdwa"], ext_live["dpp"]), ext_fixed["sdwa"], ext_fixed["dpp"])
        merged.setdefault(key, []).append(t)
    for (enc, op, name, sig, m0, m1, flags, mods, live, extlive, sfix, dfix), ts in sorted(merged.items(), key=lambda kv: (list(ENCODINGS).index(kv[0][0]), kv[0][1], kv[1])):
        print("\t".join([enc, "0x%03x" % op, "|".join(ts), name, sig or "-", m0, m1, flags or "-", mods or "-", live,
                         extlive, sfix, dfix]))


SPECIAL_SOPP = {"s_waitcnt": "waitcnt", "s_sendmsg": "sendmsg", "s_sendmsghalt": "sendmsg",
                "s_set_gpr_idx_mode": "gpr_idx"}


def describe(enc, op, t, vals, o, probes, name, used):
    m = REG.match(o)
    if m:
        f, a, lo, hi = m.groups()
        lo = int(a if a is not None else lo)
        n = 1 if a is not None else int(hi) - lo + 1
        for fname, fv in vals.items():
            if fname not in REG_FIELDS or fname in used:
                continue
            cand = fv
            if fname in ("src0", "src1", "src2") and f in "va":
                cand = fv - 256
            if fname == "sbase":
                cand = fv * 2
            if fname in ("srsrc", "ssamp"):
                cand = fv * 4
            if cand == lo:
                if fname in SRC_FIELDS:
                    ty = src_type(enc, op, t, fname, probes, n)
                    return "%s:%s%s" % (fname, ty, "" if n == {"b64": 2, "f64": 2}.get(ty, 1) else "x%d" % n)
                return "%s:%s%d" % (fname, f, n)
        if lo == 0 and f == "s":
            # a source field left at zero because the distinctive VGPR value is not allowed there
            for fname in ("src0", "src1", "src2"):
                if fname not in vals and fname not in used:
                    return "%s:s%d" % (fname, n)
        return "?%s" % o
    if o in ("vcc", "exec", "off", "m0", "scc"):
        return "=" + o
    if enc == "SOPP":
        if name.startswith("s_branch") or name.startswith("s_cbranch"):
            return "simm16:label"
        return "simm16:" + SPECIAL_SOPP.get(name, "imm")
    if enc == "SOPK":
        if "hwreg" in o:
            return "simm16:hwreg"
        if name in ("s_cbranch_i_fork", "s_call_b64"):
            return "simm16:label"
        if name == "s_setreg_imm32_b32":
            return "literal:b32"
        return "simm16:hex"
    if enc == "SOPC" and "gpr_idx" in o:
        return "ssrc1:gpr_idx"
    if enc == "SMEM":
        return "sdata:imm"
    if enc == "VOP2" and o.startswith("0x"):
        return "literal:hex"   # v_madmk/v_madak/v_fmamk/v_fmaak print K in hex always
    return "!" + re.sub(r"\d+", "N", o)


def src_type(enc, op, t, fname, probes, n):
    """Source operand type from the inline-constant and literal probes (`r`: registers only)."""
    if (enc, op) in LITERAL_FORMS:
        # the instruction's own literal (v_madmk_f32's K) is in the way of the literal probes
        return "f16" if ENC_NAMES.get((t, enc, op), "").endswith("_f16") else "b32"
    inl = probes.get((t, enc, op, fname, "inl"))
    l1 = probes.get((t, enc, op, fname, "lit1"))
    l2 = probes.get((t, enc, op, fname, "lit2"))
    def val(text):
        if text is None:
            return None
        _n, ops, _m = split_operands(text)
        return " ".join(ops)
    vi, v1, v2 = val(inl), val(l1), val(l2)
    if vi is None or "Invalid immediate" in inl:
        return "r"          # registers only (e.g. MFMA A/B, which take VGPRs or AGPRs)
    if "0.15915494309189532" in vi:
        if v2 is not None and "1.0" in v2:
            return "f64"
        return "b64"
    if "0x3118" in vi:
        return "i16"
    if v1 is not None and "0x5678" in v1 and "0x12345678" not in v1:
        return "f16"
    v3 = val(probes.get((t, enc, op, fname, "lit3")))
    # (LLVM 22 prints a literal an inline constant could encode as lit(0x3f800000) on a 32-bit operand)
    if v3 is not None and "0x3f800000" in v3 and "lit(" not in v3:
        return "v216"     # packed 16-bit pairs: a literal prints in hex even when it is a float constant
    return "b32"


if __name__ == "__main__":
    main()

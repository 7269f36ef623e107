#!/usr/bin/env python3
"""Add wavejit's own columns to the probed table: functional unit, wait counter class, implicit reads and writes.

Input: the table from gen_gfx9.py on stdin. Output: the same rows with nine more columns:
  unit      salu | smem | branch | msg | valu | trans | f64 | mfma | lds | vmem | flat | misc
  wait      - | lgkm | vm | vm+lgkm | exp
  implicit  comma list of READ:REG / WRITE:REG for scc, vcc, exec, m0 ("-" when none)
  flow      - (on to the next instruction) | branch | cbranch | jump | call | end | barrier | trap | halt
  mem       - | DIR:BYTES[:FLAGS]: ld, st or at (atomic); bytes per lane (per wave for SMEM; 0: set by the
            resource, images); flags joined by +: s (sign-extended), lo/hi (d16: into the low/high half of the
            register, or from the high half for stores), 2a (two addresses), st64 (offsets in 64-element
            strides), tid (address from the lane id), rtn (a DS atomic that returns the old value), lds (loads
            into LDS; stores from LDS), fmt (typed, format from the resource), img, buf (SMEM through a buffer resource), scr
            (SMEM scratch), tr (a DS load transposed across lanes, gfx950's ds_read_*_tr_*)
  atomic    - | the read-modify-write operation (add, sub, rsub, and, or, xor, smin, smax, umin, umax, swap,
            cmpswap, inc, dec, add_f32, add_f64, min_f32, max_f32, min_f64, max_f64, pk_add_f16,
            pk_add_bf16, mskor, wrap, condxchg)
  arith     - | KIND.TYPE, the floating-point work as hardware counters class it: add, mul, fma, trans, mfma
  compare   - | PREDICATE:TYPE of v_cmp, v_cmpx, s_cmp, s_cmpk
  mfma      - | MxNxK:BLOCKS:INPUT[:sparse]
  types     - | DST:SRC, the value types the mnemonic's trailing suffixes name (v_cvt_f32_f16: f32:f16; one
            suffix names both: v_add_f32: f32:f32)
These are semantic facts from the AMD ISA manuals, stated as rules over mnemonics here, so a reader of the table
sees them next to the encoding facts.
"""
import re
import sys

SCC_WRITERS_SOP2 = re.compile(r"^s_(add|sub|addc|subb|min|max|and|or|xor|andn2|orn2|nand|nor|xnor|lshl|lshr|ashr|bfe|absdiff|lshl\d_add|cbranch_g_fork)")
SCC_WRITERS_SOP1 = re.compile(r"^s_(not|wqm|bcnt[01]|quadmask|abs|.*saveexec|.*wrexec)")
TRANS = re.compile(r"^v_(rcp|rsq|sqrt|log|exp|sin|cos|rcp_iflag)_")


def base(name):
    return re.sub(r"_(e32|e64)$", "", name)


def annotate(enc, name, ops):
    b = base(name)
    reads, writes = set(), set()
    unit, wait = "misc", "-"
    if enc.startswith("SOP"):
        unit = "salu"
        if enc == "SOP2":
            if SCC_WRITERS_SOP2.match(b):
                writes.add("scc")
            if b.startswith(("s_addc", "s_subb", "s_cselect")):
                reads.add("scc")
        elif enc == "SOP1":
            if SCC_WRITERS_SOP1.match(b):
                writes.add("scc")
            if b.startswith("s_cmov"):
                reads.add("scc")
            if "saveexec" in b or "wrexec" in b:
                reads.add("exec")
                writes.add("exec")
            if b.startswith("s_movrel"):
                reads.add("m0")
            if b in ("s_setpc_b64", "s_swappc_b64", "s_getpc_b64", "s_rfe_b64", "s_cbranch_join"):
                unit = "branch"
        elif enc == "SOPC":
            if b.startswith(("s_cmp", "s_bitcmp")):
                writes.add("scc")
            if b == "s_set_gpr_idx_on":
                writes.add("m0")
        elif enc == "SOPK":
            if b.startswith(("s_cmpk", "s_addk")):
                writes.add("scc")
            if b.startswith("s_cmovk"):
                reads.add("scc")
            if b in ("s_call_b64", "s_cbranch_i_fork"):
                unit = "branch"
        elif enc == "SOPP":
            if b.startswith(("s_branch", "s_cbranch")):
                unit = "branch"
                if "scc" in b:
                    reads.add("scc")
                if "vcc" in b:
                    reads.add("vcc")
                if "exec" in b:
                    reads.add("exec")
            if b.startswith("s_sendmsg"):
                unit, wait = "msg", "lgkm"
                reads.add("m0")
    elif enc == "SMEM":
        unit, wait = "smem", "lgkm"
        if b in ("s_memtime", "s_memrealtime"):
            wait = "lgkm"
    elif enc in ("VOP1", "VOP2", "VOPC", "VOP3", "VOP3P"):
        unit = "valu"
        reads.add("exec")
        if TRANS.match(b):
            unit = "trans"
        elif "_f64" in b and "mfma" not in b:
            unit = "f64"
        if "mfma" in b or "smfmac" in b:
            unit = "mfma"     # v_mfma_ld_scale_b32 (gfx950) too: it hands the next MFMA its scales
        if b.startswith("v_cmpx"):
            writes.add("exec")
        for o in ops.split(","):
            if o == "=vcc":
                pass
        if enc == "VOPC":
            writes.add("vcc")
        if enc == "VOP2":
            if b == "v_cndmask_b32":
                reads.add("vcc")
            if b.startswith(("v_add_co", "v_sub_co", "v_subrev_co")):
                writes.add("vcc")
            if b.startswith(("v_addc_co", "v_subb_co", "v_subbrev_co")):
                reads.add("vcc")
                writes.add("vcc")
        if b.startswith("v_div_fmas"):
            reads.add("vcc")
        if b.startswith(("v_movrel", "v_interp")):
            reads.add("m0")
        if b in ("v_readlane_b32", "v_readfirstlane_b32"):
            reads.discard("exec") if b == "v_readlane_b32" else None
    elif enc == "DS":
        unit, wait = "lds", "lgkm"
        reads.add("exec")
        if "gws" in b or b.startswith(("ds_gws", "ds_ordered")):
            reads.add("m0")
    elif enc == "FLAT":
        unit, wait = "flat", "vm+lgkm"
        reads.add("exec")
    elif enc in ("GLOBAL", "SCRATCH", "MUBUF", "MTBUF", "MIMG"):
        unit, wait = "vmem", "vm"
        reads.add("exec")
        if enc == "MUBUF" and "lds" in name:
            reads.add("m0")
    imp = ["r:" + r for r in sorted(reads)] + ["w:" + w for w in sorted(writes)]
    return [unit, wait, ",".join(imp) or "-"] + operation(enc, name)


# ---- operation columns: control flow, memory access, atomic operation, arithmetic kind, compare, MFMA shape ----

def flow(enc, b):
    """How the instruction moves the PC: - (to the next), branch, cbranch, jump (indirect), call, end, barrier,
    trap, halt."""
    if enc == "SOPP":
        if b == "s_branch":
            return "branch"
        if b.startswith("s_cbranch"):
            return "cbranch"
        if b.startswith("s_endpgm"):
            return "end"
        if b == "s_barrier":
            return "barrier"
        if b == "s_trap":
            return "trap"
        if b in ("s_sethalt", "s_sendmsghalt"):
            return "halt"
    if b in ("s_setpc_b64", "s_rfe_b64", "s_rfe_restore_b64", "s_cbranch_join"):
        return "jump"
    if b in ("s_swappc_b64", "s_call_b64"):
        return "call"
    if b in ("s_cbranch_g_fork", "s_cbranch_i_fork"):
        return "cbranch"
    if b in ("ds_gws_barrier", "ds_gws_sema_p", "ds_gws_sema_br"):
        return "barrier"
    return "-"


ATOMIC_NAMES = {
    "add": "add", "add_u32": "add", "add_u64": "add", "add_rtn_u32": "add", "add_rtn_u64": "add",
    "sub": "sub", "sub_u32": "sub", "sub_u64": "sub",
    "rsub_u32": "rsub", "rsub_u64": "rsub",
    "and": "and", "and_b32": "and", "and_b64": "and",
    "or": "or", "or_b32": "or", "or_b64": "or",
    "xor": "xor", "xor_b32": "xor", "xor_b64": "xor",
    "smin": "smin", "min_i32": "smin", "min_i64": "smin",
    "smax": "smax", "max_i32": "smax", "max_i64": "smax",
    "umin": "umin", "min_u32": "umin", "min_u64": "umin",
    "umax": "umax", "max_u32": "umax", "max_u64": "umax",
    "swap": "swap", "wrxchg_b32": "swap", "wrxchg_b64": "swap", "wrxchg2_b32": "swap", "wrxchg2_b64": "swap",
    "wrxchg2st64_b32": "swap", "wrxchg2st64_b64": "swap",
    "cmpswap": "cmpswap", "cmpst_b32": "cmpswap", "cmpst_b64": "cmpswap", "cmpst_f32": "cmpswap", "cmpst_f64": "cmpswap",
    "inc": "inc", "inc_u32": "inc", "inc_u64": "inc",
    "dec": "dec", "dec_u32": "dec", "dec_u64": "dec",
    "add_f32": "add_f32", "add_f64": "add_f64",
    "min_f32": "min_f32", "max_f32": "max_f32", "min_f64": "min_f64", "max_f64": "max_f64",
    "pk_add_f16": "pk_add_f16", "pk_add_bf16": "pk_add_bf16",
    "mskor_b32": "mskor", "mskor_b64": "mskor", "wrap_b32": "wrap", "condxchg32_b64": "condxchg",
}

NARROW = {  # access kind after load_/store_/read_/write_: (bytes, flags)
    "ubyte": (1, []), "sbyte": (1, ["s"]), "ushort": (2, []), "sshort": (2, ["s"]),
    "u8": (1, []), "i8": (1, ["s"]), "u16": (2, []), "i16": (2, ["s"]),
    "byte": (1, []), "short": (2, []), "b8": (1, []), "b16": (2, []),
    "dword": (4, []), "dwordx2": (8, []), "dwordx3": (12, []), "dwordx4": (16, []), "dwordx8": (32, []),
    "dwordx16": (64, []),
    "b32": (4, []), "b64": (8, []), "b96": (12, []), "b128": (16, []),
}


def access(kind):
    """(bytes, flags) of a load/store kind such as `sbyte_d16_hi`, `short_d16`, `dwordx4`, `b8_d16_hi`."""
    flags = []
    if kind.endswith("_d16_hi"):
        kind, flags = kind[: -len("_d16_hi")], ["hi"]
    elif kind.endswith("_d16"):
        kind, flags = kind[: -len("_d16")], ["lo"]
    if kind == "short" and flags:  # short_d16: a 16-bit load into half a register
        return 2, flags
    if kind not in NARROW:
        raise SystemExit(f"annotate: unknown access kind {kind}")
    n, f = NARROW[kind]
    return n, f + flags


def fmt_components(rest):
    """Register bytes of a typed (format) access: `d16_xy` -> 4 (two halves), `xyz` -> 12."""
    d16 = rest.startswith("d16_")
    hi = rest.startswith("d16_hi_")
    comps = rest.split("_")[-1]
    n = len(comps)
    flags = ["fmt"] + (["hi"] if hi else ["lo"] if d16 else [])
    return (2 * n if d16 else 4 * n), flags


def mem(enc, b):
    """(direction, bytes per lane (per wave for SMEM), flags, atomic op): the memory an instruction reads or
    writes, or None."""
    if enc == "SMEM":
        m = re.match(r"^s_(buffer_|scratch_)?(load|store)_(dword\w*)$", b)
        if m:
            flags = {"buffer_": ["buf"], "scratch_": ["scr"], None: []}[m.group(1)]
            return ("ld" if m.group(2) == "load" else "st"), NARROW[m.group(3)][0], flags, "-"
        m = re.match(r"^s_(buffer_)?atomic_(\w+?)(_x2)?$", b)
        if m:
            return "at", 8 if m.group(3) else 4, ["buf"] if m.group(1) else [], ATOMIC_NAMES[m.group(2)]
        return None
    if enc == "DS":
        op = b[len("ds_"):]
        if op in ("nop", "swizzle_b32", "permute_b32", "bpermute_b32") or op.startswith("gws_"):
            return None
        if op in ("append", "consume"):
            return "at", 4, ["rtn"], "add" if op == "append" else "sub"
        m = re.match(r"^read_(b64|b96)_tr_b(4|6|8|16)$", op)
        if m:
            return "ld", int(m.group(1)[1:]) // 8, ["tr"], "-"
        m = re.match(r"^(read|write)(2st64|2)?_(addtid_)?(\w+)$", op)
        if m:
            n, f = access(m.group(4))
            f = f + {"2": ["2a"], "2st64": ["2a", "st64"], None: []}[m.group(2)] + (["tid"] if m.group(3) else [])
            return ("ld" if m.group(1) == "read" else "st"), n, f, "-"
        rtn = "_rtn_" in op or op.startswith("wrxchg") or op.startswith("condxchg") or op.startswith("wrap")
        key = op.replace("_rtn", "")
        two = key.startswith("wrxchg2")
        width = 8 if key.endswith(("64", "f64")) else 4
        f = (["rtn"] if rtn else []) + (["2a"] if two else []) + (["st64"] if "st64" in key else [])
        return "at", width, f, ATOMIC_NAMES[key]
    if enc in ("FLAT", "GLOBAL", "SCRATCH", "MUBUF", "MTBUF"):
        op = re.sub(r"^(flat|global|scratch|buffer|tbuffer)_", "", b)
        if op.startswith(("wb", "inv")):
            return None
        m = re.match(r"^(load|store)_lds_(\w+)$", op)
        if m:
            n, f = access(m.group(2))
            return ("ld" if m.group(1) == "load" else "st"), n, f + ["lds"], "-"
        m = re.match(r"^(load|store)_format_(\w+)$", op)
        if m:
            n, f = fmt_components(m.group(2))
            return ("ld" if m.group(1) == "load" else "st"), n, f, "-"
        m = re.match(r"^(load|store)_(\w+)$", op)
        if m:
            n, f = access(m.group(2))
            return ("ld" if m.group(1) == "load" else "st"), n, f, "-"
        m = re.match(r"^atomic_(\w+?)(_x2)?$", op)
        if m:
            a = ATOMIC_NAMES[m.group(1)]
            return "at", 8 if m.group(2) or a.endswith("f64") else 4, [], a
        raise SystemExit(f"annotate: unknown memory instruction {b}")
    if enc == "MIMG":
        op = b[len("image_"):]
        if op == "get_resinfo":
            return None
        if op.startswith("atomic_"):
            return "at", 4, ["img"], ATOMIC_NAMES[op[len("atomic_"):]]
        return ("st" if op.startswith("store") else "ld"), 0, ["img"], "-"
    return None


TRANS_OPS = ("rcp", "rsq", "sqrt", "log", "exp", "sin", "cos", "rcp_iflag", "exp_legacy", "log_legacy")
ADD_OPS = ("add", "sub", "subrev")
MUL_OPS = ("mul", "mul_legacy")
FMA_OPS = ("fma", "fmac", "mad", "mac", "fmaak", "fmamk", "madak", "madmk", "mad_legacy", "fma_legacy")


def arith(enc, b):
    """The floating-point operation kind and type, as hardware counters classify VALU work: add (add, sub,
    subrev), mul, fma (fma and mad forms), trans (transcendentals), mfma; '-' for anything else."""
    if b == "v_mfma_ld_scale_b32":
        return "-"
    if "mfma" in b or "smfmac" in b:
        return "mfma." + mfma_shape(b).split(":")[2]
    m = re.match(r"^v_(pk_)?(\w+?)_(f16|f32|f64)$", b)
    if not m or enc not in ("VOP1", "VOP2", "VOP3", "VOP3P"):
        return "-"
    op, ty = m.group(2), m.group(3)
    for kind, ops in (("trans", TRANS_OPS), ("add", ADD_OPS), ("mul", MUL_OPS), ("fma", FMA_OPS)):
        if op in ops:
            return f"{kind}.{ty}"
    return "-"


def compare(enc, b):
    """predicate:type of a compare (v_cmp, v_cmpx, s_cmp, s_cmpk); '-' otherwise."""
    m = re.match(r"^(v_cmpx?|s_cmpk?)_(\w+)_([uif](16|32|64))$", b)
    if not m:
        return "-"
    pred, ty = m.group(2), m.group(3)
    if ty[0] in "ui":
        # integers have no unordered results: lg and ne are the same test, t and tru too
        pred = {"lg": "ne", "t": "tru"}.get(pred, pred)
    return f"{pred}:{ty}"


def mfma_shape(b):
    """MxNxK:blocks:input type[:sparse] of an MFMA or SMFMAC. Blocks follow from how many A values a lane
    holds (p): blocks = 64 * p / (M * K)."""
    m = re.match(r"^v_(s?)mfma[c]?_(f32|f64|i32)_(\d+)x(\d+)x(\d+)_?(\d+b_)?(\w+)$", b)
    if not m:
        raise SystemExit(f"annotate: unknown MFMA {b}")
    sparse, M, N, K, ty = m.group(1) == "s", int(m.group(3)), int(m.group(4)), int(m.group(5)), m.group(7)
    new_style = b[len("v_mfma_f32_") + len(f"{M}x{N}x{K}")] == "_" if not sparse else True
    if ty in ("f32",):
        p = 1
    elif ty == "f64":
        p = 1
    elif ty == "xf32":
        p = 2
    elif ty == "f16":
        p = 4
    elif ty in ("bf16_1k",):
        ty, p = "bf16", 4
    elif ty == "bf16":
        p = 4 if new_style else 2
    elif ty == "i8":
        p = 8 if (M, K) in ((32, 16), (16, 32)) else 4
    elif re.match(r"^(fp8|bf8)_(fp8|bf8)$", ty):
        p = 8
    elif ty == "f8f6f4":
        p = 32      # gfx950: 32 fp8 values (the default format) per lane, one block
    else:
        raise SystemExit(f"annotate: unknown MFMA input {ty} in {b}")
    if sparse:
        return f"{M}x{N}x{K}:1:{ty}:sparse"
    # gfx950's f16/bf16/i8 MFMAs with a larger K (16x16x32_f16, 32x32x16_bf16, 16x16x64_i8...) hold all of a
    # block's A values per lane in one block
    if 64 * p < M * K and ty in ("f16", "bf16", "i8"):
        p = M * K // 64
    blocks = 64 * p // (M * K)
    if blocks < 1:
        raise SystemExit(f"annotate: MFMA {b}: no whole block")
    return f"{M}x{N}x{K}:{blocks}:{ty}"


def operation(enc, name):
    b = base(name)
    mm = mem(enc, b)
    memcol = "-" if mm is None else f"{mm[0]}:{mm[1]}" + (":" + "+".join(mm[2]) if mm[2] else "")
    atomic = "-" if mm is None else mm[3]
    mf = mfma_shape(b) if ("mfma" in b or "smfmac" in b) and b != "v_mfma_ld_scale_b32" else "-"
    return [flow(enc, b), memcol, atomic, arith(enc, b), compare(enc, b), mf, types(b)]


TYPE_SUFFIX = re.compile(r"((?:_(?:f16|bf16|f32|f64|i8|u8|i16|u16|b16|i32|u32|b32|i64|u64|b64))+)$")


def types(b):
    """DST:SRC from the trailing type suffixes of a mnemonic: the first names the result, the last the sources."""
    if b.startswith(("v_mfma", "v_smfmac")):
        return "-"
    m = TYPE_SUFFIX.search(b)
    if not m:
        return "-"
    t = m.group(1).strip("_").split("_")
    return f"{t[0]}:{t[-1]}"


def main():
    for line in sys.stdin:
        if line.startswith("#"):
            if "DPP dword." in line:
                line = line.rstrip("\n") + "\n# then functional unit, wait counter class, implicit reads (r:) and writes (w:), control flow, memory\n# access (direction:bytes:flags), atomic operation, arithmetic kind.type, compare predicate:type, MFMA shape,\n# result:source types.\n"
            sys.stdout.write(line)
            continue
        c = line.rstrip("\n").split("\t")
        sys.stdout.write("\t".join(c + annotate(c[0], c[3], c[4])) + "\n")


if __name__ == "__main__":
    main()

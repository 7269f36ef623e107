#!/usr/bin/env python3
"""Add wavejit's own columns to the probed table: functional unit, wait counter class, implicit reads and writes.

Input: the 8-column table from gen_gfx9.py on stdin. Output: the same rows with three more columns:
  unit      salu | smem | branch | msg | valu | trans | f64 | mfma | lds | vmem | flat | misc
  wait      - | lgkm | vm | vm+lgkm | exp
  implicit  comma list of READ:REG / WRITE:REG for scc, vcc, exec, m0 ("-" when none)
These are semantic facts from the AMD ISA manuals, stated as rules over mnemonics here, so a reader of the table
sees them next to the encoding facts.
"""
import re
import sys

SCC_WRITERS_SOP2 = re.compile(r"^s_(add|sub|addc|subb|min|max|and|or|xor|andn2|orn2|nand|nor|xnor|lshl|lshr|ashr|bfe|absdiff|lshl\d_add|cbranch_g_fork)")
SCC_WRITERS_SOP1 = re.compile(r"^s_(not|wqm|bcnt[01]|quadmask|abs|.*saveexec)")
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
            if "saveexec" in b:
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
            unit = "mfma"
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
    return unit, wait, ",".join(imp) or "-"


def main():
    for line in sys.stdin:
        if line.startswith("#"):
            if "DPP dword." in line:
                line = line.rstrip("\n") + "\n# then functional unit, wait counter class, implicit reads (r:) and writes (w:).\n"
            sys.stdout.write(line)
            continue
        c = line.rstrip("\n").split("\t")
        sys.stdout.write("\t".join(c + list(annotate(c[0], c[3], c[4]))) + "\n")


if __name__ == "__main__":
    main()

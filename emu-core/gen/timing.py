#!/usr/bin/env python3
"""Generate emu-core/data/gfx9_timing.tsv: issue cycles, latency and pipeline of every gfx9 mnemonic.

Usage: python3 emu-core/gen/timing.py > emu-core/data/gfx9_timing.tsv   (run from the repository root)

Input: isa-amdgpu/data/gfx9.tsv (mnemonic in column 4, targets in column 3, functional unit in column 14).
gfx950 rows are left out: no device runs gfx950 code.
Output: one row per mnemonic without _e32/_e64, columns

  mnemonic
  gfx90a_issue gfx90a_latency gfx90a_pipe    ("-" when the mnemonic does not exist on gfx90a)
  gfx942_issue gfx942_latency gfx942_pipe
  imm_cycles   extra issue cycles per unit of the instruction's SIMM16 count field (s_nop, s_sleep)
  rule         which rule below produced the row

issue:   cycles the instruction keeps its pipeline busy (a wave64 VALU op on a 16-lane SIMD: 4).
latency: cycles from issue until a dependent instruction may issue, or "mem" when the result's arrival is
         decided by the memory pipeline or the LDS model (the instruction increments vmcnt/lgkmcnt).
pipe:    salu | smem | branch | internal | msg | valu | mfma | mfma_excl | lds | vmem | flat
         (internal: handled by the sequencer without a functional unit: s_nop, s_waitcnt, s_barrier...;
          mfma_excl: an MFMA that the VALU cannot co-execute with).

Every rule names its source. "assumed" marks a value without a public figure, with the reasoning.
"""
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TABLE = ROOT / "isa-amdgpu" / "data" / "gfx9.tsv"
TARGETS = ("gfx90a", "gfx942")

# MFMA cycles per instruction and whether VALU instructions can co-execute with it, per architecture.
# Source: AMD Matrix Instruction Calculator 1.3.2 (https://github.com/ROCm/amd_matrix_instruction_calculator,
# commit 2ef91896bcdc), the "cycles" and "coexec" fields of its CDNA2 and CDNA3 instruction tables.
# A pass is 4 cycles (cycles / 4 = passes, as in the CDNA3 ISA guide's dependency tables).
MFMA = {
    "gfx90a": {
        "v_mfma_f32_32x32x1f32": (64, True), "v_mfma_f32_16x16x1f32": (32, True),
        "v_mfma_f32_4x4x1f32": (8, True), "v_mfma_f32_32x32x2f32": (64, True),
        "v_mfma_f32_16x16x4f32": (32, True), "v_mfma_f32_32x32x4f16": (64, True),
        "v_mfma_f32_16x16x4f16": (32, True), "v_mfma_f32_4x4x4f16": (8, True),
        "v_mfma_f32_32x32x8f16": (64, True), "v_mfma_f32_16x16x16f16": (32, True),
        "v_mfma_i32_32x32x4i8": (64, True), "v_mfma_i32_16x16x4i8": (32, True),
        "v_mfma_i32_4x4x4i8": (8, True), "v_mfma_i32_32x32x8i8": (64, True),
        "v_mfma_i32_16x16x16i8": (32, True), "v_mfma_f32_32x32x4bf16_1k": (64, True),
        "v_mfma_f32_16x16x4bf16_1k": (32, True), "v_mfma_f32_4x4x4bf16_1k": (8, True),
        "v_mfma_f32_32x32x8bf16_1k": (64, True), "v_mfma_f32_16x16x16bf16_1k": (32, True),
        "v_mfma_f32_32x32x2bf16": (64, True), "v_mfma_f32_16x16x2bf16": (32, True),
        "v_mfma_f32_4x4x2bf16": (8, True), "v_mfma_f32_32x32x4bf16": (64, True),
        "v_mfma_f32_16x16x8bf16": (32, True), "v_mfma_f64_16x16x4f64": (32, False),
        "v_mfma_f64_4x4x4f64": (16, False),
    },
    "gfx942": {
        "v_mfma_f32_16x16x8_xf32": (16, True), "v_mfma_f32_32x32x4_xf32": (32, True),
        "v_mfma_f32_32x32x1_2b_f32": (64, False), "v_mfma_f32_16x16x1_4b_f32": (32, False),
        "v_mfma_f32_4x4x1_16b_f32": (8, False), "v_mfma_f32_32x32x2_f32": (64, False),
        "v_mfma_f32_16x16x4_f32": (32, False), "v_mfma_f32_32x32x4_2b_f16": (64, True),
        "v_mfma_f32_16x16x4_4b_f16": (32, True), "v_mfma_f32_4x4x4_16b_f16": (8, True),
        "v_mfma_f32_32x32x8_f16": (32, True), "v_mfma_f32_16x16x16_f16": (16, True),
        "v_mfma_i32_32x32x4_2b_i8": (64, True), "v_mfma_i32_16x16x4_4b_i8": (32, True),
        "v_mfma_i32_4x4x4_16b_i8": (8, True), "v_mfma_i32_32x32x16_i8": (32, True),
        "v_mfma_i32_16x16x32_i8": (16, True), "v_mfma_f32_32x32x4_2b_bf16": (64, True),
        "v_mfma_f32_16x16x4_4b_bf16": (32, True), "v_mfma_f32_4x4x4_16b_bf16": (8, True),
        "v_mfma_f32_32x32x8_bf16": (32, True), "v_mfma_f32_16x16x16_bf16": (16, True),
        "v_smfmac_f32_16x16x32_f16": (16, True), "v_smfmac_f32_32x32x16_f16": (32, True),
        "v_smfmac_f32_16x16x32_bf16": (16, True), "v_smfmac_f32_32x32x16_bf16": (32, True),
        "v_smfmac_i32_16x16x64_i8": (16, True), "v_smfmac_i32_32x32x32_i8": (32, True),
        "v_mfma_f64_16x16x4_f64": (32, False), "v_mfma_f64_4x4x4_4b_f64": (16, False),
        "v_mfma_f32_16x16x32_bf8_bf8": (16, True), "v_mfma_f32_16x16x32_bf8_fp8": (16, True),
        "v_mfma_f32_16x16x32_fp8_bf8": (16, True), "v_mfma_f32_16x16x32_fp8_fp8": (16, True),
        "v_mfma_f32_32x32x16_bf8_bf8": (32, True), "v_mfma_f32_32x32x16_bf8_fp8": (32, True),
        "v_mfma_f32_32x32x16_fp8_bf8": (32, True), "v_mfma_f32_32x32x16_fp8_fp8": (32, True),
        "v_smfmac_f32_16x16x64_bf8_bf8": (16, True), "v_smfmac_f32_16x16x64_bf8_fp8": (16, True),
        "v_smfmac_f32_16x16x64_fp8_bf8": (16, True), "v_smfmac_f32_16x16x64_fp8_fp8": (16, True),
        "v_smfmac_f32_32x32x32_bf8_bf8": (32, True), "v_smfmac_f32_32x32x32_bf8_fp8": (32, True),
        "v_smfmac_f32_32x32x32_fp8_bf8": (32, True), "v_smfmac_f32_32x32x32_fp8_fp8": (32, True),
    },
}

# Quarter-rate (16-cycle) 32-bit integer multiplies, SAD variants and division helpers.
# Source: CLRX "GCN ISA Instruction Timings" (CLRX/CLRX-mirror doc/GcnTimings.md, VOP3 table), measured on
# GCN; CDNA keeps GCN's 16-lane SIMD, so the rates are assumed unchanged.
QUARTER_RATE = {
    "v_mul_lo_u32", "v_mul_hi_u32", "v_mul_lo_i32", "v_mul_hi_i32", "v_mad_u64_u32", "v_mad_i64_i32",
    "v_qsad_pk_u16_u8", "v_mqsad_pk_u16_u8", "v_mqsad_u32_u8", "v_div_scale_f32", "v_div_fmas_f32",
    "v_div_fixup_f32", "v_div_fixup_legacy_f16",
}
# Half rate (8 cycles). Source: CLRX GcnTimings.md (VOP1 table: V_SWAP_B32 8 cycles).
HALF_RATE = {"v_swap_b32"}
# VALU instructions whose result is an SGPR read by the scalar unit: CLRX GcnTimings.md ("between ...
# V_READFIRSTLANE_B32, V_READLANE_B32 ... and any scalar ALU instructions there is 16-cycle delay").
SGPR_RESULT = {"v_readlane_b32", "v_readfirstlane_b32"}
# Scalar instructions that take 8 cycles. Source: CLRX GcnTimings.md (SOP1: S_*_SAVEEXEC_B64 8 cycles;
# SOPK: S_SETREG_B32 and S_SETREG_IMM32_B32 8 cycles).
SALU_SLOW = re.compile(r"^s_(\w+_saveexec_b64|\w+_wrexec_b64|setreg_b32|setreg_imm32_b32)$")
# Handled by the sequencer (the SQ) without a functional unit. Source: rocprofiler-compute docs,
# "Pipeline descriptions" (internal instructions are not issued to a functional unit).
INTERNAL = {
    "s_waitcnt", "s_barrier", "s_endpgm", "s_endpgm_saved", "s_endpgm_ordered_ps_done", "s_setprio",
    "s_sethalt", "s_setkill", "s_icache_inv", "s_incperflevel", "s_decperflevel", "s_ttracedata",
    "s_wakeup", "s_trap", "s_nop", "s_sleep", "s_cbranch_cdbgsys", "s_cbranch_cdbgsys_and_user",
    "s_cbranch_cdbgsys_or_user", "s_cbranch_cdbguser",
}


def base(name):
    return re.sub(r"_(e32|e64)$", "", name)


def dwords(name):
    """Data dwords a memory instruction moves per lane (or per wave for SMEM)."""
    m = re.search(r"dwordx(\d+)", name)
    if m:
        return int(m.group(1))
    if re.search(r"_(b128|x4)\b|_b128$|xyzw", name):
        return 4
    if re.search(r"_(b96)|xyz$", name):
        return 3
    if re.search(r"_(b64|x2|u64|i64|f64)$|_x2_|xy$|_b64_", name):
        return 2
    return 1


def rule(m, unit, target):
    """(issue, latency, pipe, imm_cycles, rule name) of mnemonic m on target."""
    if unit == "mfma":
        cycles, coexec = MFMA[target][m]
        # Result written by the last pass: latency = cycles (calculator). Co-execution from the calculator.
        return cycles, cycles, "mfma" if coexec else "mfma_excl", 0, "mfma-calculator"
    if m == "s_nop":
        # CDNA3 ISA guide, S_NOP: 1 + SIMM16[3:0] wait states.
        return 1, 1, "internal", 1, "s_nop"
    if m == "s_sleep":
        # CDNA3 ISA guide, S_SLEEP: sleep approximately 64 * SIMM16[6:0] clocks.
        return 1, 1, "internal", 64, "s_sleep"
    if m in INTERNAL:
        return 1, 1, "internal", 0, "internal"
    if unit == "salu":
        if SALU_SLOW.match(m):
            return 1, 8, "salu", 0, "salu-8"
        # CLRX GcnTimings.md: SOP1/SOP2/SOPC/SOPK take 4 cycles. The scalar unit takes one instruction per
        # cycle (one SIMD's turn); a dependent scalar instruction issues 4 cycles later.
        return 1, 4, "salu", 0, "salu"
    if unit == "branch":
        # CLRX GcnTimings.md: a jump costs 4 cycles not taken; the taken-branch refill is Overheads::taken_branch.
        return 1, 4, "branch", 0, "branch"
    if unit == "msg":
        return 1, "mem", "msg", 0, "msg"
    if unit == "smem":
        # CLRX GcnTimings.md (SMRD): up to 4 dwords 4 cycles, x8 8, x16 16-24: one issue cycle per 4 dwords.
        n = dwords(m)
        return max(1, n // 4), "mem", "smem", 0, "smem"
    if unit == "lds":
        # Issue hands the instruction to the LDS; its bank and port cycles come from timing::lds.
        return 1, "mem", "lds", 0, "lds"
    if unit in ("vmem", "flat"):
        # assumed: the TA takes a wave64's 64 addresses in 4 cycles (16 lanes per clock, like the SIMD that
        # sends them) and store/atomic data at 64 B/clk, the rate rocprofiler-compute gives for the LDS port.
        n = dwords(m)
        stores = re.search(r"(store|atomic|_st_)", m) is not None
        return 4 + (4 * n if stores else 0), "mem", unit, 0, unit
    # Vector ALU.
    if unit == "trans":
        # CLRX GcnTimings.md: transcendentals (rcp, rsq, sqrt, exp, log, sin, cos) 16 cycles (quarter rate);
        # the f64 ones assumed quarter rate too.
        return 16, 16, "valu", 0, "trans-quarter"
    if unit == "f64":
        # ROCm GPU architecture docs (MI250 and MI300 tables): vector FP64 128 FLOPs/clock/CU, i.e. a wave64
        # FMA in 4 cycles; the other FP64 operations assumed full rate as well.
        return 4, 4, "valu", 0, "f64-full"
    if m in QUARTER_RATE:
        return 16, 16, "valu", 0, "valu-quarter"
    if m in HALF_RATE:
        return 8, 8, "valu", 0, "valu-half"
    if m in SGPR_RESULT:
        return 4, 16, "valu", 0, "valu-sgpr-result"
    if m.startswith("v_pk_") and m.endswith("_f32"):
        # ROCm MI250 table: packed FP32 256 FLOPs/clock/CU = two FMAs per lane every 4 cycles (full rate).
        return 4, 4, "valu", 0, "pk-f32-full"
    # GCN/CDNA: a wave64 VALU op takes 4 cycles on a 16-lane SIMD (rocprofiler-compute "Pipeline
    # descriptions": four 16-wide SIMDs; CLRX: VOP1/VOP2/VOPC/VOP3P 4 cycles); dependent ops issue back to back.
    return 4, 4, "valu", 0, "valu"


def main():
    rows = {}
    for line in TABLE.read_text().splitlines():
        if line.startswith("#") or not line:
            continue
        c = line.split("\t")
        m = base(c[3])
        targets = set(c[2].split("|"))
        unit = c[13]
        r = rows.setdefault(m, {"targets": set(), "unit": unit})
        r["targets"] |= targets
        if r["unit"] != unit:
            sys.exit(f"{m}: units {r['unit']} and {unit} disagree")
    out = sys.stdout
    out.write("# wavejit gfx9 instruction timing (gfx90a, gfx942). GENERATED by emu-core/gen/timing.py from\n")
    out.write("# isa-amdgpu/data/gfx9.tsv; do not edit by hand. Rules and sources are in the generator.\n")
    out.write("# Columns: mnemonic, then per target (gfx90a, gfx942) issue cycles, latency (cycles or mem),\n")
    out.write("# pipeline (\"-\" when the target lacks the mnemonic), then imm_cycles (extra cycles per SIMM16\n")
    out.write("# count unit: s_nop, s_sleep) and the rule that produced the row.\n")
    for m in sorted(rows):
        r = rows[m]
        if not r["targets"] & set(TARGETS):
            continue    # gfx950's own mnemonics: no device runs gfx950 code, so it has no timing
        cols = [m]
        imm, name = 0, None
        for t in TARGETS:
            if t in r["targets"]:
                issue, lat, pipe, imm, name = rule(m, r["unit"], t)
                cols += [str(issue), str(lat), pipe]
            else:
                cols += ["-", "-", "-"]
        cols += [str(imm), name]
        out.write("\t".join(cols) + "\n")


if __name__ == "__main__":
    main()

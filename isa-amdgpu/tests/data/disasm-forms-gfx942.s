# Forms of LLVM's MC tests the random vectors rarely draw (GWS with gds and AGPR operands,
# ds_swizzle_b32 offsets, v_accvgpr_write immediates, hwreg names, MFMA f64 blgp/neg:, sendmsg names, DPP/SDWA v_nop,
# fp8/bf8 SDWA with clamp and omod, op_sel, buffer_store_lds_dword). Used by tests/disasm_forms.rs.
v_mfma_f64_16x16x4_f64 v[0:7], v[32:33], v[34:35], v[0:7] neg:[1,0,1]
v_mfma_f64_16x16x4_f64 v[0:7], v[32:33], v[34:35], v[0:7] neg:[0,1,0]
v_mfma_f64_4x4x4_4b_f64 a[0:1], v[2:3], v[4:5], a[0:1] cbsz:1 abid:1 neg:[1,1,1]
s_getreg_b32 s1, hwreg(HW_REG_MODE)
s_getreg_b32 s1, hwreg(HW_REG_SH_MEM_BASES)
s_getreg_b32 s1, hwreg(HW_REG_XCC_ID)
s_getreg_b32 s1, hwreg(HW_REG_SQ_PERF_SNAPSHOT_DATA)
s_getreg_b32 s1, hwreg(HW_REG_SQ_PERF_SNAPSHOT_DATA1)
s_getreg_b32 s1, hwreg(HW_REG_SQ_PERF_SNAPSHOT_PC_LO)
s_getreg_b32 s1, hwreg(HW_REG_SQ_PERF_SNAPSHOT_PC_HI)
s_getreg_b32 s1, hwreg(HW_REG_HW_ID)
v_cvt_f32_fp8_sdwa v1, v3 src0_sel:BYTE_1
v_cvt_f32_bf8_sdwa v1, v3 src0_sel:BYTE_3
v_cvt_pk_f32_fp8_sdwa v[2:3], v3 src0_sel:WORD_1
v_cvt_f32_fp8_sdwa v1, v3 clamp mul:2 src0_sel:BYTE_1
v_cvt_f32_bf8_sdwa v1, v3 clamp src0_sel:BYTE_1
v_cvt_pk_f32_fp8_sdwa v[2:3], v3 mul:4 src0_sel:WORD_1
v_cvt_pk_f32_bf8_sdwa v[2:3], v3 clamp div:2 src0_sel:WORD_1
v_cvt_f32_fp8_e64 v0, v2 clamp mul:2
v_cvt_pk_fp8_f32 v1, v2, v3 op_sel:[0,0,1]
v_cvt_pk_bf8_f32 v1, v2, v3 op_sel:[0,0,1]
v_cvt_sr_fp8_f32 v1, v2, v3 op_sel:[0,0,1,1]
v_cvt_sr_bf8_f32 v1, v2, v3 op_sel:[0,0,0,1]
v_cvt_sr_fp8_f32 v1, v2, v3 op_sel:[0,0,1,0]
v_nop_dpp quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf
s_sendmsg sendmsg(MSG_INTERRUPT)
s_sendmsg sendmsg(MSG_GS_ALLOC_REQ)
s_sendmsg sendmsg(MSG_SYSMSG, SYSMSG_OP_TTRACE_PC)
ds_gws_init a2 offset:4 gds
v_accvgpr_write_b32 a0, 64
buffer_store_lds_dword s[4:7], s1 offset:4095 lds
buffer_store_lds_dword s[8:11], 0 offset:16 lds
buffer_store_lds_dword s[4:7], s1 lds

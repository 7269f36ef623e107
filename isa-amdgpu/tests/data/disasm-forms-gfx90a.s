# Forms of LLVM's MC tests the random vectors rarely draw (GWS with gds and AGPR operands,
# ds_swizzle_b32 offsets, v_accvgpr_write immediates, hwreg names, MFMA f64 blgp/neg:, sendmsg names, DPP/SDWA v_nop,
# fp8/bf8 SDWA and op_sel, buffer_store_lds_dword). Used by tests/disasm_forms.rs.
ds_gws_init v2 offset:65535 gds
ds_gws_barrier v2 gds
ds_gws_sema_v gds
ds_gws_sema_br v2 gds
ds_gws_sema_p gds
ds_gws_sema_release_all gds
ds_gws_init a2 offset:4 gds
ds_gws_barrier a2 gds
ds_swizzle_b32 v8, v2 offset:swizzle(QUAD_PERM,0,1,2,3)
ds_swizzle_b32 v8, v2 offset:swizzle(BITMASK_PERM,"01pip")
ds_swizzle_b32 v8, v2 offset:swizzle(SWAP,16)
ds_swizzle_b32 v8, v2 offset:swizzle(REVERSE,8)
ds_swizzle_b32 v8, v2 offset:swizzle(BROADCAST,8,7)
ds_swizzle_b32 v8, v2 offset:0xffff
ds_swizzle_b32 v8, v2 offset:32768
ds_swizzle_b32 v8, v2
v_accvgpr_write_b32 a0, 1
v_accvgpr_write_b32 a0, -1
v_accvgpr_write_b32 a0, 0.5
v_accvgpr_write_b32 a2, s2
v_accvgpr_write_b32 a2, v255
v_accvgpr_read_b32 v1, a255
v_accvgpr_mov_b32 a1, a2
s_sendmsg sendmsg(MSG_INTERRUPT)
s_sendmsg sendmsg(MSG_GS, GS_OP_EMIT, 0)
s_sendmsg sendmsg(MSG_GS_DONE, GS_OP_NOP)
s_sendmsg sendmsg(MSG_SYSMSG, SYSMSG_OP_ECC_ERR_INTERRUPT)
s_sendmsg sendmsg(MSG_SAVEWAVE)
s_sendmsg sendmsg(MSG_STALL_WAVE_GEN)
s_sendmsg sendmsg(MSG_HALT_WAVES)
s_sendmsg sendmsg(MSG_GET_DOORBELL)
s_sendmsg sendmsg(MSG_GS_ALLOC_REQ)
s_sendmsg 0x1f
s_sendmsghalt sendmsg(MSG_INTERRUPT)
v_nop_dpp quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf
v_nop_sdwa
v_mfma_f64_16x16x4f64 v[0:7], v[32:33], v[34:35], v[0:7] blgp:3
v_mfma_f64_4x4x4f64 a[0:1], v[2:3], v[4:5], a[0:1] cbsz:1 abid:1 blgp:2
s_getreg_b32 s1, hwreg(HW_REG_MODE)
s_getreg_b32 s1, hwreg(HW_REG_SH_MEM_BASES, 16, 16)
s_getreg_b32 s1, hwreg(HW_REG_TBA_LO)
s_getreg_b32 s1, hwreg(HW_REG_TMA_HI)
s_getreg_b32 s1, hwreg(30)
s_setreg_b32 hwreg(HW_REG_TRAPSTS, 0, 1), s2
buffer_store_lds_dword s[4:7], s1 offset:4095 lds
buffer_store_lds_dword s[8:11], 0 offset:16 lds
buffer_store_lds_dword s[4:7], s1 lds

# gfx950's own instructions in the forms LLVM 22's MC tests exercise (MFMAs new in gfx950, the scaled f8f6f4
# MFMAs with their scale operands, v_mfma_ld_scale_b32, sparse MFMAs, ds_read_*_tr_*, global and buffer loads of
# three and four dwords to LDS, v_prng_b32, v_permlane16/32_swap, bitop3, the scale conversions, minimum3/maximum3,
# bf16 conversions and dot products), written for wavejit. Used by tests/disasm_forms.rs with llvm-mc-22.
v_prng_b32 v1, v2
v_prng_b32 v1, s2
v_prng_b32 v1, 0x12345678
v_prng_b32_e64 v1, v2
v_prng_b32_sdwa v1, v2 dst_sel:WORD_1 dst_unused:UNUSED_PAD src0_sel:BYTE_1
v_prng_b32_dpp v1, v2 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf
v_permlane16_swap_b32 v1, v2
v_permlane32_swap_b32 v218, v219
v_permlane16_swap_b32_e64 v1, v2 bound_ctrl:1 fi:1
v_permlane32_swap_b32_e64 v1, v2 fi:1
v_cvt_f32_bf16 v1, v2
v_cvt_f32_bf16_e64 v1, v2 clamp
v_cvt_f32_bf16_sdwa v1, v2 src0_sel:WORD_1
v_cvt_pk_bf16_f32 v1, v2, v3
v_cvt_pk_bf16_f32 v1, -v2, |v3| clamp
v_cvt_pk_bf16_f32 v1, s2, 1.0
v_bitop3_b32 v1, v2, v3, v4 bitop3:0x12
v_bitop3_b32 v1, v2, v3, v4 bitop3:0xff
v_bitop3_b32 v1, s2, 4, v4 bitop3:0x81
v_bitop3_b16 v1, v2, v3, v4 bitop3:0x24
v_bitop3_b16 v1, v2, v3, v4 bitop3:0x24 op_sel:[1,1,0,1]
v_ashr_pk_i8_i32 v1, v2, v3, v4
v_ashr_pk_u8_i32 v1, v2, v3, v4 op_sel:[0,0,0,1]
v_cvt_scalef32_f16_fp8 v1, v2, v3
v_cvt_scalef32_f16_fp8 v1, v2, v3 op_sel:[1,1,1]
v_cvt_scalef32_f32_fp8 v1, v2, v3 op_sel:[0,1,0]
v_cvt_scalef32_f16_bf8 v1, v2, v3
v_cvt_scalef32_f32_bf8 v1, v2, v3
v_cvt_scalef32_pk_fp8_f32 v1, v2, v3, v4
v_cvt_scalef32_pk_fp8_f32 v1, v2, v3, v4 op_sel:[0,0,0,1]
v_cvt_scalef32_pk_bf8_f32 v1, v2, v3, v4
v_cvt_scalef32_sr_fp8_f32 v1, v2, v3, v4
v_cvt_scalef32_sr_bf8_f32 v1, v2, v3, v4 op_sel:[0,0,1,1]
v_cvt_scalef32_pk_f32_fp8 v[0:1], v2, v3
v_cvt_scalef32_pk_f32_bf8 v[0:1], v2, v3 op_sel:[1,0,0]
v_cvt_scalef32_pk_fp4_f32 v1, v2, v3, v4
v_cvt_scalef32_pk_fp4_f32 v1, v2, v3, v4 op_sel:[0,0,1,1]
v_cvt_scalef32_pk_f32_fp4 v[0:1], v2, v3
v_cvt_scalef32_pk_f32_fp4 v[0:1], v2, v3 op_sel:[1,1,0]
v_cvt_scalef32_pk_fp8_f16 v1, v2, v3
v_cvt_scalef32_pk_fp8_bf16 v1, v2, v3 op_sel:[0,0,0,1]
v_cvt_scalef32_pk_bf8_f16 v1, v2, v3
v_cvt_scalef32_pk_bf8_bf16 v1, v2, v3
v_cvt_scalef32_sr_fp8_f16 v1, v2, v3, v4
v_cvt_scalef32_sr_fp8_bf16 v1, v2, v3, v4 op_sel:[0,0,1,1]
v_cvt_scalef32_sr_bf8_f16 v1, v2, v3, v4
v_cvt_scalef32_sr_bf8_bf16 v1, v2, v3, v4
v_cvt_scalef32_pk_f16_fp8 v1, v2, v3
v_cvt_scalef32_pk_f16_bf8 v1, v2, v3 op_sel:[1,0,0]
v_cvt_scalef32_pk_bf16_fp8 v1, v2, v3
v_cvt_scalef32_pk_bf16_bf8 v1, v2, v3
v_cvt_scalef32_pk_fp4_f16 v1, v2, v3
v_cvt_scalef32_pk_fp4_bf16 v1, v2, v3 op_sel:[0,0,1,1]
v_cvt_scalef32_sr_pk_fp4_f16 v1, v2, v3, v4
v_cvt_scalef32_sr_pk_fp4_bf16 v1, v2, v3, v4
v_cvt_scalef32_sr_pk_fp4_f32 v1, v[2:3], v4, v5
v_cvt_scalef32_pk_f16_fp4 v1, v2, v3
v_cvt_scalef32_pk_bf16_fp4 v1, v2, v3 op_sel:[1,1,0]
v_cvt_scalef32_pk32_f32_fp6 v[0:31], v[32:37], v38
v_cvt_scalef32_pk32_f32_bf6 v[0:31], v[32:37], v38
v_cvt_scalef32_pk32_fp6_f16 v[0:5], v[6:21], v22
v_cvt_scalef32_pk32_bf6_f16 v[0:5], v[6:21], v22
v_cvt_scalef32_pk32_fp6_bf16 v[0:5], v[6:21], v22
v_cvt_scalef32_pk32_bf6_bf16 v[0:5], v[6:21], v22
v_cvt_scalef32_pk32_f16_fp6 v[0:15], v[16:21], v22
v_cvt_scalef32_pk32_bf16_bf6 v[0:15], v[16:21], v22
v_cvt_scalef32_2xpk16_fp6_f32 v[0:5], v[6:21], v[22:37], v38
v_cvt_scalef32_2xpk16_bf6_f32 v[0:5], v[6:21], v[22:37], v38
v_cvt_scalef32_sr_pk32_bf6_f32 v[0:5], v[6:37], v38, v39
v_cvt_scalef32_sr_pk32_fp6_f16 v[0:5], v[6:21], v22, v23
v_cvt_scalef32_sr_pk32_bf6_bf16 v[0:5], v[6:21], v22, v23
v_cvt_scalef32_pk_f32_fp8 v[0:1], s2, 1.0
v_cvt_pk_f16_f32 v1, v2, v3
v_cvt_pk_f16_f32 v1, -v2, |v3| clamp
v_cvt_sr_bf16_f32 v1, v2, v3
v_cvt_sr_f16_f32 v1, v2, v3 op_sel:[0,0,1]
v_cvt_sr_bf16_f32 v1, v2, s3 op_sel:[0,0,1]
v_minimum3_f32 v1, v2, v3, v4
v_maximum3_f32 v1, -v2, |v3|, 1.0 clamp
v_pk_minimum3_f16 v1, v2, v3, v4
v_pk_maximum3_f16 v1, v2, v3, v4 op_sel:[1,0,1] op_sel_hi:[0,1,0]
v_pk_maximum3_f16 v1, v2, v3, v4 neg_lo:[1,0,0] neg_hi:[0,0,1] clamp
v_dot2_f32_bf16 v1, v2, v3, v4
v_dot2_f32_bf16 v1, v2, v3, v4 neg_lo:[1,1,0] neg_hi:[1,0,1] clamp
ds_read_b64_tr_b4 v[0:1], v1
ds_read_b64_tr_b4 v[0:1], v1 offset:65535
ds_read_b64_tr_b8 v[254:255], v1 offset:16
ds_read_b64_tr_b16 a[0:1], v1
ds_read_b96_tr_b6 v[0:2], v1
ds_read_b96_tr_b6 a[2:4], v255 offset:4
global_load_lds_dwordx3 v[2:3], off
global_load_lds_dwordx3 v[2:3], off sc0 nt sc1
global_load_lds_dwordx3 v2, s[4:5] offset:4
global_load_lds_dwordx4 v[2:3], off offset:-4096
global_load_lds_dwordx4 v2, s[4:5] offset:4 sc0
buffer_load_dwordx3 off, s[8:11], s3 lds
buffer_load_dwordx4 off, s[8:11], s3 offset:4095 lds
buffer_load_dwordx4 v1, s[8:11], s3 offen sc0 nt lds
buffer_load_dwordx3 v1, s[8:11], s3 idxen offset:4 sc1 lds
v_mfma_f32_16x16x32_f16 v[0:3], v[4:7], v[8:11], v[0:3]
v_mfma_f32_16x16x32_f16 a[0:3], a[4:7], v[8:11], 1.0
v_mfma_f32_16x16x32_f16 v[0:3], v[4:7], v[8:11], v[0:3] cbsz:3 abid:1 blgp:2
v_mfma_f32_32x32x16_f16 v[0:15], v[16:19], v[20:23], v[0:15]
v_mfma_f32_32x32x16_f16 a[0:15], v[16:19], a[20:23], 2.0 blgp:7
v_mfma_f32_16x16x32_bf16 v[0:3], v[4:7], v[8:11], v[0:3]
v_mfma_f32_16x16x32_bf16 a[0:3], v[4:7], v[8:11], a[0:3] cbsz:1 abid:1 blgp:1
v_mfma_f32_32x32x16_bf16 v[0:15], v[16:19], v[20:23], v[0:15]
v_mfma_i32_16x16x64_i8 v[0:3], v[4:7], v[8:11], v[0:3]
v_mfma_i32_32x32x32_i8 a[0:15], v[16:19], v[20:23], a[0:15]
v_mfma_f32_16x16x128_f8f6f4 v[0:3], v[4:11], v[12:19], v[0:3]
v_mfma_f32_16x16x128_f8f6f4 v[0:3], v[4:11], v[12:19], v[0:3] cbsz:1 blgp:1
v_mfma_f32_16x16x128_f8f6f4 v[0:3], v[4:9], v[12:17], v[0:3] cbsz:2 blgp:3
v_mfma_f32_16x16x128_f8f6f4 v[0:3], v[4:7], v[12:15], v[0:3] cbsz:4 blgp:4
v_mfma_f32_16x16x128_f8f6f4 a[0:3], v[4:11], a[12:19], a[0:3]
v_mfma_f32_32x32x64_f8f6f4 v[0:15], v[16:23], v[24:31], v[0:15]
v_mfma_f32_32x32x64_f8f6f4 v[0:15], v[16:21], v[24:27], v[0:15] cbsz:2 blgp:4
v_mfma_scale_f32_16x16x128_f8f6f4 v[0:3], v[4:11], v[12:19], v[0:3], v20, v21 op_sel_hi:[0,0,0]
v_mfma_scale_f32_16x16x128_f8f6f4 v[0:3], v[4:11], v[12:19], v[0:3], v20, v21
v_mfma_scale_f32_16x16x128_f8f6f4 v[0:3], v[4:11], v[12:19], v[0:3], v20, v21 op_sel:[1,0,0] op_sel_hi:[0,1,0]
v_mfma_scale_f32_16x16x128_f8f6f4 v[0:3], v[4:9], v[12:15], v[0:3], v20, v21 op_sel_hi:[0,0,0] cbsz:2 blgp:4
v_mfma_scale_f32_32x32x64_f8f6f4 v[0:15], v[16:23], v[24:31], v[0:15], v32, v33 op_sel_hi:[0,0,0]
v_mfma_scale_f32_32x32x64_f8f6f4 a[0:15], v[16:23], v[24:31], a[0:15], v32, v33 op_sel:[1,0,0] op_sel_hi:[0,1,0] cbsz:1 blgp:1
v_mfma_ld_scale_b32 v1, v2
v_mfma_ld_scale_b32 s1, 1.0
v_mfma_ld_scale_b32 v1, v2 op_sel:[1,0] op_sel_hi:[0,1]
v_smfmac_f32_16x16x64_f16 v[0:3], v[4:7], v[8:15], v16
v_smfmac_f32_16x16x64_f16 a[0:3], v[4:7], a[8:15], v16 cbsz:3 abid:1
v_smfmac_f32_32x32x32_f16 v[0:15], v[16:19], v[20:27], v28
v_smfmac_f32_16x16x64_bf16 v[0:3], v[4:7], v[8:15], v16
v_smfmac_f32_32x32x32_bf16 v[0:15], v[16:19], v[20:27], v28
v_smfmac_i32_16x16x128_i8 v[0:3], v[4:7], v[8:15], v16
v_smfmac_i32_32x32x64_i8 v[0:15], v[16:19], v[20:27], v28
v_smfmac_f32_16x16x128_fp8_fp8 v[0:3], v[4:7], v[8:15], v16
v_smfmac_f32_16x16x128_bf8_fp8 v[0:3], v[4:7], v[8:15], v16
v_smfmac_f32_32x32x64_fp8_bf8 v[0:15], v[16:19], v[20:27], v28
v_smfmac_f32_32x32x64_bf8_bf8 a[0:15], v[16:19], v[20:27], v28 abid:1
v_dot2c_f32_bf16 v1, v2, v3
v_dot2c_f32_bf16_dpp v1, v2, v3 quad_perm:[0,1,2,3] row_mask:0xf bank_mask:0xf
s_getreg_b32 s1, hwreg(HW_REG_XCC_ID)

// Hand-written: an inclusive prefix sum across a wave with DPP row shifts and row broadcasts (the sequence
// AMD's GCN cross-lane article gives), and scalar instructions the compilers rarely emit. One wave of 64.
// out[0..64] = inclusive scan of in[0..64]; out[64..70] = s_flbit_i32_b32(in[0]), s_flbit_i32(in[1]),
// s_bfe_i64({in[1],in[0]}, offset 8, width 28) (two dwords), signed max of in[0] and in[1] via s_cselect,
// and in[0] read through an SMEM load whose SGPR offset is 0x80000000 (unsigned) from in - 0x80000000.
	.text
	.globl	dpp_scan
	.p2align	8
	.type	dpp_scan,@function
dpp_scan:
	s_load_dwordx4 s[4:7], s[0:1], 0x0          // s[4:5] = in, s[6:7] = out
	v_lshlrev_b32_e32 v2, 2, v0
	s_waitcnt lgkmcnt(0)
	global_load_dword v1, v2, s[4:5]
	s_waitcnt vmcnt(0)
	v_add_u32_dpp v3, v1, v1 row_shr:1 bound_ctrl:1
	s_nop 1
	v_add_u32_dpp v3, v1, v3 row_shr:2 bound_ctrl:1
	s_nop 1
	v_add_u32_dpp v3, v1, v3 row_shr:3 bound_ctrl:1
	s_nop 1
	v_add_u32_dpp v3, v3, v3 row_shr:4 bank_mask:0xe
	s_nop 1
	v_add_u32_dpp v3, v3, v3 row_shr:8 bank_mask:0xc
	s_nop 1
	v_add_u32_dpp v3, v3, v3 row_bcast:15 row_mask:0xa
	s_nop 1
	v_add_u32_dpp v3, v3, v3 row_bcast:31 row_mask:0xc
	global_store_dword v2, v3, s[6:7]
	// scalar part
	s_load_dwordx2 s[8:9], s[4:5], 0x0          // in[0], in[1]
	s_waitcnt lgkmcnt(0)
	s_flbit_i32_b32 s10, s8
	s_flbit_i32 s11, s9
	s_bfe_i64 s[12:13], s[8:9], 0x1c0008
	s_cmp_gt_i32 s8, s9
	s_cselect_b32 s14, s8, s9
	s_mov_b32 s16, 0x80000000
	s_sub_u32 s18, s4, s16
	s_subb_u32 s19, s5, 0
	s_load_dword s15, s[18:19], s16
	s_waitcnt lgkmcnt(0)
	s_mov_b64 exec, 1
	v_mov_b32_e32 v4, 0
	v_mov_b32_e32 v5, s10
	global_store_dword v4, v5, s[6:7] offset:256
	v_mov_b32_e32 v5, s11
	global_store_dword v4, v5, s[6:7] offset:260
	v_mov_b32_e32 v5, s12
	global_store_dword v4, v5, s[6:7] offset:264
	v_mov_b32_e32 v5, s13
	global_store_dword v4, v5, s[6:7] offset:268
	v_mov_b32_e32 v5, s14
	global_store_dword v4, v5, s[6:7] offset:272
	v_mov_b32_e32 v5, s15
	global_store_dword v4, v5, s[6:7] offset:276
	s_endpgm
.Lfunc_end0:
	.size	dpp_scan, .Lfunc_end0-dpp_scan

	.rodata
	.p2align	6
	.amdhsa_kernel dpp_scan
		.amdhsa_user_sgpr_kernarg_segment_ptr 1
		.amdhsa_next_free_vgpr 8
		.amdhsa_next_free_sgpr 24
		.amdhsa_accum_offset 8
		.amdhsa_kernarg_size 16
		.amdhsa_float_denorm_mode_32 3
	.end_amdhsa_kernel

	.amdgpu_metadata
---
amdhsa.kernels:
  - .args:
      - .address_space:  global
        .offset:         0
        .size:           8
        .value_kind:     global_buffer
      - .address_space:  global
        .offset:         8
        .size:           8
        .value_kind:     global_buffer
    .group_segment_fixed_size: 0
    .kernarg_segment_align: 8
    .kernarg_segment_size: 16
    .max_flat_workgroup_size: 64
    .name:           dpp_scan
    .private_segment_fixed_size: 0
    .sgpr_count:     24
    .symbol:         dpp_scan.kd
    .vgpr_count:     8
    .wavefront_size: 64
amdhsa.target:   amdgcn-amd-amdhsa--@TARGET@
amdhsa.version:
  - 1
  - 2
...
	.end_amdgpu_metadata

// Instruction latency and throughput microbenchmarks, hand-written so that the timed loop holds exactly the
// instructions under test: each kernel runs `rounds` rounds of an unrolled chain between two s_memtime reads
// and stores the cycles to out[workgroup * 16 + wave] (a u64 per wave). One wave per SIMD measures latency
// (dependent chains) or issue rate (independent ones); more waves per SIMD measure throughput.
// Arguments: out (u64 per wave), rounds (u32). gfx942 accepts the gfx90a MFMA mnemonics used here.
	.text
// valu_dep: a dependent chain of v_fma_f32, 32 instructions per round.
	.globl	valu_dep
	.p2align	8
	.type	valu_dep,@function
valu_dep:
	s_load_dwordx2 s[4:5], s[0:1], 0x0
	s_load_dword s6, s[0:1], 0x8
	v_mov_b32_e32 v1, 1.0
	v_mov_b32_e32 v2, 0.5
	s_waitcnt lgkmcnt(0)
	s_memtime s[8:9]
.Lvalu_dep_round:
	.rept 32
	v_fma_f32 v1, v1, v2, v2
	.endr
	s_sub_u32 s6, s6, 1
	s_cmp_lg_u32 s6, 0
	s_cbranch_scc1 .Lvalu_dep_round
	s_memtime s[10:11]
	s_waitcnt lgkmcnt(0)
	s_sub_u32 s10, s10, s8
	s_subb_u32 s11, s11, s9
	v_lshrrev_b32_e32 v6, 6, v0
	v_readfirstlane_b32 s13, v6
	s_lshl_b32 s12, s2, 4
	s_add_u32 s12, s12, s13
	s_lshl_b32 s12, s12, 3
	v_mov_b32_e32 v6, s12
	v_mov_b32_e32 v4, s10
	v_mov_b32_e32 v5, s11
	global_store_dwordx2 v6, v[4:5], s[4:5]
	s_endpgm
.Lvalu_dep_end:
	.size	valu_dep, .Lvalu_dep_end-valu_dep

// valu_indep: eight independent chains of v_fma_f32, 32 instructions per round.
	.globl	valu_indep
	.p2align	8
	.type	valu_indep,@function
valu_indep:
	s_load_dwordx2 s[4:5], s[0:1], 0x0
	s_load_dword s6, s[0:1], 0x8
	v_mov_b32_e32 v1, 1.0
	v_mov_b32_e32 v2, 1.0
	v_mov_b32_e32 v3, 1.0
	v_mov_b32_e32 v4, 1.0
	v_mov_b32_e32 v5, 1.0
	v_mov_b32_e32 v6, 1.0
	v_mov_b32_e32 v7, 1.0
	v_mov_b32_e32 v8, 1.0
	v_mov_b32_e32 v9, 0.5
	s_waitcnt lgkmcnt(0)
	s_memtime s[8:9]
.Lvalu_indep_round:
	.rept 4
	v_fma_f32 v1, v1, v9, v9
	v_fma_f32 v2, v2, v9, v9
	v_fma_f32 v3, v3, v9, v9
	v_fma_f32 v4, v4, v9, v9
	v_fma_f32 v5, v5, v9, v9
	v_fma_f32 v6, v6, v9, v9
	v_fma_f32 v7, v7, v9, v9
	v_fma_f32 v8, v8, v9, v9
	.endr
	s_sub_u32 s6, s6, 1
	s_cmp_lg_u32 s6, 0
	s_cbranch_scc1 .Lvalu_indep_round
	s_memtime s[10:11]
	s_waitcnt lgkmcnt(0)
	s_sub_u32 s10, s10, s8
	s_subb_u32 s11, s11, s9
	v_lshrrev_b32_e32 v6, 6, v0
	v_readfirstlane_b32 s13, v6
	s_lshl_b32 s12, s2, 4
	s_add_u32 s12, s12, s13
	s_lshl_b32 s12, s12, 3
	v_mov_b32_e32 v6, s12
	v_mov_b32_e32 v4, s10
	v_mov_b32_e32 v5, s11
	global_store_dwordx2 v6, v[4:5], s[4:5]
	s_endpgm
.Lvalu_indep_end:
	.size	valu_indep, .Lvalu_indep_end-valu_indep

// f64_dep: a dependent chain of v_fma_f64, 32 instructions per round.
	.globl	f64_dep
	.p2align	8
	.type	f64_dep,@function
f64_dep:
	s_load_dwordx2 s[4:5], s[0:1], 0x0
	s_load_dword s6, s[0:1], 0x8
	v_mov_b32_e32 v2, 0
	v_mov_b32_e32 v3, 0x3ff00000
	v_mov_b32_e32 v4, 0
	v_mov_b32_e32 v5, 0x3fe00000
	s_waitcnt lgkmcnt(0)
	s_memtime s[8:9]
.Lf64_dep_round:
	.rept 32
	v_fma_f64 v[2:3], v[2:3], v[4:5], v[4:5]
	.endr
	s_sub_u32 s6, s6, 1
	s_cmp_lg_u32 s6, 0
	s_cbranch_scc1 .Lf64_dep_round
	s_memtime s[10:11]
	s_waitcnt lgkmcnt(0)
	s_sub_u32 s10, s10, s8
	s_subb_u32 s11, s11, s9
	v_lshrrev_b32_e32 v6, 6, v0
	v_readfirstlane_b32 s13, v6
	s_lshl_b32 s12, s2, 4
	s_add_u32 s12, s12, s13
	s_lshl_b32 s12, s12, 3
	v_mov_b32_e32 v6, s12
	v_mov_b32_e32 v4, s10
	v_mov_b32_e32 v5, s11
	global_store_dwordx2 v6, v[4:5], s[4:5]
	s_endpgm
.Lf64_dep_end:
	.size	f64_dep, .Lf64_dep_end-f64_dep

// trans_dep: a dependent chain of v_exp_f32 (a transcendental), 32 instructions per round.
	.globl	trans_dep
	.p2align	8
	.type	trans_dep,@function
trans_dep:
	s_load_dwordx2 s[4:5], s[0:1], 0x0
	s_load_dword s6, s[0:1], 0x8
	v_mov_b32_e32 v1, 0
	s_waitcnt lgkmcnt(0)
	s_memtime s[8:9]
.Ltrans_dep_round:
	.rept 32
	v_exp_f32_e32 v1, v1
	.endr
	s_sub_u32 s6, s6, 1
	s_cmp_lg_u32 s6, 0
	s_cbranch_scc1 .Ltrans_dep_round
	s_memtime s[10:11]
	s_waitcnt lgkmcnt(0)
	s_sub_u32 s10, s10, s8
	s_subb_u32 s11, s11, s9
	v_lshrrev_b32_e32 v6, 6, v0
	v_readfirstlane_b32 s13, v6
	s_lshl_b32 s12, s2, 4
	s_add_u32 s12, s12, s13
	s_lshl_b32 s12, s12, 3
	v_mov_b32_e32 v6, s12
	v_mov_b32_e32 v4, s10
	v_mov_b32_e32 v5, s11
	global_store_dwordx2 v6, v[4:5], s[4:5]
	s_endpgm
.Ltrans_dep_end:
	.size	trans_dep, .Ltrans_dep_end-trans_dep

// mfma_dep: a dependent chain of v_mfma_f32_32x32x8f16 accumulating in a[0:15], 16 instructions per round.
	.globl	mfma_dep
	.p2align	8
	.type	mfma_dep,@function
mfma_dep:
	s_load_dwordx2 s[4:5], s[0:1], 0x0
	s_load_dword s6, s[0:1], 0x8
	v_mov_b32_e32 v2, 0x3c003c00
	v_mov_b32_e32 v3, 0x3c003c00
	v_mov_b32_e32 v4, 0x3c003c00
	v_mov_b32_e32 v5, 0x3c003c00
	v_accvgpr_write_b32 a0, 0
	v_accvgpr_write_b32 a1, 0
	v_accvgpr_write_b32 a2, 0
	v_accvgpr_write_b32 a3, 0
	v_accvgpr_write_b32 a4, 0
	v_accvgpr_write_b32 a5, 0
	v_accvgpr_write_b32 a6, 0
	v_accvgpr_write_b32 a7, 0
	v_accvgpr_write_b32 a8, 0
	v_accvgpr_write_b32 a9, 0
	v_accvgpr_write_b32 a10, 0
	v_accvgpr_write_b32 a11, 0
	v_accvgpr_write_b32 a12, 0
	v_accvgpr_write_b32 a13, 0
	v_accvgpr_write_b32 a14, 0
	v_accvgpr_write_b32 a15, 0
	s_waitcnt lgkmcnt(0)
	s_memtime s[8:9]
.Lmfma_dep_round:
	.rept 16
	v_mfma_f32_32x32x8f16 a[0:15], v[2:3], v[4:5], a[0:15]
	.endr
	s_sub_u32 s6, s6, 1
	s_cmp_lg_u32 s6, 0
	s_cbranch_scc1 .Lmfma_dep_round
	s_memtime s[10:11]
	s_waitcnt lgkmcnt(0)
	s_sub_u32 s10, s10, s8
	s_subb_u32 s11, s11, s9
	v_lshrrev_b32_e32 v6, 6, v0
	v_readfirstlane_b32 s13, v6
	s_lshl_b32 s12, s2, 4
	s_add_u32 s12, s12, s13
	s_lshl_b32 s12, s12, 3
	v_mov_b32_e32 v6, s12
	v_mov_b32_e32 v4, s10
	v_mov_b32_e32 v5, s11
	global_store_dwordx2 v6, v[4:5], s[4:5]
	s_endpgm
.Lmfma_dep_end:
	.size	mfma_dep, .Lmfma_dep_end-mfma_dep

// mfma_f64_dep: a dependent chain of v_mfma_f64_16x16x4f64 accumulating in a[0:7], 16 instructions per round.
	.globl	mfma_f64_dep
	.p2align	8
	.type	mfma_f64_dep,@function
mfma_f64_dep:
	s_load_dwordx2 s[4:5], s[0:1], 0x0
	s_load_dword s6, s[0:1], 0x8
	v_mov_b32_e32 v2, 0
	v_mov_b32_e32 v3, 0x3ff00000
	v_mov_b32_e32 v4, 0
	v_mov_b32_e32 v5, 0x3ff00000
	v_accvgpr_write_b32 a0, 0
	v_accvgpr_write_b32 a1, 0
	v_accvgpr_write_b32 a2, 0
	v_accvgpr_write_b32 a3, 0
	v_accvgpr_write_b32 a4, 0
	v_accvgpr_write_b32 a5, 0
	v_accvgpr_write_b32 a6, 0
	v_accvgpr_write_b32 a7, 0
	s_waitcnt lgkmcnt(0)
	s_memtime s[8:9]
.Lmfma_f64_dep_round:
	.rept 16
	v_mfma_f64_16x16x4f64 a[0:7], v[2:3], v[4:5], a[0:7]
	.endr
	s_sub_u32 s6, s6, 1
	s_cmp_lg_u32 s6, 0
	s_cbranch_scc1 .Lmfma_f64_dep_round
	s_memtime s[10:11]
	s_waitcnt lgkmcnt(0)
	s_sub_u32 s10, s10, s8
	s_subb_u32 s11, s11, s9
	v_lshrrev_b32_e32 v6, 6, v0
	v_readfirstlane_b32 s13, v6
	s_lshl_b32 s12, s2, 4
	s_add_u32 s12, s12, s13
	s_lshl_b32 s12, s12, 3
	v_mov_b32_e32 v6, s12
	v_mov_b32_e32 v4, s10
	v_mov_b32_e32 v5, s11
	global_store_dwordx2 v6, v[4:5], s[4:5]
	s_endpgm
.Lmfma_f64_dep_end:
	.size	mfma_f64_dep, .Lmfma_f64_dep_end-mfma_f64_dep

	.rodata
	.p2align	6
	.amdhsa_kernel valu_dep
		.amdhsa_user_sgpr_kernarg_segment_ptr 1
		.amdhsa_next_free_vgpr 8
		.amdhsa_next_free_sgpr 16
		.amdhsa_accum_offset 8
		.amdhsa_kernarg_size 16
		.amdhsa_float_denorm_mode_32 3
	.end_amdhsa_kernel

	.p2align	6
	.amdhsa_kernel valu_indep
		.amdhsa_user_sgpr_kernarg_segment_ptr 1
		.amdhsa_next_free_vgpr 16
		.amdhsa_next_free_sgpr 16
		.amdhsa_accum_offset 8
		.amdhsa_kernarg_size 16
		.amdhsa_float_denorm_mode_32 3
	.end_amdhsa_kernel

	.p2align	6
	.amdhsa_kernel f64_dep
		.amdhsa_user_sgpr_kernarg_segment_ptr 1
		.amdhsa_next_free_vgpr 8
		.amdhsa_next_free_sgpr 16
		.amdhsa_accum_offset 8
		.amdhsa_kernarg_size 16
		.amdhsa_float_denorm_mode_32 3
	.end_amdhsa_kernel

	.p2align	6
	.amdhsa_kernel trans_dep
		.amdhsa_user_sgpr_kernarg_segment_ptr 1
		.amdhsa_next_free_vgpr 8
		.amdhsa_next_free_sgpr 16
		.amdhsa_accum_offset 8
		.amdhsa_kernarg_size 16
		.amdhsa_float_denorm_mode_32 3
	.end_amdhsa_kernel

	.p2align	6
	.amdhsa_kernel mfma_dep
		.amdhsa_user_sgpr_kernarg_segment_ptr 1
		.amdhsa_next_free_vgpr 24
		.amdhsa_next_free_sgpr 16
		.amdhsa_accum_offset 8
		.amdhsa_kernarg_size 16
		.amdhsa_float_denorm_mode_32 3
	.end_amdhsa_kernel

	.p2align	6
	.amdhsa_kernel mfma_f64_dep
		.amdhsa_user_sgpr_kernarg_segment_ptr 1
		.amdhsa_next_free_vgpr 16
		.amdhsa_next_free_sgpr 16
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
      - .offset:         8
        .size:           4
        .value_kind:     by_value
    .group_segment_fixed_size: 0
    .kernarg_segment_align: 8
    .kernarg_segment_size: 16
    .max_flat_workgroup_size: 1024
    .name:           valu_dep
    .private_segment_fixed_size: 0
    .sgpr_count:     16
    .symbol:         valu_dep.kd
    .vgpr_count:     8
    .wavefront_size: 64
  - .args:
      - .address_space:  global
        .offset:         0
        .size:           8
        .value_kind:     global_buffer
      - .offset:         8
        .size:           4
        .value_kind:     by_value
    .group_segment_fixed_size: 0
    .kernarg_segment_align: 8
    .kernarg_segment_size: 16
    .max_flat_workgroup_size: 1024
    .name:           valu_indep
    .private_segment_fixed_size: 0
    .sgpr_count:     16
    .symbol:         valu_indep.kd
    .vgpr_count:     16
    .wavefront_size: 64
  - .args:
      - .address_space:  global
        .offset:         0
        .size:           8
        .value_kind:     global_buffer
      - .offset:         8
        .size:           4
        .value_kind:     by_value
    .group_segment_fixed_size: 0
    .kernarg_segment_align: 8
    .kernarg_segment_size: 16
    .max_flat_workgroup_size: 1024
    .name:           f64_dep
    .private_segment_fixed_size: 0
    .sgpr_count:     16
    .symbol:         f64_dep.kd
    .vgpr_count:     8
    .wavefront_size: 64
  - .args:
      - .address_space:  global
        .offset:         0
        .size:           8
        .value_kind:     global_buffer
      - .offset:         8
        .size:           4
        .value_kind:     by_value
    .group_segment_fixed_size: 0
    .kernarg_segment_align: 8
    .kernarg_segment_size: 16
    .max_flat_workgroup_size: 1024
    .name:           trans_dep
    .private_segment_fixed_size: 0
    .sgpr_count:     16
    .symbol:         trans_dep.kd
    .vgpr_count:     8
    .wavefront_size: 64
  - .args:
      - .address_space:  global
        .offset:         0
        .size:           8
        .value_kind:     global_buffer
      - .offset:         8
        .size:           4
        .value_kind:     by_value
    .group_segment_fixed_size: 0
    .kernarg_segment_align: 8
    .kernarg_segment_size: 16
    .max_flat_workgroup_size: 1024
    .name:           mfma_dep
    .private_segment_fixed_size: 0
    .sgpr_count:     16
    .symbol:         mfma_dep.kd
    .vgpr_count:     24
    .wavefront_size: 64
  - .args:
      - .address_space:  global
        .offset:         0
        .size:           8
        .value_kind:     global_buffer
      - .offset:         8
        .size:           4
        .value_kind:     by_value
    .group_segment_fixed_size: 0
    .kernarg_segment_align: 8
    .kernarg_segment_size: 16
    .max_flat_workgroup_size: 1024
    .name:           mfma_f64_dep
    .private_segment_fixed_size: 0
    .sgpr_count:     16
    .symbol:         mfma_f64_dep.kd
    .vgpr_count:     16
    .wavefront_size: 64
amdhsa.target:   amdgcn-amd-amdhsa--@TARGET@
amdhsa.version:
  - 1
  - 2
...
	.end_amdgpu_metadata

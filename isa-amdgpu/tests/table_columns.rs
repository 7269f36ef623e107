//! The table's operation columns (flow, memory access, atomic, arithmetic kind, compare, MFMA shape, types)
//! against facts from AMD's CDNA2/CDNA3 ISA guides, so the engine, the JIT, the timing model and the profiler
//! can read them instead of mnemonics.

use isa_amdgpu::constants::{inline_float, inline_int, inline_value, FloatWidth};
use isa_amdgpu::table::{
    rows_of, ArithKind, AtomicOp, CmpPred, DataType, FlowControl, MemDir, MemFlags, OpInfo, Target, Unit,
};
use isa_amdgpu::{Opcode, GFX9};

fn row(name: &str) -> &'static OpInfo {
    GFX9.iter()
        .find(|r| r.name == name || r.name.strip_suffix("_e32").or_else(|| r.name.strip_suffix("_e64")) == Some(name))
        .unwrap_or_else(|| panic!("no row {name}"))
}

#[test]
fn unit_names_are_the_unit_column_as_written_and_all_is_in_declaration_order() {
    let tsv = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/data/gfx9.tsv")).unwrap();
    let lines: Vec<&str> = tsv.lines().filter(|l| !l.starts_with('#') && !l.is_empty()).collect();
    assert_eq!(lines.len(), GFX9.len());
    for (r, line) in GFX9.iter().zip(&lines) {
        assert_eq!(r.unit.name(), line.split('\t').nth(13).unwrap(), "{}", r.name);
    }
    for (i, u) in Unit::ALL.iter().enumerate() {
        assert_eq!(*u as usize, i, "{u:?}");
    }
    assert!(Unit::Valu.is_vector() && Unit::Flat.is_vector() && !Unit::Salu.is_vector() && !Unit::Smem.is_vector());
}

#[test]
fn control_flow_of_branches_calls_and_ends() {
    assert_eq!(row("s_branch").flow, FlowControl::Branch);
    for n in ["s_cbranch_scc0", "s_cbranch_vccnz", "s_cbranch_execz"] {
        assert_eq!(row(n).flow, FlowControl::CondBranch, "{n}");
    }
    assert_eq!(row("s_setpc_b64").flow, FlowControl::Jump);
    assert_eq!(row("s_swappc_b64").flow, FlowControl::Call);
    assert_eq!(row("s_endpgm").flow, FlowControl::End);
    assert_eq!(row("s_barrier").flow, FlowControl::Barrier);
    assert_eq!(row("ds_gws_barrier").flow, FlowControl::Barrier);
    assert_eq!(row("s_trap").flow, FlowControl::Trap);
    for n in [
        "s_add_u32",
        "v_add_f32",
        "s_waitcnt",
        "s_getpc_b64",
        "global_load_dword",
    ] {
        assert_eq!(row(n).flow, FlowControl::Next, "{n}");
    }
}

#[test]
fn memory_access_direction_size_and_details() {
    let m = row("global_load_sbyte_d16_hi").mem;
    assert_eq!((m.dir, m.bytes), (MemDir::Load, 1));
    assert!(m.flags.contains(MemFlags::SIGNED) && m.flags.contains(MemFlags::D16_HI));
    let m = row("global_store_dwordx4").mem;
    assert_eq!((m.dir, m.bytes, m.flags), (MemDir::Store, 16, MemFlags::NONE));
    let m = row("ds_read2st64_b64").mem;
    assert_eq!((m.dir, m.bytes), (MemDir::Load, 8));
    assert!(m.flags.contains(MemFlags::TWO_ADDR) && m.flags.contains(MemFlags::STRIDE64));
    let m = row("ds_add_rtn_u32").mem;
    assert_eq!((m.dir, m.bytes), (MemDir::Atomic, 4));
    assert!(m.flags.contains(MemFlags::RETURNS));
    assert!(!row("ds_add_u32").mem.flags.contains(MemFlags::RETURNS));
    assert_eq!(row("s_load_dwordx16").mem.bytes, 64);
    assert!(row("s_buffer_load_dword").mem.flags.contains(MemFlags::BUFFER));
    let m = row("buffer_load_format_d16_xyzw").mem;
    assert_eq!(m.bytes, 8);
    assert!(m.flags.contains(MemFlags::FORMAT) && m.flags.contains(MemFlags::D16_LO));
    assert!(row("global_load_lds_ubyte").mem.flags.contains(MemFlags::TO_LDS));
    // cross-lane DS instructions and cache control move no data
    for n in [
        "ds_swizzle_b32",
        "ds_bpermute_b32",
        "buffer_wbinvl1",
        "s_dcache_inv",
        "ds_gws_barrier",
        "s_memtime",
    ] {
        assert_eq!(row(n).mem.dir, MemDir::None, "{n}");
    }
    assert!(row("flat_atomic_cmpswap_x2").mem.writes() && row("scratch_store_short").mem.writes());
    assert!(!row("scratch_load_ushort").mem.writes());
}

#[test]
fn atomics_name_their_operation() {
    assert_eq!(row("ds_max_rtn_i32").atomic, Some(AtomicOp::SMax));
    assert_eq!(row("ds_wrxchg_rtn_b64").atomic, Some(AtomicOp::Swap));
    assert_eq!(row("ds_cmpst_b32").atomic, Some(AtomicOp::CmpSwap));
    assert_eq!(row("global_atomic_umin_x2").atomic, Some(AtomicOp::UMin));
    assert_eq!(row("global_atomic_add_f64").atomic, Some(AtomicOp::AddF64));
    assert_eq!(row("global_atomic_add_f64").mem.bytes, 8);
    assert_eq!(row("buffer_atomic_pk_add_f16").atomic, Some(AtomicOp::PkAddF16));
    assert_eq!(row("s_atomic_dec_x2").atomic, Some(AtomicOp::Dec));
    assert_eq!(row("global_load_dword").atomic, None);
}

#[test]
fn arithmetic_kinds_as_counters_class_them() {
    let a = |n| row(n).arith.map(|a| (a.kind, a.ty));
    assert_eq!(a("v_fma_f32"), Some((ArithKind::Fma, DataType::F32)));
    assert_eq!(a("v_fmac_f64"), Some((ArithKind::Fma, DataType::F64)));
    assert_eq!(a("v_pk_fma_f16"), Some((ArithKind::Fma, DataType::F16)));
    assert_eq!(a("v_subrev_f16"), Some((ArithKind::Add, DataType::F16)));
    assert_eq!(a("v_mul_f64"), Some((ArithKind::Mul, DataType::F64)));
    assert_eq!(a("v_rsq_f32"), Some((ArithKind::Trans, DataType::F32)));
    assert_eq!(a("v_mfma_f32_32x32x8f16"), Some((ArithKind::Mfma, DataType::F16)));
    assert_eq!(a("v_add_u32"), None);
    assert_eq!(a("v_cvt_f32_f16"), None);
}

#[test]
fn compares_name_predicate_and_type() {
    let c = |n| row(n).compare.map(|c| (c.pred, c.ty));
    assert_eq!(c("v_cmp_class_f16"), Some((CmpPred::Class, DataType::F16)));
    assert_eq!(c("v_cmpx_nlt_f64"), Some((CmpPred::Nlt, DataType::F64)));
    assert_eq!(c("v_cmp_ne_u32"), Some((CmpPred::Ne, DataType::U32)));
    assert_eq!(c("v_cmp_t_i64"), Some((CmpPred::Tru, DataType::I64)));
    assert_eq!(c("s_cmp_lg_u32"), Some((CmpPred::Ne, DataType::U32)));
    assert_eq!(c("s_cmpk_ge_i32"), Some((CmpPred::Ge, DataType::I32)));
    assert_eq!(c("v_cmp_lg_f32"), Some((CmpPred::Lg, DataType::F32)));
    assert_eq!(c("s_bitcmp1_b32"), None);
}

#[test]
fn mfma_shapes_and_blocks() {
    // (m, n, k, blocks, input), from the CDNA2/CDNA3 ISA guides' MFMA tables
    let cases = [
        ("v_mfma_f32_32x32x8f16", (32, 32, 8, 1, DataType::F16)),
        ("v_mfma_f32_32x32x4f16", (32, 32, 4, 2, DataType::F16)),
        ("v_mfma_f32_16x16x4f16", (16, 16, 4, 4, DataType::F16)),
        ("v_mfma_f32_4x4x4f16", (4, 4, 4, 16, DataType::F16)),
        ("v_mfma_f32_32x32x1f32", (32, 32, 1, 2, DataType::F32)),
        ("v_mfma_f32_32x32x2bf16", (32, 32, 2, 2, DataType::Bf16)),
        ("v_mfma_f32_32x32x4bf16_1k", (32, 32, 4, 2, DataType::Bf16)),
        ("v_mfma_f64_4x4x4f64", (4, 4, 4, 4, DataType::F64)),
        ("v_mfma_i32_32x32x8i8", (32, 32, 8, 1, DataType::I8)),
        ("v_mfma_i32_32x32x16_i8", (32, 32, 16, 1, DataType::I8)),
        ("v_mfma_f32_16x16x32_fp8_bf8", (16, 16, 32, 1, DataType::Fp8Bf8)),
        ("v_mfma_f32_16x16x8_xf32", (16, 16, 8, 1, DataType::Xf32)),
    ];
    for (n, (m, nn, k, blocks, input)) in cases {
        let s = row(n).mfma.unwrap_or_else(|| panic!("{n} has no shape"));
        assert_eq!(
            (s.m, s.n, s.k, s.blocks, s.input, s.sparse),
            (m, nn, k, blocks, input, false),
            "{n}"
        );
    }
    assert!(row("v_smfmac_f32_16x16x32_f16").mfma.is_some_and(|s| s.sparse));
    // every MFMA of every target has a shape (gfx950's v_mfma_ld_scale_b32 only hands the next one its scales)
    for t in Target::ALL {
        for op in Opcode::ALL {
            for r in rows_of(*op, t) {
                let mfma = r.name.contains("mfma") && r.name != "v_mfma_ld_scale_b32";
                assert_eq!(r.mfma.is_some(), mfma, "{}", r.name);
            }
        }
    }
}

#[test]
fn result_and_source_types() {
    let t = |n| (row(n).dst_type, row(n).src_type);
    assert_eq!(t("v_cvt_f32_f16"), (Some(DataType::F32), Some(DataType::F16)));
    assert_eq!(t("v_add_f32"), (Some(DataType::F32), Some(DataType::F32)));
    assert_eq!(t("v_mad_u64_u32"), (Some(DataType::U64), Some(DataType::U32)));
    assert_eq!(t("v_cvt_i32_f64"), (Some(DataType::I32), Some(DataType::F64)));
    assert_eq!(t("s_nop"), (None, None));
}

#[test]
fn inline_constants_in_every_width() {
    assert_eq!(inline_int(128), Some(0));
    assert_eq!(inline_int(192), Some(64));
    assert_eq!(inline_int(193), Some(-1));
    assert_eq!(inline_int(208), Some(-16));
    assert_eq!(inline_int(209), None);
    assert_eq!(inline_float(242, FloatWidth::F32), Some(0x3f80_0000));
    assert_eq!(inline_float(242, FloatWidth::F16), Some(0x3c00));
    assert_eq!(inline_float(247, FloatWidth::F64), Some(0xc010_0000_0000_0000));
    assert_eq!(
        f32::from_bits(inline_float(248, FloatWidth::F32).unwrap() as u32),
        (0.5 / std::f64::consts::PI) as f32
    );
    assert_eq!(inline_value(200, FloatWidth::F32), Some(-8i64 as u64));
    assert_eq!(inline_value(249, FloatWidth::F32), None);
}

//! Single-instruction semantics through the encoder, the decoder and the interpreter: scalar arithmetic
//! flags against Rust's own overflow arithmetic.

use emu_core::interp::Interp;
use emu_core::memory::DeviceMemory;
use emu_core::sem::{execute, Flow};
use emu_core::wave::WaveState;
use isa_amdgpu::table::rows_of;
use isa_amdgpu::{decode, Field, Opcode, Target};

/// Builds one instruction of `op` in `enc` on `target` from field values, runs it on a fresh wave prepared by
/// `setup`, and returns the wave.
fn run_one(
    op: Opcode,
    enc: isa_amdgpu::Encoding,
    target: Target,
    fields: &[(Field, u32)],
    setup: impl FnOnce(&mut WaveState),
) -> WaveState {
    let row = rows_of(op, target).find(|r| r.encoding == enc).unwrap();
    let mut builder = isa_amdgpu::Inst::build(row, target).unwrap();
    for &(f, v) in fields {
        builder = builder.set(f, v).unwrap();
    }
    let bytes = builder.encode().unwrap();
    let inst = decode(&bytes, 0, target).unwrap();
    let mem = DeviceMemory::new(1 << 20).unwrap();
    let mut w = WaveState::new(0, 4, 0);
    setup(&mut w);
    let mut lds = [0u8; 0];
    let mut interp = Interp {
        wave: &mut w,
        mem: &mem,
        lds: &mut lds,
        mnemonic: "t",
        accesses: None,
    };
    assert_eq!(execute(&mut interp, &inst, 0).unwrap(), Flow::Next);
    w
}

/// Executes `op sdst=s0, ssrc0=s1, ssrc1=s2` and returns (s0, scc).
fn sop2(op: Opcode, a: u32, b: u32, scc_in: bool) -> (u32, bool) {
    let fields = [(Field::Sdst, 0), (Field::Ssrc0, 1), (Field::Ssrc1, 2)];
    let w = run_one(op, isa_amdgpu::Encoding::Sop2, Target::Gfx942, &fields, |w| {
        w.sgprs[1] = a;
        w.sgprs[2] = b;
        w.scc = scc_in;
    });
    (w.sgprs[0], w.scc)
}

#[test]
fn scalar_add_and_sub_set_scc_as_carry_borrow_or_signed_overflow() {
    let samples = [
        0u32,
        1,
        2,
        0x7fff_ffff,
        0x8000_0000,
        0xffff_fffe,
        0xffff_ffff,
        12345,
        0xdead_beef,
    ];
    for &a in &samples {
        for &b in &samples {
            let (r, c) = a.overflowing_add(b);
            assert_eq!(sop2(Opcode::SAddU32, a, b, false), (r, c), "s_add_u32 {a:#x} {b:#x}");
            let (r, o) = (a as i32).overflowing_add(b as i32);
            assert_eq!(
                sop2(Opcode::SAddI32, a, b, false),
                (r as u32, o),
                "s_add_i32 {a:#x} {b:#x}"
            );
            let (r, o) = (a as i32).overflowing_sub(b as i32);
            assert_eq!(
                sop2(Opcode::SSubI32, a, b, false),
                (r as u32, o),
                "s_sub_i32 {a:#x} {b:#x}"
            );
            let (r, borrow) = a.overflowing_sub(b);
            assert_eq!(
                sop2(Opcode::SSubU32, a, b, false),
                (r, borrow),
                "s_sub_u32 {a:#x} {b:#x}"
            );
            let wide = a as u64 + b as u64 + 1;
            assert_eq!(
                sop2(Opcode::SAddcU32, a, b, true),
                (wide as u32, wide >> 32 == 1),
                "s_addc_u32 {a:#x} {b:#x}"
            );
        }
    }
}

/// Executes a VOP3 `op vdst=v0, src0=v1, src1=v2` with the given neg/abs bits on every lane.
fn vop3(op: Opcode, a: f32, b: f32, neg: u32, abs: u32) -> f32 {
    let fields = [
        (Field::Vdst, 0),
        (Field::Src0, 257),
        (Field::Src1, 258),
        (Field::Neg, neg),
        (Field::Abs, abs),
    ];
    let w = run_one(op, isa_amdgpu::Encoding::Vop3, Target::Gfx90a, &fields, |w| {
        w.vgprs[1] = [a.to_bits(); 64];
        w.vgprs[2] = [b.to_bits(); 64];
        w.set_exec(u64::MAX);
    });
    f32::from_bits(w.vgprs[0][17])
}

#[test]
fn vop3_neg_and_abs_input_modifiers() {
    assert_eq!(vop3(Opcode::VAddF32, 1.5, -4.0, 0b00, 0b00), -2.5);
    assert_eq!(vop3(Opcode::VAddF32, 1.5, -4.0, 0b01, 0b00), -5.5, "-a + b");
    assert_eq!(vop3(Opcode::VAddF32, 1.5, -4.0, 0b00, 0b10), 5.5, "a + |b|");
    assert_eq!(vop3(Opcode::VAddF32, 1.5, -4.0, 0b10, 0b10), -2.5, "a + -|b|");
    assert_eq!(vop3(Opcode::VMulF32, -3.0, 2.0, 0b11, 0b01), 6.0, "-|a| * -b");
}

/// Executes a three-source VOP3 `op v0, v1, v2, v3` on one lane's values.
fn vop3_3(op: Opcode, a: u32, b: u32, c: u32) -> u32 {
    let fields = [
        (Field::Vdst, 0),
        (Field::Src0, 257),
        (Field::Src1, 258),
        (Field::Src2, 259),
    ];
    let w = run_one(op, isa_amdgpu::Encoding::Vop3, Target::Gfx942, &fields, |w| {
        w.vgprs[1] = [a; 64];
        w.vgprs[2] = [b; 64];
        w.vgprs[3] = [c; 64];
        w.set_exec(1);
    });
    w.vgprs[0][0]
}

#[test]
fn bit_field_extract_and_insert() {
    let x = 0xF0F0_A5C3u32;
    for off in [0u32, 4, 13, 31, 36] {
        for width in [0u32, 1, 5, 16, 31, 33] {
            let (o, w) = (off & 31, width & 31);
            let field = if w == 0 { 0 } else { (x >> o) & ((1u64 << w) - 1) as u32 };
            // the ISA: tmp = (S0.i32 >> offset) & mask, sign-extended from bit width - 1 (an arithmetic shift)
            let sfield = if w == 0 {
                0
            } else {
                ((x as i32) >> o) as u32 & ((1u64 << w) - 1) as u32
            };
            let signed = if w == 0 {
                0
            } else {
                ((sfield << (32 - w)) as i32 >> (32 - w)) as u32
            };
            assert_eq!(
                vop3_3(Opcode::VBfeU32, x, off, width),
                field,
                "bfe_u32 off {off} width {width}"
            );
            assert_eq!(
                vop3_3(Opcode::VBfeI32, x, off, width),
                signed,
                "bfe_i32 off {off} width {width}"
            );
        }
    }
    assert_eq!(
        vop3_3(Opcode::VBfeI32, 0x8000_0000, 24, 16),
        0xffff_ff80,
        "a field reaching past bit 31"
    );
    assert_eq!(
        vop3_3(Opcode::VBfiB32, 0x0000_ffff, 0x1234_5678, 0xabcd_ef01),
        0xabcd_5678
    );
    assert_eq!(
        vop3_3(Opcode::VMadU32U24, 0xff00_0003, 5, 7),
        22,
        "only the low 24 bits multiply"
    );
}

#[test]
fn mbcnt_lo_then_hi_give_each_lane_its_index() {
    // v_mbcnt_lo_u32_b32 v1, -1, 0 ; v_mbcnt_hi_u32_b32 v0, -1, v1 (VOP3 forms, as compilers emit them)
    let lo = run_one(
        Opcode::VMbcntLoU32B32,
        isa_amdgpu::Encoding::Vop3,
        Target::Gfx90a,
        &[(Field::Vdst, 1), (Field::Src0, 193), (Field::Src1, 128)],
        |w| w.set_exec(u64::MAX),
    );
    for l in 0..64 {
        assert_eq!(lo.vgprs[1][l], l.min(32) as u32, "lo, lane {l}");
    }
    let hi = run_one(
        Opcode::VMbcntHiU32B32,
        isa_amdgpu::Encoding::Vop3,
        Target::Gfx90a,
        &[(Field::Vdst, 0), (Field::Src0, 193), (Field::Src1, 257)],
        |w| {
            w.vgprs[1] = lo.vgprs[1];
            w.set_exec(u64::MAX);
        },
    );
    for l in 0..64 {
        assert_eq!(hi.vgprs[0][l], l as u32, "hi, lane {l}");
    }
}

#[test]
fn scalar_high_multiplies_and_64_bit_shifts() {
    for &(a, b) in &[
        (0xffff_ffffu32, 0xffff_ffffu32),
        (0x8000_0000, 2),
        (12345, 67890),
        (0x7fff_ffff, 0x8000_0001),
    ] {
        assert_eq!(
            sop2(Opcode::SMulHiU32, a, b, false).0,
            ((a as u64 * b as u64) >> 32) as u32
        );
        assert_eq!(
            sop2(Opcode::SMulHiI32, a, b, false).0,
            ((a as i32 as i64 * b as i32 as i64) >> 32) as u32
        );
    }
    // s_lshr_b64 / s_ashr_i64 s[0:1], s[2:3], s4
    for (op, signed) in [(Opcode::SLshrB64, false), (Opcode::SAshrI64, true)] {
        for shift in [0u32, 1, 31, 32, 33, 63, 64 + 5] {
            let x = 0x8123_4567_89ab_cdefu64;
            let fields = [(Field::Sdst, 0), (Field::Ssrc0, 2), (Field::Ssrc1, 4)];
            let w = run_one(op, isa_amdgpu::Encoding::Sop2, Target::Gfx942, &fields, |w| {
                w.sgprs[2] = x as u32;
                w.sgprs[3] = (x >> 32) as u32;
                w.sgprs[4] = shift;
            });
            let want = if signed {
                ((x as i64) >> (shift & 63)) as u64
            } else {
                x >> (shift & 63)
            };
            assert_eq!((w.sgprs[1] as u64) << 32 | w.sgprs[0] as u64, want, "{op:?} by {shift}");
            assert_eq!(w.scc, want != 0);
        }
    }
}

/// v_pk_fma_f32 v[0:1], v[2:3], v[4:5], v[6:7] with op_sel / op_sel_hi / neg bits, lane 0.
fn pk_fma(opsel: u32, opsel_hi: u32, neg_lo: u32, neg_hi: u32) -> (f32, f32) {
    let fields = [
        (Field::Vdst, 0),
        (Field::Src0, 258),
        (Field::Src1, 260),
        (Field::Src2, 262),
        (Field::OpSel, opsel),
        (Field::OpSelHi, opsel_hi & 3),
        (Field::OpSelHi2, opsel_hi >> 2),
        (Field::Neg, neg_lo),
        (Field::NegHi, neg_hi),
    ];
    let w = run_one(
        Opcode::VPkFmaF32,
        isa_amdgpu::Encoding::Vop3p,
        Target::Gfx90a,
        &fields,
        |w| {
            w.vgprs.resize(8, [0; 64]);
            for (r, v) in [(2, 2.0f32), (3, 3.0), (4, 5.0), (5, 7.0), (6, 0.5), (7, 0.25)] {
                w.vgprs[r] = [v.to_bits(); 64];
            }
            w.set_exec(1);
        },
    );
    (f32::from_bits(w.vgprs[0][0]), f32::from_bits(w.vgprs[1][0]))
}

#[test]
fn packed_f32_fma_selects_halves_and_negates_per_element() {
    // defaults: op_sel = [0,0,0], op_sel_hi = [1,1,1]: lo = a.lo*b.lo + c.lo, hi = a.hi*b.hi + c.hi
    assert_eq!(pk_fma(0, 0b111, 0, 0), (2.0 * 5.0 + 0.5, 3.0 * 7.0 + 0.25));
    // swap the halves of a, and negate b in the low element and c in the high one
    assert_eq!(pk_fma(0b001, 0b110, 0b010, 0b100), (3.0 * -5.0 + 0.5, 2.0 * 7.0 - 0.25));
}

#[test]
fn packed_f32_inline_constants_are_32_bit_values() {
    // v_pk_mul_f32 v[0:1], v[2:3], 0.5 op_sel_hi:[1,0]: what clang emits for `v * 0.5f` on a float pair; the
    // constant is 0.5f in the low dword, selected for both elements
    let fields = [
        (Field::Vdst, 0),
        (Field::Src0, 258),
        (Field::Src1, 240),
        (Field::OpSel, 0),
        (Field::OpSelHi, 0b01),
        (Field::OpSelHi2, 0),
    ];
    let w = run_one(
        Opcode::VPkMulF32,
        isa_amdgpu::Encoding::Vop3p,
        Target::Gfx90a,
        &fields,
        |w| {
            w.vgprs.resize(4, [0; 64]);
            w.vgprs[2] = [6.0f32.to_bits(); 64];
            w.vgprs[3] = [(-3.0f32).to_bits(); 64];
            w.set_exec(1);
        },
    );
    assert_eq!(
        (f32::from_bits(w.vgprs[0][0]), f32::from_bits(w.vgprs[1][0])),
        (3.0, -1.5)
    );
}

/// Executes a VOP1 `op v0, v1` on one lane's value.
fn vop1(op: Opcode, a: u32) -> u32 {
    let fields = [(Field::Vdst, 0), (Field::Src0, 257)];
    let w = run_one(op, isa_amdgpu::Encoding::Vop1, Target::Gfx90a, &fields, |w| {
        w.vgprs[1] = [a; 64];
        w.set_exec(1);
    });
    w.vgprs[0][0]
}

#[test]
fn frexp_splits_normals_and_denormals_and_ffbh_ffbl_find_bits() {
    let samples = [
        1.0f32,
        -0.75,
        3.0e-39,
        -1.0e-45,
        6.5e7,
        f32::MAX,
        f32::MIN_POSITIVE,
        0.1,
    ];
    for x in samples {
        let mant = f32::from_bits(vop1(Opcode::VFrexpMantF32, x.to_bits()));
        let exp = vop1(Opcode::VFrexpExpI32F32, x.to_bits()) as i32;
        assert!(
            (0.5..1.0).contains(&mant.abs()) && mant.is_sign_negative() == x.is_sign_negative(),
            "{x}: {mant}"
        );
        assert_eq!(mant as f64 * 2f64.powi(exp), x as f64, "{x} = {mant} * 2^{exp}");
    }
    assert!(f32::from_bits(vop1(Opcode::VFrexpMantF32, f32::NAN.to_bits())).is_nan());
    assert_eq!(vop1(Opcode::VFrexpExpI32F32, f32::INFINITY.to_bits()), 0);
    for x in [0u32, 1, 0x8000_0000, 0x0001_0000, 0xffff_ffff, 0x0000_0300] {
        let want_h = if x == 0 { u32::MAX } else { x.leading_zeros() };
        let want_l = if x == 0 { u32::MAX } else { x.trailing_zeros() };
        assert_eq!(
            (vop1(Opcode::VFfbhU32, x), vop1(Opcode::VFfblB32, x)),
            (want_h, want_l),
            "{x:#x}"
        );
    }
}

#[test]
fn alignbit_shifts_a_64_bit_pair_and_ldexp_scales_by_powers_of_two() {
    for (hi, lo) in [(0x1234_5678u32, 0x9abc_def0u32), (0xffff_ffff, 0), (0, 0xffff_ffff)] {
        for sh in [0u32, 1, 8, 31, 32, 45] {
            let want = ((((hi as u64) << 32) | lo as u64) >> (sh & 31)) as u32;
            assert_eq!(
                vop3_3(Opcode::VAlignbitB32, hi, lo, sh),
                want,
                "{hi:#x}:{lo:#x} >> {sh}"
            );
        }
    }
    let ldexp = |x: f32, e: i32| {
        let fields = [(Field::Vdst, 0), (Field::Src0, 257), (Field::Src1, 258)];
        let w = run_one(
            Opcode::VLdexpF32,
            isa_amdgpu::Encoding::Vop3,
            Target::Gfx90a,
            &fields,
            |w| {
                w.vgprs[1] = [x.to_bits(); 64];
                w.vgprs[2] = [e as u32; 64];
                w.set_exec(1);
            },
        );
        f32::from_bits(w.vgprs[0][0])
    };
    assert_eq!(ldexp(1.5, 3), 12.0);
    assert_eq!(ldexp(1.0, -149).to_bits(), 1, "the smallest denormal");
    assert_eq!(ldexp(1.0, 128), f32::INFINITY);
    assert_eq!(ldexp(-3.0, -1000), -0.0);
    assert_eq!(ldexp(f32::MIN_POSITIVE, i32::MAX), f32::INFINITY);
}

#[test]
fn s_cselect_picks_the_first_source_when_scc_is_set() {
    // LLVM selects with `s_cselect_b32 dst, true_value, false_value` after an SCC-setting compare
    for scc in [true, false] {
        assert_eq!(
            sop2(Opcode::SCselectB32, 11, 22, scc).0,
            if scc { 11 } else { 22 },
            "scc {scc}"
        );
        let fields = [(Field::Sdst, 0), (Field::Ssrc0, 2), (Field::Ssrc1, 4)];
        let w = run_one(
            Opcode::SCselectB64,
            isa_amdgpu::Encoding::Sop2,
            Target::Gfx942,
            &fields,
            |w| {
                w.sgprs[2..6].copy_from_slice(&[1, 2, 3, 4]);
                w.scc = scc;
            },
        );
        assert_eq!(w.sgprs[0..2], if scc { [1, 2] } else { [3, 4] }, "scc {scc}");
    }
}

/// Executes a SOP1 `op s0, s1` and returns (s0, scc).
fn sop1(op: Opcode, a: u32) -> (u32, bool) {
    let fields = [(Field::Sdst, 0), (Field::Ssrc0, 1)];
    let w = run_one(op, isa_amdgpu::Encoding::Sop1, Target::Gfx90a, &fields, |w| {
        w.sgprs[1] = a;
        w.scc = true;
    });
    (w.sgprs[0], w.scc)
}

#[test]
fn scalar_min_max_not_ff1_bfe_and_compare_with_immediate() {
    let samples = [
        0u32,
        1,
        7,
        0x7fff_ffff,
        0x8000_0000,
        0xffff_fff0,
        0xffff_ffff,
        0x0012_3400,
    ];
    for &a in &samples {
        for &c in &samples {
            assert_eq!(
                sop2(Opcode::SMinU32, a, c, false),
                (a.min(c), a < c),
                "s_min_u32 {a:#x} {c:#x}"
            );
            assert_eq!(
                sop2(Opcode::SMaxU32, a, c, false),
                (a.max(c), a > c),
                "s_max_u32 {a:#x} {c:#x}"
            );
            let (x, y) = (a as i32, c as i32);
            assert_eq!(
                sop2(Opcode::SMinI32, a, c, false),
                (x.min(y) as u32, x < y),
                "s_min_i32 {a:#x} {c:#x}"
            );
            assert_eq!(
                sop2(Opcode::SMaxI32, a, c, false),
                (x.max(y) as u32, x > y),
                "s_max_i32 {a:#x} {c:#x}"
            );
            // s_bfe_u32: offset in bits 4:0, width in bits 22:16 of the second operand
            let (off, width) = (c & 31, (c >> 16) & 0x7f);
            let want = if width == 0 {
                0
            } else if width >= 32 {
                a >> off
            } else {
                (a >> off) & ((1 << width) - 1)
            };
            assert_eq!(
                sop2(Opcode::SBfeU32, a, c, false),
                (want, want != 0),
                "s_bfe_u32 {a:#x} {c:#x}"
            );
        }
        assert_eq!(sop1(Opcode::SNotB32, a), (!a, !a != 0), "s_not_b32 {a:#x}");
        let ff1 = if a == 0 { u32::MAX } else { a.trailing_zeros() };
        assert_eq!(sop1(Opcode::SFf1I32B32, a).0, ff1, "s_ff1_i32_b32 {a:#x}");
    }
    for (sdst, imm) in [
        (5u32, 6u32),
        (6, 6),
        (7, 6),
        (0xffff_ffff, 0xffff),
        (0x8000_0000, 0x8000),
    ] {
        let cmpk = |op: Opcode| {
            let fields = [(Field::Sdst, 3), (Field::Simm16, imm)];
            run_one(op, isa_amdgpu::Encoding::Sopk, Target::Gfx90a, &fields, |w| {
                w.sgprs[3] = sdst
            })
            .scc
        };
        let (si, ii) = (sdst as i32, imm as u16 as i16 as i32);
        assert_eq!(cmpk(Opcode::SCmpkLtU32), sdst < imm, "{sdst:#x} <u {imm:#x}");
        assert_eq!(cmpk(Opcode::SCmpkGeU32), sdst >= imm, "{sdst:#x} >=u {imm:#x}");
        assert_eq!(cmpk(Opcode::SCmpkGtI32), si > ii, "{si} >i {ii}");
        assert_eq!(cmpk(Opcode::SCmpkLeI32), si <= ii, "{si} <=i {ii}");
    }
}

#[test]
fn writelane_sets_one_lane_even_outside_exec() {
    for (lane, want) in [(0u32, 0usize), (5, 5), (37, 37), (63, 63), (64 + 3, 3)] {
        let fields = [(Field::Vdst, 0), (Field::Src0, 5), (Field::Src1, 6)];
        let w = run_one(
            Opcode::VWritelaneB32,
            isa_amdgpu::Encoding::Vop3,
            Target::Gfx90a,
            &fields,
            |w| {
                w.vgprs[0] = [7; 64];
                w.sgprs[5] = 0xabc;
                w.sgprs[6] = lane;
                w.set_exec(0);
            },
        );
        let mut expect = [7u32; 64];
        expect[want] = 0xabc;
        assert_eq!(w.vgprs[0], expect, "lane {lane}");
    }
}

#[test]
fn three_operand_shift_add_xor_combinations() {
    for (a, c, d) in [
        (0x1234_5678u32, 0xffff_0000u32, 9u32),
        (0xffff_ffff, 1, 0xffff_ffff),
        (3, 4, 5),
    ] {
        assert_eq!(vop3_3(Opcode::VXadU32, a, c, d), (a ^ c).wrapping_add(d), "v_xad_u32");
        assert_eq!(
            vop3_3(Opcode::VAdd3U32, a, c, d),
            a.wrapping_add(c).wrapping_add(d),
            "v_add3_u32"
        );
        assert_eq!(
            vop3_3(Opcode::VLshlAddU32, a, c & 31, d),
            (a << (c & 31)).wrapping_add(d),
            "v_lshl_add_u32"
        );
        assert_eq!(
            vop3_3(Opcode::VAddLshlU32, a, c, d & 31),
            a.wrapping_add(c) << (d & 31),
            "v_add_lshl_u32"
        );
        assert_eq!(vop3_3(Opcode::VAndOrB32, a, c, d), (a & c) | d, "v_and_or_b32");
    }
}

/// Executes a 64-bit SOP2 `op s[0:1], s[2:3], s4` and returns (s[0:1], scc).
fn sop2_64(op: Opcode, a: u64, c: u32) -> (u64, bool) {
    let fields = [(Field::Sdst, 0), (Field::Ssrc0, 2), (Field::Ssrc1, 4)];
    let w = run_one(op, isa_amdgpu::Encoding::Sop2, Target::Gfx90a, &fields, |w| {
        (w.sgprs[2], w.sgprs[3], w.sgprs[4]) = (a as u32, (a >> 32) as u32, c);
    });
    ((w.sgprs[1] as u64) << 32 | w.sgprs[0] as u64, w.scc)
}

#[test]
fn scalar_leading_bit_counts_and_64_bit_field_extracts_match_rust() {
    let samples = [
        0u32,
        1,
        2,
        0x7fff_ffff,
        0x8000_0000,
        0xffff_fffe,
        0xffff_ffff,
        0x0012_3400,
    ];
    for &a in &samples {
        let clz = if a == 0 { u32::MAX } else { a.leading_zeros() };
        assert_eq!(sop1(Opcode::SFlbitI32B32, a).0, clz, "s_flbit_i32_b32 {a:#x}");
        let v = a as i32;
        let cls = if v == 0 || v == -1 {
            u32::MAX
        } else {
            (v ^ (v >> 31)).leading_zeros()
        };
        assert_eq!(sop1(Opcode::SFlbitI32, a).0, cls, "s_flbit_i32 {a:#x}");
    }
    let values = [
        0u64,
        1,
        0x8000_0000_0000_0000,
        0xdead_beef_0bad_f00d,
        u64::MAX,
        0x0000_0123_4567_89ab,
    ];
    for &x in &values {
        for (off, width) in [(0u32, 0u32), (0, 64), (4, 8), (20, 32), (60, 4), (33, 31), (1, 63)] {
            let ctl = width << 16 | off;
            let field = if width == 0 {
                0
            } else {
                (x >> off) & (u64::MAX >> (64 - width))
            };
            let signed = if width == 0 {
                0
            } else {
                ((field << (64 - width)) as i64 >> (64 - width)) as u64
            };
            assert_eq!(
                sop2_64(Opcode::SBfeU64, x, ctl),
                (field, field != 0),
                "s_bfe_u64 {x:#x} {off} {width}"
            );
            assert_eq!(
                sop2_64(Opcode::SBfeI64, x, ctl),
                (signed, signed != 0),
                "s_bfe_i64 {x:#x} {off} {width}"
            );
        }
    }
}

#[test]
fn float_min_max_order_signed_zeros_and_skip_a_nan_operand() {
    let min = |a: f32, b: f32| vop3(Opcode::VMinF32, a, b, 0, 0);
    let max = |a: f32, b: f32| vop3(Opcode::VMaxF32, a, b, 0, 0);
    assert!(min(0.0, -0.0).is_sign_negative() && min(-0.0, 0.0).is_sign_negative());
    assert!(max(-0.0, 0.0).is_sign_positive() && max(0.0, -0.0).is_sign_positive());
    assert_eq!((min(f32::NAN, 2.0), max(3.0, f32::NAN)), (2.0, 3.0));
    assert!(min(f32::NAN, f32::NAN).is_nan());
    assert_eq!((min(-1.0, 5.0), max(-1.0, 5.0)), (-1.0, 5.0));
}

#[test]
fn atomic_operations_agree_with_rust_at_both_widths() {
    use emu_core::sem::AtomicOp as A;
    let samples = [
        0u64,
        1,
        5,
        0x7fff_ffff,
        0x8000_0000,
        0xffff_fffe,
        0xffff_ffff,
        0x1_0000_0000,
        0x8000_0000_0000_0001,
        u64::MAX,
    ];
    for &o in &samples {
        for &d in &samples {
            let (o32, d32) = (o as u32, d as u32);
            let cases32 = [
                (A::Add, o32.wrapping_add(d32)),
                (A::Sub, o32.wrapping_sub(d32)),
                (A::Rsub, d32.wrapping_sub(o32)),
                (A::SMin, (o32 as i32).min(d32 as i32) as u32),
                (A::SMax, (o32 as i32).max(d32 as i32) as u32),
                (A::UMin, o32.min(d32)),
                (A::Inc, if o32 >= d32 { 0 } else { o32 + 1 }),
                (A::Dec, if o32 == 0 || o32 > d32 { d32 } else { o32 - 1 }),
                (A::AddF32, (f32::from_bits(o32) + f32::from_bits(d32)).to_bits()),
            ];
            for (op, want) in cases32 {
                let got = emu_core::rules::atomic(op, o32 as u64, d32 as u64, 32).expect("a one-operand atomic") as u32;
                assert!(
                    got == want || (f32::from_bits(got).is_nan() && f32::from_bits(want).is_nan()),
                    "{op:?} {o32:#x} {d32:#x}"
                );
            }
            let cases64 = [
                (A::Add, o.wrapping_add(d)),
                (A::SMin, (o as i64).min(d as i64) as u64),
                (A::SMax, (o as i64).max(d as i64) as u64),
                (A::UMax, o.max(d)),
                (A::Dec, if o == 0 || o > d { d } else { o - 1 }),
                (A::AddF64, (f64::from_bits(o) + f64::from_bits(d)).to_bits()),
            ];
            for (op, want) in cases64 {
                let got = emu_core::rules::atomic(op, o, d, 64).expect("a one-operand atomic");
                assert!(
                    got == want || (f64::from_bits(got).is_nan() && f64::from_bits(want).is_nan()),
                    "{op:?} {o:#x} {d:#x}"
                );
            }
        }
    }
}

#[test]
fn grid_sync_is_found_in_machine_code_by_its_opcode() {
    // llvm-mc-19 -mcpu=gfx90a: ds_gws_barrier v2 offset:4 gds = 04 00 3b d9 02 00 00 00;
    // ds_gws_init v4 gds = 00 00 33 d9 04 00 00 00
    let barrier = [0x04, 0x00, 0x3b, 0xd9, 0x02, 0x00, 0x00, 0x00];
    let init = [0x00, 0x00, 0x33, 0xd9, 0x04, 0x00, 0x00, 0x00];
    assert!(emu_core::engine::may_grid_sync(&[&init[..], &barrier[..]].concat()));
    assert!(!emu_core::engine::may_grid_sync(&init));
    assert!(!emu_core::engine::may_grid_sync(&[0u8; 64]));
    // the semaphores sync the grid too: ds_gws_sema_p gds = 00 00 39 d9 00 00 00 00, ds_gws_sema_v gds =
    // 00 00 35 d9 .., ds_gws_sema_release_all offset:63 gds = 3f 00 31 d9 ..
    for sema in [
        [0x00, 0x00, 0x39, 0xd9],
        [0x00, 0x00, 0x35, 0xd9],
        [0x3f, 0x00, 0x31, 0xd9],
    ] {
        assert!(
            emu_core::engine::may_grid_sync(&[&init[..], &sema[..], &[0; 4]].concat()),
            "{sema:x?}"
        );
    }
}

#[test]
fn mbcnt_counts_the_mask_bits_below_each_lane_plus_src1() {
    // v_mbcnt_lo/hi_u32_b32 v0, s2, v1 over a mask with bits in both halves, against popcount of the mask's
    // bits below the lane (lo: bits 0..31 of the lane's position, all 32 for lanes 32 and up; hi: bits of
    // lanes 32..63 below the lane, none for lanes below 32)
    let mask = 0x8421_f00f_5a5a_0ff1u64;
    for (op, half) in [(Opcode::VMbcntLoU32B32, 0u32), (Opcode::VMbcntHiU32B32, 32)] {
        let bits = (mask >> half) as u32;
        let w = run_one(
            op,
            isa_amdgpu::Encoding::Vop3,
            Target::Gfx90a,
            &[(Field::Vdst, 0), (Field::Src0, 2), (Field::Src1, 257)],
            |w| {
                w.sgprs[2] = bits;
                w.vgprs[1] = std::array::from_fn(|l| 1000 * l as u32);
                w.set_exec(u64::MAX);
            },
        );
        for l in 0..64u32 {
            let pos = l as i64 - half as i64;
            let below = if pos <= 0 {
                0
            } else if pos >= 32 {
                bits.count_ones()
            } else {
                (bits & ((1u32 << pos) - 1)).count_ones()
            };
            assert_eq!(w.vgprs[0][l as usize], below + 1000 * l, "{op:?}, lane {l}");
        }
    }
}

//! Deferred register writes: a run of ALU instructions leaves its vector register writes pending and the block
//! writes them in one loop over the chunks (see `jit::backend::RegCache`). Each case here is one block run on
//! the JIT and, instruction by instruction, on the interpreter, from the same wave; the two must leave the same
//! registers. The cases aim at what the deferral has to get right: a NaN in the middle of a chain (computed
//! without the NaN rule first, then again with it), writes under different EXECs to one register, reads of a
//! register after it was written (the pending value) and before (the old one), values too large to stay
//! lazy or not lazy at all (parked), more parked values than the context holds, and pending values read by
//! compares, lane reads and the interpreter.

use emu_core::interp::Interp;
use emu_core::memory::DeviceMemory;
use emu_core::sem::{execute, Flow};
use emu_core::wave::WaveState;
use isa_amdgpu::table::rows_of;
use isa_amdgpu::{decode, Encoding, Field, Inst, Opcode, Target};

const T: Target = Target::Gfx942;
/// Source operand encoding of VGPR n.
const V: u32 = 256;

fn inst(op: Opcode, enc: Encoding, fields: &[(Field, u32)]) -> Inst {
    let row = rows_of(op, T)
        .find(|r| r.encoding == enc)
        .unwrap_or_else(|| panic!("{op:?} as {enc:?}"));
    let mut b = Inst::build(row, T).unwrap();
    for &(f, v) in fields {
        b = b.set(f, v).unwrap_or_else(|e| panic!("{op:?} {f:?}={v}: {e:?}"));
    }
    decode(&b.encode().unwrap(), 0x1000, T).unwrap()
}

/// A VOP3 instruction writing `d` from sources `s` (operand encodings).
fn vop3(op: Opcode, d: u32, s: &[u32]) -> Inst {
    let mut f = vec![(Field::Vdst, d)];
    f.extend(
        [Field::Src0, Field::Src1, Field::Src2]
            .into_iter()
            .zip(s.iter().copied()),
    );
    inst(op, Encoding::Vop3, &f)
}

/// A VOP2 instruction `d = s op v` (`s` an operand encoding, `v` a VGPR).
fn vop2(op: Opcode, d: u32, s: u32, v: u32) -> Inst {
    inst(
        op,
        Encoding::Vop2,
        &[(Field::Vdst, d), (Field::Src0, s), (Field::Vsrc1, v)],
    )
}

/// A VOP3 add or subtract with carry: `d` and SGPR pair `sd` from sources `s` (the third a carry-in pair).
fn carry3(op: Opcode, d: u32, sd: u32, s: [u32; 3]) -> Inst {
    inst(
        op,
        Encoding::Vop3,
        &[
            (Field::Vdst, d),
            (Field::Sdst, sd),
            (Field::Src0, s[0]),
            (Field::Src1, s[1]),
            (Field::Src2, s[2]),
        ],
    )
}

/// `s_mov_b64 s[d:d+1], s[s:s+1]`.
fn smov(d: u32, s: u32) -> Inst {
    inst(Opcode::SMovB64, Encoding::Sop1, &[(Field::Sdst, d), (Field::Ssrc0, s)])
}

/// `s_mov_b64 exec, s[n:n+1]`.
fn exec_from(n: u32) -> Inst {
    inst(
        Opcode::SMovB64,
        Encoding::Sop1,
        &[(Field::Sdst, 126), (Field::Ssrc0, n)],
    )
}

/// The starting wave: v0..v15 from `lane`, s[10:11] and s[12:13] two EXEC masks, EXEC `exec`.
fn wave(exec: u64, lane: impl Fn(usize, usize) -> u32) -> WaveState {
    let mut w = WaveState::new(0x1000, 40, 0);
    for r in 0..16 {
        for l in 0..64 {
            w.vgprs[r][l] = lane(r, l);
        }
    }
    let masks = [0x0f0f_f0f0_3333_cccc_u64, 0xffff_0000_0000_ffff];
    for (k, m) in masks.iter().enumerate() {
        w.sgprs[10 + 2 * k] = *m as u32;
        w.sgprs[11 + 2 * k] = (*m >> 32) as u32;
    }
    w.set_exec(exec);
    w
}

/// Runs `insts` as one block on the JIT and one by one on the interpreter; both must leave the same state.
fn same_on_both(name: &str, insts: &[Inst], start: &WaveState) {
    let mem = DeviceMemory::new(1 << 20).unwrap();
    let mut a = start.clone();
    let mut lds = Vec::new();
    let mut pc = 0x1000;
    for inst in insts {
        let mut b = Interp {
            wave: &mut a,
            mem: &mem,
            lds: &mut lds,
            mnemonic: inst.info.name,
            accesses: None,
        };
        assert_eq!(
            execute(&mut b, inst, pc).unwrap_or_else(|e| panic!("{name}: {e}")),
            Flow::Next,
            "{name}"
        );
        pc += inst.size() as u64;
    }
    let jit = jit::Jit::new().unwrap();
    let mut j = start.clone();
    let exit = jit
        .run_block_once(insts.to_vec(), 0x1000, &mut j, &mem, &mut lds)
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    assert!(matches!(exit, jit::BlockExit::Continue { .. }), "{name}: {exit:?}");
    for r in 0..a.vgprs.len().min(j.vgprs.len()) {
        assert_eq!(a.vgprs[r], j.vgprs[r], "{name}: v{r}");
    }
    assert_eq!(a.sgprs, j.sgprs, "{name}: SGPRs");
    assert_eq!(a.scc, j.scc, "{name}: SCC");
}

/// Both the full EXEC and a partial one.
fn execs() -> [u64; 2] {
    [u64::MAX, 0xdead_beef_0f0f_7777]
}

#[test]
fn a_nan_in_the_middle_of_a_chain_gets_the_nan_rule_wherever_it_lands() {
    use Opcode as O;
    // v0: +inf or 1.0, v1: 2.0 or a signaling NaN; inf - inf is the host's default NaN (sign set), which the
    // rule turns into the GPU's; max(NaN, x) is x, so the NaN is gone from v4 but not from the others
    let f = |r: usize, l: usize| match r {
        0 => [0x7f80_0000, 0x3f80_0000][l % 2],
        1 => [0x4000_0000, 0x7f80_0001, 0x4000_0000][l % 3],
        _ => (l as u32 + 1) * 0x0101_0101,
    };
    let chain = [
        vop3(O::VSubF32, 2, &[V, V]),
        vop3(O::VMulF32, 3, &[V + 2, V + 1]),
        vop3(O::VMaxF32, 4, &[V + 2, V + 1]),
        vop3(O::VAddF32, 2, &[V + 2, V + 1]),
        vop3(O::VFmaF32, 5, &[V + 3, V + 4, V + 2]),
    ];
    for exec in execs() {
        same_on_both(&format!("nan chain, exec {exec:#x}"), &chain, &wave(exec, f));
    }
}

#[test]
fn writes_under_different_execs_blend_into_one_register() {
    use Opcode as O;
    let f = |r: usize, l: usize| (r as u32 + 3) * 1000 + l as u32;
    let insts = [
        vop3(O::VAddU32, 5, &[V, V + 1]),
        exec_from(10),
        vop3(O::VMulLoU32, 5, &[V + 5, V + 5]),
        exec_from(12),
        vop3(O::VSubU32, 5, &[V + 5, V + 2]),
        vop3(O::VAddU32, 6, &[V + 5, V + 3]),
        exec_from(10),
        vop3(O::VAddU32, 6, &[V + 6, V + 6]),
    ];
    for exec in execs() {
        same_on_both(&format!("blends, exec {exec:#x}"), &insts, &wave(exec, f));
    }
}

#[test]
fn reads_before_and_after_a_write_see_the_old_and_the_new_value() {
    use Opcode as O;
    let f = |r: usize, l: usize| (r as u32 * 7919 + l as u32 * 104_729) ^ 0x5555;
    let insts = [
        vop3(O::VAddU32, 0, &[V, V + 1]),
        vop3(O::VMulLoU32, 1, &[V, V + 1]),
        vop3(O::VSubU32, 0, &[V + 1, V]),
        // one instruction reading and writing the same registers: v[2:3] = v[0:1] << v4, over v1 just written
        inst(
            O::VLshlrevB64,
            Encoding::Vop3,
            &[(Field::Vdst, 2), (Field::Src0, V + 4), (Field::Src1, V)],
        ),
        inst(
            O::VLshlrevB64,
            Encoding::Vop3,
            &[(Field::Vdst, 0), (Field::Src0, V + 4), (Field::Src1, V)],
        ),
        // v[6:7] = v[5:6] << 3: v6 is written (from v5) before v7, whose value reads the old v6
        inst(
            O::VLshlrevB64,
            Encoding::Vop3,
            &[(Field::Vdst, 6), (Field::Src0, 131), (Field::Src1, V + 5)],
        ),
    ];
    for exec in execs() {
        same_on_both(&format!("hazards, exec {exec:#x}"), &insts, &wave(exec, f));
    }
}

#[test]
fn long_chains_and_values_that_are_not_lazy_are_parked_and_written_alike() {
    use Opcode as O;
    let f = |r: usize, l: usize| match r {
        7..=9 => (0.5 + (r * 64 + l) as f32 / 4096.0).to_bits(),
        _ => (r as u32 + 1).wrapping_mul(0x9e37_79b9).wrapping_add(l as u32),
    };
    // a chain too long to stay one expression
    let mut chain: Vec<Inst> = (0..80).map(|_| vop3(O::VFmaF32, 7, &[V + 7, V + 8, V + 9])).collect();
    // values the backend computes into host values (the high half of a product) feeding lazy ones
    for k in 0..6 {
        chain.push(vop3(O::VMulHiU32, 16 + k, &[V + k, V + 1 + k]));
        chain.push(vop3(O::VAddU32, 24 + k, &[V + 16 + k, V + 16 + k]));
    }
    // more such values than the context has parked slots
    for k in 0..24 {
        chain.push(vop3(O::VMulHiU32, 16 + k % 12, &[V + k % 14, V + 16 + (k + 5) % 12]));
    }
    for exec in execs() {
        same_on_both(&format!("parked, exec {exec:#x}"), &chain, &wave(exec, f));
    }
}

#[test]
fn pending_values_feed_compares_lane_reads_and_selects() {
    use Opcode as O;
    let f = |r: usize, l: usize| ((r * 64 + l) as f32 * 0.25 - 100.0).to_bits();
    let insts = [
        vop3(O::VMulF32, 2, &[V, V + 1]),
        vop3(O::VAddF32, 3, &[V + 2, V]),
        // VCC from pending values, then a select through it and a lane read of a pending register
        inst(O::VCmpLtF32, Encoding::Vopc, &[(Field::Src0, V + 2), (Field::Vsrc1, 3)]),
        inst(
            O::VCndmaskB32,
            Encoding::Vop2,
            &[(Field::Vdst, 4), (Field::Src0, V + 2), (Field::Vsrc1, 3)],
        ),
        inst(
            O::VReadfirstlaneB32,
            Encoding::Vop1,
            &[(Field::Vdst, 20), (Field::Src0, V + 4)],
        ),
        vop3(O::VAddF32, 5, &[20, V + 4]),
        inst(
            O::VReadlaneB32,
            Encoding::Vop3,
            &[(Field::Vdst, 21), (Field::Src0, V + 5), (Field::Src1, 129)],
        ),
        vop3(O::VMulF32, 2, &[21, V + 5]),
    ];
    for exec in execs() {
        same_on_both(&format!("compares, exec {exec:#x}"), &insts, &wave(exec, f));
    }
}

#[test]
fn values_written_from_scalars_stay_right_in_every_lane_under_changing_execs() {
    use Opcode as O;
    // a division by a wave-uniform divisor as LLVM writes it (through an f32 reciprocal in VGPRs) and other
    // values computed from SGPRs alone: in lane-local instructions a register written under today's EXEC is read
    // as the written value alone, and values of scalars stay scalars; lanes outside EXEC keep their old values,
    // which a lane read and a later, wider EXEC see
    let f = |r: usize, l: usize| (r as u32 + 11).wrapping_mul(0x2545_f491) ^ (l as u32 * 0x9e37);
    let scalars = [
        (20, 1000u32),
        (21, 0x4f7f_fffe),
        (22, 1000u32.wrapping_neg()),
        (23, 0x7f80_0001),
        (24, 0x4000_0000),
        (25, 0xffff_fff0),
        (26, 77_777),
    ];
    let vop1 = |op, d, s| inst(op, Encoding::Vop1, &[(Field::Vdst, d), (Field::Src0, s)]);
    let insts = [
        vop1(O::VCvtF32U32, 1, 20),
        vop1(O::VRcpIflagF32, 1, V + 1),
        vop2(O::VMulF32, 1, 21, 1),
        vop1(O::VCvtU32F32, 1, V + 1),
        vop3(O::VMulLoU32, 2, &[22, V + 1]),
        vop3(O::VMulHiU32, 2, &[V + 1, V + 2]),
        vop2(O::VAddU32, 1, V + 1, 2),
        vop3(O::VMulHiU32, 1, &[26, V + 1]),
        vop3(O::VMulLoU32, 2, &[V + 1, 20]),
        vop2(O::VSubU32, 2, 26, 2),
        vop2(O::VAddU32, 3, 129, 1),
        inst(O::VCmpLeU32, Encoding::Vopc, &[(Field::Src0, 20), (Field::Vsrc1, 2)]),
        vop2(O::VCndmaskB32, 1, V + 1, 3),
        vop1(O::VReadfirstlaneB32, 30, V + 1),
        inst(
            O::VReadlaneB32,
            Encoding::Vop3,
            &[(Field::Vdst, 31), (Field::Src0, V + 2), (Field::Src1, 191)],
        ),
        // a NaN from scalars gets the NaN rule; a carry out of scalars, then one in from VCC
        vop2(O::VMulF32, 7, 23, 7),
        vop3(O::VMulF32, 8, &[23, 24]),
        vop1(O::VMovB32, 5, 20),
        vop2(O::VAddCoU32, 8, 25, 5),
        vop2(O::VAddcCoU32, 9, 128, 8),
        inst(O::VCmpEqU64, Encoding::Vopc, &[(Field::Src0, V + 8), (Field::Vsrc1, 9)]),
        vop2(O::VCndmaskB32, 4, V + 5, 9),
        // another EXEC: the registers above hold their values in its lanes only where the old EXEC had them
        exec_from(10),
        vop2(O::VAddU32, 4, V + 1, 2),
        vop2(O::VAddU32, 6, V + 5, 4),
        exec_from(12),
        vop2(O::VAddU32, 6, V + 6, 5),
        vop1(O::VMovB32, 10, 26),
        // an EXEC from a compare (VOP3, EXEC its destination)
        inst(
            O::VCmpGtU32,
            Encoding::Vop3,
            &[(Field::Vdst, 126), (Field::Src0, 26), (Field::Src1, V)],
        ),
        vop2(O::VAddU32, 11, V + 10, 10),
        vop1(O::VReadfirstlaneB32, 32, V + 11),
        // no lane on: a write changes nothing, and v_readfirstlane reads lane 0
        exec_from(14),
        vop1(O::VMovB32, 12, 20),
        vop2(O::VAddU32, 13, V + 12, 12),
        vop1(O::VReadfirstlaneB32, 33, V + 12),
        vop1(O::VReadfirstlaneB32, 34, V + 13),
    ];
    for exec in execs().into_iter().chain([0, 1 << 63]) {
        let mut w = wave(exec, f);
        for (s, x) in scalars {
            w.sgprs[s] = x;
        }
        w.sgprs[14] = 0;
        w.sgprs[15] = 0;
        same_on_both(&format!("scalars, exec {exec:#x}"), &insts, &w);
    }
}

#[test]
fn a_wave_reduction_through_dpp_moves_and_carries_leaves_what_the_interpreter_leaves() {
    use Opcode as O;
    // a 64-bit wave sum as LLVM writes it: each step moves the running sum's halves across lanes (DPP), adds
    // them with a carry; the chain's values are parked once and read from there, the moves are worked out at
    // compile time. Every DPP control a reduction or scan uses, with full and partial masks and bound_ctrl.
    let f = |r: usize, l: usize| (r as u32 + 1).wrapping_mul(0x9e37_79b9) ^ (l as u32).wrapping_mul(0x0101_0101);
    let dpp = |d: u32, s: u32, ctrl: u32, masks: u32, bound: u32| {
        let row = rows_of(O::VMovB32, T).find(|r| r.encoding == Encoding::Vop1).unwrap();
        let b = Inst::build(row, T)
            .unwrap()
            .set(Field::Vdst, d)
            .unwrap()
            .set(Field::Src0, 0xfa)
            .unwrap();
        let b = b.ext(isa_amdgpu::Form::Dpp, s | ctrl << 8 | bound << 19 | masks << 24);
        decode(&b.encode().unwrap(), 0x1000, T).unwrap()
    };
    let controls = [
        (0x0b1, 0xff, 0),
        (0x04e, 0xff, 0),
        (0x114, 0xff, 0),
        (0x118, 0xaf, 1),
        (0x142, 0xff, 0),
        (0x143, 0xfa, 0),
        (0x140, 0xff, 1),
        (0x141, 0xff, 0),
        (0x138, 0xff, 0),
        (0x13c, 0x5f, 0),
        (0x123, 0xff, 1),
        (0x130, 0xff, 0),
    ];
    let mut insts = Vec::new();
    for (ctrl, masks, bound) in controls {
        insts.extend([
            dpp(4, 2, ctrl, masks, bound),
            vop2(O::VAddCoU32, 2, V + 2, 4),
            dpp(5, 3, ctrl, masks, bound),
            vop2(O::VAddcCoU32, 3, 128, 3),
            vop2(O::VAddCoU32, 2, 128, 2),
            vop2(O::VAddcCoU32, 3, V + 3, 5),
        ]);
    }
    insts.push(inst(
        O::VReadlaneB32,
        Encoding::Vop3,
        &[(Field::Vdst, 21), (Field::Src0, V + 2), (Field::Src1, 191)],
    ));
    for exec in execs() {
        same_on_both(&format!("reduction, exec {exec:#x}"), &insts, &wave(exec, f));
    }
}

#[test]
fn lanes_known_while_translating_stay_known_only_where_they_hold() {
    use Opcode as O;
    // v_mbcnt of all ones gives each lane its index: the JIT knows those lanes while translating, folds what is
    // computed from them, and resolves a ds_bpermute through them at compile time. The knowledge holds in the
    // lanes of the EXEC it was written under and in a narrower EXEC made from it (s_and_saveexec), not under
    // an EXEC loaded from elsewhere, and not once the register is written again.
    let f = |r: usize, l: usize| (r as u32 + 1).wrapping_mul(0x9e37_79b9) ^ (l as u32).wrapping_mul(0x0101_0101);
    let bpermute = |d, addr, data| {
        inst(
            O::DsBpermuteB32,
            Encoding::Ds,
            &[(Field::Vdst, d), (Field::Addr, addr), (Field::Data0, data)],
        )
    };
    let saveexec = |d, s| {
        inst(
            O::SAndSaveexecB64,
            Encoding::Sop1,
            &[(Field::Sdst, d), (Field::Ssrc0, s)],
        )
    };
    let insts = [
        // lane ids (-1 and 0 inline), times 4, | 60: each lane reads lane (its id | 15)
        vop3(O::VMbcntLoU32B32, 1, &[193, 128]),
        vop3(O::VMbcntHiU32B32, 1, &[193, V + 1]),
        vop2(O::VLshlrevB32, 4, 130, 1),
        vop2(O::VOrB32, 5, 188, 4),
        bpermute(6, 5, 2),
        bpermute(7, 5, 3),
        // a count under a mask that is not all ones (s10: not known) next to the known ones
        vop3(O::VMbcntLoU32B32, 8, &[10, V + 9]),
        vop3(O::VMbcntHiU32B32, 8, &[11, V + 8]),
        // EXEC narrowed from the one v4 was written under: v4's lanes are still known in it
        saveexec(20, 12),
        vop2(O::VOrB32, 9, 140, 4),
        bpermute(10, 9, 6),
        // EXEC from elsewhere: v4 read as it is
        exec_from(10),
        vop2(O::VOrB32, 11, 131, 4),
        bpermute(12, 11, 7),
        // v1 written again (not known): later reads see the new value
        vop2(O::VAddU32, 1, V + 2, 1),
        vop2(O::VLshlrevB32, 13, 129, 1),
        bpermute(14, 13, 3),
    ];
    for exec in execs() {
        same_on_both(&format!("known lanes, exec {exec:#x}"), &insts, &wave(exec, f));
    }
}

#[test]
fn carries_and_compares_of_uniform_values_stay_uniform_only_in_the_lanes_of_their_exec() {
    use Opcode as O;
    // A carry or compare of values the same in every lane is one mask bit for all lanes; written to VCC (or
    // copied to another pair) it is ANDed with EXEC. The next add with carry or select reads it as the same bit
    // in every lane while EXEC is the one it was written under, and lane by lane once EXEC has changed: a
    // narrower EXEC from s_and_saveexec, then one loaded from elsewhere, with lanes the write left clear; and
    // as written once VCC is set from another register.
    let f = |r: usize, l: usize| (r as u32 + 1).wrapping_mul(0x9e37_79b9) ^ (l as u32).wrapping_mul(0x0101_0101);
    let mov = |d, s| inst(O::VMovB32, Encoding::Vop1, &[(Field::Vdst, d), (Field::Src0, s)]);
    let insts = [
        // v16 = 0xffffffff, v17 = 1 in every lane: v16 + v17 carries everywhere, the carry added on gives 2
        mov(16, 20),
        mov(17, 21),
        vop2(O::VAddCoU32, 18, V + 16, 17),
        vop2(O::VAddcCoU32, 19, 128, 17),
        // a uniform compare (true), copied to s[30:31] and selected with, per-lane values
        inst(
            O::VCmpGtU32,
            Encoding::Vop3,
            &[(Field::Vdst, 106), (Field::Src0, V + 16), (Field::Src1, V + 17)],
        ),
        smov(30, 106),
        vop3(O::VCndmaskB32, 20, &[V, V + 1, 30]),
        // a carry chain through s[32:33] (VOP3 carry out and in)
        carry3(O::VAddCoU32, 21, 32, [V + 16, V + 16, 0]),
        carry3(O::VAddcCoU32, 22, 34, [V + 17, V + 2, 32]),
        // EXEC narrowed: the carry in VCC holds in the old EXEC's lanes, which include the new ones
        inst(
            O::SAndSaveexecB64,
            Encoding::Sop1,
            &[(Field::Sdst, 36), (Field::Ssrc0, 12)],
        ),
        vop2(O::VAddCoU32, 23, V + 16, 17),
        smov(38, 106),
        vop2(O::VAddcCoU32, 24, 128, 3),
        // EXEC from elsewhere: the masks in s[38:39] and s[30:31] are clear in lanes the old EXEC left out
        exec_from(10),
        vop3(O::VCndmaskB32, 25, &[V + 4, V + 5, 38]),
        carry3(O::VAddcCoU32, 26, 40, [V + 17, V + 6, 30]),
        vop3(O::VCndmaskB32, 27, &[V + 7, V + 8, 30]),
        // VCC set from elsewhere: read as set
        smov(106, 12),
        vop2(O::VAddcCoU32, 28, V + 16, 17),
    ];
    for exec in execs() {
        let mut w = wave(exec, f);
        (w.sgprs[20], w.sgprs[21]) = (0xffff_ffff, 1);
        same_on_both(&format!("uniform carries, exec {exec:#x}"), &insts, &w);
    }
}

#[test]
fn carries_written_over_before_any_read_are_left_out_and_every_read_still_sees_its_carry() {
    use Opcode as O;
    // A carry out that straight-line ALU code writes over (both SGPRs) before anything reads it is never
    // computed (`jit::compile::carry_out_dead`). Each carry here is read, or not, in a different way: by the
    // next add with carry, by v_cndmask through VCC, by a copy of its pair after half of it was written over,
    // by a copy of VCC, or by nothing before the block's end; and one is written over half by half.
    let f = |r: usize, l: usize| {
        (r as u32 + 3).wrapping_mul(0x9e37_79b9)
            ^ (l as u32).wrapping_mul(0x0f0f_0f0f)
            ^ if l.is_multiple_of(3) { 0xffff_ff00 } else { 0 }
    };
    let smov32 = |d, s| inst(O::SMovB32, Encoding::Sop1, &[(Field::Sdst, d), (Field::Ssrc0, s)]);
    let nop = inst(O::SNop, Encoding::Sopp, &[]);
    let insts = [
        // a 64-bit add: the low add's carry is read by the high one, whose own carry the next add writes over
        vop2(O::VAddCoU32, 20, V, 1),
        vop2(O::VAddcCoU32, 21, V + 2, 3),
        nop,
        vop2(O::VAddCoU32, 22, V + 4, 5),
        vop2(O::VAddcCoU32, 23, V + 6, 7),
        // that carry is read by a select
        vop2(O::VCndmaskB32, 24, V + 8, 9),
        // a VOP3 carry into s[30:31]: its low half written over, its high half read by a copy
        carry3(O::VAddCoU32, 25, 30, [V, V + 9, 0]),
        smov32(30, 12),
        smov(32, 30),
        // a borrow chain through s[34:35], then a borrow written over half by half
        carry3(O::VSubCoU32, 26, 34, [V + 1, V + 2, 0]),
        carry3(O::VSubbCoU32, 27, 34, [V + 3, V + 4, 34]),
        carry3(O::VSubrevCoU32, 28, 36, [V + 5, V + 6, 0]),
        smov32(36, 13),
        vop2(O::VAddU32, 29, V + 7, 8),
        smov32(37, 12),
        // VCC copied before it is written over
        vop2(O::VSubCoU32, 30, V + 9, 10),
        smov(40, 106),
        vop2(O::VAddCoU32, 32, V + 11, 12),
        // and a carry nothing reads before the end
        vop2(O::VAddcCoU32, 33, V + 13, 14),
    ];
    let dead: Vec<usize> = (0..insts.len())
        .filter(|&i| jit::compile::carry_out_dead(&insts, &translated(&insts), i))
        .collect();
    assert_eq!(dead, [1, 11], "the carries written over before any read");
    // read through `vccz`, a source operand (which neither engine executes; taken as compiled here): not left out
    let vccz = [
        vop2(O::VSubCoU32, 30, V + 9, 10),
        inst(O::VMovB32, Encoding::Vop1, &[(Field::Vdst, 31), (Field::Src0, 251)]),
        vop2(O::VAddCoU32, 32, V + 11, 12),
    ];
    assert!(
        !jit::compile::carry_out_dead(&vccz, &[true; 3], 0),
        "a carry read through vccz"
    );
    // an s_setreg in between (compiled, but a MODE value the emulator refuses stops the wave): not left out
    let setreg = [
        vop2(O::VSubCoU32, 30, V + 9, 10),
        inst(O::SSetregB32, Encoding::Sopk, &[(Field::Sdst, 12), (Field::Simm16, 1)]),
        vop2(O::VAddCoU32, 32, V + 11, 12),
    ];
    assert!(translated(&setreg)[1], "s_setreg of MODE compiles");
    assert!(
        !jit::compile::carry_out_dead(&setreg, &translated(&setreg), 0),
        "a carry before an s_setreg"
    );
    for exec in execs() {
        same_on_both(&format!("dead carries, exec {exec:#x}"), &insts, &wave(exec, f));
    }
    // an instruction left to the interpreter before the carry is written over: it may stop the wave (this
    // one does: neither engine takes a compare's clamp), and the carry is what the wave's state then shows
    let stops = [
        vop2(O::VAddCoU32, 0, 247, 0),
        inst(
            O::VCmpFF16,
            Encoding::Vop3,
            &[
                (Field::Vdst, 0),
                (Field::Src0, V + 2),
                (Field::Src1, V + 9),
                (Field::Clamp, 1),
            ],
        ),
        inst(
            O::VCmpClassF32,
            Encoding::Vopc,
            &[(Field::Src0, V + 6), (Field::Vsrc1, 0)],
        ),
    ];
    assert_eq!(translated(&stops), [true, false, true]);
    assert!(
        !jit::compile::carry_out_dead(&stops, &translated(&stops), 0),
        "a carry before an interpreted instruction"
    );
    for exec in execs() {
        let start = wave(exec, f);
        let mem = DeviceMemory::new(1 << 20).unwrap();
        let (mut a, mut j, mut lds) = (start.clone(), start.clone(), Vec::new());
        let mut b = Interp {
            wave: &mut a,
            mem: &mem,
            lds: &mut lds,
            mnemonic: stops[0].info.name,
            accesses: None,
        };
        execute(&mut b, &stops[0], 0x1000).unwrap();
        let mut b = Interp {
            wave: &mut a,
            mem: &mem,
            lds: &mut lds,
            mnemonic: stops[1].info.name,
            accesses: None,
        };
        let error = execute(&mut b, &stops[1], 0x1008)
            .expect_err("a compare's clamp")
            .to_string();
        let exit = jit::Jit::new()
            .unwrap()
            .run_block_once(stops.to_vec(), 0x1000, &mut j, &mem, &mut lds)
            .unwrap();
        assert!(
            matches!(&exit, jit::BlockExit::Fault { error: e, .. } if e.ends_with(&error)),
            "{exit:?} / {error}"
        );
        assert_eq!(a.sgprs, j.sgprs, "SGPRs where the wave stopped, exec {exec:#x}");
    }
}

#[test]
fn sdwa_forms_read_and_write_a_carry_pair_as_their_sgpr_operands_say() {
    use Opcode as O;
    // An SDWA source may be an SGPR (the S0/S1 bit) and an SDWA compare may write another pair than VCC (the
    // SD bit): a carry in VCC read by either source stays, one an SDWA compare writes into s[6:7] stays, one
    // an SDWA compare writes over in VCC goes. (Encodings from llvm-mc-19 -mcpu=gfx942.)
    let sdwa = |bytes: [u8; 8]| decode(&bytes, 0x1000, T).unwrap();
    let read_lo = sdwa([0xf9, 0x02, 0x04, 0x02, 0x6a, 0x06, 0x86, 0x06]); // v_add_f32_sdwa v2, vcc_lo, v1
    let read_hi = sdwa([0xf9, 0xd6, 0x06, 0x02, 0x00, 0x06, 0x06, 0x86]); // v_add_f32_sdwa v3, v0, vcc_hi
    let cmp_s6 = sdwa([0xf9, 0x02, 0x94, 0x7d, 0x00, 0x86, 0x00, 0x06]); // v_cmp_eq_u32_sdwa s[6:7], v0, v1 src0_sel:BYTE_0
    let cmp_vcc = sdwa([0xf9, 0x02, 0x94, 0x7d, 0x00, 0x00, 0x00, 0x06]); // v_cmp_eq_u32_sdwa vcc, v0, v1 src0_sel:BYTE_0
    assert_eq!(cmp_s6.info.name, "v_cmp_eq_u32_e32");
    let carry = || vop2(O::VAddCoU32, 20, V, 1);
    let over = || vop2(O::VAddCoU32, 21, V + 2, 3);
    let f = |r: usize, l: usize| {
        (r as u32 + 5).wrapping_mul(0x9e37_79b9)
            ^ (l as u32).wrapping_mul(0x0101_0101)
            ^ if l % 4 == 1 { 0xffff_ff00 } else { 0 }
    };
    let cases = [
        ("vcc_lo read as an SDWA src0", vec![carry(), read_lo, over()], false),
        ("vcc_hi read as an SDWA src1", vec![carry(), read_hi, over()], false),
        (
            "an SDWA compare into s[6:7]",
            vec![carry(), cmp_s6, smov(8, 106)],
            false,
        ),
        ("an SDWA compare into vcc", vec![carry(), cmp_vcc, smov(8, 106)], true),
    ];
    for (name, insts, dead) in &cases {
        assert_eq!(
            jit::compile::carry_out_dead(insts, &translated(insts), 0),
            *dead,
            "{name}"
        );
        for exec in execs() {
            same_on_both(&format!("{name}, exec {exec:#x}"), insts, &wave(exec, f));
        }
    }
}

#[test]
fn carries_read_through_m0_old_values_and_implicit_operands_are_not_left_out() {
    use Opcode as O;
    // Reads of a carry that its instruction's operands do not name, each before the carry's pair is written
    // over: s_movrels of s[0:1] with M0 = 30 reads s[30:31]; with M0 = 2, s_movreld of vcc writes
    // s[108:109] and leaves VCC; s_cmov with SCC clear keeps VCC; s_bitset keeps the other bits; s_cmpk
    // compares its SDST; v_div_fmas reads VCC. Each carry is computed, and both engines agree.
    let carry = || vop2(O::VAddCoU32, 20, V, 1);
    let over = || vop2(O::VAddCoU32, 21, V + 2, 3);
    let f = |r: usize, l: usize| {
        (r as u32 + 9).wrapping_mul(0x2545_f491)
            ^ (l as u32).wrapping_mul(0x9e37_79b9)
            ^ if l.is_multiple_of(3) { 0xffff_ff00 } else { 0 }
    };
    let sop1 = |op, d, s| inst(op, Encoding::Sop1, &[(Field::Sdst, d), (Field::Ssrc0, s)]);
    let scc_clear = inst(
        O::SCmpLgU32,
        Encoding::Sopc,
        &[(Field::Ssrc0, 128), (Field::Ssrc1, 128)],
    );
    let cmpk = inst(O::SCmpkEqU32, Encoding::Sopk, &[(Field::Sdst, 106), (Field::Simm16, 0)]);
    let scc_to_s20 = inst(
        O::SCselectB32,
        Encoding::Sop2,
        &[(Field::Sdst, 20), (Field::Ssrc0, 193), (Field::Ssrc1, 128)],
    );
    let fmas = vop3(O::VDivFmasF32, 22, &[V, V + 1, V + 2]);
    let cases = [
        (
            "read by s_movrels",
            vec![
                carry3(O::VAddCoU32, 20, 30, [V, V + 1, 0]),
                sop1(O::SMovrelsB64, 20, 0),
                smov(30, 10),
            ],
            30,
        ),
        (
            "written past by s_movreld",
            vec![carry(), sop1(O::SMovreldB64, 106, 10)],
            2,
        ),
        (
            "kept by s_cmov",
            vec![carry(), scc_clear, sop1(O::SCmovB64, 106, 10)],
            0,
        ),
        (
            "bits set by s_bitset1",
            vec![carry(), sop1(O::SBitset1B32, 106, 131), sop1(O::SBitset1B32, 107, 133)],
            0,
        ),
        ("compared by s_cmpk", vec![carry(), cmpk, scc_to_s20, over()], 0),
        ("read by v_div_fmas", vec![carry(), fmas, over()], 0),
    ];
    for (name, insts, m0) in &cases {
        assert!(!jit::compile::carry_out_dead(insts, &translated(insts), 0), "{name}");
        for exec in execs() {
            let mut w = wave(exec, f);
            w.sgprs[124] = *m0;
            same_on_both(&format!("{name}, exec {exec:#x}"), insts, &w);
        }
    }
}

/// Which of `insts` (at consecutive addresses from 0x1000) the JIT compiles rather than leaves to the
/// interpreter.
fn translated(insts: &[Inst]) -> Vec<bool> {
    let mut pc = 0x1000;
    insts
        .iter()
        .map(|inst| {
            let t = jit::compile::compiles(inst, pc);
            pc += inst.size() as u64;
            t
        })
        .collect()
}

#[test]
fn per_lane_carries_reach_the_next_add_as_written_under_changing_execs() {
    use Opcode as O;
    // A carry of per-lane values is written to its SGPR pair ANDed with EXEC. The next add with carry, or
    // select, reads the lanes written: through VCC, through another pair (VOP3), and once EXEC has changed
    // (loaded from elsewhere, or narrowed), where lanes the write left clear must read clear.
    let f = |r: usize, l: usize| (r as u32 + 7).wrapping_mul(0x2545_f491) ^ (l as u32).wrapping_mul(0x9e37_79b9);
    let insts = [
        vop2(O::VAddCoU32, 20, V, 1),
        vop2(O::VAddcCoU32, 21, V + 2, 3),
        carry3(O::VAddCoU32, 22, 30, [V + 4, V + 5, 0]),
        carry3(O::VAddcCoU32, 23, 32, [V + 6, V + 7, 30]),
        vop2(O::VSubCoU32, 24, V + 8, 9),
        exec_from(10),
        vop2(O::VSubbCoU32, 25, V + 10, 11),
        vop2(O::VAddCoU32, 26, V + 12, 13),
        smov(34, 106),
        inst(
            O::SAndSaveexecB64,
            Encoding::Sop1,
            &[(Field::Sdst, 36), (Field::Ssrc0, 12)],
        ),
        carry3(O::VAddcCoU32, 27, 38, [V + 14, V + 15, 34]),
        vop3(O::VCndmaskB32, 28, &[V + 1, V + 2, 32]),
    ];
    for exec in execs() {
        same_on_both(&format!("per-lane carries, exec {exec:#x}"), &insts, &wave(exec, f));
    }
}

//! Blocks that go on past conditional branches: an unobserved block runs on past each `s_cbranch_*` the JIT
//! compiles; a taken branch jumps to its target further on in the block, or leaves it (see `jit::compile::build`).
//! Each case is one such block run on the JIT and on the interpreter following the branches; both must leave
//! the same registers, go on at the same PC and count the same instructions (those jumped over do not count).

use emu_core::interp::Interp;
use emu_core::memory::DeviceMemory;
use emu_core::sem::{execute, Flow};
use emu_core::wave::WaveState;
use isa_amdgpu::table::rows_of;
use isa_amdgpu::{decode, Encoding, Field, Inst, Opcode, Target};

const T: Target = Target::Gfx942;
const V: u32 = 256;
const START: u64 = 0x1000;

/// An instruction of `op` (encoding `enc`) with `fields`, placed at `pc`.
fn inst(op: Opcode, enc: Encoding, fields: &[(Field, u32)], pc: u64) -> Inst {
    let row = rows_of(op, T)
        .find(|r| r.encoding == enc)
        .unwrap_or_else(|| panic!("{op:?} as {enc:?}"));
    let mut b = Inst::build(row, T).unwrap();
    for &(f, v) in fields {
        b = b.set(f, v).unwrap_or_else(|e| panic!("{op:?} {f:?}={v}: {e:?}"));
    }
    decode(&b.encode().unwrap(), pc, T).unwrap()
}

/// What a block is written from: instructions, and branches to a label (an index into the list).
enum Item {
    I(Opcode, Encoding, Vec<(Field, u32)>),
    Br(Opcode, usize),
    /// A branch to a PC outside the block.
    Out(Opcode, u64),
}

/// The block of `items` from [`START`], its branches pointing at their labels.
fn assemble(items: &[Item]) -> Vec<Inst> {
    // every instruction here is 4 or 8 bytes: place them, then fill in the branch offsets
    let sizes: Vec<u64> = items
        .iter()
        .map(|it| match it {
            Item::I(op, enc, f) => inst(*op, *enc, f, 0).size() as u64,
            _ => 4,
        })
        .collect();
    let pcs: Vec<u64> = sizes
        .iter()
        .scan(START, |a, s| Some(std::mem::replace(a, *a + s)))
        .collect();
    let end = pcs.last().unwrap() + sizes.last().unwrap();
    let simm = |from: u64, to: u64| (((to as i64 - (from as i64 + 4)) / 4) as i16 as u16) as u32;
    items
        .iter()
        .zip(&pcs)
        .map(|(it, &pc)| match it {
            Item::I(op, enc, f) => inst(*op, *enc, f, pc),
            Item::Br(op, label) => inst(
                *op,
                Encoding::Sopp,
                &[(Field::Simm16, simm(pc, pcs.get(*label).copied().unwrap_or(end)))],
                pc,
            ),
            Item::Out(op, to) => inst(*op, Encoding::Sopp, &[(Field::Simm16, simm(pc, *to))], pc),
        })
        .collect()
}

/// Runs `insts` on the interpreter from [`START`], following branches, until the wave leaves them; then as one
/// block on the JIT. Both must agree on everything.
fn same_on_both(name: &str, insts: &[Inst], start: &WaveState) {
    let mem = DeviceMemory::new(1 << 20).unwrap();
    let mut lds = Vec::new();
    let mut a = start.clone();
    let pcs: Vec<u64> = insts
        .iter()
        .scan(START, |a, i| Some(std::mem::replace(a, *a + i.size() as u64)))
        .collect();
    let (mut pc, mut executed) = (START, 0u64);
    while let Some(inst) = pcs.iter().position(|&p| p == pc).map(|k| &insts[k]) {
        let mut b = Interp {
            wave: &mut a,
            mem: &mem,
            lds: &mut lds,
            mnemonic: inst.info.name,
            accesses: None,
        };
        let next = pc + inst.size() as u64;
        executed += 1;
        pc = match execute(&mut b, inst, pc).unwrap_or_else(|e| panic!("{name}: {e}")) {
            Flow::Next => next,
            Flow::Branch { cond, target } => {
                if cond & 1 == 1 {
                    target
                } else {
                    next
                }
            }
            Flow::Jump(t) => t,
            other => panic!("{name}: {other:?}"),
        };
    }
    let jit = jit::Jit::new().unwrap();
    let mut j = start.clone();
    let exit = jit
        .run_block_once(insts.to_vec(), START, &mut j, &mem, &mut lds)
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    match exit {
        jit::BlockExit::Continue { next_pc, executed: e } => {
            assert_eq!(next_pc, pc, "{name}: next PC");
            assert_eq!(e, executed, "{name}: instructions executed");
        }
        other => panic!("{name}: {other:?}"),
    }
    for r in 0..a.vgprs.len().min(j.vgprs.len()) {
        assert_eq!(a.vgprs[r], j.vgprs[r], "{name}: v{r}");
    }
    assert_eq!(a.sgprs, j.sgprs, "{name}: SGPRs");
    assert_eq!(a.scc, j.scc, "{name}: SCC");
}

/// The starting wave: v0..v15 from their lane numbers, s20 = `n`, EXEC `exec`.
fn wave(exec: u64, n: u32) -> WaveState {
    let mut w = WaveState::new(START, 40, 0);
    for r in 0..16 {
        for l in 0..64 {
            w.vgprs[r][l] = (r as u32 + 1) * 1000 + l as u32;
        }
    }
    w.sgprs[20] = n;
    w.set_exec(exec);
    w
}

fn execs() -> [u64; 4] {
    [u64::MAX, 0xdead_beef_0f0f_7777, 1 << 40, 0]
}

#[test]
fn ifs_whose_bodies_run_or_are_skipped_leave_the_registers_the_interpreter_leaves() {
    use Item::*;
    use Opcode as O;
    let vop2 = |op, d, s, v| {
        I(
            op,
            Encoding::Vop2,
            vec![(Field::Vdst, d), (Field::Src0, s), (Field::Vsrc1, v)],
        )
    };
    let vop1 = |op, d, s| I(op, Encoding::Vop1, vec![(Field::Vdst, d), (Field::Src0, s)]);
    let cmp = |op, s, v| I(op, Encoding::Vopc, vec![(Field::Src0, s), (Field::Vsrc1, v)]);
    let sop1 = |op, d, s| I(op, Encoding::Sop1, vec![(Field::Sdst, d), (Field::Ssrc0, s)]);
    let sop2 = |op, d, a, b| {
        I(
            op,
            Encoding::Sop2,
            vec![(Field::Sdst, d), (Field::Ssrc0, a), (Field::Ssrc1, b)],
        )
    };
    // the shape LLVM gives an `if` (divergent: EXEC saved, narrowed, the body skipped when no lane is left,
    // EXEC restored), twice in a row over values written before each (the second body narrows EXEC further,
    // and its join computes before restoring it), and a uniform branch over SCC
    let items = [
        vop1(O::VMovB32, 1, 20),
        vop2(O::VAddU32, 2, 20, 0),
        cmp(O::VCmpGtU32, 20, 0),
        sop1(O::SAndSaveexecB64, 6, 106),
        Br(O::SCbranchExecz, 9),
        vop2(O::VAddU32, 1, V + 1, 2),
        vop1(O::VMovB32, 3, 20),
        vop2(O::VSubU32, 4, V + 3, 1),
        sop2(O::SAddU32, 21, 20, 20),
        // 9: the join
        sop2(O::SOrB64, 126, 126, 6),
        vop2(O::VAddU32, 5, V + 1, 1),
        vop2(O::VAddU32, 6, V + 3, 4),
        cmp(O::VCmpEqU32, 20, 0),
        sop1(O::SAndSaveexecB64, 8, 106),
        Br(O::SCbranchExecz, 18),
        vop2(O::VSubU32, 7, V + 5, 6),
        cmp(O::VCmpxGtU32, 20, 5),
        vop2(O::VAddU32, 2, V + 1, 1),
        // 18: a body that narrowed EXEC or none; the join reads EXEC before restoring it
        vop2(O::VAddU32, 8, V + 1, 2),
        sop2(O::SOrB64, 126, 126, 8),
        I(
            O::SCmpLtU32,
            Encoding::Sopc,
            vec![(Field::Ssrc0, 20), (Field::Ssrc1, 140)],
        ),
        Br(O::SCbranchScc1, 24),
        vop2(O::VAddU32, 9, V + 8, 8),
        sop2(O::SAddU32, 22, 20, 21),
        // 24
        vop2(O::VAddU32, 10, V + 9, 5),
    ];
    let insts = assemble(&items);
    for exec in execs() {
        for n in [3, 17, 40, 70] {
            same_on_both(&format!("ifs, exec {exec:#x}, s20 = {n}"), &insts, &wave(exec, n));
        }
    }
}

#[test]
fn branches_out_of_the_block_and_back_to_its_start_leave_it_where_the_interpreter_goes() {
    use Item::*;
    use Opcode as O;
    let vop2 = |op, d, s, v| {
        I(
            op,
            Encoding::Vop2,
            vec![(Field::Vdst, d), (Field::Src0, s), (Field::Vsrc1, v)],
        )
    };
    let sopc = |op, a, b| I(op, Encoding::Sopc, vec![(Field::Ssrc0, a), (Field::Ssrc1, b)]);
    let sop2 = |op, d, a, b| {
        I(
            op,
            Encoding::Sop2,
            vec![(Field::Sdst, d), (Field::Ssrc0, a), (Field::Ssrc1, b)],
        )
    };
    // a loop that is the block's start, a branch out of the block (backwards, before the block), one forward
    // past its end, and one onto the instruction right after the block
    let items = [
        vop2(O::VAddU32, 1, V + 1, 0),
        sop2(O::SAddU32, 20, 20, 193),
        sopc(O::SCmpLtU32, 20, 144),
        Br(O::SCbranchScc1, 0),
        sopc(O::SCmpEqU32, 20, 145),
        Out(O::SCbranchScc1, START - 0x40),
        vop2(O::VAddU32, 2, V + 1, 1),
        sopc(O::SCmpEqU32, 20, 146),
        Out(O::SCbranchScc1, START + 0x400),
        vop2(O::VAddU32, 3, V + 2, 2),
        sopc(O::SCmpEqU32, 20, 147),
        Br(O::SCbranchScc1, 99),
        vop2(O::VAddU32, 4, V + 3, 3),
    ];
    let insts = assemble(&items);
    for n in [0, 10, 17, 18, 19, 30] {
        for exec in [u64::MAX, 0x00ff_0000_ff00_00ff] {
            same_on_both(&format!("exits, s20 = {n}, exec {exec:#x}"), &insts, &wave(exec, n));
        }
    }
}

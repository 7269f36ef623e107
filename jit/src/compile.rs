//! Translation of a basic block (straight-line code up to a branch, barrier, `s_endpgm` or 64 instructions) into
//! one native function `extern "C" fn(*mut Ctx) -> u32`. Each instruction is probed first: if the JIT backend
//! can emit everything its semantics need it is compiled, otherwise the block calls the interpreter for that
//! one instruction (a *fallback*) and carries on.
//!
//! Three steps, so that the expensive one can run without the module's lock and be skipped when the disk
//! cache has the block: [`build`] (the front end: Cranelift IR from the semantics, the block's interpreter
//! calls), [`codegen`] (Cranelift's optimizer, register allocator and emitter, on IR whose process addresses
//! became relocations, see [`crate::reloc`]) and [`load`] (the code's symbols resolved for this block, mapped
//! executable in the module).

use cranelift_codegen::control::ControlPlane;
use cranelift_codegen::ir::{self, types, AbiParam, InstBuilder, MemFlags, Signature, Value};
use cranelift_codegen::isa::{CallConv, TargetIsa};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_jit::JITModule;
use cranelift_module::{Module, ModuleError};

use emu_core::sem::{execute, Flow, PcOps, Stop};
use isa_amdgpu::table::FlowControl;
use isa_amdgpu::Inst;

use crate::backend::{CallSite, JitBackend, Probe, RegCache};
use crate::call::Call;
use crate::ctx::Ctx;
use crate::reloc::{Code, Symbols};
use crate::JitError;

/// Status a block returns: continue at `next_pc`, or stop the wave for a barrier, its end, or a fault.
pub const CONTINUE: u32 = 1;
pub const BARRIER: u32 = 2;
pub const END: u32 = 3;
pub const FAULT: u32 = 4;
pub const INTERNAL: u32 = 5;

/// Longest block of an observed dispatch.
pub const MAX_BLOCK: usize = 64;

/// Longest block otherwise: it goes on past conditional branches ([`goes_on_past`]), so an `if` whose body the
/// wave skips or runs is one piece of compiled code with what follows it.
pub const MAX_TRACE: usize = 256;

/// The interpreter entry that compiled code calls for an instruction it does not translate: executes
/// `inst` at `ctx.code_base + offset` on the wave behind `ctx`; returns 0 to go on, or a status with `next_pc`
/// set.
pub type InterpretOne = extern "C" fn(ctx: *mut Ctx, inst: *const Inst, offset: u64) -> u32;

/// The observation entry of observed blocks: reports the instruction at `ctx.code_base + offset` (EXEC at
/// issue in `ctx.issue_exec`) to the dispatch's observer; non-zero if the observer wants another wave to run.
/// With a null instruction it reports the pending batch instead ([`Ctx::batch_n`]).
pub type Observe = extern "C" fn(ctx: *mut Ctx, inst: *const Inst, offset: u64) -> u32;

/// How a block reports its instructions to the dispatch's observer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Observed {
    /// Not at all (an unobserved dispatch).
    No,
    /// Each instruction as it completes, so the observer may switch waves after any of them.
    Each,
    /// Runs of instructions without memory accesses as batches ([`emu_core::observe::Observer::BATCHES`]):
    /// each one's EXEC is noted in the context, and the run is reported before the next instruction that is
    /// reported on its own, before the block loops on itself, and by the runner when the block returns.
    Batched,
}

impl Observed {
    /// A distinct small number for each way (0 for [`Observed::No`]): part of a translation's keys.
    pub fn tag(self) -> u64 {
        match self {
            Observed::No => 0,
            Observed::Each => 1,
            Observed::Batched => 2,
        }
    }
}

/// Status of a block an observer asked to leave after an instruction (continue at `next_pc`).
pub const SWITCH: u32 = 6;

/// Status of a block whose wave goes back round a polling loop ([`emu_core::sem::goes_back`]) while
/// [`Ctx::poll_ends`] is set: it continues at `next_pc`, after the end of its turn.
pub const POLL: u32 = 7;

/// Whether an instruction writes its own PC into registers (`s_getpc_b64`, and the return address of
/// `s_swappc_b64`/`s_call_b64`). The semantics give it as a constant, which would tie the block's code to the
/// load address; the block leaves these instructions to the interpreter (they end blocks, and are rare), which
/// computes the PC at run time, so every translation serves every load address — and can be kept on disk.
pub fn materializes_pc(inst: &Inst) -> bool {
    use isa_amdgpu::Opcode as O;
    matches!(inst.info.opcode, O::SGetpcB64 | O::SSwappcB64 | O::SCallB64)
}

/// Whether a block compiles `inst` at `pc` rather than leaving it to the interpreter: the JIT can emit it
/// and it does not write its own PC.
pub fn compiles(inst: &Inst, pc: u64) -> bool {
    !materializes_pc(inst) && translatable(inst, pc)
}

/// A translated block.
pub struct Block {
    pub func: extern "C" fn(*mut Ctx) -> u32,
    /// The instructions (the fallback calls point into this slice, so it lives as long as the code).
    pub insts: Box<[Inst]>,
    /// How many were compiled rather than left to the interpreter.
    pub compiled: usize,
    /// Interpreter calls made from compiled instructions (their addresses are in the code).
    pub calls: Vec<Box<Call>>,
    /// Register files must hold this many VGPRs/AGPRs before the block runs.
    pub vgprs: u32,
    pub agprs: u32,
    /// No instruction of the block writes memory or LDS (so running it twice is harmless: crosscheck).
    pub write_free: bool,
}

/// Whether an instruction writes device memory or LDS (a store or an atomic, by the table's `mem` column).
pub fn writes_memory(inst: &Inst) -> bool {
    inst.info.mem.writes()
}

/// Whether an instruction ends a block: it may leave the straight line (the table's `flow` column), reads its
/// own PC, or turns VGPR index mode on (the runner interprets what follows until the mode is off).
pub fn ends_block(inst: &Inst) -> bool {
    use isa_amdgpu::Opcode as O;
    inst.info.flow != FlowControl::Next || matches!(inst.info.opcode, O::SGetpcB64 | O::SSetGprIdxOn)
}

/// Whether an instruction may leave its vector register writes pending (see [`RegCache`]): a vector or scalar
/// ALU instruction (not a matrix one) that goes on to the next and touches no memory, so nothing but compiled
/// register reads sees the registers before the block writes them. (Its calls into the interpreter take their
/// operands from the context, and one that fails writes the pending registers before the block ends.)
pub fn defers(inst: &Inst) -> bool {
    use isa_amdgpu::table::{MemDir, Unit};
    matches!(inst.info.unit, Unit::Valu | Unit::Trans | Unit::F64 | Unit::Salu)
        && inst.info.flow == FlowControl::Next
        && inst.info.mem.dir == MemDir::None
        && inst.info.mfma.is_none()
}

/// Whether an unobserved block goes on past `inst` at `pc` where [`ends_block`] says it ends: a conditional
/// branch the JIT compiles. The taken branch leaves the block, or jumps to its target inside the block further
/// on ([`build`]).
pub fn goes_on_past(inst: &Inst, pc: u64) -> bool {
    inst.info.flow == FlowControl::CondBranch && !materializes_pc(inst) && translatable(inst, pc)
}

/// Whether a deferring instruction ([`defers`]) is lane-local (see [`RegCache::lane_local`]): all are but the
/// cross-lane moves (v_readlane, v_readfirstlane — which reads lane 0 when EXEC is empty —, v_writelane) and DPP,
/// whose lanes read their neighbours'.
pub fn lane_local(inst: &Inst) -> bool {
    use isa_amdgpu::Opcode as O;
    inst.form != isa_amdgpu::Form::Dpp
        && !matches!(
            inst.info.opcode,
            O::VReadfirstlaneB32 | O::VReadlaneB32 | O::VWritelaneB32
        )
}

/// Whether the lane mask `insts[i]`, an add or subtract with carry out, writes to its SGPR pair is dead: on the
/// straight-line ALU instructions after it, all compiled (`compiled[k]` for `insts[k]`), which neither leave
/// the block nor stop the wave, both SGPRs are written before any instruction reads either. Its carries then
/// need not be worked out (unless the instruction clamps: its result saturates by them). A wave stopped in
/// between would show the pair: an instruction left to the interpreter may stop it with an error, and so may
/// s_setreg (a MODE value the emulator refuses).
pub fn carry_out_dead(insts: &[Inst], compiled: &[bool], i: usize) -> bool {
    use emu_core::sem::analysis::{known_registers, SCC};
    use isa_amdgpu::table::{MemDir, Unit};
    use isa_amdgpu::Opcode as O;
    if !matches!(
        insts[i].info.opcode,
        O::VAddCoU32 | O::VAddcCoU32 | O::VSubCoU32 | O::VSubbCoU32 | O::VSubrevCoU32 | O::VSubbrevCoU32
    ) {
        return false;
    }
    // with clamp the result itself saturates by the carry
    if insts[i].field(isa_amdgpu::encoding::Field::Clamp) == 1 {
        return false;
    }
    let Some((_, writes)) = known_registers(&insts[i]) else {
        return false;
    };
    let mut live: Vec<u16> = writes.iter().flat_map(|(s, e)| s..e).filter(|&r| r < SCC).collect();
    if live.is_empty() {
        return false;
    }
    for (inst, &compiled) in insts[i + 1..].iter().zip(&compiled[i + 1..]) {
        if !compiled {
            return false;
        }
        let alu = matches!(inst.info.unit, Unit::Valu | Unit::Trans | Unit::F64 | Unit::Salu)
            && inst.info.flow == FlowControl::Next
            && inst.info.mem.dir == MemDir::None
            && inst.info.mfma.is_none();
        if (!alu && inst.info.opcode != O::SNop) || matches!(inst.info.opcode, O::SSetregB32 | O::SSetregImm32B32) {
            return false;
        }
        let Some((reads, writes)) = known_registers(inst) else {
            return false;
        };
        if live.iter().any(|&r| reads.contains(r)) {
            return false;
        }
        live.retain(|&r| !writes.contains(r));
        if live.is_empty() {
            return true;
        }
    }
    false
}

/// Whether `inst` reads only EXEC's lanes of its vector registers though it is not lane-local: ds_bpermute_b32,
/// whose lanes each read their own index and the data of lanes in EXEC (0 from any other), and write their own.
pub fn reads_exec_lanes(inst: &Inst) -> bool {
    inst.info.opcode == isa_amdgpu::Opcode::DsBpermuteB32
}

/// Whether the JIT backend can emit all of `inst`.
pub fn translatable(inst: &Inst, pc: u64) -> bool {
    let mut probe = Probe::default();
    let ok = execute(&mut probe, inst, pc).is_ok();
    ok && probe.unsupported.is_none()
}

/// The signature of every block: `extern "C" fn(*mut Ctx) -> u32`.
pub fn signature(ptr: ir::Type) -> Signature {
    let mut sig = Signature::new(CallConv::SystemV);
    sig.params.push(AbiParam::new(ptr));
    sig.returns.push(AbiParam::new(types::I32));
    sig
}

/// A block after the front end: its function in Cranelift IR and what the code will point at.
pub struct Built {
    pub func: ir::Function,
    /// The block's first PC, relative to the code base.
    pub offset: u64,
    /// The instructions (the fallback calls point into this slice, so it lives as long as the code).
    pub insts: Box<[Inst]>,
    /// How many were compiled rather than left to the interpreter.
    pub compiled: usize,
    /// Interpreter calls made from compiled instructions.
    pub calls: Vec<Box<Call>>,
    pub vgprs: u32,
    pub agprs: u32,
}

impl Built {
    /// The addresses of this block's symbols (see [`crate::reloc`]).
    pub fn symbols(&self, interpret: InterpretOne, observe: Option<Observe>) -> Symbols {
        Symbols::of(&self.insts, &self.calls, interpret, observe)
    }

    /// The block, running `func` (this block's code, loaded).
    pub fn finish(self, func: extern "C" fn(*mut Ctx) -> u32) -> Block {
        let write_free = !self.insts.iter().any(writes_memory);
        Block {
            func,
            insts: self.insts,
            compiled: self.compiled,
            calls: self.calls,
            vgprs: self.vgprs,
            agprs: self.agprs,
            write_free,
        }
    }
}

/// Translates `insts` (at consecutive addresses from `pc`, in code loaded at `base`) into a function of
/// `module`: [`build`], [`codegen`] and [`load`] in one.
pub fn compile(
    module: &mut JITModule,
    insts: Vec<Inst>,
    pc: u64,
    base: u64,
    interpret: InterpretOne,
    observe: Option<(Observe, Observed)>,
    name: &str,
) -> Result<Block, JitError> {
    let mut built = build(
        module.target_config().pointer_type(),
        insts,
        pc,
        base,
        interpret,
        observe,
    )?;
    let observe = observe.map(|o| o.0);
    let syms = built.symbols(interpret, observe);
    let code = codegen(module.isa(), &mut built, &syms, pc)?;
    let func = load(module, &code, &syms, pc, name)?;
    Ok(built.finish(func))
}

/// The front end: `insts` (at consecutive addresses from `pc`, in code loaded at `base`) as a Cranelift
/// function. PCs the block produces are `ctx.code_base + (pc - base)`. An observed block reports its
/// instructions through `observe`'s helper, in its way.
pub fn build(
    ptr: ir::Type,
    insts: Vec<Inst>,
    pc: u64,
    base: u64,
    interpret: InterpretOne,
    observe: Option<(Observe, Observed)>,
) -> Result<Built, JitError> {
    let batched = matches!(observe, Some((_, Observed::Batched)));
    let observe = observe.filter(|o| o.1 != Observed::No).map(|o| o.0);
    let insts = insts.into_boxed_slice();
    let mut func = ir::Function::with_name_signature(ir::UserFuncName::default(), signature(ptr));
    let mut fbc = FunctionBuilderContext::new();
    let (mut vgprs, mut agprs, mut compiled) = (0u32, 0u32, 0usize);
    let mut calls: Vec<Box<Call>> = Vec::new();
    {
        let mut b = FunctionBuilder::new(&mut func, &mut fbc);
        let entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        b.seal_block(entry);
        let ctx = b.block_params(entry)[0];
        // the first instruction's block: a branch back to the block's start jumps here (sealed at the end,
        // once every back edge is known)
        let body = b.create_block();
        b.ins().jump(body, &[]);
        b.switch_to_block(body);
        let mut regs = RegCache::default();
        // register writes are deferred where no observer sees the wave between instructions: an observer
        // taking batches hears of instructions without memory accesses only as EXECs noted in the context
        let fuse = observe.is_none() || batched;
        let mut helper_sig = Signature::new(CallConv::SystemV);
        helper_sig
            .params
            .extend([AbiParam::new(ptr), AbiParam::new(ptr), AbiParam::new(types::I64)]);
        helper_sig.returns.push(AbiParam::new(types::I32));
        let helper_sig = b.import_signature(helper_sig);
        let mut at = pc;
        let mut ended = false;
        // instructions of the pending batch (batched observation)
        let mut pending = 0usize;
        // an unobserved block goes on past its conditional branches: a taken one jumps to its target when that
        // is further on in the block (the join, by instruction index), and leaves the block otherwise
        let pcs: Vec<u64> = insts
            .iter()
            .scan(pc, |a, inst| Some(std::mem::replace(a, *a + inst.size() as u64)))
            .collect();
        let mut joins: std::collections::HashMap<usize, ir::Block> = std::collections::HashMap::new();
        // instructions whose place in the code has been reached (their joins placed)
        let mut reached = 0;
        // which instructions compile (the others run on the interpreter, from the block)
        let translated: Vec<bool> = insts.iter().zip(&pcs).map(|(inst, &at)| compiles(inst, at)).collect();
        for (i, inst) in insts.iter().enumerate() {
            let next = at + inst.size() as u64;
            let executed = i as i64 + 1;
            // the instruction's number, which WAVEJIT_JIT_DUMP's .locs gives for each range of machine code
            b.set_srcloc(ir::SourceLoc::new(i as u32 + 1));
            if let Some(&join) = joins.get(&i) {
                // the path that ran on arrives with its writes made, and nothing learnt on one path holds here
                if regs.pending() {
                    let site = CallSite {
                        calls: &mut calls,
                        inst,
                        offset: at - base,
                        executed: i as i64,
                    };
                    let mut jb = JitBackend::emit(&mut b, &mut regs, site, ctx);
                    jb.flush();
                    jb.finish();
                }
                b.ins().jump(join, &[]);
                b.switch_to_block(join);
                regs.clear();
            }
            reached = i + 1;
            let compiles = translated[i];
            let in_batch = batched && compiles && emu_core::observe::MemoryOp::of(inst).is_none();
            if observe.is_some() && !in_batch {
                // this one is reported on its own (or run by the interpreter): that report takes the batch before
                // it first, and the runner takes it should the instruction fault
                pending = 0;
            }
            if in_batch {
                // EXEC at issue, and the batch's start
                let sg = b.ins().load(ptr, MemFlags::trusted(), ctx, Ctx::SGPRS);
                let exec = b.ins().load(
                    types::I64,
                    MemFlags::trusted(),
                    sg,
                    emu_core::wave::sreg::EXEC_LO as i32 * 4,
                );
                b.ins()
                    .store(MemFlags::trusted(), exec, ctx, Ctx::BATCH_EXECS + 8 * pending as i32);
                if pending == 0 {
                    let ip = b.ins().iconst(ptr, inst as *const Inst as i64);
                    b.ins().store(MemFlags::trusted(), ip, ctx, Ctx::BATCH_INSTS);
                    let off = b.ins().iconst(types::I64, (at - base) as i64);
                    b.ins().store(MemFlags::trusted(), off, ctx, Ctx::BATCH_OFFSET);
                }
            }
            // pending register writes are made before an instruction that does not defer its own, and before
            // an instruction that might need more parked slots than are free
            let defer = fuse && compiles && defers(inst) && regs.parked_free() >= 4;
            if !defer && regs.pending() {
                let site = CallSite {
                    calls: &mut calls,
                    inst,
                    offset: at - base,
                    executed: i as i64,
                };
                let mut jb = JitBackend::emit(&mut b, &mut regs, site, ctx);
                jb.flush();
                jb.finish();
            }
            regs.defer = defer;
            regs.lane_local = defer && lane_local(inst);
            regs.exec_lanes = regs.lane_local || reads_exec_lanes(inst);
            if compiles {
                if observe.is_some() && !in_batch {
                    // EXEC at issue, for the event
                    let sg = b.ins().load(ptr, MemFlags::trusted(), ctx, Ctx::SGPRS);
                    let exec = b.ins().load(
                        types::I64,
                        MemFlags::trusted(),
                        sg,
                        emu_core::wave::sreg::EXEC_LO as i32 * 4,
                    );
                    b.ins().store(MemFlags::trusted(), exec, ctx, Ctx::ISSUE_EXEC);
                }
                let site = CallSite {
                    calls: &mut calls,
                    inst,
                    offset: at - base,
                    executed,
                };
                let mut jb = JitBackend::emit(&mut b, &mut regs, site, ctx);
                // an observer sees every lane access: compiled ones leave records in the context
                jb.observed = observe.is_some() && !in_batch;
                jb.carry_dead = observe.is_none() && carry_out_dead(&insts, &translated, i);
                let flow = execute(&mut jb, inst, at).map_err(|error| JitError::Emit {
                    pc: at,
                    mnemonic: inst.info.name,
                    error,
                })?;
                jb.finish();
                if let Some(what) = jb.unsupported {
                    return Err(JitError::Unsupported {
                        pc: at,
                        mnemonic: inst.info.name,
                        what,
                    });
                }
                (vgprs, agprs) = (vgprs.max(jb.vgprs_used), agprs.max(jb.agprs_used));
                compiled += 1;
                let bits = emu_core::sem::pass_bits(inst);
                if bits != 0 {
                    note_pass(&mut b, ctx, bits);
                }
                if in_batch {
                    // it ran (one that faults is not reported, as on the interpreter)
                    pending += 1;
                    let n = b.ins().iconst(types::I64, pending as i64);
                    b.ins().store(MemFlags::trusted(), n, ctx, Ctx::BATCH_N);
                } else if let Some(observe) = observe {
                    // report the instruction; after a straight-line one the observer may switch waves
                    let f = b.ins().iconst(ptr, observe as usize as i64);
                    let ip = b.ins().iconst(ptr, inst as *const Inst as i64);
                    let off = b.ins().iconst(types::I64, (at - base) as i64);
                    let call = b.ins().call_indirect(helper_sig, f, &[ctx, ip, off]);
                    let status = b.inst_results(call)[0];
                    let (broken, fine) = (b.create_block(), b.create_block());
                    b.ins().brif(status, broken, &[], fine, &[]);
                    b.switch_to_block(broken);
                    let t = rel_pc(&mut b, ctx, next - base);
                    leave_with(&mut b, ctx, t, executed, status);
                    b.switch_to_block(fine);
                    if flow == Flow::Next {
                        // the observer asked to let other waves run
                        let switch = b.ins().load(types::I32, MemFlags::trusted(), ctx, Ctx::SWITCH);
                        let (leave_now, go_on) = (b.create_block(), b.create_block());
                        b.ins().brif(switch, leave_now, &[], go_on, &[]);
                        b.switch_to_block(leave_now);
                        let t = rel_pc(&mut b, ctx, next - base);
                        leave(&mut b, ctx, t, executed, SWITCH);
                        b.switch_to_block(go_on);
                    }
                    regs.clear();
                }
                // a block that reports each instruction returns after every pass (the observer may switch
                // waves); a batched one reports its batch before going round again
                let loops = observe.is_none() || batched;
                let exit = match flow {
                    Flow::Next => None,
                    Flow::Jump(t) if t == pc && loops => {
                        if let (Some(observe), true) = (observe, pending > 0) {
                            flush_batch(&mut b, ctx, observe, helper_sig, ptr, executed);
                        }
                        loop_back(&mut b, ctx, body, pc - base, executed, insts.len() as i64);
                        ended = true;
                        break;
                    }
                    Flow::Branch { cond, target } if observe.is_none() => {
                        // taken: round the loop that is this block inside compiled code, on to the target further
                        // on in the block, or out of the block; not taken: on to the next instruction
                        let c = b.ins().band_imm(cond, 1);
                        let (taken, on) = (b.create_block(), b.create_block());
                        b.ins().brif(c, taken, &[], on, &[]);
                        b.switch_to_block(taken);
                        match pcs.iter().position(|&p| p == target).filter(|&j| j > i) {
                            _ if target == pc => loop_back(&mut b, ctx, body, pc - base, executed, insts.len() as i64),
                            Some(j) => {
                                // the instructions jumped over do not count as executed
                                if j > i + 1 {
                                    add_executed(&mut b, ctx, -((j - i - 1) as i64));
                                }
                                let join = *joins.entry(j).or_insert_with(|| b.create_block());
                                b.ins().jump(join, &[]);
                            }
                            None => {
                                let t = rel_pc(&mut b, ctx, target.wrapping_sub(base));
                                if target <= at {
                                    let status = back_status(&mut b, ctx, None);
                                    leave_with(&mut b, ctx, t, executed, status);
                                } else {
                                    leave(&mut b, ctx, t, executed, CONTINUE);
                                }
                            }
                        }
                        b.switch_to_block(on);
                        None
                    }
                    Flow::Branch { cond, target } if target == pc && loops => {
                        // a loop that is this block (batched observation): go round inside compiled code
                        let c = b.ins().band_imm(cond, 1);
                        let (back, out) = (b.create_block(), b.create_block());
                        b.ins().brif(c, back, &[], out, &[]);
                        b.switch_to_block(back);
                        if let (Some(observe), true) = (observe, pending > 0) {
                            flush_batch(&mut b, ctx, observe, helper_sig, ptr, executed);
                        }
                        loop_back(&mut b, ctx, body, pc - base, executed, insts.len() as i64);
                        b.switch_to_block(out);
                        let t = rel_pc(&mut b, ctx, next - base);
                        Some((t, b.ins().iconst(types::I32, CONTINUE as i64)))
                    }
                    _ => {
                        let (target, stop) = flow.resolve(&mut PcIr { b: &mut b, ctx, base }, at, inst.size() as u64);
                        let status = match stop {
                            Stop::Running if flow != Flow::Next => {
                                // a jump or a taken branch to this instruction or before goes backwards
                                let here = rel_pc(&mut b, ctx, at - base);
                                let back = b.ins().icmp(
                                    cranelift_codegen::ir::condcodes::IntCC::UnsignedLessThanOrEqual,
                                    target,
                                    here,
                                );
                                back_status(&mut b, ctx, Some(back))
                            }
                            Stop::Running => b.ins().iconst(types::I32, CONTINUE as i64),
                            Stop::Barrier => b.ins().iconst(types::I32, BARRIER as i64),
                            Stop::End => b.ins().iconst(types::I32, END as i64),
                        };
                        Some((target, status))
                    }
                };
                if let Some((target, status)) = exit {
                    leave_with(&mut b, ctx, target, executed, status);
                    ended = true;
                    break;
                }
            } else {
                // the interpreter runs this one; a status other than 0 stops the block (next_pc is set)
                let f = b.ins().iconst(ptr, interpret as usize as i64);
                let ip = b.ins().iconst(ptr, inst as *const Inst as i64);
                let pcv = b.ins().iconst(types::I64, (at - base) as i64);
                let call = b.ins().call_indirect(helper_sig, f, &[ctx, ip, pcv]);
                let status = b.inst_results(call)[0];
                let stop = b.create_block();
                let go_on = b.create_block();
                b.ins().brif(status, stop, &[], go_on, &[]);
                b.switch_to_block(stop);
                add_executed(&mut b, ctx, executed);
                b.ins().return_(&[status]);
                b.switch_to_block(go_on);
                // the interpreter may have written any register
                regs.clear();
            }
            at = next;
        }
        if !ended {
            if regs.pending() {
                let last = insts.last().expect("a block has instructions");
                let site = CallSite {
                    calls: &mut calls,
                    inst: last,
                    offset: at - base - last.size() as u64,
                    executed: insts.len() as i64,
                };
                let mut jb = JitBackend::emit(&mut b, &mut regs, site, ctx);
                jb.flush();
                jb.finish();
            }
            let t = rel_pc(&mut b, ctx, at - base);
            leave(&mut b, ctx, t, insts.len() as i64, CONTINUE);
        }
        // joins the block ended before reaching: the wave goes on there, outside the block (the jump to one has
        // taken off the instructions it passed over)
        let mut unreached: Vec<(usize, ir::Block)> = joins.into_iter().filter(|(j, _)| *j >= reached).collect();
        unreached.sort_by_key(|(j, _)| *j);
        for (j, join) in unreached {
            b.switch_to_block(join);
            let t = rel_pc(&mut b, ctx, pcs[j] - base);
            leave(&mut b, ctx, t, j as i64, CONTINUE);
        }
        b.seal_all_blocks();
        b.finalize();
    }
    Ok(Built {
        func,
        offset: pc - base,
        insts,
        compiled,
        calls,
        vgprs,
        agprs,
    })
}

/// Cranelift's code generation for a built block: its addresses of this process become relocations of
/// `syms` first (so the code may be kept on disk when nothing else ties it to this process).
///
/// With `WAVEJIT_JIT_DUMP=DIR`, each block translated (not loaded from the disk cache) leaves in DIR, named by
/// its first PC in hex: its Cranelift IR (`.clif`), its machine code (`.bin`, for `objdump -D -b binary
/// -m i386:x86-64`) and which guest instruction each range of the machine code came from (`.locs`: start and
/// end offset in hex, then the instruction's number in the block from 1; 4294967295 for code of none) — what
/// a profile of compiled code (`perf`, whose samples name the block) needs to charge its samples to guest
/// instructions.
pub fn codegen(isa: &dyn TargetIsa, built: &mut Built, syms: &Symbols, pc: u64) -> Result<Code, JitError> {
    let persistable = crate::reloc::make_relocatable(&mut built.func, syms);
    let dump = std::env::var_os("WAVEJIT_JIT_DUMP").map(std::path::PathBuf::from);
    if let Some(d) = &dump {
        let _ = std::fs::write(d.join(format!("{pc:x}.clif")), built.func.display().to_string());
    }
    let mut cx = cranelift_codegen::Context::for_function(std::mem::replace(&mut built.func, ir::Function::new()));
    cx.compile(isa, &mut ControlPlane::default())
        .map_err(|e| JitError::Module {
            pc,
            step: "compile",
            error: Box::new(ModuleError::Compilation(e.inner)),
        })?;
    let compiled = cx.compiled_code().expect("just compiled");
    if let Some(d) = &dump {
        let _ = std::fs::write(d.join(format!("{pc:x}.bin")), compiled.code_buffer());
        let locs: String = compiled
            .buffer
            .get_srclocs_sorted()
            .iter()
            .map(|l| format!("{:x} {:x} {}\n", l.start, l.end, l.loc.bits()))
            .collect();
        let _ = std::fs::write(d.join(format!("{pc:x}.locs")), locs);
    }
    let align = (compiled.buffer.alignment as u64).max(isa.function_alignment().minimum as u64);
    Code::from_compiled(
        compiled.code_buffer(),
        align,
        compiled.buffer.relocs(),
        &cx.func,
        persistable,
    )
    .map_err(|error| JitError::Reloc { pc, error })
}

/// Maps `code` executable in `module` with `syms` (this block's addresses) written in; the function to call.
/// `name` (unique in the module) is what profilers show for the code.
pub fn load(
    module: &mut JITModule,
    code: &Code,
    syms: &Symbols,
    pc: u64,
    name: &str,
) -> Result<extern "C" fn(*mut Ctx) -> u32, JitError> {
    let cranelift = |step: &'static str| {
        move |e: ModuleError| JitError::Module {
            pc,
            step,
            error: Box::new(e),
        }
    };
    let sig = signature(module.target_config().pointer_type());
    let id = module
        .declare_function(name, cranelift_module::Linkage::Local, &sig)
        .map_err(cranelift("declare"))?;
    let (bytes, relocs) = code.patched(syms, id).map_err(|error| JitError::Reloc { pc, error })?;
    module
        .define_function_bytes(id, code.align, &bytes, &relocs)
        .map_err(cranelift("define"))?;
    module.finalize_definitions().map_err(cranelift("finalize"))?;
    let entry = module.get_finalized_function(id);
    // SAFETY: `entry` is the finalized machine code of a block, a function with the signature built by
    // `signature`, extern "C" fn(*mut Ctx) -> u32, with its relocations applied; the module keeps it mapped for
    // as long as the JIT lives.
    Ok(unsafe { std::mem::transmute::<*const u8, extern "C" fn(*mut Ctx) -> u32>(entry) })
}

/// Reports the pending batch (a call of the observation helper without an instruction); a failing helper ends
/// the block with its status after `executed` instructions.
fn flush_batch(
    b: &mut FunctionBuilder<'_>,
    ctx: Value,
    observe: Observe,
    sig: ir::SigRef,
    ptr: ir::Type,
    executed: i64,
) {
    let f = b.ins().iconst(ptr, observe as usize as i64);
    let null = b.ins().iconst(ptr, 0);
    let zero = b.ins().iconst(types::I64, 0);
    let call = b.ins().call_indirect(sig, f, &[ctx, null, zero]);
    let status = b.inst_results(call)[0];
    let (stop, go_on) = (b.create_block(), b.create_block());
    b.ins().brif(status, stop, &[], go_on, &[]);
    b.switch_to_block(stop);
    add_executed(b, ctx, executed);
    b.ins().return_(&[status]);
    b.switch_to_block(go_on);
}

/// Ends the block: next PC, instructions executed, status.
fn leave(b: &mut FunctionBuilder<'_>, ctx: Value, next_pc: Value, executed: i64, status: u32) {
    b.ins().store(MemFlags::trusted(), next_pc, ctx, Ctx::NEXT_PC);
    add_executed(b, ctx, executed);
    let s = b.ins().iconst(types::I32, status as i64);
    b.ins().return_(&[s]);
}

/// Ends the block with a status held in a value.
fn leave_with(b: &mut FunctionBuilder<'_>, ctx: Value, next_pc: Value, executed: i64, status: Value) {
    b.ins().store(MemFlags::trusted(), next_pc, ctx, Ctx::NEXT_PC);
    add_executed(b, ctx, executed);
    b.ins().return_(&[status]);
}

/// ctx.executed += n; returns the new count.
fn add_executed(b: &mut FunctionBuilder<'_>, ctx: Value, n: i64) -> Value {
    let e = b.ins().load(types::I64, MemFlags::trusted(), ctx, Ctx::EXECUTED);
    let e = b.ins().iadd_imm(e, n);
    b.ins().store(MemFlags::trusted(), e, ctx, Ctx::EXECUTED);
    e
}

/// ctx.pass |= bits ([`emu_core::sem::pass_bits`]).
fn note_pass(b: &mut FunctionBuilder<'_>, ctx: Value, bits: u32) {
    let p = b.ins().load(types::I32, MemFlags::trusted(), ctx, Ctx::PASS);
    let p = b.ins().bor_imm(p, bits as i64);
    b.ins().store(MemFlags::trusted(), p, ctx, Ctx::PASS);
}

/// [`emu_core::sem::goes_back`] in IR, where the wave goes backwards (always, or when `backward` is set):
/// counts the pass or ends the count; whether the wave's turn ends there and the runner asks for [`POLL`]
/// ([`Ctx::poll_ends`]).
fn goes_back(b: &mut FunctionBuilder<'_>, ctx: Value, backward: Option<Value>) -> Value {
    use cranelift_codegen::ir::condcodes::IntCC;
    use emu_core::sem::{PASS_COUNT_SHIFT, PASS_LOADED, PASS_WROTE, POLLS_PER_TURN};
    let p = b.ins().load(types::I32, MemFlags::trusted(), ctx, Ctx::PASS);
    let flags = b.ins().band_imm(p, (PASS_LOADED | PASS_WROTE) as i64);
    let polling = b.ins().icmp_imm(IntCC::Equal, flags, PASS_LOADED as i64);
    let n = b.ins().ushr_imm(p, PASS_COUNT_SHIFT as i64);
    let n = b.ins().iadd_imm(n, 1);
    let zero = b.ins().iconst(types::I32, 0);
    let n = b.ins().select(polling, n, zero);
    let turn = b
        .ins()
        .icmp_imm(IntCC::UnsignedGreaterThanOrEqual, n, POLLS_PER_TURN as i64);
    let counted = b.ins().ishl_imm(n, PASS_COUNT_SHIFT as i64);
    let after = b.ins().select(turn, zero, counted);
    let ends = b.ins().load(types::I32, MemFlags::trusted(), ctx, Ctx::POLL_ENDS);
    let ends = b.ins().icmp_imm(IntCC::NotEqual, ends, 0);
    let polled = b.ins().band(turn, ends);
    match backward {
        None => {
            b.ins().store(MemFlags::trusted(), after, ctx, Ctx::PASS);
            polled
        }
        Some(back) => {
            let after = b.ins().select(back, after, p);
            b.ins().store(MemFlags::trusted(), after, ctx, Ctx::PASS);
            b.ins().band(polled, back)
        }
    }
}

/// The status of a block leaving where the wave may go backwards ([`goes_back`]): [`POLL`] where that ends its
/// turn, else [`CONTINUE`].
fn back_status(b: &mut FunctionBuilder<'_>, ctx: Value, backward: Option<Value>) -> Value {
    let polled = goes_back(b, ctx, backward);
    let (poll, cont) = (
        b.ins().iconst(types::I32, POLL as i64),
        b.ins().iconst(types::I32, CONTINUE as i64),
    );
    b.ins().select(polled, poll, cont)
}

/// ctx.code_base + offset.
fn rel_pc(b: &mut FunctionBuilder<'_>, ctx: Value, offset: u64) -> Value {
    let base = b.ins().load(types::I64, MemFlags::trusted(), ctx, Ctx::CODE_BASE);
    b.ins().iadd_imm(base, offset as i64)
}

/// Back to the block's start after `executed` instructions of this pass — unless that ends the wave's turn
/// going round a polling loop and the runner set [`Ctx::poll_ends`] ([`goes_back`]), in which case the block
/// returns [`POLL`] at its own start; or the wave's instruction budget is spent, in which case the block
/// returns (at its own start) and the runner reports the runaway.
fn loop_back(
    b: &mut FunctionBuilder<'_>,
    ctx: Value,
    body: cranelift_codegen::ir::Block,
    offset: u64,
    executed: i64,
    pass: i64,
) {
    let e = add_executed(b, ctx, executed);
    let polled = goes_back(b, ctx, None);
    let (leave_now, go_on) = (b.create_block(), b.create_block());
    b.ins().brif(polled, leave_now, &[], go_on, &[]);
    b.switch_to_block(leave_now);
    return_at(b, ctx, offset, POLL);
    b.switch_to_block(go_on);
    let budget = b.ins().load(types::I64, MemFlags::trusted(), ctx, Ctx::BUDGET);
    // another pass (at most `pass` instructions: the whole block) must fit in the budget; otherwise return and
    // let the runner approach the limit instruction by instruction
    let after_next = b.ins().iadd_imm(e, pass);
    let spent = b.ins().icmp(
        cranelift_codegen::ir::condcodes::IntCC::UnsignedGreaterThan,
        after_next,
        budget,
    );
    let stop = b.create_block();
    b.ins().brif(spent, stop, &[], body, &[]);
    b.switch_to_block(stop);
    return_at(b, ctx, offset, CONTINUE);
}

/// Returns `status`, the wave to go on at ctx.code_base + offset (the executed count already added).
fn return_at(b: &mut FunctionBuilder<'_>, ctx: Value, offset: u64, status: u32) {
    let t = rel_pc(b, ctx, offset);
    b.ins().store(MemFlags::trusted(), t, ctx, Ctx::NEXT_PC);
    let s = b.ins().iconst(types::I32, status as i64);
    b.ins().return_(&[s]);
}

/// [`Flow::resolve`] in IR: relative PCs ([`rel_pc`]) and the absolute address of an indirect jump.
struct PcIr<'a, 'f> {
    b: &'a mut FunctionBuilder<'f>,
    ctx: Value,
    base: u64,
}

impl PcOps<Value> for PcIr<'_, '_> {
    type P = Value;
    fn at(&mut self, pc: u64) -> Value {
        rel_pc(self.b, self.ctx, pc.wrapping_sub(self.base))
    }
    fn pick(&mut self, cond: Value, taken: Value, not_taken: Value) -> Value {
        let c = self.b.ins().band_imm(cond, 1);
        self.b.ins().select(c, taken, not_taken)
    }
    fn join(&mut self, lo: Value, hi: Value) -> Value {
        let lo = self.b.ins().uextend(types::I64, lo);
        let hi = self.b.ins().uextend(types::I64, hi);
        let hi = self.b.ins().ishl_imm(hi, 32);
        self.b.ins().bor(lo, hi)
    }
}

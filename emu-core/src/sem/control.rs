//! Program control: the end of a wave, barriers, traps, waits, branches, and the PC-reading and PC-setting
//! scalar instructions (s_getpc_b64, s_setpc_b64, s_swappc_b64, s_call_b64). Control flow returns as a [`Flow`].

use isa_amdgpu::encoding::Field;
use isa_amdgpu::{Inst, Opcode};

use super::backend::*;
use super::operand::*;
use super::{unsupported, ExecError, Flow};

/// Executes a program-control instruction at `pc`.
pub(super) fn execute<B: Backend>(b: &mut B, inst: &Inst, pc: u64) -> Result<Flow<B::S>, ExecError> {
    use Opcode as O;
    let next_pc = pc + inst.size() as u64;
    match inst.info.opcode {
        O::SEndpgm => Ok(Flow::End),
        O::SNop | O::SWaitcnt | O::SSetprio | O::SSleep => Ok(Flow::Next),
        // hints and caches wavejit does not model (code is never written, performance levels and thread traces
        // change nothing a kernel sees, and no wave sleeps to be woken)
        O::SIcacheInv | O::SIncperflevel | O::SDecperflevel | O::STtracedata | O::SWakeup => Ok(Flow::Next),
        // the debugger's conditional branches: no debugger sets the bits they test
        O::SCbranchCdbgsys | O::SCbranchCdbguser | O::SCbranchCdbgsysOrUser | O::SCbranchCdbgsysAndUser => {
            Ok(Flow::Next)
        }
        O::SBarrier => Ok(Flow::Barrier),
        O::SSetGprIdxOff | O::SSetGprIdxMode => super::index::execute(b, inst),
        O::STrap => Err(ExecError::Trap(inst.field(Field::Simm16) & 0xff)),
        // the message id in bits 0-3: an interrupt (1) carries M0 to the interrupt handler; the others go to the
        // graphics pipeline or the trap handler, which a compute dispatch on wavejit has not
        O::SSendmsg => match inst.field(Field::Simm16) & 0xf {
            1 => {
                let m0 = b.s_get(124);
                b.s_interrupt(m0);
                Ok(Flow::Next)
            }
            _ => Err(ExecError::Refused {
                mnemonic: inst.info.name,
                why: "sends a message to the graphics pipeline or the trap handler, neither of which a compute dispatch on wavejit has (only MSG_INTERRUPT is delivered)",
            }),
        },
        O::SBranch
        | O::SCbranchScc0
        | O::SCbranchScc1
        | O::SCbranchExecz
        | O::SCbranchExecnz
        | O::SCbranchVccz
        | O::SCbranchVccnz => {
            let simm = inst.field(Field::Simm16) as u16 as i16 as i64;
            let target = (next_pc as i64).wrapping_add(simm * 4) as u64;
            let cond = match inst.info.opcode {
                O::SBranch => return Ok(Flow::Jump(target)),
                O::SCbranchScc1 => b.scc(),
                O::SCbranchScc0 => {
                    let s = b.scc();
                    let one = b.s_const(1);
                    b.s_op(SOp::Xor, s, one)
                }
                O::SCbranchExecz | O::SCbranchExecnz => {
                    let m = b.exec();
                    let (lo, hi) = b.mask_parts(m);
                    let nz = nonzero64(b, lo, hi);
                    if inst.info.opcode == O::SCbranchExecnz {
                        nz
                    } else {
                        let one = b.s_const(1);
                        b.s_op(SOp::Xor, nz, one)
                    }
                }
                _ => {
                    let (lo, hi) = (b.s_get(106), b.s_get(107));
                    let nz = nonzero64(b, lo, hi);
                    if inst.info.opcode == O::SCbranchVccnz {
                        nz
                    } else {
                        let one = b.s_const(1);
                        b.s_op(SOp::Xor, nz, one)
                    }
                }
            };
            Ok(Flow::Branch { cond, target })
        }

        // ---- scalar memory ----------------------------------------------------------------------------
        O::SGetpcB64 => {
            let (lo, hi) = (b.s_const(next_pc as u32), b.s_const((next_pc >> 32) as u32));
            let d = inst.field(Field::Sdst);
            b.s_set(d, lo);
            b.s_set(d + 1, hi);
            Ok(Flow::Next)
        }
        O::SSetpcB64 | O::SSwappcB64 => {
            let (lo, hi) = scalar_src64(b, inst, Field::Ssrc0)?;
            if inst.info.opcode == O::SSwappcB64 {
                let (rl, rh) = (b.s_const(next_pc as u32), b.s_const((next_pc >> 32) as u32));
                let d = inst.field(Field::Sdst);
                b.s_set(d, rl);
                b.s_set(d + 1, rh);
            }
            Ok(Flow::Indirect { lo, hi })
        }
        O::SCallB64 => {
            // D = PC + 4 (the next instruction), PC = PC + 4 + signext(SIMM16) * 4
            let simm = inst.field(Field::Simm16) as u16 as i16 as i64;
            let (rl, rh) = (b.s_const(next_pc as u32), b.s_const((next_pc >> 32) as u32));
            let d = inst.field(Field::Sdst);
            b.s_set(d, rl);
            b.s_set(d + 1, rh);
            Ok(Flow::Jump((next_pc as i64).wrapping_add(simm * 4) as u64))
        }
        _ => Err(unsupported(inst)),
    }
}

//! Instructions that have no meaning in a compute kernel on wavejit, refused with why: the trap handler's,
//! the debugger's, context switching and graphics; and the rows of the instruction table on no target the
//! engines execute (gfx950's own instructions). (Instructions wavejit could run but does not are refused as
//! unsupported by their family module instead.)

use isa_amdgpu::{Inst, Opcode};

use super::ExecError;

/// Why `op` cannot run, if it cannot.
pub(super) fn why(op: Opcode) -> Option<&'static str> {
    use Opcode as O;
    Some(match op {
        O::SRfeB64 | O::SRfeRestoreB64 => {
            "returns from a trap handler, and wavejit runs none (a trap stops the dispatch with its report)"
        }
        O::SSethalt => "halts the wave for a debugger, and wavejit attaches none",
        O::SEndpgmSaved => "ends a wave saved by a context switch, which wavejit never performs",
        O::SEndpgmOrderedPsDone | O::SSetkill | O::VScreenPartition4seB32 => {
            "a graphics (pixel shader) instruction, and wavejit runs compute kernels"
        }
        O::SSendmsghalt => "sends a message and halts the wave, which only the trap handler does",
        O::SSetvskip => "sets the debugger's vector skip mode, and wavejit attaches no debugger",
        O::SCbranchGFork | O::SCbranchIFork | O::SCbranchJoin => {
            "uses the control-stack fork/join of early GCN compilers, which wavejit does not keep"
        }
        _ => return None,
    })
}

/// Refuses `inst` if it cannot run.
pub(super) fn check(inst: &Inst) -> Result<(), ExecError> {
    match why(inst.info.opcode) {
        Some(why) => Err(ExecError::Refused {
            mnemonic: inst.info.name,
            why,
        }),
        None => Ok(()),
    }
}

/// Why both engines refuse the rows of the instruction table that exist on no target they execute.
pub const NOT_EXECUTED_TARGET: &str =
    "a gfx950 (CDNA4) instruction: wavejit decodes and disassembles gfx950 code, and executes none of it";

/// Refuses `inst` if its row exists on no target the engines execute (in any form: checked before all).
pub(super) fn check_target(inst: &Inst) -> Result<(), ExecError> {
    if isa_amdgpu::Target::EXECUTED.iter().any(|t| inst.info.on(*t)) {
        Ok(())
    } else {
        Err(ExecError::Refused {
            mnemonic: inst.info.name,
            why: NOT_EXECUTED_TARGET,
        })
    }
}

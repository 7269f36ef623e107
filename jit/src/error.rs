//! What can go wrong in the JIT: no code generator for the host, a block Cranelift or the JIT backend cannot
//! translate, a difference the crosscheck finds between the engines, a block status the runner does not know.
//! During a dispatch these reach the caller inside an `EngineError` (`Translation` for a block that does not
//! translate, `Crosscheck` for a difference), written from the typed error here.

use cranelift_codegen::settings::SetError;
use cranelift_codegen::CodegenError;
use cranelift_module::ModuleError;
use emu_core::memory::MemoryFault;
use emu_core::sem::ExecError;

/// Why the JIT could not do what it was asked.
#[derive(Debug, thiserror::Error)]
pub enum JitError {
    /// Cranelift has no code generator for the host CPU.
    #[error("no JIT for this host: {why}")]
    NoHost { why: &'static str },
    /// Cranelift refuses one of the JIT's settings.
    #[error("no JIT for this host: Cranelift setting {setting}: {error}")]
    Setting { setting: &'static str, error: SetError },
    /// Cranelift cannot build a code generator for the host CPU with the JIT's settings.
    #[error("no JIT for this host: {error}")]
    HostIsa { error: CodegenError },
    /// The JIT backend failed on an instruction its probe accepted.
    #[error("{mnemonic} at {pc:#x}: {error}")]
    Emit {
        pc: u64,
        mnemonic: &'static str,
        error: ExecError,
    },
    /// The JIT backend met something it cannot emit in an instruction its probe accepted.
    #[error("{mnemonic} at {pc:#x}: {what} after a successful probe")]
    Unsupported {
        pc: u64,
        mnemonic: &'static str,
        what: &'static str,
    },
    /// Cranelift cannot declare, define (compile) or finalize the function of the block at `pc`.
    #[error("block at {pc:#x}: Cranelift cannot {step} its function: {error}")]
    Module {
        pc: u64,
        step: &'static str,
        error: Box<ModuleError>,
    },
    /// A block's code cannot be resolved against its symbols (see `reloc`).
    #[error("block at {pc:#x}: {error}")]
    Reloc { pc: u64, error: crate::reloc::RelocError },
    /// Crosscheck: an instruction of a block the JIT ran does not decode for the interpreter.
    #[error("crosscheck: cannot decode at {pc:#x}: {error}")]
    Decode { pc: u64, error: isa_amdgpu::DecodeError },
    /// Crosscheck: device memory could not be copied to run a block again.
    #[error("cannot copy device memory: {error}")]
    Snapshot { error: MemoryFault },
    /// Crosscheck: the interpreter faults at `pc` in a block the JIT ran without a fault.
    #[error("the interpreter faults at {pc:#x} where the JIT did not: {error}")]
    InterpreterFaults { pc: u64, error: ExecError },
    /// Crosscheck: the JIT faulted in the block from `start`, whose `executed` instructions the interpreter runs
    /// without a fault (`last`: the last of them).
    #[error("the JIT faulted in the block from {start:#x}; the interpreter ran its {executed} instructions without a fault (last: {})", .last.join("; "))]
    JitFaults {
        start: u64,
        executed: u64,
        last: Vec<String>,
    },
    /// Crosscheck: the engines' registers, LDS or memory differ (`diff`: the first difference) after `executed`
    /// instructions from `start` (`last`: the last of them, when known).
    #[error("{diff} after {executed} instructions from {start:#x}{}", last_instructions(.last))]
    Differ {
        start: u64,
        executed: u64,
        diff: String,
        last: Vec<String>,
    },
    /// A block returned a status the runner does not know.
    #[error("block at {pc:#x} returned status {status}")]
    Status { pc: u64, status: u32 },
}

/// ` (last: a; b; c)`, or nothing when `last` is empty.
fn last_instructions(last: &[String]) -> String {
    if last.is_empty() {
        String::new()
    } else {
        format!(" (last: {})", last.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crosscheck_differences_read_as_before_and_name_the_last_instructions_when_known() {
        let regs = JitError::Differ {
            start: 0x100,
            executed: 3,
            diff: "v2 lane 17: interpreter 0x0, JIT 0x1".into(),
            last: vec!["s_nop 0".into(), "v_mov_b32_e32 v2, 1".into()],
        };
        assert_eq!(
            regs.to_string(),
            "v2 lane 17: interpreter 0x0, JIT 0x1 after 3 instructions from 0x100 (last: s_nop 0; v_mov_b32_e32 v2, 1)"
        );
        let mem = JitError::Differ {
            start: 0x100,
            executed: 3,
            diff: "LDS byte 0x1f: interpreter 0x00, JIT 0x07".into(),
            last: vec![],
        };
        assert_eq!(
            mem.to_string(),
            "LDS byte 0x1f: interpreter 0x00, JIT 0x07 after 3 instructions from 0x100"
        );
        fn send_sync<T: Send + Sync + 'static>(_: &T) {}
        send_sync(&mem);
    }
}

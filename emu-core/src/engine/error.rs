//! Why a dispatch stopped ([`EngineError`]), and the report of one its timeout stopped.

use isa_amdgpu::disasm;

use super::{DecodeCache, LoadedCode};
use crate::dispatch::DispatchError;
use crate::kernarg::KernargError;
use crate::memory::{AllocError, DeviceMemory};
use crate::sem::ExecError;

/// Why a dispatch stopped.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Dispatch(#[from] DispatchError),
    #[error(transparent)]
    Kernarg(#[from] KernargError),
    #[error(transparent)]
    Alloc(#[from] AllocError),
    #[error("kernel {kernel}: code object is for {found}, the device runs {device}")]
    WrongTarget {
        kernel: String,
        found: String,
        device: &'static str,
    },
    #[error("kernel {kernel}: no metadata for it in the code object")]
    NoMetadata { kernel: String },
    #[error("kernel {kernel}, workgroup {workgroup:?}, wave {wave}, pc {pc:#x} (`{text}`): {error}")]
    Fault {
        kernel: String,
        workgroup: [u32; 3],
        wave: u32,
        pc: u64,
        text: String,
        error: Box<ExecError>,
    },
    #[error("kernel {kernel}, workgroup {workgroup:?}, wave {wave}, pc {pc:#x}: cannot decode instruction: {error}")]
    IllegalInstruction {
        kernel: String,
        workgroup: [u32; 3],
        wave: u32,
        pc: u64,
        error: isa_amdgpu::DecodeError,
    },
    #[error("kernel {kernel}, workgroup {workgroup:?}, wave {wave}, block at pc {pc:#x}: the engines differ: {diff}")]
    Crosscheck {
        kernel: String,
        workgroup: [u32; 3],
        wave: u32,
        pc: u64,
        diff: String,
    },
    #[error("kernel {kernel}, pc {pc:#x}: the JIT could not translate this block: {why}")]
    Translation { kernel: String, pc: u64, why: String },
    #[error("kernel {kernel}: its descriptor asks for float mode {what}; the engine computes with IEEE round-to-nearest-even and denormals kept (clang's default for gfx90a/gfx942)")]
    FloatMode { kernel: String, what: String },
    #[error("kernel {kernel}: {what}")]
    GridSync { kernel: String, what: String },
    #[error("kernel {kernel}: timing model: {what}")]
    Timing { kernel: String, what: String },
    /// A dispatch run under a debugger or recorder (the `inspect` crate) could not go on.
    #[error("kernel {kernel}: {what}")]
    Inspect { kernel: String, what: String },
    #[error("kernel {kernel}, workgroup {workgroup:?}, wave {wave}: ran {limit} instructions without ending (a runaway kernel, or one longer than the per-wave instruction limit)")]
    Runaway {
        kernel: String,
        workgroup: [u32; 3],
        wave: u32,
        limit: u64,
    },
    /// A dispatch stopped by its timeout ([`crate::watch`]), with where its waves were.
    #[error("kernel {kernel}: stopped after {seconds:.1} s (the timeout): {done} of {total} waves had ended, {instructions} instructions executed; {waves}")]
    Timeout {
        kernel: String,
        seconds: f64,
        done: u64,
        total: u64,
        instructions: u64,
        /// Where each wave still running was: "workgroup [0, 0, 0] wave 1 at pc 0x… (`s_branch …`)", ...
        waves: String,
    },
    /// A wave's runner saw its dispatch's [`crate::watch::Progress::stopped`]: what becomes
    /// [`EngineError::Timeout`] once every wave has stopped.
    #[error("kernel {kernel}: stopped")]
    Stopped { kernel: String },
}

/// The [`EngineError::Timeout`] of a dispatch that `progress` stopped, its waves' places decoded from `code`.
pub fn timeout_error(
    kernel: &str,
    progress: &crate::watch::Progress,
    mem: &DeviceMemory,
    code: &LoadedCode,
    cache: &DecodeCache,
) -> EngineError {
    let (done, _, instructions) = progress.counts();
    let at = progress.stopped_waves();
    const SHOWN: usize = 16;
    let mut waves: Vec<String> = at
        .iter()
        .take(SHOWN)
        .map(|(wg, w, pc)| {
            let text = cache
                .get(mem, code, *pc)
                .map(|i| disasm::text(&i))
                .unwrap_or_else(|_| "undecodable".into());
            let offset = pc.wrapping_sub(code.base);
            format!("workgroup {wg:?} wave {w} at pc {pc:#x} (code offset {offset:#x}: `{text}`)")
        })
        .collect();
    if at.len() > SHOWN {
        waves.push(format!("and {} more", at.len() - SHOWN));
    }
    let waves = if waves.is_empty() {
        "no wave was running".to_string()
    } else {
        format!("waves still running: {}", waves.join("; "))
    };
    EngineError::Timeout {
        kernel: kernel.to_string(),
        seconds: progress.elapsed().as_secs_f64(),
        done,
        total: progress.total(),
        instructions,
        waves,
    }
}

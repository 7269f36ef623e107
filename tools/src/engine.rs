//! `--engine jit|interp|crosscheck`: which engine runs a dispatch. The JIT is the default; crosscheck runs the
//! interpreter and the JIT from the same device memory and stops at the first byte that differs. A dispatch
//! of the command line is a [`Dispatch`], with LDS asked for at launch (`--lds`).

use emu_core::engine::{Interpreter, KernelDispatch, Limits, RunStats};
use emu_core::observe::NoObserver;
use emu_core::timing::TimingStats;

pub use gpu::launch::{group_segment, Dispatch};
pub use gpu::stats::JitDelta;

/// The engines a command can run kernels on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum EngineKind {
    /// Compiled to host code with Cranelift (instructions it does not translate run on the interpreter).
    Jit,
    /// The interpreter.
    Interp,
    /// Both, from the same memory: every block is re-run on the interpreter in lockstep (a difference in
    /// registers, LDS or memory stops the dispatch with a diff), and the whole dispatch's memory is compared.
    Crosscheck,
}

/// The engines of a command that runs one engine at a time (the debugger, the explorer).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OneEngine {
    /// Compiled to host code with Cranelift (instructions it does not translate run on the interpreter).
    Jit,
    /// The interpreter.
    Interp,
}

impl EngineKind {
    pub fn name(self) -> &'static str {
        match self {
            EngineKind::Jit => "jit",
            EngineKind::Interp => "interp",
            EngineKind::Crosscheck => "crosscheck",
        }
    }

    /// The help of an `--engine` that takes an engine's name as text (`exec` and `profile`, which pass it to
    /// the runtime): `what`, then every engine's name.
    pub fn help(what: &str) -> String {
        use clap::ValueEnum;
        let names: Vec<&str> = EngineKind::value_variants().iter().map(|e| e.name()).collect();
        format!("{what}: {} (default: jit)", names.join(", "))
    }
}

/// Runs `d` on `kind` (in the timing model when `d.limits.timing`: on the JIT or the interpreter).
pub fn dispatch<'a>(
    kind: EngineKind,
    jit: &jit::Jit,
    d: impl Into<Dispatch<'a>>,
) -> Result<(RunStats, JitDelta), Box<dyn std::error::Error>> {
    let (s, delta, _) = dispatch_timed(kind, jit, d)?;
    Ok((s, delta))
}

/// [`dispatch`], with the timing model's statistics when `d.limits.timing`.
pub fn dispatch_timed<'a>(
    kind: EngineKind,
    jit: &jit::Jit,
    d: impl Into<Dispatch<'a>>,
) -> Result<(RunStats, JitDelta, Option<TimingStats>), Box<dyn std::error::Error>> {
    let d = &d.into();
    let (mem, kernel, limits) = (d.kernel.mem, d.kernel.kernel, d.kernel.limits);
    let before = jit.stats();
    let delta = |jit: &jit::Jit| JitDelta::since(&before, jit);
    if limits.timing {
        return match kind {
            EngineKind::Jit => {
                let (s, t) = d.run_timed(jit, &NoObserver)?;
                Ok((s, delta(jit), Some(t)))
            }
            EngineKind::Interp => {
                let (s, t) = d.run_timed(&Interpreter, &NoObserver)?;
                Ok((s, JitDelta::default(), Some(t)))
            }
            EngineKind::Crosscheck => {
                Err("--timing runs on one engine: --engine jit or --engine interp (both give the same cycles)".into())
            }
        };
    }
    let (s, delta) = functional(kind, jit, d, mem, kernel, limits, delta)?;
    Ok((s, delta, None))
}

/// A functional dispatch on `kind`.
fn functional(
    kind: EngineKind,
    jit: &jit::Jit,
    d: &Dispatch<'_>,
    mem: &emu_core::memory::DeviceMemory,
    kernel: &isa_amdgpu::codeobj::Kernel,
    limits: Limits,
    delta: impl Fn(&jit::Jit) -> JitDelta,
) -> Result<(RunStats, JitDelta), Box<dyn std::error::Error>> {
    match kind {
        EngineKind::Interp => Ok((d.run_observed(&NoObserver)?, JitDelta::default())),
        EngineKind::Jit => {
            let s = d.run_with(jit, &NoObserver)?;
            // what the background translator was handed during the dispatch is counted (and on disk) too
            jit.settle();
            Ok((s, delta(jit)))
        }
        EngineKind::Crosscheck => {
            let initial = mem.snapshot_buffers()?;
            let interp = d.run_observed(&NoObserver);
            let after_interp = mem.snapshot_buffers()?;
            mem.restore_buffers(&initial)?;
            // the JIT side checks every block against the interpreter as it goes (one host thread, so no other
            // wave changes memory between the two runs of a block)
            let lockstep = jit::Jit::crosscheck()?;
            let jitted = Dispatch {
                kernel: KernelDispatch {
                    limits: Limits {
                        threads: Some(1),
                        ..limits
                    },
                    ..d.kernel
                },
                ..*d
            }
            .run_with(&lockstep, &NoObserver);
            let jd = JitDelta::since(&jit::JitStats::default(), &lockstep);
            match (interp, jitted) {
                (Ok(i), Ok(j)) => {
                    let after_jit = mem.snapshot_buffers()?;
                    for ((addr, x), (_, y)) in after_interp.iter().zip(&after_jit) {
                        if let Some(off) = x.iter().zip(y).position(|(p, q)| p != q) {
                            let word = off & !3;
                            let w = |b: &[u8]| u32::from_le_bytes(b[word..word + 4].try_into().unwrap_or_default());
                            return Err(format!(
                                "crosscheck: kernel {}: the engines differ at byte {off} of the buffer at {addr:#x}: \
                                 interpreter {:#010x} ({}), JIT {:#010x} ({})",
                                kernel.name,
                                w(x),
                                f32::from_bits(w(x)),
                                w(y),
                                f32::from_bits(w(y))
                            )
                            .into());
                        }
                    }
                    if !i.same_but_code_address(&j) && limits.threads == Some(1) {
                        return Err(
                            format!("crosscheck: kernel {}: interpreter ran {i:?}, JIT {j:?}", kernel.name).into(),
                        );
                    }
                    Ok((j, jd))
                }
                (Err(i), Err(j)) => {
                    eprintln!("crosscheck: both engines fail; JIT: {j}");
                    Err(i.into())
                }
                (Err(i), Ok(_)) => Err(format!("crosscheck: only the interpreter fails: {i}").into()),
                (Ok(_), Err(j)) => Err(format!("crosscheck: only the JIT fails: {j}").into()),
            }
        }
    }
}

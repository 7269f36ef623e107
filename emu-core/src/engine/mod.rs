//! Runs a kernel dispatch: loads the code object into device memory, builds the kernarg segment, starts the
//! waves of every workgroup with the state the hardware gives them and interprets them to `s_endpgm`, with
//! `s_barrier` synchronising the waves of a workgroup. Every fault names the kernel, the PC, the instruction
//! and (for memory) the lane and address.
//!
//! The parts: the dispatch's [`Limits`] (here); loading code and decoding it once ([`code`]); a launch, its
//! checks and [`KernelDispatch`], which loads and launches a code object ([`launch`]); building workgroups and
//! their waves ([`group`]); running a wave ([`runner`]: [`WaveRunner`], the interpreter's); the [`Scheduler`]
//! seam and the [`Dispatch`] a scheduler is given ([`scheduler`]); the functional rounds ([`rounds`]); what a
//! dispatch did ([`stats`]) and why it stopped ([`error`]). The device clock a dispatch is given is
//! [`crate::clock`]'s, and [`run_launch`], which picks a launch's scheduler, is [`crate::launch`]'s.

mod code;
mod error;
mod group;
mod launch;
mod rounds;
mod runner;
mod scheduler;
mod stats;

pub use crate::clock::DeviceClock;
pub use crate::launch::run_launch;
pub use code::{load_code, may_grid_sync, DecodeCache, LoadedCode};
pub use error::{timeout_error, EngineError};
pub use group::{build_group, build_group_in, group_private_bytes, recycle, Group};
pub use launch::{
    check_launch, dispatch_context, dispatch_packet, resources, KernelDispatch, Launch, DISPATCH_PACKET_BYTES,
};
pub use rounds::Functional;
pub use runner::{Interpreter, WaveRun, WaveRunner};
pub use scheduler::{Dispatch, Scheduler};
pub use stats::{RunStats, SlackReport};

/// How a dispatch runs: limits that stop a runaway kernel, and host parallelism.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Instructions one wave may execute.
    pub max_wave_instructions: u64,
    /// Host threads running workgroups in parallel (`None`: all cores). Results do not depend on it.
    pub threads: Option<usize>,
    /// Instructions a wave runs before the others get a turn (`None`: until it waits or ends). Cooperative
    /// launches that sync the grid take turns (of this many, or 20,000 when `None`), so a wave spinning on a
    /// flag another workgroup sets lets that workgroup run.
    pub slice: Option<u64>,
    /// A turn also ends before an instruction that reads a clock, unless that instruction is the turn's
    /// first ([`crate::sem::reads_clock`]): the timing model sets the wave's clock to the modeled cycle at
    /// which a turn starts issuing.
    pub clock_ends_turn: bool,
    /// A turn also ends where the wave has gone round a polling loop [`crate::sem::POLLS_PER_TURN`] times in a
    /// row ([`crate::sem::goes_back`]), and the wave is marked [`crate::wave::WaveState::polled`]: a wave
    /// spinning on a flag another workgroup sets lets its host thread run other workgroups meanwhile.
    /// [`run_launch`] sets it for the dispatches it runs functionally.
    pub poll_ends_turn: bool,
    /// Run the dispatch in the timing model ([`run_launch`] schedules it there): one host thread, modeled
    /// cycles, the same results.
    pub timing: bool,
    /// Watch the dispatch ([`crate::watch`]): progress reports while it runs long, and its timeout.
    pub watch: Option<crate::watch::Watch>,
}

/// The per-wave instruction limit of every command and of programs run on the runtime shim, unless told
/// otherwise: ten billion, minutes of emulation for one wave, far beyond what the test suites of HIP and its
/// libraries run, so only a kernel that never ends reaches it. A dispatch that runs long says so on stderr
/// meanwhile ([`crate::watch`]), and a timeout stops it sooner.
pub const DEFAULT_MAX_WAVE_INSTRUCTIONS: u64 = 10_000_000_000;

/// The per-wave instruction limit a person asked for: `n`, or none (`u64::MAX`) for 0.
pub fn instruction_limit(n: u64) -> u64 {
    if n == 0 {
        u64::MAX
    } else {
        n
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_wave_instructions: DEFAULT_MAX_WAVE_INSTRUCTIONS,
            threads: None,
            slice: None,
            clock_ends_turn: false,
            poll_ends_turn: false,
            timing: false,
            watch: Some(crate::watch::Watch::default()),
        }
    }
}

//! The observation seam: a profiler, a debugger or a test sees what a dispatch does as plain-data
//! [`Event`]s — dispatch begin and end, workgroups and waves starting and ending (with their CU and SIMD in
//! timing mode), every instruction with its unit, EXEC, every lane's memory access and (in timing mode) its
//! issue cycle and stalls, barriers and `s_waitcnt` waits — without touching results.
//!
//! Events hold no references into the engine: numbers, names, and the lane accesses of one instruction
//! ([`Accesses`]): a borrowed slice of plain records, or — the common case of a vector memory instruction
//! whose lanes access consecutive elements — one [`LaneRange`] (base, element size, lanes), which both engines
//! deliver by the same rule ([`LaneRange::of`]) and which reads lane by lane like the records it stands for
//! ([`Accesses::iter`]). [`Event::into_owned`] keeps an event. They serialize with serde, the opcode as its
//! mnemonic, the unit as its table name and the accesses lane by lane, so a trace written as JSON reads on its
//! own.
//!
//! The engines are generic over the [`Observer`]: with [`NoObserver`] every call compiles to nothing and no
//! event is built. Engines report executed instructions through [`Observer::instruction`] (an [`InstEvent`]
//! that points at the decoded instruction); the dispatch loop turns those into [`Event::Instruction`]s for the
//! observer's [`Observer::event`] ([`Dispatched`]). Observers implement `event`; `instruction`, `switch_wave`
//! and `wave_end` are the engines' side of the seam (an observer may still watch them, e.g. to interleave the
//! waves of a workgroup in a functional dispatch). In timing mode the engines report to the timing model, which
//! reports each instruction to the observer as an event when it issues.
//!
//! The parts: lane accesses and their classification ([`access`]); the events and what they carry
//! ([`event`]); the engines' reports of executed instructions ([`inst`]); the [`Observer`] seam (here); the
//! observer of one functional dispatch ([`dispatched`]).

mod access;
mod dispatched;
mod event;
mod inst;
#[cfg(test)]
mod tests;

pub use access::{classify, space_of, AccessIter, Accesses, Dir, LaneAccess, LaneRange, Space};
pub use dispatched::Dispatched;
pub use event::{CachePolicy, Event, InstructionEvent, Issue, MemoryOp, Placement, Resources, Stalls};
pub use inst::{InstBatch, InstEvent, WaitCounts};
use std::sync::atomic::{AtomicU64, Ordering};

/// Something that watches dispatches. Called from the host threads that run workgroups (in timing mode, from
/// the one thread that runs the model).
pub trait Observer: Sync {
    /// False only for [`NoObserver`]: engines skip producing events altogether.
    const ACTIVE: bool = true;
    /// Whether instruction events carry per-lane memory accesses (recording them costs a little).
    const WANTS_ACCESSES: bool = false;
    /// Every event of every dispatch, in order per wave.
    fn event(&self, _ev: &Event<'_>) {}
    /// Engines' side: after each instruction of each wave.
    fn instruction(&self, _ev: &InstEvent<'_>) {}
    /// Engines' side: after each instruction, true to let the workgroup's other waves issue before this one
    /// continues (results do not depend on it, barriers keep their meaning).
    fn switch_wave(&self, _ev: &InstEvent<'_>) -> bool {
        false
    }
    /// Engines' side: when a wave executes `s_endpgm`.
    fn wave_end(&self, _workgroup: [u32; 3], _wave: u32, _instructions: u64) {}
    /// Whether engines may report a run of instructions that access no memory as one [`InstBatch`]
    /// ([`Observer::batch`]) rather than one by one, at the end of the run: for observers that ask to switch
    /// waves only after an instruction that accesses memory (never within a run) and need no instruction
    /// before its run ends (counters, the timing model's recorder). The JIT then keeps such runs, and
    /// loops made of them, in compiled code. Each batched instruction is reported once, in the wave's order
    /// among its other reports; a batch's `s_waitcnt` and `s_barrier` events follow its instructions.
    const BATCHES: bool = false;
    /// Whether a functional dispatch (through [`Dispatched`]) tells the observer of each `s_waitcnt`'s counts
    /// ([`Event::Waitcnt`]) and each wave's arrival at `s_barrier` ([`Event::BarrierArrive`]). False for
    /// observers that ignore both: the dispatch then skips looking for them.
    const SIDE_EVENTS: bool = true;
    /// Engines' side, for observers with [`Observer::BATCHES`]: a run of instructions. By default each goes to
    /// [`Observer::instruction`].
    fn batch(&self, b: &InstBatch<'_>) {
        for _ in 0..b.times {
            for (pc, inst, exec) in b.iter() {
                self.instruction(&b.inst_event(pc, inst, exec));
            }
        }
    }
    /// The observer's side of [`Observer::batch`] (through [`Dispatched`], with the dispatch's number): by
    /// default each instruction as an [`Event::Instruction`].
    fn batch_event(&self, b: &InstBatch<'_>) {
        for (pc, inst, exec) in (0..b.times).flat_map(|_| b.iter()) {
            self.event(&Event::Instruction(InstructionEvent {
                dispatch: b.dispatch,
                workgroup: b.workgroup,
                wave: b.wave,
                pc,
                opcode: inst.info.opcode,
                unit: inst.info.unit,
                exec,
                issue: None,
                memory: None,
                accesses: Accesses::NONE,
            }));
        }
    }
}

/// Observes nothing, at no cost.
pub struct NoObserver;

impl Observer for NoObserver {
    const ACTIVE: bool = false;
}

/// A process-wide number for each dispatch, named in its events.
pub fn next_dispatch_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

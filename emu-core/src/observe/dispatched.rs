//! The observer of one functional dispatch ([`Dispatched`]): the engines' reports become [`Event`]s carrying the
//! dispatch's number.

use super::access::{classify, LaneAccess};
use super::event::{Event, InstructionEvent, MemoryOp};
use super::inst::{InstBatch, InstEvent, WaitCounts};
use super::Observer;
use isa_amdgpu::table::FlowControl;
use isa_amdgpu::Opcode;

/// An observer seen through one functional dispatch: the engines' reports become [`Event`]s carrying the
/// dispatch's number, and are passed on to the observer's own seam methods as well.
pub struct Dispatched<'o, O: Observer> {
    pub dispatch: u64,
    pub inner: &'o O,
}

thread_local! {
    static CLASSIFIED: std::cell::RefCell<Vec<LaneAccess>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl<O: Observer> Observer for Dispatched<'_, O> {
    const ACTIVE: bool = O::ACTIVE;
    const WANTS_ACCESSES: bool = O::WANTS_ACCESSES;
    const BATCHES: bool = O::BATCHES;

    fn batch(&self, b: &InstBatch<'_>) {
        let b = InstBatch {
            dispatch: self.dispatch,
            ..*b
        };
        self.inner.batch(&b);
        self.inner.batch_event(&b);
        if O::SIDE_EVENTS
            && b.insts
                .iter()
                .any(|i| matches!(i.info.opcode, Opcode::SWaitcnt | Opcode::SBarrier))
        {
            for (pc, inst, _) in (0..b.times).flat_map(|_| b.iter()) {
                self.side_events(&b.inst_event(pc, inst, 0));
            }
        }
    }

    fn event(&self, ev: &Event<'_>) {
        self.inner.event(ev);
    }

    fn instruction(&self, ev: &InstEvent<'_>) {
        self.inner.instruction(ev);
        let inst = ev.inst;
        CLASSIFIED.with_borrow_mut(|buf| {
            let accesses = classify(inst, &ev.accesses, buf);
            self.inner.event(&Event::Instruction(InstructionEvent {
                dispatch: self.dispatch,
                workgroup: ev.workgroup,
                wave: ev.wave,
                pc: ev.pc,
                opcode: inst.info.opcode,
                unit: inst.info.unit,
                exec: ev.exec,
                issue: None,
                memory: MemoryOp::of(inst),
                accesses,
            }));
        });
        if O::SIDE_EVENTS {
            self.side_events(ev);
        }
    }

    fn switch_wave(&self, ev: &InstEvent<'_>) -> bool {
        self.inner.switch_wave(ev)
    }

    fn wave_end(&self, workgroup: [u32; 3], wave: u32, instructions: u64) {
        self.inner.wave_end(workgroup, wave, instructions);
        self.inner.event(&Event::WaveEnd {
            dispatch: self.dispatch,
            workgroup,
            wave,
            instructions,
            cycle: None,
        });
    }
}

impl<O: Observer> Dispatched<'_, O> {
    /// The events an instruction brings besides its own: an `s_waitcnt`'s counts, a wave arriving at a barrier.
    fn side_events(&self, ev: &InstEvent<'_>) {
        let inst = ev.inst;
        if inst.info.opcode == Opcode::SWaitcnt {
            let c = WaitCounts::of(inst);
            let (dispatch, workgroup, wave, pc) = (self.dispatch, ev.workgroup, ev.wave, ev.pc);
            self.inner.event(&Event::Waitcnt {
                dispatch,
                workgroup,
                wave,
                pc,
                vmcnt: c.vmcnt,
                lgkmcnt: c.lgkmcnt,
                expcnt: c.expcnt,
                waited: None,
            });
        }
        if inst.info.flow == FlowControl::Barrier && inst.info.opcode == Opcode::SBarrier {
            self.inner.event(&Event::BarrierArrive {
                dispatch: self.dispatch,
                workgroup: ev.workgroup,
                wave: ev.wave,
                cycle: None,
            });
        }
    }
}

//! Counting executed instructions by the instruction table's functional unit.

use std::sync::atomic::{AtomicU64, Ordering};

use emu_core::observe::{Event, InstBatch, Observer};
use isa_amdgpu::table::Unit;

/// Counts executed instructions per functional unit, and active lanes of vector instructions. Workgroups on
/// other host threads add to the same counts.
#[derive(Default)]
pub struct ClassCounter {
    /// Indexed by `unit as usize` (the order of [`Unit::ALL`]).
    counts: [AtomicU64; Unit::ALL.len()],
    vector_lanes: AtomicU64,
}

impl ClassCounter {
    /// Instructions `unit` executed.
    pub fn count(&self, unit: Unit) -> u64 {
        self.counts[unit as usize].load(Ordering::Relaxed)
    }

    /// (unit, instructions) for every unit that executed something, in the order of [`Unit::ALL`].
    pub fn counts(&self) -> Vec<(Unit, u64)> {
        Unit::ALL
            .iter()
            .map(|&u| (u, self.count(u)))
            .filter(|(_, n)| *n > 0)
            .collect()
    }

    /// Sum over vector instructions of their active lanes (VALU lane operations and memory lanes).
    pub fn vector_lanes(&self) -> u64 {
        self.vector_lanes.load(Ordering::Relaxed)
    }
}

impl Observer for ClassCounter {
    const BATCHES: bool = true;

    /// Counted from [`Observer::batch_event`] alone.
    fn batch(&self, _b: &InstBatch<'_>) {}

    fn batch_event(&self, b: &InstBatch<'_>) {
        let (mut units, mut lanes) = ([0u64; Unit::ALL.len()], 0u64);
        for (inst, &exec) in b.insts.iter().zip(b.execs) {
            let unit = inst.info.unit;
            units[unit as usize] += 1;
            if unit.is_vector() {
                lanes += exec.count_ones() as u64;
            }
        }
        for (c, n) in self.counts.iter().zip(units) {
            if n > 0 {
                c.fetch_add(n * b.times, Ordering::Relaxed);
            }
        }
        self.vector_lanes.fetch_add(lanes * b.times, Ordering::Relaxed);
    }

    fn event(&self, ev: &Event<'_>) {
        let Event::Instruction(ev) = ev else { return };
        let unit = ev.unit;
        self.counts[unit as usize].fetch_add(1, Ordering::Relaxed);
        if unit.is_vector() {
            self.vector_lanes
                .fetch_add(ev.exec.count_ones() as u64, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use isa_amdgpu::{decode, Target};

    #[test]
    fn counts_instructions_by_unit_and_the_active_lanes_of_vector_ones() {
        // v_add_f32_e32 v0, v1, v2 (VALU) and s_nop 0 (SALU)
        let v_add = decode(&0x0200_0501u32.to_le_bytes(), 0, Target::Gfx90a).unwrap();
        let s_nop = decode(&0xbf80_0000u32.to_le_bytes(), 4, Target::Gfx90a).unwrap();
        assert_eq!((v_add.info.unit, s_nop.info.unit), (Unit::Valu, Unit::Salu));
        let counter = ClassCounter::default();
        let event = |inst: &isa_amdgpu::Inst, exec| {
            Event::Instruction(emu_core::observe::InstructionEvent {
                dispatch: 1,
                workgroup: [0; 3],
                wave: 0,
                pc: 0,
                opcode: inst.info.opcode,
                unit: inst.info.unit,
                exec,
                issue: None,
                memory: None,
                accesses: emu_core::observe::Accesses::NONE,
            })
        };
        counter.event(&event(&v_add, 0xff));
        counter.event(&event(&v_add, 1 << 63));
        counter.event(&event(&s_nop, u64::MAX));
        assert_eq!(counter.counts(), vec![(Unit::Salu, 1), (Unit::Valu, 2)]);
        assert_eq!((counter.count(Unit::Valu), counter.count(Unit::Lds)), (2, 0));
        assert_eq!(counter.vector_lanes(), 9, "8 + 1 lanes of v_add; s_nop counts none");
    }
}

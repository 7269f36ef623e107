//! What the scheduler knows about an instruction before it issues, and what a wave waits on.
//!
//! [`InstInfo`] is worked out once per instruction address from the table row and the timing table: the issue
//! category (at most one instruction per category issues per SIMD turn), the pipe and its cycles, the latency of
//! its results, the registers it reads and writes ([`crate::sem::analysis`]), and what it means to the
//! sequencer (`s_waitcnt` counts, barrier, end, `s_nop`/`s_sleep` cycles).
//!
//! [`WaveWaits`] is a wave's side: the results still being computed (only latencies longer than the issue
//! cadence can hold a dependent instruction, since a wave issues at most once per turn), and the completion
//! cycles of its outstanding vector memory (`vmcnt`, returned in order) and LDS/scalar/message
//! (`lgkmcnt`, in any order) operations.

use isa_amdgpu::encoding::Field;
use isa_amdgpu::table::WaitClass;
use isa_amdgpu::{Inst, Opcode};

use super::inst::{InstTiming, Latency, Pipe, TimingTable};
use crate::observe::{MemoryOp, WaitCounts};
use crate::sem::analysis::{registers, Regs};

/// The issue categories: per SIMD turn, at most one instruction of each, from different waves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Category {
    /// VALU and matrix core.
    Valu,
    /// SALU and scalar memory.
    Salu,
    /// Vector memory (global, buffer, scratch, FLAT).
    Vmem,
    Lds,
    /// Branches and messages.
    Branch,
    /// Handled by the sequencer without a unit (`s_nop`, `s_waitcnt`, `s_barrier`, `s_endpgm`, ...): takes the
    /// wave's turn, no category slot.
    Internal,
}

impl Category {
    /// Bit of the category in a turn's mask of used categories (0 for [`Category::Internal`]).
    pub fn bit(self) -> u8 {
        match self {
            Category::Valu => 1,
            Category::Salu => 2,
            Category::Vmem => 4,
            Category::Lds => 8,
            Category::Branch => 16,
            Category::Internal => 0,
        }
    }

    fn of(pipe: Pipe) -> Category {
        match pipe {
            Pipe::Valu | Pipe::Mfma | Pipe::MfmaExclusive => Category::Valu,
            Pipe::Salu | Pipe::Smem => Category::Salu,
            Pipe::Vmem | Pipe::Flat => Category::Vmem,
            Pipe::Lds => Category::Lds,
            Pipe::Branch | Pipe::Msg => Category::Branch,
            Pipe::Internal => Category::Internal,
        }
    }
}

/// What an instruction means to the sequencer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sequencer {
    Plain,
    Waitcnt(WaitCounts),
    Barrier,
    End,
    /// `s_nop` / `s_sleep`: the wave issues nothing else for this many cycles.
    Hold(u64),
    /// `ds_gws_*`: grid-wide sync, which the timing model does not schedule.
    GridSync,
}

/// Everything the scheduler needs about one instruction.
#[derive(Debug, Clone, Copy)]
pub struct InstInfo {
    pub inst: Inst,
    pub timing: InstTiming,
    pub category: Category,
    pub sequencer: Sequencer,
    /// Cycles the instruction occupies its pipe (`s_nop`/`s_sleep`: 1; their hold is in `sequencer`).
    pub issue: u64,
    /// Cycles from issue until the results can be read (`None`: a memory instruction, waited for with
    /// `s_waitcnt`).
    pub latency: Option<u64>,
    pub reads: Regs,
    pub writes: Regs,
    pub wait: WaitClass,
    pub memory: Option<MemoryOp>,
    /// Its bytes, and whether it can go on anywhere but the next instruction (a branch, a call, `s_endpgm`, a
    /// barrier): what the model asks of every executed instruction, kept here rather than behind `inst.info`.
    pub size: u32,
    pub flows: bool,
    /// The vector L1 lines a wave64 access of its bytes per lane at unit stride spans (at least one).
    pub l1_lines: u32,
}

impl InstInfo {
    /// The info of `inst` on the target `table` describes, with vector L1 lines of `1 << l1_line_shift` bytes,
    /// or `None` when the table has no timing for it.
    pub fn new(inst: &Inst, table: &TimingTable, l1_line_shift: u32) -> Option<InstInfo> {
        let timing = *table.get(inst.info.opcode)?;
        let sequencer = match inst.info.opcode {
            Opcode::SWaitcnt => Sequencer::Waitcnt(WaitCounts::of(inst)),
            Opcode::SBarrier => Sequencer::Barrier,
            Opcode::SEndpgm => Sequencer::End,
            Opcode::SNop | Opcode::SSleep => Sequencer::Hold(timing.issue_with_count(inst.field(Field::Simm16) & 0x7f)),
            Opcode::DsGwsBarrier
            | Opcode::DsGwsInit
            | Opcode::DsGwsSemaBr
            | Opcode::DsGwsSemaP
            | Opcode::DsGwsSemaReleaseAll
            | Opcode::DsGwsSemaV => Sequencer::GridSync,
            _ => Sequencer::Plain,
        };
        let latency = match timing.latency {
            Latency::Cycles(c) => Some(c as u64),
            Latency::Memory => None,
        };
        let (reads, writes) = registers(inst);
        Some(InstInfo {
            inst: *inst,
            timing,
            category: Category::of(timing.pipe),
            sequencer,
            issue: timing.issue as u64,
            latency,
            reads,
            writes,
            wait: inst.info.wait,
            memory: MemoryOp::of(inst),
            size: inst.size() as u32,
            flows: inst.info.flow != isa_amdgpu::table::FlowControl::Next,
            l1_lines: ((64 * inst.info.mem.bytes as u32 + (1 << l1_line_shift) - 1) >> l1_line_shift).max(1),
        })
    }
}

/// A wave's results in flight and its outstanding counted operations. What an issue reads first comes first:
/// the earliest and the latest completions (so retiring looks at the queues only when something completed, and
/// a wait for all of them reads no queue), how many results are in flight and how many vector memory
/// operations are outstanding (the oldest of which is kept here, not in its queue: a wave with one outstanding
/// load reads and writes no queue).
#[derive(Debug, Clone)]
#[repr(C)]
pub struct WaveWaits {
    /// Completion cycle of the oldest outstanding vector memory operation (`u64::MAX`: none).
    vm_first: u64,
    /// The earliest completion cycle of the outstanding LDS, scalar memory and message operations
    /// (`u64::MAX`: none).
    lgkm_first: u64,
    /// Completion cycles of the newest vector memory operation and of the last LDS, scalar memory or message
    /// operation to complete (meaningful while they are outstanding).
    vm_last: u64,
    lgkm_last: u64,
    /// The last of the pending results' cycles: once it has passed, none can hold anyone.
    pending_until: u64,
    pending_len: u32,
    /// Outstanding vector memory operations.
    vm_len: u32,
    /// Completion cycles of the outstanding vector memory operations after the oldest (`vm_first`), in issue
    /// order and non-decreasing (they return in order).
    vm: std::collections::VecDeque<u64>,
    /// Completion cycles of outstanding LDS, scalar memory and message operations, sorted.
    lgkm: Vec<u64>,
    /// Registers still being computed: (start, end, cycle the value is there); at most 8 (the oldest dropped).
    pending: [(u16, u16, u64); 8],
}

impl Default for WaveWaits {
    fn default() -> WaveWaits {
        WaveWaits {
            vm_first: u64::MAX,
            lgkm_first: u64::MAX,
            vm_last: 0,
            lgkm_last: 0,
            pending_len: 0,
            pending_until: 0,
            vm_len: 0,
            vm: Default::default(),
            lgkm: Vec::new(),
            pending: [(0, 0, 0); 8],
        }
    }
}

impl WaveWaits {
    /// The bytes every issue reads (the earliest and latest completions, the last result's cycle, how many
    /// results and vector memory operations are outstanding), at its start.
    pub const FIRST_BYTES: usize = std::mem::offset_of!(WaveWaits, vm);

    /// The cycle at which every register `reads` names is there.
    #[inline]
    pub fn operands_ready(&self, reads: &Regs) -> u64 {
        if self.pending_len == 0 {
            return 0;
        }
        let mut t = 0;
        for &(s, e, ready) in &self.pending[..self.pending_len as usize] {
            if reads.overlaps(s, e) {
                t = t.max(ready);
            }
        }
        t
    }

    /// Results of an instruction issued at `now` arrive at `ready`.
    pub fn write(&mut self, now: u64, writes: &Regs, ready: u64) {
        // forget what has arrived
        let mut k = 0;
        for i in 0..self.pending_len as usize {
            if self.pending[i].2 > now {
                self.pending[k] = self.pending[i];
                k += 1;
            }
        }
        self.pending_len = k as u32;
        self.pending_until = self.pending_until.max(ready);
        for (s, e) in writes.iter() {
            if self.pending_len as usize == self.pending.len() {
                // full: drop the one arriving first (the least likely to hold anyone)
                let (i, _) = self.pending.iter().enumerate().min_by_key(|(_, p)| p.2).expect("full");
                self.pending[i] = (s, e, ready);
            } else {
                self.pending[self.pending_len as usize] = (s, e, ready);
                self.pending_len += 1;
            }
        }
    }

    /// A vector memory operation completing at `done`.
    pub fn push_vm(&mut self, done: u64) {
        let done = if self.vm_len == 0 {
            self.vm_first = done;
            done
        } else {
            // they return in order: not before the one ahead
            let done = done.max(self.vm_last);
            self.vm.push_back(done);
            done
        };
        self.vm_last = done;
        self.vm_len += 1;
    }

    /// An LDS, scalar memory or message operation completing at `done`.
    pub fn push_lgkm(&mut self, done: u64) {
        let at = self.lgkm.partition_point(|&x| x <= done);
        self.lgkm.insert(at, done);
        self.lgkm_last = if self.lgkm.len() == 1 {
            done
        } else {
            self.lgkm_last.max(done)
        };
        self.lgkm_first = self.lgkm_first.min(done);
    }

    /// Forgets operations complete by `now`, and the results in flight once all have arrived (an instruction
    /// issuing after `now` starts its turn later than they arrived, so they could hold it for no cycle).
    #[inline]
    pub fn retire(&mut self, now: u64) {
        if self.pending_until <= now {
            self.pending_len = 0;
        }
        while self.vm_first <= now {
            self.vm_len -= 1;
            self.vm_first = if self.vm_len == 0 {
                u64::MAX
            } else {
                self.vm.pop_front().expect("the operations after the oldest")
            };
        }
        if self.lgkm_first <= now {
            let done = self.lgkm.partition_point(|&x| x <= now);
            self.lgkm.drain(..done);
            self.lgkm_first = self.lgkm.first().copied().unwrap_or(u64::MAX);
        }
    }

    /// Forgets everything (a new wave).
    pub fn clear(&mut self) {
        self.vm_first = u64::MAX;
        self.lgkm_first = u64::MAX;
        self.pending_len = 0;
        self.pending_until = 0;
        self.vm_len = 0;
        self.vm.clear();
        self.lgkm.clear();
    }

    /// The cycle at which at most `vmcnt` vector memory operations remain outstanding.
    pub fn vm_ready(&self, vmcnt: u8) -> u64 {
        let (n, c) = (self.vm_len as usize, vmcnt as usize);
        match n > c {
            true if c == 0 => self.vm_last,
            true if n - c - 1 == 0 => self.vm_first,
            true => self.vm[n - c - 2],
            false => 0,
        }
    }

    /// The cycle at which at most `lgkmcnt` LDS/scalar/message operations remain outstanding.
    pub fn lgkm_ready(&self, lgkmcnt: u8) -> u64 {
        if lgkmcnt == 0 {
            // none outstanding exactly when there is no earliest one: the queue's length is not read
            return if self.lgkm_first == u64::MAX { 0 } else { self.lgkm_last };
        }
        let (n, c) = (self.lgkm.len(), lgkmcnt as usize);
        match n > c {
            true if c == 0 => self.lgkm_last,
            true => self.lgkm[n - c - 1],
            false => 0,
        }
    }

    /// When every outstanding operation is complete.
    pub fn all_done(&self) -> u64 {
        self.vm_ready(0).max(self.lgkm_ready(0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sem::analysis::VGPR;
    use isa_amdgpu::Target;

    fn asm(text: &str, target: Target) -> Inst {
        // hand-encoded words for a few instructions (llvm-mc-19 -show-encoding)
        let words: &[u32] = match text {
            // v_add_f32_e32 v2, v0, v1
            "v_add_f32" => &[0x0204_0300],
            // global_load_dword v1, v[2:3], off
            "global_load" => &[0xdc50_8000, 0x017f_0002],
            // s_waitcnt vmcnt(0) lgkmcnt(0)
            "s_waitcnt" => &[0xbf8c_0070],
            // v_cmp_eq_u32_e32 vcc, v0, v1
            "v_cmp" => &[0x7d94_0300],
            _ => unreachable!(),
        };
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        isa_amdgpu::decode(&bytes, 0, target).unwrap()
    }

    #[test]
    fn operands_become_scoreboard_registers() {
        let t = TimingTable::of(Target::Gfx90a);
        let add = InstInfo::new(&asm("v_add_f32", Target::Gfx90a), t, 7).unwrap();
        assert_eq!(add.inst.info.name, "v_add_f32_e32");
        assert_eq!(add.writes.iter().collect::<Vec<_>>(), vec![(VGPR + 2, VGPR + 3)]);
        let r: Vec<_> = add.reads.iter().collect();
        assert!(
            r.contains(&(VGPR, VGPR + 1)) && r.contains(&(VGPR + 1, VGPR + 2)) && r.contains(&(126, 128)),
            "{r:?}"
        );
        assert_eq!((add.category, add.latency), (Category::Valu, Some(4)));
        let load = InstInfo::new(&asm("global_load", Target::Gfx90a), t, 7).unwrap();
        assert_eq!(load.writes.iter().collect::<Vec<_>>(), vec![(VGPR + 1, VGPR + 2)]);
        assert!(load.reads.iter().any(|x| x == (VGPR + 2, VGPR + 4)), "{:?}", load.reads);
        assert_eq!(
            (load.category, load.latency, load.wait),
            (Category::Vmem, None, WaitClass::Vm)
        );
        let cmp = InstInfo::new(&asm("v_cmp", Target::Gfx90a), t, 7).unwrap();
        assert!(
            cmp.writes.iter().any(|x| x == (106, 108)),
            "VOPC writes VCC: {:?}",
            cmp.writes
        );
        let w = InstInfo::new(&asm("s_waitcnt", Target::Gfx90a), t, 7).unwrap();
        assert_eq!(
            w.sequencer,
            Sequencer::Waitcnt(WaitCounts {
                vmcnt: 0,
                expcnt: 7,
                lgkmcnt: 0
            })
        );
        assert_eq!(w.category, Category::Internal);
    }

    #[test]
    fn counters_wait_for_the_operations_beyond_the_count() {
        let mut w = WaveWaits::default();
        w.push_vm(100);
        w.push_vm(90); // returns in order: not before the first
        w.push_vm(300);
        assert_eq!(
            (w.vm_ready(0), w.vm_ready(1), w.vm_ready(2), w.vm_ready(3)),
            (300, 100, 100, 0)
        );
        w.push_lgkm(50);
        w.push_lgkm(20);
        assert_eq!((w.lgkm_ready(0), w.lgkm_ready(1)), (50, 20));
        w.retire(100);
        assert_eq!(
            (w.vm_ready(0), w.vm_ready(1), w.lgkm_ready(0), w.all_done()),
            (300, 0, 0, 300)
        );
        // one outstanding again, then more behind it, retired one at a time
        w.push_vm(320);
        assert_eq!((w.vm_ready(0), w.vm_ready(1), w.vm_ready(2)), (320, 300, 0));
        w.retire(300);
        w.push_vm(310);
        assert_eq!((w.vm_ready(0), w.vm_ready(1), w.vm_ready(2)), (320, 320, 0));
        w.retire(320);
        assert_eq!((w.vm_ready(0), w.all_done()), (0, 0));
        let mut regs = Regs::default();
        regs.add(VGPR + 4, 2);
        w.write(0, &regs, 64);
        let mut r = Regs::default();
        r.add(VGPR + 5, 1);
        assert_eq!(w.operands_ready(&r), 64);
        let mut other = Regs::default();
        other.add(VGPR + 6, 1);
        assert_eq!(w.operands_ready(&other), 0);
    }
}

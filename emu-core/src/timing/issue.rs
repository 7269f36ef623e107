//! What the scheduler knows about an instruction before it issues, and what a wave waits on.
//!
//! [`InstInfo`] is worked out once per instruction address from the table row and the timing table: the issue
//! category (at most one instruction per category issues per SIMD turn), the pipe and its cycles, the latency of
//! its results, the registers it reads and writes (operands by field, SDWA's scalar sources and the pair an SDWA
//! compare names, the table's implicit SCC/VCC/EXEC/M0, EXEC for every vector instruction, and as a read too
//! the destination of instructions that keep or compute from its old value; the SGPRs M0 places for
//! s_movrels/s_movreld are not known), and what it means to the sequencer (`s_waitcnt` counts, barrier, end,
//! `s_nop`/`s_sleep` cycles).
//!
//! [`WaveWaits`] is a wave's side: the results still being computed (only latencies longer than the issue
//! cadence can hold a dependent instruction, since a wave issues at most once per turn), and the completion
//! cycles of its outstanding vector memory (`vmcnt`, returned in order) and LDS/scalar/message
//! (`lgkmcnt`, in any order) operations.

use isa_amdgpu::encoding::{Encoding, Field};
use isa_amdgpu::table::{Implicit, MemDir, OperandKind, RegFile, WaitClass};
use isa_amdgpu::{Form, Inst, Opcode};

use super::inst::{InstTiming, Latency, Pipe, TimingTable};
use crate::observe::{MemoryOp, WaitCounts};

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

/// Register numbers of the scoreboard: SGPR slots 0..127 (VCC at 106, M0 at 124, EXEC at 126), SCC 128,
/// VGPRs from 256, AGPRs from 512.
pub const SCC: u16 = 128;
const VGPR: u16 = 256;
const AGPR: u16 = 512;

/// Up to eight register ranges `[start, end)`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Regs {
    ranges: [(u16, u16); 8],
    len: u8,
}

impl Regs {
    fn add(&mut self, start: u16, count: u16) {
        if count == 0 || self.len as usize == self.ranges.len() {
            return;
        }
        self.ranges[self.len as usize] = (start, start + count);
        self.len += 1;
    }

    pub fn iter(&self) -> impl Iterator<Item = (u16, u16)> + '_ {
        self.ranges[..self.len as usize].iter().copied()
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn overlaps(&self, start: u16, end: u16) -> bool {
        self.iter().any(|(s, e)| s < end && start < e)
    }

    /// Whether register `r` (a scoreboard number) is in one of the ranges.
    pub fn contains(&self, r: u16) -> bool {
        self.overlaps(r, r + 1)
    }

    fn full(&self) -> bool {
        self.len as usize == self.ranges.len()
    }
}

/// The registers `inst` reads and writes (scoreboard numbers, as [`InstInfo`] has them), when every one is
/// named: `None` when an operand reads VCC or EXEC through `vccz` or `execz`, for s_movrels and s_movreld
/// (which read or write the SGPRs M0 places, not the ones their operands name), or when the ranges fill a
/// [`Regs`].
pub fn known_registers(inst: &Inst) -> Option<(Regs, Regs)> {
    use isa_amdgpu::Opcode as O;
    let (reads, writes) = registers(inst);
    let flags = inst
        .info
        .operands
        .iter()
        .any(|o| matches!(o.kind, OperandKind::Src { .. }) && matches!(inst.field(o.field), 251 | 252));
    let relative = matches!(
        inst.info.opcode,
        O::SMovrelsB32 | O::SMovrelsB64 | O::SMovreldB32 | O::SMovreldB64
    );
    (!flags && !relative && !reads.full() && !writes.full()).then_some((reads, writes))
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

/// The registers `inst` reads and writes.
fn registers(inst: &Inst) -> (Regs, Regs) {
    let (mut reads, mut writes) = (Regs::default(), Regs::default());
    let info = inst.info;
    let enc = info.encoding;
    let acc = inst.field(Field::Acc) == 1
        && matches!(
            enc,
            Encoding::Ds
                | Encoding::Flat
                | Encoding::Global
                | Encoding::Scratch
                | Encoding::Mubuf
                | Encoding::Mtbuf
                | Encoding::Mimg
        );
    let mfma = info.mfma.is_some();
    let (acc_a, acc_b, acc_cd) = if mfma {
        let ab = inst.field(Field::OpSelHi);
        (ab & 1 == 1, ab & 2 == 2, inst.field(Field::Clamp) == 1)
    } else {
        (false, false, false)
    };
    let loads = matches!(info.mem.dir, MemDir::Load);
    let returns = info.mem.flags.contains(isa_amdgpu::table::MemFlags::RETURNS)
        || (info.mem.dir == MemDir::Atomic && inst.field(Field::Glc) == 1);
    // SOPK forms whose SDST field is a source: the compares, s_setreg, s_cbranch_i_fork
    let sdst_read = enc == Encoding::Sopk
        && (info.name.starts_with("s_cmpk_") || matches!(info.name, "s_setreg_b32" | "s_cbranch_i_fork"));
    for o in info.operands {
        let v = inst.field(o.field);
        // destination fields; VDATA is a destination of loads and of atomics that return
        let dst = match o.field {
            Field::Sdst => !sdst_read,
            Field::Vdst => true,
            Field::Sdata => enc == Encoding::Smem && info.mem.dir != MemDir::Store,
            Field::Vdata => loads || (info.mem.dir == MemDir::Atomic && returns),
            _ => false,
        };
        let agpr = match o.field {
            Field::Vdst | Field::Vdata | Field::Data | Field::Data0 | Field::Data1 => {
                acc || (mfma && acc_cd && o.field == Field::Vdst)
            }
            Field::Src0 => acc_a || info.opcode == Opcode::VAccvgprReadB32 || info.opcode == Opcode::VAccvgprMovB32,
            Field::Src1 => acc_b,
            Field::Src2 => acc_cd,
            _ => false,
        } || (o.field == Field::Vdst
            && matches!(info.opcode, Opcode::VAccvgprWriteB32 | Opcode::VAccvgprMovB32));
        // an SDWA source may be scalar (an SGPR or constant), which src0's operand kind cannot say
        let sdwa = inst.sdwa_source(o.field);
        let kind = match (sdwa, o.kind) {
            (Some((_, true)), OperandKind::Reg { count, .. } | OperandKind::Src { count, .. }) => OperandKind::Reg {
                file: RegFile::S,
                count,
            },
            (Some((_, false)), OperandKind::Src { count, .. }) => OperandKind::Reg {
                file: RegFile::V,
                count,
            },
            (_, kind) => kind,
        };
        let v = sdwa.map_or(v, |(r, _)| r);
        let (start, count) = match kind {
            OperandKind::Reg {
                file: RegFile::S,
                count,
            } if sdwa.is_some() => match v {
                0..=127 => match crate::wave::sgpr_slot(v) {
                    Some(s) => (s as u16, count as u16),
                    None => continue,
                },
                // inline constants, literals, execz/vccz
                _ => continue,
            },
            OperandKind::Reg {
                file: RegFile::S,
                count,
            } => {
                let base = match (enc, o.field) {
                    (Encoding::Smem, Field::Sbase) => v * 2,
                    (_, Field::Srsrc | Field::Ssamp) => v * 4,
                    _ => v,
                };
                match crate::wave::sgpr_slot(base) {
                    Some(s) if base < 128 => (s as u16, count as u16),
                    _ => continue,
                }
            }
            OperandKind::Reg { file, count } => {
                let count = inst.vector_regs(o.field, count as u32) as u16;
                let base = if file == RegFile::A || agpr { AGPR } else { VGPR };
                (base + v as u16, count)
            }
            OperandKind::Src { count, .. } => {
                // DPP keeps src0's register in its extra dword
                let v = if o.field == Field::Src0 && inst.form == Form::Dpp {
                    256 + (inst.ext().unwrap_or(0) & 0xff)
                } else {
                    v
                };
                match v {
                    0..=127 => match crate::wave::sgpr_slot(v) {
                        Some(s) => (s as u16, count as u16),
                        None => continue,
                    },
                    253 => (SCC, 1),
                    256..=511 => ((if agpr { AGPR } else { VGPR }) + (v - 256) as u16, count as u16),
                    // inline constants, literals, execz/vccz
                    _ => continue,
                }
            }
            _ => continue,
        };
        if dst {
            writes.add(start, count);
        } else {
            reads.add(start, count);
        }
    }
    // destinations also read: those an instruction computes from (the accumulating VALU forms, s_addk, s_mulk,
    // s_bitset, and SDWA's UNUSED_PRESERVE, which keeps the other bits), and s_cmov/s_cmovk's, which may be
    // left as they were (a conditional write, so read: nothing may take it as written over). Lanes a write
    // leaves (EXEC, DPP's masks, v_writelane's other lanes) are not reads.
    let keeps_old = matches!(
        info.opcode,
        Opcode::SCmovB32
            | Opcode::SCmovB64
            | Opcode::SCmovkI32
            | Opcode::SBitset0B32
            | Opcode::SBitset0B64
            | Opcode::SBitset1B32
            | Opcode::SBitset1B64
            | Opcode::SAddkI32
            | Opcode::SMulkI32
    ) || info.name.starts_with("v_mac_")
        || info.name.starts_with("v_fmac_")
        || info.name.starts_with("v_pk_fmac_")
        || ["v_dot2c_", "v_dot4c_", "v_dot8c_"]
            .iter()
            .any(|p| info.name.starts_with(p))
        || (inst.form == Form::Sdwa && enc != Encoding::Vopc && inst.ext().is_some_and(|e| e >> 11 & 3 == 2));
    if keeps_old {
        let dsts = writes;
        for (start, end) in dsts.iter() {
            reads.add(start, end - start);
        }
    }
    // the GLOBAL/SCRATCH SGPR base is a field without an operand of its own
    if matches!(enc, Encoding::Global | Encoding::Scratch) {
        let saddr = inst.field(Field::Saddr);
        if saddr < 0x7d {
            reads.add(saddr as u16, if enc == Encoding::Global { 2 } else { 1 });
        }
    }
    // an SDWA compare may write another pair than VCC
    let vcc_written = inst.sdwa_sdst().unwrap_or(106) as u16;
    for (set, implicit, vcc) in [(&mut reads, info.reads, 106), (&mut writes, info.writes, vcc_written)] {
        if implicit.contains(Implicit::SCC) {
            set.add(SCC, 1);
        }
        if implicit.contains(Implicit::VCC) {
            set.add(vcc, 2);
        }
        if implicit.contains(Implicit::EXEC) {
            set.add(126, 2);
        }
        if implicit.contains(Implicit::M0) {
            set.add(124, 1);
        }
    }
    // vector instructions read EXEC
    if !matches!(
        enc,
        Encoding::Sop1 | Encoding::Sop2 | Encoding::Sopc | Encoding::Sopk | Encoding::Sopp | Encoding::Smem
    ) && !info.reads.contains(Implicit::EXEC)
    {
        reads.add(126, 2);
    }
    (reads, writes)
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
    fn sdwa_forms_name_the_sgprs_they_read_and_the_pair_a_compare_writes() {
        // (llvm-mc-19 -mcpu=gfx90a -show-encoding; scoreboard numbers: SGPRs as themselves, VGPRs from 256)
        type Ranges = &'static [(u16, u16)];
        let cases: &[(&str, [u8; 8], Ranges, Ranges)] = &[
            (
                "v_cmp_eq_u32_sdwa s[6:7], v0, v1",
                [0xf9, 0x02, 0x94, 0x7d, 0x00, 0x86, 0x06, 0x06],
                &[(256, 257), (257, 258)],
                &[(6, 8)],
            ),
            (
                "v_cmp_eq_u32_sdwa vcc, v0, v1",
                [0xf9, 0x02, 0x94, 0x7d, 0x00, 0x00, 0x06, 0x06],
                &[(256, 257), (257, 258)],
                &[(106, 108)],
            ),
            (
                "v_add_f32_sdwa v2, s4, v1",
                [0xf9, 0x02, 0x04, 0x02, 0x04, 0x06, 0x86, 0x06],
                &[(4, 5), (257, 258)],
                &[(258, 259)],
            ),
            (
                "v_add_f32_sdwa v2, v0, s5",
                [0xf9, 0x0a, 0x04, 0x02, 0x00, 0x06, 0x06, 0x86],
                &[(256, 257), (5, 6)],
                &[(258, 259)],
            ),
            (
                "v_add_f32_sdwa v2, 1.0, v1",
                [0xf9, 0x02, 0x04, 0x02, 0xf2, 0x06, 0x86, 0x06],
                &[(257, 258)],
                &[(258, 259)],
            ),
            (
                "v_cmp_lt_f16_sdwa s[8:9], s4, v3",
                [0xf9, 0x06, 0x42, 0x7c, 0x04, 0x88, 0x85, 0x06],
                &[(4, 5), (259, 260)],
                &[(8, 10)],
            ),
            (
                "v_add_f32_dpp v2, v4, v1",
                [0xfa, 0x02, 0x04, 0x02, 0x04, 0xb1, 0x00, 0xff],
                &[(260, 261), (257, 258)],
                &[(258, 259)],
            ),
        ];
        for (text, bytes, reads, writes) in cases {
            let inst = isa_amdgpu::decode(bytes, 0, Target::Gfx90a).unwrap();
            let (r, w) = known_registers(&inst).unwrap();
            let (r, w): (Vec<_>, Vec<_>) = (r.iter().collect(), w.iter().collect());
            // and EXEC, which every vector instruction reads
            assert_eq!(
                r.iter().filter(|&&x| x != (126, 128)).copied().collect::<Vec<_>>(),
                *reads,
                "{text}: reads"
            );
            assert!(r.contains(&(126, 128)), "{text}: reads EXEC");
            assert_eq!(w, *writes, "{text}: writes");
        }
    }

    #[test]
    fn moves_relative_to_m0_have_no_known_registers() {
        // s_movreld_b64 vcc, s[10:11]; s_movrels_b64 s[20:21], s[0:1]; s_mov_b64 vcc, s[10:11] (llvm-mc-19)
        let [reld, rels, mov] = [
            [0x0a, 0x2d, 0xea, 0xbe],
            [0x00, 0x2b, 0x94, 0xbe],
            [0x0a, 0x01, 0xea, 0xbe],
        ]
        .map(|b: [u8; 4]| isa_amdgpu::decode(&b, 0, Target::Gfx90a).unwrap());
        assert_eq!(
            (reld.info.name, rels.info.name, mov.info.name),
            ("s_movreld_b64", "s_movrels_b64", "s_mov_b64")
        );
        assert!(known_registers(&reld).is_none() && known_registers(&rels).is_none());
        let (r, w) = known_registers(&mov).unwrap();
        assert_eq!(
            (r.iter().collect::<Vec<_>>(), w.iter().collect::<Vec<_>>()),
            (vec![(10, 12)], vec![(106, 108)])
        );
    }

    #[test]
    fn destinations_that_keep_or_compute_from_their_old_value_and_implicit_operands_are_read() {
        // (llvm-mc-19 -mcpu=gfx90a -show-encoding; SCC 128, VCC 106-107, EXEC 126-127, VGPRs from 256)
        type Ranges = &'static [(u16, u16)];
        let cases: &[(&str, &[u8], Ranges, Ranges)] = &[
            (
                "s_cmov_b64 vcc, s[10:11]",
                &[0x0a, 0x03, 0xea, 0xbe],
                &[(10, 12), (106, 108), (128, 129)],
                &[(106, 108)],
            ),
            (
                "s_cmpk_eq_u32 s5, 0x10",
                &[0x10, 0x00, 0x05, 0xb4],
                &[(5, 6)],
                &[(128, 129)],
            ),
            (
                "s_andn2_wrexec_b64 s[2:3], s[4:5]",
                &[0x04, 0x36, 0x82, 0xbe],
                &[(4, 6), (126, 128)],
                &[(2, 4), (126, 128), (128, 129)],
            ),
            (
                "v_div_fmas_f32 v0, v1, v2, v3",
                &[0x00, 0x00, 0xe2, 0xd1, 0x01, 0x05, 0x0e, 0x04],
                &[(106, 108), (126, 128), (257, 258), (258, 259), (259, 260)],
                &[(256, 257)],
            ),
            (
                "v_fmac_f32_e32 v2, v0, v1",
                &[0x00, 0x03, 0x04, 0x76],
                &[(126, 128), (256, 257), (257, 258), (258, 259)],
                &[(258, 259)],
            ),
            (
                "s_setreg_b32 hwreg(HW_REG_MODE), s4",
                &[0x01, 0xf8, 0x04, 0xb9],
                &[(4, 5)],
                &[],
            ),
            (
                "s_bitset1_b32 vcc_lo, 3",
                &[0x83, 0x1a, 0xea, 0xbe],
                &[(106, 107)],
                &[(106, 107)],
            ),
            (
                "v_mov_b32_sdwa v1, v0 dst_sel:WORD_1 dst_unused:UNUSED_PRESERVE",
                &[0xf9, 0x02, 0x02, 0x7e, 0x00, 0x15, 0x06, 0x00],
                &[(126, 128), (256, 257), (257, 258)],
                &[(257, 258)],
            ),
        ];
        let sorted = |r: Regs| {
            let mut v: Vec<_> = r.iter().collect();
            v.sort();
            v.dedup();
            v
        };
        for (text, bytes, reads, writes) in cases {
            let inst = isa_amdgpu::decode(bytes, 0, Target::Gfx90a).unwrap();
            let (r, w) = registers(&inst);
            assert_eq!(
                (sorted(r), sorted(w)),
                (reads.to_vec(), writes.to_vec()),
                "{text}: reads, writes"
            );
        }
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

//! The architectural state of one wavefront: registers as whole-wave arrays, EXEC as a 64-bit mask.

/// Lanes per wave on gfx9.
pub const LANES: usize = 64;

/// A 64-lane vector of 32-bit values.
pub type Lanes = [u32; LANES];

/// Scalar register file indices of the special registers (their operand encodings).
pub mod sreg {
    pub const FLAT_SCRATCH_LO: u32 = 102;
    pub const VCC_LO: u32 = 106;
    pub const M0: u32 = 124;
    pub const NULL: u32 = 125;
    pub const EXEC_LO: u32 = 126;
}

/// The slot of scalar operand `reg` among the 128 SGPR slots: `None` for the null register (it reads 0 and
/// writes to it are dropped); other numbers wrap into the 128 slots. Both engines read and write SGPRs through
/// this.
#[inline(always)]
pub const fn sgpr_slot(reg: u32) -> Option<usize> {
    if reg == sreg::NULL {
        None
    } else {
        Some((reg & 127) as usize)
    }
}

/// Why a wave stopped running for now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaveStatus {
    Running,
    /// Waiting at `s_barrier` for the rest of its workgroup, or (with [`WaveState::gws`] set) at
    /// `ds_gws_barrier` for waves of the whole grid, or (with [`WaveState::sema`] set) at a global wave sync
    /// semaphore instruction for the dispatch to carry it out.
    AtBarrier,
    /// Executed `s_endpgm`.
    Done,
}

/// Memory a wave's accesses found (a device buffer, pinned or mapped host memory:
/// [`crate::memory::DeviceMemory::direct_at`]; or the wave's own private segment): compiled code that checks
/// every active lane against it reads and writes the host bytes directly. Buffers are only freed between
/// dispatches and a wave lives within one, its private segment lives as long as it does, and host memory as
/// long as its owner keeps it mapped, so the host address stays valid (empty: `len` 0).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[repr(C)]
pub struct BufferWindow {
    pub start: u64,
    pub len: u64,
    pub host: usize,
}

/// How many [`BufferWindow`]s a wave keeps (one per access site modulo this: 64 consecutive memory
/// instructions, eight bytes each, never share one, so the sites of a loop body of up to 512 bytes, an unrolled
/// loop's among them, keep a window each).
pub const BUFFER_WINDOWS: usize = 64;

/// How many [`BufferWindow`]s a wave keeps for its scalar loads (one per scalar load site modulo this: sites
/// less than 256 bytes apart never share one, so a kernel's prologue, which reads the dispatch packet and the
/// kernel arguments, two allocations, keeps a window for each).
pub const SCALAR_WINDOWS: usize = 32;

/// The memory a wave's accesses found, by access site (the site's offset picks the slot).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(C)]
pub struct Windows {
    /// Vector accesses: device buffers, pinned or mapped host memory, the wave's private segment.
    pub vector: [BufferWindow; BUFFER_WINDOWS],
    /// Scalar loads: any allocation they may read (kernel arguments, the dispatch packet, constant tables).
    pub scalar: [BufferWindow; SCALAR_WINDOWS],
}

impl Default for Windows {
    fn default() -> Windows {
        Windows {
            vector: [BufferWindow::default(); BUFFER_WINDOWS],
            scalar: [BufferWindow::default(); SCALAR_WINDOWS],
        }
    }
}

/// The memory of a wave state that another can be made in ([`WaveState::take_parts`]): its register files and
/// its windows.
#[derive(Debug, Default)]
pub struct Parts {
    vgprs: Vec<Lanes>,
    agprs: Vec<Lanes>,
    windows: Option<Box<Windows>>,
    windows_version: (u64, u64),
}

/// A wave's accesses that landed in an allocation's slack ([`crate::memory::Within::Pages`]): outside the
/// allocation's bytes, inside its pages, so not a fault on a GPU. Counted by lane access; the first described.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SlackSeen {
    pub count: u64,
    pub first: Option<Box<SlackAccess>>,
}

/// A wave's first slack access.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlackAccess {
    /// The instruction's PC and text, set by the engine that ran it ([`SlackSeen::locate`]).
    pub at: Option<(u64, String)>,
    pub mnemonic: &'static str,
    /// The lane (`None`: a scalar access).
    pub lane: Option<u32>,
    pub slack: crate::memory::Slack,
}

impl SlackSeen {
    /// Names the instruction just executed (at `pc`, reading `text`) as the first slack access's, if that
    /// access is new. Engines call it after every instruction they leave to the interpreter's memory path.
    #[inline]
    pub fn locate(&mut self, pc: u64, text: impl FnOnce() -> String) {
        if let Some(f) = self.first.as_mut().filter(|f| f.at.is_none()) {
            f.at = Some((pc, text()));
        }
    }
}

/// One wavefront.
#[derive(Debug, Clone)]
pub struct WaveState {
    /// s0..s101, then the specials at their operand encodings (vcc at 106/107, m0 at 124, exec at 126/127).
    pub sgprs: [u32; 128],
    pub vgprs: Vec<Lanes>,
    pub agprs: Vec<Lanes>,
    pub scc: bool,
    /// Address of the next instruction.
    pub pc: u64,
    pub status: WaveStatus,
    /// Instructions executed.
    pub executed: u64,
    /// Of them, those already counted in its dispatch's progress ([`crate::watch::Progress::note`]).
    pub reported: u64,
    /// This wave's private (scratch) memory: base address and bytes per lane (0: none).
    pub scratch_base: u64,
    pub scratch_lane_bytes: u32,
    /// At a global wave sync barrier (`ds_gws_barrier`): how many waves it waits for.
    pub gws: Option<u32>,
    /// At a global wave sync semaphore instruction (`ds_gws_init`, `ds_gws_sema_*`): what it asks of the
    /// dispatch's resources, which the scheduler carries out ([`crate::gws`]); a `ds_gws_sema_p` keeps it
    /// until the resource's count lets the wave go on.
    pub sema: Option<crate::gws::SemaRequest>,
    /// VGPR index mode (MODE.gpr_idx_en, set by `s_set_gpr_idx_on`, cleared by `s_set_gpr_idx_off`): VALU
    /// instructions add M0[7:0] to the VGPR operands M0[15:12] selects.
    pub gpr_idx: bool,
    /// What `s_memtime` and `s_memrealtime` read.
    pub clock: WaveClock,
    /// What the device does with floating-point atomics on fine-grained memory.
    pub fine_grained_float_atomics: crate::device::FineGrainedFloatAtomics,
    /// Accesses in an allocation's slack so far.
    pub slack: SlackSeen,
    /// The hardware registers s_getreg reads beyond the general registers (MODE, HW_ID, ...).
    pub hw: crate::hwreg::HwRegs,
    /// The memory this wave's accesses found, by access site: what compiled code checks its lanes against
    /// before reaching memory directly (the JIT keeps them, [`WaveState::windows_mut`]; the interpreter does not
    /// need them). Boxed, and made on first use: a wave state that moves, or is made over for another wave
    /// ([`WaveState::reset`]), does not copy them.
    pub windows: Option<Box<Windows>>,
    /// The memory's version ([`crate::memory::DeviceMemory::version`]) when the wave started: its windows
    /// were all found at it while the memory still has it.
    pub windows_version: (u64, u64),
    /// The wave found a window of its own (through the interpreter) since it started: only then has it any
    /// to hand on to later waves.
    pub windows_found: bool,
    /// What it did since it last went backwards ([`crate::sem::PASS_LOADED`]).
    pub pass: u32,
    /// Its last turn ended going back round a polling loop ([`crate::sem::goes_back`]): it waits on memory
    /// another workgroup writes. The scheduler clears it before each turn.
    pub polled: bool,
}

/// Whether `[start, end)` may overlap the `bytes` from `base` (true also when their end does not fit in 64 bits;
/// never when `bytes` is 0).
fn overlaps_segment(base: u64, bytes: u64, start: u64, end: u64) -> bool {
    bytes > 0 && base.checked_add(bytes).is_none_or(|top| start < top && base < end)
}

/// The clocks a wave reads. The shader clock reads `base + per_instruction × executed` cycles, `executed`
/// being the instructions the wave executed before the one reading it; the real-time clock is the same time
/// on a 100 MHz clock (`shader cycles × 100 / shader_mhz`).
///
/// A functional dispatch sets `base` to a count shared by all dispatches of the process (so the clocks never
/// go back) and `per_instruction` to 4, one VALU issue per instruction; in timing mode the dispatch loop sets
/// `base` to the modeled cycle at which the reading instruction issues and `per_instruction` to 0 (the engines
/// start a block at every clock-reading instruction, so the value is set before it executes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WaveClock {
    pub base: u64,
    pub per_instruction: u64,
    pub shader_mhz: u32,
}

impl Default for WaveClock {
    fn default() -> Self {
        WaveClock {
            base: 0,
            per_instruction: 4,
            shader_mhz: 1000,
        }
    }
}

impl WaveClock {
    /// The value of `clock` for an instruction after `executed` others.
    pub fn read(&self, clock: crate::sem::Clock, executed: u64) -> u64 {
        let shader = self.base.wrapping_add(self.per_instruction.wrapping_mul(executed));
        match clock {
            crate::sem::Clock::Shader => shader,
            crate::sem::Clock::Real => (shader as u128 * 100 / self.shader_mhz.max(1) as u128) as u64,
        }
    }
}

impl WaveState {
    /// The bytes of the wave's private segment (its 64 lanes' scratch, from `scratch_base`; 0: none).
    pub fn private_bytes(&self) -> u64 {
        self.scratch_lane_bytes as u64 * LANES as u64
    }

    /// Whether `[start, end)` may overlap the wave's private segment (true also when the segment's end does not
    /// fit in 64 bits).
    pub fn touches_private(&self, start: u64, end: u64) -> bool {
        overlaps_segment(self.scratch_base, self.private_bytes(), start, end)
    }

    /// A wave with `vgprs` vector and `agprs` accumulation registers, starting at `pc`.
    pub fn new(pc: u64, vgprs: usize, agprs: usize) -> WaveState {
        WaveState::made_of(
            pc,
            vec![[0; LANES]; vgprs.max(1)],
            vec![[0; LANES]; agprs],
            None,
            (0, 0),
        )
    }

    /// The wave's window tables, made (empty) on first use.
    pub fn windows_mut(&mut self) -> &mut Windows {
        self.windows.get_or_insert_with(Box::default)
    }

    /// Makes this state over into [`WaveState::new`]'s for another wave, in place, reusing its memory (its
    /// register files' and its windows'): [`WaveState::take_parts`], then [`WaveState::from_parts`].
    pub fn reset(&mut self, pc: u64, vgprs: usize, agprs: usize) {
        *self = WaveState::from_parts(pc, vgprs, agprs, self.take_parts());
    }

    /// Takes the memory this state holds for another wave's ([`WaveState::from_parts`]): its register files
    /// (left empty here: a wave that has ended reads none) and its windows with their version, but those over
    /// its private segment, which are no other wave's (the rest are what a later wave's accesses at the same
    /// sites find, valid while the memory's version is unchanged: [`WaveState::windows_version`]).
    pub fn take_parts(&mut self) -> Parts {
        let (base, bytes) = (self.scratch_base, self.private_bytes());
        if let (Some(w), true) = (self.windows.as_deref_mut(), bytes > 0) {
            for w in w.vector.iter_mut().chain(w.scalar.iter_mut()) {
                if overlaps_segment(base, bytes, w.start, w.start + w.len) {
                    *w = BufferWindow::default();
                }
            }
        }
        Parts {
            vgprs: std::mem::take(&mut self.vgprs),
            agprs: std::mem::take(&mut self.agprs),
            windows: self.windows.take(),
            windows_version: self.windows_version,
        }
    }

    /// [`WaveState::new`]'s state, made in the memory of `parts` and with its windows.
    pub fn from_parts(pc: u64, vgprs: usize, agprs: usize, parts: Parts) -> WaveState {
        let mut w = WaveState::without_registers(pc);
        w.registers_from(parts, vgprs, agprs);
        w
    }

    /// [`WaveState::new`]'s state but for its register files, which are empty until
    /// [`WaveState::registers_from`] gives them.
    pub fn without_registers(pc: u64) -> WaveState {
        WaveState::made_of(pc, Vec::new(), Vec::new(), None, (0, 0))
    }

    /// Gives this state `vgprs` VGPRs (at least one) and `agprs` AGPRs, zeroed, in the memory of `parts`, and
    /// the windows of `parts`.
    pub fn registers_from(&mut self, parts: Parts, vgprs: usize, agprs: usize) {
        let Parts {
            vgprs: mut v,
            agprs: mut a,
            windows,
            windows_version,
        } = parts;
        v.clear();
        v.resize(vgprs.max(1), [0; LANES]);
        a.clear();
        a.resize(agprs, [0; LANES]);
        (self.vgprs, self.agprs, self.windows, self.windows_version) = (v, a, windows, windows_version);
    }

    /// A wave starting at `pc` with these register files (zeroed) and windows.
    fn made_of(
        pc: u64,
        vgprs: Vec<Lanes>,
        agprs: Vec<Lanes>,
        windows: Option<Box<Windows>>,
        windows_version: (u64, u64),
    ) -> WaveState {
        WaveState {
            sgprs: [0; 128],
            vgprs,
            agprs,
            scc: false,
            pc,
            status: WaveStatus::Running,
            executed: 0,
            reported: 0,
            scratch_base: 0,
            scratch_lane_bytes: 0,
            gws: None,
            sema: None,
            gpr_idx: false,
            windows,
            windows_version,
            windows_found: false,
            pass: 0,
            polled: false,
            clock: WaveClock::default(),
            fine_grained_float_atomics: crate::device::FineGrainedFloatAtomics::Performed,
            slack: SlackSeen::default(),
            hw: crate::hwreg::HwRegs::default(),
        }
    }

    /// Waiting for waves of other workgroups: at `ds_gws_barrier` or a global wave sync semaphore.
    pub fn at_grid_sync(&self) -> bool {
        self.gws.is_some() || self.sema.is_some()
    }

    pub fn exec(&self) -> u64 {
        self.sgprs[sreg::EXEC_LO as usize] as u64 | (self.sgprs[sreg::EXEC_LO as usize + 1] as u64) << 32
    }

    pub fn set_exec(&mut self, m: u64) {
        self.sgprs[sreg::EXEC_LO as usize] = m as u32;
        self.sgprs[sreg::EXEC_LO as usize + 1] = (m >> 32) as u32;
    }

    pub fn vcc(&self) -> u64 {
        self.sgprs[sreg::VCC_LO as usize] as u64 | (self.sgprs[sreg::VCC_LO as usize + 1] as u64) << 32
    }

    pub fn set_vcc(&mut self, m: u64) {
        self.sgprs[sreg::VCC_LO as usize] = m as u32;
        self.sgprs[sreg::VCC_LO as usize + 1] = (m >> 32) as u32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reused_state_is_a_new_one_with_the_windows_outside_its_private_segment() {
        let mut w = WaveState::new(0x1000, 4, 2);
        w.sgprs = [7; 128];
        w.vgprs[3] = [9; LANES];
        w.agprs[1] = [5; LANES];
        (w.scc, w.status, w.executed, w.gpr_idx, w.gws) = (true, WaveStatus::Done, 1234, true, Some(3));
        (w.scratch_base, w.scratch_lane_bytes) = (0x10_0000, 16);
        w.clock.base = 99;
        w.slack.count = 2;
        let buffer = BufferWindow {
            start: 0x20_0000,
            len: 0x1000,
            host: 0x5000,
        };
        let private = BufferWindow {
            start: 0x10_0100,
            len: 0x100,
            host: 0x6000,
        };
        w.windows_mut().vector[0] = buffer;
        w.windows_mut().vector[1] = private;
        w.windows_mut().scalar[2] = buffer;
        (w.windows_version, w.windows_found) = ((4, 5), true);
        w.reset(0x2000, 6, 1);
        let mut fresh = WaveState::new(0x2000, 6, 1);
        fresh.windows_mut().vector[0] = buffer;
        fresh.windows_mut().scalar[2] = buffer;
        fresh.windows_version = (4, 5);
        assert_eq!(format!("{w:?}"), format!("{fresh:?}"));
    }
}

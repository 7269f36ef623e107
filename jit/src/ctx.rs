//! What compiled code sees: a `#[repr(C)]` context with pointers into the wave's register files, SCC, and the
//! block's exit state; and the constant table that turns 4 bits of a lane mask into an `i32x4` lane mask.

use std::ffi::c_void;

use emu_core::memory::DeviceMemory;
use emu_core::observe::{Accesses, Dir, InstBatch, InstEvent, LaneAccess, LaneRange, Observer, Space};
use isa_amdgpu::Inst;

use crate::compile::MAX_BLOCK;
use emu_core::sem::ExecError;
use emu_core::wave::{BufferWindow, Lanes, WaveState, Windows, BUFFER_WINDOWS, SCALAR_WINDOWS};

/// Registers an instruction may keep a copy of (a read it still uses after writing the register).
pub const KEEP: usize = 4;

/// Vectors a looped register write may take from memory besides registers.
pub const TMP: usize = 6;

/// Values of deferred register writes that are not lazy expressions of registers (see
/// `backend::JitBackend::defer_write`): each is kept here until the block writes its pending registers.
pub const PARKED: usize = 16;

/// Vector slots for operands and results of interpreter calls (an MFMA 32x32 step needs 20 in, 16 out).
pub const SLOTS: usize = 40;

/// Lane-access records one observed instruction's compiled accesses may leave (no instruction makes more than
/// two compiled accesses; a further one would take the interpreter call, which records its own lanes).
pub const RECORDS: usize = 4;

/// Where compiled code leaves one memory access of an observed instruction: each active lane's address
/// (`hi:lo + offset`; the low half only for LDS; lane 0 for a scalar access) and what the access was
/// (`desc`: [`AccessRecord::desc`]). [`Ctx::take_records`] turns them into lane accesses.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct AccessRecord {
    pub lo: [u32; 64],
    pub hi: [u32; 64],
    pub mask: u64,
    pub offset: i64,
    pub desc: u64,
}

/// The kinds of memory an [`AccessRecord`] names.
pub const REC_GLOBAL: u64 = 0;
pub const REC_LDS: u64 = 1;
pub const REC_SCALAR: u64 = 2;

impl AccessRecord {
    /// The descriptor of an access to `space` (`REC_*`) of `bytes` per lane, a write or a read.
    pub const fn desc(space: u64, write: bool, bytes: u32) -> u64 {
        space | (write as u64) << 8 | (bytes as u64) << 16
    }
    pub const LO: i32 = std::mem::offset_of!(AccessRecord, lo) as i32;
    pub const HI: i32 = std::mem::offset_of!(AccessRecord, hi) as i32;
    pub const MASK: i32 = std::mem::offset_of!(AccessRecord, mask) as i32;
    pub const OFFSET: i32 = std::mem::offset_of!(AccessRecord, offset) as i32;
    pub const DESC: i32 = std::mem::offset_of!(AccessRecord, desc) as i32;
    pub const SIZE: i64 = std::mem::size_of::<AccessRecord>() as i64;

    /// The kind (`REC_*`), direction and bytes per lane of the access.
    fn parts(&self) -> (u64, Dir, u32) {
        let dir = if self.desc >> 8 & 1 == 1 { Dir::Write } else { Dir::Read };
        (self.desc & 0xff, dir, (self.desc >> 16) as u32)
    }

    /// Lane `lane`'s device address (a global or scalar access).
    fn address(&self, lane: usize) -> u64 {
        ((self.hi[lane] as u64) << 32 | self.lo[lane] as u64).wrapping_add(self.offset as u64)
    }

    /// [`AccessRecord::range`]'s common case, checked on the 32-bit halves of the lanes' addresses (compares
    /// the host does four lanes at a time): every lane active, their addresses before the offset stepping by
    /// `bytes` from lane 0's without carrying into the high half, and the range outside the wave's private
    /// memory. None when any of that fails, which [`LaneRange::of_lanes`] then decides lane by lane.
    fn full_range(&self, dir: Dir, bytes: u32, wave: &WaveState) -> Option<LaneRange> {
        let (lo0, hi0) = (self.lo[0], self.hi[0]);
        if self.mask != u64::MAX || bytes == 0 || lo0 as u64 + 63 * bytes as u64 > u32::MAX as u64 {
            return None;
        }
        let mut off = 0u32;
        for l in 0..64 {
            off |= (self.lo[l] ^ lo0.wrapping_add(l as u32 * bytes)) | (self.hi[l] ^ hi0);
        }
        let base = self.address(0);
        let end = base.checked_add(64 * bytes as u64)?;
        (off == 0 && !wave.touches_private(base, end)).then_some(LaneRange {
            space: Space::Global,
            dir,
            bytes,
            base,
            lanes: u64::MAX,
        })
    }

    /// The access as one range when its lanes make one ([`LaneRange::of_lanes`]: a global access of `wave`'s
    /// lanes to consecutive elements outside its private memory), without a record per lane.
    pub fn range(&self, wave: &WaveState) -> Option<LaneRange> {
        let (space, dir, bytes) = self.parts();
        if space != REC_GLOBAL {
            return None;
        }
        if let Some(r) = self.full_range(dir, bytes, wave) {
            return Some(r);
        }
        LaneRange::of_lanes(
            dir,
            bytes,
            self.mask,
            |l| self.address(l),
            |a| emu_core::observe::space_of(Space::Global, a, wave) != Space::Global,
        )
    }
}

/// The window slot of the global access site at `offset` (from the code base): the slot it checks in compiled
/// code and the one the interpreter's access fills when the check fails. Memory instructions are eight bytes, so
/// a loop body's sites take different slots unless it has more of them than there are windows.
pub fn window_slot(offset: u64) -> usize {
    ((offset >> 3) as usize) % BUFFER_WINDOWS
}

/// Byte offsets of a window slot's fields from the start of the window table ([`Ctx::windows`]).
pub fn window_field(slot: usize, field: usize) -> i32 {
    (std::mem::offset_of!(Windows, vector) + slot * std::mem::size_of::<BufferWindow>() + 8 * field) as i32
}

/// The scalar window slot of the scalar load site at `offset` (from the code base), as [`window_slot`] for
/// vector sites.
pub fn scalar_window_slot(offset: u64) -> usize {
    ((offset >> 3) as usize) % SCALAR_WINDOWS
}

/// Byte offsets of a scalar window slot's fields from the start of the window table ([`Ctx::windows`]).
pub fn scalar_window_field(slot: usize, field: usize) -> i32 {
    (std::mem::offset_of!(Windows, scalar) + slot * std::mem::size_of::<BufferWindow>() + 8 * field) as i32
}

/// A batch of instructions taken from compiled code, waiting to be reported: a loop's passes with the same
/// EXECs are reported once, with their count.
pub struct HeldBatch {
    pub insts: *const Inst,
    pub offset: u64,
    pub n: usize,
    pub times: u64,
    pub execs: [u64; MAX_BLOCK],
}

/// The context a compiled block receives (its only parameter).
#[repr(C)]
pub struct Ctx {
    /// The wave's 128 SGPR slots (VCC at 106/107, EXEC at 126/127).
    pub sgprs: *mut u32,
    /// VGPR r is the 256 bytes at `vgprs + 256 r`.
    pub vgprs: *mut [u32; 64],
    pub agprs: *mut [u32; 64],
    /// SCC, 0 or 1.
    pub scc: u32,
    /// Non-zero when a block returns [`crate::compile::POLL`] where the wave goes back round a polling loop
    /// ([`emu_core::sem::goes_back`]; [`emu_core::engine::Limits::poll_ends_turn`]).
    pub poll_ends: u32,
    /// Where the wave continues when the block returns.
    pub next_pc: u64,
    /// Instructions the block executed (including an interpreted one that stopped it, and every pass of a
    /// block that loops on itself).
    pub executed: u64,
    /// The runner's environment for helper calls.
    pub env: *mut c_void,
    /// Instructions the wave may still execute: a block looping on itself returns once `executed` reaches it.
    pub budget: u64,
    /// Where the code object is loaded in this dispatch: blocks hold PCs relative to it, so one translation
    /// serves every dispatch of the kernel.
    pub code_base: u64,
    /// EXEC when the instruction being observed issued.
    pub issue_exec: u64,
    /// The shader clock when the run started ([`emu_core::wave::WaveClock::read`] after the wave's executed
    /// instructions) and the cycles each instruction adds: compiled `s_memtime` reads `clock_now + clock_step ×
    /// instructions executed since`.
    pub clock_now: u64,
    pub clock_step: u64,
    /// Set when the observer asked to let other waves run: the runner leaves the wave after the block.
    pub switch: u32,
    /// The wave's [`emu_core::wave::WaveState::pass`] while the block runs: compiled code notes coherent loads
    /// and memory writes in it, and checks and clears it where the wave goes backwards.
    pub pass: u32,
    /// The pending batch of an observed block whose observer takes batches ([`Observer::BATCHES`]): its first
    /// instruction, that one's offset from the code base, how many ran, and EXEC at each one's issue.
    pub batch_insts: *const Inst,
    pub batch_offset: u64,
    pub batch_n: u64,
    pub batch_execs: [u64; MAX_BLOCK],
    /// A batch taken from compiled code and not yet reported (see [`Ctx::take_batch`]).
    pub held: HeldBatch,
    /// The workgroup's LDS, for inline accesses (bounds-checked by the code against `lds_len`).
    pub lds_ptr: *mut u8,
    pub lds_len: u64,
    /// The wave's private segment: its base and each lane's bytes (what the interpreter's `scratch` answers).
    pub scratch_base: u64,
    pub scratch_lane_bytes: u64,
    /// Where inline stores of inactive lanes go.
    pub sink: [u32; 4],
    /// The wave's window tables ([`WaveState::windows`]: the memory its accesses through the interpreter found,
    /// one window per access site, the site's offset picking the slot: [`window_slot`], and for scalar loads
    /// [`scalar_window_slot`]): compiled accesses whose every active lane (or whose scalar address) falls inside
    /// their site's window go straight to its host bytes.
    pub windows: *mut Windows,
    /// Accesses the current instruction's compiled code made, for an observer (observed blocks only).
    pub rec_count: u64,
    pub recs: [AccessRecord; RECORDS],
    /// Copies of registers an instruction read before it overwrote them (see `backend::JitBackend::settle`).
    pub keep: [Lanes; KEEP],
    /// Operands of a register write computed in a loop over chunks that are not registers (put here so the
    /// loop can index them).
    pub tmp: [Lanes; TMP],
    /// Values of deferred register writes, until the block writes its pending registers.
    pub parked: [Lanes; PARKED],
    /// Operands and results of calls into the interpreter ([`crate::call`]).
    pub s: [u32; 16],
    pub m: [u64; 8],
    pub v: [Lanes; SLOTS],
}

thread_local! {
    /// A context kept for this thread's next wave: making one zeroes its operand slots (10 KiB), which a wave
    /// that returns at every barrier would pay each time.
    static SPARE: std::cell::Cell<Option<Box<Ctx>>> = const { std::cell::Cell::new(None) };
}

impl Ctx {
    /// A context over `wave`, this thread's spare one when there is one (its operand slots hold stale values,
    /// which calls overwrite before reading).
    pub fn reused(wave: &mut WaveState, env: *mut c_void, budget: u64) -> Box<Ctx> {
        match SPARE.with(|s| s.take()) {
            Some(mut c) => {
                c.reset(wave, env, budget);
                c
            }
            None => Ctx::new(wave, env, budget),
        }
    }

    /// Every field but the operand slots, as [`Ctx::new`] sets them.
    fn reset(&mut self, wave: &mut WaveState, env: *mut c_void, budget: u64) {
        self.sgprs = wave.sgprs.as_mut_ptr();
        self.vgprs = wave.vgprs.as_mut_ptr();
        self.agprs = wave.agprs.as_mut_ptr();
        self.scc = wave.scc as u32;
        self.next_pc = wave.pc;
        self.executed = 0;
        self.env = env;
        self.budget = budget;
        self.code_base = 0;
        self.issue_exec = 0;
        self.switch = 0;
        self.pass = 0;
        self.batch_n = 0;
        self.held.n = 0;
        self.lds_ptr = std::ptr::null_mut();
        self.lds_len = 0;
        (self.scratch_base, self.scratch_lane_bytes) = (wave.scratch_base, wave.scratch_lane_bytes as u64);
        self.windows = wave.windows_mut();
        self.rec_count = 0;
    }

    /// Appends the accesses compiled code recorded since the last call to `log` (when there is one: the
    /// observer wants accesses), in the order they were made, lane by lane, and forgets them.
    pub fn take_records(&mut self, wave: &WaveState, log: Option<&mut Vec<LaneAccess>>) {
        let n = std::mem::take(&mut self.rec_count) as usize;
        let Some(log) = log else { return };
        for r in &self.recs[..n.min(RECORDS)] {
            let (space, dir, bytes) = r.parts();
            log.reserve(r.mask.count_ones() as usize);
            // the active lanes, lowest first
            let mut m = r.mask;
            while m != 0 {
                let lane = m.trailing_zeros() as usize;
                m &= m - 1;
                let (space, address) = match space {
                    REC_LDS => (Space::Lds, (r.lo[lane] as u64).wrapping_add(r.offset as u64)),
                    REC_SCALAR => (Space::Scalar, r.address(lane)),
                    _ => {
                        let a = r.address(lane);
                        (emu_core::observe::space_of(Space::Global, a, wave), a)
                    }
                };
                log.push(LaneAccess {
                    lane: lane as u8,
                    space,
                    dir,
                    bytes,
                    address,
                });
            }
        }
    }

    /// The accesses of the instruction being reported, in their compact form ([`Accesses::of`]): compiled code's
    /// records appended to `log` after an interpreter call's lanes there, or — one record of lanes that make
    /// a range, and nothing else — that range without a record per lane. None without a log.
    pub fn take_accesses<'l>(&mut self, wave: &WaveState, log: Option<&'l mut Vec<LaneAccess>>) -> Accesses<'l> {
        let Some(log) = log else {
            self.rec_count = 0;
            return Accesses::NONE;
        };
        if log.is_empty() && self.rec_count == 1 {
            if let Some(r) = self.recs[0].range(wave) {
                self.rec_count = 0;
                return Accesses::Range(r);
            }
        }
        self.take_records(wave, Some(&mut *log));
        Accesses::of(log)
    }

    /// Takes the pending batch compiled code left (see [`Ctx::batch_n`]): another pass of the held batch when
    /// it has the same instructions and EXECs (a loop going round), else held in its place once the held one is
    /// reported to `observer`.
    pub fn take_batch(&mut self, observer: &dyn DynObserver, workgroup: [u32; 3], wave: u32) {
        let n = (std::mem::take(&mut self.batch_n) as usize).min(MAX_BLOCK);
        if n == 0 {
            return;
        }
        let h = &self.held;
        if h.n == n
            && h.insts == self.batch_insts
            && h.offset == self.batch_offset
            && h.execs[..n] == self.batch_execs[..n]
        {
            self.held.times += 1;
            return;
        }
        self.report_held(observer, workgroup, wave);
        let h = &mut self.held;
        (h.insts, h.offset, h.n, h.times) = (self.batch_insts, self.batch_offset, n, 1);
        h.execs[..n].copy_from_slice(&self.batch_execs[..n]);
    }

    /// Reports the held batch, if any, to `observer` as the wave's (before anything else of the wave is).
    pub fn report_held(&mut self, observer: &dyn DynObserver, workgroup: [u32; 3], wave: u32) {
        let h = &mut self.held;
        if h.n == 0 {
            return;
        }
        // SAFETY: compiled code sets batch_insts to an instruction of the running block's slice, with at least
        // `n` instructions from it (n never exceeds the block's length), and blocks live as long as the JIT.
        let insts = unsafe { std::slice::from_raw_parts(h.insts, h.n) };
        let b = InstBatch {
            dispatch: 0,
            workgroup,
            wave,
            pc: self.code_base.wrapping_add(h.offset),
            insts,
            execs: &h.execs[..h.n],
            times: h.times,
        };
        h.n = 0;
        observer.batch(&b);
    }

    /// Every batch compiled code left, reported.
    pub fn report_batches(&mut self, observer: &dyn DynObserver, workgroup: [u32; 3], wave: u32) {
        self.take_batch(observer, workgroup, wave);
        self.report_held(observer, workgroup, wave);
    }

    /// Keeps `ctx` for this thread's next [`Ctx::reused`].
    pub fn give_back(ctx: Box<Ctx>) {
        SPARE.with(|s| s.set(Some(ctx)));
    }

    /// A context over `wave` for one block call.
    pub fn new(wave: &mut WaveState, env: *mut c_void, budget: u64) -> Box<Ctx> {
        Box::new(Ctx {
            sgprs: wave.sgprs.as_mut_ptr(),
            vgprs: wave.vgprs.as_mut_ptr(),
            agprs: wave.agprs.as_mut_ptr(),
            scc: wave.scc as u32,
            poll_ends: 0,
            next_pc: wave.pc,
            executed: 0,
            env,
            budget,
            code_base: 0,
            issue_exec: 0,
            // the runner sets these before each block (see `clock_of`); a lone block reads the wave's clock
            clock_now: clock_of(wave).0,
            clock_step: wave.clock.per_instruction,
            switch: 0,
            pass: 0,
            batch_insts: std::ptr::null(),
            batch_offset: 0,
            batch_n: 0,
            batch_execs: [0; MAX_BLOCK],
            held: HeldBatch {
                insts: std::ptr::null(),
                offset: 0,
                n: 0,
                times: 0,
                execs: [0; MAX_BLOCK],
            },
            lds_ptr: std::ptr::null_mut(),
            lds_len: 0,
            scratch_base: wave.scratch_base,
            scratch_lane_bytes: wave.scratch_lane_bytes as u64,
            sink: [0; 4],
            windows: wave.windows_mut(),
            rec_count: 0,
            recs: [AccessRecord {
                lo: [0; 64],
                hi: [0; 64],
                mask: 0,
                offset: 0,
                desc: 0,
            }; RECORDS],
            keep: [[0; 64]; KEEP],
            tmp: [[0; 64]; TMP],
            parked: [[0; 64]; PARKED],
            s: [0; 16],
            m: [0; 8],
            v: [[0; 64]; SLOTS],
        })
    }
}

/// What helper calls from compiled code reach: the device memory, the wave and its workgroup's LDS, and where
/// the first fault is left for the runner.
pub struct Env<'a> {
    pub mem: &'a DeviceMemory,
    pub wave: *mut WaveState,
    pub lds: *mut [u8],
    /// The first fault: PC, instruction text, error.
    pub error: Option<(u64, String, ExecError)>,
    pub fallbacks: u64,
    /// Memory accesses compiled code made through the interpreter ([`crate::JitStats::checked_accesses`]).
    pub checked_accesses: u64,
    /// The observer of an observed dispatch, with the wave's identity and its accesses of the current
    /// instruction (when the observer wants them).
    pub observer: Option<&'a dyn DynObserver>,
    /// Whether the observer wants lane accesses (asked once per run, not per instruction).
    pub wants_accesses: bool,
    pub workgroup: [u32; 3],
    pub wave_index: u32,
    pub accesses: Vec<LaneAccess>,
}

/// [`Observer`] behind a pointer (its associated constants make it unusable as `dyn`).
pub trait DynObserver: Sync {
    fn instruction(&self, ev: &InstEvent<'_>);
    fn switch_wave(&self, ev: &InstEvent<'_>) -> bool;
    fn batch(&self, b: &InstBatch<'_>);
    /// [`Observer::instruction`], then [`Observer::switch_wave`]: one call through the pointer per instruction.
    fn instruction_then_switch(&self, ev: &InstEvent<'_>) -> bool;
}

impl<O: Observer> DynObserver for O {
    fn instruction(&self, ev: &InstEvent<'_>) {
        Observer::instruction(self, ev)
    }
    fn switch_wave(&self, ev: &InstEvent<'_>) -> bool {
        Observer::switch_wave(self, ev)
    }
    fn batch(&self, b: &InstBatch<'_>) {
        Observer::batch(self, b)
    }
    fn instruction_then_switch(&self, ev: &InstEvent<'_>) -> bool {
        Observer::instruction(self, ev);
        Observer::switch_wave(self, ev)
    }
}

impl Env<'_> {
    /// Where an interpreter call records lane accesses: only in an observed dispatch whose observer asks.
    pub fn access_log(&mut self) -> Option<&mut Vec<LaneAccess>> {
        if self.wants_accesses {
            Some(&mut self.accesses)
        } else {
            None
        }
    }
}

impl Ctx {
    pub const SGPRS: i32 = 0;
    pub const VGPRS: i32 = 8;
    pub const AGPRS: i32 = 16;
    pub const SCC: i32 = 24;
    pub const NEXT_PC: i32 = 32;
    pub const POLL_ENDS: i32 = 28;
    pub const EXECUTED: i32 = 40;
    pub const BUDGET: i32 = 56;
    pub const CODE_BASE: i32 = std::mem::offset_of!(Ctx, code_base) as i32;
    pub const ISSUE_EXEC: i32 = std::mem::offset_of!(Ctx, issue_exec) as i32;
    pub const CLOCK_NOW: i32 = std::mem::offset_of!(Ctx, clock_now) as i32;
    pub const CLOCK_STEP: i32 = std::mem::offset_of!(Ctx, clock_step) as i32;
    pub const SWITCH: i32 = std::mem::offset_of!(Ctx, switch) as i32;
    pub const PASS: i32 = std::mem::offset_of!(Ctx, pass) as i32;
    pub const BATCH_INSTS: i32 = std::mem::offset_of!(Ctx, batch_insts) as i32;
    pub const BATCH_OFFSET: i32 = std::mem::offset_of!(Ctx, batch_offset) as i32;
    pub const BATCH_N: i32 = std::mem::offset_of!(Ctx, batch_n) as i32;
    pub const BATCH_EXECS: i32 = std::mem::offset_of!(Ctx, batch_execs) as i32;
    pub const LDS_PTR: i32 = std::mem::offset_of!(Ctx, lds_ptr) as i32;
    pub const LDS_LEN: i32 = std::mem::offset_of!(Ctx, lds_len) as i32;
    pub const SCRATCH_BASE: i32 = std::mem::offset_of!(Ctx, scratch_base) as i32;
    pub const SCRATCH_LANE_BYTES: i32 = std::mem::offset_of!(Ctx, scratch_lane_bytes) as i32;
    pub const SINK: i32 = std::mem::offset_of!(Ctx, sink) as i32;
    pub const WINDOWS: i32 = std::mem::offset_of!(Ctx, windows) as i32;
    pub const KEEP: i32 = std::mem::offset_of!(Ctx, keep) as i32;
    pub const REC_COUNT: i32 = std::mem::offset_of!(Ctx, rec_count) as i32;
    pub const RECS: i32 = std::mem::offset_of!(Ctx, recs) as i32;
    pub const TMP: i32 = std::mem::offset_of!(Ctx, tmp) as i32;
    pub const PARKED: i32 = std::mem::offset_of!(Ctx, parked) as i32;
    pub const S: i32 = std::mem::offset_of!(Ctx, s) as i32;
    pub const M: i32 = std::mem::offset_of!(Ctx, m) as i32;
    pub const V: i32 = std::mem::offset_of!(Ctx, v) as i32;
}

/// The wave's shader clock before its next instruction, and the cycles each instruction adds (set before every
/// block: [`Ctx::clock_now`]).
pub(crate) fn clock_of(wave: &WaveState) -> (u64, u64) {
    (
        wave.clock.read(emu_core::sem::Clock::Shader, wave.executed),
        wave.clock.per_instruction,
    )
}

/// 16-byte aligned rows of four lane masks.
#[repr(C, align(16))]
pub struct MaskTable([[u32; 4]; 16]);

impl MaskTable {
    pub fn as_ptr(&self) -> *const u32 {
        self.0.as_ptr().cast()
    }
}

/// Row n: lane i all ones where bit i of n is set.
pub static MASK_TABLE: MaskTable = MaskTable({
    let mut t = [[0u32; 4]; 16];
    let mut n = 0;
    while n < 16 {
        let mut i = 0;
        while i < 4 {
            if n >> i & 1 == 1 {
                t[n][i] = u32::MAX;
            }
            i += 1;
        }
        n += 1;
    }
    t
});

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_is_a_range_exactly_when_its_lane_accesses_are_one() {
        let mut wave = WaveState::new(0, 1, 0);
        (wave.scratch_base, wave.scratch_lane_bytes) = (0x9000_0000, 256);
        let mut ctx = Ctx::new(&mut wave, std::ptr::null_mut(), 0);
        let (mut ranges, mut total) = (0, 0);
        let mut log = Vec::new();
        for space in [REC_GLOBAL, REC_LDS, REC_SCALAR] {
            for bytes in [4u32, 16] {
                for mask in [u64::MAX, u64::MAX >> 3, 0b1101, 1 << 40, 0] {
                    for (start, step, off) in [
                        (0x1_0000_0ff0u64, bytes as u64, 0i64),
                        (0x1000, bytes as u64, -16),
                        (0x1000, 2 * bytes as u64, 0),
                        (0x9000_3ff0, bytes as u64, 0),
                        (0xffff_fff0, bytes as u64, 8),
                        (0xffff_f000, bytes as u64, 0x2000),
                        (0x8fff_ff00, bytes as u64, 0),
                    ] {
                        for write in [false, true] {
                            let mut r = AccessRecord {
                                lo: [0; 64],
                                hi: [0; 64],
                                mask,
                                offset: off,
                                desc: AccessRecord::desc(space, write, bytes),
                            };
                            for l in 0..64 {
                                // inactive lanes hold what the register held
                                let a = if mask >> l & 1 == 1 {
                                    start + l as u64 * step
                                } else {
                                    0x5555 * l as u64
                                };
                                (r.lo[l], r.hi[l]) = (a as u32, (a >> 32) as u32);
                            }
                            ctx.recs[0] = r;
                            ctx.rec_count = 1;
                            log.clear();
                            ctx.take_records(&wave, Some(&mut log));
                            let want = LaneRange::of(&log);
                            assert_eq!(
                                r.range(&wave),
                                want,
                                "space {space}, {bytes} B, mask {mask:#x}, from {start:#x} by {step} + {off}"
                            );
                            ctx.rec_count = 1;
                            let mut fresh = Vec::new();
                            let got = ctx.take_accesses(&wave, Some(&mut fresh)).into_owned();
                            assert_eq!((got.range().copied(), got.to_vec()), (want, log.clone()));
                            assert_eq!(ctx.rec_count, 0, "records are taken once");
                            ranges += want.is_some() as usize;
                            total += 1;
                        }
                    }
                }
            }
        }
        assert!(ranges > 30 && ranges < total / 2, "{ranges} of {total}");
    }

    #[test]
    fn the_context_layout_matches_the_offsets_compiled_code_uses() {
        assert_eq!(std::mem::offset_of!(Ctx, sgprs) as i32, Ctx::SGPRS);
        assert_eq!(std::mem::offset_of!(Ctx, vgprs) as i32, Ctx::VGPRS);
        assert_eq!(std::mem::offset_of!(Ctx, agprs) as i32, Ctx::AGPRS);
        assert_eq!(std::mem::offset_of!(Ctx, scc) as i32, Ctx::SCC);
        assert_eq!(std::mem::offset_of!(Ctx, next_pc) as i32, Ctx::NEXT_PC);
        assert_eq!(std::mem::offset_of!(Ctx, executed) as i32, Ctx::EXECUTED);
        assert_eq!(std::mem::offset_of!(Ctx, budget) as i32, Ctx::BUDGET);
        assert_eq!(std::mem::offset_of!(Ctx, poll_ends) as i32, Ctx::POLL_ENDS);
        assert_eq!(MASK_TABLE.0[0b1010], [0, u32::MAX, 0, u32::MAX]);
        assert_eq!(MASK_TABLE.as_ptr() as usize % 16, 0);
    }
}

//! What compiled code sees: a `#[repr(C)]` context with pointers into the wave's register files, SCC, and the
//! block's exit state; and the constant table that turns 4 bits of a lane mask into an `i32x4` lane mask.

use std::ffi::c_void;

use emu_core::memory::DeviceMemory;
use emu_core::observe::{InstEvent, LaneAccess, Observer};
use emu_core::sem::ExecError;
use emu_core::wave::{Lanes, WaveState};

/// Vector slots for operands and results of interpreter calls (an MFMA 32x32 step needs 20 in, 16 out).
pub const SLOTS: usize = 40;

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
    pub _pad: u32,
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
    /// Set when the observer asked to let other waves run: the runner leaves the wave after the block.
    pub switch: u32,
    /// The workgroup's LDS, for inline accesses (bounds-checked by the code against `lds_len`).
    pub lds_ptr: *mut u8,
    pub lds_len: u64,
    /// Where inline stores of inactive lanes go.
    pub sink: [u32; 4],
    /// The device buffer that the wave's last global access through the interpreter touched: compiled
    /// accesses whose every active lane falls inside it go straight to `win_host` (empty: `win_len` 0).
    pub win_start: u64,
    pub win_len: u64,
    pub win_host: *mut u8,
    /// The same for scalar loads: the allocation the wave's last `s_load` through the interpreter read
    /// (kernel arguments, constant tables), which compiled scalar loads inside it read directly.
    pub swin_start: u64,
    pub swin_len: u64,
    pub swin_host: *mut u8,
    /// Operands and results of calls into the interpreter ([`crate::call`]).
    pub s: [u32; 16],
    pub m: [u64; 8],
    pub v: [Lanes; SLOTS],
}

thread_local! {
    /// A context kept for the next run on this thread: making one zeroes its call slots (about 10 KiB), which a
    /// caller running one block per run (the timing model) would pay for every block.
    static SPARE: std::cell::Cell<Option<Box<Ctx>>> = const { std::cell::Cell::new(None) };
}

impl Ctx {
    /// A context over `wave` like [`Ctx::new`], reusing this thread's spare one when there is one (the call
    /// slots keep old values, which no block reads before writing).
    pub fn reuse(wave: &mut WaveState, env: *mut c_void, budget: u64) -> Box<Ctx> {
        match SPARE.take() {
            Some(mut c) => {
                c.sgprs = wave.sgprs.as_mut_ptr();
                c.vgprs = wave.vgprs.as_mut_ptr();
                c.agprs = wave.agprs.as_mut_ptr();
                c.scc = wave.scc as u32;
                c.next_pc = wave.pc;
                c.executed = 0;
                c.env = env;
                c.budget = budget;
                c.code_base = 0;
                c.issue_exec = 0;
                c.switch = 0;
                c.lds_ptr = std::ptr::null_mut();
                c.lds_len = 0;
                (c.win_start, c.win_len, c.win_host) = (0, 0, std::ptr::null_mut());
                (c.swin_start, c.swin_len, c.swin_host) = (0, 0, std::ptr::null_mut());
                c
            }
            None => Ctx::new(wave, env, budget),
        }
    }

    /// Keeps `ctx` for the next [`Ctx::reuse`] on this thread.
    pub fn keep(ctx: Box<Ctx>) {
        SPARE.set(Some(ctx));
    }

    /// A context over `wave` for one block call.
    pub fn new(wave: &mut WaveState, env: *mut c_void, budget: u64) -> Box<Ctx> {
        Box::new(Ctx {
            sgprs: wave.sgprs.as_mut_ptr(),
            vgprs: wave.vgprs.as_mut_ptr(),
            agprs: wave.agprs.as_mut_ptr(),
            scc: wave.scc as u32,
            _pad: 0,
            next_pc: wave.pc,
            executed: 0,
            env,
            budget,
            code_base: 0,
            issue_exec: 0,
            switch: 0,
            lds_ptr: std::ptr::null_mut(),
            lds_len: 0,
            sink: [0; 4],
            win_start: 0,
            win_len: 0,
            win_host: std::ptr::null_mut(),
            swin_start: 0,
            swin_len: 0,
            swin_host: std::ptr::null_mut(),
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
    /// The observer of an observed dispatch, with the wave's identity and its accesses of the current
    /// instruction (when the observer wants them).
    pub observer: Option<&'a dyn DynObserver>,
    pub workgroup: [u32; 3],
    pub wave_index: u32,
    pub accesses: Vec<LaneAccess>,
}

/// [`Observer`] behind a pointer (its associated constants make it unusable as `dyn`).
pub trait DynObserver: Sync {
    fn wants_accesses(&self) -> bool;
    fn instruction(&self, ev: &InstEvent<'_>);
    fn switch_wave(&self, ev: &InstEvent<'_>) -> bool;
}

impl<O: Observer> DynObserver for O {
    fn wants_accesses(&self) -> bool {
        O::WANTS_ACCESSES
    }
    fn instruction(&self, ev: &InstEvent<'_>) {
        Observer::instruction(self, ev)
    }
    fn switch_wave(&self, ev: &InstEvent<'_>) -> bool {
        Observer::switch_wave(self, ev)
    }
}

impl Env<'_> {
    /// Where an interpreter call records lane accesses: only in an observed dispatch whose observer asks.
    pub fn access_log(&mut self) -> Option<&mut Vec<LaneAccess>> {
        match self.observer {
            Some(o) if o.wants_accesses() => Some(&mut self.accesses),
            _ => None,
        }
    }
}

impl Ctx {
    pub const SGPRS: i32 = 0;
    pub const VGPRS: i32 = 8;
    pub const AGPRS: i32 = 16;
    pub const SCC: i32 = 24;
    pub const NEXT_PC: i32 = 32;
    pub const EXECUTED: i32 = 40;
    pub const BUDGET: i32 = 56;
    pub const CODE_BASE: i32 = std::mem::offset_of!(Ctx, code_base) as i32;
    pub const ISSUE_EXEC: i32 = std::mem::offset_of!(Ctx, issue_exec) as i32;
    pub const SWITCH: i32 = std::mem::offset_of!(Ctx, switch) as i32;
    pub const LDS_PTR: i32 = std::mem::offset_of!(Ctx, lds_ptr) as i32;
    pub const LDS_LEN: i32 = std::mem::offset_of!(Ctx, lds_len) as i32;
    pub const SINK: i32 = std::mem::offset_of!(Ctx, sink) as i32;
    pub const WIN_START: i32 = std::mem::offset_of!(Ctx, win_start) as i32;
    pub const WIN_LEN: i32 = std::mem::offset_of!(Ctx, win_len) as i32;
    pub const WIN_HOST: i32 = std::mem::offset_of!(Ctx, win_host) as i32;
    pub const SWIN_START: i32 = std::mem::offset_of!(Ctx, swin_start) as i32;
    pub const SWIN_LEN: i32 = std::mem::offset_of!(Ctx, swin_len) as i32;
    pub const SWIN_HOST: i32 = std::mem::offset_of!(Ctx, swin_host) as i32;
    pub const S: i32 = std::mem::offset_of!(Ctx, s) as i32;
    pub const M: i32 = std::mem::offset_of!(Ctx, m) as i32;
    pub const V: i32 = std::mem::offset_of!(Ctx, v) as i32;
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
    fn the_context_layout_matches_the_offsets_compiled_code_uses() {
        assert_eq!(std::mem::offset_of!(Ctx, sgprs) as i32, Ctx::SGPRS);
        assert_eq!(std::mem::offset_of!(Ctx, vgprs) as i32, Ctx::VGPRS);
        assert_eq!(std::mem::offset_of!(Ctx, agprs) as i32, Ctx::AGPRS);
        assert_eq!(std::mem::offset_of!(Ctx, scc) as i32, Ctx::SCC);
        assert_eq!(std::mem::offset_of!(Ctx, next_pc) as i32, Ctx::NEXT_PC);
        assert_eq!(std::mem::offset_of!(Ctx, executed) as i32, Ctx::EXECUTED);
        assert_eq!(std::mem::offset_of!(Ctx, budget) as i32, Ctx::BUDGET);
        assert_eq!(MASK_TABLE.0[0b1010], [0, u32::MAX, 0, u32::MAX]);
        assert_eq!(MASK_TABLE.as_ptr() as usize % 16, 0);
    }
}

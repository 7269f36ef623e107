//! What compiled code sees: a `#[repr(C)]` context with pointers into the wave's register files, SCC, and the
//! block's exit state; and the constant table that turns 4 bits of a lane mask into an `i32x4` lane mask.

use std::ffi::c_void;

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
}

impl Ctx {
    pub const SGPRS: i32 = 0;
    pub const VGPRS: i32 = 8;
    pub const AGPRS: i32 = 16;
    pub const SCC: i32 = 24;
    pub const NEXT_PC: i32 = 32;
    pub const EXECUTED: i32 = 40;
    pub const BUDGET: i32 = 56;
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

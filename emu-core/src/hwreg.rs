//! The hardware registers a compute kernel reads with `s_getreg_b32` and writes with `s_setreg_b32` /
//! `s_setreg_imm32_b32`: which exist on each target, what wavejit holds in each, and which writes it takes.
//!
//! Register ids are LLVM's (`SIDefines.h`, `Hwreg::Id`; gfx942 adds XCC_ID = 20). Field layouts of MODE,
//! STATUS and TRAPSTS follow ROCdbgapi's gfx9 register types (`src/architecture.cpp`, which the MI200/MI300
//! ISA guides' "Hardware Registers" tables match); HW_ID's follows HIP's `__smid` (`amd_device_functions.h`:
//! SE_ID is bits 15:13 on gfx90a, whose GCD has 8 shader engines, and 14:13 on gfx942 with 4 per XCD;
//! XCC_ID[3:0] is the XCD); GPR_ALLOC's and LDS_ALLOC's the Linux KFD trap handler
//! (`cwsr_trap_handler_gfx9.asm`: VGPR_SIZE at 13:8, SGPR_SIZE at 27:24 counting 16 SGPRs, LDS_SIZE at 20:12
//! counting 64 dwords).
//!
//! What a wave holds ([`HwRegs`], in [`crate::wave::WaveState::hw`]):
//! - MODE as the dispatch loads it from the kernel descriptor (rounding and denormal modes, DX10 clamp, IEEE,
//!   FP16 overflow, exception enables) and as `s_setreg` leaves it; bit 27 (GPR_IDX_EN) is the wave's VGPR
//!   index mode.
//! - STATUS: SCC, EXECZ and VCCZ from the registers when read; VALID, and IN_TG for a workgroup of more than
//!   one wave; nothing else is set (no trap handler, debugger, export or priority state).
//! - HW_ID and XCC_ID from where the wave runs. In timing mode the model's placement (XCD, SE, CU within its
//!   SE, SIMD, the lowest wave slot free on that SIMD); in a functional dispatch a fixed placement
//!   ([`placement`]): workgroup `i` on XCD `i mod XCDs`, then round-robin over the XCD's SEs and each SE's
//!   CUs, wave `w` on SIMD `w mod 4` in slot `w / 4`. SH_ID is 0 (wavejit's CUs form one array per SE);
//!   TG_ID and the queue fields (PIPE_ID, QUEUE_ID, VM_ID, ME_ID, STATE_ID) are 0: wavejit has no hardware
//!   queues or VMIDs.
//! - GPR_ALLOC and LDS_ALLOC from the descriptor and the dispatch's LDS size; the bases are 0 (each wave's
//!   registers and each workgroup's LDS are apart).
//! - IB_STS reads 0: the engines complete every instruction, memory included, as it executes.
//! - TRAPSTS: 0, except that its IEEE exception flags (bits 6:0) and DP_RATE (31:29) are refused: the float
//!   operations record no exceptions, and the guides give no DP_RATE for these devices.
//!
//! Writes: MODE fields may be written with the value they hold, and LOD_CLAMPED, bits 22:20, POPS_PACKER,
//! DISABLE_PERF and CSP with any value (none changes a compute result); a new rounding or denormal mode, DX10
//! clamp or IEEE mode, FP16_OVFL, exception enables, DEBUG_EN, GPR_IDX_EN or VSKIP stops the wave with the
//! field and value named ([`crate::sem::ExecError::ModeField`]). The other registers are read-only to a
//! kernel or belong to the trap handler, and writes to them are refused by name.

use isa_amdgpu::codeobj::KernelDescriptor;
use isa_amdgpu::Target;

/// Register ids of `hwreg(...)`.
pub mod id {
    pub const MODE: u32 = 1;
    pub const STATUS: u32 = 2;
    pub const TRAPSTS: u32 = 3;
    pub const HW_ID: u32 = 4;
    pub const GPR_ALLOC: u32 = 5;
    pub const LDS_ALLOC: u32 = 6;
    pub const IB_STS: u32 = 7;
    pub const SH_MEM_BASES: u32 = 15;
    pub const TBA_LO: u32 = 16;
    pub const TBA_HI: u32 = 17;
    pub const TMA_LO: u32 = 18;
    pub const TMA_HI: u32 = 19;
    /// gfx942 only.
    pub const XCC_ID: u32 = 20;
}

/// The `hwreg(id, offset, size)` operand of s_getreg/s_setreg: register id in bits 5:0, first bit in 10:6,
/// size minus one in 15:11.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    pub id: u32,
    pub offset: u32,
    pub size: u32,
}

impl Field {
    pub fn decode(simm16: u32) -> Field {
        Field {
            id: simm16 & 0x3f,
            offset: simm16 >> 6 & 0x1f,
            size: (simm16 >> 11 & 0x1f) + 1,
        }
    }
    /// The field's bits in place (a field running past bit 31 stops there).
    pub fn mask(&self) -> u32 {
        (((1u64 << self.size) - 1) << self.offset) as u32
    }
}

/// The register a `hwreg` id names on `target`, as the engines read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Readable {
    /// Held in [`HwRegs`] (MODE with the index-mode bit, HW_ID, XCC_ID, GPR_ALLOC, LDS_ALLOC, STATUS's fixed
    /// bits), returned by [`crate::sem::Backend::s_hwreg`].
    Held(Held),
    /// STATUS: the held bits with SCC, EXECZ and VCCZ.
    Status,
    /// A constant.
    Constant(u32),
}

/// The registers a wave holds in [`HwRegs`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Held {
    Mode,
    StatusFixed,
    HwId,
    XccId,
    GprAlloc,
    LdsAlloc,
}

/// STATUS bits: SCC, EXECZ, VCCZ, IN_TG, VALID.
pub mod status {
    pub const SCC: u32 = 1 << 0;
    pub const EXECZ: u32 = 1 << 9;
    pub const VCCZ: u32 = 1 << 10;
    pub const IN_TG: u32 = 1 << 11;
    pub const VALID: u32 = 1 << 16;
}

/// MODE.GPR_IDX_EN: VGPR index mode.
pub const MODE_GPR_IDX_EN: u32 = 1 << 27;

/// What reading `field` gives on `target`, or why it is refused.
pub fn readable(target: Target, field: Field) -> Result<Readable, &'static str> {
    Ok(match field.id {
        id::MODE => Readable::Held(Held::Mode),
        id::STATUS => Readable::Status,
        id::TRAPSTS => {
            if field.mask() & 0x7f != 0 {
                return Err("reads the IEEE exception flags of TRAPSTS (bits 6:0), which wavejit's float operations do not record");
            }
            if field.mask() & 0xe000_0000 != 0 {
                return Err("reads TRAPSTS.DP_RATE (bits 31:29), which the ISA guides do not give for these devices");
            }
            Readable::Constant(0)
        }
        id::HW_ID => Readable::Held(Held::HwId),
        id::GPR_ALLOC => Readable::Held(Held::GprAlloc),
        id::LDS_ALLOC => Readable::Held(Held::LdsAlloc),
        id::IB_STS => Readable::Constant(0),
        // bits 63:48 of the shared aperture (31:16) and of the private aperture (15:0)
        id::SH_MEM_BASES => Readable::Constant((crate::sem::SHARED_APERTURE_HI >> 16) << 16 | crate::sem::PRIVATE_APERTURE_HI >> 16),
        id::TBA_LO..=id::TMA_HI => return Err("reads the trap handler's base or memory address (TBA/TMA), which only a trap handler reads, and wavejit runs none"),
        id::XCC_ID if target.is_gfx940() => Readable::Held(Held::XccId),
        21..=24 if target.is_gfx940() => return Err("reads an SQ performance snapshot register, which wavejit does not model"),
        _ => return Err("names a hardware register this target does not have"),
    })
}

/// Why a write to `field` on `target` is refused, for the registers other than MODE (`None`: MODE, whose
/// fields [`mode_write`] checks).
pub fn unwritable(target: Target, field: Field) -> Option<&'static str> {
    Some(match field.id {
        id::MODE => return None,
        id::STATUS => "writes STATUS, which only a trap handler writes",
        id::TRAPSTS => "writes TRAPSTS, whose exception flags wavejit does not record",
        id::HW_ID => "writes HW_ID, which is read-only",
        id::GPR_ALLOC => "writes GPR_ALLOC, which is read-only",
        id::LDS_ALLOC => "writes LDS_ALLOC, which is read-only",
        id::IB_STS => "writes IB_STS, which only a trap handler writes",
        id::SH_MEM_BASES => "writes SH_MEM_BASES, which is read-only",
        id::TBA_LO..=id::TMA_HI => {
            "writes the trap handler's base or memory address (TBA/TMA), and wavejit runs no trap handler"
        }
        id::XCC_ID if target.is_gfx940() => "writes XCC_ID, which is read-only",
        21..=24 if target.is_gfx940() => "writes an SQ performance snapshot register, which is read-only",
        _ => "names a hardware register this target does not have",
    })
}

/// A field of MODE: name, first bit, width, and why a new value is refused (`None`: any value is taken).
#[derive(Debug, PartialEq, Eq)]
pub struct ModeField {
    pub name: &'static str,
    pub lo: u32,
    pub width: u32,
    pub refused: Option<&'static str>,
}

const fn f(name: &'static str, lo: u32, width: u32, refused: Option<&'static str>) -> ModeField {
    ModeField {
        name,
        lo,
        width,
        refused,
    }
}

const ROUNDING: Option<&str> = Some("the engines round every float operation to nearest even (0)");
const DENORMS: Option<&str> = Some("the engines keep denormals (3); flushing is not modelled");

/// MODE's fields.
pub const MODE_FIELDS: &[ModeField] = &[
    f("FP_ROUND.32", 0, 2, ROUNDING),
    f("FP_ROUND.64_16", 2, 2, ROUNDING),
    f("FP_DENORM.32", 4, 2, DENORMS),
    f("FP_DENORM.64_16", 6, 2, DENORMS),
    f(
        "DX10_CLAMP",
        8,
        1,
        Some("the engines clamp as DX10_CLAMP = 1 does (NaN to 0)"),
    ),
    f(
        "IEEE",
        9,
        1,
        Some("the engines compute as IEEE = 1 does (IEEE minNum/maxNum, signaling NaNs quieted)"),
    ),
    f("LOD_CLAMPED", 10, 1, None),
    f(
        "DEBUG_EN",
        11,
        1,
        Some("single-step traps to a debugger, and wavejit attaches none"),
    ),
    f(
        "EXCP_EN",
        12,
        8,
        Some("float exception traps: the engines record no exceptions and wavejit runs no trap handler"),
    ),
    f("reserved", 20, 3, None),
    f(
        "FP16_OVFL",
        23,
        1,
        Some("the engines give f16 overflow as IEEE infinity (0)"),
    ),
    f("POPS_PACKER", 24, 2, None),
    f("DISABLE_PERF", 26, 1, None),
    f(
        "GPR_IDX_EN",
        27,
        1,
        Some("VGPR index mode, which s_set_gpr_idx_on/off switch on wavejit"),
    ),
    f(
        "VSKIP",
        28,
        1,
        Some("vector skip, a debugger's mode, and wavejit attaches none"),
    ),
    f("CSP", 29, 3, None),
];

/// MODE after writing `value` into the bits of `mask`, or the first field whose change is refused (with the
/// value the write gives it).
pub fn mode_write(old: u32, value: u32, mask: u32) -> Result<u32, (&'static ModeField, u32)> {
    let new = (old & !mask) | (value & mask);
    for fd in MODE_FIELDS {
        let m = ((1u64 << fd.width) - 1) as u32;
        let (a, b) = (old >> fd.lo & m, new >> fd.lo & m);
        if a != b && fd.refused.is_some() {
            return Err((fd, b));
        }
    }
    Ok(new)
}

/// The hardware registers a wave holds beyond its general registers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HwRegs {
    /// MODE without GPR_IDX_EN (the wave's index mode).
    pub mode: u32,
    /// STATUS's bits that do not follow the registers (VALID, IN_TG).
    pub status: u32,
    pub hw_id: u32,
    pub xcc_id: u32,
    pub gpr_alloc: u32,
    pub lds_alloc: u32,
}

/// MODE as clang's kernel descriptors set it: round to nearest even, denormals kept, DX10 clamp and IEEE on.
pub const MODE_DEFAULT: u32 = 0xf << 4 | 1 << 8 | 1 << 9;

impl Default for HwRegs {
    /// The registers of a lone wave at the first wave slot of CU 0, with [`MODE_DEFAULT`] and no registers
    /// or LDS accounted.
    fn default() -> Self {
        HwRegs {
            mode: MODE_DEFAULT,
            status: status::VALID,
            hw_id: 0,
            xcc_id: 0,
            gpr_alloc: 0,
            lds_alloc: 0,
        }
    }
}

impl HwRegs {
    pub fn get(&self, h: Held, gpr_idx: bool) -> u32 {
        match h {
            Held::Mode => self.mode | if gpr_idx { MODE_GPR_IDX_EN } else { 0 },
            Held::StatusFixed => self.status,
            Held::HwId => self.hw_id,
            Held::XccId => self.xcc_id,
            Held::GprAlloc => self.gpr_alloc,
            Held::LdsAlloc => self.lds_alloc,
        }
    }

    /// The registers of a wave of a dispatch of `kd` with `lds_bytes` of LDS per workgroup and
    /// `waves_in_group` waves in its workgroup, placed at `at`.
    pub fn for_wave(target: Target, kd: &KernelDescriptor, lds_bytes: u32, waves_in_group: u32, at: Place) -> HwRegs {
        let sgprs = kd.sgpr_alloc_count().unwrap_or(16);
        HwRegs {
            mode: mode_at_dispatch(kd),
            status: status::VALID | if waves_in_group > 1 { status::IN_TG } else { 0 },
            hw_id: hw_id(target, at),
            xcc_id: at.xcd & 0xf,
            gpr_alloc: (kd.rsrc1.granulated_workitem_vgpr_count as u32 & 0x3f) << 8
                | (sgprs.div_ceil(16).saturating_sub(1) & 0xf) << 24,
            lds_alloc: ((lds_bytes.div_ceil(512) * 2) & 0x1ff) << 12,
        }
    }
}

/// MODE as the dispatch loads it from COMPUTE_PGM_RSRC1 (FLOAT_MODE bits 19:12 to MODE 7:0, DX10_CLAMP bit
/// 21, DEBUG_MODE 22, IEEE_MODE 23, FP16_OVFL 26) and RSRC2 (the exception enables, bits 30:24, to MODE
/// 18:12).
pub fn mode_at_dispatch(kd: &KernelDescriptor) -> u32 {
    let (r1, r2) = (kd.compute_pgm_rsrc1, kd.compute_pgm_rsrc2);
    let bit = |v: u32, from: u32, to: u32| (v >> from & 1) << to;
    (r1 >> 12 & 0xff) | bit(r1, 21, 8) | bit(r1, 23, 9) | bit(r1, 22, 11) | (r2 >> 24 & 0x7f) << 12 | bit(r1, 26, 23)
}

/// Where a wave runs, as HW_ID and XCC_ID tell it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Place {
    pub xcd: u32,
    /// Shader engine within the XCD.
    pub se: u32,
    /// Compute unit within its shader engine.
    pub cu: u32,
    pub simd: u32,
    /// Wave slot on the SIMD.
    pub slot: u32,
}

/// HW_ID of a wave at `p`: WAVE_ID 3:0, SIMD_ID 5:4, CU_ID 11:8, SH_ID 12 (0), SE_ID 15:13 (gfx90a) or 14:13
/// (gfx942); the rest 0.
pub fn hw_id(target: Target, p: Place) -> u32 {
    let se_bits = if target.is_gfx940() { 2 } else { 3 };
    (p.slot & 0xf) | (p.simd & 3) << 4 | (p.cu & 0xf) << 8 | (p.se & ((1 << se_bits) - 1)) << 13
}

/// The machine layout placement counts with: XCDs, shader engines per XCD, CUs per XCD, SIMDs per CU, wave
/// slots per SIMD.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    pub xcds: u32,
    pub ses_per_xcd: u32,
    pub cus_per_xcd: u32,
    pub simds_per_cu: u32,
    pub slots_per_simd: u32,
}

impl Layout {
    /// The layout of `device`: its topology's XCDs, SEs and CUs, its SIMDs and wave slots.
    pub fn of(device: &crate::device::DevicePreset) -> Layout {
        let t = &device.topology;
        Layout {
            xcds: t.xcds,
            ses_per_xcd: t.ses_per_xcd,
            cus_per_xcd: t.cus_per_xcd,
            simds_per_cu: device.simds_per_cu,
            slots_per_simd: device.max_waves_per_simd,
        }
    }

    /// CUs of shader engine `se` of an XCD.
    fn cus_of_se(&self, se: u32) -> u32 {
        self.cus_per_xcd / self.ses_per_xcd + u32::from(se < self.cus_per_xcd % self.ses_per_xcd)
    }
}

/// The fixed placement of a functional dispatch: workgroup `linear` on XCD `linear mod XCDs`; the `j`-th
/// workgroup of an XCD on SE `j mod SEs` and, there, CU `(j / SEs) mod CUs of the SE`; wave `wave` of the
/// workgroup on SIMD `wave mod SIMDs` in slot `wave / SIMDs` (modulo the slots).
pub fn placement(layout: &Layout, linear: u64, wave: u32) -> Place {
    let xcd = (linear % layout.xcds as u64) as u32;
    let j = linear / layout.xcds as u64;
    let se = (j % layout.ses_per_xcd as u64) as u32;
    let cu = ((j / layout.ses_per_xcd as u64) % layout.cus_of_se(se) as u64) as u32;
    Place {
        xcd,
        se,
        cu,
        simd: wave % layout.simds_per_cu,
        slot: (wave / layout.simds_per_cu) % layout.slots_per_simd,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hwreg_operands_decode_like_llvms_examples() {
        // AMDGPU syntax docs: hwreg(1, 2, 4) is 0x1881
        assert_eq!(
            Field::decode(0x1881),
            Field {
                id: 1,
                offset: 2,
                size: 4
            }
        );
        assert_eq!(Field::decode(0x1881).mask(), 0b1111 << 2);
        assert_eq!(Field::decode(0xf804).mask(), u32::MAX);
    }

    #[test]
    fn mode_writes_keep_the_modelled_fields_and_name_the_first_refused_one() {
        // writing the value a field holds is always taken
        assert_eq!(mode_write(MODE_DEFAULT, MODE_DEFAULT, u32::MAX), Ok(MODE_DEFAULT));
        // CSP may change
        assert_eq!(mode_write(MODE_DEFAULT, 5 << 29, 7 << 29), Ok(MODE_DEFAULT | 5 << 29));
        // round toward zero for f32: FP_ROUND.32 = 3
        let (fd, v) = mode_write(MODE_DEFAULT, 3, 3).unwrap_err();
        assert_eq!((fd.name, v), ("FP_ROUND.32", 3));
        // flush f32 denormals: FP_DENORM.32 = 0
        let (fd, v) = mode_write(MODE_DEFAULT, 0, 3 << 4).unwrap_err();
        assert_eq!((fd.name, v), ("FP_DENORM.32", 0));
    }

    #[test]
    fn hw_id_places_se_in_three_bits_on_gfx90a_and_two_on_gfx942() {
        let p = Place {
            xcd: 5,
            se: 3,
            cu: 9,
            simd: 2,
            slot: 7,
        };
        assert_eq!(hw_id(Target::Gfx90a, p), 7 | 2 << 4 | 9 << 8 | 3 << 13);
        assert_eq!(hw_id(Target::Gfx90a, Place { se: 7, ..p }) >> 13, 7);
        assert_eq!(hw_id(Target::Gfx942, Place { se: 7, ..p }) >> 13, 3);
    }

    #[test]
    fn the_fixed_placement_deals_workgroups_over_xcds_then_engines_then_cus() {
        // MI300X: 8 XCDs of 38 CUs on 4 SEs (SEs 0 and 1 have 10 CUs, 2 and 3 have 9)
        let l = Layout {
            xcds: 8,
            ses_per_xcd: 4,
            cus_per_xcd: 38,
            simds_per_cu: 4,
            slots_per_simd: 8,
        };
        assert_eq!(placement(&l, 0, 0), Place::default());
        assert_eq!(
            placement(&l, 9, 5),
            Place {
                xcd: 1,
                se: 1,
                cu: 0,
                simd: 1,
                slot: 1
            }
        );
        // the 40th workgroup of XCD 0 is on SE 3's 10th CU slot, which wraps to CU 0 (SE 3 has 9)
        assert_eq!(
            placement(&l, 8 * (4 * 9 + 3), 0),
            Place {
                xcd: 0,
                se: 3,
                cu: 0,
                simd: 0,
                slot: 0
            }
        );
        assert_eq!(
            placement(&l, 8 * (4 * 9), 0),
            Place {
                xcd: 0,
                se: 0,
                cu: 9,
                simd: 0,
                slot: 0
            }
        );
    }
}

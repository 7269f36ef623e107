//! The 64-byte AMDHSA kernel descriptor (code object v3+) and its `COMPUTE_PGM_RSRC1/2/3`,
//! kernel-code-properties and kernarg-preload fields.
//!
//! Layout (little endian; LLVM `AMDHSAKernelDescriptor.h`, AMDGPUUsage "Kernel Descriptor"):
//!
//! | bytes | field |
//! |---|---|
//! | 0..4 | group_segment_fixed_size |
//! | 4..8 | private_segment_fixed_size |
//! | 8..12 | kernarg_size |
//! | 16..24 | kernel_code_entry_byte_offset (i64, from the descriptor's own address) |
//! | 44..48 | compute_pgm_rsrc3 (gfx90a+, gfx10+) |
//! | 48..52 | compute_pgm_rsrc1 |
//! | 52..56 | compute_pgm_rsrc2 |
//! | 56..58 | kernel_code_properties |
//! | 58..60 | kernarg_preload |

use std::fmt;

use serde::Serialize;

use super::target::GfxFamily;

/// Size of a kernel descriptor in bytes.
pub const KERNEL_DESCRIPTOR_SIZE: usize = 64;

fn bits(value: u32, shift: u32, width: u32) -> u32 {
    (value >> shift) & ((1u32 << width) - 1)
}

fn bit(value: u32, shift: u32) -> bool {
    (value >> shift) & 1 != 0
}

/// Floating-point rounding mode (`FLOAT_ROUND_MODE_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FloatRoundMode {
    /// Round to nearest even (0).
    NearEven,
    /// Round toward +infinity (1).
    PlusInfinity,
    /// Round toward -infinity (2).
    MinusInfinity,
    /// Round toward zero (3).
    Zero,
}

impl FloatRoundMode {
    fn from_bits(b: u32) -> Self {
        match b & 3 {
            0 => FloatRoundMode::NearEven,
            1 => FloatRoundMode::PlusInfinity,
            2 => FloatRoundMode::MinusInfinity,
            _ => FloatRoundMode::Zero,
        }
    }
    /// The 2-bit hardware value.
    pub fn bits(self) -> u8 {
        self as u8
    }
}

impl fmt::Display for FloatRoundMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FloatRoundMode::NearEven => "near_even",
            FloatRoundMode::PlusInfinity => "plus_infinity",
            FloatRoundMode::MinusInfinity => "minus_infinity",
            FloatRoundMode::Zero => "zero",
        })
    }
}

/// Floating-point denormal mode (`FLOAT_DENORM_MODE_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FloatDenormMode {
    /// Flush denormal sources and results (0).
    FlushSrcDst,
    /// Flush denormal results only (1).
    FlushDst,
    /// Flush denormal sources only (2).
    FlushSrc,
    /// Keep denormals (3).
    FlushNone,
}

impl FloatDenormMode {
    fn from_bits(b: u32) -> Self {
        match b & 3 {
            0 => FloatDenormMode::FlushSrcDst,
            1 => FloatDenormMode::FlushDst,
            2 => FloatDenormMode::FlushSrc,
            _ => FloatDenormMode::FlushNone,
        }
    }
    /// The 2-bit hardware value.
    pub fn bits(self) -> u8 {
        self as u8
    }
}

impl fmt::Display for FloatDenormMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FloatDenormMode::FlushSrcDst => "flush_src_dst",
            FloatDenormMode::FlushDst => "flush_dst",
            FloatDenormMode::FlushSrc => "flush_src",
            FloatDenormMode::FlushNone => "flush_none",
        })
    }
}

/// `COMPUTE_PGM_RSRC1`, decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PgmRsrc1 {
    /// Bits 5:0: VGPR blocks minus one (granule depends on target and wave size; see
    /// [`KernelDescriptor::vgpr_alloc_count`]).
    pub granulated_workitem_vgpr_count: u8,
    /// Bits 9:6: SGPR blocks minus one, GFX6–GFX9 (granule 8); reserved on GFX10+.
    pub granulated_wavefront_sgpr_count: u8,
    /// Bits 11:10: wave priority.
    pub priority: u8,
    /// Bits 13:12.
    pub float_round_mode_32: FloatRoundMode,
    /// Bits 15:14.
    pub float_round_mode_16_64: FloatRoundMode,
    /// Bits 17:16.
    pub float_denorm_mode_32: FloatDenormMode,
    /// Bits 19:18.
    pub float_denorm_mode_16_64: FloatDenormMode,
    /// Bit 20: `PRIV` (privileged).
    pub privileged: bool,
    /// Bit 21: `ENABLE_DX10_CLAMP` (GFX6–GFX11); `ENABLE_WG_RR_EN` on GFX12.
    pub enable_dx10_clamp: bool,
    /// Bit 22.
    pub debug_mode: bool,
    /// Bit 23: `ENABLE_IEEE_MODE` (GFX6–GFX11); `DISABLE_PERF` on GFX12.
    pub enable_ieee_mode: bool,
    /// Bit 24.
    pub bulky: bool,
    /// Bit 25.
    pub cdbg_user: bool,
    /// Bit 26: `FP16_OVFL` (GFX9+).
    pub fp16_ovfl: bool,
    /// Bit 29: `WGP_MODE` (GFX10+).
    pub wgp_mode: bool,
    /// Bit 30: `MEM_ORDERED` (GFX10+).
    pub mem_ordered: bool,
    /// Bit 31: `FWD_PROGRESS` (GFX10+).
    pub fwd_progress: bool,
}

impl PgmRsrc1 {
    /// Decodes the register value.
    pub fn decode(v: u32) -> Self {
        PgmRsrc1 {
            granulated_workitem_vgpr_count: bits(v, 0, 6) as u8,
            granulated_wavefront_sgpr_count: bits(v, 6, 4) as u8,
            priority: bits(v, 10, 2) as u8,
            float_round_mode_32: FloatRoundMode::from_bits(bits(v, 12, 2)),
            float_round_mode_16_64: FloatRoundMode::from_bits(bits(v, 14, 2)),
            float_denorm_mode_32: FloatDenormMode::from_bits(bits(v, 16, 2)),
            float_denorm_mode_16_64: FloatDenormMode::from_bits(bits(v, 18, 2)),
            privileged: bit(v, 20),
            enable_dx10_clamp: bit(v, 21),
            debug_mode: bit(v, 22),
            enable_ieee_mode: bit(v, 23),
            bulky: bit(v, 24),
            cdbg_user: bit(v, 25),
            fp16_ovfl: bit(v, 26),
            wgp_mode: bit(v, 29),
            mem_ordered: bit(v, 30),
            fwd_progress: bit(v, 31),
        }
    }
}

/// `COMPUTE_PGM_RSRC2`, decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PgmRsrc2 {
    /// Bit 0: `ENABLE_PRIVATE_SEGMENT` (system SGPR private segment wavefront offset).
    pub enable_private_segment: bool,
    /// Bits 5:1: number of user SGPRs the hardware loads.
    pub user_sgpr_count: u8,
    /// Bit 6: `ENABLE_TRAP_HANDLER` (GFX6–GFX11).
    pub enable_trap_handler: bool,
    /// Bit 7: system SGPR workgroup id X.
    pub enable_sgpr_workgroup_id_x: bool,
    /// Bit 8: system SGPR workgroup id Y.
    pub enable_sgpr_workgroup_id_y: bool,
    /// Bit 9: system SGPR workgroup id Z.
    pub enable_sgpr_workgroup_id_z: bool,
    /// Bit 10: system SGPR workgroup info.
    pub enable_sgpr_workgroup_info: bool,
    /// Bits 12:11: work-item id VGPRs: 0 = X, 1 = X,Y, 2 = X,Y,Z, 3 = undefined.
    pub enable_vgpr_workitem_id: u8,
    /// Bit 13.
    pub enable_exception_address_watch: bool,
    /// Bit 14.
    pub enable_exception_memory: bool,
    /// Bits 23:15: `GRANULATED_LDS_SIZE` (must be 0 in a code object; CP sets it).
    pub granulated_lds_size: u16,
    /// Bit 24: IEEE 754 invalid operation.
    pub enable_exception_fp_ieee_invalid_op: bool,
    /// Bit 25: denormal source.
    pub enable_exception_fp_denorm_src: bool,
    /// Bit 26: IEEE 754 division by zero.
    pub enable_exception_fp_ieee_div_zero: bool,
    /// Bit 27: IEEE 754 overflow.
    pub enable_exception_fp_ieee_overflow: bool,
    /// Bit 28: IEEE 754 underflow.
    pub enable_exception_fp_ieee_underflow: bool,
    /// Bit 29: IEEE 754 inexact.
    pub enable_exception_fp_ieee_inexact: bool,
    /// Bit 30: integer division by zero.
    pub enable_exception_int_div_zero: bool,
}

impl PgmRsrc2 {
    /// Decodes the register value.
    pub fn decode(v: u32) -> Self {
        PgmRsrc2 {
            enable_private_segment: bit(v, 0),
            user_sgpr_count: bits(v, 1, 5) as u8,
            enable_trap_handler: bit(v, 6),
            enable_sgpr_workgroup_id_x: bit(v, 7),
            enable_sgpr_workgroup_id_y: bit(v, 8),
            enable_sgpr_workgroup_id_z: bit(v, 9),
            enable_sgpr_workgroup_info: bit(v, 10),
            enable_vgpr_workitem_id: bits(v, 11, 2) as u8,
            enable_exception_address_watch: bit(v, 13),
            enable_exception_memory: bit(v, 14),
            granulated_lds_size: bits(v, 15, 9) as u16,
            enable_exception_fp_ieee_invalid_op: bit(v, 24),
            enable_exception_fp_denorm_src: bit(v, 25),
            enable_exception_fp_ieee_div_zero: bit(v, 26),
            enable_exception_fp_ieee_overflow: bit(v, 27),
            enable_exception_fp_ieee_underflow: bit(v, 28),
            enable_exception_fp_ieee_inexact: bit(v, 29),
            enable_exception_int_div_zero: bit(v, 30),
        }
    }
}

/// `COMPUTE_PGM_RSRC3`, decoded according to the target generation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "layout", rename_all = "snake_case")]
pub enum PgmRsrc3 {
    /// GFX6–GFX9 (except gfx90a/gfx94x), or unknown processor: no RSRC3; the raw value (should be 0).
    None {
        /// Raw register value.
        raw: u32,
    },
    /// gfx90a, gfx940/941/942.
    Gfx90a {
        /// Bits 5:0: first AccVGPR index / 4 − 1; see [`KernelDescriptor::accum_offset`].
        accum_offset: u8,
        /// Bit 16: `TG_SPLIT`.
        tg_split: bool,
    },
    /// GFX10+.
    Gfx10Plus {
        /// Bits 3:0: `SHARED_VGPR_COUNT` (GFX10–GFX11).
        shared_vgpr_count: u8,
        /// `INST_PREF_SIZE`: bits 9:4 on GFX11, 11:4 on GFX12, 0 on GFX10.
        inst_pref_size: u8,
        /// Bit 10 (GFX11).
        trap_on_start: bool,
        /// Bit 11 (GFX11).
        trap_on_end: bool,
        /// Bit 13 (GFX12): `GLG_EN`.
        glg_en: bool,
        /// Bit 31 (GFX11+).
        image_op: bool,
    },
}

impl PgmRsrc3 {
    /// Decodes the register value for `family` (`None`: unknown processor, kept raw).
    pub fn decode(v: u32, family: Option<GfxFamily>) -> Self {
        match family {
            Some(GfxFamily::Gfx90a) => PgmRsrc3::Gfx90a {
                accum_offset: bits(v, 0, 6) as u8,
                tg_split: bit(v, 16),
            },
            Some(f) if f.is_gfx10_plus() => PgmRsrc3::Gfx10Plus {
                shared_vgpr_count: if f == GfxFamily::Gfx12 { 0 } else { bits(v, 0, 4) as u8 },
                inst_pref_size: match f {
                    GfxFamily::Gfx11 => bits(v, 4, 6) as u8,
                    GfxFamily::Gfx12 => bits(v, 4, 8) as u8,
                    _ => 0,
                },
                trap_on_start: f == GfxFamily::Gfx11 && bit(v, 10),
                trap_on_end: f == GfxFamily::Gfx11 && bit(v, 11),
                glg_en: f == GfxFamily::Gfx12 && bit(v, 13),
                image_op: f >= GfxFamily::Gfx11 && bit(v, 31),
            },
            _ => PgmRsrc3::None { raw: v },
        }
    }
}

/// The 16-bit kernel code properties (user SGPR enables and flags).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct KernelCodeProperties {
    /// Bit 0: 4 user SGPRs, private segment buffer descriptor.
    pub enable_sgpr_private_segment_buffer: bool,
    /// Bit 1: 2 user SGPRs, dispatch packet pointer.
    pub enable_sgpr_dispatch_ptr: bool,
    /// Bit 2: 2 user SGPRs, queue pointer.
    pub enable_sgpr_queue_ptr: bool,
    /// Bit 3: 2 user SGPRs, kernarg segment pointer.
    pub enable_sgpr_kernarg_segment_ptr: bool,
    /// Bit 4: 2 user SGPRs, dispatch id.
    pub enable_sgpr_dispatch_id: bool,
    /// Bit 5: 2 user SGPRs, flat scratch init.
    pub enable_sgpr_flat_scratch_init: bool,
    /// Bit 6: 1 user SGPR, private segment size.
    pub enable_sgpr_private_segment_size: bool,
    /// Bit 10: wave32 (GFX10+).
    pub enable_wavefront_size32: bool,
    /// Bit 11: the kernel uses a dynamically sized stack.
    pub uses_dynamic_stack: bool,
}

impl KernelCodeProperties {
    /// Decodes the 16-bit field.
    pub fn decode(v: u16) -> Self {
        let v = u32::from(v);
        KernelCodeProperties {
            enable_sgpr_private_segment_buffer: bit(v, 0),
            enable_sgpr_dispatch_ptr: bit(v, 1),
            enable_sgpr_queue_ptr: bit(v, 2),
            enable_sgpr_kernarg_segment_ptr: bit(v, 3),
            enable_sgpr_dispatch_id: bit(v, 4),
            enable_sgpr_flat_scratch_init: bit(v, 5),
            enable_sgpr_private_segment_size: bit(v, 6),
            enable_wavefront_size32: bit(v, 10),
            uses_dynamic_stack: bit(v, 11),
        }
    }
}

/// The kernarg preload specification (code object v5+, gfx90a/gfx94x).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct KernargPreload {
    /// Bits 6:0: number of dwords of kernarg preloaded into user SGPRs.
    pub length: u8,
    /// Bits 15:7: dword offset in the kernarg segment of the first preloaded dword.
    pub offset: u16,
}

/// One user or system SGPR (group) the hardware/CP initialises, in load order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SgprInput {
    /// Name as in the `.amdhsa_user_sgpr_*` / `.amdhsa_system_sgpr_*` directives, without prefix.
    pub name: &'static str,
    /// Number of SGPRs it occupies.
    pub count: u8,
}

/// A parsed kernel descriptor: raw fields and decoded registers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KernelDescriptor {
    /// Fixed LDS bytes.
    pub group_segment_fixed_size: u32,
    /// Fixed scratch bytes per work-item.
    pub private_segment_fixed_size: u32,
    /// Kernarg segment bytes.
    pub kernarg_size: u32,
    /// Byte offset of the kernel's first instruction from the descriptor's address (may be negative).
    pub kernel_code_entry_byte_offset: i64,
    /// Raw `COMPUTE_PGM_RSRC1`.
    pub compute_pgm_rsrc1: u32,
    /// Raw `COMPUTE_PGM_RSRC2`.
    pub compute_pgm_rsrc2: u32,
    /// Raw `COMPUTE_PGM_RSRC3`.
    pub compute_pgm_rsrc3: u32,
    /// Raw kernel code properties.
    pub kernel_code_properties: u16,
    /// Raw kernarg preload field.
    pub kernarg_preload: u16,
    /// Decoded `COMPUTE_PGM_RSRC1`.
    pub rsrc1: PgmRsrc1,
    /// Decoded `COMPUTE_PGM_RSRC2`.
    pub rsrc2: PgmRsrc2,
    /// Decoded `COMPUTE_PGM_RSRC3`.
    pub rsrc3: PgmRsrc3,
    /// Decoded kernel code properties.
    pub properties: KernelCodeProperties,
    /// Decoded kernarg preload spec.
    pub preload: KernargPreload,
    /// The target generation used to decode (and to compute register counts); `None` if unknown.
    pub family: Option<GfxFamily>,
    /// True if any reserved byte (12..16, 24..44, 60..64) is non-zero.
    pub reserved_bytes_nonzero: bool,
}

fn le_u32(b: &[u8; KERNEL_DESCRIPTOR_SIZE], at: usize) -> u32 {
    let mut w = [0u8; 4];
    for (i, x) in w.iter_mut().enumerate() {
        *x = b.get(at + i).copied().unwrap_or(0);
    }
    u32::from_le_bytes(w)
}

impl KernelDescriptor {
    /// Parses a descriptor. `bytes` must hold at least 64 bytes (only the first 64 are read); returns `None`
    /// if it is shorter.
    pub fn parse(bytes: &[u8], family: Option<GfxFamily>) -> Option<KernelDescriptor> {
        let b: &[u8; KERNEL_DESCRIPTOR_SIZE] = bytes.get(..KERNEL_DESCRIPTOR_SIZE)?.try_into().ok()?;
        let rsrc1 = le_u32(b, 48);
        let rsrc2 = le_u32(b, 52);
        let rsrc3 = le_u32(b, 44);
        let props = le_u32(b, 56);
        let kernel_code_properties = (props & 0xffff) as u16;
        let kernarg_preload = (props >> 16) as u16;
        let entry = u64::from(le_u32(b, 16)) | (u64::from(le_u32(b, 20)) << 32);
        let reserved = b
            .iter()
            .enumerate()
            .any(|(i, &x)| x != 0 && ((12..16).contains(&i) || (24..44).contains(&i) || (60..64).contains(&i)));
        Some(KernelDescriptor {
            group_segment_fixed_size: le_u32(b, 0),
            private_segment_fixed_size: le_u32(b, 4),
            kernarg_size: le_u32(b, 8),
            kernel_code_entry_byte_offset: entry as i64,
            compute_pgm_rsrc1: rsrc1,
            compute_pgm_rsrc2: rsrc2,
            compute_pgm_rsrc3: rsrc3,
            kernel_code_properties,
            kernarg_preload,
            rsrc1: PgmRsrc1::decode(rsrc1),
            rsrc2: PgmRsrc2::decode(rsrc2),
            rsrc3: PgmRsrc3::decode(rsrc3, family),
            properties: KernelCodeProperties::decode(kernel_code_properties),
            preload: KernargPreload {
                length: (kernarg_preload & 0x7f) as u8,
                offset: kernarg_preload >> 7,
            },
            family,
            reserved_bytes_nonzero: reserved,
        })
    }

    /// Wavefront size: 32 if `ENABLE_WAVEFRONT_SIZE32` is set, else 64.
    pub fn wavefront_size(&self) -> u32 {
        if self.properties.enable_wavefront_size32 {
            32
        } else {
            64
        }
    }

    /// The VGPR encoding granule: 8 on gfx90a/gfx94x (unified VGPR+AGPR count) and in wave32, else 4.
    pub fn vgpr_granule(&self) -> u32 {
        if self.family == Some(GfxFamily::Gfx90a) || self.properties.enable_wavefront_size32 {
            8
        } else {
            4
        }
    }

    /// VGPRs allocated per work-item: `(GRANULATED_WORKITEM_VGPR_COUNT + 1) * granule`. On gfx90a/gfx94x this
    /// counts ArchVGPRs and AccVGPRs together. Equals LLVM's `.amdhsa_next_free_vgpr` after rounding.
    pub fn vgpr_alloc_count(&self) -> u32 {
        (u32::from(self.rsrc1.granulated_workitem_vgpr_count) + 1) * self.vgpr_granule()
    }

    /// SGPRs allocated per wave on GFX6–GFX9: `(GRANULATED_WAVEFRONT_SGPR_COUNT + 1) * 8` (includes VCC,
    /// FLAT_SCRATCH and XNACK_MASK when used). `None` on GFX10+, where the field is reserved and the hardware
    /// allocates a fixed number, or for an unknown processor.
    pub fn sgpr_alloc_count(&self) -> Option<u32> {
        match self.family {
            Some(f) if !f.is_gfx10_plus() => Some((u32::from(self.rsrc1.granulated_wavefront_sgpr_count) + 1) * 8),
            _ => None,
        }
    }

    /// gfx90a/gfx94x: index of the first AccVGPR, `(ACCUM_OFFSET + 1) * 4` (= ArchVGPRs rounded up to 4).
    pub fn accum_offset(&self) -> Option<u32> {
        match self.rsrc3 {
            PgmRsrc3::Gfx90a { accum_offset, .. } => Some((u32::from(accum_offset) + 1) * 4),
            _ => None,
        }
    }

    /// gfx90a/gfx94x: room left for AccVGPRs in the allocation, `vgpr_alloc_count - accum_offset` (0 if
    /// negative). An upper bound: the allocation is rounded up to 8, so this can exceed the AccVGPRs used
    /// (metadata `.agpr_count`).
    pub fn agpr_alloc_count(&self) -> Option<u32> {
        self.accum_offset().map(|a| self.vgpr_alloc_count().saturating_sub(a))
    }

    /// Number of work-item id VGPRs the hardware initialises (1, 2 or 3; `None` for the undefined setting 3).
    /// On targets with packed work-item ids (gfx90a+, GFX11+) all of them share v0.
    pub fn workitem_id_vgprs(&self) -> Option<u32> {
        match self.rsrc2.enable_vgpr_workitem_id {
            0 => Some(1),
            1 => Some(2),
            2 => Some(3),
            _ => None,
        }
    }

    /// The enabled user SGPRs in load order, including preloaded kernarg dwords. Their sum is normally equal
    /// to `rsrc2.user_sgpr_count`.
    pub fn user_sgprs(&self) -> Vec<SgprInput> {
        let p = &self.properties;
        let mut v = Vec::new();
        let mut add = |on: bool, name, count| {
            if on {
                v.push(SgprInput { name, count });
            }
        };
        add(p.enable_sgpr_private_segment_buffer, "private_segment_buffer", 4);
        add(p.enable_sgpr_dispatch_ptr, "dispatch_ptr", 2);
        add(p.enable_sgpr_queue_ptr, "queue_ptr", 2);
        add(p.enable_sgpr_kernarg_segment_ptr, "kernarg_segment_ptr", 2);
        add(p.enable_sgpr_dispatch_id, "dispatch_id", 2);
        add(p.enable_sgpr_flat_scratch_init, "flat_scratch_init", 2);
        add(p.enable_sgpr_private_segment_size, "private_segment_size", 1);
        add(self.preload.length > 0, "kernarg_preload", self.preload.length);
        v
    }

    /// The enabled system SGPRs (after the user SGPRs) in load order.
    pub fn system_sgprs(&self) -> Vec<SgprInput> {
        let r = &self.rsrc2;
        let mut v = Vec::new();
        let mut add = |on: bool, name| {
            if on {
                v.push(SgprInput { name, count: 1 });
            }
        };
        add(r.enable_sgpr_workgroup_id_x, "workgroup_id_x");
        add(r.enable_sgpr_workgroup_id_y, "workgroup_id_y");
        add(r.enable_sgpr_workgroup_id_z, "workgroup_id_z");
        add(r.enable_sgpr_workgroup_info, "workgroup_info");
        add(r.enable_private_segment, "private_segment_wavefront_offset");
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_input_is_rejected_not_panicking() {
        assert!(KernelDescriptor::parse(&[0u8; 63], Some(GfxFamily::Gfx9)).is_none());
    }

    #[test]
    fn fields_land_at_documented_offsets() {
        let mut b = [0u8; 64];
        b[0..4].copy_from_slice(&0x100u32.to_le_bytes());
        b[4..8].copy_from_slice(&0x20u32.to_le_bytes());
        b[8..12].copy_from_slice(&28u32.to_le_bytes());
        b[16..24].copy_from_slice(&(-0x40i64).to_le_bytes());
        b[44..48].copy_from_slice(&((1u32 << 16) | 1).to_le_bytes());
        b[48..52].copy_from_slice(&((3u32 << 16) | (2 << 6) | 1).to_le_bytes());
        b[52..56].copy_from_slice(&((2u32 << 11) | (1 << 7) | (6 << 1)).to_le_bytes());
        b[56..58].copy_from_slice(&0b1001u16.to_le_bytes());
        b[58..60].copy_from_slice(&((3u16 << 7) | 2).to_le_bytes());
        let kd = KernelDescriptor::parse(&b, Some(GfxFamily::Gfx90a)).unwrap();
        assert_eq!(kd.group_segment_fixed_size, 0x100);
        assert_eq!(kd.private_segment_fixed_size, 0x20);
        assert_eq!(kd.kernarg_size, 28);
        assert_eq!(kd.kernel_code_entry_byte_offset, -0x40);
        assert_eq!(
            kd.rsrc3,
            PgmRsrc3::Gfx90a {
                accum_offset: 1,
                tg_split: true
            }
        );
        assert_eq!(kd.accum_offset(), Some(8));
        assert_eq!(kd.vgpr_alloc_count(), 16);
        assert_eq!(kd.sgpr_alloc_count(), Some(24));
        assert_eq!(kd.rsrc1.float_denorm_mode_32, FloatDenormMode::FlushNone);
        assert_eq!(kd.rsrc2.user_sgpr_count, 6);
        assert_eq!(kd.workitem_id_vgprs(), Some(3));
        assert_eq!(kd.preload, KernargPreload { length: 2, offset: 3 });
        let total: u32 = kd.user_sgprs().iter().map(|s| u32::from(s.count)).sum();
        assert_eq!(total, 4 + 2 + 2);
        assert!(!kd.reserved_bytes_nonzero);
    }
}

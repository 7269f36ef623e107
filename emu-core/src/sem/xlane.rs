//! Cross-lane operations: reading a lane into an SGPR (v_readlane, v_readfirstlane), writing one lane
//! (v_writelane), and the DS lane permutes (ds_swizzle, ds_bpermute, ds_permute) that move data between lanes
//! without touching LDS.

use isa_amdgpu::encoding::Field;
use isa_amdgpu::{Inst, Opcode};

use super::backend::*;
use super::operand::*;
use super::{form, unsupported, ExecError, Flow};

/// Executes a cross-lane instruction.
pub(super) fn execute<B: Backend>(b: &mut B, inst: &Inst) -> Result<Flow<B::S>, ExecError> {
    use Opcode as O;
    match inst.info.opcode {
        O::VReadfirstlaneB32 => {
            let src = inst.field(Field::Src0);
            let v = if src >= 256 {
                b.v_get(src - 256)
            } else {
                vec_src(b, inst, Field::Src0)?
            };
            let exec = b.exec();
            let r = b.v_first_lane(v, exec);
            b.s_set(inst.field(Field::Vdst), r);
            Ok(Flow::Next)
        }
        O::VWritelaneB32 => {
            // lane (S1 & 63) of VDST = the scalar S0, whatever EXEC says
            no_modifiers(inst)?;
            let v = scalar_src(b, inst, inst.field(Field::Src0))?;
            let lane = scalar_src(b, inst, inst.field(Field::Src1))?;
            let (k63, k32, k31, one, zero) = (b.s_const(63), b.s_const(32), b.s_const(31), b.s_const(1), b.s_const(0));
            let lane = b.s_op(SOp::And, lane, k63);
            let low = b.s_op(SOp::LtU, lane, k32);
            let bit = b.s_op(SOp::And, lane, k31);
            let bit = b.s_op(SOp::Shl, one, bit);
            let (lo, hi) = (b.s_select(low, bit, zero), b.s_select(low, zero, bit));
            let m = b.mask_from(lo, hi);
            let v = b.v_splat(v);
            b.v_set(vdst(inst), v, m);
            Ok(Flow::Next)
        }
        O::VReadlaneB32 => {
            no_modifiers(inst)?;
            let v = vec_src(b, inst, Field::Src0)?;
            let lane = scalar_src(b, inst, inst.field(Field::Src1))?;
            let r = b.v_lane_read(v, lane);
            b.s_set(inst.field(Field::Vdst), r);
            Ok(Flow::Next)
        }
        O::DsBpermuteB32 | O::DsPermuteB32 | O::DsSwizzleB32 => {
            if inst.field(Field::Gds) == 1 || inst.field(Field::Acc) == 1 {
                return Err(form(inst, "GDS or AGPR data"));
            }
            let m = b.exec();
            let offset = inst.field(Field::Offset0) | inst.field(Field::Offset1) << 8;
            let (data, index) = match inst.info.opcode {
                O::DsSwizzleB32 => {
                    let data = b.v_get(inst.field(Field::Addr));
                    let sources: [u32; 64] = std::array::from_fn(|i| swizzle_source(offset, i as u32));
                    (data, b.v_const(&sources))
                }
                _ => {
                    // the lane = (addr + offset) / 4 (mod 64): bpermute reads from it, permute writes to it
                    let addr = b.v_get(inst.field(Field::Addr));
                    let off = b.s_const(offset);
                    let off = b.v_splat(off);
                    let byte = b.v_op(VOp::AddU32, addr, off);
                    let two = b.s_const(2);
                    let two = b.v_splat(two);
                    (b.v_get(inst.field(Field::Data0)), b.v_op(VOp::Lshr, byte, two))
                }
            };
            let r = if inst.info.opcode == O::DsPermuteB32 {
                b.v_permute_forward(data, index, m)
            } else {
                b.v_permute(data, index, m)
            };
            b.v_set(vdst(inst), r, m);
            Ok(Flow::Next)
        }
        _ => Err(unsupported(inst)),
    }
}

/// The lane a ds_swizzle with offset `pattern` reads for lane `i`, as the ISA guide's DS_SWIZZLE_B32 pseudocode
/// says: FFT (0xe000 and up: the 5-bit lane number reversed, shifted right by the number of mask bits, the mask
/// bits of the lane kept), rotate (0xc000 and up: by offset[9:5] lanes, right when offset[10] is set, the mask
/// bits of the lane kept), QUAD_PERM (offset[15]: lanes within a quad), or BITMASK (((lane & and) | or) ^ xor);
/// all within groups of 32 lanes.
fn swizzle_source(pattern: u32, i: u32) -> u32 {
    let (mask, group) = (pattern & 0x1f, i & 0x20);
    let within = if pattern >= 0xe000 {
        ((i & 0x1f).reverse_bits() >> 27 >> mask.count_ones()) | (i & mask)
    } else if pattern >= 0xc000 {
        let rotate = (pattern >> 5) & 0x1f;
        let rotated = if pattern >> 10 & 1 == 1 {
            i.wrapping_sub(rotate)
        } else {
            i.wrapping_add(rotate)
        };
        (i & mask) | (rotated & !mask)
    } else if pattern & 0x8000 != 0 {
        (i & !3) | (pattern >> (2 * (i & 3))) & 3
    } else {
        let (and, or, xor) = (pattern & 0x1f, (pattern >> 5) & 0x1f, (pattern >> 10) & 0x1f);
        ((i & and) | or) ^ xor
    };
    (within & 0x1f) | group
}

#[cfg(test)]
mod tests {
    use super::swizzle_source;

    /// The 32 lanes a pattern reads, as the ISA guide writes them: lane values 1..=0x20.
    fn read(pattern: u32) -> Vec<u32> {
        (0..32).map(|i| swizzle_source(pattern, i) + 1).collect()
    }

    #[test]
    fn swizzle_fft_and_rotate_modes_read_the_lanes_of_the_isa_guide_examples() {
        // DS_SWIZZLE_B32's examples, input {1, 2, ... 0x20}
        let fft0 = [
            1, 0x11, 9, 0x19, 5, 0x15, 0xd, 0x1d, 3, 0x13, 0xb, 0x1b, 7, 0x17, 0xf, 0x1f, 2, 0x12, 0xa, 0x1a, 6, 0x16,
            0xe, 0x1e, 4, 0x14, 0xc, 0x1c, 8, 0x18, 0x10, 0x20,
        ];
        assert_eq!(read(0xe000), fft0);
        let fft10 = [
            1, 9, 5, 0xd, 3, 0xb, 7, 0xf, 2, 0xa, 6, 0xe, 4, 0xc, 8, 0x10, 0x11, 0x19, 0x15, 0x1d, 0x13, 0x1b, 0x17,
            0x1f, 0x12, 0x1a, 0x16, 0x1e, 0x14, 0x1c, 0x18, 0x20,
        ];
        assert_eq!(read(0xe010), fft10);
        assert_eq!(read(0xe01f), (1..=32).collect::<Vec<u32>>());
        // rotate by 1 (offset[9:5] = 1), left and right (offset[10]), with mask 0 and 1
        let left: Vec<u32> = (2..=32).chain([1]).collect();
        assert_eq!(read(0xc000 | 1 << 5), left);
        let right: Vec<u32> = [32].into_iter().chain(1..=31).collect();
        assert_eq!(read(0xc000 | 1 << 10 | 1 << 5), right);
        let left1 = [
            1, 4, 3, 6, 5, 8, 7, 0xa, 9, 0xc, 0xb, 0xe, 0xd, 0x10, 0xf, 0x12, 0x11, 0x14, 0x13, 0x16, 0x15, 0x18, 0x17,
            0x1a, 0x19, 0x1c, 0x1b, 0x1e, 0x1d, 0x20, 0x1f, 2,
        ];
        assert_eq!(read(0xc000 | 1 << 5 | 1), left1);
        let right1 = [
            0x1f, 2, 1, 4, 3, 6, 5, 8, 7, 0xa, 9, 0xc, 0xb, 0xe, 0xd, 0x10, 0xf, 0x12, 0x11, 0x14, 0x13, 0x16, 0x15,
            0x18, 0x17, 0x1a, 0x19, 0x1c, 0x1b, 0x1e, 0x1d, 0x20,
        ];
        assert_eq!(read(0xc000 | 1 << 10 | 1 << 5 | 1), right1);
        // the second group of 32 lanes does the same among itself
        assert_eq!(swizzle_source(0xc000 | 1 << 5, 63), 32);
    }

    #[test]
    fn swizzle_quad_perm_and_bitmask_modes_follow_the_isa_guide() {
        // QUAD_PERM [3, 2, 1, 0]: each quad reversed
        assert_eq!(read(0x8000 | 0b00_01_10_11)[..8], [4, 3, 2, 1, 8, 7, 6, 5]);
        // BITMASK SWAPX1 (xor 1, and 0x1f) and BCASTX32 of lane 5 (or 5, and 0)
        assert_eq!(read(1 << 10 | 0x1f)[..4], [2, 1, 4, 3]);
        assert!(read(5 << 5).iter().all(|&l| l == 6));
    }
}

//! Tests of image resources, formats, texel access and sampling against a host memory.

use isa_amdgpu::table::AtomicOp;

use super::buffer::FormatAccess;
use super::format::{Format, Num};
use super::inst::ImageInst;
use super::resource::{Dim, Resource, SEL_0, SEL_1, SEL_W, SEL_X, SEL_Y, SEL_Z};
use super::sampler::{Border, Sample, Sampler, Wrap};

use super::*;

struct Host(Vec<u8>);
impl Texels for Host {
    type Error = String;
    fn read(&mut self, a: u64, buf: &mut [u8]) -> Result<(), String> {
        let a = a as usize;
        let s = self.0.get(a..a + buf.len()).ok_or(format!("read at {a}"))?;
        buf.copy_from_slice(s);
        Ok(())
    }
    fn write(&mut self, a: u64, data: &[u8]) -> Result<(), String> {
        let a = a as usize;
        self.0
            .get_mut(a..a + data.len())
            .ok_or(format!("write at {a}"))?
            .copy_from_slice(data);
        Ok(())
    }
}

fn rgba8(w: u32, h: u32) -> Resource {
    Resource {
        base: 0,
        dim: Dim::D2,
        format: Format::of(4, 8, Num::Unorm).unwrap(),
        width: w,
        height: h,
        depth: 1,
        pitch: w + 3,
        swizzle: [SEL_X, SEL_Y, SEL_Z, SEL_W],
        sw_mode: 0,
    }
}

#[test]
fn descriptors_round_trip() {
    let r = Resource {
        base: 0x7f12_3456_7800,
        ..rgba8(640, 480)
    };
    assert_eq!(Resource::decode(r.encode()), Ok(r));
    let s = Sampler {
        wrap: [Wrap::Mirror, Wrap::ClampBorder, Wrap::Repeat],
        unnormalized: true,
        linear: true,
        border: Border::OpaqueWhite,
    };
    assert_eq!(Sampler::decode(s.encode()), Ok(s));
    // the fields device code reads directly (the device library's image queries)
    let t = r.encode();
    assert_eq!((t[2] >> 14 & 0x3fff) + 1, 480);
    assert_eq!(s.encode()[0] & 0x8000, 0x8000);
    assert_eq!(s.encode()[2] & 0x10_0000, 0x10_0000);
}

/// ROCr's image manager lays out opaque images of a dGPU in tiled swizzle modes (`SW_4KB_S_X`, 22, for a
/// 2-D array); the engine addresses their texels in linear order with the descriptor's pitch, and keeps the
/// mode through a round trip.
#[test]
fn tiled_descriptors_are_addressed_in_linear_order() {
    let r = Resource {
        sw_mode: 22,
        dim: Dim::D2Array,
        depth: 3,
        ..rgba8(37, 23)
    };
    let t = r.encode();
    assert_eq!(t[3] >> 20 & 0x1f, 22);
    let back = Resource::decode(t).unwrap();
    assert_eq!(back, r);
    let linear = Resource { sw_mode: 0, ..r };
    for c in [[0, 0, 0], [36, 0, 0], [5, 22, 0], [36, 22, 2]] {
        assert_eq!(back.texel_address(c), linear.texel_address(c));
    }
    assert_eq!(back.texel_address([36, 22, 2]), ((2 * 23 + 22) * 40 + 36) * 4);
}

#[test]
fn unsupported_descriptors_are_named() {
    let mut t = rgba8(4, 4).encode();
    t[3] |= 3 << 16;
    assert!(Resource::decode(t).unwrap_err().contains("mipmapped"));
    let mut t = rgba8(4, 4).encode();
    t[1] = t[1] & !(0x3f << 20) | 6 << 20;
    assert!(Resource::decode(t).unwrap_err().contains("10_11_11"));
    assert!(Resource::decode([0; 8]).is_err());
}

#[test]
fn formats_round_trip_with_saturation_and_rounding() {
    let f = Format::of(1, 8, Num::Unorm).unwrap();
    let mut b = [0u8; 1];
    for (x, want) in [(0.5f32, 128u8), (1.7, 255), (-3.0, 0), (f32::NAN, 0), (0.2, 51)] {
        f.encode([x.to_bits(), 0, 0, 0], &mut b);
        assert_eq!(b[0], want, "{x}");
    }
    assert_eq!(f32::from_bits(f.decode(&[51])[0]), 0.2);
    let f = Format::of(2, 16, Num::Sint).unwrap();
    let mut b = [0u8; 4];
    f.encode([(-70000i32) as u32, 123, 0, 0], &mut b);
    assert_eq!(f.decode(&b), [(-32768i32) as u32, 123, 0, 1]);
    let f = Format::of(4, 16, Num::Float).unwrap();
    let mut b = [0u8; 8];
    f.encode([1.5f32.to_bits(), (-2.25f32).to_bits(), 65504f32.to_bits(), 0], &mut b);
    assert_eq!(
        f.decode(&b),
        [1.5f32.to_bits(), (-2.25f32).to_bits(), 65504f32.to_bits(), 0]
    );
    let f = Format::of(1, 8, Num::Snorm).unwrap();
    assert_eq!(f32::from_bits(f.decode(&[0x80])[0]), -1.0);
}

#[test]
fn loads_and_stores_address_the_pitch_and_drop_outside() {
    let r = rgba8(5, 3);
    let mut m = Host(vec![0; 8 * 3 * 4]);
    let v = [0.0f32, 1.0, 0.5, 1.0].map(f32::to_bits);
    r.store(&mut m, [4, 2, 0], v).unwrap();
    r.store(&mut m, [5, 0, 0], v).unwrap(); // outside: dropped
    assert_eq!(&m.0[(2 * 8 + 4) * 4..(2 * 8 + 5) * 4], &[0, 255, 128, 255]);
    assert_eq!(m.0.iter().filter(|&&b| b != 0).count(), 3);
    assert_eq!(r.load(&mut m, [4, 2, 0]).unwrap()[1], 1f32.to_bits());
    assert_eq!(r.load(&mut m, [4, 3, 0]).unwrap(), [0; 4]);
    // a red-only view reads constants for the missing channels
    let red = Resource {
        swizzle: [SEL_X, SEL_0, SEL_0, SEL_1],
        sw_mode: 0,
        format: Format::of(1, 32, Num::Float).unwrap(),
        ..r
    };
    let mut m = Host(7.5f32.to_bits().to_le_bytes().to_vec());
    assert_eq!(
        red.load(&mut m, [0, 0, 0]).unwrap(),
        [7.5f32.to_bits(), 0, 0, 1f32.to_bits()]
    );
}

/// The typed access of the buffer row named `name`, from its `mem` column.
fn format_access(name: &str) -> Result<FormatAccess, &'static str> {
    let row = isa_amdgpu::GFX9.iter().find(|r| r.name == name).expect("a buffer row");
    FormatAccess::of(row.mem)
}

#[test]
fn typed_buffer_accesses_convert_and_select_like_images() {
    let op = format_access("buffer_load_format_xy").unwrap();
    assert_eq!((op.load, op.components, op.d16), (true, 2, false));
    let hi = format_access("buffer_load_format_d16_hi_x").unwrap();
    assert_eq!((hi.load, hi.components, hi.d16), (true, 1, true));
    // BGRA unorm8: word 3 selects z, y, x, w of 8_8_8_8 unorm
    let word3 = SEL_Z as u32 | (SEL_Y as u32) << 3 | (SEL_X as u32) << 6 | (SEL_W as u32) << 9 | 10 << 15;
    let (f, sel) = FormatAccess::format(word3).unwrap();
    let mut m = Host(vec![0, 51, 255, 128]);
    let v = op.lane(&mut m, &f, sel, 0, &[]).unwrap();
    assert_eq!((f32::from_bits(v[0]), f32::from_bits(v[1])), (1.0, 0.2));
    let st = format_access("buffer_store_format_xyzw").unwrap();
    st.lane(
        &mut m,
        &f,
        sel,
        0,
        &[0.0f32.to_bits(), 1.0f32.to_bits(), 0.5f32.to_bits(), 1.0f32.to_bits()],
    )
    .unwrap();
    assert_eq!(m.0, vec![128, 255, 0, 255]);
    // selects 2 and 3 name nothing
    assert!(FormatAccess::format(2 | 10 << 15).is_err());
    // a d16 store of -1 to a signed 16-bit element stays -1 (not saturated from 65535)
    let (f, sel) = FormatAccess::format(SEL_X as u32 | 5 << 12 | 2 << 15).unwrap();
    let st = format_access("buffer_store_format_d16_x").unwrap();
    let mut m = Host(vec![0, 0]);
    st.lane(&mut m, &f, sel, 0, &[0xffff]).unwrap();
    assert_eq!(m.0, vec![0xff, 0xff]);
}

/// A 2x2 image of `format` at 0 (pitch 2), its texels' bytes `bytes`.
fn tiny(format: Format, bytes: &[u8]) -> (Resource, Host) {
    let r = Resource {
        format,
        width: 2,
        height: 2,
        pitch: 2,
        ..rgba8(2, 2)
    };
    (r, Host(bytes.to_vec()))
}

#[test]
fn packed_loads_move_raw_channel_bits_and_stores_take_them_back() {
    let f = Format::of(4, 8, Num::Unorm).unwrap();
    let (r, mut m) = tiny(f, &[0; 16]);
    // texel (1, 1): bytes 12..16
    m.0[12..16].copy_from_slice(&[0x01, 0x7f, 0xff, 0x80]);
    assert_eq!(r.load_packed(&mut m, [1, 1, 0], 0xf, false).unwrap()[0], 0x80ff_7f01);
    assert_eq!(r.load_packed(&mut m, [1, 1, 0], 0xa, false).unwrap()[0], 0x807f);
    assert_eq!(r.load_packed(&mut m, [1, 1, 0], 0xa, true).unwrap()[0], 0xffff_807f);
    assert_eq!(r.load_packed(&mut m, [2, 1, 0], 0xf, true).unwrap(), [0; 4]);
    let op = ImageInst::of(isa_amdgpu::Opcode::ImageLoadPck, None, 0xa, false, true, false).unwrap();
    assert_eq!(op.result_regs(&r), 1);
    r.store_packed(&mut m, [0, 1, 0], 0x6, &[0x2211]).unwrap();
    assert_eq!(&m.0[8..12], &[0, 0x11, 0x22, 0]);
    // 32-bit channels fill a dword each
    let f = Format::of(4, 32, Num::Float).unwrap();
    let (r, mut m) = tiny(f, &[0; 64]);
    r.store_packed(&mut m, [1, 0, 0], 0xf, &[1, 2, 3, 4]).unwrap();
    assert_eq!(r.load_packed(&mut m, [1, 0, 0], 0xc, true).unwrap(), [3, 4, 0, 0]);
    let op = ImageInst::of(isa_amdgpu::Opcode::ImageLoadPck, None, 0xc, false, true, false).unwrap();
    assert_eq!(op.result_regs(&r), 2);
}

#[test]
fn image_atomics_combine_one_integer_per_texel_by_the_shared_rules() {
    use isa_amdgpu::Opcode as O;
    let u32f = Format::new(4, Num::Uint as u32).unwrap();
    let (r, mut m) = tiny(u32f, &[0; 16]);
    m.0[4..8].copy_from_slice(&10u32.to_le_bytes());
    assert_eq!(r.atomic(&mut m, [1, 0, 0], AtomicOp::Add, &[5]).unwrap()[0], 10);
    assert_eq!(&m.0[4..8], &15u32.to_le_bytes());
    // compare-and-swap: the new value first, then the one to compare with
    assert_eq!(
        r.atomic(&mut m, [1, 0, 0], AtomicOp::CmpSwap, &[99, 15]).unwrap()[0],
        15
    );
    assert_eq!(&m.0[4..8], &99u32.to_le_bytes());
    assert_eq!(r.atomic(&mut m, [1, 0, 0], AtomicOp::CmpSwap, &[7, 15]).unwrap()[0], 99);
    assert_eq!(&m.0[4..8], &99u32.to_le_bytes());
    // outside the image: nothing changes, 0 returns
    assert_eq!(r.atomic(&mut m, [0, 2, 0], AtomicOp::Swap, &[1]).unwrap(), [0; 4]);
    // 64-bit texels: one integer, low dword first
    let u64f = Format::new(11, Num::Uint as u32).unwrap();
    let (r, mut m) = tiny(u64f, &[0; 32]);
    m.0[8..16].copy_from_slice(&0xffff_ffffu64.to_le_bytes());
    assert_eq!(
        r.atomic(&mut m, [1, 0, 0], AtomicOp::Add, &[1, 1]).unwrap(),
        [0xffff_ffff, 0, 0, 0]
    );
    assert_eq!(&m.0[8..16], &0x2_0000_0000u64.to_le_bytes());
    // what the ISA guide allows: integer 32/64-bit texels, the DMASK counting the data dwords, UNORM
    let atomic = |op, a, dmask, unorm, glc| ImageInst::of(op, Some(a), dmask, false, unorm, glc).unwrap();
    let (r32, _) = tiny(u32f, &[]);
    assert_eq!(
        atomic(O::ImageAtomicAdd, AtomicOp::Add, 1, true, true).check(&r32),
        Ok(())
    );
    assert_eq!(
        atomic(O::ImageAtomicAdd, AtomicOp::Add, 1, true, true).result_regs(&r32),
        1
    );
    assert_eq!(
        atomic(O::ImageAtomicAdd, AtomicOp::Add, 1, true, false).result_regs(&r32),
        0
    );
    assert_eq!(
        atomic(O::ImageAtomicCmpswap, AtomicOp::CmpSwap, 3, true, true).check(&r32),
        Ok(())
    );
    assert_eq!(
        atomic(O::ImageAtomicCmpswap, AtomicOp::CmpSwap, 3, true, true).result_regs(&r32),
        1
    );
    assert!(atomic(O::ImageAtomicAdd, AtomicOp::Add, 3, true, true)
        .check(&r32)
        .unwrap_err()
        .contains("allows 0x1"));
    assert!(atomic(O::ImageAtomicAdd, AtomicOp::Add, 1, false, true)
        .check(&r32)
        .unwrap_err()
        .contains("UNORM"));
    assert_eq!(
        atomic(O::ImageAtomicCmpswap, AtomicOp::CmpSwap, 0xf, true, true).check(&r),
        Ok(())
    );
    assert_eq!(
        atomic(O::ImageAtomicCmpswap, AtomicOp::CmpSwap, 0xf, true, true).result_regs(&r),
        2
    );
    let (float, _) = tiny(Format::of(1, 32, Num::Float).unwrap(), &[]);
    assert!(atomic(O::ImageAtomicAdd, AtomicOp::Add, 1, true, true)
        .check(&float)
        .unwrap_err()
        .contains("integer texels"));
    let (rgba, _) = tiny(Format::of(4, 8, Num::Uint).unwrap(), &[]);
    assert!(atomic(O::ImageAtomicAdd, AtomicOp::Add, 1, true, true)
        .check(&rgba)
        .is_err());
    assert!(
        ImageInst::of(O::ImageAtomicAdd, Some(AtomicOp::Add), 1, true, true, true).is_err(),
        "no D16 atomics"
    );
}

/// A 4x2 single-channel float image holding x + 10 y.
fn ramp() -> (Resource, Host) {
    let r = Resource {
        swizzle: [SEL_X, SEL_0, SEL_0, SEL_1],
        sw_mode: 0,
        format: Format::of(1, 32, Num::Float).unwrap(),
        ..rgba8(4, 2)
    };
    let mut m = Host(vec![0; 7 * 2 * 4]);
    for y in 0..2 {
        for x in 0..4 {
            r.store(&mut m, [x, y, 0], [(x as f32 + 10.0 * y as f32).to_bits(), 0, 0, 0])
                .unwrap();
        }
    }
    (r, m)
}

#[test]
fn sampling_filters_and_wraps_like_the_reference_formulas() {
    let (r, mut m) = ramp();
    let nearest = Sampler {
        wrap: [Wrap::Repeat; 3],
        unnormalized: false,
        linear: false,
        border: Border::TransparentBlack,
    };
    let at = |m: &mut Host, s: &Sampler, x: f32, y: f32| {
        f32::from_bits(r.sample(m, s, false, [x, y, 0.0], [0; 3], Sample::Color).unwrap()[0])
    };
    assert_eq!(at(&mut m, &nearest, 0.6, 0.9), 2.0 + 10.0);
    assert_eq!(at(&mut m, &nearest, 1.1, 0.1), 0.0); // wraps to x = 0
                                                     // a position a rounding error below a texel edge is on the edge
    assert_eq!(at(&mut m, &nearest, 0.5 - 1e-7, 0.0), 2.0);
    let linear = Sampler {
        linear: true,
        wrap: [Wrap::ClampLast; 3],
        ..nearest
    };
    // texel centres at (i + 0.5) / n: halfway between x = 1 and x = 2 on row 0
    assert_eq!(at(&mut m, &linear, 2.0 / 4.0, 0.25), 1.5);
    // halfway between the rows
    assert_eq!(at(&mut m, &linear, 1.5 / 4.0, 0.5), 1.0 + 5.0);
    let border = Sampler {
        wrap: [Wrap::ClampBorder; 3],
        border: Border::OpaqueWhite,
        unnormalized: true,
        ..nearest
    };
    assert_eq!(at(&mut m, &border, -0.5, 0.5), 1.0);
    let mirror = Sampler {
        wrap: [Wrap::Mirror; 3],
        unnormalized: true,
        ..nearest
    };
    assert_eq!(at(&mut m, &mirror, 4.5, 0.5), 3.0);
    assert_eq!(at(&mut m, &mirror, -1.5, 0.5), 1.0);
    let g = r
        .sample(&mut m, &linear, true, [1.5, 1.0, 0.0], [0; 3], Sample::Gather(0))
        .unwrap()
        .map(f32::from_bits);
    assert_eq!(g, [11.0, 12.0, 2.0, 1.0]);
}

//! gfx942's 8-bit floats: an f32 as E4M3 or E5M2, rounded to nearest even or stochastically.

/// An f32 as gfx942's 8-bit float, E4M3 with bias 8 or (`bf8`) E5M2 with bias 16: 0x80 is the only NaN, there
/// are no infinities or negative zero. Rounds to nearest even, or with `random` stochastically: the random bits
/// are added below the kept mantissa bits, which are then truncated. NaN, infinities and magnitudes above the
/// largest finite value (240, 57344) give 0x80. This is AMD's reference conversion for these types
/// (`cast_to_f8` of HIP's `amd_hip_fp8.h`, from rocBLAS), which the HIP headers use on the host where gfx942
/// devices use `v_cvt_pk_fp8_f32` and `v_cvt_sr_fp8_f32`.
pub fn f32_to_f8(x: f32, bf8: bool, random: Option<u32>) -> u8 {
    let (mant_bits, bias, max) = if bf8 { (2u32, 16i32, 57344.0f32) } else { (3, 8, 240.0) };
    let bits = x.to_bits();
    let sign = (bits >> 31) as u8;
    if !x.is_finite() || x.abs() > max {
        return 0x80;
    }
    if x == 0.0 {
        return 0;
    }
    // the magnitude as mantissa * 2^(exp - 23) with the implicit bit, aligned to the 8-bit float's exponent
    // (its subnormals have the exponent 1 - bias)
    let (e, mut man) = match bits >> 23 & 0xff {
        0 => (-126, (bits & 0x7f_ffff) as u64),
        e => (e as i32 - 127, (bits & 0x7f_ffff | 0x80_0000) as u64),
    };
    let min_exp = 1 - bias;
    let shift = (min_exp - e).max(0) as u32; // further right shift into the subnormal range
    let drop = 23 - mant_bits; // bits below the kept mantissa
    let e8 = e.max(min_exp);
    let total = drop + shift;
    if total >= 64 {
        return 0;
    }
    let (kept, rest) = (man >> total, man & ((1u64 << total) - 1));
    man = match random {
        // the random bits in the dropped positions of the aligned value: a carry into the kept bits
        // rounds up with probability proportional to what is dropped
        Some(r) => {
            let aligned = man >> shift;
            let dropped = aligned & ((1u64 << drop) - 1);
            (aligned >> drop) + ((dropped + (r as u64 & ((1u64 << drop) - 1))) >> drop)
        }
        None => {
            let half = 1u64 << (total - 1);
            kept + (rest > half || (rest == half && kept & 1 == 1)) as u64
        }
    };
    // man now counts units of 2^(e8 - mant_bits); normalize the carry out of the mantissa
    let (mut e8, mut man) = (e8, man);
    if man >= 2 << mant_bits {
        man >>= 1;
        e8 += 1;
    }
    let field = if man >> mant_bits == 0 { 0 } else { e8 + bias };
    if man == 0 {
        return 0;
    }
    if field > (1 << (7 - mant_bits)) - 1 {
        return 0x80;
    }
    sign << 7 | (field as u8) << mant_bits | (man as u8 & ((1 << mant_bits) - 1))
}

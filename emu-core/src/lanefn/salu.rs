//! Scalar ALU operations ([`SaluOp`]) as the CDNA ISA guides define them.

/// Scalar ALU operations as the CDNA ISA guides define them; 64-bit operands are (lo, hi) inputs/outputs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SaluOp {
    /// Count of zero (`ones: false`) or one bits of a u32 or (`wide`) u64 (s_bcnt0/s_bcnt1).
    Bcnt { ones: bool, wide: bool },
    /// Index of the lowest zero bit of a u32 or u64, -1 if none (s_ff0).
    Ff0 { wide: bool },
    /// The bits of a u64 reversed (s_brev_b64).
    Brev64,
    /// (old value, bit index) -> the value with that bit cleared or set, of a u32 or u64 (s_bitset0/1).
    Bitset { set: bool, wide: bool },
    /// Each nibble of the source (four lanes of a quad) to one bit: set if any bit of the nibble is (s_quadmask).
    Quadmask { wide: bool },
    /// Each nibble set to all ones if any bit of it is (s_wqm: whole quad mode).
    Wqm { wide: bool },
    /// Sign extension of the low 8 or 16 bits.
    Sext(u8),
    /// |S0| (s_abs_i32), two's complement (|i32::MIN| = i32::MIN).
    Abs,
    /// |S0 - S1| (s_absdiff_i32), of the wrapped difference.
    Absdiff,
    /// (S0 << n) + S1 and the carry out of the 64-bit sum (s_lshlN_add_u32).
    LshlAdd(u8),
    /// Two 16-bit halves: low halves of S0 and S1 (`hi0`/`hi1` pick the high halves) as D's low and high halves.
    Pack { hi0: bool, hi1: bool },
    /// Every bit of a u32 twice, as a u64 (s_bitreplicate_b64_b32).
    Bitreplicate,
    /// SCC = bit S1[5:0] of a u64 is 0 (`one: false`) or 1 (s_bitcmp0/1_b64).
    Bitcmp64 { one: bool },
}

impl SaluOp {
    fn wide_in(self) -> bool {
        use SaluOp::*;
        matches!(
            self,
            Bcnt { wide: true, .. }
                | Ff0 { wide: true }
                | Brev64
                | Bitset { wide: true, .. }
                | Quadmask { wide: true }
                | Wqm { wide: true }
                | Bitcmp64 { .. }
        )
    }
    pub(super) fn arity(self) -> usize {
        use SaluOp::*;
        let first = if self.wide_in() { 2 } else { 1 };
        match self {
            Bitset { .. } | Absdiff | LshlAdd(_) | Pack { .. } | Bitcmp64 { .. } => first + 1,
            _ => first,
        }
    }
    /// Number of 32-bit outputs.
    pub fn outputs(self) -> usize {
        use SaluOp::*;
        match self {
            Brev64
            | Bitset { wide: true, .. }
            | Quadmask { wide: true }
            | Wqm { wide: true }
            | Bitreplicate
            | LshlAdd(_) => 2,
            _ => 1,
        }
    }
    pub(super) fn eval(self, x: &[u32], out: &mut [u32]) {
        use SaluOp::*;
        let v = if self.wide_in() {
            (x[1] as u64) << 32 | x[0] as u64
        } else {
            x[0] as u64
        };
        let arg = |i: usize| x[i + if self.wide_in() { 2 } else { 1 }];
        let bits = if self.wide_in() { 64 } else { 32 };
        let mut put = |r: u64| {
            out[0] = r as u32;
            if out.len() > 1 {
                out[1] = (r >> 32) as u32;
            }
        };
        let nibbles = |v: u64, n: u32| {
            (0..n)
                .map(|i| ((v >> (4 * i) & 0xf != 0) as u64) << i)
                .fold(0, |a, b| a | b)
        };
        match self {
            Bcnt { ones, .. } => put(if ones { v.count_ones() } else { bits - v.count_ones() } as u64),
            Ff0 { .. } => put(if (!v).trailing_zeros() >= bits {
                u32::MAX as u64
            } else {
                (!v).trailing_zeros() as u64
            }),
            Brev64 => put(v.reverse_bits()),
            Bitset { set, .. } => {
                let bit = 1u64 << (arg(0) & (bits - 1));
                put(if set { v | bit } else { v & !bit })
            }
            Quadmask { wide } => put(nibbles(v, if wide { 16 } else { 8 })),
            Wqm { wide } => {
                let q = nibbles(v, if wide { 16 } else { 8 });
                put((0..16)
                    .map(|i| if q >> i & 1 == 1 { 0xfu64 << (4 * i) } else { 0 })
                    .fold(0, |a, b| a | b))
            }
            Sext(8) => put(v as u8 as i8 as i32 as u32 as u64),
            Sext(_) => put(v as u16 as i16 as i32 as u32 as u64),
            Abs => put((v as u32 as i32).wrapping_abs() as u32 as u64),
            Absdiff => put((v as u32 as i32).wrapping_sub(arg(0) as i32).wrapping_abs() as u32 as u64),
            LshlAdd(n) => {
                // the sum and its carry out as the second output
                let sum = ((v as u32 as u64) << n) + arg(0) as u64;
                put(sum & 0xffff_ffff | ((sum >> 32 != 0) as u64) << 32)
            }
            Pack { hi0, hi1 } => {
                let half = |w: u32, hi: bool| if hi { w >> 16 } else { w & 0xffff };
                put((half(arg(0), hi1) << 16 | half(v as u32, hi0)) as u64)
            }
            Bitreplicate => put((0..32).map(|i| (v >> i & 1) * (3u64 << (2 * i))).fold(0, |a, b| a | b)),
            Bitcmp64 { one } => put(((v >> (arg(0) & 63) & 1 == 1) == one) as u64),
        }
    }
}

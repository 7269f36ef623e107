//! A multiply-xor hasher for keys that are handles, addresses or a handful of u64s (block lookups, queue and
//! signal handles), looked up on hot paths where SipHash showed in profiles. Not for keys an adversary chooses.

/// The hasher; [`FastHash`] builds it for `HashMap`s.
#[derive(Default)]
pub struct FastHasher(u64);

impl std::hash::Hasher for FastHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.write_u64(*b as u64);
        }
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0 ^ x).wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(29);
    }
}

pub type FastHash = std::hash::BuildHasherDefault<FastHasher>;

//! A memory instruction's lane accesses as rounds: round `k` holds each lane's `k`-th access, so a round has at
//! most one access per lane. Most instructions make one round; two-address DS forms make two, a filtered image
//! sample one per texel of its footprint (up to eight). The rounds are what the texture unit coalesces into cache
//! lines ([`super::cache::coalesce`]) and what the LDS serves bank by bank ([`super::lds::bank_cycles`]), one
//! round after the other.
//!
//! One definition for every user: the timing model's memory work and the hardware counters
//! (`profiler-hooks`' `TCP_TOTAL_CACHE_ACCESSES`, `SQ_LDS_IDX_ACTIVE`, `SQ_LDS_BANK_CONFLICT`), so the counters
//! equal what the model looks up.

use super::cache::{coalesce, LineUse};
use super::lds::bank_cycles;
use crate::observe::{Dir, LaneAccess};

/// One round: at most one access per lane.
#[derive(Debug, Clone)]
pub struct Round {
    /// The active lanes' addresses (the others' mean nothing).
    pub addrs: [u64; 64],
    /// The lanes with an access in this round.
    pub exec: u64,
    /// The largest access of the round, bytes (at least 1).
    pub bytes: u32,
    /// The direction of the round's accesses (an instruction's `k`-th accesses all go one way; of several, the
    /// last filled in).
    pub dir: Dir,
}

/// The rounds of one instruction's accesses, reused from instruction to instruction (rounds beyond
/// [`Rounds::len`] are stale).
#[derive(Debug)]
pub struct Rounds {
    n: usize,
    rounds: Vec<Round>,
    /// Accesses of each lane so far: the round its next access goes to.
    next: [u32; 64],
}

impl Default for Rounds {
    fn default() -> Rounds {
        Rounds::new()
    }
}

impl Rounds {
    /// No rounds.
    pub fn new() -> Rounds {
        Rounds {
            n: 0,
            rounds: Vec::new(),
            next: [0; 64],
        }
    }

    /// The accesses of `lanes` that `want` keeps, at the addresses `place` gives them, in order: each in the
    /// round after its lane's previous one.
    pub fn fill(
        &mut self,
        lanes: &[LaneAccess],
        place: impl Fn(&LaneAccess) -> u64,
        want: impl Fn(&LaneAccess) -> bool,
    ) {
        self.n = 0;
        self.next = [0; 64];
        for a in lanes.iter().filter(|a| want(a)) {
            let l = (a.lane & 63) as usize;
            let r = self.next[l] as usize;
            self.next[l] += 1;
            if r == self.n {
                if r == self.rounds.len() {
                    self.rounds.push(Round {
                        addrs: [0; 64],
                        exec: 0,
                        bytes: 1,
                        dir: Dir::Read,
                    });
                }
                let round = &mut self.rounds[r];
                (round.exec, round.bytes) = (0, 1);
                self.n += 1;
            }
            let round = &mut self.rounds[r];
            round.addrs[l] = place(a);
            round.exec |= 1 << l;
            round.bytes = round.bytes.max(a.bytes);
            round.dir = a.dir;
        }
    }

    /// How many rounds the last [`Rounds::fill`] made.
    pub fn len(&self) -> usize {
        self.n
    }

    /// Whether the last [`Rounds::fill`] kept no access.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// The rounds, first to last.
    pub fn iter(&self) -> impl Iterator<Item = &Round> {
        self.rounds[..self.n].iter()
    }

    /// The `line_bytes` lines each round touches ([`coalesce`], with `lines` as its buffer): `f` gets the round
    /// and its lines, round by round.
    pub fn lines(&self, line_bytes: u32, lines: &mut Vec<LineUse>, mut f: impl FnMut(&Round, &[LineUse])) {
        for r in self.iter() {
            coalesce(&r.addrs, r.exec, r.bytes.min(line_bytes), line_bytes, lines);
            f(r, lines);
        }
    }

    /// How many `line_bytes` lines the rounds touch: the lines [`Rounds::lines`] gives, counted (a whole wave
    /// moving one contiguous range by arithmetic).
    pub fn line_count(&self, line_bytes: u32, lines: &mut Vec<LineUse>) -> u64 {
        self.iter()
            .map(|r| lines_touched(&r.addrs, r.exec, r.bytes.min(line_bytes), line_bytes, lines))
            .sum()
    }

    /// The LDS bank cycles of the rounds and the cycles of those lost to bank conflicts, summed over rounds
    /// (the addresses are LDS offsets).
    pub fn bank_cycles(&self) -> (u64, u64) {
        let (mut cycles, mut conflicts) = (0u64, 0u64);
        for r in self.iter() {
            let addrs: [u32; 64] = std::array::from_fn(|l| r.addrs[l] as u32);
            let b = bank_cycles(&addrs, r.exec, r.bytes, r.dir == Dir::Read);
            cycles += b.cycles as u64;
            conflicts += b.conflict_cycles as u64;
        }
        (cycles, conflicts)
    }
}

/// How many `line_bytes` lines a round of lane accesses touches ([`coalesce`]'s count): a whole wave reading
/// or writing one contiguous range (each lane `bytes` after the one before) by arithmetic, anything else
/// through `coalesce` (with `lines` as its buffer).
fn lines_touched(addrs: &[u64; 64], exec: u64, bytes: u32, line_bytes: u32, lines: &mut Vec<LineUse>) -> u64 {
    if exec == u64::MAX {
        let (first, step) = (addrs[0], bytes as u64);
        let last = first.wrapping_add(64 * step - 1);
        if last > first && (1..64).all(|l| addrs[l] == first.wrapping_add(l as u64 * step)) {
            let shift = line_bytes.trailing_zeros();
            return (last >> shift) - (first >> shift) + 1;
        }
    }
    coalesce(addrs, exec, bytes, line_bytes, lines);
    lines.len() as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::Space;

    fn access(lane: u8, address: u64, bytes: u32, dir: Dir) -> LaneAccess {
        LaneAccess {
            lane,
            space: Space::Global,
            dir,
            bytes,
            address,
        }
    }

    #[test]
    fn each_lanes_kth_access_goes_to_round_k_however_many_there_are() {
        // eight accesses per lane (a filtered 3-D sample's texels), lanes interleaved as an engine reports them
        let mut lanes = Vec::new();
        for k in 0..8u64 {
            for l in 0..4u8 {
                lanes.push(access(l, 0x1000 * k + 4 * l as u64, 4, Dir::Read));
            }
        }
        let mut rounds = Rounds::new();
        rounds.fill(&lanes, |a| a.address, |_| true);
        assert_eq!(rounds.len(), 8);
        for (k, r) in rounds.iter().enumerate() {
            assert_eq!(r.exec, 0b1111, "round {k}");
            assert_eq!(
                r.addrs[..4],
                std::array::from_fn::<u64, 4, _>(|l| 0x1000 * k as u64 + 4 * l as u64),
                "round {k}"
            );
        }
        // a refill forgets the rounds before
        rounds.fill(&lanes[..2], |a| a.address + 1, |_| true);
        assert_eq!(rounds.len(), 1);
        let r = rounds.iter().next().unwrap();
        assert_eq!((r.exec, r.addrs[0], r.addrs[1]), (0b11, 1, 5));
    }

    #[test]
    fn a_round_is_as_wide_as_its_widest_access_and_leaves_out_what_is_not_wanted() {
        let lanes = [
            access(0, 0x100, 4, Dir::Write),
            access(1, 0x104, 8, Dir::Write),
            access(2, 0x10c, 2, Dir::Write),
            LaneAccess {
                space: Space::Lds,
                ..access(3, 0, 16, Dir::Write)
            },
        ];
        let mut rounds = Rounds::new();
        rounds.fill(&lanes, |a| a.address, |a| a.space != Space::Lds);
        let r = rounds.iter().next().unwrap();
        assert_eq!((rounds.len(), r.exec, r.bytes, r.dir), (1, 0b111, 8, Dir::Write));
        // lanes 0..2 at 8 bytes each from 0x100 reach 0x114: one 64-byte line
        let mut seen = Vec::new();
        rounds.lines(64, &mut Vec::new(), |_, lines| {
            seen.extend(lines.iter().map(|l| l.line))
        });
        assert_eq!(seen, [0x100]);
        rounds.fill(&lanes, |a| a.address, |_| false);
        assert!(rounds.is_empty() && rounds.iter().next().is_none());
    }

    #[test]
    fn contiguous_waves_touch_the_lines_coalescing_finds() {
        // contiguous ranges at every alignment and lane size, and ranges broken by one lane or one missing lane
        let mut lines = Vec::new();
        let mut checked = 0;
        for line_bytes in [64u32, 128] {
            for bytes in [1u32, 2, 4, 8, 12, 16] {
                for start in [0u64, 4, 60, 64, 100, 127, 0x1000_0000 - 8] {
                    let base: [u64; 64] = std::array::from_fn(|l| start + l as u64 * bytes as u64);
                    let mut gap = base;
                    gap[40] += 4096;
                    for (addrs, exec) in [
                        (base, u64::MAX),
                        (gap, u64::MAX),
                        (base, u64::MAX >> 1),
                        (base, !(1u64 << 17)),
                    ] {
                        coalesce(&addrs, exec, bytes, line_bytes, &mut lines);
                        let want = lines.len() as u64;
                        assert_eq!(
                            lines_touched(&addrs, exec, bytes, line_bytes, &mut lines),
                            want,
                            "start {start:#x}, {bytes} B per lane, {line_bytes} B lines, exec {exec:#x}"
                        );
                        checked += 1;
                    }
                }
            }
        }
        assert_eq!(checked, 2 * 6 * 7 * 4);
    }
}

//! A set-associative cache that only tracks tags: hit or miss per access, LRU replacement, write policies,
//! counters; and the coalescer that turns a wave instruction's lane addresses into the cache lines it touches.
//!
//! Invariants: no allocation after [`Cache::new`] (arrays are zero-initialised, so a large cache costs memory
//! only for the sets it touches); the outcome of an access depends only on the sequence of accesses (LRU by
//! each set's recency order, an empty way before any valid one), never on the host.
//!
//! Each line also carries a `ready_at` cycle: when a miss's data arrives. The memory pipeline sets it after a
//! miss, so a later access to a line still being filled is a hit that waits for the fill ("hit-on-miss", as
//! AMD's L1 and L2 count it: rocprofiler-compute docs, 'Vector L1 cache' and 'L2 cache' footnotes).

use super::machine::{AllocPolicy, WritePolicy};
use super::prefetch;

const VALID: u64 = 1;

/// Geometry and policy of a cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheConfig {
    pub bytes: u64,
    pub line_bytes: u32,
    pub ways: u32,
    pub write: WritePolicy,
    pub alloc: AllocPolicy,
    /// Index sets by an XOR fold of the line number instead of its low bits, so that streams a multiple of
    /// the cache's way size apart do not all land in one set (shared caches hash their index; the exact
    /// hash is not public).
    pub hash_sets: bool,
}

/// Counters of one cache: what only it sees (the memory pipeline counts accesses, hits and misses from the
/// outcomes).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Valid lines replaced.
    pub evictions: u64,
    /// Dirty lines replaced (each needs a write to the next level).
    pub writebacks: u64,
}

/// Where an address is looked up in one cache: its line number and set ([`Cache::spot`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Spot {
    line: u64,
    set: usize,
}

/// What one access did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outcome {
    pub hit: bool,
    /// The line is (now) in the cache: a hit, or a miss that allocated it.
    pub allocated: bool,
    /// Index of the line's slot (for [`Cache::set_ready`]); meaningful when `allocated`.
    pub slot: u32,
    /// For a hit: the cycle the line's data is (or was) there.
    pub ready_at: u64,
    /// Line address of a dirty line this access evicted, which must be written to the next level.
    pub writeback: Option<u64>,
}

/// A set-associative, LRU, tag-only cache.
///
/// Each set has a head, in one dense array: its recency order (way numbers, most recent first, four bits
/// each) and a byte per way that fingerprints its line (0: empty) and says whether it is dirty; and its ways,
/// in another: each way's tag beside the cycle its line's data arrives. A lookup compares the fingerprints
/// eight at a time and reads only the ways whose fingerprint matches, so it touches the set's head (the heads
/// of all sets take a small part of the tags' memory) and, mostly, one way; a miss that evicts a clean line
/// reads no way at all.
/// Ways fill in order (a line only leaves to make room for another), so the valid ways are always a prefix of
/// the set: the first empty way is the first zero fingerprint, and a full set's victim is the last of its order.
pub struct Cache {
    cfg: CacheConfig,
    line_shift: u32,
    sets: u64,
    set_bits: u32,
    ways: usize,
    /// Words of fingerprints per set (a byte per way): 1 or 2.
    fp_words: usize,
    /// The mask of the order's `ways` nibbles.
    order_mask: u64,
    /// Per set: its recency order (way numbers, most recent first, four bits each), then its ways'
    /// fingerprints (a byte per way: [`fingerprint`], with [`DIRTY`] set while the line is dirty; 0: empty).
    /// Plain words, so that the allocation is zeroed pages the host provides as they are touched.
    heads: Vec<[u64; 3]>,
    /// Per way, per set (way `w` of set `s` at `w * sets + s`): its line number << 1 | VALID (0 = empty), and
    /// the cycle its data arrives. Way-major, so that one way of neighbouring sets, which a stream through
    /// consecutive lines fills one after another, shares the host's cache lines and pages.
    lines: Vec<[u64; 2]>,
    /// The way the latest access hit or filled: the way [`Cache::prefetch`] fetches beside the head (a stream
    /// through a cold cache fills its sets' ways in turn).
    recent: usize,
    stats: CacheStats,
}

impl Cache {
    /// An empty cache. `bytes / line_bytes / ways` must be a power of two, `line_bytes` too, and there are at
    /// most 16 ways.
    pub fn new(cfg: CacheConfig) -> Cache {
        assert!(
            cfg.line_bytes.is_power_of_two() && cfg.ways > 0 && cfg.ways <= 16,
            "bad cache geometry {cfg:?}"
        );
        let lines = cfg.bytes / cfg.line_bytes as u64;
        let sets = lines / cfg.ways as u64;
        assert!(
            sets.is_power_of_two() && sets * cfg.ways as u64 == lines,
            "bad cache geometry {cfg:?}"
        );
        let ways = cfg.ways as usize;
        let fp_words = ways.div_ceil(8);
        Cache {
            cfg,
            line_shift: cfg.line_bytes.trailing_zeros(),
            sets,
            set_bits: sets.trailing_zeros(),
            ways,
            fp_words,
            order_mask: if ways == 16 { u64::MAX } else { (1u64 << (4 * ways)) - 1 },
            heads: vec![[0; 3]; sets as usize],
            lines: vec![[0; 2]; lines as usize],
            recent: 0,
            stats: CacheStats::default(),
        }
    }

    pub fn config(&self) -> &CacheConfig {
        &self.cfg
    }

    pub fn stats(&self) -> &CacheStats {
        &self.stats
    }

    /// The line address (aligned down) of byte address `addr`.
    #[inline]
    pub fn line_of(&self, addr: u64) -> u64 {
        addr & !((self.cfg.line_bytes as u64) - 1)
    }

    /// The line number of `addr` and its set.
    #[inline]
    pub fn spot(&self, addr: u64) -> Spot {
        let line = addr >> self.line_shift;
        let index = if self.cfg.hash_sets && self.set_bits > 0 {
            line ^ (line >> self.set_bits) ^ (line >> (2 * self.set_bits))
        } else {
            line
        };
        Spot {
            line,
            set: (index & (self.sets - 1)) as usize,
        }
    }

    /// Asks the host to bring the head of the set of `addr` into its caches ahead of an access, and that set's
    /// way of the latest access's number (the one a stream filling a cold cache writes next); returns where
    /// `addr` is looked up, for [`Cache::access_at`]. Changes nothing.
    #[inline]
    pub fn prefetch(&self, addr: u64) -> Spot {
        let spot = self.spot(addr);
        prefetch(&self.heads[spot.set]);
        prefetch(
            self.lines
                .as_ptr()
                .wrapping_add(self.recent * self.sets as usize + spot.set),
        );
        spot
    }

    /// Is the line holding `addr` present? Changes nothing.
    pub fn contains(&self, addr: u64) -> bool {
        let Spot { line, set } = self.spot(addr);
        let want = line << 1 | VALID;
        (0..self.ways).any(|w| self.lines[w * self.sets as usize + set][TAG] == want)
    }

    /// Looks up `addr` for a read (`write == false`) or a write, updating LRU, dirty bits and the eviction
    /// counters.
    #[inline(always)]
    pub fn access(&mut self, addr: u64, write: bool) -> Outcome {
        self.access_at(self.spot(addr), write)
    }

    /// [`Cache::access`] of the address at `spot` (from this cache's [`Cache::spot`]).
    #[inline(always)]
    pub fn access_at(&mut self, spot: Spot, write: bool) -> Outcome {
        let Spot { line, set } = spot;
        let want = line << 1 | VALID;
        let dirty_on_write = write && self.cfg.write == WritePolicy::WriteBack;
        let (ways, fp_words) = (self.ways, self.fp_words);
        let fp = fingerprint(line);
        let head = &mut self.heads[set];
        let stride = self.sets as usize;
        // the ways whose fingerprint is the line's (a tag then tells), and the first empty way
        let mut filled = ways;
        for k in 0..fp_words {
            let word = head[1 + k];
            let mut candidates = zero_bytes((word & !(DIRTY * BYTES)) ^ (fp * BYTES));
            while candidates != 0 {
                let w = 8 * k + (candidates.trailing_zeros() / 8) as usize;
                candidates &= candidates - 1;
                let at = w * stride + set;
                let way = &self.lines[at];
                if way[TAG] == want {
                    if dirty_on_write {
                        head[1 + k] |= DIRTY << (8 * (w % 8));
                    }
                    head[ORDER] = to_front(head[ORDER], w as u64);
                    self.recent = w;
                    return Outcome {
                        hit: true,
                        allocated: true,
                        slot: at as u32,
                        ready_at: way[READY],
                        writeback: None,
                    };
                }
            }
            let empty = zero_bytes(word);
            if empty != 0 {
                filled = (8 * k + (empty.trailing_zeros() / 8) as usize).min(ways);
                break;
            }
        }
        if write && self.cfg.alloc == AllocPolicy::NoWriteAllocate {
            return Outcome {
                hit: false,
                allocated: false,
                slot: u32::MAX,
                ready_at: 0,
                writeback: None,
            };
        }
        // the first empty way, else the least recently used (the last of the order)
        let victim = if filled < ways {
            filled
        } else {
            (head[ORDER] >> (4 * (ways - 1)) & 15) as usize
        };
        let at = victim * stride + set;
        let shift = 8 * (victim % 8);
        let word = &mut head[1 + victim / 8];
        // a full set's victim is a valid line, and its fingerprint says whether it is dirty: its tag (for a
        // large cache, a read that would miss the host's caches) is read only to write it back
        let mut writeback = None;
        if filled == ways {
            self.stats.evictions += 1;
            if *word >> shift & DIRTY != 0 {
                self.stats.writebacks += 1;
                writeback = Some((self.lines[at][TAG] >> 1) << self.line_shift);
            }
        }
        debug_assert!(
            filled == ways || self.lines[at][TAG] == 0,
            "the ways before the first empty one are the valid ones"
        );
        self.lines[at] = [want, 0];
        *word = *word & !(0xff << shift) | (fp | if dirty_on_write { DIRTY } else { 0 }) << shift;
        // the victim (last of a full order, or a way not in it yet) becomes the most recent
        head[ORDER] = (head[ORDER] << 4 | victim as u64) & self.order_mask;
        self.recent = victim;
        Outcome {
            hit: false,
            allocated: true,
            slot: at as u32,
            ready_at: 0,
            writeback,
        }
    }

    /// Records when the data of the line in `slot` (from an allocating [`Outcome`]) arrives.
    #[inline]
    pub fn set_ready(&mut self, slot: u32, ready_at: u64) {
        self.lines[slot as usize][READY] = ready_at;
    }

    /// Drops every line (dirty ones without writing them back) and keeps the counters.
    pub fn invalidate_all(&mut self) {
        self.heads.fill([0; 3]);
        self.lines.fill([0; 2]);
    }
}

/// Where a set's head keeps its recency order (its fingerprints follow), and a way its tag and ready cycle.
const ORDER: usize = 0;
const TAG: usize = 0;
const READY: usize = 1;

/// A byte repeated in each byte of a `u64`.
const BYTES: u64 = 0x0101_0101_0101_0101;

/// A line's fingerprint: seven bits, never 0 (an empty way's), from the line number's bits mixed.
#[inline]
fn fingerprint(line: u64) -> u64 {
    (line.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 57).max(1)
}

/// The bit of a way's fingerprint byte set while its line is dirty.
const DIRTY: u64 = 0x80;

/// The high bit of each byte of `x` that is zero (exactly those: no borrow runs between bytes).
#[inline]
fn zero_bytes(x: u64) -> u64 {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    !(((x & LOW7) + LOW7) | x | LOW7)
}

/// `order` (way numbers, most recent first, four bits each) with way `w`, which it holds, moved to the front.
#[inline]
fn to_front(order: u64, w: u64) -> u64 {
    if order & 15 == w {
        return order;
    }
    // the first nibble equal to `w` (positions past the valid ways hold 0, but `w` is among the valid ones,
    // so the lowest match is it): nibbles of `x` that are zero
    let x = order ^ (w * 0x1111_1111_1111_1111);
    let zero = x.wrapping_sub(0x1111_1111_1111_1111) & !x & 0x8888_8888_8888_8888;
    let p = zero.trailing_zeros() / 4;
    let below = order & ((1u64 << (4 * p)) - 1);
    let above = if p >= 15 {
        0
    } else {
        order & !((1u64 << (4 * (p + 1))) - 1)
    };
    above | below << 4 | w
}

/// One cache line a wave instruction touches and how many of its bytes the instruction uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineUse {
    /// Line-aligned address.
    pub line: u64,
    /// Bytes of the line the active lanes access (lanes accessing the same bytes count each time, capped at
    /// the line size).
    pub bytes: u32,
}

/// The distinct `line_bytes` lines that the active lanes (`exec` bit per lane) touch with accesses of
/// `bytes_per_lane` bytes at `addrs`, in lane order (the order of each line's first lane), into `out`
/// (cleared first). An access straddling a line boundary touches both lines. This is what hardware counts
/// per instruction (TCP_TOTAL_CACHE_ACCESSES counts such lines).
pub fn coalesce(addrs: &[u64], exec: u64, bytes_per_lane: u32, line_bytes: u32, out: &mut Vec<LineUse>) {
    out.clear();
    debug_assert!(line_bytes.is_power_of_two() && bytes_per_lane >= 1 && bytes_per_lane <= line_bytes);
    debug_assert!(addrs.len() <= 64);
    let mask = !(line_bytes as u64 - 1);
    // Lines seen so far: a linear scan of `out` while it is short, then an open-addressing table of line
    // numbers (+1, 0 = empty) -> index into `out` (at most 128 lines), built on first need.
    let mut table: Option<([u64; 256], [u8; 256])> = None;
    let shift = line_bytes.trailing_zeros();
    let mut add = |out: &mut Vec<LineUse>, line: u64, bytes: u32| -> usize {
        if table.is_none() {
            if let Some(i) = out.iter().position(|u| u.line == line) {
                out[i].bytes = (out[i].bytes + bytes).min(line_bytes);
                return i;
            }
            if out.len() < 16 {
                out.push(LineUse {
                    line,
                    bytes: bytes.min(line_bytes),
                });
                return out.len() - 1;
            }
            let mut t = ([0u64; 256], [0u8; 256]);
            for (i, u) in out.iter().enumerate() {
                let key = (u.line >> shift) + 1;
                let mut h = (key.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 56) as usize;
                while t.0[h] != 0 {
                    h = (h + 1) & 255;
                }
                t.0[h] = key;
                t.1[h] = i as u8;
            }
            table = Some(t);
        }
        let (keys, slot_of) = table.as_mut().expect("built above");
        let key = (line >> shift) + 1;
        let mut h = (key.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 56) as usize;
        loop {
            if keys[h] == key {
                let i = slot_of[h] as usize;
                out[i].bytes = (out[i].bytes + bytes).min(line_bytes);
                return i;
            }
            if keys[h] == 0 {
                keys[h] = key;
                slot_of[h] = out.len() as u8;
                out.push(LineUse {
                    line,
                    bytes: bytes.min(line_bytes),
                });
                return out.len() - 1;
            }
            h = (h + 1) & 255;
        }
    };
    // Consecutive lanes mostly share a line: bytes of the current line accumulate here and are added to its
    // entry when the line changes.
    let (mut cur_line, mut cur_idx, mut cur_bytes) = (u64::MAX, 0usize, 0u32);
    let mut active = if addrs.len() >= 64 {
        exec
    } else {
        exec & ((1u64 << addrs.len()) - 1)
    };
    while active != 0 {
        let lane = active.trailing_zeros() as usize;
        active &= active - 1;
        let a = addrs[lane];
        let first = a & mask;
        let last_line = (a + bytes_per_lane as u64 - 1) & mask;
        if first == last_line && first == cur_line {
            cur_bytes += bytes_per_lane;
            continue;
        }
        if cur_line != u64::MAX {
            out[cur_idx].bytes = (out[cur_idx].bytes + cur_bytes).min(line_bytes);
        }
        if first == last_line {
            (cur_line, cur_idx, cur_bytes) = (first, add(out, first, 0), bytes_per_lane);
        } else {
            let lo = (last_line - a) as u32;
            add(out, first, lo);
            (cur_line, cur_idx, cur_bytes) = (last_line, add(out, last_line, 0), bytes_per_lane - lo);
        }
    }
    if cur_line != u64::MAX {
        out[cur_idx].bytes = (out[cur_idx].bytes + cur_bytes).min(line_bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cache(bytes: u64, line: u32, ways: u32, write: WritePolicy, alloc: AllocPolicy) -> Cache {
        Cache::new(CacheConfig {
            bytes,
            line_bytes: line,
            ways,
            write,
            alloc,
            hash_sets: false,
        })
    }

    #[test]
    fn a_working_set_that_fits_hits_after_the_first_pass() {
        // 1 KiB, 64-byte lines, 4 ways: 4 sets. 16 lines fill it exactly.
        let mut c = cache(1024, 64, 4, WritePolicy::WriteBack, AllocPolicy::WriteAllocate);
        let mut hits = 0;
        for pass in 0..3 {
            for i in 0..16u64 {
                let o = c.access(i * 64, false);
                assert_eq!(o.hit, pass > 0, "pass {pass} line {i}");
                hits += o.hit as u32;
            }
        }
        assert_eq!((hits, c.stats().evictions), (32, 0));
    }

    #[test]
    fn one_line_too_many_in_a_cyclic_pattern_misses_every_time_under_lru() {
        // Capacity miss: 17 lines cycling through a fully associative 16-line cache; LRU always evicts the
        // line needed next.
        let mut c = cache(1024, 64, 16, WritePolicy::WriteBack, AllocPolicy::WriteAllocate);
        let mut misses = 0;
        for _ in 0..3 {
            for i in 0..17u64 {
                misses += !c.access(i * 64, false).hit as u32;
            }
        }
        assert_eq!(misses, 51);
        assert_eq!(c.stats().evictions, 51 - 16);
    }

    #[test]
    fn five_lines_of_one_set_conflict_while_the_rest_of_the_cache_is_empty() {
        // Conflict miss: lines 0, 4, 8, 12, 16 all map to set 0 of a 4-set, 4-way cache.
        let mut c = cache(1024, 64, 4, WritePolicy::WriteBack, AllocPolicy::WriteAllocate);
        let set0 = [0u64, 4, 8, 12, 16];
        for &l in &set0 {
            assert!(!c.access(l * 64, false).hit);
        }
        // Line 0 was the least recently used and is gone; 4 (now LRU) is still there.
        assert!(!c.contains(0) && c.contains(4 * 64));
        assert!(c.access(16 * 64, false).hit);
        // Touch 4 so that 8 becomes LRU; the re-fetch of 0 evicts 8.
        assert!(c.access(4 * 64, false).hit);
        assert!(!c.access(0, false).hit);
        assert!(!c.contains(8 * 64) && c.contains(4 * 64));
    }

    #[test]
    fn write_through_without_allocation_leaves_a_missing_line_out() {
        let mut c = cache(1024, 64, 4, WritePolicy::WriteThrough, AllocPolicy::NoWriteAllocate);
        let o = c.access(128, true);
        assert!(!o.hit && !o.allocated && o.writeback.is_none());
        assert!(!c.contains(128));
        // A read allocates; a later write hits and stays clean (it went through).
        assert!(!c.access(128, false).hit);
        assert!(c.access(130, true).hit);
        for i in 1..=4u64 {
            // Evict it with four more lines of set 2; nothing is dirty.
            assert!(c.access(128 + i * 256, false).writeback.is_none());
        }
        assert_eq!((c.stats().writebacks, c.stats().evictions), (0, 1));
    }

    #[test]
    fn write_back_evicts_dirty_lines_with_their_address() {
        let mut c = cache(1024, 64, 4, WritePolicy::WriteBack, AllocPolicy::WriteAllocate);
        // A write miss allocates without reading and is dirty.
        let o = c.access(64, true);
        assert!(!o.hit && o.allocated);
        for i in 1..=3u64 {
            c.access(64 + i * 256, false);
        }
        let o = c.access(64 + 4 * 256, false);
        assert_eq!(o.writeback, Some(64));
        assert_eq!(c.stats().writebacks, 1);
    }

    #[test]
    fn a_hit_reports_when_the_pending_fill_arrives() {
        let mut c = cache(1024, 64, 4, WritePolicy::WriteBack, AllocPolicy::WriteAllocate);
        let o = c.access(0, false);
        c.set_ready(o.slot, 500);
        let h = c.access(32, false);
        assert!(h.hit);
        assert_eq!(h.ready_at, 500);
    }

    /// The cache as a list per set, most recent line first: what the recency order must reproduce.
    struct Reference {
        sets: Vec<Vec<(u64, bool)>>,
        ways: usize,
        line_shift: u32,
        write_back: bool,
        allocate_writes: bool,
    }

    impl Reference {
        fn access(&mut self, addr: u64, write: bool) -> (bool, Option<u64>) {
            let line = addr >> self.line_shift;
            let n = self.sets.len() as u64;
            let set = &mut self.sets[(line & (n - 1)) as usize];
            if let Some(i) = set.iter().position(|l| l.0 == line) {
                let (l, dirty) = set.remove(i);
                set.insert(0, (l, dirty || (write && self.write_back)));
                return (true, None);
            }
            if write && !self.allocate_writes {
                return (false, None);
            }
            let evicted = if set.len() == self.ways { set.pop() } else { None };
            set.insert(0, (line, write && self.write_back));
            (false, evicted.filter(|e| e.1).map(|e| e.0 << self.line_shift))
        }
    }

    #[test]
    fn lru_by_recency_order_evicts_what_a_list_of_recent_lines_does() {
        for (ways, write, alloc) in [
            (4, WritePolicy::WriteBack, AllocPolicy::WriteAllocate),
            (16, WritePolicy::WriteBack, AllocPolicy::WriteAllocate),
            (4, WritePolicy::WriteThrough, AllocPolicy::NoWriteAllocate),
            (8, WritePolicy::WriteBack, AllocPolicy::NoWriteAllocate),
            (1, WritePolicy::WriteBack, AllocPolicy::WriteAllocate),
        ] {
            let sets = 4u64;
            let mut c = cache(sets * ways as u64 * 64, 64, ways, write, alloc);
            let mut r = Reference {
                sets: vec![Vec::new(); sets as usize],
                ways: ways as usize,
                line_shift: 6,
                write_back: write == WritePolicy::WriteBack,
                allocate_writes: alloc == AllocPolicy::WriteAllocate,
            };
            let mut x = 0x2545_f491_4f6c_dd1du64;
            for i in 0..20_000 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                // a working set a little larger than the cache, so sets fill, hit and evict
                let addr = (x % (sets * ways as u64 * 3 / 2 + 1)) * 64 + (x >> 40) % 64;
                let is_write = (x >> 20).is_multiple_of(4);
                let o = c.access(addr, is_write);
                let (hit, writeback) = r.access(addr, is_write);
                assert_eq!(
                    (o.hit, o.writeback),
                    (hit, writeback),
                    "{ways} ways, access {i} at {addr:#x}"
                );
            }
        }
    }

    fn lanes(f: impl Fn(u64) -> u64) -> Vec<u64> {
        (0..64).map(f).collect()
    }

    #[test]
    fn sixty_four_consecutive_dwords_are_two_128_byte_lines_or_four_64_byte_lines() {
        let a = lanes(|i| 0x1000 + 4 * i);
        let mut out = Vec::with_capacity(128);
        coalesce(&a, u64::MAX, 4, 128, &mut out);
        assert_eq!(
            out,
            vec![
                LineUse {
                    line: 0x1000,
                    bytes: 128
                },
                LineUse {
                    line: 0x1080,
                    bytes: 128
                }
            ]
        );
        coalesce(&a, u64::MAX, 4, 64, &mut out);
        assert_eq!(
            out.iter().map(|u| u.line).collect::<Vec<_>>(),
            vec![0x1000, 0x1040, 0x1080, 0x10c0]
        );
        assert!(out.iter().all(|u| u.bytes == 64));
    }

    #[test]
    fn coalescing_keeps_first_lane_order_skips_inactive_lanes_and_splits_straddles() {
        // Lanes alternate between two far-apart lines, in reverse order of address.
        let a = lanes(|i| if i % 2 == 0 { 0x9000 } else { 0x1000 });
        let mut out = Vec::new();
        coalesce(&a, u64::MAX, 4, 64, &mut out);
        assert_eq!(out.iter().map(|u| u.line).collect::<Vec<_>>(), vec![0x9000, 0x1000]);
        // Only lane 5 active, an 8-byte access straddling 0x103c..0x1044.
        let mut a = lanes(|_| 0);
        a[5] = 0x103c;
        coalesce(&a, 1 << 5, 8, 64, &mut out);
        assert_eq!(
            out,
            vec![LineUse { line: 0x1000, bytes: 4 }, LineUse { line: 0x1040, bytes: 4 }]
        );
        coalesce(&a, 0, 8, 64, &mut out);
        assert!(out.is_empty());
        // A gather over 64 distinct lines keeps them all, in lane order.
        let a = lanes(|i| (63 - i) * 4096 + 8);
        coalesce(&a, u64::MAX, 4, 128, &mut out);
        assert_eq!(out.len(), 64);
        assert_eq!(out[0].line, 63 * 4096);
        assert_eq!(out[63].line, 0);
        // Lines revisited after other lines still accumulate their bytes on the right entry.
        let mut a = lanes(|_| 0x2000);
        a[1] = 0x3000;
        coalesce(&a, 0b1111, 4, 64, &mut out);
        assert_eq!(
            out,
            vec![
                LineUse {
                    line: 0x2000,
                    bytes: 12
                },
                LineUse { line: 0x3000, bytes: 4 }
            ]
        );
    }
}

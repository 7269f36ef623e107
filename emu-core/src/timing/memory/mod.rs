//! The memory pipeline: vector L1 per CU → L2 per XCD (address-interleaved channels) → MALL (shared by all
//! XCDs, where there is one) → HBM (address-interleaved channels); the scalar cache and the instruction cache
//! (one per group of CUs) → L2.
//!
//! Each level is a fixed latency plus bandwidth (an HBM channel also loses `hbm.turnaround` cycles when it
//! turns from reads to writes or back): a request of N bytes occupies its channel (or its L1 port)
//! for N / bytes-per-clock cycles, as a "next free cycle" per channel kept in 1/256 cycles; a request starts
//! when it arrives and its channel is free, and its data is back `latency` cycles after it started. Latencies
//! add up level by level ([`super::machine`] gives each level's share and how they were calibrated). Each CU
//! keeps at most [`Limits::l1_misses_per_cu`](super::machine::Limits) L1 misses in flight (reads until their
//! data is back, writes until acknowledged); a further miss waits for the earliest of them.
//!
//! Reads: an L1 hit returns after the L1 hit latency (or when a fill still under way arrives: hit-on-miss);
//! a miss goes to the L2 channel of its address; an L2 miss fills the whole L2 line from the MALL or HBM.
//! Writes: the L1 is write-through without write-allocate; the L2 is write-back and allocates on a write
//! miss without reading the line; the wave's `vmcnt` drops when the L2 acknowledges, which costs what an L2
//! hit costs. A write whose allocation evicts a dirty line is acknowledged no earlier than that line's
//! write-back starts on its HBM (or MALL) channel, so a write stream runs at the memory's write rate.
//! Atomics: performed in the L2 (not in the L1); an L2 miss fills the line first.
//!
//! Not modeled: coherence traffic and probes (MI300X's cross-XCD invalidations, fine-grained memory), cache
//! invalidations and write-back on kernel boundaries, bank conflicts inside L2 channels, the L2 channel hash
//! (an XOR fold stands in for AMD's), address translation (no TLB: no public figures for its size or miss
//! cost), DRAM pages and refresh (folded into per-direction efficiencies; read/write turnaround is one cost per
//! change of a channel's direction, the controller's batching folded in), partial-line valid masks (a write-allocated L2 line counts as fully valid), the interconnect between L1 and L2, NUMA
//! placement of memory on MI300X stacks, and instruction prefetch.
//!
//! Deterministic: the results depend only on the sequence of calls. Calls should come in non-decreasing
//! `now` per CU (the in-flight limit retires requests by time), and roughly non-decreasing across CUs (a
//! channel serves requests in call order). No allocation per access.
//!
//! The parts: requests and what they report ([`request`]); channel occupancy and misses in flight
//! ([`bandwidth`]); the pipeline itself ([`MemorySystem`], here).

mod bandwidth;
mod request;
#[cfg(test)]
mod tests;

use super::cache::{Cache, CacheConfig, Spot};
use super::machine::{CacheLevel, Machine, SharedLevel};
use bandwidth::{channel, occupy, InFlight, Rate};
pub use request::{AccessResult, Kind, LevelStats, LineRequest, MemoryStats};

/// Where a line is looked up in the vector L1, the L2 and the MALL ([`Spot::default`] where there is none or it is
/// not needed).
#[derive(Debug, Clone, Copy, Default)]
struct Spots {
    l1: Spot,
    l2: Spot,
    mall: Spot,
}

/// Lines of a vector memory instruction whose sets the host is asked for at once (a wave's 16-byte loads touch
/// eight 128-byte lines).
const SPOT_BATCH: usize = 8;

const L1: usize = 0;
const SCALAR: usize = 1;
const ICACHE: usize = 2;
const L2: usize = 3;
const MALL: usize = 4;
const HBM: usize = 5;

/// The modeled memory system of one device.
pub struct MemorySystem {
    m: Machine,
    l1: Vec<Cache>,
    l1_port: Vec<u64>,
    l1_inflight: Vec<InFlight>,
    scalar: Vec<Cache>,
    scalar_port: Vec<u64>,
    scalar_inflight: Vec<InFlight>,
    icache: Vec<Cache>,
    icache_port: Vec<u64>,
    l2: Vec<Cache>,
    l2_chan: Vec<u64>,
    mall: Option<Cache>,
    mall_chan: Vec<u64>,
    hbm_chan: Vec<u64>,
    /// Per HBM channel: whether its last transfer was a write (a change of direction costs the turnaround).
    hbm_wrote: Vec<bool>,
    l1_rate: Rate,
    scalar_rate: Rate,
    icache_rate: Rate,
    l2_rate: Rate,
    mall_rate: Rate,
    hbm_read: Rate,
    hbm_write: Rate,
    stats: [LevelStats; 6],
    busy_fp: [u64; 6],
}

fn cache_of(l: &CacheLevel) -> Cache {
    let (bytes, line_bytes, ways, write, alloc) = (l.bytes, l.line_bytes, l.ways, l.write, l.alloc);
    Cache::new(CacheConfig {
        bytes,
        line_bytes,
        ways,
        write,
        alloc,
        hash_sets: false,
    })
}

fn shared_of(l: &SharedLevel) -> Cache {
    let (bytes, line_bytes, ways, write, alloc) = (l.bytes, l.line_bytes, l.ways, l.write, l.alloc);
    Cache::new(CacheConfig {
        bytes,
        line_bytes,
        ways,
        write,
        alloc,
        hash_sets: true,
    })
}

impl MemorySystem {
    /// An empty (cold) memory system for `machine`.
    pub fn new(machine: &Machine) -> MemorySystem {
        let m = machine.clone();
        let cus = m.topology.cus() as usize;
        let groups = |l: &CacheLevel| cus.div_ceil(l.cus_per_instance as usize);
        let xcds = m.topology.xcds as usize;
        let mall = m.mall.as_ref().map(shared_of);
        let mall_channels = m.mall.as_ref().map_or(0, |l| l.channels as usize);
        let mall_bw = m.mall.as_ref().map_or(1.0, |l| l.bytes_per_clock as f64);
        MemorySystem {
            l1: (0..cus).map(|_| cache_of(&m.l1)).collect(),
            l1_port: vec![0; cus],
            l1_inflight: (0..cus).map(|_| InFlight::new(m.limits.l1_misses_per_cu)).collect(),
            scalar: (0..groups(&m.scalar)).map(|_| cache_of(&m.scalar)).collect(),
            scalar_port: vec![0; groups(&m.scalar)],
            scalar_inflight: (0..groups(&m.scalar))
                .map(|_| InFlight::new(m.limits.scalar_misses))
                .collect(),
            icache: (0..groups(&m.icache)).map(|_| cache_of(&m.icache)).collect(),
            icache_port: vec![0; groups(&m.icache)],
            l2: (0..xcds).map(|_| shared_of(&m.l2)).collect(),
            l2_chan: vec![0; xcds * m.l2.channels as usize],
            mall,
            mall_chan: vec![0; mall_channels],
            hbm_chan: vec![0; m.hbm.channels as usize],
            hbm_wrote: vec![false; m.hbm.channels as usize],
            l1_rate: Rate::new(m.l1.bytes_per_clock as f64),
            scalar_rate: Rate::new(m.scalar.bytes_per_clock as f64),
            icache_rate: Rate::new(m.icache.bytes_per_clock as f64),
            l2_rate: Rate::new(m.l2.bytes_per_clock as f64),
            mall_rate: Rate::new(mall_bw),
            hbm_read: Rate::new(m.hbm_read_bytes_per_shader_clock()),
            hbm_write: Rate::new(m.hbm_write_bytes_per_shader_clock()),
            stats: [LevelStats::default(); 6],
            busy_fp: [0; 6],
            m,
        }
    }

    pub fn machine(&self) -> &Machine {
        &self.m
    }

    /// The first cycle from `now` at which compute unit `cu` can have `lines` more L1 misses in flight
    /// without waiting for earlier ones: a CU holds a memory instruction back until then, so requests reach
    /// the shared levels in time order.
    #[inline(always)]
    pub fn l1_room_at(&self, now: u64, cu: u32, lines: u32) -> u64 {
        self.l1_inflight[cu as usize].room_at(now, lines as usize)
    }

    /// Vector memory requests of one wave instruction of compute unit `cu`, leaving the CU at cycle `now`.
    pub fn access(&mut self, now: u64, cu: u32, lines: &[LineRequest]) -> AccessResult {
        let mut r = AccessResult {
            accepted_at: now,
            complete_at: now,
            ..AccessResult::default()
        };
        let cu = cu as usize;
        let xcd = self.m.topology.xcd_of(cu as u32) as usize;
        for batch in lines.chunks(SPOT_BATCH) {
            // the sets the lines look up, fetched by the host all at once rather than one miss after another
            let mut spots = [Spots::default(); SPOT_BATCH];
            for (sp, l) in spots.iter_mut().zip(batch) {
                let mall = self.mall.as_ref().map_or(Spot::default(), |mall| mall.prefetch(l.addr));
                *sp = Spots {
                    l1: self.l1[cu].prefetch(l.addr),
                    l2: self.l2[xcd].prefetch(l.addr),
                    mall,
                };
            }
            for (sp, l) in spots.iter().zip(batch) {
                let (accepted, done) = match l.kind {
                    Kind::Read => self.l1_read(now, cu, xcd, l, sp, &mut r),
                    Kind::Write => self.l1_write(now, cu, xcd, l, sp, &mut r),
                    Kind::Atomic => self.l1_atomic(now, cu, xcd, l, sp, &mut r),
                };
                r.accepted_at = r.accepted_at.max(accepted);
                r.complete_at = r.complete_at.max(done);
            }
        }
        r
    }

    /// Scalar memory requests (`s_load`, `s_buffer_load`, `s_store`) of compute unit `cu` at cycle `now`.
    pub fn access_scalar(&mut self, now: u64, cu: u32, lines: &[LineRequest]) -> AccessResult {
        let mut r = AccessResult {
            accepted_at: now,
            complete_at: now,
            ..AccessResult::default()
        };
        let g = (cu / self.m.scalar.cus_per_instance) as usize;
        let xcd = self.m.topology.xcd_of(cu) as usize;
        let hit_latency = self.m.scalar.hit_latency;
        for l in lines {
            let st = &mut self.stats[SCALAR];
            st.requests += 1;
            let write = l.kind != Kind::Read;
            if write {
                st.writes += 1;
                st.bytes_written += l.bytes as u64;
            } else {
                st.reads += 1;
                st.bytes_read += l.bytes as u64;
            }
            let cost = self.scalar_rate.cost(l.bytes);
            let s = occupy(&mut self.scalar_port[g], now, cost, &mut self.busy_fp[SCALAR]);
            let o = self.scalar[g].access(l.addr, write);
            let (accepted, done) = if o.hit && !write {
                self.stats[SCALAR].hits += 1;
                (s, (s + hit_latency).max(o.ready_at))
            } else {
                if o.hit {
                    self.stats[SCALAR].hits += 1;
                } else {
                    self.stats[SCALAR].misses += 1;
                }
                let slot = self.scalar_inflight[g].acquire(s);
                let sp = self.spots_below_l1(xcd, l.addr);
                let done = if write {
                    self.stats[SCALAR].writeback_bytes += l.bytes as u64;
                    self.l2_write(slot, xcd, l.addr, l.bytes, hit_latency, &sp)
                } else {
                    self.stats[SCALAR].fill_bytes += self.m.scalar.line_bytes as u64;
                    self.l2_read(
                        slot,
                        xcd,
                        l.addr,
                        self.m.scalar.line_bytes,
                        hit_latency,
                        false,
                        &sp,
                        &mut r,
                    )
                };
                if o.allocated && !o.hit {
                    self.scalar[g].set_ready(o.slot, done);
                }
                self.scalar_inflight[g].release_at(done);
                (slot, done)
            };
            r.accepted_at = r.accepted_at.max(accepted);
            r.complete_at = r.complete_at.max(done);
        }
        r
    }

    /// Fetch of the instruction line holding `pc` by compute unit `cu` at cycle `now`; the cycle it is there.
    pub fn fetch_instruction(&mut self, now: u64, cu: u32, pc: u64) -> u64 {
        let g = (cu / self.m.icache.cus_per_instance) as usize;
        let xcd = self.m.topology.xcd_of(cu) as usize;
        let line = self.m.icache.line_bytes;
        let st = &mut self.stats[ICACHE];
        st.requests += 1;
        st.reads += 1;
        st.bytes_read += line as u64;
        let s = occupy(
            &mut self.icache_port[g],
            now,
            self.icache_rate.cost(line),
            &mut self.busy_fp[ICACHE],
        );
        let o = self.icache[g].access(pc, false);
        if o.hit {
            self.stats[ICACHE].hits += 1;
            return (s + self.m.icache.hit_latency).max(o.ready_at);
        }
        self.stats[ICACHE].misses += 1;
        self.stats[ICACHE].fill_bytes += line as u64;
        let mut r = AccessResult::default();
        let sp = self.spots_below_l1(xcd, pc);
        let done = self.l2_read(s, xcd, pc, line, self.m.icache.hit_latency, false, &sp, &mut r);
        self.icache[g].set_ready(o.slot, done);
        done
    }

    /// Counters of every level so far.
    pub fn stats(&self) -> MemoryStats {
        let mut s = self.stats;
        for (i, b) in self.busy_fp.iter().enumerate() {
            s[i].busy_cycles = b >> 8;
        }
        for c in &self.l1 {
            s[L1].absorb(c.stats());
        }
        for c in &self.scalar {
            s[SCALAR].absorb(c.stats());
        }
        for c in &self.icache {
            s[ICACHE].absorb(c.stats());
        }
        for c in &self.l2 {
            s[L2].absorb(c.stats());
        }
        if let Some(c) = &self.mall {
            s[MALL].absorb(c.stats());
        }
        MemoryStats {
            l1: s[L1],
            scalar: s[SCALAR],
            icache: s[ICACHE],
            l2: s[L2],
            mall: s[MALL],
            hbm: s[HBM],
        }
    }

    /// Where `addr` is looked up below the L1s of XCD `xcd`.
    fn spots_below_l1(&self, xcd: usize, addr: u64) -> Spots {
        Spots {
            l1: Spot::default(),
            l2: self.l2[xcd].spot(addr),
            mall: self.mall.as_ref().map_or(Spot::default(), |mall| mall.spot(addr)),
        }
    }

    /// The cycle from `now` at which compute unit `cu`'s L1 takes `bytes` more (its port busy for as long).
    #[inline(always)]
    fn l1_port(&mut self, now: u64, cu: usize, bytes: u32) -> u64 {
        occupy(
            &mut self.l1_port[cu],
            now,
            self.l1_rate.cost(bytes),
            &mut self.busy_fp[L1],
        )
    }

    /// Counts an L1 lookup's hit or miss, in the L1's statistics and the instruction's `r`.
    #[inline(always)]
    fn l1_looked_up(&mut self, hit: bool, r: &mut AccessResult) {
        if hit {
            self.stats[L1].hits += 1;
            r.l1_hits += 1;
        } else {
            self.stats[L1].misses += 1;
            r.l1_misses += 1;
        }
    }

    fn l1_read(
        &mut self,
        now: u64,
        cu: usize,
        xcd: usize,
        l: &LineRequest,
        sp: &Spots,
        r: &mut AccessResult,
    ) -> (u64, u64) {
        let (addr, bytes) = (l.addr, l.bytes);
        let st = &mut self.stats[L1];
        st.requests += 1;
        st.reads += 1;
        st.bytes_read += bytes as u64;
        let line = self.m.l1.line_bytes;
        let s = self.l1_port(now, cu, line);
        let o = self.l1[cu].access_at(sp.l1, false);
        self.l1_looked_up(o.hit, r);
        if o.hit {
            return (s, (s + self.m.l1.hit_latency).max(o.ready_at));
        }
        self.stats[L1].fill_bytes += line as u64;
        let slot = self.l1_inflight[cu].acquire(s);
        let done = self.l2_read(slot, xcd, addr, line, self.m.l1.hit_latency, false, sp, r);
        self.l1[cu].set_ready(o.slot, done);
        self.l1_inflight[cu].release_at(done);
        (slot, done)
    }

    fn l1_write(
        &mut self,
        now: u64,
        cu: usize,
        xcd: usize,
        l: &LineRequest,
        sp: &Spots,
        r: &mut AccessResult,
    ) -> (u64, u64) {
        let (addr, bytes) = (l.addr, l.bytes);
        let st = &mut self.stats[L1];
        st.requests += 1;
        st.writes += 1;
        st.bytes_written += bytes as u64;
        st.writeback_bytes += bytes as u64;
        let s = self.l1_port(now, cu, bytes);
        // Write-through: a present line is updated, a missing one is not allocated; the write goes on to L2.
        let hit = self.l1[cu].access_at(sp.l1, true).hit;
        self.l1_looked_up(hit, r);
        let slot = self.l1_inflight[cu].acquire(s);
        let done = self.l2_write(slot, xcd, addr, bytes, self.m.l1.hit_latency, sp);
        self.l1_inflight[cu].release_at(done);
        (slot, done)
    }

    fn l1_atomic(
        &mut self,
        now: u64,
        cu: usize,
        xcd: usize,
        l: &LineRequest,
        sp: &Spots,
        r: &mut AccessResult,
    ) -> (u64, u64) {
        let (addr, bytes) = (l.addr, l.bytes);
        let st = &mut self.stats[L1];
        st.requests += 1;
        st.atomics += 1;
        st.bytes_read += bytes as u64;
        st.bytes_written += bytes as u64;
        // atomics run at L2: the L1 is not looked up, and counts a miss
        self.l1_looked_up(false, r);
        let s = self.l1_port(now, cu, bytes);
        let slot = self.l1_inflight[cu].acquire(s);
        let done = self.l2_read(slot, xcd, addr, bytes, self.m.l1.hit_latency, true, sp, r);
        self.l1_inflight[cu].release_at(done);
        (slot, done)
    }

    /// A read (or atomic) of `bytes` at `addr` (looked up at `sp`) reaching L2 at `t`; `above` is the latency
    /// of the level that sent it. Returns the cycle the data is back at the requester.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn l2_read(
        &mut self,
        t: u64,
        xcd: usize,
        addr: u64,
        bytes: u32,
        above: u64,
        atomic: bool,
        sp: &Spots,
        r: &mut AccessResult,
    ) -> u64 {
        let l2 = &self.m.l2;
        let ch = xcd * l2.channels as usize + channel(addr, l2.interleave_bits, l2.channels);
        let latency = above + l2.extra_latency;
        let line = l2.line_bytes;
        let st = &mut self.stats[L2];
        st.requests += 1;
        st.bytes_read += bytes as u64;
        if atomic {
            st.atomics += 1;
            st.bytes_written += bytes as u64;
        } else {
            st.reads += 1;
        }
        let s = occupy(
            &mut self.l2_chan[ch],
            t,
            self.l2_rate.cost(bytes),
            &mut self.busy_fp[L2],
        );
        let o = self.l2[xcd].access_at(sp.l2, atomic);
        if let Some(wb) = o.writeback {
            self.write_below_l2(s, wb, line);
        }
        if o.hit {
            self.stats[L2].hits += 1;
            r.l2_hits += 1;
            return (s + latency).max(o.ready_at);
        }
        self.stats[L2].misses += 1;
        self.stats[L2].fill_bytes += line as u64;
        r.l2_misses += 1;
        let done = self.read_below_l2(s, addr, line, latency, sp.mall, r);
        self.l2[xcd].set_ready(o.slot, done);
        done
    }

    /// A write of `bytes` at `addr` (looked up at `sp`) reaching L2 at `t`; returns the cycle it is
    /// acknowledged.
    fn l2_write(&mut self, t: u64, xcd: usize, addr: u64, bytes: u32, above: u64, sp: &Spots) -> u64 {
        let l2 = &self.m.l2;
        let ch = xcd * l2.channels as usize + channel(addr, l2.interleave_bits, l2.channels);
        let latency = above + l2.extra_latency;
        let line = l2.line_bytes;
        let st = &mut self.stats[L2];
        st.requests += 1;
        st.writes += 1;
        st.bytes_written += bytes as u64;
        let s = occupy(
            &mut self.l2_chan[ch],
            t,
            self.l2_rate.cost(bytes),
            &mut self.busy_fp[L2],
        );
        let o = self.l2[xcd].access_at(sp.l2, true);
        let mut ack = s + latency;
        if o.hit {
            self.stats[L2].hits += 1;
        } else {
            self.stats[L2].misses += 1;
            if o.allocated {
                self.l2[xcd].set_ready(o.slot, ack);
            }
        }
        if let Some(wb) = o.writeback {
            // The victim must leave before the write can take its place.
            ack = ack.max(self.write_below_l2(s, wb, line));
        }
        ack
    }

    /// Fills `bytes` (an L2 line) at `addr` (looked up at `mall` in the MALL) from the MALL or HBM, the request
    /// leaving L2 at `t` with `latency` accumulated so far; returns when the data is back at the original
    /// requester.
    fn read_below_l2(
        &mut self,
        t: u64,
        addr: u64,
        bytes: u32,
        latency: u64,
        mall_spot: Spot,
        r: &mut AccessResult,
    ) -> u64 {
        let mut latency = latency;
        if let (Some(mall), Some(level)) = (self.mall.as_mut(), self.m.mall.as_ref()) {
            let ch = channel(addr, level.interleave_bits, level.channels);
            latency += level.extra_latency;
            let st = &mut self.stats[MALL];
            st.requests += 1;
            st.reads += 1;
            st.bytes_read += bytes as u64;
            let s = occupy(
                &mut self.mall_chan[ch],
                t,
                self.mall_rate.cost(bytes),
                &mut self.busy_fp[MALL],
            );
            let o = mall.access_at(mall_spot, false);
            let wb = o.writeback;
            if o.hit {
                self.stats[MALL].hits += 1;
                r.mall_hits += 1;
                return (s + latency).max(o.ready_at);
            }
            self.stats[MALL].misses += 1;
            self.stats[MALL].fill_bytes += level.line_bytes as u64;
            r.mall_misses += 1;
            let line = level.line_bytes;
            if let Some(wb) = wb {
                self.hbm_write(s, wb, line);
            }
            let done = self.hbm_read_at(s, addr, line.max(bytes), latency);
            if let Some(mall) = self.mall.as_mut() {
                mall.set_ready(o.slot, done);
            }
            return done;
        }
        self.hbm_read_at(t, addr, bytes, latency)
    }

    #[inline(always)]
    fn hbm_read_at(&mut self, t: u64, addr: u64, bytes: u32, latency: u64) -> u64 {
        let h = &self.m.hbm;
        let ch = channel(addr, h.interleave_bits, h.channels);
        let st = &mut self.stats[HBM];
        st.requests += 1;
        st.reads += 1;
        st.bytes_read += bytes as u64;
        let extra = h.extra_latency;
        let cost = self.hbm_read.cost(bytes) + self.turnaround(ch, false);
        let s = occupy(&mut self.hbm_chan[ch], t, cost, &mut self.busy_fp[HBM]);
        s + latency + extra
    }

    /// An L2 write-back of a dirty line at `t`; returns the cycle it starts at the level below.
    fn write_below_l2(&mut self, t: u64, addr: u64, bytes: u32) -> u64 {
        self.stats[L2].writeback_bytes += bytes as u64;
        if let (Some(mall), Some(level)) = (self.mall.as_mut(), self.m.mall.as_ref()) {
            let ch = channel(addr, level.interleave_bits, level.channels);
            let st = &mut self.stats[MALL];
            st.requests += 1;
            st.writes += 1;
            st.bytes_written += bytes as u64;
            let s = occupy(
                &mut self.mall_chan[ch],
                t,
                self.mall_rate.cost(bytes),
                &mut self.busy_fp[MALL],
            );
            let o = mall.access(addr, true);
            if o.hit {
                self.stats[MALL].hits += 1;
            } else {
                self.stats[MALL].misses += 1;
            }
            if let Some(wb) = o.writeback {
                let line = level.line_bytes;
                self.stats[MALL].writeback_bytes += line as u64;
                return s.max(self.hbm_write(s, wb, line));
            }
            return s;
        }
        self.hbm_write(t, addr, bytes)
    }

    fn hbm_write(&mut self, t: u64, addr: u64, bytes: u32) -> u64 {
        let h = &self.m.hbm;
        let ch = channel(addr, h.interleave_bits, h.channels);
        let st = &mut self.stats[HBM];
        st.requests += 1;
        st.writes += 1;
        st.bytes_written += bytes as u64;
        let cost = self.hbm_write.cost(bytes) + self.turnaround(ch, true);
        occupy(&mut self.hbm_chan[ch], t, cost, &mut self.busy_fp[HBM])
    }

    /// The extra channel time (1/256 cycles) of a transfer in direction `write` on HBM channel `ch`: the
    /// bus turnaround when the direction changes.
    fn turnaround(&mut self, ch: usize, write: bool) -> u64 {
        let changed = self.hbm_wrote[ch] != write;
        self.hbm_wrote[ch] = write;
        if changed {
            self.m.hbm.turnaround << 8
        } else {
            0
        }
    }
}

//! Tests of the memory pipeline: hits and misses level by level, bandwidth, in-flight limits, and the
//! modeled devices' bandwidths against their published figures.

use super::request::{Kind, LineRequest};

use super::super::machine::{Machine, VECTOR_CHASE_OVERHEAD};
use super::*;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

fn mi210() -> &'static Machine {
    Machine::by_preset("mi210").unwrap()
}

fn read(addr: u64, bytes: u32) -> LineRequest {
    LineRequest {
        addr,
        bytes,
        kind: Kind::Read,
    }
}

fn write(addr: u64, bytes: u32) -> LineRequest {
    LineRequest {
        addr,
        bytes,
        kind: Kind::Write,
    }
}

#[test]
fn a_cold_read_costs_the_hbm_path_and_a_repeat_costs_an_l1_hit() {
    let m = mi210();
    let mut mem = MemorySystem::new(m);
    let r = mem.access(1000, 0, &[read(0x10_0000, 4)]);
    let hbm_path = m.l1.hit_latency + m.l2.extra_latency + m.hbm.extra_latency;
    assert_eq!(r.complete_at, 1000 + hbm_path);
    assert_eq!((r.l1_misses, r.l2_misses), (1, 1));
    let r = mem.access(5000, 0, &[read(0x10_0004, 4)]);
    assert_eq!(r.complete_at, 5000 + m.l1.hit_latency);
    assert_eq!(r.l1_hits, 1);
    // Another CU misses its own L1 and hits the shared L2.
    let r = mem.access(6000, 1, &[read(0x10_0000, 4)]);
    assert_eq!(r.complete_at, 6000 + m.l1.hit_latency + m.l2.extra_latency);
    assert_eq!((r.l1_misses, r.l2_hits), (1, 1));
    let s = mem.stats();
    assert_eq!((s.l1.requests, s.l1.hits, s.l1.misses), (3, 1, 2));
    assert_eq!((s.l2.hits, s.l2.misses, s.l2.fill_bytes), (1, 1, 128));
    assert_eq!(s.hbm.bytes_read, 128);
}

#[test]
fn a_read_of_a_line_still_being_filled_waits_for_the_fill() {
    let m = mi210();
    let mut mem = MemorySystem::new(m);
    let first = mem.access(0, 0, &[read(0x4000, 4)]).complete_at;
    let r = mem.access(10, 0, &[read(0x4000, 4)]);
    assert_eq!(r.l1_hits, 1, "hit-on-miss counts as a hit");
    assert_eq!(r.complete_at, first);
}

#[test]
fn the_mi300x_path_goes_through_the_mall_shared_by_all_xcds() {
    let m = Machine::by_preset("mi300x").unwrap();
    let mut mem = MemorySystem::new(m);
    let mall = m.mall.as_ref().unwrap();
    let cold = m.l1.hit_latency + m.l2.extra_latency + mall.extra_latency + m.hbm.extra_latency;
    assert_eq!(mem.access(0, 0, &[read(0x8000, 4)]).complete_at, cold);
    // CU 38 is on XCD 1: its L2 misses, the MALL hits.
    let r = mem.access(2000, 38, &[read(0x8000, 4)]);
    assert_eq!(
        r.complete_at,
        2000 + m.l1.hit_latency + m.l2.extra_latency + mall.extra_latency
    );
    assert_eq!((r.l2_misses, r.mall_hits), (1, 1));
}

/// MI210 with one HBM channel at 32 B per shader clock, 128-byte L1 lines and no in-flight limit: every
/// line costs 4 cycles of HBM time.
fn one_channel() -> Machine {
    let mut m = mi210().clone();
    m.l1.line_bytes = 128;
    m.l1.bytes_per_clock = 128;
    m.hbm.channels = 1;
    m.hbm.read_efficiency_milli = 1000;
    m.clocks.memory_mhz = m.clocks.shader_mhz;
    m.limits.l1_misses_per_cu = 1000;
    m
}

#[test]
fn back_to_back_lines_on_one_channel_complete_a_line_time_apart() {
    let m = one_channel();
    let mut mem = MemorySystem::new(&m);
    let latency = m.l1.hit_latency + m.l2.extra_latency + m.hbm.extra_latency;
    let n = 100u64;
    let lines: Vec<LineRequest> = (0..n).map(|i| read(0x100_0000 + 128 * i, 128)).collect();
    let r = mem.access(0, 0, &lines);
    // The k-th line starts on the channel at 4k and is back `latency` later: the last at
    // latency + (N - 1) * 128 B / 32 B per clock; the stream takes latency + N * line / bandwidth.
    assert_eq!(r.complete_at, latency + (n - 1) * 4);
    assert_eq!(mem.stats().hbm.busy_cycles, n * 4);
}

#[test]
fn misses_wait_for_a_slot_when_a_cu_has_its_limit_in_flight() {
    let mut m = one_channel();
    m.limits.l1_misses_per_cu = 2;
    let mut mem = MemorySystem::new(&m);
    let latency = m.l1.hit_latency + m.l2.extra_latency + m.hbm.extra_latency;
    let r = mem.access(0, 0, &[read(0, 128), read(128, 128), read(256, 128)]);
    // The third miss gets the first one's slot when its data is back.
    assert_eq!(r.accepted_at, latency);
    assert_eq!(r.complete_at, latency + latency.max(8));
}

#[test]
fn writes_are_acknowledged_by_l2_and_do_not_allocate_in_l1() {
    let m = mi210();
    let mut mem = MemorySystem::new(m);
    let ack = m.l1.hit_latency + m.l2.extra_latency;
    let r = mem.access(0, 0, &[write(0x2000, 64)]);
    assert_eq!(r.complete_at, ack);
    assert_eq!(
        mem.stats().hbm.bytes_read,
        0,
        "a write miss allocates in L2 without reading"
    );
    // The line is in L2, not in L1.
    let r = mem.access(1000, 0, &[read(0x2000, 4)]);
    assert_eq!((r.l1_misses, r.l2_hits, r.complete_at), (1, 1, 1000 + ack));
}

#[test]
fn dirty_l2_lines_are_written_back_to_hbm_when_evicted() {
    let m = mi210();
    let mut mem = MemorySystem::new(m);
    // Write twice the L2's capacity in consecutive lines: the first half fills every set, each line of
    // the second half evicts a dirty one.
    let lines = 2 * m.l2.bytes / 128;
    let mut t = 0;
    for i in 0..lines {
        t = mem.access(t, 0, &[write(i * 128, 128)]).accepted_at;
    }
    let s = mem.stats();
    assert_eq!((s.l2.writebacks, s.l2.writeback_bytes), (lines / 2, lines / 2 * 128));
    assert_eq!(s.hbm.bytes_written, lines / 2 * 128);
    assert_eq!(s.hbm.bytes_read, 0);
}

#[test]
fn the_same_calls_give_the_same_results() {
    let run = || {
        let mut mem = MemorySystem::new(Machine::by_preset("mi300x").unwrap());
        let mut out = Vec::new();
        for i in 0..2000u64 {
            let cu = (i * 7 % 304) as u32;
            let kind = if i % 3 == 0 { Kind::Write } else { Kind::Read };
            let addr = (i * 0x9e37_79b9) % (64 << 20);
            out.push(mem.access(i * 3, cu, &[LineRequest { addr, bytes: 64, kind }]));
        }
        (out, mem.stats())
    };
    assert_eq!(run(), run());
}

#[test]
fn scalar_loads_hit_the_shared_scalar_cache() {
    let m = mi210();
    let mut mem = MemorySystem::new(m);
    let cold = mem.access_scalar(0, 0, &[read(0x7000, 8)]).complete_at;
    assert_eq!(cold, m.scalar.hit_latency + m.l2.extra_latency + m.hbm.extra_latency);
    // CU 1 shares CU 0's scalar cache.
    assert_eq!(
        mem.access_scalar(1000, 1, &[read(0x7000, 8)]).complete_at,
        1000 + m.scalar.hit_latency
    );
    let f = mem.fetch_instruction(2000, 0, 0x7000);
    assert_eq!(f, 2000 + m.icache.hit_latency + m.l2.extra_latency, "L2 holds the line");
}

/// Cycles per iteration of a dependent vector pointer chase over `footprint` bytes at a 128-byte stride
/// on CU 0: one warm-up pass, then a timed pass. Beyond 64 MiB (8x the L2) every access misses every
/// level under LRU in cyclic order, so only the first 16 Ki accesses of one pass are timed.
fn chase(m: &Machine, footprint: u64) -> f64 {
    let mut mem = MemorySystem::new(m);
    let n = footprint / 128;
    let mut t = 0;
    let big = footprint > 64 << 20;
    if !big {
        for i in 0..n {
            t = mem.access(t, 0, &[read(i * 128, 4)]).complete_at + VECTOR_CHASE_OVERHEAD;
        }
    }
    let timed = if big { n.min(16 << 10) } else { n };
    let start = t;
    for i in 0..timed {
        t = mem.access(t, 0, &[read(i * 128, 4)]).complete_at + VECTOR_CHASE_OVERHEAD;
    }
    (t - start) as f64 / timed as f64
}

fn within(model: f64, lo: f64, hi: f64) -> bool {
    model >= lo * 0.9 && model <= hi * 1.1
}

#[test]
fn a_modeled_mi210_pointer_chase_lands_in_the_measured_bands() {
    let m = mi210();
    let kib = 1u64 << 10;
    let mib = 1u64 << 20;
    let bands: &[(&str, u64, f64, f64)] = &[
        ("L1", 4 * kib, 124.0, 128.0),
        ("L1", 16 * kib, 124.0, 128.0),
        ("L2", 64 * kib, 249.0, 302.0),
        ("L2", 4 * mib, 249.0, 302.0),
        ("HBM", 16 * mib, 588.0, 684.0),
        ("HBM", 66 * mib, 588.0, 684.0),
        ("HBM", 256 * mib, 665.0, 741.0),
        ("HBM", 1024 * mib, 665.0, 741.0),
    ];
    for &(level, footprint, lo, hi) in bands {
        let c = chase(m, footprint);
        eprintln!("MI210 model chase {level} at {footprint} bytes: {c:.1} cycles (band {lo}-{hi})");
        assert!(
            within(c, lo, hi),
            "{level} at {footprint} bytes: {c} cycles, band {lo}-{hi}"
        );
    }
}

/// Bytes per second that `cus` CUs reach streaming `lines_per_cu` distinct lines each (`kinds` in
/// turn, 16 lines at a time as one wave64 instruction of 16-byte lanes moves them, each kind its own
/// array), every CU issuing a line whenever its L1 takes one (in time order across CUs), measured over
/// the second half of each CU's lines. A stream with writes starts with an L2
/// full of dirty lines (written beforehand, untimed), as it is in the steady state of a benchmark whose
/// arrays are far larger than the L2.
fn stream(m: &Machine, cus: u32, lines_per_cu: u64, kinds: &[Kind], base: impl Fn(u32) -> u64) -> f64 {
    let mut mem = MemorySystem::new(m);
    let line = m.l1.line_bytes as u64;
    let k = kinds.len() as u64;
    let mut t0 = 0;
    if kinds.contains(&Kind::Write) {
        for i in 0..m.l2.bytes / 128 {
            t0 = mem
                .access(
                    t0,
                    0,
                    &[LineRequest {
                        addr: (1 << 40) + i * 128,
                        bytes: 128,
                        kind: Kind::Write,
                    }],
                )
                .accepted_at;
        }
        t0 += 10_000;
    }
    let mut next: BinaryHeap<Reverse<(u64, u32, u64)>> = (0..cus).map(|cu| Reverse((t0, cu, 0))).collect();
    let (mut start, mut end, mut bytes) = (u64::MAX, 0, 0);
    while let Some(Reverse((t, cu, i))) = next.pop() {
        if i == lines_per_cu {
            continue;
        }
        let (group, within) = (i / 16, i % 16);
        let kind = kinds[(group % k) as usize];
        let addr = base(cu) + (group % k) * (1 << 32) + ((group / k) * 16 + within) * line;
        let r = mem.access(
            t,
            cu,
            &[LineRequest {
                addr,
                bytes: line as u32,
                kind,
            }],
        );
        if i >= lines_per_cu / 2 {
            start = start.min(t);
            end = end.max(r.complete_at);
            bytes += line;
        }
        next.push(Reverse((r.accepted_at + 1, cu, i + 1)));
    }
    bytes as f64 / (end - start) as f64 * m.shader_hz()
}

#[test]
fn mi210_cus_streaming_from_hbm_reach_the_measured_bandwidth() {
    let m = mi210();
    let cus = m.topology.cus();
    // 4096 lines of 64 B per CU: 27 MiB in all, each line read once.
    let bw = stream(m, cus, 4096, &[Kind::Read], |cu| cu as u64 * (1 << 24));
    eprintln!("MI210 model: HBM read {:.3} TB/s", bw / 1e12);
    assert!(within(bw / 1e12, 1.17, 1.40), "HBM read {:.3} TB/s", bw / 1e12);
}

#[test]
fn mi210_write_and_l2_streams_land_near_the_measured_bandwidths_and_mixing_costs_turnarounds() {
    let m = mi210();
    let cus = m.topology.cus();
    let tbs = |bw: f64| bw / 1e12;
    let write = tbs(stream(m, cus, 4096, &[Kind::Write], |cu| cu as u64 * (1 << 24)));
    assert!(within(write, 1.52, 1.52), "HBM write {write:.3} TB/s");
    // This stream starts with an L2 full of dirty lines, so every read miss also writes one back: the
    // channels turn direction all the time, and a triad runs below both pure streams (the measured triad,
    // 1.23 TB/s, is the engine's calibration with the stream_triad kernel: jit/tests/timing.rs).
    let reads = tbs(stream(m, cus, 4096, &[Kind::Read], |cu| cu as u64 * (1 << 24)));
    let triad = tbs(stream(m, cus, 3 * 2048, &[Kind::Read, Kind::Read, Kind::Write], |cu| {
        cu as u64 * (1 << 24)
    }));
    let mut no_turnaround = m.clone();
    no_turnaround.hbm.turnaround = 0;
    let smooth = tbs(stream(
        &no_turnaround,
        cus,
        3 * 2048,
        &[Kind::Read, Kind::Read, Kind::Write],
        |cu| cu as u64 * (1 << 24),
    ));
    assert!(
        triad < reads.min(write) && triad < smooth,
        "triad {triad:.3} TB/s, without turnarounds {smooth:.3}, read {reads:.3}, write {write:.3}"
    );
    // L2-resident reads: CU 0 reads 2 MiB into the L2 (untimed); then every CU reads 4096 lines of it
    // (256 KiB, far more than its 16 KiB L1), each starting at its own offset, all from the same cycle.
    let mut mem = MemorySystem::new(m);
    let lines = (2 << 20) / 64u64;
    let mut t0 = 0;
    for i in 0..lines {
        t0 = mem.access(t0, 0, &[read(i * 64, 64)]).accepted_at;
    }
    t0 += 10_000;
    let mut next: BinaryHeap<Reverse<(u64, u32, u64)>> = (0..cus).map(|cu| Reverse((t0, cu, 0))).collect();
    let (start, mut end, mut bytes) = (t0, 0, 0);
    while let Some(Reverse((t, cu, i))) = next.pop() {
        if i == 4096 {
            continue;
        }
        let addr = (i + cu as u64 * 313) % lines * 64;
        let r = mem.access(t, cu, &[read(addr, 64)]);
        end = end.max(r.complete_at);
        bytes += 64;
        next.push(Reverse((r.accepted_at + 1, cu, i + 1)));
    }
    let l2 = tbs(bytes as f64 / (end - start) as f64 * m.shader_hz());
    assert!(within(l2, 3.7, 5.1), "L2 read {l2:.3} TB/s");
    eprintln!("MI210 model: HBM write {write:.3} TB/s, triad {triad:.3} TB/s, L2 read {l2:.3} TB/s");
}

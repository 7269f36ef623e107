//! The SDMA engine (gfx9's SDMA 4): copies, fills, fences and waits on memory.
//!
//! ROCm's runtime copies between host and device memory on it (and falls back to blit kernels without it);
//! tinygrad copies tensors and uploads programs with it. The queue's pointers count bytes, never wrapped; packets
//! never straddle the ring's end (producers pad with NOPs). A packet's first dword holds its operation (bits
//! 0–7) and sub-operation (bits 8–15):
//!
//! | op | packet | dwords |
//! |---|---|---|
//! | 0 | NOP (the count in bits 16–29 skips that many more dwords) | 1 + count |
//! | 1/0 | COPY_LINEAR: bytes − 1, parameters, source, destination | 7 |
//! | 1/4 | COPY_LINEAR_RECT: 3-D sub-rectangles of elements | 13 |
//! | 2 | WRITE_LINEAR: address, dwords − 1, the data | 4 + n |
//! | 5 | FENCE: a 32-bit store | 4 |
//! | 6 | TRAP: the interrupt for an event | 2 |
//! | 8 | POLL_REGMEM: memory, waits until the masked 32-bit value compares true; register (HDP flush): nothing | 6 |
//! | 10 | ATOMIC: 64-bit add (a signal's decrement) | 8 |
//! | 11 | CONST_FILL: a 32-bit (or 8-bit) pattern, the count bytes − 1 for either | 5 |
//! | 13/2 | TIMESTAMP: the GPU clock, 64 bits | 3 |
//!
//! Anything else stops the queue with a report naming it.

use crate::queues::{code, Failure, Queue};
use crate::Driver;

/// Bytes copied at a time (a copy of any size is split).
const CHUNK: u64 = 1 << 20;

impl Driver {
    /// Runs the published packets of SDMA queue `q`; false when none is published.
    pub fn sdma_step(&self, q: &Queue) -> Result<bool, Failure> {
        let (mut at, end) = (self.read_u64(q.rptr)?, self.published(q)?);
        if at >= end {
            return Ok(false);
        }
        // shared virtual memory the program has unmapped since is no longer the GPUs'
        self.svm_check();
        let dword = |byte: u64| self.mem.read_u32(q.ring + byte % q.ring_size);
        while at < end {
            let h = dword(at)?;
            let (op, sub) = (h & 0xff, (h >> 8) & 0xff);
            let len = match (op, sub) {
                (0, _) => 1 + ((h >> 16) & 0x3fff) as u64,
                (1, 0) => 7,
                (1, 4) => 13,
                (2, _) => 4 + (dword(at + 12)? & 0xf_ffff) as u64 + 1,
                (5, _) => 4,
                (6, _) => 2,
                (8, _) => 6,
                (10, _) => 8,
                (11, _) => 5,
                (13, 2) => 3,
                _ => {
                    return Err(Failure::Error {
                        code: code::INVALID_PACKET,
                        report: format!(
                            "SDMA queue {}: packet {h:#010x} (op {op}, sub-op {sub}) is not run by the emulated engine",
                            q.id
                        ),
                    })
                }
            };
            if at + len * 4 > end {
                break;
            }
            let p: Vec<u32> = (0..len).map(|i| dword(at + 4 * i)).collect::<Result<_, _>>()?;
            let addr = |i: usize| p[i] as u64 | (p[i + 1] as u64) << 32;
            match (op, sub) {
                (0, _) => {}
                (1, 0) => {
                    let (src, dst, bytes) = (addr(3), addr(5), (p[1] & 0x3f_ffff) as u64 + 1);
                    let start = profiler_hooks::record::now_ns();
                    self.copy(src, dst, bytes)?;
                    self.record_copy(src, dst, bytes, start);
                }
                (1, 4) => {
                    let start = profiler_hooks::record::now_ns();
                    let (src, dst, bytes) = self.copy_rect(&p)?;
                    self.record_copy(src, dst, bytes, start);
                }
                (2, _) => {
                    let bytes: Vec<u8> = p[4..].iter().flat_map(|w| w.to_le_bytes()).collect();
                    self.mem.write(addr(1), &bytes)?;
                }
                (5, _) => self.mem.write_u32(addr(1), p[3])?,
                (6, _) => self.events.interrupt(p[1] & 0x0fff_ffff),
                (8, _) => {
                    if h & (1 << 31) != 0 {
                        let (function, address, reference, mask) = ((h >> 28) & 7, addr(1), p[3], p[4]);
                        self.wait_for(q, || {
                            Ok(crate::pm4::compare(
                                function,
                                self.mem.read_u32(address)? & mask,
                                reference,
                            ))
                        })?;
                    }
                }
                (10, _) => {
                    let operation = h >> 25;
                    if operation != 47 {
                        return Err(Failure::Error {
                            code: code::INVALID_PACKET,
                            report: format!("SDMA queue {}: ATOMIC operation {operation} (only ADD64 is run)", q.id),
                        });
                    }
                    let add = addr(3);
                    self.mem.atomic_u64(addr(1), |v| v.wrapping_add(add))?;
                }
                (11, _) => {
                    // the count is bytes - 1 for either fill size (ROCr's and mesa's gfx9 fills)
                    let (address, pattern) = (addr(1), p[3]);
                    let bytes = (p[4] & 0x3f_ffff) as u64 + 1;
                    let fill: Vec<u8> = if h >> 30 == 2 {
                        pattern
                            .to_le_bytes()
                            .iter()
                            .copied()
                            .cycle()
                            .take(bytes as usize)
                            .collect()
                    } else {
                        vec![pattern as u8; bytes as usize]
                    };
                    self.mem.write(address, &fill)?;
                }
                (13, 2) => self.write_u64(addr(1), self.clock.now())?,
                _ => unreachable!("lengths are known only for the packets run here"),
            }
            at += len * 4;
            self.write_u64(q.rptr, at)?;
        }
        self.events.nudge();
        Ok(true)
    }

    /// A copy of `bytes` from `src` to `dst` that began at `start` (real time) into the profile, when the
    /// process is profiled: its direction from where the two addresses are (a GPU's memory or the host's).
    fn record_copy(&self, src: u64, dst: u64, bytes: u64, start: u64) {
        let Some(prof) = gpu::profile::get() else { return };
        let (src_agent, dst_agent) = (self.agent_holding(src), self.agent_holding(dst));
        let side = |a: u32| if a == 0 { "HOST" } else { "DEVICE" };
        prof.write(&profiler_hooks::record::Record::Copy(
            profiler_hooks::record::CopyRecord {
                id: prof.next_copy(),
                pid: prof.pid,
                bytes,
                src,
                dst,
                direction: format!("{}_TO_{}", side(src_agent), side(dst_agent)),
                src_agent,
                dst_agent,
                start_ns: start,
                end_ns: profiler_hooks::record::now_ns(),
            },
        ));
    }

    /// Copies `bytes` from `src` to `dst` through the GPUs' mappings (both checked).
    fn copy(&self, src: u64, dst: u64, bytes: u64) -> Result<(), Failure> {
        let mut buf = vec![0u8; bytes.min(CHUNK) as usize];
        let mut done = 0;
        while done < bytes {
            let n = (bytes - done).min(CHUNK) as usize;
            self.mem.read(src + done, &mut buf[..n])?;
            self.mem.write(dst + done, &buf[..n])?;
            done += n as u64;
        }
        Ok(())
    }

    /// COPY_LINEAR_RECT: a `rect_x × rect_y × rect_z` box of elements (2^size bytes) between two pitched 3-D
    /// arrays.
    /// Returns the two base addresses and the bytes copied.
    fn copy_rect(&self, p: &[u32]) -> Result<(u64, u64, u64), Failure> {
        let element = 1u64 << (p[0] >> 29);
        let base = |i: usize| p[i] as u64 | (p[i + 1] as u64) << 32;
        let (src, dst) = (base(1), base(6));
        let (sx, sy, sz) = (
            (p[3] & 0x3fff) as u64,
            ((p[3] >> 16) & 0x3fff) as u64,
            (p[4] & 0x7ff) as u64,
        );
        let (s_pitch, s_slice) = (((p[4] >> 13) as u64) + 1, (p[5] & 0xfff_ffff) as u64 + 1);
        let (dx, dy, dz) = (
            (p[8] & 0x3fff) as u64,
            ((p[8] >> 16) & 0x3fff) as u64,
            (p[9] & 0x7ff) as u64,
        );
        let (d_pitch, d_slice) = (((p[9] >> 13) as u64) + 1, (p[10] & 0xfff_ffff) as u64 + 1);
        let (rx, ry, rz) = (
            (p[11] & 0x3fff) as u64 + 1,
            ((p[11] >> 16) & 0x3fff) as u64 + 1,
            (p[12] & 0x7ff) as u64 + 1,
        );
        for z in 0..rz {
            for y in 0..ry {
                let from = src + ((sz + z) * s_slice + (sy + y) * s_pitch + sx) * element;
                let to = dst + ((dz + z) * d_slice + (dy + y) * d_pitch + dx) * element;
                self.copy(from, to, rx * element)?;
            }
        }
        Ok((src, dst, rx * ry * rz * element))
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::{self, eventually, Host, TestQueue, QUEUE_SDMA};

    /// Where things lie in the test's memory: the ring, the read and write pointers (bytes), buffers.
    const RING: usize = 0;
    const RING_BYTES: usize = 0x1000;
    const RPTR: usize = 0x1000;
    const WPTR: usize = 0x1008;
    const SRC: usize = 0x2000;
    const DST: usize = 0x3000;
    const FILL: usize = 0x4000;
    const FENCE: usize = 0x5000;
    const STAMP: usize = 0x5008;
    const FLAG: usize = 0x5010;
    const BYTES: usize = 0x6000;

    fn lo(a: u64) -> u32 {
        a as u32
    }
    fn hi(a: u64) -> u32 {
        (a >> 32) as u32
    }

    /// Appends `packet` to the ring at byte `at`; the byte after it.
    fn put(h: &Host, at: usize, packet: &[u32]) -> usize {
        let bytes: Vec<u8> = packet.iter().flat_map(|w| w.to_le_bytes()).collect();
        h.write(RING + at, &bytes);
        at + bytes.len()
    }

    /// Publishes the ring up to byte `end`: the write pointer, then the doorbell.
    fn publish(h: &Host, q: &TestQueue, end: usize) {
        h.set_u64(WPTR, end as u64);
        q.ring(end as u64);
    }

    #[test]
    fn copies_fills_fences_polls_and_timestamps_run_in_order_and_the_read_pointer_counts_bytes() {
        let d = testing::driver();
        let h = Host::mapped(&d, BYTES);
        let q = TestQueue::create(&d, QUEUE_SDMA, h.at(RING), RING_BYTES as u32, h.at(WPTR), h.at(RPTR));
        let pattern: Vec<u8> = (0..100u8).collect();
        h.write(SRC, &pattern);
        h.write(FILL, &[0xee; 40]);

        // COPY_LINEAR of 100 bytes; CONST_FILL of 32 bytes with a dword (count: bytes - 1, as ROCr and mesa
        // write it on gfx9); TIMESTAMP; a 2-dword NOP; FENCE
        let mut at = put(
            &h,
            0,
            &[
                1,
                100 - 1,
                0,
                lo(h.at(SRC)),
                hi(h.at(SRC)),
                lo(h.at(DST)),
                hi(h.at(DST)),
            ],
        );
        at = put(
            &h,
            at,
            &[11 | 2 << 30, lo(h.at(FILL)), hi(h.at(FILL)), 0x1234_5678, 32 - 1],
        );
        at = put(&h, at, &[13 | 2 << 8, lo(h.at(STAMP)), hi(h.at(STAMP))]);
        at = put(&h, at, &[2 << 16, 0xdead, 0xbeef]);
        at = put(&h, at, &[5, lo(h.at(FENCE)), hi(h.at(FENCE)), 2015]);
        publish(&h, &q, at);
        assert!(eventually(|| h.u32(FENCE) == 2015), "the fence is written");
        assert_eq!(
            h.u64(RPTR),
            at as u64,
            "the read pointer is past every packet, in bytes"
        );
        assert_eq!(h.read(DST, 100), pattern);
        assert_eq!(h.read(DST + 100, 4), [0; 4], "nothing copied past the count");
        let fill = h.read(FILL, 40);
        assert!(
            fill[..32].chunks(4).all(|w| w == 0x1234_5678u32.to_le_bytes()),
            "{fill:x?}"
        );
        assert_eq!(fill[32..], [0xee; 8], "nothing filled past the count");
        assert_ne!(h.u64(STAMP), 0, "the GPU clock");

        // POLL_REGMEM (memory, equal) holds the packets after it until the value is there
        let poll = 8 | 1 << 31 | 3 << 28;
        let start = at;
        at = put(&h, at, &[poll, lo(h.at(FLAG)), hi(h.at(FLAG)), 7, 0xffff_ffff, 0]);
        at = put(&h, at, &[5, lo(h.at(FENCE)), hi(h.at(FENCE)), 2016]);
        publish(&h, &q, at);
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert_eq!(h.u32(FENCE), 2015, "the fence waits behind the poll");
        assert_eq!(h.u64(RPTR), start as u64);
        h.set_u32(FLAG, 7);
        assert!(
            eventually(|| h.u32(FENCE) == 2016),
            "the poll is satisfied and the fence written"
        );
        assert_eq!(h.u64(RPTR), at as u64);
    }
}

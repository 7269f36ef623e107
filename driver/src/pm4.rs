//! The PM4 command processor of gfx9 compute queues: tinygrad's compute queue, and the indirect buffers of AQL
//! vendor packets (ROCm's cache invalidation after a code-object load, tinygrad's waits and signals).
//!
//! A packet is a header — type 3 in bits 30–31, body dwords − 1 in bits 16–29, opcode in bits 8–15 — and its
//! body. The queue's read and write pointers count dwords, never wrapped; a packet may straddle the ring's end.
//!
//! | opcode | packet | what the emulated CP does |
//! |---|---|---|
//! | 0x10 | NOP | nothing |
//! | 0x15 | DISPATCH_DIRECT | runs the kernel the compute registers describe ([`Registers`]) |
//! | 0x23 | PRED_EXEC | runs the next N dwords if the XCC mask names XCC 0 (the emulated GPU's one processor) |
//! | 0x3C | WAIT_REG_MEM | memory: waits until the 32-bit value compares true; register (HDP flush): nothing |
//! | 0x3F | INDIRECT_BUFFER | runs the buffer |
//! | 0x40 | COPY_DATA | memory, immediate or GPU clock to memory |
//! | 0x46 | EVENT_WRITE | nothing: every dispatch is complete when the next packet runs |
//! | 0x49 | RELEASE_MEM | writes 32 or 64 bits of data or the GPU clock, then raises the interrupt if asked |
//! | 0x58 | ACQUIRE_MEM | invalidating the instruction cache forgets decoded and translated code |
//! | 0x76 | SET_SH_REG | sets compute registers |
//! | 0x79 | SET_UCONFIG_REG | accepted (performance counters and thread traces are not emulated) |
//!
//! Any other opcode stops the queue with a report naming it.

use std::collections::HashMap;

use crate::dispatch::Job;
use crate::queues::{code, Failure, Queue};
use crate::Driver;

/// Compute registers (dword addresses, GC 9.4.x).
mod reg {
    pub const SH_BASE: u32 = 0x2c00;
    pub const NUM_THREAD_X: u32 = 0x2e07;
    pub const PGM_LO: u32 = 0x2e0c;
    pub const PGM_HI: u32 = 0x2e0d;
    pub const PGM_RSRC1: u32 = 0x2e12;
    pub const PGM_RSRC2: u32 = 0x2e13;
    pub const TMPRING_SIZE: u32 = 0x2e18;
    pub const PGM_RSRC3: u32 = 0x2e2d;
    pub const USER_DATA_0: u32 = 0x2e40;
}

/// Opcodes.
mod op {
    pub const NOP: u32 = 0x10;
    pub const DISPATCH_DIRECT: u32 = 0x15;
    pub const PRED_EXEC: u32 = 0x23;
    pub const WAIT_REG_MEM: u32 = 0x3c;
    pub const INDIRECT_BUFFER: u32 = 0x3f;
    pub const COPY_DATA: u32 = 0x40;
    pub const EVENT_WRITE: u32 = 0x46;
    pub const RELEASE_MEM: u32 = 0x49;
    pub const ACQUIRE_MEM: u32 = 0x58;
    pub const SET_SH_REG: u32 = 0x76;
    pub const SET_UCONFIG_REG: u32 = 0x79;
}

/// `CP_COHER_CNTL`'s instruction-cache invalidation bit (SH_ICACHE_ACTION_ENA).
const ICACHE: u32 = 1 << 29;

/// The compute registers a queue has set.
#[derive(Debug, Default, Clone)]
pub struct Registers {
    sh: HashMap<u32, u32>,
}

impl Registers {
    fn get(&self, reg: u32) -> u32 {
        self.sh.get(&reg).copied().unwrap_or(0)
    }
}

/// Where a stream of packets is.
pub enum Stream<'a> {
    Words(&'a [u32]),
    Memory { address: u64, dwords: u64 },
}

/// What a packet asks of the stream it is in.
enum Next {
    Go,
    /// Skip this many dwords after the packet (PRED_EXEC for another XCC).
    Skip(u64),
}

impl Driver {
    /// Runs the published packets of PM4 queue `q`; false when none is published.
    pub fn pm4_step(&self, q: &Queue, regs: &mut Registers) -> Result<bool, Failure> {
        let (mut at, end) = (self.read_u64(q.rptr)?, self.published(q)?);
        if at >= end {
            return Ok(false);
        }
        let ring_dwords = q.ring_size / 4;
        let dword = |i: u64| self.mem.read_u32(q.ring + (i % ring_dwords) * 4);
        while at < end {
            let header = dword(at)?;
            let len = packet_len(header);
            if at + len > end {
                break; // not all of it is published yet
            }
            let body: Vec<u32> = (1..len).map(|i| dword(at + i)).collect::<Result<_, _>>()?;
            let next = self.pm4_packet(q, regs, header, &body)?;
            at += len;
            if let Next::Skip(n) = next {
                at += n;
            }
            self.write_u64(q.rptr, at)?;
        }
        self.events.nudge();
        Ok(true)
    }

    /// Runs a whole stream of packets (an indirect buffer).
    pub fn pm4_run(&self, q: &Queue, stream: Stream<'_>, regs: &mut Registers) -> Result<(), Failure> {
        let words = match stream {
            Stream::Words(w) => w.to_vec(),
            Stream::Memory { address, dwords } => {
                let mut bytes = vec![0u8; dwords as usize * 4];
                self.mem.read(address, &mut bytes)?;
                bytes
                    .chunks_exact(4)
                    .map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes")))
                    .collect()
            }
        };
        let mut at = 0usize;
        while at < words.len() {
            let header = words[at];
            let len = packet_len(header) as usize;
            let Some(body) = words.get(at + 1..at + len) else {
                return Err(Failure::Error {
                    code: code::INVALID_PACKET,
                    report: format!("PM4 packet {header:#010x} runs past the end of its indirect buffer"),
                });
            };
            let next = self.pm4_packet(q, regs, header, body)?;
            at += len;
            if let Next::Skip(n) = next {
                at += n as usize;
            }
        }
        Ok(())
    }

    fn pm4_packet(&self, q: &Queue, regs: &mut Registers, header: u32, body: &[u32]) -> Result<Next, Failure> {
        match header >> 30 {
            3 => {}
            // type 2: a one-dword filler; type 0: register writes the compute CP takes from SET_SH_REG
            2 | 0 => return Ok(Next::Go),
            _ => {
                return Err(Failure::Error {
                    code: code::INVALID_PACKET,
                    report: format!("queue {}: PM4 header {header:#010x} is of type 1", q.id),
                })
            }
        }
        let b = |i: usize| body.get(i).copied().unwrap_or(0);
        match (header >> 8) & 0xff {
            op::NOP | op::EVENT_WRITE | op::SET_UCONFIG_REG => {}
            op::SET_SH_REG => {
                for (i, v) in body.iter().skip(1).enumerate() {
                    regs.sh.insert(reg::SH_BASE + b(0) + i as u32, *v);
                }
            }
            op::ACQUIRE_MEM => {
                if b(0) & ICACHE != 0 {
                    self.code.flush();
                }
            }
            op::PRED_EXEC => {
                let (mask, count) = (b(0) >> 24, b(0) & 0x3fff);
                if mask & 1 == 0 {
                    return Ok(Next::Skip(count as u64));
                }
            }
            op::INDIRECT_BUFFER => {
                let address = (b(0) & !3) as u64 | ((b(1) & 0xffff) as u64) << 32;
                let dwords = (b(2) & 0xf_ffff) as u64;
                self.pm4_run(q, Stream::Memory { address, dwords }, regs)?;
            }
            op::WAIT_REG_MEM => {
                let (function, space) = (b(0) & 7, (b(0) >> 4) & 3);
                if space == 1 {
                    let address = (b(1) & !3) as u64 | (b(2) as u64) << 32;
                    let (reference, mask) = (b(3), b(4));
                    self.wait_for(q, || {
                        let v = self.mem.read_u32(address)? & mask;
                        Ok(compare(function, v, reference))
                    })?;
                }
            }
            op::RELEASE_MEM => {
                let (data_sel, int_sel) = (b(1) >> 29, (b(1) >> 24) & 7);
                let address = (b(2) & !3) as u64 | (b(3) as u64) << 32;
                match data_sel {
                    0 => {}
                    1 => self.mem.write_u32(address, b(4))?,
                    2 => self.write_u64(address, b(4) as u64 | (b(5) as u64) << 32)?,
                    3 => self.write_u64(address, self.clock.now())?,
                    other => {
                        return Err(Failure::Error {
                            code: code::INVALID_PACKET,
                            report: format!("queue {}: RELEASE_MEM with data select {other}", q.id),
                        })
                    }
                }
                if int_sel != 0 {
                    self.events.interrupt(b(6));
                }
            }
            op::COPY_DATA => {
                let (src, dst, wide) = (b(0) & 0xf, (b(0) >> 8) & 0xf, b(0) & (1 << 16) != 0);
                let at = |lo: u32, hi: u32| (lo as u64) | (hi as u64) << 32;
                let value = match src {
                    1 | 2 => {
                        let a = at(b(1), b(2));
                        if wide {
                            self.read_u64(a)?
                        } else {
                            self.mem.read_u32(a)? as u64
                        }
                    }
                    5 => at(b(1), b(2)),
                    9 => self.clock.now(),
                    _ => return Ok(Next::Go), // performance counters and registers: not emulated
                };
                if matches!(dst, 1 | 2 | 5) {
                    let a = at(b(3), b(4));
                    if wide {
                        self.write_u64(a, value)?;
                    } else {
                        self.mem.write_u32(a, value as u32)?;
                    }
                }
            }
            op::DISPATCH_DIRECT => self.pm4_dispatch(q, regs, [b(0), b(1), b(2)])?,
            other => {
                return Err(Failure::Error {
                    code: code::INVALID_PACKET,
                    report: format!(
                        "queue {}: PM4 opcode {other:#x} (header {header:#010x}) is not run by the emulated command processor",
                        q.id
                    ),
                })
            }
        }
        Ok(Next::Go)
    }

    /// DISPATCH_DIRECT: `groups` workgroups of the kernel the compute registers describe.
    fn pm4_dispatch(&self, q: &Queue, regs: &Registers, groups: [u32; 3]) -> Result<(), Failure> {
        let entry = ((regs.get(reg::PGM_HI) as u64) << 32 | regs.get(reg::PGM_LO) as u64) << 8;
        let (rsrc1, rsrc2, rsrc3) = (
            regs.get(reg::PGM_RSRC1),
            regs.get(reg::PGM_RSRC2),
            regs.get(reg::PGM_RSRC3),
        );
        let block: [u32; 3] = std::array::from_fn(|i| regs.get(reg::NUM_THREAD_X + i as u32) & 0xffff);
        let user_count = (rsrc2 >> 1) & 0x1f;
        let user_sgprs: Vec<u32> = (0..user_count).map(|i| regs.get(reg::USER_DATA_0 + i)).collect();
        // LDS in 128-dword granules; private bytes per lane from the wave size (in KiB) when scratch is on
        let lds = ((rsrc2 >> 15) & 0x1ff) * 512;
        let wave_kib = (regs.get(reg::TMPRING_SIZE) >> 12) & 0x1fff;
        let private = if rsrc2 & 1 != 0 { wave_kib * 1024 / 64 } else { 0 };
        let mut kd = [0u8; 64];
        kd[0..4].copy_from_slice(&lds.to_le_bytes());
        kd[4..8].copy_from_slice(&private.to_le_bytes());
        kd[44..48].copy_from_slice(&rsrc3.to_le_bytes());
        kd[48..52].copy_from_slice(&rsrc1.to_le_bytes());
        kd[52..56].copy_from_slice(&rsrc2.to_le_bytes());
        let family = isa_amdgpu::codeobj::target::processor_by_name(self.gpus[q.gpu].preset.gfx).map(|p| p.family);
        let descriptor = isa_amdgpu::codeobj::KernelDescriptor::parse(&kd, family).ok_or_else(|| Failure::Error {
            code: code::INVALID_PACKET,
            report: "DISPATCH_DIRECT: the compute registers describe no kernel".into(),
        })?;
        let grid: [u32; 3] = std::array::from_fn(|i| groups[i].saturating_mul(block[i].max(1)));
        let job = Job {
            descriptor,
            descriptor_address: entry,
            entry,
            grid,
            block,
            kernarg_address: 0,
            group_segment_size: lds,
            private_segment_size: private,
            packet: 0,
            queue: 0,
            user_sgprs: Some(user_sgprs),
            cooperative: q.cooperative.load(std::sync::atomic::Ordering::Acquire),
        };
        self.run_job(q, &job)
    }
}

/// Dwords of the packet `header` starts: type 3 its body and header, other types one.
fn packet_len(header: u32) -> u64 {
    if header >> 30 == 3 {
        ((header >> 16) & 0x3fff) as u64 + 2
    } else {
        1
    }
}

/// WAIT_REG_MEM's and POLL_REGMEM's comparison `function` of `value` with `reference`.
pub fn compare(function: u32, value: u32, reference: u32) -> bool {
    match function {
        0 => true,
        1 => value < reference,
        2 => value <= reference,
        3 => value == reference,
        4 => value != reference,
        5 => value >= reference,
        6 => value > reference,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packet_lengths_and_comparisons_are_the_pm4_rules() {
        assert_eq!(packet_len(0xc005_3c00), 7, "WAIT_REG_MEM: six body dwords");
        assert_eq!(packet_len(0xc000_4600), 2, "EVENT_WRITE: one");
        assert_eq!(packet_len(0x8000_0000), 1, "type 2 filler");
        assert!(compare(5, 3, 2) && compare(5, 2, 2) && !compare(5, 1, 2));
        assert!(compare(3, 7, 7) && !compare(3, 7, 8));
        assert!(compare(4, 1, 2) && !compare(7, 1, 1));
    }
}

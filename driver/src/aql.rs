//! The AQL packet processor: what a GPU's command processor does with an AQL queue.
//!
//! The queue's `amd_queue_t` is 128 bytes before its read pointer (`read_dispatch_id`), which reports the
//! processor's own read index ([`Queue::read`]) and is never read back. Packets are 64 bytes; a
//! packet is taken when it is published — below the write pointer and the doorbell, its header no longer
//! INVALID — and run in order:
//!
//! - KERNEL_DISPATCH: the kernel descriptor at `kernel_object` (code object v3+, or ROCr's own blit kernels'
//!   legacy `amd_kernel_code_t`, whose fields the engine reads at the same offsets) runs on the engine; the
//!   dispatch packet's and the queue's addresses are what kernels asking for them get;
//! - BARRIER_AND / BARRIER_OR: waits for all / any of the dependency signals to reach 0;
//! - VENDOR_SPECIFIC with format 1: a PM4 indirect buffer ([`crate::pm4`]).
//!
//! Then, as the hardware: the completion signal gets the packet's start and end times when the queue has
//! profiling on (`queue_properties` bit 3), is decremented, and its event is raised through its mailbox; the
//! header becomes INVALID and the read pointer moves past it.

use crate::dispatch::Job;
use crate::queues::{code, Failure, Queue};
use crate::Driver;

const PACKET: u64 = 64;
const TYPE_VENDOR: u16 = 0;
pub(crate) const TYPE_INVALID: u16 = 1;
pub(crate) const TYPE_DISPATCH: u16 = 2;
pub(crate) const TYPE_BARRIER_AND: u16 = 3;
const TYPE_BARRIER_OR: u16 = 5;
/// The entry offset of a legacy `amd_kernel_code_t` header (its size): code object v3+ kernel descriptors are
/// 64 bytes and their code is elsewhere.
const LEGACY_HEADER: i64 = 256;
/// The vendor-specific format of a PM4 indirect buffer (`AMD_AQL_FORMAT_PM4_IB`).
const FORMAT_PM4_IB: u16 = 1;

/// `amd_queue_t` fields, from its start.
const QUEUE_PROPERTIES: u64 = 180;
const QUEUE_INACTIVE_SIGNAL: u64 = 192;
const ENABLE_PROFILING: u32 = 1 << 3;

/// `amd_signal_t` fields.
const SIGNAL_VALUE: u64 = 8;
const SIGNAL_MAILBOX: u64 = 16;
const SIGNAL_EVENT_ID: u64 = 24;
const SIGNAL_START_TS: u64 = 32;
const SIGNAL_END_TS: u64 = 40;

impl Driver {
    /// Runs the next published packet of AQL queue `q`; false when none is published.
    pub fn aql_step(&self, q: &Queue) -> Result<bool, Failure> {
        let index = q.read.load(std::sync::atomic::Ordering::Acquire);
        if index >= self.published(q)? {
            return Ok(false);
        }
        let slot = q.ring + (index % (q.ring_size / PACKET)) * PACKET;
        // the header first: a producer writes the body, then publishes the header (release)
        let header = self.mem.read_u32(slot)? as u16;
        let kind = header & 0xff;
        if kind == TYPE_INVALID {
            return Ok(false); // reserved, not yet written
        }
        std::sync::atomic::fence(std::sync::atomic::Ordering::Acquire);
        let mut p = [0u8; 64];
        self.mem.read(slot, &mut p)?;
        if crate::hooks::trace() {
            eprintln!(
                "wavejit-driver: queue {} (GPU {}) packet {index}: type {kind}",
                q.id, q.gpu
            );
        }
        let amd_queue = q.rptr - 128;
        let u16_at = |at: usize| u16::from_le_bytes([p[at], p[at + 1]]);
        let u32_at = |at: usize| u32::from_le_bytes(p[at..at + 4].try_into().expect("4 bytes"));
        let u64_at = |at: usize| u64::from_le_bytes(p[at..at + 8].try_into().expect("8 bytes"));
        let start = self.clock.now();
        let completion = match kind {
            TYPE_DISPATCH => {
                let dims = (u16_at(2) & 3).clamp(1, 3) as usize;
                let (mut grid, mut block) = ([1u32; 3], [1u32; 3]);
                for i in 0..dims {
                    block[i] = u16_at(4 + 2 * i) as u32;
                    grid[i] = u32_at(12 + 4 * i);
                }
                let object = u64_at(32);
                let mut kd_bytes = [0u8; 64];
                self.mem.read(object, &mut kd_bytes)?;
                if i64::from_le_bytes(kd_bytes[16..24].try_into().expect("8 bytes")) == LEGACY_HEADER {
                    // a legacy amd_kernel_code_t: ROCr's own blit and fill kernels, which move bytes and compute no
                    // float; their f32 denormal-flush mode changes nothing they do, and the engine runs them with
                    // denormals kept (the mode it computes in)
                    let mut rsrc1 = u32::from_le_bytes(kd_bytes[48..52].try_into().expect("4 bytes"));
                    rsrc1 |= 3 << 16;
                    kd_bytes[48..52].copy_from_slice(&rsrc1.to_le_bytes());
                }
                let family = isa_amdgpu::codeobj::target::processor_by_name(self.gpus[q.gpu].preset.gfx).map(|p| p.family);
                let descriptor = isa_amdgpu::codeobj::KernelDescriptor::parse(&kd_bytes, family).ok_or_else(|| {
                    Failure::Error {
                        code: code::INVALID_PACKET,
                        report: format!("packet {index}: no kernel descriptor at {object:#x}"),
                    }
                })?;
                let job = Job {
                    entry: object.wrapping_add(descriptor.kernel_code_entry_byte_offset as u64),
                    descriptor,
                    descriptor_address: object,
                    grid,
                    block,
                    kernarg_address: u64_at(40),
                    group_segment_size: u32_at(28),
                    private_segment_size: u32_at(24),
                    packet: slot,
                    queue: amd_queue,
                    user_sgprs: None,
                    cooperative: q.cooperative.load(std::sync::atomic::Ordering::Acquire),
                };
                self.run_job(q, &job)?;
                u64_at(56)
            }
            TYPE_BARRIER_AND | TYPE_BARRIER_OR => {
                let deps: Vec<u64> = (0..5).map(|i| u64_at(8 + 8 * i)).filter(|s| *s != 0).collect();
                let and = kind == TYPE_BARRIER_AND;
                self.wait_for(q, || {
                    let mut zero = Vec::with_capacity(deps.len());
                    for s in &deps {
                        zero.push(self.read_u64(s + SIGNAL_VALUE)? as i64 == 0);
                    }
                    Ok(if and {
                        zero.iter().all(|z| *z)
                    } else {
                        deps.is_empty() || zero.iter().any(|z| *z)
                    })
                })?;
                u64_at(56)
            }
            TYPE_VENDOR if u16_at(2) == FORMAT_PM4_IB => {
                // dwords 1..: a PM4 stream (an INDIRECT_BUFFER packet, then a count of the rest)
                let stream: Vec<u32> = (1..16).map(|i| u32_at(4 * i)).collect();
                let ib = crate::pm4::Stream::Words(&stream[..4]);
                self.pm4_run(q, ib, &mut crate::pm4::Registers::default())?;
                u64_at(56)
            }
            other => {
                return Err(Failure::Error {
                    code: if other == TYPE_VENDOR {
                        code::VENDOR_PACKET
                    } else {
                        code::INVALID_PACKET
                    },
                    report: format!(
                        "queue {}: packet {index} has type {other}, which the emulated command processor does not run (kernel dispatch, barrier-AND/OR and PM4 indirect buffers are run)",
                        q.id
                    ),
                })
            }
        };
        let end = self.clock.now();
        // the slot is free and the read pointer past it before the signal says the packet is done
        let header_now = (header & !0xff) | TYPE_INVALID;
        self.mem.write(slot, &header_now.to_le_bytes())?;
        q.read.store(index + 1, std::sync::atomic::Ordering::Release);
        self.write_u64(q.rptr, index + 1)?;
        if completion != 0 {
            let properties = self.mem.read_u32(amd_queue + QUEUE_PROPERTIES)?;
            if properties & ENABLE_PROFILING != 0 {
                self.write_u64(completion + SIGNAL_START_TS, start)?;
                self.write_u64(completion + SIGNAL_END_TS, end)?;
            }
            self.signal_sub(completion, 1)?;
        }
        self.events.nudge();
        Ok(true)
    }

    /// Subtracts `n` from the value of the signal at `signal` and raises its event (mailbox and interrupt), as
    /// the hardware completes a signal.
    pub fn signal_sub(&self, signal: u64, n: u64) -> Result<(), Failure> {
        self.mem.atomic_u64(signal + SIGNAL_VALUE, |v| v.wrapping_sub(n))?;
        self.signal_event(signal)
    }

    /// Raises the event of the signal at `signal`, if it has one: its id into its mailbox, then the interrupt.
    fn signal_event(&self, signal: u64) -> Result<(), Failure> {
        let mailbox = self.read_u64(signal + SIGNAL_MAILBOX)?;
        if mailbox != 0 {
            let id = self.mem.read_u32(signal + SIGNAL_EVENT_ID)?;
            self.write_u64(mailbox, id as u64)?;
            self.events.interrupt(id);
        }
        Ok(())
    }

    /// Tells the runtime of an AQL queue's error the way ROCr's queues hear of one: the error code in the value of
    /// the queue's `queue_inactive_signal`, and its event. False when the queue has no such signal.
    pub fn raise_queue_error(&self, q: &Queue, code: u64) -> bool {
        let amd_queue = q.rptr - 128;
        let Ok(signal) = self.read_u64(amd_queue + QUEUE_INACTIVE_SIGNAL) else {
            return false;
        };
        if signal == 0 || self.write_u64(signal + SIGNAL_VALUE, code).is_err() {
            return false;
        }
        self.signal_event(signal).is_ok()
    }

    /// Runs a kernel for queue `q`, a fault becoming the queue's failure.
    pub fn run_job(&self, q: &Queue, job: &Job) -> Result<(), Failure> {
        use emu_core::engine::EngineError as E;
        use emu_core::sem::ExecError as X;
        // shared virtual memory the program has unmapped since is no longer the GPUs'
        self.svm_check();
        match self.launch(q.gpu, job) {
            Ok(_) => Ok(()),
            Err(e) => {
                if let Some(hint) = gpu::dispatch::hint(&e) {
                    eprintln!("wavejit: {hint}");
                }
                let report = e.to_string();
                Err(match &e {
                    E::Fault { error, .. } => match &**error {
                        X::Memory { fault, .. } => Failure::Memory {
                            address: fault.address,
                            report,
                        },
                        X::Trap(_) => Failure::Error {
                            code: code::TRAP,
                            report,
                        },
                        _ => Failure::Error {
                            code: code::ILLEGAL_INSTRUCTION,
                            report,
                        },
                    },
                    E::IllegalInstruction { .. } => Failure::Error {
                        code: code::ILLEGAL_INSTRUCTION,
                        report,
                    },
                    _ => Failure::Error {
                        code: code::INVALID_PACKET,
                        report,
                    },
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::{eventually, header, signal, AqlQueue, DATA, READ_INDEX, RING, SIGNALS};

    #[test]
    fn a_dispatch_packet_runs_its_kernel_then_moves_the_read_index_and_decrements_the_signal() {
        let rig = AqlQueue::new();
        let h = &rig.h;
        const N: usize = 256;
        let (a, b, c) = (DATA, DATA + 4 * N, DATA + 8 * N);
        let floats = |f: &dyn Fn(usize) -> f32| (0..N).flat_map(|i| f(i).to_le_bytes()).collect::<Vec<u8>>();
        h.write(a, &floats(&|i| i as f32));
        h.write(b, &floats(&|i| 0.5 * i as f32));
        rig.vadd(0, [h.at(a), h.at(b), h.at(c)], N as u32, SIGNALS);

        assert!(
            eventually(|| h.u64(SIGNALS + 8) == 0),
            "the completion signal reaches 0"
        );
        assert_eq!(h.u64(READ_INDEX), 1, "the read index is past the packet");
        assert_eq!(h.u32(RING) & 0xff, super::TYPE_INVALID as u32, "the slot is free again");
        let out = h.read(c, 4 * N);
        for i in 0..N {
            let v = f32::from_le_bytes(out[4 * i..4 * i + 4].try_into().unwrap());
            assert_eq!(v, 1.5 * i as f32, "c[{i}]");
        }
    }

    #[test]
    fn a_barrier_and_packet_waits_for_every_dependency_before_its_signal() {
        let rig = AqlQueue::new();
        let h = &rig.h;
        let first = signal(h, SIGNALS, 1);
        let second = signal(h, SIGNALS + 64, 1);
        let done = signal(h, SIGNALS + 128, 1);
        let mut p = [0u8; 64];
        p[8..16].copy_from_slice(&first.to_le_bytes());
        p[24..32].copy_from_slice(&second.to_le_bytes()); // dependencies may leave gaps
        p[56..64].copy_from_slice(&done.to_le_bytes());
        rig.submit(0, &p, header(super::TYPE_BARRIER_AND));

        std::thread::sleep(std::time::Duration::from_millis(50));
        assert_eq!(h.u64(READ_INDEX), 0, "no dependency is met: the barrier holds");
        h.set_u64(SIGNALS + 8, 0);
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert_eq!(h.u64(READ_INDEX), 0, "one of two is not enough for AND");
        assert_eq!(h.u64(SIGNALS + 128 + 8), 1);
        h.set_u64(SIGNALS + 64 + 8, 0);
        assert!(
            eventually(|| h.u64(SIGNALS + 128 + 8) == 0),
            "the completion signal reaches 0"
        );
        assert_eq!(h.u64(READ_INDEX), 1);

        // a second packet on the same queue: a barrier with no dependencies completes at once
        let again = signal(h, SIGNALS + 192, 2);
        let mut p = [0u8; 64];
        p[56..64].copy_from_slice(&again.to_le_bytes());
        rig.submit(1, &p, header(super::TYPE_BARRIER_AND));
        assert!(
            eventually(|| h.u64(SIGNALS + 192 + 8) == 1),
            "decremented by one, from 2"
        );
        assert_eq!(h.u64(READ_INDEX), 2);
    }
}

//! User-mode queues and the command processors that run them.
//!
//! `CREATE_QUEUE` names a ring buffer, the addresses of its read and write pointers, and a queue type: AQL
//! compute (ROCm's, and tinygrad's on MI300), PM4 compute (tinygrad's) or SDMA (copies). The queue gets a doorbell
//! in its GPU's doorbell page (`doorbell_offset` is the page's offset in the kfd file with the doorbell's byte
//! offset in its low bits) and a thread of its own, its command processor ([`crate::aql`], [`crate::pm4`],
//! [`crate::sdma`]).
//!
//! Programs submit with plain stores — the packets, the write pointer, the doorbell — that no kernel sees. So a
//! processor polls: it runs what lies between its read pointer and the lower of the write pointer and the
//! doorbell, then looks again, spinning at first (a program launching kernels back to back submits within
//! microseconds) and sleeping longer the longer nothing comes, up to a millisecond; any ioctl (a runtime about to
//! wait on its work) wakes it at once. A processor that waits for memory (a barrier packet, WAIT_REG_MEM,
//! POLL_REGMEM) waits in place the same way. The read pointer is written back as the hardware does, in the
//! queue's units: packets (AQL), dwords (PM4), bytes (SDMA), never wrapped.
//!
//! A fault stops the queue, as the hardware evicts it: the runtime hears of it through the memory-exception event
//! or the queue's error signal ([`Driver::queue_failed`]).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use emu_core::memory::MemoryFault;

use crate::args::{Args, Errno};
use crate::{files, Driver};

/// Queue types (`KFD_IOC_QUEUE_TYPE_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Pm4,
    Sdma,
    Aql,
}

/// A queue of the process.
pub struct Queue {
    pub id: u32,
    pub gpu: usize,
    pub kind: Kind,
    pub ring: u64,
    /// Ring bytes.
    pub ring_size: u64,
    pub rptr: u64,
    pub wptr: u64,
    /// An AQL queue's read index, kept by its processor as a command processor keeps its own (`CP_HQD_PQ_RPTR`):
    /// `read_dispatch_id` at `rptr` only reports it, and a runtime may rewrite the whole `amd_queue_t` under a
    /// running queue (tinygrad does, to grow its scratch), which moves nothing.
    pub read: AtomicU64,
    /// Index of its doorbell in its GPU's doorbell page.
    pub doorbell: u32,
    stop: AtomicBool,
    /// UPDATE_QUEUE with percentage 0 suspends it.
    suspended: AtomicBool,
    /// It has global wave sync resources (ALLOC_QUEUE_GWS): its dispatches are cooperative launches.
    pub cooperative: AtomicBool,
    thread: Mutex<Option<std::thread::JoinHandle<()>>>,
}

/// A doorbell no submission has rung yet.
const UNRUNG: u64 = u64::MAX;

impl Queue {
    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::Acquire)
    }
}

/// The queues of the process, and what wakes their processors.
#[derive(Default)]
pub struct Queues {
    live: Mutex<HashMap<u32, Arc<Queue>>>,
    next: AtomicU64,
    /// Bumped by every ioctl: idle processors look at their queues again.
    activity: Mutex<u64>,
    woken: Condvar,
}

impl Queues {
    /// Something happened that may mean new work: idle processors look now.
    pub fn wake(&self) {
        *self.activity.lock().unwrap_or_else(|e| e.into_inner()) += 1;
        self.woken.notify_all();
    }

    fn activity(&self) -> u64 {
        *self.activity.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// How a processor waits for something to change: spinning, then sleeping longer, woken by activity.
pub struct Idle {
    since: Instant,
    seen: u64,
}

/// How long an idle processor spins before it sleeps.
const SPIN: Duration = Duration::from_millis(2);
/// The longest it sleeps between looks.
const MAX_SLEEP: Duration = Duration::from_millis(1);

impl Idle {
    pub fn new(d: &Driver) -> Idle {
        Idle {
            since: Instant::now(),
            seen: d.queues.activity(),
        }
    }

    /// Waits a little before the next look.
    pub fn pause(&mut self, d: &Driver) {
        let idle = self.since.elapsed();
        if idle < SPIN {
            std::hint::spin_loop();
            std::thread::yield_now();
            return;
        }
        let sleep = (idle / 8).min(MAX_SLEEP);
        let g = d.queues.activity.lock().unwrap_or_else(|e| e.into_inner());
        if *g != self.seen {
            self.seen = *g;
            self.since = Instant::now();
            return;
        }
        let g = d
            .queues
            .woken
            .wait_timeout(g, sleep)
            .unwrap_or_else(|e| e.into_inner())
            .0;
        if *g != self.seen {
            self.seen = *g;
            self.since = Instant::now();
        }
    }

    /// Work came: the next wait spins again.
    pub fn busy(&mut self) {
        self.since = Instant::now();
    }
}

/// Why a queue stopped processing.
#[derive(Debug)]
pub enum Failure {
    /// The queue was destroyed.
    Stopped,
    /// A memory access by the command processor or a kernel outside the GPUs' mappings.
    Memory { address: u64, report: String },
    /// Anything else the queue cannot go past: an illegal instruction, a trap, a malformed packet (with the
    /// runtime's error code for it: `queue_inactive_signal` bits).
    Error { code: u64, report: String },
}

impl From<MemoryFault> for Failure {
    fn from(f: MemoryFault) -> Failure {
        Failure::Memory {
            address: f.address,
            report: format!("the command processor's {f}"),
        }
    }
}

/// Error codes of `queue_inactive_signal` (ROCr's `AqlQueue::ExceptionHandler`).
pub mod code {
    pub const INVALID_PACKET: u64 = 1 << 5;
    pub const VENDOR_PACKET: u64 = 1 << 8;
    pub const ILLEGAL_INSTRUCTION: u64 = 1 << 30;
    pub const TRAP: u64 = 1 << 31;
}

impl Driver {
    /// A u64 of GPU memory (through the GPUs' mappings).
    pub fn read_u64(&self, address: u64) -> Result<u64, MemoryFault> {
        let mut b = [0u8; 8];
        self.mem.read(address, &mut b)?;
        Ok(u64::from_le_bytes(b))
    }

    pub fn write_u64(&self, address: u64, v: u64) -> Result<(), MemoryFault> {
        self.mem.write(address, &v.to_le_bytes())
    }

    /// The doorbell of `q` (what the program last stored in it).
    pub fn doorbell(&self, q: &Queue) -> u64 {
        let at = files::kfd_page(q.gpu) + q.doorbell as u64 * 8;
        self.kfd.at(at, 8).map_or(UNRUNG, |p| {
            // SAFETY: the doorbell lies in the GPU's doorbell page inside the kfd file's view; the program stores
            // it whole (64 bits).
            unsafe { AtomicU64::from_ptr(p.cast::<u64>()) }.load(Ordering::Acquire)
        })
    }

    fn set_doorbell(&self, q: &Queue, v: u64) {
        let at = files::kfd_page(q.gpu) + q.doorbell as u64 * 8;
        if let Some(p) = self.kfd.at(at, 8) {
            // SAFETY: as in `doorbell`.
            unsafe { AtomicU64::from_ptr(p.cast::<u64>()) }.store(v, Ordering::Release);
        }
    }

    /// How far `q`'s producer has published: the lower of its write pointer and its doorbell (in the queue's
    /// units; AQL's doorbell holds the last published packet's index, so one past it).
    pub fn published(&self, q: &Queue) -> Result<u64, MemoryFault> {
        let wptr = self.read_u64(q.wptr)?;
        let bell = self.doorbell(q);
        if bell == UNRUNG {
            return Ok(0);
        }
        let bell = if q.kind == Kind::Aql {
            bell.saturating_add(1)
        } else {
            bell
        };
        Ok(wptr.min(bell))
    }

    /// Waits in place until `ready` says yes (polling memory as an idle processor polls its queue), or the queue
    /// is stopped.
    pub fn wait_for(&self, q: &Queue, mut ready: impl FnMut() -> Result<bool, Failure>) -> Result<(), Failure> {
        let mut idle = Idle::new(self);
        loop {
            if q.stopped() {
                return Err(Failure::Stopped);
            }
            if ready()? {
                return Ok(());
            }
            idle.pause(self);
        }
    }

    /// `CREATE_QUEUE`: ring @0, write pointer @8, read pointer @16, doorbell_offset @24 (out), ring size @32,
    /// gpu_id @36, type @40, percentage @44, priority @48, queue_id @52 (out).
    pub fn create_queue(self: &Arc<Driver>, a: &mut Args) -> Result<(), Errno> {
        let gpu = self.gpu_index(a.u32(36)).ok_or(libc::EINVAL)?;
        let kind = match a.u32(40) {
            0 => Kind::Pm4,
            1 | 3 => Kind::Sdma,
            2 => Kind::Aql,
            _ => return Err(libc::EINVAL),
        };
        let (ring, wptr, rptr, ring_size) = (a.u64(0), a.u64(8), a.u64(16), a.u32(32) as u64);
        if ring == 0 || wptr == 0 || rptr == 0 || ring_size == 0 || !ring_size.is_power_of_two() {
            return Err(libc::EINVAL);
        }
        let mut live = self.queues.live.lock().unwrap_or_else(|e| e.into_inner());
        let doorbell = (0..(files::DOORBELL_PAGE / 8) as u32)
            .find(|i| !live.values().any(|q| q.gpu == gpu && q.doorbell == *i))
            .ok_or(libc::ENOSPC)?;
        let id = self.queues.next.fetch_add(1, Ordering::Relaxed) as u32 + 1;
        let q = Arc::new(Queue {
            id,
            gpu,
            kind,
            ring,
            ring_size,
            rptr,
            wptr,
            read: AtomicU64::new(0),
            doorbell,
            stop: AtomicBool::new(false),
            suspended: AtomicBool::new(a.u32(44) & 0xff == 0),
            cooperative: AtomicBool::new(false),
            thread: Mutex::new(None),
        });
        self.set_doorbell(&q, UNRUNG);
        let (d2, q2) = (self.clone(), q.clone());
        let t = std::thread::Builder::new()
            .name(format!("wavejit-cp-{id}"))
            .spawn(move || d2.process(&q2))
            .map_err(|_| libc::ENOMEM)?;
        *q.thread.lock().unwrap_or_else(|e| e.into_inner()) = Some(t);
        live.insert(id, q);
        if let Some(smi) = &self.smi {
            smi.queue_created(gpu);
        }
        a.set_u64(24, files::kfd_page(gpu) | (doorbell as u64 * 8));
        if crate::hooks::trace() {
            eprintln!("wavejit-driver: queue {id}: {kind:?} on GPU {gpu}, ring {ring:#x} ({ring_size} bytes), doorbell {doorbell}");
        }
        a.set_u32(52, id);
        Ok(())
    }

    /// `DESTROY_QUEUE`: queue_id @0. Returns once its processor has stopped.
    pub fn destroy_queue(&self, id: u32) -> Result<(), Errno> {
        let q = self
            .queues
            .live
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&id)
            .ok_or(libc::EINVAL)?;
        q.stop.store(true, Ordering::Release);
        if let Some(smi) = &self.smi {
            smi.queue_destroyed(q.gpu);
        }
        self.queues.wake();
        let t = q.thread.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(t) = t.filter(|t| t.thread().id() != std::thread::current().id()) {
            let _ = t.join();
        }
        Ok(())
    }

    /// `UPDATE_QUEUE`: ring @0, queue_id @8, ring size @12, percentage @16, priority @20. A percentage of 0
    /// suspends the queue, anything else resumes it.
    pub fn update_queue(&self, a: &Args) -> Result<(), Errno> {
        let live = self.queues.live.lock().unwrap_or_else(|e| e.into_inner());
        let q = live.get(&a.u32(8)).ok_or(libc::EINVAL)?;
        q.suspended.store(a.u32(16) & 0xff == 0, Ordering::Release);
        drop(live);
        self.queues.wake();
        Ok(())
    }

    /// `ALLOC_QUEUE_GWS`: queue_id @0, num_gws @4, first_gws @8 (out). The queue's dispatches become cooperative
    /// launches, whose waves meet at global wave sync barriers (the engine's 64 resources per dispatch).
    pub fn alloc_queue_gws(&self, a: &mut Args) -> Result<(), Errno> {
        let live = self.queues.live.lock().unwrap_or_else(|e| e.into_inner());
        let q = live.get(&a.u32(0)).ok_or(libc::EINVAL)?;
        q.cooperative.store(a.u32(4) > 0, Ordering::Release);
        a.set_u32(8, 0);
        Ok(())
    }

    /// A queue's processor: runs what is published until the queue is destroyed or fails.
    fn process(self: &Arc<Driver>, q: &Queue) {
        let mut idle = Idle::new(self);
        let mut registers = crate::pm4::Registers::default();
        loop {
            if q.stopped() {
                return;
            }
            if q.suspended.load(Ordering::Acquire) {
                idle.pause(self);
                continue;
            }
            let ran = match q.kind {
                Kind::Aql => self.aql_step(q),
                Kind::Pm4 => self.pm4_step(q, &mut registers),
                Kind::Sdma => self.sdma_step(q),
            };
            match ran {
                Ok(true) => idle.busy(),
                Ok(false) => idle.pause(self),
                Err(Failure::Stopped) => return,
                Err(f) => {
                    self.queue_failed(q, f);
                    return;
                }
            }
        }
    }

    /// A queue that cannot go on: the emulator's report on stderr, then what the runtime hears from a GPU — the
    /// memory-exception event for a memory fault, the queue's error signal (AQL) or the hardware-exception event
    /// for anything else. The queue processes nothing more.
    pub fn queue_failed(&self, q: &Queue, f: Failure) {
        let gpu = &self.gpus[q.gpu];
        match f {
            Failure::Stopped => {}
            Failure::Memory { address, report } => {
                eprintln!("wavejit: GPU fault on GPU {} ({}): {report}", q.gpu, gpu.preset.name);
                self.events.memory_fault(gpu.gpu_id, address);
            }
            Failure::Error { code, report } => {
                eprintln!("wavejit: GPU fault on GPU {} ({}): {report}", q.gpu, gpu.preset.name);
                if !(q.kind == Kind::Aql && self.raise_queue_error(q, code)) {
                    self.events.hw_exception(gpu.gpu_id);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::{self, create_queue_args, eventually, Host, TestQueue, QUEUE_AQL, QUEUE_SDMA};

    const RING: usize = 0;
    const RPTR: usize = 0x1000;
    const WPTR: usize = 0x1008;
    const FENCE: usize = 0x2000;

    /// An SDMA FENCE packet writing `value` to `address`.
    fn fence(address: u64, value: u32) -> Vec<u8> {
        [5, address as u32, (address >> 32) as u32, value]
            .iter()
            .flat_map(|w: &u32| w.to_le_bytes())
            .collect()
    }

    #[test]
    fn create_queue_refuses_what_no_queue_can_be_and_gives_each_queue_its_own_doorbell() {
        let d = testing::driver();
        let h = Host::mapped(&d, 0x3000);
        let gpu_id = d.gpus[0].gpu_id;
        let args = |gpu_id, kind, size| create_queue_args(gpu_id, kind, h.at(RING), size, h.at(WPTR), h.at(RPTR), 100);
        for (mut a, what) in [
            (args(gpu_id, QUEUE_SDMA, 3000), "a ring size not a power of two"),
            (args(gpu_id, 4, 4096), "an unknown queue type"),
            (args(gpu_id ^ 1, QUEUE_SDMA, 4096), "an unknown GPU"),
        ] {
            assert_eq!(testing::ioctl(&d, 0x02, &mut a), Err(libc::EINVAL), "{what}");
        }
        let first = TestQueue::create(&d, QUEUE_SDMA, h.at(RING), 4096, h.at(WPTR), h.at(RPTR));
        let second = TestQueue::create(&d, QUEUE_AQL, h.at(RING), 4096, h.at(WPTR), h.at(RPTR));
        let (a, b) = (first.doorbell_offset(), second.doorbell_offset());
        assert_ne!(a, b);
        for offset in [a, b] {
            // GPU 0's doorbell page, one 8-byte doorbell
            assert_eq!(offset & !(crate::files::DOORBELL_PAGE - 1), crate::files::kfd_page(0));
            assert_eq!(offset % 8, 0);
        }
        let id = first.id;
        drop(first);
        let mut destroy = id.to_le_bytes();
        assert_eq!(
            testing::ioctl(&d, 0x03, &mut destroy),
            Err(libc::EINVAL),
            "destroyed already"
        );
        let third = TestQueue::create(&d, QUEUE_SDMA, h.at(RING), 4096, h.at(WPTR), h.at(RPTR));
        assert_eq!(third.doorbell_offset(), a, "a destroyed queue's doorbell is free again");
    }

    #[test]
    fn a_processor_runs_only_what_both_the_write_pointer_and_the_doorbell_publish() {
        let d = testing::driver();
        let h = Host::mapped(&d, 0x3000);
        let q = TestQueue::create(&d, QUEUE_SDMA, h.at(RING), 4096, h.at(WPTR), h.at(RPTR));
        h.write(RING, &fence(h.at(FENCE), 1));
        h.write(RING + 16, &fence(h.at(FENCE + 4), 2));
        h.set_u64(WPTR, 32);
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert_eq!(h.u32(FENCE), 0, "the write pointer alone publishes nothing");
        q.ring(16);
        assert!(eventually(|| h.u32(FENCE) == 1));
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert_eq!(h.u32(FENCE + 4), 0, "the doorbell says one packet");
        assert_eq!(h.u64(RPTR), 16);
        q.ring(32);
        assert!(eventually(|| h.u32(FENCE + 4) == 2));
        assert_eq!(h.u64(RPTR), 32);
    }

    #[test]
    fn a_queue_at_zero_percent_is_suspended_until_update_queue_resumes_it() {
        let d = testing::driver();
        let h = Host::mapped(&d, 0x3000);
        let a = create_queue_args(
            d.gpus[0].gpu_id,
            QUEUE_SDMA,
            h.at(RING),
            4096,
            h.at(WPTR),
            h.at(RPTR),
            0,
        );
        let q = TestQueue::with_args(&d, a);
        h.write(RING, &fence(h.at(FENCE), 7));
        h.set_u64(WPTR, 16);
        q.ring(16);
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert_eq!(h.u32(FENCE), 0, "created suspended: nothing runs");
        // UPDATE_QUEUE: ring @0, queue_id @8, ring size @12, percentage @16
        let mut update = [0u8; 24];
        update[0..8].copy_from_slice(&h.at(RING).to_le_bytes());
        update[8..12].copy_from_slice(&q.id.to_le_bytes());
        update[12..16].copy_from_slice(&4096u32.to_le_bytes());
        update[16..20].copy_from_slice(&100u32.to_le_bytes());
        testing::ioctl(&d, 0x07, &mut update).unwrap();
        assert!(eventually(|| h.u32(FENCE) == 7), "resumed, it runs what was published");
    }
}

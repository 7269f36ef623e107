//! What the command processors' tests share: a driver for one emulated MI210 (the interpreter runs kernels; no
//! SMI entry), host memory mapped to its GPU as a runtime maps it (a userptr buffer object), queues made and
//! rung through the KFD ioctls, an AQL queue laid out as a runtime lays one out with the prebuilt vadd to
//! dispatch on it, and a wait for what the processor's thread does.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::args::Errno;
use crate::memory::flags;
use crate::Driver;

/// A driver with one MI210 whose kernels the interpreter runs.
pub fn driver() -> Arc<Driver> {
    let settings = gpu::Settings::from_vars(&|name| match name {
        "WAVEJIT_DEVICES" => Some("mi210".into()),
        "WAVEJIT_ENGINE" => Some("interp".into()),
        _ => None,
    })
    .expect("settings for one MI210");
    Arc::new(Driver::from_settings(settings, None).expect("a driver"))
}

/// KFD ioctl `nr` with the argument structure `args` (read and written, `_IOWR`).
pub fn ioctl(d: &Arc<Driver>, nr: u32, args: &mut [u8]) -> Result<(), Errno> {
    let request = 3u64 << 30 | (args.len() as u64) << 16 | (b'K' as u64) << 8 | nr as u64;
    crate::kfd::ioctl(d, request, args.as_mut_ptr() as u64)
}

fn put_u32(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 4].copy_from_slice(&v.to_le_bytes());
}
fn put_u64(b: &mut [u8], at: usize, v: u64) {
    b[at..at + 8].copy_from_slice(&v.to_le_bytes());
}
fn get_u64(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

/// Pages of the test's own memory that the GPU reaches at the same addresses (ALLOC_MEMORY_OF_GPU of a userptr,
/// then MAP_MEMORY_TO_GPU).
pub struct Host {
    d: Arc<Driver>,
    base: *mut u8,
    len: usize,
    handle: u64,
}

impl Host {
    pub fn mapped(d: &Arc<Driver>, len: usize) -> Host {
        // SAFETY: a fresh anonymous mapping, owned by the Host and unmapped when it drops.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(base, libc::MAP_FAILED);
        let gpu_id = d.gpus[0].gpu_id;
        let mut alloc = [0u8; 40];
        put_u64(&mut alloc, 0, base as u64);
        put_u64(&mut alloc, 8, len as u64);
        put_u64(&mut alloc, 24, base as u64);
        put_u32(&mut alloc, 32, gpu_id);
        put_u32(&mut alloc, 36, flags::USERPTR);
        ioctl(d, 0x16, &mut alloc).expect("ALLOC_MEMORY_OF_GPU of a userptr");
        let handle = get_u64(&alloc, 16);
        let ids = [gpu_id];
        let mut map = [0u8; 24];
        put_u64(&mut map, 0, handle);
        put_u64(&mut map, 8, ids.as_ptr() as u64);
        put_u32(&mut map, 16, 1);
        ioctl(d, 0x18, &mut map).expect("MAP_MEMORY_TO_GPU");
        Host {
            d: d.clone(),
            base: base.cast(),
            len,
            handle,
        }
    }

    /// The address of byte `offset` (the CPU's and the GPU's).
    pub fn at(&self, offset: usize) -> u64 {
        assert!(offset < self.len);
        self.base as u64 + offset as u64
    }

    fn atomic(&self, offset: usize) -> &AtomicU64 {
        assert!(offset.is_multiple_of(8) && offset + 8 <= self.len);
        // SAFETY: an aligned u64 inside the mapping, which lives as long as `self`; the GPU's accesses to it are
        // the driver's atomics or plain copies, as a program shares memory with a GPU.
        unsafe { AtomicU64::from_ptr(self.base.add(offset).cast()) }
    }

    pub fn u64(&self, offset: usize) -> u64 {
        self.atomic(offset).load(Ordering::Acquire)
    }

    pub fn set_u64(&self, offset: usize, v: u64) {
        self.atomic(offset).store(v, Ordering::Release);
    }

    /// Stores `v` at `offset` at once (a packet's header publishing it).
    pub fn set_u32(&self, offset: usize, v: u32) {
        assert!(offset.is_multiple_of(4) && offset + 4 <= self.len);
        // SAFETY: an aligned u32 inside the mapping, as in `atomic`.
        unsafe { std::sync::atomic::AtomicU32::from_ptr(self.base.add(offset).cast()) }.store(v, Ordering::Release);
    }

    pub fn u32(&self, offset: usize) -> u32 {
        assert!(offset.is_multiple_of(4) && offset + 4 <= self.len);
        // SAFETY: as in `set_u32`.
        unsafe { std::sync::atomic::AtomicU32::from_ptr(self.base.add(offset).cast()) }.load(Ordering::Acquire)
    }

    /// Copies `bytes` to `offset` (before the GPU is told of them).
    pub fn write(&self, offset: usize, bytes: &[u8]) {
        assert!(offset + bytes.len() <= self.len);
        // SAFETY: the range lies inside the mapping; nothing else writes it while the test prepares it.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), self.base.add(offset), bytes.len()) };
        std::sync::atomic::fence(Ordering::Release);
    }

    /// The `len` bytes at `offset`.
    pub fn read(&self, offset: usize, len: usize) -> Vec<u8> {
        assert!(offset + len <= self.len);
        std::sync::atomic::fence(Ordering::Acquire);
        let mut out = vec![0u8; len];
        // SAFETY: the range lies inside the mapping.
        unsafe { std::ptr::copy_nonoverlapping(self.base.add(offset), out.as_mut_ptr(), len) };
        out
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        let mut free = [0u8; 8];
        put_u64(&mut free, 0, self.handle);
        let _ = ioctl(&self.d, 0x17, &mut free);
        // SAFETY: the mapping this Host made; the GPU no longer reaches it (freed just above).
        unsafe { libc::munmap(self.base.cast(), self.len) };
    }
}

/// A queue made by CREATE_QUEUE, rung through its doorbell in the kfd file.
pub struct TestQueue {
    d: Arc<Driver>,
    pub id: u32,
    doorbell: u64,
}

/// `KFD_IOC_QUEUE_TYPE_*`.
pub const QUEUE_SDMA: u32 = 1;
pub const QUEUE_AQL: u32 = 2;

/// CREATE_QUEUE's arguments (ROCm 5.2's 88 bytes and tinygrad's 96): a queue of type `kind` on GPU `gpu_id`,
/// ring `ring` (`ring_size` bytes), its pointers at `wptr` and `rptr`, `percentage` of the GPU's time.
pub fn create_queue_args(
    gpu_id: u32,
    kind: u32,
    ring: u64,
    ring_size: u32,
    wptr: u64,
    rptr: u64,
    percentage: u32,
) -> [u8; 96] {
    let mut a = [0u8; 96];
    put_u64(&mut a, 0, ring);
    put_u64(&mut a, 8, wptr);
    put_u64(&mut a, 16, rptr);
    put_u32(&mut a, 32, ring_size);
    put_u32(&mut a, 36, gpu_id);
    put_u32(&mut a, 40, kind);
    put_u32(&mut a, 44, percentage);
    a
}

impl TestQueue {
    /// A queue of type `kind` on ring `ring` (`ring_size` bytes) with its pointers at `wptr` and `rptr`.
    pub fn create(d: &Arc<Driver>, kind: u32, ring: u64, ring_size: u32, wptr: u64, rptr: u64) -> TestQueue {
        TestQueue::with_args(
            d,
            create_queue_args(d.gpus[0].gpu_id, kind, ring, ring_size, wptr, rptr, 100),
        )
    }

    /// The queue CREATE_QUEUE makes of `a`.
    pub fn with_args(d: &Arc<Driver>, mut a: [u8; 96]) -> TestQueue {
        ioctl(d, 0x02, &mut a).expect("CREATE_QUEUE");
        TestQueue {
            d: d.clone(),
            id: u32::from_le_bytes(a[52..56].try_into().expect("4 bytes")),
            doorbell: get_u64(&a, 24),
        }
    }

    /// Its doorbell's offset in the kfd file, as CREATE_QUEUE returned it.
    pub fn doorbell_offset(&self) -> u64 {
        self.doorbell
    }

    /// Stores `v` in the queue's doorbell, as a program does through its mapping of the kfd file.
    pub fn ring(&self, v: u64) {
        let p = self
            .d
            .kfd
            .at(self.doorbell, 8)
            .expect("the doorbell lies in the kfd file");
        // SAFETY: an aligned u64 of the doorbell page in the kfd file's view, which the driver keeps.
        unsafe { AtomicU64::from_ptr(p.cast()) }.store(v, Ordering::Release);
        self.d.queues.wake();
    }
}

impl Drop for TestQueue {
    fn drop(&mut self) {
        let mut a = [0u8; 8];
        put_u32(&mut a, 0, self.id);
        let _ = ioctl(&self.d, 0x03, &mut a);
    }
}

/// Waits up to ten seconds for `done`; whether it came.
pub fn eventually(mut done: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(10) {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    done()
}

/// An `amd_signal_t` at `offset` of `h` with value `value` and no event (its mailbox 0).
pub fn signal(h: &Host, offset: usize, value: i64) -> u64 {
    h.write(offset, &[0u8; 64]);
    h.set_u64(offset + 8, value as u64);
    h.at(offset)
}

/// Lays out the loadable segments of code object `co` at `offset` of `h`, as a runtime's loader does (each at
/// its virtual address from there); the address it starts at.
pub fn load_code_object(h: &Host, offset: usize, co: &[u8]) -> u64 {
    let u16_at = |at: usize| u16::from_le_bytes(co[at..at + 2].try_into().expect("2 bytes")) as usize;
    let u32_at = |at: usize| u32::from_le_bytes(co[at..at + 4].try_into().expect("4 bytes"));
    let u64_at = |at: usize| u64::from_le_bytes(co[at..at + 8].try_into().expect("8 bytes")) as usize;
    let (phoff, phnum) = (u64_at(32), u16_at(56));
    for i in 0..phnum {
        let p = phoff + i * 56;
        if u32_at(p) == 1 {
            let (file_offset, vaddr, filesz) = (u64_at(p + 8), u64_at(p + 16), u64_at(p + 32));
            h.write(offset + vaddr, &co[file_offset..file_offset + filesz]);
        }
    }
    h.at(offset)
}

/// A packet header of `kind` with system-scope acquire and release fences.
pub fn header(kind: u16) -> u32 {
    (kind | 2 << 9 | 2 << 11) as u32
}

/// Where an [`AqlQueue`]'s things lie in its memory: the `amd_queue_t` (write index @56, read index @128), the
/// ring of 64 packets, signals, kernel arguments, data and the code object.
pub const QUEUE: usize = 0;
pub const WRITE_INDEX: usize = QUEUE + 56;
pub const READ_INDEX: usize = QUEUE + 128;
pub const RING: usize = 0x1000;
pub const RING_PACKETS: usize = 64;
pub const SIGNALS: usize = 0x2000;
pub const KERNARG: usize = 0x2400;
pub const DATA: usize = 0x3000;
pub const CODE: usize = 0x10000;
pub const BYTES: usize = 0x20000;

/// An AQL queue over fresh memory of a fresh driver.
pub struct AqlQueue {
    pub q: TestQueue,
    pub h: Host,
    pub d: Arc<Driver>,
}

impl AqlQueue {
    pub fn new() -> AqlQueue {
        let d = driver();
        let h = Host::mapped(&d, BYTES);
        let ring_bytes = (RING_PACKETS * 64) as u32;
        // every slot INVALID until written, as a runtime makes a ring
        for i in 0..RING_PACKETS {
            h.set_u32(RING + i * 64, crate::aql::TYPE_INVALID as u32);
        }
        let q = TestQueue::create(
            &d,
            QUEUE_AQL,
            h.at(RING),
            ring_bytes,
            h.at(WRITE_INDEX),
            h.at(READ_INDEX),
        );
        AqlQueue { q, h, d }
    }

    /// Writes `packet` (its header word last) at `index` and rings the doorbell.
    pub fn submit(&self, index: u64, packet: &[u8; 64], header_word: u32) {
        let slot = RING + (index as usize % RING_PACKETS) * 64;
        self.h.write(slot + 4, &packet[4..]);
        self.h.set_u32(slot, header_word);
        self.h.set_u64(WRITE_INDEX, index + 1);
        self.q.ring(index);
    }

    /// Dispatches the prebuilt vadd as packet `index` (`c[i] = a[i] + b[i]` for `n` floats, groups of 64 lanes;
    /// `[a, b, c]` are GPU addresses) with a completion signal of value 1 at `signal` of the queue's memory, whose
    /// kernel arguments and code go to [`KERNARG`] and [`CODE`].
    pub fn vadd(&self, index: u64, [a, b, c]: [u64; 3], n: u32, signal_at: usize) {
        use emu_core::kernarg::{build_kernarg, ArgValue, HiddenValues};
        let h = &self.h;
        let co = test_kernels::by_name("vadd-gfx90a.co").expect("the prebuilt vadd");
        let parsed = isa_amdgpu::codeobj::CodeObject::parse(co, "vadd").expect("a code object");
        let kernel = &parsed.kernels[0];
        let kd = parsed
            .symbols
            .iter()
            .find(|s| s.name == "vadd.kd")
            .expect("the kernel descriptor's symbol");
        let base = load_code_object(h, CODE, co);
        let shape = emu_core::dispatch::DispatchShape::new([n, 1, 1], [64, 1, 1], self.d.gpus[0].preset).unwrap();
        let kernarg = build_kernarg(
            parsed.kernel_metadata(kernel).expect("metadata"),
            &[
                ArgValue::Pointer(a),
                ArgValue::Pointer(b),
                ArgValue::Pointer(c),
                ArgValue::U32(n),
            ],
            &shape,
            &HiddenValues::default(),
        )
        .unwrap();
        h.write(KERNARG, &kernarg);
        let done = signal(h, signal_at, 1);

        let mut p = [0u8; 64];
        p[2..4].copy_from_slice(&1u16.to_le_bytes()); // one dimension
        p[4..6].copy_from_slice(&64u16.to_le_bytes());
        p[6..8].copy_from_slice(&1u16.to_le_bytes());
        p[8..10].copy_from_slice(&1u16.to_le_bytes());
        p[12..16].copy_from_slice(&n.to_le_bytes());
        p[16..20].copy_from_slice(&1u32.to_le_bytes());
        p[20..24].copy_from_slice(&1u32.to_le_bytes());
        p[32..40].copy_from_slice(&(base + kd.address).to_le_bytes());
        p[40..48].copy_from_slice(&h.at(KERNARG).to_le_bytes());
        p[56..64].copy_from_slice(&done.to_le_bytes());
        self.submit(index, &p, header(crate::aql::TYPE_DISPATCH) | 1 << 16);
    }
}

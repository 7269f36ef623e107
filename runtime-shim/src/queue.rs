//! User-mode AQL queues: the ring buffer and its `amd_queue_t` live in device memory; one packet processor
//! thread per queue, woken through the doorbell signal, runs packets in order — kernel dispatches on the
//! emulated GPU (JIT or interpreter; in the timing model with `WAVEJIT_TIMING=1`), barrier-AND/OR packets — and
//! decrements their completion signals, stamped with their start and end times (host time, or modeled time).

use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, AtomicU16, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use emu_core::dispatch::DispatchShape;
use emu_core::engine::{Launch, Limits};
use emu_core::memory::AllocKind;
use emu_core::DevicePreset;
use profiler_hooks::record::{BarrierRecord, Record};

use crate::ffi::{self, BarrierPacket, DispatchPacket, HsaQueue, Status};
use crate::runtime::Runtime;
use crate::signal;

pub type ErrorCallback = extern "C" fn(Status, *mut HsaQueue, *mut c_void);

pub struct Queue {
    /// Address of the `amd_queue_t` (also the `hsa_queue_t*` handed out).
    pub address: u64,
    pub ring: u64,
    pub size: u32,
    pub doorbell: u64,
    /// The doorbell was made with the queue (a soft queue's belongs to its creator).
    owns_doorbell: bool,
    pub agent: usize,
    pub device: &'static DevicePreset,
    stop: AtomicBool,
    thread: Mutex<Option<std::thread::JoinHandle<()>>>,
    callback: Option<ErrorCallback>,
    data: usize,
    /// A cooperative queue: its dispatches keep every workgroup resident (grid-wide sync works).
    pub cooperative: bool,
}

impl Queue {
    fn field(&self, offset: usize) -> &AtomicU64 {
        // SAFETY: the amd_queue_t is a live 256-byte, 64-byte-aligned device allocation owned by this queue;
        // the dispatch-index fields are aligned u64s.
        unsafe { AtomicU64::from_ptr((self.address as usize + offset) as *mut u64) }
    }
    pub fn write_index(&self) -> &AtomicU64 {
        self.field(ffi::AMD_QUEUE_WRITE_DISPATCH_ID)
    }
    pub fn read_index(&self) -> &AtomicU64 {
        self.field(ffi::AMD_QUEUE_READ_DISPATCH_ID)
    }

    fn header(&self, index: u64) -> &AtomicU16 {
        let slot = self.ring + (index % self.size as u64) * 64;
        // SAFETY: the slot lies in the live ring buffer; the header is its aligned first u16.
        unsafe { AtomicU16::from_ptr(slot as *mut u16) }
    }

    pub fn stop(&self, rt: &Runtime) {
        self.stop.store(true, Ordering::Release);
        rt.notify();
        let t = self.thread.lock().unwrap_or_else(|e| e.into_inner()).take();
        // from the queue's own error callback there is nothing to join: the thread ends when it returns
        if let Some(t) = t.filter(|t| t.thread().id() != std::thread::current().id()) {
            let _ = t.join();
        }
        if self.owns_doorbell {
            let _ = rt.signals.destroy(rt, self.doorbell);
            // a queue with a packet processor (made by `create`) leaves the SMI count
            if let (Some(smi), Some(gpu)) = (&rt.smi, rt.gpu_card(self.agent)) {
                smi.queue_destroyed(gpu);
            }
        }
        let _ = rt.mem.free(self.ring);
        let _ = rt.mem.free(self.address);
    }
}

/// Whether `address` is the `amd_queue_t` of a live queue of this runtime.
pub fn is_live(rt: &Runtime, address: u64) -> bool {
    rt.queues
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .contains_key(&address)
}

/// The live queue of this runtime whose `amd_queue_t` (the `hsa_queue_t*` handed out) is at `address`.
pub fn find(rt: &Runtime, address: u64) -> Result<Arc<Queue>, Status> {
    let q = rt
        .queues
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&address)
        .cloned();
    q.ok_or(ffi::ERROR_INVALID_QUEUE)
}

/// `hsa_queue_create`: a queue of `size` packets (a power of two) on GPU agent `agent`.
#[allow(clippy::too_many_arguments)]
pub fn create(
    rt: &Arc<Runtime>,
    agent: usize,
    device: &'static DevicePreset,
    size: u32,
    kind: u32,
    callback: Option<ErrorCallback>,
    data: *mut c_void,
) -> Result<Arc<Queue>, Status> {
    if !size.is_power_of_two() || !(64..=1 << 17).contains(&size) || kind > ffi::QUEUE_TYPE_COOPERATIVE {
        return Err(ffi::ERROR_INVALID_ARGUMENT);
    }
    let doorbell = rt.signals.create(rt, 0, false)?;
    let mut q = Queue {
        owns_doorbell: true,
        callback,
        data: data as usize,
        ..records(rt, size, 1, doorbell, agent, device, "AQL queue")?
    };
    if kind == ffi::QUEUE_TYPE_COOPERATIVE {
        q.cooperative = true;
        // SAFETY: the amd_queue_t this queue owns, which starts with the hsa_queue_t written by `records`.
        unsafe { (*(q.address as *mut HsaQueue)).queue_type = kind };
    }
    let q = Arc::new(q);
    // every slot starts INVALID so the processor waits for the producer to publish a header
    let invalid: Vec<u8> = (0..size)
        .flat_map(|_| {
            let mut p = [0u8; 64];
            p[..2].copy_from_slice(&ffi::PACKET_TYPE_INVALID.to_le_bytes());
            p
        })
        .collect();
    rt.mem.write(q.ring, &invalid).map_err(|_| ffi::ERROR)?;
    let (qt, rtt) = (q.clone(), rt.clone());
    let t = std::thread::Builder::new()
        .name(format!("wavejit-queue-{:#x}", q.address))
        .spawn(move || process(&rtt, &qt))
        .map_err(|_| ffi::ERROR_OUT_OF_RESOURCES)?;
    *q.thread.lock().unwrap_or_else(|e| e.into_inner()) = Some(t);
    rt.queues
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(q.address, q.clone());
    if let (Some(smi), Some(gpu)) = (&rt.smi, rt.gpu_card(agent)) {
        smi.queue_created(gpu);
    }
    Ok(q)
}

/// `hsa_soft_queue_create`: a queue whose packets the application processes itself — the ring and the
/// `amd_queue_t` in device memory, `doorbell` given by the caller, no packet processor.
pub fn create_soft(rt: &Arc<Runtime>, size: u32, features: u32, doorbell: u64) -> Result<Arc<Queue>, Status> {
    if !size.is_power_of_two() || size == 0 || size > 1 << 17 || !rt.signals.is_live(doorbell) {
        return Err(ffi::ERROR_INVALID_ARGUMENT);
    }
    // a soft queue belongs to no GPU; the first one's preset fills the field nothing reads for it
    let (agent, device) = rt
        .agents
        .iter()
        .enumerate()
        .find_map(|(i, a)| a.gpu.map(|g| (i, g)))
        .ok_or(ffi::ERROR_INVALID_AGENT)?;
    let q = Arc::new(records(rt, size, features, doorbell, agent, device, "soft queue")?);
    rt.queues
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(q.address, q.clone());
    Ok(q)
}

/// A queue's records in device memory — the `amd_queue_t` (its `hsa_queue_t` filled in) and a ring of `size`
/// packets — as a queue without a processor, callback or doorbell of its own.
fn records(
    rt: &Runtime,
    size: u32,
    features: u32,
    doorbell: u64,
    agent: usize,
    device: &'static DevicePreset,
    label: &str,
) -> Result<Queue, Status> {
    let address = rt
        .mem
        .allocate(ffi::AMD_QUEUE_SIZE as u64, AllocKind::Buffer, label)
        .map_err(|_| ffi::ERROR_OUT_OF_RESOURCES)?;
    let ring = rt
        .mem
        .allocate(size as u64 * 64, AllocKind::Buffer, &format!("{label} ring"))
        .map_err(|_| ffi::ERROR_OUT_OF_RESOURCES)?;
    let hq = HsaQueue {
        queue_type: ffi::QUEUE_TYPE_MULTI,
        features,
        base_address: ring as *mut c_void,
        doorbell_signal: doorbell,
        size,
        reserved1: 0,
        id: rt.next_id(),
    };
    // SAFETY: `address` is a fresh 256-byte allocation, larger than hsa_queue_t and page-aligned.
    unsafe { std::ptr::write(address as *mut HsaQueue, hq) };
    Ok(Queue {
        address,
        ring,
        size,
        doorbell,
        owns_doorbell: false,
        agent,
        device,
        stop: AtomicBool::new(false),
        thread: Mutex::new(None),
        callback: None,
        data: 0,
        cooperative: false,
    })
}

/// The packet processor: runs published packets in order until the queue is stopped or a packet fails.
fn process(rt: &Runtime, q: &Queue) {
    loop {
        if q.stop.load(Ordering::Acquire) {
            return;
        }
        let seen = rt.changes();
        let index = q.read_index().load(Ordering::Acquire);
        let published = || {
            let header = q.header(index).load(Ordering::Acquire);
            (header & 0xff != ffi::PACKET_TYPE_INVALID || q.stop.load(Ordering::Acquire)).then_some(header)
        };
        // nothing published yet: look for a while (the next packet of a program launching kernels back to back
        // comes within microseconds), then sleep until the doorbell (or any signal) changes
        let Some(header) = published().or_else(|| crate::runtime::spin(crate::runtime::SPIN, published)) else {
            rt.wait_since(seen, Duration::from_millis(2));
            continue;
        };
        let kind = header & 0xff;
        if kind == ffi::PACKET_TYPE_INVALID {
            continue; // stopped: the loop's first look returns
        }
        let slot = q.ring + (index % q.size as u64) * 64;
        let result = match kind {
            ffi::PACKET_TYPE_KERNEL_DISPATCH => {
                // SAFETY: the slot is a live, published 64-byte packet in the ring.
                let p = unsafe { std::ptr::read_volatile(slot as *const DispatchPacket) };
                // a bug in the emulator must break this queue loudly, not end its thread with waiters hanging
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| dispatch(rt, q, &p, slot)))
                    .unwrap_or_else(|_| {
                        eprintln!("wavejit: internal error while running a kernel of queue {:#x} (packet {index}); the queue is stopped", q.address);
                        Err(ffi::ERROR_FATAL.into())
                    })
                    .map(|()| p.completion_signal)
            }
            ffi::PACKET_TYPE_BARRIER_AND | ffi::PACKET_TYPE_BARRIER_OR => {
                // SAFETY: as above.
                let p = unsafe { std::ptr::read_volatile(slot as *const BarrierPacket) };
                let start = rt.stamp_time();
                let host_start = profiler_hooks::record::now_ns();
                let r = barrier(rt, q, &p, kind == ffi::PACKET_TYPE_BARRIER_AND);
                // barriers are stamped too (HIP's events are barrier packets whose times it reads)
                stamp(rt, p.completion_signal, start, rt.stamp_time());
                if let Some(prof) = gpu::profile::get() {
                    let kind = if kind == ffi::PACKET_TYPE_BARRIER_AND {
                        "and"
                    } else {
                        "or"
                    };
                    let b = BarrierRecord {
                        id: prof.next_barrier(),
                        pid: prof.pid,
                        agent: q.agent as u32,
                        queue: q.address,
                        kind: kind.into(),
                        start_ns: host_start,
                        end_ns: profiler_hooks::record::now_ns(),
                    };
                    prof.write(&Record::Barrier(b));
                }
                r.map(|()| p.completion_signal).map_err(Failed::from)
            }
            other => {
                eprintln!("wavejit: queue {:#x}: packet {index} has type {other}, which the emulated GPU does not process (kernel dispatch and barrier-AND/OR are supported)", q.address);
                Err(ffi::ERROR_INVALID_PACKET_FORMAT.into())
            }
        };
        match result {
            Ok(completion) => {
                // the slot is free (and the read index past it) before the completion signal says the packet
                // is done: whoever waits on the signal sees the queue drained
                q.header(index).store(ffi::PACKET_TYPE_INVALID, Ordering::Release);
                q.read_index().store(index + 1, Ordering::Release);
                if completion != 0 {
                    let _ = signal::rmw(rt, completion, signal::Rmw::Sub, 1);
                }
                rt.notify();
            }
            Err(f) if f.status == ffi::INFO_BREAK => return, // stopped while waiting
            Err(f) => {
                // the queue is broken, as on hardware: report once and stop processing
                if let Some(address) = f.fault_address {
                    // the process aborts here unless a system event handler took the fault; the queue is dead,
                    // and its callback not called (ROCm's queues hear nothing of a memory fault)
                    memory_fault(rt, q, address);
                    return;
                }
                match q.callback {
                    Some(cb) => {
                        let _ = std::panic::catch_unwind(|| {
                            cb(f.status, q.address as *mut HsaQueue, q.data as *mut c_void)
                        });
                    }
                    None => no_callback(q, f.status),
                }
                return;
            }
        }
    }
}

/// Why a packet failed: the status the queue's error callback gets, and the address of a GPU memory fault.
struct Failed {
    status: Status,
    fault_address: Option<u64>,
}

impl From<Status> for Failed {
    fn from(status: Status) -> Failed {
        Failed {
            status,
            fault_address: None,
        }
    }
}

/// A GPU memory fault, as ROCm's runtime handles the driver's memory-fault event: the program's system event
/// handlers get an `HSA_AMD_GPU_MEMORY_FAULT_EVENT`; unless one of them returns success, the runtime prints
/// its line (`HSA_ENABLE_VM_FAULT_MESSAGE=0` silences it) and aborts the process, whatever queue callbacks
/// the program registered. After wavejit's own report (printed by the dispatch), so a person sees both.
fn memory_fault(rt: &Runtime, q: &Queue, address: u64) {
    let agent = crate::runtime::AGENT_TAG + q.agent as u64;
    let event = ffi::AmdEvent {
        event_type: ffi::AMD_GPU_MEMORY_FAULT_EVENT,
        agent,
        virtual_address: address,
        fault_reason_mask: ffi::AMD_MEMORY_FAULT_PAGE_NOT_PRESENT,
    };
    let handlers = rt.system_events.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let handled = handlers.iter().fold(false, |handled, (cb, data)| {
        let r = std::panic::catch_unwind(|| cb(&event, *data as *mut c_void));
        handled | matches!(r, Ok(ffi::SUCCESS))
    });
    if handled {
        return;
    }
    if std::env::var("HSA_ENABLE_VM_FAULT_MESSAGE").as_deref() != Ok("0") {
        // the node numbering of the KFD topology: the CPU is node 0, GPUs follow in agent order
        eprintln!(
            "Memory access fault by GPU node-{} (Agent handle: {:#x}) on address {:#x}. Reason: Page not present or supervisor privilege.",
            q.agent, agent, address
        );
    }
    std::process::abort();
}

/// A queue error with no error callback to receive it. ROCm's runtime would suspend the queue and say nothing,
/// leaving the program waiting for a completion signal that never comes; wavejit ends the program instead, so
/// that a fault never turns into a hang or a clean exit.
fn no_callback(q: &Queue, status: Status) {
    eprintln!(
        "wavejit: queue {:#x} on agent {} stopped with status {status:#x} and has no error callback: aborting rather than leave the program waiting for a packet that will never complete",
        q.address, q.agent
    );
    std::process::abort();
}

fn barrier(rt: &Runtime, q: &Queue, p: &BarrierPacket, and: bool) -> Result<(), Status> {
    let deps: Vec<u64> = p.dep_signal.iter().copied().filter(|&s| s != 0).collect();
    let zero = |s: &u64| {
        signal::value(rt, *s)
            .map(|v| v.load(Ordering::Acquire) == 0)
            .unwrap_or(true)
    };
    let outcome = signal::wait_until(rt, u64::MAX, || {
        if q.stop.load(Ordering::Acquire) {
            return Some(Err(ffi::INFO_BREAK));
        }
        let done = if and {
            deps.iter().all(zero)
        } else {
            deps.is_empty() || deps.iter().any(zero)
        };
        done.then_some(Ok(()))
    });
    outcome.unwrap_or(Err(ffi::INFO_BREAK))
}

/// Records a packet's start and end times in its completion signal (for `hsa_amd_profiling_get_dispatch_time`).
fn stamp(rt: &Runtime, completion: u64, start: u64, end: u64) {
    if completion != 0 {
        if let Ok((s, e)) = signal::timestamps(rt, completion) {
            s.store(start, Ordering::Relaxed);
            e.store(end, Ordering::Relaxed);
        }
    }
}

fn dispatch(rt: &Runtime, q: &Queue, p: &DispatchPacket, slot: u64) -> Result<(), Failed> {
    let Some(k) = rt.loader.kernel(p.kernel_object) else {
        eprintln!(
            "wavejit: queue {:#x}: dispatch of kernel object {:#x}, which no loaded executable defines",
            q.address, p.kernel_object
        );
        return Err(ffi::ERROR_INVALID_PACKET_FORMAT.into());
    };
    let dims = (p.setup & 3) as usize;
    let mut grid = [1u32; 3];
    let mut block = [1u32; 3];
    for d in 0..dims.clamp(1, 3) {
        grid[d] = p.grid_size[d];
        block[d] = p.workgroup_size[d] as u32;
    }
    let shape = DispatchShape::new(grid, block, q.device).map_err(|e| {
        eprintln!("wavejit: kernel {}: {e}", k.name);
        ffi::ERROR_INVALID_PACKET_FORMAT
    })?;
    {
        // managed memory the program has unmapped since (HIP frees it with munmap) is no longer reachable
        let mut svm = rt.svm.lock().unwrap_or_else(|e| e.into_inner());
        if !svm.maps_nothing() {
            svm.forget_unmapped(rt);
        }
    }
    let mut kernarg = vec![0u8; k.props.kernarg_size as usize];
    if !kernarg.is_empty() {
        if let Err(e) = rt.mem.read(p.kernarg_address, &mut kernarg) {
            eprintln!(
                "wavejit: kernel {}: its kernel arguments are not in memory the GPU can read: {e}",
                k.name
            );
            return Err(Failed {
                status: ffi::ERROR_MEMORY_APERTURE_VIOLATION,
                fault_address: Some(p.kernarg_address),
            });
        }
    }
    let launch = Launch {
        code: &k.code,
        cache: &k.cache,
        name: &k.name,
        descriptor: &k.descriptor,
        entry: k.entry,
        shape,
        kernarg: &kernarg,
        kernarg_addr: p.kernarg_address,
        group_segment_size: p.group_segment_size.max(k.descriptor.group_segment_fixed_size),
        private_segment_size: p.private_segment_size.max(k.descriptor.private_segment_fixed_size),
        dispatch_packet: slot,
        queue: q.address,
        cooperative: q.cooperative,
        user_sgprs: None,
    };
    let start = rt.timestamp();
    // the device counts as busy in the SMI registry until the guard drops, also if the engine panics
    let _busy = rt
        .smi
        .as_ref()
        .zip(rt.gpu_card(q.agent))
        .map(|(smi, gpu)| smi.dispatch(gpu));
    let engine = gpu::dispatch::Engine {
        mem: &rt.mem,
        device: q.device,
        jit: rt.jit.as_ref(),
        limits: Limits {
            timing: rt.timing,
            max_wave_instructions: rt.max_wave_instructions,
            watch: Some(rt.watch),
            ..Limits::default()
        },
    };
    let profile = gpu::profile::get();
    let host_start = profile.map(|_| profiler_hooks::record::now_ns());
    let (result, observed) = engine.run(&launch, || k.info.clone(), profile);
    // in timing mode the dispatch takes its modeled time on the modeled clock
    let (start, end) = match &result {
        Ok(emu_core::engine::RunStats { cycles: Some(c), .. }) => {
            rt.modeled_dispatch(c * 1000 / q.device.engine_clock_mhz as u64)
        }
        _ if rt.timing => (rt.stamp_time(), rt.stamp_time()),
        _ => (start, rt.timestamp()),
    };
    if let (Some(prof), Some(observed)) = (profile, observed) {
        let host = (host_start.unwrap_or(0), profiler_hooks::record::now_ns());
        let origin = gpu::dispatch::Origin {
            agent: q.agent as u32,
            queue: q.address,
            kernel_object: p.kernel_object,
            descriptor: &k.descriptor,
            agpr_count: k.props.agpr_count,
        };
        gpu::dispatch::record(
            prof,
            q.device,
            &origin,
            &launch,
            host,
            rt.timing.then_some((start - rt.started_ns, end - rt.started_ns)),
            &observed,
            result.as_ref().err(),
        );
    }
    let modeled = match &result {
        Ok(emu_core::engine::RunStats { cycles: Some(c), .. }) => Some((end - start, *c)),
        _ => None,
    };
    let instructions = result.as_ref().map_or(0, |s| s.wave_instructions);
    gpu::report::dispatched(&k.name, instructions, modeled, result.is_err());
    // before the completion signal: the program may exit as soon as it sees the dispatch done
    if let Some(w) = result.as_ref().ok().and_then(|s| s.slack_warning()) {
        eprintln!("wavejit: warning on agent {} ({}): {w}", q.agent, q.device.name);
    }
    stamp(rt, p.completion_signal, start, end);
    result.map(drop).map_err(|e| {
        eprintln!("wavejit: GPU fault on agent {} ({}): {e}", q.agent, q.device.name);
        if let Some(hint) = gpu::dispatch::hint(&e) {
            eprintln!("wavejit: {hint}");
        }
        Failed {
            status: fault_status(&e),
            fault_address: fault_address(&e),
        }
    })
}

/// The address of a dispatch's memory fault: an access of global memory (or memory reached through FLAT)
/// outside every allocation, what a GPU's page tables turn into a memory-fault event. LDS and private-segment
/// violations are not page faults.
fn fault_address(e: &emu_core::engine::EngineError) -> Option<u64> {
    match e {
        emu_core::engine::EngineError::Fault { error, .. } => match &**error {
            emu_core::sem::ExecError::Memory { fault, .. } => Some(fault.address),
            _ => None,
        },
        _ => None,
    }
}

/// The status a queue's error callback receives for a failed dispatch, as ROCm reports the hardware's events:
/// bad memory accesses are aperture violations, undecodable or unemulated instructions illegal instructions,
/// traps (`s_trap`, `__builtin_trap`) and runaway kernels exceptions.
fn fault_status(e: &emu_core::engine::EngineError) -> Status {
    use emu_core::engine::EngineError as E;
    use emu_core::sem::ExecError as X;
    match e {
        E::IllegalInstruction { .. } => ffi::ERROR_ILLEGAL_INSTRUCTION,
        E::Fault { error, .. } => match **error {
            X::Memory { .. } | X::Lds { .. } | X::Private { .. } => ffi::ERROR_MEMORY_APERTURE_VIOLATION,
            X::Unsupported { .. } | X::UnsupportedForm { .. } => ffi::ERROR_ILLEGAL_INSTRUCTION,
            _ => ffi::ERROR_EXCEPTION,
        },
        _ => ffi::ERROR_EXCEPTION,
    }
}

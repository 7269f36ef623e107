//! The process's emulated system: a CPU agent and the emulated GPU agents, their memory pools, and the one
//! device memory all of them allocate from (device addresses are host addresses, so host code and kernels see
//! the same bytes at the same pointer).

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, RwLock};
use std::time::Duration;

use emu_core::memory::{AllocKind, DeviceMemory};
use emu_core::DevicePreset;

use crate::ffi::{self, Status};
use crate::loader::Loader;
use crate::queue::Queue;
use crate::signal::Signals;

/// Handles are small tagged numbers (agents, pools, ISAs, caches) or addresses (signals, queues).
pub const AGENT_TAG: u64 = 0xA6E0_0000;
pub const POOL_TAG: u64 = 0x9001_0000;
pub const REGION_TAG: u64 = 0x4E61_0000;
pub const ISA_TAG: u64 = 0x15A0_0000;
pub const CACHE_TAG: u64 = 0xCAC0_0000;
pub const READER_TAG: u64 = 0x2EAD_0000_0000;
pub const EXECUTABLE_TAG: u64 = 0xE8E0_0000_0000;
pub const SYMBOL_TAG: u64 = 0x5E30_0000_0000;
pub const GROUP_TAG: u64 = 0x6A00_0000_0000;
pub const CODE_OBJECT_TAG: u64 = 0xC0DE_0000_0000;
pub const CODE_SYMBOL_TAG: u64 = 0xC05E_0000_0000;

pub use emu_core::hash::FastHash as HandleHash;

/// Host memory the emulated system may hand out (fine- and coarse-grained system pools), bytes.
pub const SYSTEM_POOL_BYTES: u64 = 64 << 30;

/// `hsa_amd_deallocation_callback_t`.
pub type DeallocCallback = extern "C" fn(*mut std::ffi::c_void, *mut std::ffi::c_void);

/// `hsa_amd_system_event_callback_t`: gets an `hsa_amd_event_t` and the user data.
pub type SystemEventCallback = extern "C" fn(*const ffi::AmdEvent, *mut std::ffi::c_void) -> Status;

/// One agent: the host CPU (index 0) or an emulated GPU.
pub struct Agent {
    pub gpu: Option<&'static DevicePreset>,
    /// Host CPU model name, for the CPU agent.
    pub cpu_name: String,
    /// A GPU's place in `WAVEJIT_DEVICES`, whichever GPUs `ROCR_VISIBLE_DEVICES` leaves visible: its card in the
    /// SMI view, its PCI address and its UUID.
    pub card: usize,
}

/// A memory pool (and the HSA region that mirrors it).
#[derive(Debug, Clone)]
pub struct Pool {
    pub agent: usize,
    pub segment: u32,
    pub flags: u32,
    pub size: u64,
    pub alloc_allowed: bool,
    pub label: &'static str,
}

/// A live allocation made through the API.
#[derive(Debug, Clone, Copy)]
pub struct Alloc {
    pub size: u64,
    pub pool: usize,
}

pub struct Runtime {
    pub mem: DeviceMemory,
    pub agents: Vec<Agent>,
    pub pools: Vec<Pool>,
    /// Distinct GPU ISAs (target index in `isa-amdgpu` terms) and their ROCm names.
    pub isas: Vec<(&'static DevicePreset, String)>,
    pub allocs: Mutex<BTreeMap<u64, Alloc>>,
    /// Host ranges locked with `hsa_amd_memory_lock`: host start → (length, agent address). The agent address
    /// is the host address for memory already in device memory, else a pinned range reaching the host bytes.
    pub locked: Mutex<BTreeMap<u64, (u64, u64)>>,
    pub signals: Signals,
    pub queues: Mutex<HashMap<u64, Arc<Queue>, HandleHash>>,
    /// Deallocation callbacks: (allocation start, monitored pointer, callback, user data).
    pub dealloc: Mutex<Vec<(u64, u64, DeallocCallback, usize)>>,
    /// System event handlers (`hsa_amd_register_system_event_handler`): callback, user data.
    pub system_events: Mutex<Vec<(SystemEventCallback, usize)>>,
    /// Signal groups: handle → members.
    pub groups: Mutex<HashMap<u64, Vec<u64>>>,
    /// Image and sampler objects.
    pub images: Mutex<crate::image::Objects>,
    /// Shared virtual memory attributes of address ranges.
    pub svm: Mutex<crate::svm::Svm>,
    /// Device addresses of memory mapped from outside: other processes' IPC memory, interop buffers.
    pub foreign: Mutex<std::collections::HashSet<u64>>,
    pub loader: Loader,
    pub jit: Option<jit::Jit>,
    /// Timing mode (`WAVEJIT_TIMING=1`): dispatches run in the timing model, and the timestamps the runtime
    /// leaves in completion signals (dispatches, barriers, copies) are modeled nanoseconds.
    pub timing: bool,
    /// Instructions one wave may execute before its dispatch stops as a runaway kernel
    /// (`WAVEJIT_MAX_INSTRUCTIONS`; `u64::MAX` for no limit).
    pub max_wave_instructions: u64,
    /// How dispatches are watched: progress reports while one runs long, and `WAVEJIT_TIMEOUT`.
    pub watch: emu_core::watch::Watch,
    /// The modeled device clock of timing mode, in nanoseconds from the `CLOCK_MONOTONIC` time the runtime
    /// started at: each dispatch advances it by its modeled duration; barriers and copies take no modeled time.
    modeled_ns: AtomicU64,
    /// `CLOCK_MONOTONIC` when the runtime started, in nanoseconds (where the modeled clock starts).
    pub started_ns: u64,
    /// Notified whenever the host changes a signal (waiters also poll for changes made by kernels).
    pub changed: Changes,
    next_id: AtomicU64,
    /// Copy engine: jobs run in order on one thread.
    pub copies: Mutex<Option<std::sync::mpsc::Sender<crate::memory::CopyJob>>>,
    /// This process's record in the SMI registry (memory use, busy time), if published.
    pub smi: Option<profiler_hooks::smi::Publisher>,
}

/// `CLOCK_MONOTONIC` in nanoseconds.
pub fn monotonic_ns() -> u64 {
    let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes one timespec into `t`, which lives for the call.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut t) };
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// The GPUs of `ROCR_VISIBLE_DEVICES` (`var`; `None` when it is not set: all of them), as places among the
/// GPUs whose UUIDs (`GPU-` and 16 hex digits) are `uuids`, in the order listed. ROCm's runtime reads it so
/// (ROCR-Runtime, `RvdFilter`): set but empty, no GPU; otherwise comma-separated tokens, trimmed and read
/// without case, at most one per GPU, each an index as C's `strtol` reads one (decimal, `0x` hex or `0` octal;
/// the whole token) or a UUID or a prefix of one (5 to 20 characters, naming one GPU alone); the first token that
/// names no GPU (an empty one too), or one already named, ends the list.
pub fn visible_gpus(var: Option<&str>, uuids: &[String]) -> Vec<usize> {
    let Some(var) = var else {
        return (0..uuids.len()).collect();
    };
    if var.is_empty() {
        return Vec::new();
    }
    let mut tokens: Vec<String> = var.split(',').map(|t| t.trim().to_uppercase()).collect();
    // a trailing comma ends the list without a token after it, as a stream split at commas reads it
    if var.ends_with(',') {
        tokens.pop();
    }
    let mut chosen = Vec::new();
    for token in tokens.iter().take(uuids.len()) {
        let index = if token.starts_with('G') {
            let matching: Vec<usize> = (0..uuids.len())
                .filter(|&i| uuids[i].to_uppercase().starts_with(token.as_str()))
                .collect();
            match matching[..] {
                [i] if (5..=20).contains(&token.len()) => Some(i),
                _ => None,
            }
        } else {
            c_long(token)
                .and_then(|i| usize::try_from(i).ok())
                .filter(|&i| i < uuids.len())
        };
        match index {
            Some(i) if !chosen.contains(&i) => chosen.push(i),
            _ => break,
        }
    }
    chosen
}

/// `token` as C's `strtol(token, &end, 0)` reads it when `*end` is then the terminating NUL: an optional sign,
/// then `0x`/`0X` and hex digits, `0` and octal digits, or decimal digits. An empty token is none (ROCm's
/// runtime would look at its first character).
fn c_long(token: &str) -> Option<i64> {
    let (negative, digits) = match token.as_bytes().first() {
        Some(b'-') => (true, &token[1..]),
        Some(b'+') => (false, &token[1..]),
        _ => (false, token),
    };
    let value = if let Some(hex) = digits.strip_prefix("0x").or_else(|| digits.strip_prefix("0X")) {
        i64::from_str_radix(hex, 16).ok()?
    } else if digits.len() > 1 && digits.starts_with('0') {
        i64::from_str_radix(&digits[1..], 8).ok()?
    } else if digits.is_empty() {
        return None;
    } else {
        digits.parse::<i64>().ok()?
    };
    Some(if negative { -value } else { value })
}

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|s| s.trim().to_string())
        })
        .unwrap_or_else(|| "host CPU".to_string())
}

/// The UUID of the GPU at place `card` of `WAVEJIT_DEVICES` (as `HSA_AMD_AGENT_INFO_UUID` reports it).
pub fn gpu_uuid(card: usize, g: &DevicePreset) -> String {
    format!(
        "GPU-{:016x}",
        profiler_hooks::smi::Identity::of(card as u32, g.id).unique_id
    )
}

/// The ISA name ROCm reports for a preset's target (the emulated devices run with SRAM ECC on and XNACK off).
pub fn isa_name(dev: &DevicePreset) -> String {
    format!("amdgcn-amd-amdhsa--{}:sramecc+:xnack-", dev.gfx)
}

impl Runtime {
    pub fn new() -> Result<Runtime, String> {
        let settings = gpu::Settings::from_env()?;
        let gpus = settings.devices.clone();
        let capacity = gpus.iter().map(|g| g.memory_bytes).sum::<u64>() + SYSTEM_POOL_BYTES;
        let mem = DeviceMemory::new(capacity).map_err(|e| e.to_string())?;
        // memcheck: kernels' accesses outside their allocations' bytes fault even inside the allocations' pages
        mem.set_memcheck(settings.memcheck);
        let mut agents = vec![Agent {
            gpu: None,
            cpu_name: cpu_model(),
            card: 0,
        }];
        let mut pools = vec![
            Pool {
                agent: 0,
                segment: ffi::SEGMENT_GLOBAL,
                flags: ffi::GLOBAL_FLAG_FINE_GRAINED,
                size: SYSTEM_POOL_BYTES,
                alloc_allowed: true,
                label: "system fine-grained",
            },
            Pool {
                agent: 0,
                segment: ffi::SEGMENT_GLOBAL,
                flags: ffi::GLOBAL_FLAG_KERNARG | ffi::GLOBAL_FLAG_FINE_GRAINED,
                size: SYSTEM_POOL_BYTES,
                alloc_allowed: true,
                label: "kernarg",
            },
            Pool {
                agent: 0,
                segment: ffi::SEGMENT_GLOBAL,
                flags: ffi::GLOBAL_FLAG_COARSE_GRAINED,
                size: SYSTEM_POOL_BYTES,
                alloc_allowed: true,
                label: "system coarse-grained",
            },
        ];
        let mut isas: Vec<(&'static DevicePreset, String)> = Vec::new();
        // every GPU is a card in the SMI view; the agents are those ROCR_VISIBLE_DEVICES leaves, in its order
        let smi = gpu::smi::publish(&gpus);
        let uuids: Vec<String> = gpus.iter().enumerate().map(|(i, g)| gpu_uuid(i, g)).collect();
        for card in visible_gpus(std::env::var("ROCR_VISIBLE_DEVICES").ok().as_deref(), &uuids) {
            let g = gpus[card];
            let agent = agents.len();
            agents.push(Agent {
                gpu: Some(g),
                cpu_name: String::new(),
                card,
            });
            pools.push(Pool {
                agent,
                segment: ffi::SEGMENT_GLOBAL,
                flags: ffi::GLOBAL_FLAG_COARSE_GRAINED,
                size: g.memory_bytes,
                alloc_allowed: true,
                label: "device memory",
            });
            pools.push(Pool {
                agent,
                segment: ffi::SEGMENT_GROUP,
                flags: 0,
                size: g.lds_bytes,
                alloc_allowed: false,
                label: "LDS",
            });
            if !isas.iter().any(|(d, _)| d.target == g.target) {
                isas.push((g, isa_name(g)));
            }
        }
        if std::env::var_os("WAVEJIT_JIT_STATS").is_some() {
            static AT_EXIT: std::sync::Once = std::sync::Once::new();
            // SAFETY: registers a plain function that only reads the runtime's counters and writes stderr.
            AT_EXIT.call_once(|| unsafe {
                libc::atexit(print_jit_stats);
            });
        }
        let jit = settings.jit()?;
        let (timing, max_wave_instructions, watch) = (settings.timing, settings.max_wave_instructions, settings.watch);
        let started_ns = monotonic_ns();
        Ok(Runtime {
            mem,
            agents,
            pools,
            isas,
            allocs: Mutex::new(BTreeMap::new()),
            locked: Mutex::new(BTreeMap::new()),
            signals: Signals::default(),
            queues: Mutex::new(HashMap::default()),
            groups: Mutex::new(HashMap::new()),
            images: Mutex::default(),
            foreign: Mutex::default(),
            svm: Mutex::default(),
            dealloc: Mutex::new(Vec::new()),
            system_events: Mutex::new(Vec::new()),
            loader: Loader::default(),
            jit,
            timing,
            max_wave_instructions,
            watch,
            modeled_ns: AtomicU64::new(started_ns),
            started_ns,
            changed: Changes::default(),
            next_id: AtomicU64::new(1),
            copies: Mutex::new(None),
            smi,
        })
    }

    pub fn next_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// The system timestamp (frequency 1 GHz): `CLOCK_MONOTONIC` in nanoseconds, the clock ROCclr stamps
    /// the commands it completes on the host with (`amd::Os::timeNanos`), so HIP events timed by the host
    /// and by completion signals compare.
    pub fn timestamp(&self) -> u64 {
        monotonic_ns()
    }

    /// The time to stamp a packet or copy with now: the system timestamp, or in timing mode the modeled
    /// device clock.
    pub fn stamp_time(&self) -> u64 {
        if self.timing {
            self.modeled_ns.load(Ordering::Acquire)
        } else {
            self.timestamp()
        }
    }

    /// Timing mode: a dispatch of `ns` modeled nanoseconds; its start and end on the modeled clock, which it
    /// moves on.
    pub fn modeled_dispatch(&self, ns: u64) -> (u64, u64) {
        let start = self.modeled_ns.fetch_add(ns, Ordering::AcqRel);
        (start, start + ns)
    }

    pub fn agent(&self, handle: u64) -> Result<usize, Status> {
        let i = handle.wrapping_sub(AGENT_TAG);
        if i < self.agents.len() as u64 {
            Ok(i as usize)
        } else {
            Err(ffi::ERROR_INVALID_AGENT)
        }
    }

    /// The card of GPU agent `agent` (its place in `WAVEJIT_DEVICES`, [`Agent::card`]); `None` for the CPU.
    pub fn gpu_card(&self, agent: usize) -> Option<usize> {
        self.agents.get(agent)?.gpu?;
        Some(self.agents[agent].card)
    }

    /// The handles of the GPU agents.
    pub fn gpu_handles(&self) -> Vec<u64> {
        (0..self.agents.len())
            .filter(|&i| self.agents[i].gpu.is_some())
            .map(|i| AGENT_TAG + i as u64)
            .collect()
    }

    /// Whether `handle` is the CPU agent.
    pub fn is_cpu(&self, handle: u64) -> bool {
        self.agent(handle).is_ok_and(|i| self.agents[i].gpu.is_none())
    }

    pub fn gpu(&self, handle: u64) -> Result<(usize, &'static DevicePreset), Status> {
        let i = self.agent(handle)?;
        self.agents[i].gpu.map(|g| (i, g)).ok_or(ffi::ERROR_INVALID_AGENT)
    }

    pub fn pool(&self, handle: u64, tag: u64) -> Result<usize, Status> {
        let i = handle.wrapping_sub(tag);
        if i < self.pools.len() as u64 {
            Ok(i as usize)
        } else if tag == REGION_TAG {
            Err(ffi::ERROR_INVALID_REGION)
        } else {
            Err(ffi::ERROR_INVALID_MEMORY_POOL)
        }
    }

    /// Allocates `size` bytes from pool `pool`.
    pub fn allocate(&self, pool: usize, size: u64) -> Result<u64, Status> {
        let p = &self.pools[pool];
        if !p.alloc_allowed || size == 0 {
            return Err(ffi::ERROR_INVALID_ALLOCATION);
        }
        if size > p.size {
            return Err(ffi::ERROR_OUT_OF_RESOURCES);
        }
        let kind = if p.flags & ffi::GLOBAL_FLAG_KERNARG != 0 {
            AllocKind::Kernarg
        } else {
            AllocKind::Buffer
        };
        let address = self
            .mem
            .allocate(size, kind, p.label)
            .map_err(|_| ffi::ERROR_OUT_OF_RESOURCES)?;
        if p.flags & ffi::GLOBAL_FLAG_FINE_GRAINED != 0 {
            self.mem
                .set_fine_grained(address)
                .map_err(|_| ffi::ERROR_OUT_OF_RESOURCES)?;
        }
        self.allocs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(address, Alloc { size, pool });
        if let (Some(smi), Some(gpu)) = (&self.smi, self.gpu_card(p.agent)) {
            smi.vram_allocated(gpu, size);
        }
        Ok(address)
    }

    pub fn free(&self, address: u64) -> Result<(), Status> {
        let removed = self.allocs.lock().unwrap_or_else(|e| e.into_inner()).remove(&address);
        let alloc = removed.ok_or(ffi::ERROR_INVALID_ALLOCATION)?;
        if let (Some(smi), Some(gpu)) = (&self.smi, self.gpu_card(self.pools[alloc.pool].agent)) {
            smi.vram_freed(gpu, alloc.size);
        }
        // the deallocation callbacks of pointers into it run first, outside any lock
        let due: Vec<(u64, DeallocCallback, usize)> = {
            let mut d = self.dealloc.lock().unwrap_or_else(|e| e.into_inner());
            let due = d.iter().filter(|e| e.0 == address).map(|e| (e.1, e.2, e.3)).collect();
            d.retain(|e| e.0 != address);
            due
        };
        for (ptr, f, data) in due {
            let _ = std::panic::catch_unwind(|| f(ptr as *mut _, data as *mut _));
        }
        self.mem.free(address).map_err(|_| ffi::ERROR_INVALID_ALLOCATION)
    }

    /// The API allocation holding `address`: (start, allocation).
    pub fn allocation_of(&self, address: u64) -> Option<(u64, Alloc)> {
        let allocs = self.allocs.lock().unwrap_or_else(|e| e.into_inner());
        allocs
            .range(..=address)
            .next_back()
            .filter(|(s, a)| address < *s + a.size)
            .map(|(s, a)| (*s, *a))
    }

    /// Tells every waiter that a signal may have changed.
    pub fn notify(&self) {
        let c = &self.changed;
        c.count.fetch_add(1, Ordering::SeqCst);
        // waking sleepers is a system call: only when someone sleeps (see `wait_since` for why none is missed)
        if c.sleepers.load(Ordering::SeqCst) > 0 {
            let _g = c.lock.lock().unwrap_or_else(|e| e.into_inner());
            c.cv.notify_all();
        }
    }

    /// How many host-side signal changes there have been: take it *before* looking at a condition, then
    /// [`Runtime::wait_since`] it, and no change in between is missed.
    pub fn changes(&self) -> u64 {
        self.changed.count.load(Ordering::SeqCst)
    }

    /// Sleeps until there has been a change since `seen` (see [`Runtime::changes`]) or `at_most` passes.
    ///
    /// A waiter counts itself among the sleepers before it looks at the count, and a notifier counts the change
    /// before it looks at the sleepers (both sequentially consistent): either the waiter sees the change and does
    /// not sleep, or the notifier sees the sleeper and takes the lock — which the waiter holds from its look
    /// until it sleeps — to wake it.
    pub fn wait_since(&self, seen: u64, at_most: Duration) {
        let c = &self.changed;
        c.sleepers.fetch_add(1, Ordering::SeqCst);
        let g = c.lock.lock().unwrap_or_else(|e| e.into_inner());
        let _ =
            c.cv.wait_timeout_while(g, at_most, |_| c.count.load(Ordering::SeqCst) == seen);
        c.sleepers.fetch_sub(1, Ordering::SeqCst);
    }
}

/// How long a waiter polls before it sleeps. Waking a sleeping thread costs 5-30 µs on a busy host, longer than
/// the whole dispatch of a short kernel, so waits for a packet or a completion look again and again first
/// (as ROCm's runtime spins before it waits for an interrupt).
pub const SPIN: Duration = Duration::from_micros(100);

/// Calls `look` until it finds something or `at_most` passes (checking the time every few looks); `None` then.
/// Between rounds of looks the thread yields its core, so on a host with more runnable threads than cores the
/// thread it waits for (the packet processor, the program) gets to run.
pub fn spin<T>(at_most: Duration, mut look: impl FnMut() -> Option<T>) -> Option<T> {
    let start = std::time::Instant::now();
    loop {
        for _ in 0..16 {
            if let Some(t) = look() {
                return Some(t);
            }
            std::hint::spin_loop();
        }
        if start.elapsed() >= at_most {
            return None;
        }
        std::thread::yield_now();
    }
}

/// Host-side signal changes: a count, and what sleepers wait on.
#[derive(Default)]
pub struct Changes {
    count: AtomicU64,
    sleepers: std::sync::atomic::AtomicU32,
    lock: Mutex<()>,
    cv: Condvar,
}

/// `WAVEJIT_JIT_STATS`: what the JIT did in this process, on stderr at exit.
extern "C" fn print_jit_stats() {
    let rt = RUNTIME.read().map(|g| g.1.clone()).unwrap_or(None);
    if let Some(j) = rt.as_ref().and_then(|r| r.jit.as_ref()) {
        eprintln!("wavejit: jit: {}", j.stats());
    }
}

/// The runtime and `hsa_init`'s reference count.
static RUNTIME: RwLock<(usize, Option<Arc<Runtime>>)> = RwLock::new((0, None));

pub fn init() -> Result<(), Status> {
    let mut g = RUNTIME.write().unwrap_or_else(|e| e.into_inner());
    if g.0 == 0 {
        match Runtime::new() {
            Ok(rt) => {
                if let Some(p) = gpu::profile::get() {
                    let agents = rt
                        .agents
                        .iter()
                        .enumerate()
                        .map(|(i, a)| match a.gpu {
                            Some(g) => gpu::profile::gpu_agent(i as u32, g),
                            None => gpu::profile::cpu_agent(i as u32, &a.cpu_name),
                        })
                        .collect();
                    let start =
                        profiler_hooks::record::now_ns().saturating_sub(monotonic_ns().saturating_sub(rt.started_ns));
                    p.process(agents, start, rt.timing);
                }
                g.1 = Some(Arc::new(rt))
            }
            Err(why) => {
                eprintln!("wavejit: hsa_init failed: {why}");
                return Err(ffi::ERROR_OUT_OF_RESOURCES);
            }
        }
    }
    g.0 = g.0.checked_add(1).ok_or(ffi::ERROR)?;
    Ok(())
}

pub fn shut_down() -> Result<(), Status> {
    let rt = {
        let mut g = RUNTIME.write().unwrap_or_else(|e| e.into_inner());
        if g.0 == 0 {
            return Err(ffi::ERROR_NOT_INITIALIZED);
        }
        g.0 -= 1;
        if g.0 > 0 {
            return Ok(());
        }
        g.1.take()
    };
    if let Some(rt) = rt {
        let queues: Vec<Arc<Queue>> = rt
            .queues
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .drain()
            .map(|(_, q)| q)
            .collect();
        for q in queues {
            q.stop(&rt);
        }
        crate::memory::stop_copy_engine(&rt);
        crate::signal::clear_async_handlers();
        if let Some(p) = &rt.smi {
            gpu::smi::retire(p);
        }
    }
    Ok(())
}

/// The running runtime, or `HSA_STATUS_ERROR_NOT_INITIALIZED`.
pub fn rt() -> Result<Arc<Runtime>, Status> {
    RUNTIME
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .1
        .clone()
        .ok_or(ffi::ERROR_NOT_INITIALIZED)
}

#[cfg(test)]
mod tests {
    use super::visible_gpus;

    fn uuids() -> Vec<String> {
        ["GPU-2c0cc85361ca5c7e", "GPU-56fcdd630771f717", "GPU-a181270787a6da67"]
            .map(String::from)
            .to_vec()
    }

    #[test]
    fn rocr_visible_devices_is_read_as_rocms_runtime_reads_it() {
        let u = uuids();
        let v = |s: Option<&str>| visible_gpus(s, &u);
        // unset: all; set but empty: none
        assert_eq!(v(None), [0, 1, 2]);
        assert_eq!(v(Some("")), [] as [usize; 0]);
        // indices in the order listed, trimmed, strtol's bases
        assert_eq!(v(Some("2,0")), [2, 0]);
        assert_eq!(v(Some(" 1 , 2 ")), [1, 2]);
        assert_eq!(v(Some("0x2,01")), [2, 1]);
        assert_eq!(v(Some("0,")), [0]);
        // the first token naming no GPU, or one named before, ends the list
        assert_eq!(v(Some("-1")), [] as [usize; 0]);
        assert_eq!(v(Some("3,0")), [] as [usize; 0]);
        assert_eq!(v(Some("1,x,0")), [1]);
        assert_eq!(v(Some("1,1,0")), [1]);
        assert_eq!(v(Some("09")), [] as [usize; 0]);
        assert_eq!(v(Some("1,,0")), [1]);
        assert_eq!(v(Some("+")), [] as [usize; 0]);
        assert_eq!(v(Some("+2")), [2]);
        // at most one token per GPU
        assert_eq!(v(Some("0,1,2,0")), [0, 1, 2]);
        // UUIDs and unique prefixes of 5 to 20 characters, without case
        assert_eq!(v(Some("GPU-a181270787a6da67,gpu-2C0C")), [2, 0]);
        assert_eq!(v(Some("GPU-5")), [1]);
        assert_eq!(v(Some("GPU-")), [] as [usize; 0]);
        assert_eq!(v(Some("GPU-2c0cc85361ca5c7e0")), [] as [usize; 0]);
        assert_eq!(v(Some("GPU-ffff,0")), [] as [usize; 0]);
    }
}

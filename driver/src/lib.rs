//! An emulated amdgpu kernel driver: `/dev/kfd` and the render nodes `/dev/dri/renderD<N>` of emulated GPUs,
//! inside the program, so that ROCm's own user space — the thunk (libhsakmt) and ROCr under HIP, or tinygrad's
//! runtime — runs unmodified on wavejit's GPUs (`wavejit exec --driver kfd`).
//!
//! `wavejit exec` loads this library into the program (LD_PRELOAD) beside its sysfs view of the GPUs
//! (`tools/src/exec/sysfs.rs`: the KFD topology, the render nodes' IP versions). The program opens the device
//! files ([`files`]: memory files, so that its `mmap` of device memory, doorbells and MMIO is the kernel's own)
//! and issues ioctls ([`hooks`]): the KFD interface 1.14 ([`kfd`]) and what libdrm asks of the render node
//! ([`drm`]). Buffer objects live in the render node's file or in the program's own pages (userptr), and
//! mapping one to the GPU makes its range reachable by kernels at the program's address for it ([`memory`]);
//! shared virtual memory (HIP's managed memory) makes the program's own pages reachable where a GPU was given
//! access to them ([`svm`]).
//! Events and their waits are [`events`]; the GPU clock is [`clock`].
//!
//! Faults are the GPU's: an access outside every mapping raises the memory-exception event, whose data the
//! runtime turns into its own report. Unsupported ioctls fail with ENOTTY or EINVAL and one line on stderr
//! naming them — never EAGAIN or EINTR, which the thunk would retry forever.

pub mod aql;
pub mod args;
pub mod clock;
pub mod dispatch;
pub mod drm;
pub mod events;
pub mod files;
pub mod hooks;
pub mod kfd;
pub mod memory;
pub mod pm4;
pub mod queues;
pub mod sdma;
pub mod svm;
pub mod symbols;
#[cfg(test)]
mod testing;

use std::sync::{Arc, Mutex};

use emu_core::memory::DeviceMemory;
use emu_core::DevicePreset;

use files::DeviceFile;

/// One emulated GPU: its preset, its identity in the KFD topology, and its memory (the render node's file).
pub struct Gpu {
    pub preset: &'static DevicePreset,
    /// Its place in `WAVEJIT_DEVICES`.
    pub index: usize,
    /// The KFD gpu id, as the topology's `nodes/N/gpu_id` says.
    pub gpu_id: u32,
    /// The render node's minor number (`/dev/dri/renderD<minor>`).
    pub render_minor: u32,
    /// Its memory: VRAM and GTT buffer objects are ranges of this file.
    pub render: DeviceFile,
    /// Which ranges of `render` are free.
    pub space: Mutex<memory::Space>,
}

/// The driver of this process: its GPUs and everything the program made on them.
pub struct Driver {
    pub settings: gpu::Settings,
    pub gpus: Vec<Gpu>,
    /// `/dev/kfd`: the GPUs' doorbell and MMIO pages.
    pub kfd: DeviceFile,
    /// The GPUs' virtual address space as kernels see it: what is mapped to them, and the emulator's own
    /// allocations (private memory) in its arena.
    pub mem: DeviceMemory,
    pub bos: memory::Bos,
    /// Shared virtual memory: attributes of the program's own pages, and which of them the GPUs reach.
    pub svm: svm::Svm,
    pub events: events::Events,
    pub jit: Option<jit::Jit>,
    pub clock: clock::Clock,
    /// Code the GPUs ran, decoded and translated.
    pub code: dispatch::CodeCache,
    pub queues: queues::Queues,
    /// This process in the SMI registry (`None` when switched off or unusable).
    pub smi: Option<profiler_hooks::smi::Publisher>,
}

/// The bytes of the emulator's own device memory (private segments of dispatches), reserved, not used.
const ARENA_BYTES: u64 = 64 << 30;

impl Driver {
    /// The driver for the GPUs the environment names (`gpu::Settings`), entered in the SMI registry.
    pub fn new() -> Result<Driver, String> {
        let settings = gpu::Settings::from_env()?;
        let smi = gpu::smi::publish(&settings.devices);
        Driver::from_settings(settings, smi)
    }

    /// The driver for the GPUs `settings` names; `smi` is its entry in the SMI registry, if it has one.
    pub fn from_settings(
        settings: gpu::Settings,
        smi: Option<profiler_hooks::smi::Publisher>,
    ) -> Result<Driver, String> {
        // the GPUs' memory files `wavejit exec` made for all processes of the program, if it did
        let shared: Vec<i32> = std::env::var(gpu::vram::VRAM_FDS)
            .unwrap_or_default()
            .split(',')
            .filter_map(|f| f.trim().parse().ok())
            .collect();
        let mut gpus = Vec::new();
        for (index, preset) in settings.devices.iter().enumerate() {
            let identity = kfd::identity(index, preset);
            let number = files::Number {
                major: files::DRM_MAJOR,
                minor: identity.render_minor,
            };
            let render = match shared.get(index) {
                Some(&fd) => files::shared_part(fd, preset, number),
                None => DeviceFile::new(
                    &format!("wavejit-renderD{}", identity.render_minor),
                    gpu::vram::part_len(preset),
                    number,
                ),
            }
            .map_err(|e| format!("cannot make the memory of GPU {index} ({}): {e}", preset.id))?;
            let (start, end) = render.view_range();
            gpus.push(Gpu {
                preset,
                index,
                gpu_id: identity.gpu_id,
                render_minor: identity.render_minor,
                render,
                space: Mutex::new(memory::Space::new(start, end - start)),
            });
        }
        let kfd = DeviceFile::new(
            "wavejit-kfd",
            files::KFD_PER_GPU * gpus.len().max(1) as u64,
            files::KFD_NUMBER,
        )
        .map_err(|e| format!("cannot make /dev/kfd: {e}"))?;
        let mem = DeviceMemory::new(ARENA_BYTES).map_err(|e| e.to_string())?;
        mem.set_memcheck(settings.memcheck);
        // kernels' interrupts (s_sendmsg) reach the events, as the hardware's reach the kernel driver
        emu_core::interrupt::set_handler(|ctxid| {
            if let Some(d) = driver() {
                d.events.interrupt(ctxid);
            }
        });
        let jit = settings.jit()?;
        let clock = clock::Clock::new(settings.timing);
        if let Some(p) = gpu::profile::get() {
            // the agents as ROCr numbers them: the CPU's node first, then the GPUs
            let agents = std::iter::once(gpu::profile::cpu_agent(0, "CPU"))
                .chain(
                    settings
                        .devices
                        .iter()
                        .enumerate()
                        .map(|(i, g)| gpu::profile::gpu_agent(i as u32 + 1, g)),
                )
                .collect();
            p.process(agents, profiler_hooks::record::now_ns(), settings.timing);
        }
        Ok(Driver {
            settings,
            gpus,
            kfd,
            mem,
            bos: memory::Bos::default(),
            svm: svm::Svm::default(),
            events: events::Events::default(),
            jit,
            clock,
            code: dispatch::CodeCache::default(),
            queues: queues::Queues::default(),
            smi,
        })
    }

    /// The GPU whose KFD id is `gpu_id`.
    pub fn gpu(&self, gpu_id: u32) -> Option<&Gpu> {
        self.gpus.iter().find(|g| g.gpu_id == gpu_id)
    }

    /// The number of GPU `gpu` (its place in `WAVEJIT_DEVICES`) among the agents of the process's profile
    /// record (the CPU is 0).
    pub fn agent(&self, gpu: usize) -> u32 {
        gpu as u32 + 1
    }

    /// The place of the GPU whose KFD id is `gpu_id`.
    pub fn gpu_index(&self, gpu_id: u32) -> Option<usize> {
        self.gpus.iter().position(|g| g.gpu_id == gpu_id)
    }
}

/// The process's driver, made when the program first opens a device file.
static DRIVER: Mutex<Option<Arc<Driver>>> = Mutex::new(None);

/// The driver, if the program has opened a device.
pub fn driver() -> Option<Arc<Driver>> {
    DRIVER.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

/// The driver, made now if there is none yet (a failure says why once, on stderr, and every open fails).
pub fn start() -> Result<Arc<Driver>, i32> {
    let mut d = DRIVER.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(d) = d.as_ref() {
        return Ok(d.clone());
    }
    static REFUSED: std::sync::Once = std::sync::Once::new();
    match Driver::new() {
        Ok(new) => {
            let new = Arc::new(new);
            *d = Some(new.clone());
            static FORK: std::sync::Once = std::sync::Once::new();
            // SAFETY: registers a plain function run in the child after fork.
            FORK.call_once(|| unsafe {
                libc::pthread_atfork(None, None, Some(forget_in_child));
            });
            Ok(new)
        }
        Err(e) => {
            REFUSED.call_once(|| eprintln!("wavejit: the emulated GPU driver cannot start: {e}"));
            Err(libc::ENODEV)
        }
    }
}

/// A forked child has none of its parent's GPU threads: its driver starts afresh when it opens the devices again
/// (ROCm's thunk reopens `/dev/kfd` in a child). The parent's driver is left, not dropped: its threads are not in
/// this process.
extern "C" fn forget_in_child() {
    if let Ok(mut d) = DRIVER.try_lock() {
        if let Some(old) = d.take() {
            std::mem::forget(old);
        }
    }
}

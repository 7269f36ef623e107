//! Kernels the command processors launch: the code found where the GPUs' page tables put it, run on the engine.
//!
//! A dispatch names its code by address only (an AQL packet's kernel object, PM4's `COMPUTE_PGM_LO/HI`). The
//! engine runs code as a [`LoadedCode`]: here, the whole mapped range holding the entry point, whose bytes are
//! hashed so that translations are shared with every earlier load of the same bytes. Decoded and translated code
//! is kept per range until the program invalidates the instruction cache (PM4's ACQUIRE_MEM with the
//! instruction-cache bit, which ROCm sends after every code-object load and tinygrad before every kernel), as a
//! GPU's would be.
//!
//! A kernel's name comes from the code object when it is in memory whole, as ROCm's loader leaves it (its ELF
//! header, metadata note and dynamic symbols are in its first segment): the symbol whose address is the kernel
//! descriptor's, with its arguments from the metadata for the debugger. Otherwise (tinygrad loads only the
//! sections) the kernel is named by its descriptor's address.
//!
//! Dispatches run through `gpu::dispatch`, as the drop-in runtime's do: under the debugger or the explorer
//! when asked, observed by the counters under `wavejit profile`, counted for `wavejit exec`'s report, and busy
//! in the SMI registry while they run.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use emu_core::dispatch::DispatchShape;
use emu_core::engine::{DecodeCache, EngineError, Launch, Limits, LoadedCode, RunStats};
use inspect::DebugInfo;
use isa_amdgpu::codeobj::KernelDescriptor;

use crate::Driver;

/// Code the GPUs ran, by the start of its mapped range.
#[derive(Default)]
pub struct CodeCache {
    entries: Mutex<HashMap<u64, Arc<Code>>>,
}

/// A mapped range of code, decoded as it runs.
pub struct Code {
    pub loaded: LoadedCode,
    pub cache: DecodeCache,
    /// Kernels by the address of their descriptor, and functions (from the code objects' symbols, where they
    /// are whole).
    symbols: crate::symbols::Symbols,
}

impl Code {
    /// The name of the kernel whose descriptor is at `descriptor`: its symbol, or its address.
    pub fn name(&self, descriptor: u64) -> String {
        self.symbols
            .kernels
            .get(&descriptor)
            .map(|k| k.name.clone())
            .unwrap_or_else(|| format!("kernel@{descriptor:#x}"))
    }

    /// `.agpr_count` of the metadata of the kernel whose descriptor is at `descriptor`.
    fn agpr_count(&self, descriptor: u64) -> Option<u64> {
        let k = self.symbols.kernels.get(&descriptor)?;
        k.metadata.as_ref()?.agpr_count
    }

    /// What the debugger and the explorer know of the kernel `name` whose descriptor is at `address`.
    fn info(&self, name: &str, address: u64, descriptor: &KernelDescriptor) -> DebugInfo {
        let args = self
            .symbols
            .kernels
            .get(&address)
            .and_then(|k| k.metadata.as_ref())
            .map(|m| &m.args[..])
            .unwrap_or_default();
        DebugInfo::new(name, self.symbols.functions.clone(), args, descriptor)
    }
}

/// What a command processor asks the engine to run.
pub struct Job {
    pub descriptor: KernelDescriptor,
    /// The descriptor's address (the kernel's name is looked up by it).
    pub descriptor_address: u64,
    pub entry: u64,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub kernarg_address: u64,
    pub group_segment_size: u32,
    pub private_segment_size: u32,
    pub packet: u64,
    pub queue: u64,
    /// User SGPRs as PM4's registers give them (`None`: as the descriptor asks, from the packet).
    pub user_sgprs: Option<Vec<u32>>,
    /// A cooperative launch (its queue has global wave sync resources).
    pub cooperative: bool,
}

impl CodeCache {
    /// Forgets every range: the instruction cache is invalidated.
    pub fn flush(&self) {
        self.entries.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }
}

impl Driver {
    /// The code holding `entry` on GPU `gpu`: the mapped range around it.
    pub fn code_at(&self, gpu: usize, entry: u64) -> Result<Arc<Code>, String> {
        let (start, len, _) = self
            .mem
            .direct_at(entry)
            .ok_or_else(|| format!("the kernel's code at {entry:#x} is not in memory mapped to the GPU"))?;
        if let Some(c) = self.code.entries.lock().unwrap_or_else(|e| e.into_inner()).get(&start) {
            return Ok(c.clone());
        }
        let mut bytes = vec![0u8; len as usize];
        self.mem.read(start, &mut bytes).map_err(|e| e.to_string())?;
        let target = self.gpus[gpu].preset.target;
        let mut key = 0xcbf2_9ce4_8422_2325u64 ^ target as u64;
        for b in &bytes {
            key = (key ^ *b as u64).wrapping_mul(0x100_0000_01b3);
        }
        let loaded = LoadedCode {
            base: start,
            size: len,
            target,
            key,
            grid_sync: emu_core::engine::may_grid_sync(&bytes),
        };
        let code = Arc::new(Code {
            cache: DecodeCache::new(&loaded),
            symbols: crate::symbols::symbols(&bytes, start),
            loaded,
        });
        self.code
            .entries
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(start, code.clone());
        Ok(code)
    }

    /// Runs `job` on GPU `gpu`, every workgroup to its end.
    pub fn launch(&self, gpu: usize, job: &Job) -> Result<(RunStats, String), EngineError> {
        let device = self.gpus[gpu].preset;
        let code = self.code_at(gpu, job.entry).map_err(|what| EngineError::Inspect {
            kernel: format!("kernel@{:#x}", job.descriptor_address),
            what,
        })?;
        let name = code.name(job.descriptor_address);
        let shape = DispatchShape::new(job.grid, job.block, device)?;
        let mut kernarg = vec![0u8; job.descriptor.kernarg_size as usize];
        if !kernarg.is_empty() {
            self.mem
                .read(job.kernarg_address, &mut kernarg)
                .map_err(|e| EngineError::Inspect {
                    kernel: name.clone(),
                    what: format!("its kernel arguments are not in memory the GPU can read: {e}"),
                })?;
        }
        let launch = Launch {
            code: &code.loaded,
            cache: &code.cache,
            name: &name,
            descriptor: &job.descriptor,
            entry: job.entry,
            shape,
            kernarg: &kernarg,
            kernarg_addr: job.kernarg_address,
            group_segment_size: job.group_segment_size.max(job.descriptor.group_segment_fixed_size),
            private_segment_size: job.private_segment_size.max(job.descriptor.private_segment_fixed_size),
            dispatch_packet: job.packet,
            queue: job.queue,
            cooperative: job.cooperative,
            user_sgprs: job.user_sgprs.as_deref(),
        };
        let s = &self.settings;
        let engine = gpu::dispatch::Engine {
            mem: &self.mem,
            device,
            jit: self.jit.as_ref(),
            limits: Limits {
                timing: s.timing,
                max_wave_instructions: s.max_wave_instructions,
                watch: Some(s.watch),
                ..Limits::default()
            },
        };
        let profile = gpu::profile::get();
        let host_start = profile.map(|_| profiler_hooks::record::now_ns());
        let start = self.clock.now();
        let (result, observed) = {
            // the GPU counts as busy in the SMI registry while the dispatch runs, also if the engine panics
            let _busy = self.smi.as_ref().map(|smi| smi.dispatch(gpu));
            engine.run(
                &launch,
                || code.info(&name, job.descriptor_address, &job.descriptor),
                profile,
            )
        };
        // in timing mode the dispatch takes its modeled time on the GPU clock
        let modeled_ns = match &result {
            Ok(RunStats { cycles: Some(c), .. }) => Some(c * 1000 / device.engine_clock_mhz as u64),
            _ => None,
        };
        if let Some(ns) = modeled_ns {
            self.clock.advance(ns);
        }
        let end = self.clock.now();
        if let (Some(prof), Some(observed)) = (profile, observed) {
            let origin = gpu::dispatch::Origin {
                agent: self.agent(gpu),
                queue: job.queue,
                kernel_object: job.descriptor_address,
                descriptor: &job.descriptor,
                agpr_count: code.agpr_count(job.descriptor_address),
            };
            let modeled = self.clock.modeled_ns(start).zip(self.clock.modeled_ns(end));
            let host = (host_start.unwrap_or(0), profiler_hooks::record::now_ns());
            gpu::dispatch::record(
                prof,
                device,
                &origin,
                &launch,
                host,
                modeled,
                &observed,
                result.as_ref().err(),
            );
        }
        let instructions = result.as_ref().map_or(0, |s| s.wave_instructions);
        let cycles = result.as_ref().ok().and_then(|s| s.cycles);
        gpu::report::dispatched(&name, instructions, modeled_ns.zip(cycles), result.is_err());
        if let Some(w) = result.as_ref().ok().and_then(|s| s.slack_warning()) {
            eprintln!("wavejit: warning on GPU {gpu} ({}): {w}", device.name);
        }
        let stats = result?;
        Ok((stats, name))
    }
}

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
//! header and dynamic symbols are in its first segment): the symbol whose address is the kernel descriptor's.
//! Otherwise (tinygrad loads only the sections) the kernel is named by its descriptor's address.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use emu_core::dispatch::DispatchShape;
use emu_core::engine::{run_launch, DecodeCache, EngineError, Launch, Limits, LoadedCode, RunStats};
use emu_core::observe::NoObserver;
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
    /// Kernel names by the address of their descriptor (from the code object's symbols, where it is whole).
    names: HashMap<u64, String>,
}

impl Code {
    /// The name of the kernel whose descriptor is at `descriptor`: its symbol, or its address.
    pub fn name(&self, descriptor: u64) -> String {
        self.names
            .get(&descriptor)
            .cloned()
            .unwrap_or_else(|| format!("kernel@{descriptor:#x}"))
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
            names: crate::symbols::kernel_names(&bytes, start),
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
        let limits = Limits {
            timing: s.timing,
            max_wave_instructions: s.max_wave_instructions,
            watch: Some(s.watch),
            ..Limits::default()
        };
        let stats = match &self.jit {
            Some(j) => run_launch(&self.mem, device, &launch, limits, j, &NoObserver),
            None => run_launch(
                &self.mem,
                device,
                &launch,
                limits,
                &emu_core::engine::Interpreter,
                &NoObserver,
            ),
        }?;
        Ok((stats, name))
    }
}

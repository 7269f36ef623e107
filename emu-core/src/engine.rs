//! Runs a kernel dispatch: loads the code object into device memory, builds the kernarg segment, starts the
//! waves of every workgroup with the state the hardware gives them and interprets them to `s_endpgm`, with
//! `s_barrier` synchronising the waves of a workgroup. Every fault names the kernel, the PC, the instruction
//! and (for memory) the lane and address.

use std::sync::OnceLock;

use isa_amdgpu::codeobj::kd::KernelDescriptor;
use isa_amdgpu::codeobj::{CodeObject, Kernel};
use isa_amdgpu::{decode, disasm, Inst, Target};

use crate::device::DevicePreset;
use crate::dispatch::{DispatchAddresses, DispatchContext, DispatchError, DispatchShape, WaveTemplate};
use crate::interp::Interp;
use crate::kernarg::{build_kernarg, ArgValue, HiddenValues, KernargError};
use crate::memory::{AllocError, AllocKind, DeviceMemory};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::observe::{next_dispatch_id, Accesses, Dispatched, Event, InstEvent, NoObserver, Observer, Resources};
use crate::sem::{execute, ExecError, Stop};
use crate::wave::WaveClock;
use crate::wave::{WaveState, WaveStatus};

/// How a dispatch runs: limits that stop a runaway kernel, and host parallelism.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Instructions one wave may execute.
    pub max_wave_instructions: u64,
    /// Host threads running workgroups in parallel (`None`: all cores). Results do not depend on it.
    pub threads: Option<usize>,
    /// Instructions a wave runs before the others get a turn (`None`: until it waits or ends). Cooperative
    /// launches that sync the grid take turns (of this many, or 20,000 when `None`), so a wave spinning on a
    /// flag another workgroup sets lets that workgroup run.
    pub slice: Option<u64>,
    /// A turn also ends before an instruction that reads a clock, unless that instruction is the turn's
    /// first ([`crate::sem::reads_clock`]): the timing model sets the wave's clock to the modeled cycle at
    /// which a turn starts issuing.
    pub clock_ends_turn: bool,
    /// A turn also ends where the wave has gone round a polling loop [`crate::sem::POLLS_PER_TURN`] times in a
    /// row ([`crate::sem::goes_back`]), and the wave is marked [`WaveState::polled`]: a wave spinning on a flag
    /// another workgroup sets lets its host thread run other workgroups meanwhile. [`run_launch`] sets it for
    /// the dispatches it runs functionally.
    pub poll_ends_turn: bool,
    /// Run the dispatch in the timing model ([`run_launch`] schedules it there): one host thread, modeled
    /// cycles, the same results.
    pub timing: bool,
    /// Watch the dispatch ([`crate::watch`]): progress reports while it runs long, and its timeout.
    pub watch: Option<crate::watch::Watch>,
}

/// The per-wave instruction limit of every command and of programs run on the runtime shim, unless told
/// otherwise: ten billion, minutes of emulation for one wave, far beyond what the test suites of HIP and its
/// libraries run, so only a kernel that never ends reaches it. A dispatch that runs long says so on stderr
/// meanwhile ([`crate::watch`]), and a timeout stops it sooner.
pub const DEFAULT_MAX_WAVE_INSTRUCTIONS: u64 = 10_000_000_000;

/// The per-wave instruction limit a person asked for: `n`, or none (`u64::MAX`) for 0.
pub fn instruction_limit(n: u64) -> u64 {
    if n == 0 {
        u64::MAX
    } else {
        n
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_wave_instructions: DEFAULT_MAX_WAVE_INSTRUCTIONS,
            threads: None,
            slice: None,
            clock_ends_turn: false,
            poll_ends_turn: false,
            timing: false,
            watch: Some(crate::watch::Watch::default()),
        }
    }
}

/// The turn of a wave in a cooperative launch, in instructions.
const COOPERATIVE_SLICE: u64 = 20_000;

/// Decoded instructions of a loaded code object, filled on first execution and shared by all waves and
/// workgroups of a dispatch (one slot per dword of code, in chunks of [`DECODE_CHUNK`] dwords made when an
/// instruction in them is first decoded: code mapped in megabytes by a runtime costs only what runs).
pub struct DecodeCache {
    base: u64,
    dwords: u64,
    chunks: Vec<OnceLock<Box<[DecodeSlot]>>>,
}

type DecodeSlot = OnceLock<Result<Inst, isa_amdgpu::DecodeError>>;

/// Dwords of code per chunk of a [`DecodeCache`].
const DECODE_CHUNK: u64 = 1024;

impl DecodeCache {
    /// An empty cache for `code`. Keep it with the loaded code when the code is dispatched many times: decoding
    /// fills it once.
    pub fn new(code: &LoadedCode) -> DecodeCache {
        let dwords = code.size.div_ceil(4);
        DecodeCache {
            base: code.base,
            dwords,
            chunks: (0..dwords.div_ceil(DECODE_CHUNK)).map(|_| OnceLock::new()).collect(),
        }
    }

    /// The instruction at `pc`, decoded once.
    pub fn get(&self, mem: &DeviceMemory, code: &LoadedCode, pc: u64) -> Result<Inst, isa_amdgpu::DecodeError> {
        let truncated = |have| isa_amdgpu::DecodeError::Truncated {
            address: pc,
            need: 4,
            have,
        };
        if !pc.is_multiple_of(4) || pc < self.base {
            return Err(isa_amdgpu::DecodeError::Invalid {
                address: pc,
                words: vec![],
                reason: "PC outside the code or not dword-aligned",
            });
        }
        let dword = (pc - self.base) / 4;
        if dword >= self.dwords {
            return Err(truncated(0));
        }
        let chunk = self.chunks[(dword / DECODE_CHUNK) as usize]
            .get_or_init(|| (0..DECODE_CHUNK).map(|_| OnceLock::new()).collect());
        let slot = &chunk[(dword % DECODE_CHUNK) as usize];
        slot.get_or_init(|| {
            let mut buf = [0u8; 12];
            let avail = (code.base + code.size).saturating_sub(pc).min(12) as usize;
            if avail < 4 || mem.read(pc, &mut buf[..avail]).is_err() {
                return Err(truncated(avail));
            }
            decode(&buf[..avail], pc, code.target)
        })
        .clone()
    }
}

/// What a dispatch did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunStats {
    pub workgroups: u64,
    pub waves: u64,
    pub wave_instructions: u64,
    /// Modeled shader-clock cycles of the dispatch (timing mode).
    pub cycles: Option<u64>,
    /// Lane accesses outside their allocation's bytes but inside its pages, which a GPU lets through
    /// ([`crate::memory::DeviceMemory::check_guest`]; none in memcheck mode).
    pub slack: u64,
    /// The first of them in dispatch order: lowest workgroup, then wave, then the wave's first.
    pub first_slack: Option<Box<SlackReport>>,
}

impl RunStats {
    /// Adds `other`'s counts (a later part of the same dispatch) to these.
    pub fn add(&mut self, other: RunStats) {
        self.workgroups += other.workgroups;
        self.waves += other.waves;
        self.wave_instructions += other.wave_instructions;
        self.slack += other.slack;
        self.first_slack = self.first_slack.take().or(other.first_slack);
    }

    /// Whether `other` equals these statistics but for the PC of the first slack access (a dispatch that loads
    /// its code anew has it at another address).
    pub fn same_but_code_address(&self, other: &RunStats) -> bool {
        let placed = |s: &RunStats| {
            let mut s = s.clone();
            if let Some(f) = s.first_slack.as_mut() {
                f.pc = 0;
            }
            s
        };
        placed(self) == placed(other)
    }

    /// The warning a dispatch with slack accesses gets: how many, and the first.
    pub fn slack_warning(&self) -> Option<String> {
        let first = self.first_slack.as_ref()?;
        let n = self.slack;
        Some(format!(
            "{n} access{} past the end of {}, inside {} last page{}; the first: {first}",
            if n == 1 { "" } else { "es" },
            if n == 1 { "an allocation" } else { "allocations" },
            if n == 1 { "its" } else { "their" },
            if n == 1 { "" } else { "s" },
        ))
    }
}

/// Where a dispatch's first slack access happened, and what it did: a fault report's fields, for a warning.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlackReport {
    pub kernel: String,
    pub workgroup: [u32; 3],
    pub wave: u32,
    pub pc: u64,
    /// The instruction's text.
    pub text: String,
    pub mnemonic: &'static str,
    /// The lane (`None`: a scalar access).
    pub lane: Option<u32>,
    pub slack: crate::memory::Slack,
}

impl std::fmt::Display for SlackReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let SlackReport {
            kernel,
            workgroup,
            wave,
            pc,
            text,
            mnemonic,
            lane,
            slack,
        } = self;
        let lane = lane.map(|l| format!("lane {l}: ")).unwrap_or_default();
        let verb = if slack.access == crate::memory::Access::Read {
            "reads"
        } else {
            "writes"
        };
        write!(
            f,
            "kernel {kernel}, workgroup {workgroup:?}, wave {wave}, pc {pc:#x} (`{text}`): {mnemonic}: {lane}{slack}; the GPU {verb} the allocation's last page, so the dispatch went on; --memcheck stops at such accesses"
        )
    }
}

/// What workgroup `g`'s waves did, once they have all ended (a functional dispatch: no cycles).
fn group_stats(kernel: &str, g: &Group) -> RunStats {
    let (slack, first_slack) = group_slack(kernel, g);
    RunStats {
        workgroups: 1,
        waves: g.waves.len() as u64,
        wave_instructions: g.waves.iter().map(|w| w.executed).sum(),
        cycles: None,
        slack,
        first_slack,
    }
}

/// The slack accesses of workgroup `g`'s waves: how many, and the first in wave order.
fn group_slack(kernel: &str, g: &Group) -> (u64, Option<Box<SlackReport>>) {
    let count = g.waves.iter().map(|w| w.slack.count).sum();
    let first = g.waves.iter().enumerate().find_map(|(i, w)| {
        let f = w.slack.first.as_deref()?;
        let (pc, text) = f.at.clone().unwrap_or_default();
        Some(Box::new(SlackReport {
            kernel: kernel.to_string(),
            workgroup: g.wg,
            wave: i as u32,
            pc,
            text,
            mnemonic: f.mnemonic,
            lane: f.lane,
            slack: f.slack.clone(),
        }))
    });
    (count, first)
}

/// Why a dispatch stopped.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Dispatch(#[from] DispatchError),
    #[error(transparent)]
    Kernarg(#[from] KernargError),
    #[error(transparent)]
    Alloc(#[from] AllocError),
    #[error("kernel {kernel}: code object is for {found}, the device runs {device}")]
    WrongTarget {
        kernel: String,
        found: String,
        device: &'static str,
    },
    #[error("kernel {kernel}: no metadata for it in the code object")]
    NoMetadata { kernel: String },
    #[error("kernel {kernel}, workgroup {workgroup:?}, wave {wave}, pc {pc:#x} (`{text}`): {error}")]
    Fault {
        kernel: String,
        workgroup: [u32; 3],
        wave: u32,
        pc: u64,
        text: String,
        error: Box<ExecError>,
    },
    #[error("kernel {kernel}, workgroup {workgroup:?}, wave {wave}, pc {pc:#x}: cannot decode instruction: {error}")]
    IllegalInstruction {
        kernel: String,
        workgroup: [u32; 3],
        wave: u32,
        pc: u64,
        error: isa_amdgpu::DecodeError,
    },
    #[error("kernel {kernel}, workgroup {workgroup:?}, wave {wave}, block at pc {pc:#x}: the engines differ: {diff}")]
    Crosscheck {
        kernel: String,
        workgroup: [u32; 3],
        wave: u32,
        pc: u64,
        diff: String,
    },
    #[error("kernel {kernel}, pc {pc:#x}: the JIT could not translate this block: {why}")]
    Translation { kernel: String, pc: u64, why: String },
    #[error("kernel {kernel}: its descriptor asks for float mode {what}; the engine computes with IEEE round-to-nearest-even and denormals kept (clang's default for gfx90a/gfx942)")]
    FloatMode { kernel: String, what: String },
    #[error("kernel {kernel}: {what}")]
    GridSync { kernel: String, what: String },
    #[error("kernel {kernel}: timing model: {what}")]
    Timing { kernel: String, what: String },
    /// A dispatch run under a debugger or recorder (the `inspect` crate) could not go on.
    #[error("kernel {kernel}: {what}")]
    Inspect { kernel: String, what: String },
    #[error("kernel {kernel}, workgroup {workgroup:?}, wave {wave}: ran {limit} instructions without ending (a runaway kernel, or one longer than the per-wave instruction limit)")]
    Runaway {
        kernel: String,
        workgroup: [u32; 3],
        wave: u32,
        limit: u64,
    },
    /// A dispatch stopped by its timeout ([`crate::watch`]), with where its waves were.
    #[error("kernel {kernel}: stopped after {seconds:.1} s (the timeout): {done} of {total} waves had ended, {instructions} instructions executed; {waves}")]
    Timeout {
        kernel: String,
        seconds: f64,
        done: u64,
        total: u64,
        instructions: u64,
        /// Where each wave still running was: "workgroup [0, 0, 0] wave 1 at pc 0x… (`s_branch …`)", ...
        waves: String,
    },
    /// A wave's runner saw its dispatch's [`crate::watch::Progress::stopped`]: what becomes
    /// [`EngineError::Timeout`] once every wave has stopped.
    #[error("kernel {kernel}: stopped")]
    Stopped { kernel: String },
}

/// The [`EngineError::Timeout`] of a dispatch that `progress` stopped, its waves' places decoded from `code`.
pub fn timeout_error(
    kernel: &str,
    progress: &crate::watch::Progress,
    mem: &DeviceMemory,
    code: &LoadedCode,
    cache: &DecodeCache,
) -> EngineError {
    let (done, _, instructions) = progress.counts();
    let at = progress.stopped_waves();
    const SHOWN: usize = 16;
    let mut waves: Vec<String> = at
        .iter()
        .take(SHOWN)
        .map(|(wg, w, pc)| {
            let text = cache
                .get(mem, code, *pc)
                .map(|i| disasm::text(&i))
                .unwrap_or_else(|_| "undecodable".into());
            let offset = pc.wrapping_sub(code.base);
            format!("workgroup {wg:?} wave {w} at pc {pc:#x} (code offset {offset:#x}: `{text}`)")
        })
        .collect();
    if at.len() > SHOWN {
        waves.push(format!("and {} more", at.len() - SHOWN));
    }
    let waves = if waves.is_empty() {
        "no wave was running".to_string()
    } else {
        format!("waves still running: {}", waves.join("; "))
    };
    EngineError::Timeout {
        kernel: kernel.to_string(),
        seconds: progress.elapsed().as_secs_f64(),
        done,
        total: progress.total(),
        instructions,
        waves,
    }
}

/// Refuses kernels whose descriptor sets a rounding or denormal mode the engine does not model.
fn check_float_mode(name: &str, descriptor: &KernelDescriptor) -> Result<(), EngineError> {
    use isa_amdgpu::codeobj::kd::{FloatDenormMode, FloatRoundMode};
    let kd = &descriptor.rsrc1;
    // (the names are only written for a refusal: this runs at every dispatch)
    let modes: [(&str, bool, &dyn Fn() -> String); 4] = [
        ("round_32", kd.float_round_mode_32 != FloatRoundMode::NearEven, &|| {
            kd.float_round_mode_32.to_string()
        }),
        (
            "round_16_64",
            kd.float_round_mode_16_64 != FloatRoundMode::NearEven,
            &|| kd.float_round_mode_16_64.to_string(),
        ),
        (
            "denorm_32",
            kd.float_denorm_mode_32 != FloatDenormMode::FlushNone,
            &|| format!("{:?}", kd.float_denorm_mode_32),
        ),
        (
            "denorm_16_64",
            kd.float_denorm_mode_16_64 != FloatDenormMode::FlushNone,
            &|| format!("{:?}", kd.float_denorm_mode_16_64),
        ),
    ];
    match modes.iter().find(|m| m.1) {
        Some((field, _, value)) => Err(EngineError::FloatMode {
            kernel: name.to_string(),
            what: format!("{field} = {}", value()),
        }),
        None => Ok(()),
    }
}

/// A code object placed in device memory.
pub struct LoadedCode {
    pub base: u64,
    pub size: u64,
    pub target: Target,
    /// A hash of the loaded bytes: the same code object loaded again (at another address) has the same key,
    /// so translations keyed by (key, offset from base) are shared across dispatches.
    pub key: u64,
    /// The code may hold `ds_gws_barrier` or a GWS semaphore instruction (grid-wide sync): its dispatches
    /// need a cooperative launch.
    pub grid_sync: bool,
}

/// Whether machine code `bytes` may hold `ds_gws_barrier` or a global wave sync semaphore instruction
/// (`ds_gws_sema_v`, `_br`, `_p`, `_release_all`): some dword has one of their DS opcodes. A literal that
/// happens to look like one only makes a cooperative dispatch interleave its workgroups, which changes no
/// result. (`ds_gws_init` alone syncs nothing.)
pub fn may_grid_sync(bytes: &[u8]) -> bool {
    const MASK: u32 = 0xfdfe_0000; // encoding and opcode, not the ACC and GDS bits
    const OPCODES: [u32; 5] = [0x98, 0x9a, 0x9b, 0x9c, 0x9d];
    bytes.chunks_exact(4).any(|w| {
        let w = u32::from_le_bytes([w[0], w[1], w[2], w[3]]) & MASK;
        w & 0xfc00_0000 == 0xd800_0000 && OPCODES.contains(&(w >> 17 & 0xff))
    })
}

/// Copies the code object's allocated sections to device memory at their addresses (relative to `base`).
pub fn load_code(mem: &DeviceMemory, co: &CodeObject) -> Result<LoadedCode, EngineError> {
    let target = Target::from_name(&co.target.processor).ok_or_else(|| EngineError::WrongTarget {
        kernel: co.name.clone(),
        found: co.target.canonical(),
        device: "gfx90a/gfx942",
    })?;
    let end = co
        .sections
        .iter()
        .filter(|s| s.is_alloc())
        .map(|s| s.address + s.size)
        .max()
        .unwrap_or(0);
    let base = mem.allocate(end.max(4), AllocKind::Code, &co.name)?;
    let mut key = 0xcbf2_9ce4_8422_2325u64 ^ target as u64;
    let mut grid_sync = false;
    const SHF_EXECINSTR: u64 = 4;
    for s in co.sections.iter().filter(|s| s.is_alloc() && s.has_file_data()) {
        let bytes = co.section_bytes(s);
        grid_sync |= s.flags & SHF_EXECINSTR != 0 && may_grid_sync(bytes);
        if !bytes.is_empty() {
            mem.load_code_bytes(base + s.address, bytes)
                .expect("sections lie inside the code allocation");
        }
        // FNV-1a over placement and contents
        for b in s.address.to_le_bytes().iter().chain(bytes) {
            key = (key ^ *b as u64).wrapping_mul(0x100_0000_01b3);
        }
    }
    // kernels write their data sections (`__device__` variables), never the code
    const SHF_WRITE: u64 = 1;
    let data: Vec<(u64, u64)> = co
        .sections
        .iter()
        .filter(|s| s.is_alloc() && s.flags & SHF_WRITE != 0)
        .map(|s| (s.address, s.size))
        .collect();
    mem.set_code_writable(base, &data)
        .expect("the code allocation was just made");
    Ok(LoadedCode {
        base,
        size: end,
        target,
        key,
        grid_sync,
    })
}

/// A dispatch of one kernel of a code object that is not in device memory yet: what `wavejit run`, the demo
/// and the tests describe. Running it loads the code object, builds the kernel-argument segment (hidden
/// arguments included), runs the [`Launch`] and frees both again.
#[derive(Clone, Copy)]
pub struct KernelDispatch<'a> {
    pub mem: &'a DeviceMemory,
    pub device: &'a DevicePreset,
    pub co: &'a CodeObject,
    pub kernel: &'a Kernel,
    pub shape: DispatchShape,
    /// The kernel's arguments without the hidden ones, in order.
    pub args: &'a [ArgValue],
    pub limits: Limits,
}

impl KernelDispatch<'_> {
    /// Runs the dispatch on the interpreter.
    pub fn run(&self) -> Result<RunStats, EngineError> {
        self.run_with(&Interpreter, &NoObserver)
    }

    /// Runs the dispatch on the interpreter with an observer that sees every executed instruction.
    pub fn run_observed<O: Observer>(&self, observer: &O) -> Result<RunStats, EngineError> {
        self.run_with(&Interpreter, observer)
    }

    /// Runs the dispatch on a chosen [`WaveRunner`] (the interpreter, the JIT), observed by `observer` (in the
    /// timing model when `limits.timing`, as [`run_launch`] does).
    pub fn run_with<R: WaveRunner, O: Observer>(&self, runner: &R, observer: &O) -> Result<RunStats, EngineError> {
        self.launch(|mem, device, launch, limits| run_launch(mem, device, launch, limits, runner, observer))
    }

    /// Loads the code and the kernel arguments, runs `f` on the [`Launch`], frees both.
    pub fn launch<T>(
        &self,
        f: impl FnOnce(&DeviceMemory, &DevicePreset, &Launch<'_>, Limits) -> Result<T, EngineError>,
    ) -> Result<T, EngineError> {
        let KernelDispatch {
            mem,
            device,
            co,
            kernel,
            shape,
            args,
            limits,
        } = *self;
        let code = load_code(mem, co)?;
        let result = (|| {
            if code.target != device.target {
                return Err(EngineError::WrongTarget {
                    kernel: kernel.name.clone(),
                    found: co.target.canonical(),
                    device: device.gfx,
                });
            }
            let meta = co.kernel_metadata(kernel).ok_or_else(|| EngineError::NoMetadata {
                kernel: kernel.name.clone(),
            })?;
            let kernarg = build_kernarg(meta, args, &shape, &HiddenValues::default())?;
            let kernarg_addr = mem.allocate(kernarg.len().max(1) as u64, AllocKind::Kernarg, &kernel.name)?;
            mem.write(kernarg_addr, &kernarg).expect("fits its allocation");
            // the AQL packet a runtime would have put in its queue: kernels of HIP's code object v4 read their
            // workgroup size from it
            let packet = dispatch_packet(&shape, kernel, code.base + kernel.descriptor_address, kernarg_addr);
            let packet_addr = match mem.allocate(
                packet.len() as u64,
                AllocKind::Kernarg,
                &format!("{} dispatch packet", kernel.name),
            ) {
                Ok(a) => a,
                Err(e) => {
                    let _ = mem.free(kernarg_addr);
                    return Err(e.into());
                }
            };
            mem.write(packet_addr, &packet).expect("fits its allocation");
            let cache = DecodeCache::new(&code);
            let launch = Launch {
                code: &code,
                cache: &cache,
                name: &kernel.name,
                descriptor: &kernel.descriptor,
                entry: code.base + kernel.entry_address,
                shape,
                kernarg: &kernarg,
                kernarg_addr,
                group_segment_size: kernel.descriptor.group_segment_fixed_size,
                private_segment_size: kernel.descriptor.private_segment_fixed_size,
                dispatch_packet: packet_addr,
                queue: 0,
                // without a queue to say so, a kernel that syncs the grid is launched cooperatively
                cooperative: code.grid_sync,
                user_sgprs: None,
            };
            let result = f(mem, device, &launch, limits);
            let _ = mem.free(kernarg_addr);
            let _ = mem.free(packet_addr);
            result
        })();
        let _ = mem.free(code.base);
        result
    }
}

/// Bytes of an AQL kernel-dispatch packet (HSA's `hsa_kernel_dispatch_packet_t`).
pub const DISPATCH_PACKET_BYTES: usize = 64;

/// The 64 bytes of the AQL kernel-dispatch packet (HSA's `hsa_kernel_dispatch_packet_t`, little-endian) of a
/// dispatch of `kernel` (its descriptor at `descriptor`) over `shape` with its arguments at `kernarg`: header
/// (kernel dispatch, system-scope acquire and release fences), dimensions, workgroup and grid sizes, segment
/// sizes, kernel object, kernel arguments; no completion signal.
pub fn dispatch_packet(
    shape: &DispatchShape,
    kernel: &isa_amdgpu::codeobj::Kernel,
    descriptor: u64,
    kernarg: u64,
) -> [u8; DISPATCH_PACKET_BYTES] {
    const KERNEL_DISPATCH: u16 = 2;
    const SYSTEM_SCOPE: u16 = 2;
    let header = KERNEL_DISPATCH | SYSTEM_SCOPE << 9 | SYSTEM_SCOPE << 11;
    let dims: u16 = if shape.grid[2] > 1 || shape.block[2] > 1 {
        3
    } else if shape.grid[1] > 1 || shape.block[1] > 1 {
        2
    } else {
        1
    };
    let mut p = [0u8; DISPATCH_PACKET_BYTES];
    p[0..2].copy_from_slice(&header.to_le_bytes());
    p[2..4].copy_from_slice(&dims.to_le_bytes());
    for d in 0..3 {
        p[4 + 2 * d..6 + 2 * d].copy_from_slice(&(shape.block[d] as u16).to_le_bytes());
        p[12 + 4 * d..16 + 4 * d].copy_from_slice(&shape.grid[d].to_le_bytes());
    }
    p[24..28].copy_from_slice(&kernel.descriptor.private_segment_fixed_size.to_le_bytes());
    p[28..32].copy_from_slice(&kernel.descriptor.group_segment_fixed_size.to_le_bytes());
    p[32..40].copy_from_slice(&descriptor.to_le_bytes());
    p[40..48].copy_from_slice(&kernarg.to_le_bytes());
    p
}

/// Executes waves: the interpreter here, compiled code in the `jit` crate. A runner takes a wave from where it
/// stands until it ends or reaches a barrier (or an observer asks to switch waves), with the interpreter's
/// meaning of every instruction, fault and limit.
pub trait WaveRunner: Sync {
    fn run_wave<O: Observer>(&self, run: WaveRun<'_>, observer: &O) -> Result<(), EngineError>;
}

/// Everything a [`WaveRunner`] needs to run one wave of a workgroup.
pub struct WaveRun<'a> {
    pub mem: &'a DeviceMemory,
    pub code: &'a LoadedCode,
    pub cx: &'a DispatchContext<'a>,
    pub workgroup: [u32; 3],
    pub wave_index: u32,
    pub wave: &'a mut WaveState,
    pub lds: &'a mut [u8],
    pub cache: &'a DecodeCache,
    pub limits: Limits,
}

/// The interpreter as a [`WaveRunner`].
pub struct Interpreter;

impl WaveRunner for Interpreter {
    fn run_wave<O: Observer>(&self, run: WaveRun<'_>, observer: &O) -> Result<(), EngineError> {
        run_wave(run, observer)
    }
}

/// A kernel dispatch over code already in device memory, with its kernel-argument segment already built — what
/// an AQL kernel-dispatch packet describes.
pub struct Launch<'a> {
    pub code: &'a LoadedCode,
    /// Decoded instructions of `code` (shared by every dispatch of it).
    pub cache: &'a DecodeCache,
    pub name: &'a str,
    pub descriptor: &'a KernelDescriptor,
    /// Device address of the first instruction.
    pub entry: u64,
    pub shape: DispatchShape,
    /// The kernel-argument segment's bytes, and where they are in device memory.
    pub kernarg: &'a [u8],
    pub kernarg_addr: u64,
    /// LDS bytes per workgroup (static and dynamic) and private bytes per lane.
    pub group_segment_size: u32,
    pub private_segment_size: u32,
    /// Addresses of the dispatch packet and its queue (0 when there is none).
    pub dispatch_packet: u64,
    pub queue: u64,
    /// A cooperative launch: every workgroup is resident at once, so waves of different workgroups can meet at
    /// a global wave sync barrier (grid-wide sync). When its code may sync the grid, its workgroups run
    /// interleaved on one host thread; otherwise as any launch.
    pub cooperative: bool,
    /// The user SGPRs' values as a command processor's registers give them (PM4's `COMPUTE_USER_DATA_*`),
    /// instead of the values the descriptor's code properties ask for (what an AQL packet processor loads).
    pub user_sgprs: Option<&'a [u32]>,
}

/// Runs a [`Launch`] on `device` with `runner`, every workgroup to its end, on the process's clock
/// ([`PROCESS_CLOCK`]). With `limits.timing` the timing model schedules it and the statistics carry its
/// cycles; otherwise the functional rounds ([`Functional`]) do.
pub fn run_launch<R: WaveRunner, O: Observer>(
    mem: &DeviceMemory,
    device: &DevicePreset,
    launch: &Launch<'_>,
    limits: Limits,
    runner: &R,
    observer: &O,
) -> Result<RunStats, EngineError> {
    let d = Dispatch::new(mem, device, launch, limits, runner, observer);
    if limits.timing {
        // the one place the engine names the timing model: the scheduler a timed dispatch asks for
        return d.run(&crate::timing::TimingModel).map(|(s, _)| s);
    }
    d.run(&Functional).map(|(s, ())| s)
}

/// How a dispatch's workgroups are placed and its waves take turns: the functional rounds ([`Functional`]) or
/// the timing model. A scheduler decides what runs when; the engine builds the workgroups and runs the waves for
/// it through the [`Dispatch`] it is given (its runner, its observer, the operations on groups and waves) — the
/// only part of the engine a scheduler uses.
pub trait Scheduler {
    /// What the scheduler reports beside the dispatch's statistics (the timing model's cycles and counters).
    type Report;

    /// Runs `dispatch` (its launch already checked) until every workgroup has ended.
    fn run<R: WaveRunner, O: Observer>(
        &self,
        dispatch: &Dispatch<'_, R, O>,
    ) -> Result<(RunStats, Self::Report), EngineError>;
}

/// A dispatch as the engine hands it to a [`Scheduler`]: the launch on its device, its limits, the runner and
/// the observer of its waves, the clock its waves read, and the engine's operations on its workgroups and
/// waves.
pub struct Dispatch<'a, R, O> {
    pub mem: &'a DeviceMemory,
    pub device: &'a DevicePreset,
    pub launch: &'a Launch<'a>,
    pub limits: Limits,
    pub runner: &'a R,
    pub observer: &'a O,
    /// The clock this dispatch's waves continue from, and move on.
    pub clock: &'a DeviceClock,
    /// The memory of up to [`ENDED_KEPT`] waves that ended while their workgroup went on
    /// ([`Dispatch::keep_parts`]), for [`Dispatch::give_registers`]; dropped with the dispatch.
    ended: std::sync::Mutex<Vec<crate::wave::Parts>>,
}

/// How many ended waves' parts [`Dispatch::keep_parts`] keeps.
const ENDED_KEPT: usize = 64;

impl<'a, R: WaveRunner, O: Observer> Dispatch<'a, R, O> {
    /// `launch` on `device`, its waves run by `runner` and seen by `observer`, on the process's clock.
    pub fn new(
        mem: &'a DeviceMemory,
        device: &'a DevicePreset,
        launch: &'a Launch<'a>,
        limits: Limits,
        runner: &'a R,
        observer: &'a O,
    ) -> Self {
        Dispatch {
            mem,
            device,
            launch,
            limits,
            runner,
            observer,
            clock: &PROCESS_CLOCK,
            ended: std::sync::Mutex::new(Vec::new()),
        }
    }

    /// The dispatch on `clock` instead.
    pub fn on_clock(self, clock: &'a DeviceClock) -> Self {
        Dispatch { clock, ..self }
    }

    /// Checks the launch ([`check_launch`]) and has `scheduler` run it.
    pub fn run<S: Scheduler>(&self, scheduler: &S) -> Result<(RunStats, S::Report), EngineError> {
        check_launch(self.device, self.launch)?;
        scheduler.run(self)
    }

    /// What every wave of the dispatch shares.
    pub fn context(&self) -> DispatchContext<'a> {
        dispatch_context(self.device, self.launch)
    }

    /// The event that opens the dispatch (numbered `id`; `timing`: in the timing model).
    pub fn begin_event(&self, id: u64, timing: bool) -> Event<'a> {
        dispatch_begin(id, self.device, self.launch, timing)
    }

    /// The dispatch's progress, when its limits watch it ([`crate::watch`]).
    pub fn watch(&self) -> Option<std::sync::Arc<crate::watch::Progress>> {
        self.limits.watch.map(|w| {
            crate::watch::Progress::start(
                self.launch.name,
                self.launch.shape.total_waves(self.device.wave_size),
                w,
                self.limits.max_wave_instructions,
            )
        })
    }

    /// The [`EngineError::Timeout`] of the dispatch once `progress` has stopped it.
    pub fn timeout_error(&self, progress: &crate::watch::Progress) -> EngineError {
        timeout_error(
            self.launch.name,
            progress,
            self.mem,
            self.launch.code,
            self.launch.cache,
        )
    }

    /// Workgroup `i` (linear index) with its waves' register files left empty, for [`Dispatch::give_registers`]
    /// to make when each wave first runs: a scheduler that places many workgroups long before their waves run
    /// (the timing model) then makes each wave's registers in memory the host has just used
    /// ([`Dispatch::keep_parts`]), not all at once. Its private memory is its own (`Group::scratch`).
    pub fn group_registers_later(
        &self,
        template: &WaveTemplate,
        i: u64,
        clock: WaveClock,
    ) -> Result<Group, EngineError> {
        build_group_in(self.mem, self.device, self.launch, template, i, clock, None, false)
    }

    /// Gives wave `w` of workgroup `wg` (made by [`Dispatch::group_registers_later`]) its register files, with the
    /// work-item ids the hardware loads, in the memory of a wave that ended ([`Dispatch::keep_parts`]) where there
    /// is some.
    pub fn give_registers(&self, template: &WaveTemplate, wg: [u32; 3], w: u32, wave: &mut WaveState) {
        let (vgprs, agprs) = register_counts(self.launch);
        let parts = self
            .ended
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .pop()
            .unwrap_or_default();
        wave.registers_from(parts, vgprs, agprs);
        load_ids(wave, &template.lanes(self.launch.shape.workgroup_size(wg), w).0);
    }

    /// Keeps the memory of a wave that has ended ([`WaveState::take_parts`]: its registers read as empty
    /// afterwards) for the next wave the dispatch gives registers ([`Dispatch::give_registers`]): that wave's
    /// registers are then made in memory the host has just used, not in pages fetched and zeroed afresh.
    pub fn keep_parts(&self, wave: &mut WaveState) {
        let mut ended = self.ended.lock().unwrap_or_else(|e| e.into_inner());
        if ended.len() < ENDED_KEPT {
            ended.push(wave.take_parts());
        }
    }

    /// The slack accesses of workgroup `g`'s waves (once they have ended): how many, and the first in wave
    /// order.
    pub fn slack(&self, g: &Group) -> (u64, Option<Box<SlackReport>>) {
        group_slack(self.launch.name, g)
    }

    /// Places `wave` at `at` on the device: what its HW_ID and XCC_ID read (a scheduler that places waves
    /// itself; otherwise a wave reads the functional dispatch's fixed placement, [`crate::hwreg::placement`]).
    pub fn place_wave(&self, wave: &mut WaveState, at: crate::hwreg::Place) {
        (wave.hw.hw_id, wave.hw.xcc_id) = (crate::hwreg::hw_id(self.device.target, at), at.xcd);
    }
}

/// The functional rounds: host threads take workgroups in dispatch order and run each wave until it waits or
/// ends (a cooperative launch that syncs the grid: every workgroup resident, waves taking turns of a slice);
/// the waves' clocks count 4 cycles an instruction.
pub struct Functional;

impl Scheduler for Functional {
    type Report = ();

    fn run<R: WaveRunner, O: Observer>(&self, d: &Dispatch<'_, R, O>) -> Result<(RunStats, ()), EngineError> {
        run_rounds(d).map(|s| (s, ()))
    }
}

/// [`Functional`]'s run of `d`.
fn run_rounds<R: WaveRunner, O: Observer>(d: &Dispatch<'_, R, O>) -> Result<RunStats, EngineError> {
    let (mem, device, launch, limits, runner, observer) = (d.mem, d.device, d.launch, d.limits, d.runner, d.observer);
    let (code, shape) = (launch.code, launch.shape);
    let dispatch = next_dispatch_id();
    let observer = &Dispatched {
        dispatch,
        inner: observer,
    };
    let progress = d.watch();
    let mut cx = d.context();
    cx.progress = progress.as_deref();
    let stopped = || progress.as_ref().is_some_and(|p| p.stopped());
    // a dispatch its timeout stopped: where every wave of `groups` still running was
    let note_stopped = |groups: &[Group]| {
        if let Some(p) = progress.as_deref() {
            for g in groups {
                for (w, wave) in g.waves.iter().enumerate() {
                    if wave.status != WaveStatus::Done {
                        p.stopped_wave(g.wg, w as u32, wave.pc);
                    }
                }
            }
        }
    };
    let timed_out = || {
        let p = progress.as_deref().expect("only a watched dispatch stops");
        d.timeout_error(p)
    };
    let cache = launch.cache;
    let clock = WaveClock {
        base: d.clock.base(),
        per_instruction: 4,
        shader_mhz: device.engine_clock_mhz,
    };
    let longest = AtomicU64::new(0);
    if O::ACTIVE {
        observer.event(&d.begin_event(dispatch, false));
    }
    let template = WaveTemplate::new(&cx)?;
    let build = |i: u64, private: Option<u64>| -> Result<Group, EngineError> {
        let g = build_group_in(mem, device, launch, &template, i, clock, private, true)?;
        if let Some(p) = &progress {
            p.resident(g.waves.len() as u64);
        }
        if O::ACTIVE {
            observer.event(&Event::WorkgroupStart {
                dispatch,
                workgroup: g.wg,
                waves: g.waves.len() as u32,
                placement: None,
                cycle: None,
            });
            for w in 0..g.waves.len() as u32 {
                observer.event(&Event::WaveStart {
                    dispatch,
                    workgroup: g.wg,
                    wave: w,
                    placement: None,
                    cycle: None,
                });
            }
        }
        Ok(g)
    };
    let done = |g: &Group| {
        longest.fetch_max(g.waves.iter().map(|w| w.executed).max().unwrap_or(0), Ordering::Relaxed);
        if let Some(p) = &progress {
            p.done(g.waves.len() as u64);
        }
        if O::ACTIVE {
            observer.event(&Event::WorkgroupEnd {
                dispatch,
                workgroup: g.wg,
                cycle: None,
            });
        }
    };
    let limits = Limits {
        poll_ends_turn: true,
        ..limits
    };
    // a workgroup that ended or failed: its statistics (its private memory is its host thread's, `PrivateAreas`)
    let retire = |g: Group, result: Result<(), EngineError>| -> Result<RunStats, EngineError> {
        result?;
        done(&g);
        let stats = group_stats(launch.name, &g);
        recycle(g);
        Ok(stats)
    };
    let finish = |stats: RunStats| {
        // the clocks of later dispatches go on from where this one's longest wave left them
        d.clock.advance_to(clock.base + 4 * longest.load(Ordering::Relaxed));
        if O::ACTIVE {
            let RunStats {
                workgroups,
                waves,
                wave_instructions,
                ..
            } = stats;
            observer.event(&Event::DispatchEnd {
                dispatch,
                workgroups,
                waves,
                wave_instructions,
                cycles: None,
            });
        }
        stats
    };
    if launch.cooperative && code.grid_sync {
        let mut groups = Vec::new();
        let mut result = Ok(());
        for i in 0..shape.workgroup_count() {
            match build(i, None) {
                Ok(g) => groups.push(g),
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
        if result.is_ok() {
            // every workgroup resident, waves taking turns of a slice until all have ended
            let limits = Limits {
                slice: Some(limits.slice.unwrap_or(COOPERATIVE_SLICE)),
                ..limits
            };
            // the semaphores (64 resources) only where waves can use them
            let mut semaphores = Some(crate::gws::Semaphores::default());
            result = loop {
                match round(
                    mem,
                    code,
                    &cx,
                    &mut groups,
                    true,
                    cache,
                    limits,
                    runner,
                    observer,
                    dispatch,
                    &mut semaphores,
                ) {
                    Ok(false) => {}
                    Err(_) if stopped() => {
                        note_stopped(&groups);
                        break Err(timed_out());
                    }
                    done => break done.map(|_| ()),
                }
            };
        }
        for g in &groups {
            if let Some(s) = g.scratch {
                let _ = mem.free(s);
            }
        }
        result?;
        groups.iter().for_each(done);
        let mut stats = RunStats::default();
        for g in &groups {
            stats.add(group_stats(launch.name, g));
        }
        return Ok(finish(stats));
    }
    // workgroups are independent: host threads take them in dispatch order, each holding one at a time but while
    // those it holds wait on spin-waits; the first failing workgroup in dispatch order is reported
    let count = shape.workgroup_count();
    let next = AtomicU64::new(0);
    let work = || -> Vec<(u64, Result<RunStats, EngineError>)> {
        let mut out = Vec::new();
        let mut held: Vec<(u64, Group, Option<u64>)> = Vec::new();
        let mut private = PrivateAreas::new(mem, device, launch);
        loop {
            if held.len() < HELD && held.iter().all(|(_, g, _)| stalled(g)) && !stopped() {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i < count {
                    let built = private.take(i).and_then(|area| match build(i, area) {
                        Ok(g) => Ok((g, area)),
                        Err(e) => {
                            private.give(area);
                            Err(e)
                        }
                    });
                    match built {
                        Ok((g, area)) => held.push((i, g, area)),
                        Err(e) => out.push((i, Err(e))),
                    }
                    continue;
                }
            }
            if held.is_empty() {
                return out;
            }
            let mut k = 0;
            while k < held.len() {
                match round(
                    mem,
                    code,
                    &cx,
                    std::slice::from_mut(&mut held[k].1),
                    false,
                    cache,
                    limits,
                    runner,
                    observer,
                    dispatch,
                    &mut None,
                ) {
                    Ok(false) => k += 1,
                    Err(_) if stopped() => {
                        let (i, g, area) = held.remove(k);
                        note_stopped(std::slice::from_ref(&g));
                        private.give(area);
                        out.push((
                            i,
                            Err(EngineError::Stopped {
                                kernel: launch.name.to_string(),
                            }),
                        ));
                        recycle(g);
                    }
                    result => {
                        let (i, g, area) = held.remove(k);
                        private.give(area);
                        out.push((i, retire(g, result.map(|_| ()))));
                    }
                }
            }
        }
    };
    let mut results: Vec<(u64, Result<RunStats, EngineError>)> = match limits.threads {
        // one host thread, or one workgroup (no point handing it to the pool and back)
        _ if limits.threads == Some(1) || count == 1 => work(),
        threads => match pool(threads.unwrap_or(0)) {
            Some(pool) => pool.broadcast(|_| work()).into_iter().flatten().collect(),
            // no threads to be had: the dispatch still runs, on this one
            None => work(),
        },
    };
    if stopped() {
        return Err(timed_out());
    }
    results.sort_by_key(|(i, _)| *i);
    let results = results.into_iter().map(|(_, r)| r);
    let mut stats = RunStats::default();
    for r in results {
        stats.add(r?);
    }
    Ok(finish(stats))
}

/// The private memory of the workgroups one host thread runs in a dispatch: an area of a whole workgroup's
/// size ([`group_private_bytes`] of the first, which is never smaller than another) for each workgroup it
/// holds at once, made when none is spare and handed, cleared, to the next workgroup once one ends, so that a
/// dispatch makes a few allocations rather than one a workgroup (whose making and freeing, a page fault per
/// page touched and a flush of every host thread's TLB, had cost more than a kernel's private accesses). The
/// areas are freed with the dispatch. Every workgroup starts from zeroed private memory, as from a fresh
/// allocation, so what a kernel reads of memory it did not write does not depend on which host thread ran
/// which workgroup.
struct PrivateAreas<'a, 'l> {
    mem: &'a DeviceMemory,
    device: &'a DevicePreset,
    launch: &'a Launch<'l>,
    bytes: u64,
    spare: Vec<u64>,
    made: Vec<u64>,
}

impl<'a, 'l> PrivateAreas<'a, 'l> {
    fn new(mem: &'a DeviceMemory, device: &'a DevicePreset, launch: &'a Launch<'l>) -> Self {
        PrivateAreas {
            mem,
            device,
            launch,
            bytes: group_private_bytes(device, launch, 0),
            spare: Vec::new(),
            made: Vec::new(),
        }
    }

    /// The private memory for workgroup `i`, zeroed where it uses it (`None`: the kernel has none).
    fn take(&mut self, i: u64) -> Result<Option<u64>, EngineError> {
        if self.bytes == 0 {
            return Ok(None);
        }
        if let Some(area) = self.spare.pop() {
            self.mem.clear(area, group_private_bytes(self.device, self.launch, i))?;
            return Ok(Some(area));
        }
        let area = self.mem.allocate(
            self.bytes,
            AllocKind::Scratch,
            &format!("{} private memory", self.launch.name),
        )?;
        self.made.push(area);
        Ok(Some(area))
    }

    /// Hands back what [`PrivateAreas::take`] gave, for the next workgroup.
    fn give(&mut self, area: Option<u64>) {
        self.spare.extend(area);
    }
}

impl Drop for PrivateAreas<'_, '_> {
    fn drop(&mut self) {
        for &area in &self.made {
            let _ = self.mem.free(area);
        }
    }
}

/// The clock a device's dispatches read ([`WaveClock`]: `s_memtime`, `s_memrealtime`): the shader-cycle count
/// their clocks continue from. It only grows, so clocks never go back from one dispatch to the next.
#[derive(Debug, Default)]
pub struct DeviceClock(AtomicU64);

impl DeviceClock {
    /// A clock at cycle 0.
    pub const fn new() -> DeviceClock {
        DeviceClock(AtomicU64::new(0))
    }

    /// The cycle the clocks of the next dispatch start from.
    pub fn base(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }

    /// Moves the clock to at least `cycles` (what a dispatch's clocks have counted to).
    pub fn advance_to(&self, cycles: u64) {
        self.0.fetch_max(cycles, Ordering::Relaxed);
    }
}

/// The clock of the dispatches that are not given one ([`Dispatch::new`], and so [`run_launch`] and
/// [`KernelDispatch`]): one for the process.
pub static PROCESS_CLOCK: DeviceClock = DeviceClock::new();

/// Where the clocks of a dispatch on [`PROCESS_CLOCK`] start.
pub fn clock_base() -> u64 {
    PROCESS_CLOCK.base()
}

/// The target and float-mode checks every launch passes first.
pub fn check_launch(device: &DevicePreset, launch: &Launch<'_>) -> Result<(), EngineError> {
    if launch.code.target != device.target {
        return Err(EngineError::WrongTarget {
            kernel: launch.name.to_string(),
            found: format!("{:?}", launch.code.target),
            device: device.gfx,
        });
    }
    check_float_mode(launch.name, launch.descriptor)
}

/// What every wave of a launch shares.
pub fn dispatch_context<'a>(device: &'a DevicePreset, launch: &Launch<'a>) -> DispatchContext<'a> {
    DispatchContext {
        progress: None,
        user_sgprs: launch.user_sgprs,
        kernel: launch.name,
        kd: launch.descriptor,
        device,
        shape: launch.shape,
        kernarg: launch.kernarg,
        addrs: DispatchAddresses {
            kernarg: launch.kernarg_addr,
            dispatch_packet: launch.dispatch_packet,
            queue: launch.queue,
            ..Default::default()
        },
    }
}

/// What one workgroup of `launch` needs.
pub fn resources(device: &DevicePreset, launch: &Launch<'_>) -> Resources {
    let kd = launch.descriptor;
    let threads: u32 = launch.shape.block.iter().product();
    Resources {
        vgprs: kd.vgpr_alloc_count(),
        agprs: kd.agpr_alloc_count().unwrap_or(0),
        sgprs: kd.sgpr_alloc_count().unwrap_or(0),
        lds_bytes: launch.group_segment_size,
        private_bytes: launch.private_segment_size,
        waves_per_workgroup: threads.div_ceil(device.wave_size),
    }
}

/// The event that opens a dispatch.
fn dispatch_begin<'a>(dispatch: u64, device: &'a DevicePreset, launch: &Launch<'a>, timing: bool) -> Event<'a> {
    Event::DispatchBegin {
        dispatch,
        kernel: std::borrow::Cow::Borrowed(launch.name),
        device: std::borrow::Cow::Borrowed(device.id),
        grid: launch.shape.grid,
        block: launch.shape.block,
        workgroups: launch.shape.workgroup_count(),
        resources: resources(device, launch),
        code_base: launch.code.base,
        entry: launch.entry,
        timing,
    }
}

/// The waves of workgroup `i` (linear index) of `launch`, its LDS and private memory (freed by the caller),
/// the waves' clocks reading `clock`.
pub fn build_group(
    mem: &DeviceMemory,
    device: &DevicePreset,
    launch: &Launch<'_>,
    template: &WaveTemplate,
    i: u64,
    clock: WaveClock,
) -> Result<Group, EngineError> {
    build_group_in(mem, device, launch, template, i, clock, None, true)
}

/// Bytes of private memory workgroup `i` of `launch` needs (0: none).
pub fn group_private_bytes(device: &DevicePreset, launch: &Launch<'_>, i: u64) -> u64 {
    let wg = launch.shape.workgroup_id(i);
    let lane_bytes = launch.private_segment_size.div_ceil(16) * 16;
    lane_bytes as u64 * device.wave_size as u64 * launch.shape.waves_in(wg, device.wave_size) as u64
}

/// A wave's VGPRs and AGPRs by its kernel descriptor.
fn register_counts(launch: &Launch<'_>) -> (usize, usize) {
    (
        launch.descriptor.vgpr_alloc_count() as usize,
        launch.descriptor.agpr_alloc_count().unwrap_or(0) as usize,
    )
}

/// Loads the work-item ids ([`WaveTemplate::lanes`]) into a wave's first VGPRs.
fn load_ids(wave: &mut WaveState, ids: &[[u32; 64]]) {
    wave.vgprs[..ids.len()].copy_from_slice(ids);
}

/// [`build_group`] with the workgroup's private memory at `private` when given ([`group_private_bytes`]
/// bytes the caller allocated and keeps: a replayed workgroup then sees the same addresses every time;
/// `Group::scratch` is then `None`), and the waves' register files made now or, without `registers`, left
/// for [`Dispatch::give_registers`] ([`Dispatch::group_registers_later`]).
#[allow(clippy::too_many_arguments)]
pub fn build_group_in(
    mem: &DeviceMemory,
    device: &DevicePreset,
    launch: &Launch<'_>,
    template: &WaveTemplate,
    i: u64,
    clock: WaveClock,
    private: Option<u64>,
    registers: bool,
) -> Result<Group, EngineError> {
    let (shape, descriptor) = (launch.shape, launch.descriptor);
    let (vgprs, agprs) = register_counts(launch);
    let wg = shape.workgroup_id(i);
    let size = shape.workgroup_size(wg);
    let n = shape.waves_in(wg, device.wave_size);
    // private memory: every lane of every wave of this workgroup gets its own segment
    let lane_bytes = launch.private_segment_size.div_ceil(16) * 16;
    let wave_bytes = lane_bytes as u64 * device.wave_size as u64;
    let scratch = if lane_bytes > 0 && private.is_none() {
        Some(mem.allocate(
            wave_bytes * n as u64,
            AllocKind::Scratch,
            &format!("{} workgroup {wg:?}", launch.name),
        )?)
    } else {
        None
    };
    let base = if lane_bytes > 0 { scratch.or(private) } else { None };
    let layout = crate::hwreg::Layout::of(device);
    let (mut waves, lds) = if registers {
        spare_parts(
            n as usize,
            launch.entry,
            vgprs,
            agprs,
            launch.group_segment_size as usize,
        )
    } else {
        (
            (0..n).map(|_| WaveState::without_registers(launch.entry)).collect(),
            vec![0; launch.group_segment_size as usize],
        )
    };
    for (w, wave) in waves.iter_mut().enumerate() {
        let w = w as u32;
        let wave_scratch = base.map_or(0, |s| s + w as u64 * wave_bytes);
        let init = template.sgprs().len();
        wave.sgprs[..init].copy_from_slice(template.sgprs());
        template.patch(&mut wave.sgprs[..init], wg, wave_scratch, wave_scratch);
        // (for a full workgroup the template's lanes, borrowed; a partial one's made here, and again by
        // `Dispatch::give_registers` when its registers come later)
        let lanes = template.lanes(size, w);
        if registers {
            load_ids(wave, &lanes.0);
        }
        wave.set_exec(lanes.1);
        // architected flat scratch (gfx942) and the value gfx90a prologues build from flat_scratch_init
        wave.sgprs[102] = wave_scratch as u32;
        wave.sgprs[103] = (wave_scratch >> 32) as u32;
        wave.scratch_base = wave_scratch;
        wave.scratch_lane_bytes = lane_bytes;
        wave.clock = clock;
        wave.fine_grained_float_atomics = device.fine_grained_float_atomics;
        // the fixed placement of a functional dispatch; the timing model places the wave again
        let at = crate::hwreg::placement(&layout, i, w);
        wave.hw = crate::hwreg::HwRegs::for_wave(device.target, descriptor, launch.group_segment_size, n, at);
    }
    Ok(Group {
        wg,
        waves,
        lds,
        scratch,
    })
}

thread_local! {
    /// The wave states and the LDS of the last workgroup this thread finished ([`recycle`]), for its next one.
    static SPARE: std::cell::RefCell<(Vec<WaveState>, Vec<u8>)> = const { std::cell::RefCell::new((Vec::new(), Vec::new())) };
}

/// `n` fresh wave states starting at `entry` and a zeroed LDS of `lds` bytes, made in place of what this thread's
/// last finished workgroup left where there is some ([`WaveState::reset`]: their windows stay).
fn spare_parts(n: usize, entry: u64, vgprs: usize, agprs: usize, lds: usize) -> (Vec<WaveState>, Vec<u8>) {
    let (mut waves, mut bytes) = SPARE.with_borrow_mut(|(w, l)| (std::mem::take(w), std::mem::take(l)));
    waves.truncate(n);
    for w in waves.iter_mut() {
        w.reset(entry, vgprs, agprs);
    }
    while waves.len() < n {
        waves.push(WaveState::new(entry, vgprs, agprs));
    }
    bytes.clear();
    bytes.resize(lds, 0);
    (waves, bytes)
}

/// Keeps a finished workgroup's wave states and LDS for this thread's next workgroup (whose private memory
/// the caller has freed): making them anew costs more than many a short kernel's instructions.
pub fn recycle(g: Group) {
    SPARE.with_borrow_mut(|(waves, lds)| {
        if g.waves.len() >= waves.len() {
            *waves = g.waves;
        }
        if g.lds.capacity() >= lds.capacity() {
            *lds = g.lds;
        }
    });
}

/// The process's pool of `threads` host threads (0: one per core), made on first use and kept: dispatches are
/// often short, and a fresh pool per dispatch would spend its start-up (and the threads' warmed caches) on
/// every one.
fn pool(threads: usize) -> Option<std::sync::Arc<rayon::ThreadPool>> {
    static POOLS: std::sync::Mutex<Vec<(usize, std::sync::Arc<rayon::ThreadPool>)>> = std::sync::Mutex::new(Vec::new());
    let mut pools = POOLS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, p)) = pools.iter().find(|(n, _)| *n == threads) {
        return Some(p.clone());
    }
    let p = std::sync::Arc::new(
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("wavejit-{i}"))
            .build()
            .ok()?,
    );
    pools.push((threads, p.clone()));
    Some(p)
}

/// One workgroup being run: its waves, LDS and private memory.
pub struct Group {
    pub wg: [u32; 3],
    pub waves: Vec<WaveState>,
    pub lds: Vec<u8>,
    /// The private-memory allocation to free when the workgroup is done (`None`: none, or the caller's).
    pub scratch: Option<u64>,
}

/// Workgroups a host thread holds at most in a dispatch that is not cooperative: it takes another only while
/// every one it holds waits on a spin-wait ([`stalled`]), as a compute unit holds several, so that a workgroup
/// polling for a flag that a workgroup not yet started is to set (or one another host thread runs) leaves the
/// thread to the next workgroup meanwhile.
const HELD: usize = 8;

/// Whether every wave of `g` still running went back round a polling loop in its last turn (and some did).
fn stalled(g: &Group) -> bool {
    let running = || g.waves.iter().filter(|w| w.status == WaveStatus::Running);
    running().any(|w| w.polled) && running().all(|w| w.polled)
}

/// One round over `groups`: each running wave has a turn — it runs until it waits or ends, or (in a
/// cooperative launch) has used its slice, or (with [`Limits::poll_ends_turn`]) goes back round a polling loop;
/// `s_barrier` releases within a workgroup once every wave not ended waits at it. In a cooperative launch,
/// where every workgroup is resident, `ds_gws_barrier` releases once its count of waves of the grid have
/// arrived, the global wave sync semaphores ([`crate::gws`]: the dispatch's 64 resources live here) are
/// carried out as each wave reaches one, a wave waiting at `ds_gws_sema_p` is left out of the turns until its
/// resource lets it go, and waves that can no longer all be released are a deadlock, reported; elsewhere the
/// barrier and the semaphores (but `ds_gws_init`) are a fault. Whether every wave has ended.
#[allow(clippy::too_many_arguments)]
fn round<R: WaveRunner, O: Observer>(
    mem: &DeviceMemory,
    code: &LoadedCode,
    cx: &DispatchContext<'_>,
    groups: &mut [Group],
    cooperative: bool,
    cache: &DecodeCache,
    limits: Limits,
    runner: &R,
    observer: &O,
    dispatch: u64,
    semaphores: &mut Option<crate::gws::Semaphores>,
) -> Result<bool, EngineError> {
    let mut turned = false;
    for gi in 0..groups.len() {
        for wi in 0..groups[gi].waves.len() {
            let g = &mut groups[gi];
            let wave = &mut g.waves[wi];
            if wave.status == WaveStatus::Running {
                let before = wave.executed;
                wave.polled = false;
                let run = WaveRun {
                    mem,
                    code,
                    cx,
                    workgroup: g.wg,
                    wave_index: wi as u32,
                    wave,
                    lds: &mut g.lds,
                    cache,
                    limits,
                };
                let ran = runner.run_wave(run, observer);
                if let Some(p) = cx.progress {
                    p.note(&mut g.waves[wi]);
                }
                ran?;
                turned |= g.waves[wi].executed > before;
                if let Some(s) = semaphores.as_mut() {
                    s.serve(groups, (gi, wi));
                }
            }
        }
        let g = &mut groups[gi];
        if !cooperative && g.waves.iter().any(|w| w.gws.is_some()) {
            return Err(EngineError::GridSync {
                kernel: cx.kernel.to_string(),
                what: format!(
                    "workgroup {:?} reached ds_gws_barrier (grid-wide sync) outside a cooperative launch",
                    g.wg
                ),
            });
        }
        if !cooperative {
            let resumed =
                crate::gws::outside_cooperative(g.wg, &mut g.waves).map_err(|what| EngineError::GridSync {
                    kernel: cx.kernel.to_string(),
                    what,
                })?;
            turned |= resumed;
        }
    }
    let mut released = false;
    // workgroup barriers: every wave of the workgroup not ended waits at s_barrier
    for g in groups.iter_mut() {
        let waiting = |w: &WaveState| w.status == WaveStatus::AtBarrier && !w.at_grid_sync();
        let all = g.waves.iter().all(|w| waiting(w) || w.status == WaveStatus::Done);
        if all && g.waves.iter().any(waiting) {
            for w in g.waves.iter_mut().filter(|w| waiting(w)) {
                w.status = WaveStatus::Running;
            }
            released = true;
            if O::ACTIVE {
                observer.event(&Event::BarrierRelease {
                    dispatch,
                    workgroup: g.wg,
                    cycle: None,
                });
            }
        }
    }
    // the global wave sync barrier
    let at_gws: Vec<u32> = groups
        .iter()
        .flat_map(|g| g.waves.iter())
        .filter_map(|w| w.gws)
        .collect();
    if let Some(&want) = at_gws.first() {
        if at_gws.iter().any(|&c| c != want) {
            return Err(EngineError::GridSync {
                kernel: cx.kernel.to_string(),
                what: format!("waves wait at ds_gws_barrier for different counts ({at_gws:?})"),
            });
        }
        if at_gws.len() as u32 >= want {
            for w in groups
                .iter_mut()
                .flat_map(|g| g.waves.iter_mut())
                .filter(|w| w.gws.is_some())
            {
                w.gws = None;
                w.status = WaveStatus::Running;
            }
            released = true;
        }
    }
    let all = || groups.iter().flat_map(|g| g.waves.iter());
    if all().all(|w| w.status == WaveStatus::Done) {
        return Ok(true);
    }
    if !released && !turned && !all().any(|w| w.status == WaveStatus::Running) {
        let waiting = at_gws.len();
        let want = at_gws.first().copied().unwrap_or(0);
        let at_barrier = all()
            .filter(|w| w.status == WaveStatus::AtBarrier && !w.at_grid_sync())
            .count();
        let ended = all().filter(|w| w.status == WaveStatus::Done).count();
        let mut what = String::from("grid-wide sync never completes: ");
        if let Some(s) = semaphores.as_ref().filter(|s| s.waiting() > 0) {
            what += &format!("{}; ", s.deadlock(groups));
        }
        if waiting > 0 {
            what += &format!("{waiting} wave(s) wait at ds_gws_barrier for {want}; ");
        }
        what += &format!("of the rest, {ended} wave(s) have ended and {at_barrier} wait at s_barrier");
        return Err(EngineError::GridSync {
            kernel: cx.kernel.to_string(),
            what,
        });
    }
    Ok(false)
}

/// How many instructions a wave of a watched dispatch runs on the interpreter between notes of its progress.
const STOP_LOOK: u64 = 1 << 16;

/// The interpreter's [`WaveRunner::run_wave`].
fn run_wave<O: Observer>(run: WaveRun<'_>, observer: &O) -> Result<(), EngineError> {
    let WaveRun {
        mem,
        code,
        cx,
        workgroup: wg,
        wave_index: wi,
        wave,
        lds,
        cache,
        limits,
    } = run;
    let kernel = || cx.kernel.to_string();
    let mut accesses = Vec::new();
    let turn_starts = wave.executed;
    let turn_ends = limits.slice.map_or(u64::MAX, |s| wave.executed.saturating_add(s));
    while wave.status == WaveStatus::Running && wave.executed < turn_ends {
        // a watched dispatch: what the wave did shows in its progress, and a stopped dispatch stops here
        if let Some(p) = cx.progress.filter(|_| wave.executed - wave.reported >= STOP_LOOK) {
            p.note(wave);
        }
        if cx.progress.is_some_and(|p| p.stopped()) {
            return Err(EngineError::Stopped { kernel: kernel() });
        }
        if wave.executed >= limits.max_wave_instructions {
            return Err(EngineError::Runaway {
                kernel: kernel(),
                workgroup: wg,
                wave: wi,
                limit: limits.max_wave_instructions,
            });
        }
        let pc = wave.pc;
        let inst = cache
            .get(mem, code, pc)
            .map_err(|error| EngineError::IllegalInstruction {
                kernel: kernel(),
                workgroup: wg,
                wave: wi,
                pc,
                error,
            })?;
        if limits.clock_ends_turn && wave.executed > turn_starts && crate::sem::reads_clock(&inst) {
            break;
        }
        let exec = wave.exec();
        accesses.clear();
        let record = if O::WANTS_ACCESSES { Some(&mut accesses) } else { None };
        let mut b = Interp {
            wave,
            mem,
            lds: &mut *lds,
            mnemonic: inst.info.name,
            accesses: record,
        };
        let flow = execute(&mut b, &inst, pc).map_err(|error| EngineError::Fault {
            kernel: kernel(),
            workgroup: wg,
            wave: wi,
            pc,
            text: disasm::text(&inst),
            error: Box::new(error),
        })?;
        wave.slack.locate(pc, || disasm::text(&inst));
        // counted once executed: a clock reads the instructions before it
        wave.executed += 1;
        let ev = InstEvent {
            workgroup: wg,
            wave: wi,
            pc,
            inst: &inst,
            exec,
            accesses: Accesses::of(&accesses),
        };
        observer.instruction(&ev);
        let switch = observer.switch_wave(&ev);
        let (next, stop) = flow.next_pc(pc, inst.size() as u64);
        wave.pc = next;
        wave.pass |= crate::sem::pass_bits(&inst);
        if next <= pc && stop == Stop::Running && crate::sem::goes_back(&mut wave.pass) && limits.poll_ends_turn {
            wave.polled = true;
            break;
        }
        match stop {
            Stop::Running => {}
            Stop::Barrier => wave.status = WaveStatus::AtBarrier,
            Stop::End => {
                wave.status = WaveStatus::Done;
                observer.wave_end(wg, wi, wave.executed);
            }
        }
        if switch {
            break;
        }
    }
    Ok(())
}

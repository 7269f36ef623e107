//! The JIT as an `emu_core` [`WaveRunner`]: looks up (or translates) the block at a wave's PC, calls it, and
//! follows its status; instructions it does not translate run on the interpreter, called from the block.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, RwLock};

use cranelift_codegen::settings::{self, Configurable};
use cranelift_jit::{JITBuilder, JITModule};

use emu_core::engine::{EngineError, WaveRun, WaveRunner};
use emu_core::interp::Interp;
use emu_core::memory::DeviceMemory;
use emu_core::observe::{InstEvent, Observer};
use emu_core::sem::{execute, ExecError, Flow, Stop};
use emu_core::wave::{WaveState, WaveStatus};
use isa_amdgpu::{disasm, Inst};

use crate::compile::{self, Block, BARRIER, CONTINUE, END, FAULT, MAX_BLOCK};
use crate::ctx::{Ctx, Env};
use crate::JitError;

/// Counters of what the JIT did (all dispatches so far).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct JitStats {
    /// Blocks translated.
    pub blocks: u64,
    /// Instructions in them that were compiled, and that were left to the interpreter.
    pub compiled: u64,
    pub not_compiled: u64,
    /// Instructions executed by the interpreter on behalf of compiled blocks.
    pub fallbacks: u64,
    /// Nanoseconds spent translating.
    pub translate_ns: u64,
}

/// The Cranelift module owning all generated code.
struct Module(JITModule);

// SAFETY: the module is only used behind the Mutex in `Jit` (one thread at a time); the code it has
// finalized is immutable and may be called from any thread.
unsafe impl Send for Module {}

/// What running a translated block needs, copied out of its [`Block`] (which the [`Jit`] keeps for as long as
/// the code exists).
#[derive(Clone, Copy)]
struct Entry {
    func: extern "C" fn(*mut Ctx) -> u32,
    len: u64,
    vgprs: u32,
    agprs: u32,
    write_free: bool,
}

impl Entry {
    fn of(b: &Block) -> Entry {
        Entry { func: b.func, len: b.insts.len() as u64, vgprs: b.vgprs, agprs: b.agprs, write_free: b.write_free }
    }
}

/// A translation key: (code key ^ observed, load address or 0, offset).
type Key = (u64, u64, u64);

/// A multiply-xor hasher for the block lookup keys (a handful of u64s; looked up once per block run, where
/// SipHash showed in profiles). Not for keys an adversary chooses.
#[derive(Default)]
struct KeyHasher(u64);

impl std::hash::Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.write_u64(*b as u64);
        }
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

type Entries = HashMap<(u64, Key), Entry, std::hash::BuildHasherDefault<KeyHasher>>;

thread_local! {
    /// Each host thread's copy of the entries it has looked up, by (JIT id, key): finding a block again takes
    /// no shared lock and touches no shared reference count (both would bounce between cores on every block).
    static ENTRIES: std::cell::RefCell<Entries> = std::cell::RefCell::new(Entries::default());
}

static NEXT_JIT_ID: AtomicU64 = AtomicU64::new(1);

/// The JIT engine; one per process or per device is enough (its translations are keyed by loaded code).
pub struct Jit {
    /// Tells this JIT's entries in [`ENTRIES`] from other JITs'.
    id: u64,
    /// Crosscheck: after every block, the interpreter runs the same instructions from the same state and any
    /// difference in registers, LDS or device memory stops the dispatch with a diff.
    crosscheck: bool,
    module: Mutex<Module>,
    blocks: RwLock<HashMap<Key, Block>>,
    blocks_n: AtomicU64,
    compiled: AtomicU64,
    not_compiled: AtomicU64,
    fallbacks: AtomicU64,
    translate_ns: AtomicU64,
}

impl Jit {
    /// A JIT for the host CPU.
    pub fn new() -> Result<Jit, JitError> {
        let mut flags = settings::builder();
        let mut set = |setting, value| flags.set(setting, value).map_err(|error| JitError::Setting { setting, error });
        set("opt_level", "speed")?;
        // the IR is generated, not hand-written: the verifier costs translation time for nothing
        set("enable_verifier", "false")?;
        let host = cranelift_native::builder().map_err(|why| JitError::NoHost { why })?;
        let isa = host.finish(settings::Flags::new(flags)).map_err(|error| JitError::HostIsa { error })?;
        let module = JITModule::new(JITBuilder::with_isa(isa, cranelift_module::default_libcall_names()));
        Ok(Jit {
            id: NEXT_JIT_ID.fetch_add(1, Ordering::Relaxed),
            crosscheck: false,
            module: Mutex::new(Module(module)),
            blocks: RwLock::new(HashMap::new()),
            blocks_n: AtomicU64::new(0),
            compiled: AtomicU64::new(0),
            not_compiled: AtomicU64::new(0),
            fallbacks: AtomicU64::new(0),
            translate_ns: AtomicU64::new(0),
        })
    }

    /// A JIT that checks every block against the interpreter in lockstep (slow; for finding JIT bugs). Blocks
    /// that write memory or LDS are checked too when the dispatch runs on one host thread (the check re-runs
    /// them from a copy of device memory, which other threads would change meanwhile); on more threads only
    /// memory-free blocks are, and whole dispatches should be compared for the rest.
    pub fn crosscheck() -> Result<Jit, JitError> {
        Ok(Jit { crosscheck: true, ..Jit::new()? })
    }

    pub fn stats(&self) -> JitStats {
        JitStats {
            blocks: self.blocks_n.load(Ordering::Relaxed),
            compiled: self.compiled.load(Ordering::Relaxed),
            not_compiled: self.not_compiled.load(Ordering::Relaxed),
            fallbacks: self.fallbacks.load(Ordering::Relaxed),
            translate_ns: self.translate_ns.load(Ordering::Relaxed),
        }
    }

    /// The block at `pc`, translated on first use.
    fn block(&self, run: &WaveRun<'_>, pc: u64, observed: bool) -> Result<Entry, EngineError> {
        // translations are keyed by the code's content and the offset: position-independent ones (the usual
        // case) under base 0, the few that materialize a PC under their load address; observed blocks (which
        // report every instruction) apart from plain ones
        let offset = pc.wrapping_sub(run.code.base);
        let flag = observed as u64;
        let shared = (run.code.key ^ flag, 0, offset);
        let here = (run.code.key ^ flag, run.code.base, offset);
        let local = ENTRIES.with_borrow(|m| m.get(&(self.id, shared)).or_else(|| m.get(&(self.id, here))).copied());
        if let Some(e) = local {
            return Ok(e);
        }
        let remember = |key: Key, e: Entry| {
            ENTRIES.with_borrow_mut(|m| m.insert((self.id, key), e));
            e
        };
        let lookup = |jit: &Jit| {
            let blocks = jit.blocks.read().unwrap_or_else(|e| e.into_inner());
            blocks.get(&shared).map(|b| (shared, Entry::of(b))).or_else(|| blocks.get(&here).map(|b| (here, Entry::of(b))))
        };
        if let Some((k, e)) = lookup(self) {
            return Ok(remember(k, e));
        }
        let mut module = self.module.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((k, e)) = lookup(self) {
            return Ok(remember(k, e));
        }
        let t = std::time::Instant::now();
        let mut insts = Vec::new();
        let mut at = pc;
        while insts.len() < MAX_BLOCK {
            match run.cache.get(run.mem, run.code, at) {
                // an instruction that reads a clock starts a block: the wave's clock is set before it runs
                Ok(inst) if emu_core::sem::reads_clock(&inst) && !insts.is_empty() => break,
                Ok(inst) => {
                    at += inst.size() as u64;
                    let end = compile::ends_block(&inst);
                    insts.push(inst);
                    if end {
                        break;
                    }
                }
                // a bad word after good ones ends the block; the next block reports it
                Err(_) if !insts.is_empty() => break,
                Err(error) => {
                    return Err(EngineError::IllegalInstruction {
                        kernel: run.cx.kernel.to_string(),
                        workgroup: run.workgroup,
                        wave: run.wave_index,
                        pc,
                        error,
                    })
                }
            }
        }
        let name = format!("block_{:x}_{:x}_{:x}", run.code.key, run.code.base, offset);
        let n = insts.len() as u64;
        let key = if compile::position_dependent(&insts) { here } else { shared };
        let name = format!("{name}_{}", observed as u8);
        let obs: Option<compile::Observe> = if observed { Some(observe) } else { None };
        let block = compile::compile(&mut module.0, insts, pc, run.code.base, interpret_one, obs, &name)
            .map_err(|e| EngineError::Translation { kernel: run.cx.kernel.to_string(), pc, why: e.to_string() })?;
        self.blocks_n.fetch_add(1, Ordering::Relaxed);
        self.compiled.fetch_add(block.compiled as u64, Ordering::Relaxed);
        self.not_compiled.fetch_add(n - block.compiled as u64, Ordering::Relaxed);
        self.translate_ns.fetch_add(t.elapsed().as_nanos() as u64, Ordering::Relaxed);
        let entry = Entry::of(&block);
        self.blocks.write().unwrap_or_else(|e| e.into_inner()).insert(key, block);
        Ok(remember(key, entry))
    }
}

/// How a block run by [`Jit::run_block_once`] ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BlockExit {
    /// Continue at this PC (after this many instructions).
    Continue { next_pc: u64, executed: u64 },
    Barrier { executed: u64 },
    End { executed: u64 },
    /// An instruction faulted: its PC and the report.
    Fault { pc: u64, error: String },
}

impl Jit {
    /// Translates `insts` (consecutive, from `pc`) as one block, without caching it, and runs it once on `wave`
    /// with `mem` and `lds` — what the differential tests compare with the interpreter instruction by
    /// instruction.
    pub fn run_block_once(&self, insts: Vec<Inst>, pc: u64, wave: &mut WaveState, mem: &DeviceMemory, lds: &mut [u8]) -> Result<BlockExit, JitError> {
        let block = {
            let mut module = self.module.lock().unwrap_or_else(|e| e.into_inner());
            let n = self.blocks_n.fetch_add(1, Ordering::Relaxed);
            compile::compile(&mut module.0, insts, pc, pc, interpret_one, None, &format!("once_{n}"))?
        };
        if wave.vgprs.len() < block.vgprs as usize {
            wave.vgprs.resize(block.vgprs as usize, [0; 64]);
        }
        if wave.agprs.len() < block.agprs as usize {
            wave.agprs.resize(block.agprs as usize, [0; 64]);
        }
        let wave_ptr: *mut WaveState = wave;
        let lds_ptr: *mut [u8] = lds;
        let mut env = Env { mem, wave: wave_ptr, lds: lds_ptr, error: None, fallbacks: 0, observer: None, workgroup: [0; 3], wave_index: 0, accesses: Vec::new() };
        // SAFETY: the wave is reached only through `wave_ptr` until the block returns.
        let w = unsafe { &mut *wave_ptr };
        let mut ctx = Ctx::new(w, (&mut env as *mut Env<'_>).cast(), u64::MAX);
        ctx.next_pc = pc;
        ctx.code_base = pc;
        // SAFETY: the LDS outlives the call; the block accesses it only within lds_len.
        let l = unsafe { &mut *lds_ptr };
        (ctx.lds_ptr, ctx.lds_len) = (l.as_mut_ptr(), l.len() as u64);
        let status = (block.func)(&mut *ctx);
        // SAFETY: the block has returned.
        let w = unsafe { &mut *wave_ptr };
        w.scc = ctx.scc != 0;
        let executed = ctx.executed;
        Ok(match status {
            CONTINUE => BlockExit::Continue { next_pc: ctx.next_pc, executed },
            BARRIER => BlockExit::Barrier { executed },
            END => BlockExit::End { executed },
            FAULT => {
                let (pc, text, e) = env.error.take().unwrap_or((0, String::new(), ExecError::Trap(0)));
                BlockExit::Fault { pc, error: format!("{text}: {e}") }
            }
            status => return Err(JitError::Status { pc, status }),
        })
    }
}

/// Runs `n` instructions of `interp` (a copy of the wave from before a block) on the interpreter and compares
/// the registers with `jit` (the wave after the block); the first difference, readably.
fn lockstep(interp: &mut WaveState, jit: &WaveState, run: &WaveRun<'_>, lds: &mut [u8], n: u64, status: u32) -> Result<(), JitError> {
    let (mem, start) = (run.mem, interp.pc);
    let mut text = Vec::new();
    for _ in 0..n {
        let pc = interp.pc;
        let inst = run.cache.get(mem, run.code, pc).map_err(|error| JitError::Decode { pc, error })?;
        text.push(disasm::text(&inst));
        let mut b = Interp { wave: interp, mem, lds, mnemonic: inst.info.name, accesses: None };
        match execute(&mut b, &inst, pc) {
            Ok(flow) => interp.pc = flow.next_pc(pc, inst.size() as u64).0,
            // both engines stop at the same fault (the JIT's report is the interpreter's own)
            Err(_) if status == crate::compile::FAULT => return Ok(()),
            Err(error) => return Err(JitError::InterpreterFaults { pc, error }),
        }
        interp.executed += 1;
    }
    // the last instructions before the fault or the difference are the interesting ones
    let last = || text[text.len().saturating_sub(8)..].to_vec();
    if status == crate::compile::FAULT {
        return Err(JitError::JitFaults { start, executed: n, last: last() });
    }
    match diff_waves(interp, jit) {
        Some(diff) => Err(JitError::Differ { start, executed: n, diff, last: last() }),
        None => Ok(()),
    }
}

/// [`lockstep`] for a block that writes device memory or LDS: `buffers` and `lds_before` are their contents
/// before the JIT ran it. The JIT's results are set aside, memory and LDS put back, the interpreter runs the
/// same instructions, and registers, LDS and every buffer byte must agree (memory is left as the interpreter
/// wrote it).
#[allow(clippy::too_many_arguments)]
fn lockstep_with_memory(
    interp: &mut WaveState,
    jit: &WaveState,
    run: &WaveRun<'_>,
    lds: &mut [u8],
    n: u64,
    status: u32,
    buffers: &[(u64, Vec<u8>)],
    lds_before: &[u8],
) -> Result<(), JitError> {
    let fail = |error| JitError::Snapshot { error };
    let by_jit = run.mem.snapshot_buffers().map_err(fail)?;
    let lds_by_jit = lds.to_vec();
    run.mem.restore_buffers(buffers).map_err(fail)?;
    lds.copy_from_slice(lds_before);
    let start = interp.pc;
    lockstep(interp, jit, run, lds, n, status)?;
    let by_interp = run.mem.snapshot_buffers().map_err(fail)?;
    if let Some(diff) = diff_memory(&by_interp, &by_jit, lds, &lds_by_jit) {
        return Err(JitError::Differ { start, executed: n, diff, last: Vec::new() });
    }
    Ok(())
}

/// The first byte where the interpreter's buffers or LDS differ from the JIT's, in words.
pub(crate) fn diff_memory(interp: &[(u64, Vec<u8>)], jit: &[(u64, Vec<u8>)], interp_lds: &[u8], jit_lds: &[u8]) -> Option<String> {
    if let Some(i) = (0..interp_lds.len()).find(|&i| interp_lds[i] != jit_lds[i]) {
        return Some(format!("LDS byte {i:#x}: interpreter {:#04x}, JIT {:#04x}", interp_lds[i], jit_lds[i]));
    }
    for ((a, x), (_, y)) in interp.iter().zip(jit) {
        if x != y {
            let i = (0..x.len()).find(|&i| x[i] != y[i]).unwrap_or(0);
            // the aligned dword around the byte reads better than the byte alone
            let w = i & !3;
            let word = |b: &[u8]| b.get(w..w + 4).map(|d| format!("{:#010x}", u32::from_le_bytes(d.try_into().unwrap()))).unwrap_or_else(|| format!("{:#04x}", b[i]));
            return Some(format!("memory at {:#x} (byte {i:#x} of the buffer at {a:#x}): interpreter {}, JIT {}", a + w as u64, word(x), word(y)));
        }
    }
    None
}

/// The first difference between the interpreter's and the JIT's wave state (next PC, SCC, SGPRs, VGPRs,
/// AGPRs), in words.
pub(crate) fn diff_waves(interp: &WaveState, jit: &WaveState) -> Option<String> {
    if interp.pc != jit.pc {
        return Some(format!("next pc: interpreter {:#x}, JIT {:#x}", interp.pc, jit.pc));
    }
    if interp.scc != jit.scc {
        return Some(format!("SCC: interpreter {}, JIT {}", interp.scc, jit.scc));
    }
    if let Some(r) = (0..128).find(|&r| interp.sgprs[r] != jit.sgprs[r]) {
        return Some(format!("s{r}: interpreter {:#x}, JIT {:#x}", interp.sgprs[r], jit.sgprs[r]));
    }
    for (file, x, y) in [("v", &interp.vgprs, &jit.vgprs), ("a", &interp.agprs, &jit.agprs)] {
        for r in 0..x.len().max(y.len()) {
            let (p, q) = (x.get(r).copied().unwrap_or([0; 64]), y.get(r).copied().unwrap_or([0; 64]));
            if let Some(l) = (0..64).find(|&l| p[l] != q[l]) {
                return Some(format!("{file}{r} lane {l}: interpreter {:#x}, JIT {:#x}", p[l], q[l]));
            }
        }
    }
    None
}



/// Executes one instruction on the interpreter for a compiled block (see [`compile::InterpretOne`]).
extern "C" fn interpret_one(ctx: *mut Ctx, inst: *const Inst, offset: u64) -> u32 {
    let run = || {
        // SAFETY: compiled blocks pass the Ctx the runner gave them, whose env is the runner's live Env, and
        // a pointer into the block's own instruction slice; the runner does not touch the wave meanwhile.
        let (ctx, inst) = unsafe { (&mut *ctx, &*inst) };
        let pc = ctx.code_base + offset;
        // SAFETY: as above: `env` outlives the call and nothing else accesses it meanwhile.
        let env = unsafe { &mut *(ctx.env as *mut Env<'_>) };
        // SAFETY: the wave and the LDS behind `env` are the runner's, untouched by it during the block.
        let (wave, lds) = unsafe { (&mut *env.wave, &mut *env.lds) };
        wave.scc = ctx.scc != 0;
        let issue_exec = wave.exec();
        let mem = env.mem;
        let log = env.access_log().map(|v| v as *mut Vec<emu_core::observe::LaneAccess>);
        // the log is the Env's own vector, untouched elsewhere while the interpreter runs
        let r = {
            // SAFETY: as above.
            let mut b = Interp { wave, mem, lds, mnemonic: inst.info.name, accesses: log.map(|p| unsafe { &mut *p }) };
            execute(&mut b, inst, pc)
        };
        env.fallbacks += 1;
        let switch = match (&r, env.observer) {
            (Ok(_), Some(o)) => {
                let ev = InstEvent { workgroup: env.workgroup, wave: env.wave_index, pc, inst, exec: issue_exec, accesses: &env.accesses };
                o.instruction(&ev);
                let s = o.switch_wave(&ev);
                env.accesses.clear();
                s
            }
            _ => false,
        };
        if switch {
            ctx.switch = 1;
        }
        // the interpreter may have grown the register files: hand back fresh pointers
        // SAFETY: the interpreter backend is gone; the wave is reached only through the Env until we return.
        let wave = unsafe { &mut *env.wave };
        ctx.sgprs = wave.sgprs.as_mut_ptr();
        ctx.vgprs = wave.vgprs.as_mut_ptr();
        ctx.agprs = wave.agprs.as_mut_ptr();
        ctx.scc = wave.scc as u32;
        match r {
            Ok(Flow::Next) if !switch => 0,
            Ok(flow) => {
                let (next, stop) = flow.next_pc(pc, inst.size() as u64);
                ctx.next_pc = next;
                match (stop, flow) {
                    (Stop::Barrier, _) => BARRIER,
                    (Stop::End, _) => END,
                    (Stop::Running, Flow::Next) => compile::SWITCH,
                    (Stop::Running, _) => CONTINUE,
                }
            }
            Err(e) => {
                env.error = Some((pc, disasm::text(inst), e));
                FAULT
            }
        }
    };
    // a panic must not unwind into generated code
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)).unwrap_or(compile::INTERNAL)
}

/// Reports a compiled instruction to the observer of an observed block (see [`compile::Observe`]).
extern "C" fn observe(ctx: *mut Ctx, inst: *const Inst, offset: u64) -> u32 {
    let run = || {
        // SAFETY: called by an observed block with the runner's Ctx and an instruction of the block.
        let (ctx, inst) = unsafe { (&mut *ctx, &*inst) };
        // SAFETY: the Env outlives the block call and nothing else touches it meanwhile.
        let env = unsafe { &mut *(ctx.env as *mut Env<'_>) };
        let Some(o) = env.observer else { return 0 };
        let ev = InstEvent {
            workgroup: env.workgroup,
            wave: env.wave_index,
            pc: ctx.code_base + offset,
            inst,
            exec: ctx.issue_exec,
            accesses: &env.accesses,
        };
        o.instruction(&ev);
        if o.switch_wave(&ev) {
            ctx.switch = 1;
        }
        env.accesses.clear();
        0
    };
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)).unwrap_or(compile::INTERNAL)
}

impl WaveRunner for Jit {
    fn run_wave<O: Observer>(&self, run: WaveRun<'_>, observer: &O) -> Result<(), EngineError> {
        let kernel = || run.cx.kernel.to_string();
        // a turn (cooperative launches): the wave returns, still running, once it has used it
        let turn_ends = run.limits.slice.map_or(u64::MAX, |s| run.wave.executed.saturating_add(s));
        let wave_ptr: *mut WaveState = &mut *run.wave;
        let lds_ptr: *mut [u8] = &mut *run.lds;
        // an observed dispatch runs blocks that report every instruction (translated separately)
        let observed: Option<&dyn crate::ctx::DynObserver> = if O::ACTIVE { Some(observer) } else { None };
        let mut env = Env {
            mem: run.mem,
            wave: wave_ptr,
            lds: lds_ptr,
            error: None,
            fallbacks: 0,
            observer: observed,
            workgroup: run.workgroup,
            wave_index: run.wave_index,
            accesses: Vec::new(),
        };
        let env_ptr: *mut Env<'_> = &mut env;
        // SAFETY: reached only through `wave_ptr` here and in the helpers the blocks call.
        let mut ctx = Ctx::reused(unsafe { &mut *wave_ptr }, env_ptr.cast(), 0);
        let mut near_limit = false;
        let result = loop {
            // SAFETY: the wave is only reached through `wave_ptr` in this loop and in helper calls it makes.
            let wave = unsafe { &mut *wave_ptr };
            if wave.status != WaveStatus::Running || wave.executed >= turn_ends {
                break Ok(());
            }
            if wave.executed >= run.limits.max_wave_instructions {
                break Err(EngineError::Runaway {
                    kernel: kernel(),
                    workgroup: run.workgroup,
                    wave: run.wave_index,
                    limit: run.limits.max_wave_instructions,
                });
            }
            let block_pc = wave.pc;
            let block = match self.block(&run, wave.pc, O::ACTIVE) {
                Ok(b) => b,
                Err(e) => break Err(e),
            };
            if run.limits.max_wave_instructions - wave.executed < block.len {
                // closer to the instruction limit than a block is long: the interpreter finishes the wave and
                // stops it exactly at the limit
                near_limit = true;
                break Ok(());
            }
            if wave.vgprs.len() < block.vgprs as usize {
                wave.vgprs.resize(block.vgprs as usize, [0; 64]);
            }
            if wave.agprs.len() < block.agprs as usize {
                wave.agprs.resize(block.agprs as usize, [0; 64]);
            }
            // crosscheck: the wave (and for a block that writes memory, device memory and LDS) as they were
            let checked = self.crosscheck && !O::ACTIVE && (block.write_free || run.limits.threads == Some(1));
            let before = if checked {
                let memory = if block.write_free {
                    None
                } else {
                    // SAFETY: nothing else touches the LDS between blocks.
                    let lds = unsafe { &*lds_ptr };
                    match run.mem.snapshot_buffers() {
                        Ok(b) => Some((b, lds.to_vec())),
                        Err(error) => {
                            let diff = JitError::Snapshot { error }.to_string();
                            break Err(EngineError::Crosscheck { kernel: kernel(), workgroup: run.workgroup, wave: run.wave_index, pc: block_pc, diff });
                        }
                    }
                };
                Some((wave.clone(), memory))
            } else {
                None
            };
            let budget = run.limits.max_wave_instructions.min(turn_ends).saturating_sub(wave.executed);
            ctx.sgprs = wave.sgprs.as_mut_ptr();
            ctx.vgprs = wave.vgprs.as_mut_ptr();
            ctx.agprs = wave.agprs.as_mut_ptr();
            ctx.scc = wave.scc as u32;
            ctx.next_pc = wave.pc;
            ctx.executed = 0;
            ctx.switch = 0;
            ctx.budget = budget;
            ctx.code_base = run.code.base;
            // SAFETY: the LDS outlives the wave's run; blocks access it only within lds_len.
            let lds = unsafe { &mut *lds_ptr };
            (ctx.lds_ptr, ctx.lds_len) = (lds.as_mut_ptr(), lds.len() as u64);
            let status = (block.func)(&mut *ctx);
            // SAFETY: the block has returned; the wave is ours again.
            let wave = unsafe { &mut *wave_ptr };
            wave.scc = ctx.scc != 0;
            wave.executed += ctx.executed;
            wave.pc = ctx.next_pc;
            if let Some((mut other, memory)) = before {
                // SAFETY: the block has returned; the LDS is ours again.
                let lds = unsafe { &mut *lds_ptr };
                let checked = match memory {
                    None => lockstep(&mut other, wave, &run, lds, ctx.executed, status),
                    Some((buffers, lds_before)) => lockstep_with_memory(&mut other, wave, &run, lds, ctx.executed, status, &buffers, &lds_before),
                };
                if let Err(e) = checked {
                    break Err(EngineError::Crosscheck { kernel: kernel(), workgroup: run.workgroup, wave: run.wave_index, pc: block_pc, diff: e.to_string() });
                }
            }
            match status {
                CONTINUE if ctx.switch != 0 => break Ok(()),
                CONTINUE => {}
                BARRIER => {
                    wave.status = WaveStatus::AtBarrier;
                    break Ok(());
                }
                END => {
                    wave.status = WaveStatus::Done;
                    observer.wave_end(run.workgroup, run.wave_index, wave.executed);
                    break Ok(());
                }
                compile::SWITCH => break Ok(()),
                FAULT => {
                    // SAFETY: the block has returned; nothing else holds the Env.
                    let env = unsafe { &mut *env_ptr };
                    let (pc, text, error) = env.error.take().unwrap_or((wave.pc, String::new(), ExecError::Trap(0)));
                    break Err(EngineError::Fault { kernel: kernel(), workgroup: run.workgroup, wave: run.wave_index, pc, text, error: Box::new(error) });
                }
                _ => {
                    break Err(EngineError::Fault {
                        kernel: kernel(),
                        workgroup: run.workgroup,
                        wave: run.wave_index,
                        pc: wave.pc,
                        text: String::new(),
                        error: Box::new(ExecError::Unsupported { mnemonic: "the interpreter panicked inside a JIT helper" }),
                    })
                }
            }
        };
        // the windows the wave's accesses found serve its next turn
        // SAFETY: no block is running; the wave is ours.
        unsafe { (*wave_ptr).windows = ctx.windows };
        Ctx::give_back(ctx);
        self.fallbacks.fetch_add(env.fallbacks, Ordering::Relaxed);
        if near_limit && result.is_ok() {
            return emu_core::engine::Interpreter.run_wave(run, observer);
        }
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_crosscheck_diff_names_the_first_differing_register_and_lane() {
        let a = WaveState::new(0x100, 4, 0);
        let mut b = a.clone();
        assert_eq!(diff_waves(&a, &b), None);
        b.vgprs[2][17] = 0x3f80_0000;
        assert_eq!(diff_waves(&a, &b).unwrap(), "v2 lane 17: interpreter 0x0, JIT 0x3f800000");
        b.sgprs[106] = 1;
        assert_eq!(diff_waves(&a, &b).unwrap(), "s106: interpreter 0x0, JIT 0x1");
        b.scc = true;
        assert!(diff_waves(&a, &b).unwrap().starts_with("SCC"));
        b.pc = 0x104;
        assert!(diff_waves(&a, &b).unwrap().starts_with("next pc"));
    }

    #[test]
    fn the_memory_diff_names_the_first_differing_dword_or_lds_byte() {
        let a = vec![(0x1000u64, vec![0u8; 16]), (0x2000, vec![0u8; 8])];
        let mut b = a.clone();
        let lds = vec![0u8; 32];
        assert_eq!(diff_memory(&a, &b, &lds, &lds), None);
        b[1].1[5] = 0x80;
        assert_eq!(diff_memory(&a, &b, &lds, &lds).unwrap(), "memory at 0x2004 (byte 0x5 of the buffer at 0x2000): interpreter 0x00000000, JIT 0x00008000");
        let mut l2 = lds.clone();
        l2[31] = 7;
        assert_eq!(diff_memory(&a, &b, &lds, &l2).unwrap(), "LDS byte 0x1f: interpreter 0x00, JIT 0x07");
    }
}

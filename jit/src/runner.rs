//! The JIT as an `emu_core` [`WaveRunner`]: looks up (or translates) the block at a wave's PC, calls it, and
//! follows its status; instructions it does not translate run on the interpreter, called from the block.
//!
//! **Tiers.** Translating a block costs about a thousand times more than interpreting it once, so a block runs
//! on the interpreter until it has been entered [`JitOptions::hot_after`] times (counted over all waves and
//! dispatches of this JIT), and only then is translated — on the thread that found it hot, or on a background
//! thread while the interpreter goes on running it ([`JitOptions::background`]). A block the disk cache holds
//! ([`crate::disk`]) becomes hot sooner ([`JitOptions::hot_after_cached`]): loading it costs only the front
//! end. Both engines compute the same results bit for bit, so which tier ran a block changes nothing but time.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock};

use cranelift_codegen::isa::OwnedTargetIsa;
use cranelift_codegen::settings::{self, Configurable};
use cranelift_jit::{JITBuilder, JITModule};

use emu_core::engine::{EngineError, Limits, WaveRun, WaveRunner};
use emu_core::interp::Interp;
use emu_core::memory::DeviceMemory;
use emu_core::observe::{Accesses, InstEvent, Observer};
use emu_core::sem::{execute, ExecError, Flow, Stop};
use emu_core::wave::{BufferWindow, WaveState, WaveStatus, Windows};
use isa_amdgpu::{disasm, Inst};

use crate::code_memory::CodeMemory;
use crate::compile::{self, Block, Observed, BARRIER, CONTINUE, END, FAULT, MAX_BLOCK, MAX_TRACE};
use crate::ctx::{Ctx, Env};
use crate::disk::{BlockKey, DiskCache, DiskConfig};
use crate::JitError;

/// Counters of what the JIT did (all dispatches so far).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct JitStats {
    /// Blocks translated (by Cranelift; blocks loaded from the disk cache are `loaded`).
    pub blocks: u64,
    /// Instructions in them that were compiled, and that were left to the interpreter.
    pub compiled: u64,
    pub not_compiled: u64,
    /// Instructions executed by the interpreter on behalf of compiled blocks.
    pub fallbacks: u64,
    /// Memory accesses of compiled instructions made through the interpreter's checked path: a site's first
    /// access in a wave, lanes outside the memory its last access found, or memory compiled code does not
    /// reach directly (another workgroup's private memory, an access that needs more than a lane check).
    pub checked_accesses: u64,
    /// Nanoseconds spent translating (front end and code generation of the `blocks`).
    pub translate_ns: u64,
    /// Blocks whose code came from the disk cache, their instructions, and the nanoseconds spent loading them
    /// (front end, reading, relocating).
    pub loaded: u64,
    pub loaded_insts: u64,
    pub load_ns: u64,
    /// Translated blocks written to the disk cache.
    pub stored: u64,
    /// Block runs on the interpreter tier (blocks not hot yet).
    pub interpreted: u64,
}

impl std::fmt::Display for JitStats {
    /// One line: what was translated, loaded, stored and interpreted, and what it cost.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let insts = self.compiled + self.not_compiled;
        write!(
            f,
            "{} blocks translated ({} instructions, {:.1} ms, {:.1} us per instruction), {} loaded from the disk cache ({} instructions, {:.1} ms), {} stored, {} block runs interpreted before their blocks were hot, {} instructions left to the interpreter by compiled blocks, {} of their memory accesses through the interpreter's checked path",
            self.blocks,
            insts,
            self.translate_ns as f64 / 1e6,
            self.translate_ns as f64 / 1e3 / insts.max(1) as f64,
            self.loaded,
            self.loaded_insts,
            self.load_ns as f64 / 1e6,
            self.stored,
            self.interpreted,
            self.fallbacks,
            self.checked_accesses
        )
    }
}

/// How the JIT chooses between interpreting and translating, and where it keeps translations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JitOptions {
    /// Entries into a block that run on the interpreter before it is translated (0: translate on first use).
    pub hot_after: u32,
    /// The same for a block the disk cache holds.
    pub hot_after_cached: u32,
    /// Translate hot blocks on a background thread (the interpreter runs them meanwhile) instead of on the
    /// thread that found them hot.
    pub background: bool,
    /// Keep translations on disk for other processes.
    pub disk: Option<DiskConfig>,
}

impl JitOptions {
    /// Every block translated on first use, nothing kept on disk: what the tests and the crosscheck use (every
    /// block runs compiled).
    pub fn eager() -> JitOptions {
        JitOptions {
            hot_after: 0,
            hot_after_cached: 0,
            background: false,
            disk: None,
        }
    }

    /// The default engine: tiered, with the thresholds measured on this repository's programs (README,
    /// "Translation cost"), and the disk cache of [`DiskConfig::from_env`].
    pub fn tiered() -> JitOptions {
        JitOptions {
            hot_after: 3000,
            hot_after_cached: 150,
            background: true,
            disk: DiskConfig::from_env(),
        }
    }

    /// [`JitOptions::tiered`] with the thresholds and background translation adjustable for measurements:
    /// `WAVEJIT_JIT_HOT=N[,M]` (entries before translating; M for cached blocks), `WAVEJIT_JIT_BACKGROUND=0|1`.
    pub fn from_env() -> JitOptions {
        let mut o = JitOptions::tiered();
        if let Ok(v) = std::env::var("WAVEJIT_JIT_HOT") {
            let mut parts = v.split(',').map(|p| p.trim().parse::<u32>());
            if let Some(Ok(n)) = parts.next() {
                o.hot_after = n;
                o.hot_after_cached = n.min(o.hot_after_cached);
            }
            if let Some(Ok(m)) = parts.next() {
                o.hot_after_cached = m;
            }
        }
        if let Ok(v) = std::env::var("WAVEJIT_JIT_BACKGROUND") {
            o.background = v.trim() != "0";
        }
        o
    }
}

/// The Cranelift module owning all generated code.
struct Module(JITModule);

// SAFETY: the module is only used behind the Mutex in `Shared` (one thread at a time); the code it has
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
        Entry {
            func: b.func,
            len: b.insts.len() as u64,
            vgprs: b.vgprs,
            agprs: b.agprs,
            write_free: b.write_free,
        }
    }
}

/// A translation key: (code key ^ observed, offset from the code base).
type Key = (u64, u64);

/// A block the runner has met: its instructions, how often it was entered, and its translation once made.
struct Slot {
    /// Its key (which also names its code for profilers).
    key: Key,
    /// Where it was first met (its code serves every load address).
    pc: u64,
    base: u64,
    observed: Observed,
    insts: Vec<Inst>,
    /// The disk cache held it when it was first met.
    cached: bool,
    /// Entries so far (on the interpreter tier).
    runs: AtomicU32,
    /// Handed to the background translator, or being translated on some thread: others interpret it meanwhile.
    claimed: AtomicBool,
    entry: OnceLock<Entry>,
    /// Why it could not be translated (reported to the next wave that enters it).
    failed: OnceLock<String>,
    /// Held while a thread translates it (the eager tier waits for it; the others interpret meanwhile).
    translating: Mutex<()>,
}

impl Slot {
    /// The instructions the interpreter runs in one go from byte offset `at` of the block, while the block
    /// warms up: through the next conditional branch, or to the block's end (a block that goes on past its
    /// branches is interpreted piece by piece while the wave goes on forward inside it, as its code would run);
    /// `None` where no instruction of the block starts.
    fn piece(&self, at: u64) -> Option<u64> {
        let mut off = 0u64;
        let mut first = None;
        for (i, inst) in self.insts.iter().enumerate() {
            if off == at {
                first = Some(i);
            }
            if let Some(f) = first {
                if inst.info.flow == isa_amdgpu::table::FlowControl::CondBranch || i + 1 == self.insts.len() {
                    return Some((i + 1 - f) as u64);
                }
            }
            off += inst.size() as u64;
        }
        None
    }
}

type Hasher = emu_core::hash::FastHash;

/// A host thread's view of a block: translated, or still warming up.
#[derive(Clone)]
enum Local {
    Ready(Entry),
    Warm(Arc<Slot>),
}

thread_local! {
    /// Each host thread's copy of the blocks it has looked up, by (JIT id, key): finding a block again takes no
    /// shared lock and touches no shared reference count (both would bounce between cores on every block).
    static ENTRIES: std::cell::RefCell<HashMap<(u64, Key), Local, Hasher>> = std::cell::RefCell::new(HashMap::default());
}

/// Ways of [`NEAR`].
const NEAR_WAYS: usize = 512;

thread_local! {
    /// In front of [`ENTRIES`], the translated blocks this thread ran last, one per way of their code offset:
    /// kernels of straight-line code run each block once per wave, so a wave's next block is found without
    /// hashing.
    static NEAR: std::cell::RefCell<[Option<(u64, Key, Entry)>; NEAR_WAYS]> = const { std::cell::RefCell::new([None; NEAR_WAYS]) };
}

thread_local! {
    /// The lane-access buffer of this thread's last observed wave run, kept for the next one (an observed run
    /// of one block at a time, as in timing mode, would otherwise grow a new one each time).
    static ACCESSES: std::cell::Cell<Vec<emu_core::observe::LaneAccess>> = const { std::cell::Cell::new(Vec::new()) };
}

static NEXT_JIT_ID: AtomicU64 = AtomicU64::new(1);

/// What to do with the block at a wave's PC.
enum Step {
    Run(Entry),
    /// Run this many instructions on the interpreter: a piece of the block still warming up, if any
    /// ([`Slot::piece`]).
    Interpret(u64, Option<Arc<Slot>>),
}

impl Step {
    /// The interpreter runs the first piece of `slot`, which is not translated yet.
    fn warm(slot: &Arc<Slot>) -> Step {
        Step::Interpret(slot.piece(0).unwrap_or(1), Some(slot.clone()))
    }
}

/// Everything translation needs, shared with the background translator.
struct Shared {
    /// Tells this JIT's entries in [`ENTRIES`] from other JITs'.
    id: u64,
    isa: OwnedTargetIsa,
    module: Mutex<Module>,
    slots: RwLock<HashMap<Key, Arc<Slot>, Hasher>>,
    /// The translated blocks (their instructions and calls are what the code points at).
    blocks: Mutex<Vec<Block>>,
    disk: Option<DiskCache>,
    blocks_n: AtomicU64,
    compiled: AtomicU64,
    not_compiled: AtomicU64,
    fallbacks: AtomicU64,
    checked_accesses: AtomicU64,
    translate_ns: AtomicU64,
    loaded: AtomicU64,
    loaded_insts: AtomicU64,
    load_ns: AtomicU64,
    stored: AtomicU64,
    interpreted: AtomicU64,
    /// The JIT is being dropped: the background translator drops what is still queued.
    stopping: AtomicBool,
}

/// The background translator: a thread taking hot blocks from a queue.
struct Worker {
    queue: Mutex<Option<std::sync::mpsc::Sender<Arc<Slot>>>>,
    thread: Mutex<Option<std::thread::JoinHandle<()>>>,
    /// Blocks handed to it and not translated yet.
    pending: Arc<AtomicU64>,
}

/// The JIT engine; one per process or per device is enough (its translations are keyed by loaded code).
pub struct Jit {
    shared: Arc<Shared>,
    options: JitOptions,
    /// Crosscheck: after every block, the interpreter runs the same instructions from the same state and any
    /// difference in registers, LDS or device memory stops the dispatch with a diff.
    crosscheck: bool,
    worker: Option<Worker>,
}

impl Drop for Jit {
    fn drop(&mut self) {
        // what is queued is dropped (a translation only pays off in a run that uses it); the one being made is
        // finished, so nothing is left half-written
        self.shared.stopping.store(true, Ordering::Release);
        if let Some(w) = &self.worker {
            drop(w.queue.lock().unwrap_or_else(|e| e.into_inner()).take());
            if let Some(t) = w.thread.lock().unwrap_or_else(|e| e.into_inner()).take() {
                let _ = t.join();
            }
        }
    }
}

impl Jit {
    /// A JIT for the host CPU that translates every block on first use ([`JitOptions::eager`]).
    pub fn new() -> Result<Jit, JitError> {
        Jit::with_options(JitOptions::eager())
    }

    /// A JIT for the host CPU with `options`.
    pub fn with_options(options: JitOptions) -> Result<Jit, JitError> {
        let mut flags = settings::builder();
        let mut set = |setting, value| {
            flags
                .set(setting, value)
                .map_err(|error| JitError::Setting { setting, error })
        };
        set("opt_level", "speed")?;
        // the IR is generated, not hand-written: the verifier costs translation time for nothing
        set("enable_verifier", "false")?;
        let host = cranelift_native::builder().map_err(|why| JitError::NoHost { why })?;
        let isa = host
            .finish(settings::Flags::new(flags))
            .map_err(|error| JitError::HostIsa { error })?;
        let mut builder = JITBuilder::with_isa(isa.clone(), cranelift_module::default_libcall_names());
        builder.memory_provider(Box::new(CodeMemory::new()));
        let module = JITModule::new(builder);
        let disk = options.disk.clone().and_then(|c| DiskCache::open_or_warn(c, &*isa));
        let shared = Arc::new(Shared {
            id: NEXT_JIT_ID.fetch_add(1, Ordering::Relaxed),
            isa,
            module: Mutex::new(Module(module)),
            slots: RwLock::new(HashMap::default()),
            blocks: Mutex::new(Vec::new()),
            disk,
            blocks_n: AtomicU64::new(0),
            compiled: AtomicU64::new(0),
            not_compiled: AtomicU64::new(0),
            fallbacks: AtomicU64::new(0),
            checked_accesses: AtomicU64::new(0),
            translate_ns: AtomicU64::new(0),
            loaded: AtomicU64::new(0),
            loaded_insts: AtomicU64::new(0),
            load_ns: AtomicU64::new(0),
            stored: AtomicU64::new(0),
            interpreted: AtomicU64::new(0),
            stopping: AtomicBool::new(false),
        });
        let worker = if options.background && options.hot_after > 0 {
            let (tx, rx) = std::sync::mpsc::channel::<Arc<Slot>>();
            let s = shared.clone();
            let pending = Arc::new(AtomicU64::new(0));
            let left = pending.clone();
            let thread = std::thread::Builder::new()
                .name("wavejit-translate".into())
                .spawn(move || {
                    while let Ok(slot) = rx.recv() {
                        if s.stopping.load(Ordering::Acquire) {
                            break;
                        }
                        // (the slot's lock: `settle` waits on it)
                        let _g = slot.translating.lock().unwrap_or_else(|e| e.into_inner());
                        if slot.entry.get().is_none() && slot.failed.get().is_none() {
                            s.translate_slot(&slot);
                        }
                        left.fetch_sub(1, Ordering::AcqRel);
                    }
                })
                .ok();
            // no thread to be had: hot blocks are translated where they are found hot
            thread.map(|t| Worker {
                queue: Mutex::new(Some(tx)),
                thread: Mutex::new(Some(t)),
                pending,
            })
        } else {
            None
        };
        Ok(Jit {
            shared,
            options,
            crosscheck: false,
            worker,
        })
    }

    /// A JIT that checks every block against the interpreter in lockstep (slow; for finding JIT bugs). Blocks
    /// that write memory or LDS are checked too when the dispatch runs on one host thread (the check re-runs
    /// them from a copy of device memory, which other threads would change meanwhile); on more threads only
    /// memory-free blocks are, and whole dispatches should be compared for the rest. Every block is
    /// translated on first use.
    pub fn crosscheck() -> Result<Jit, JitError> {
        let mut j = Jit::new()?;
        j.crosscheck = true;
        Ok(j)
    }

    pub fn options(&self) -> &JitOptions {
        &self.options
    }

    pub fn stats(&self) -> JitStats {
        let s = &self.shared;
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        JitStats {
            blocks: get(&s.blocks_n),
            compiled: get(&s.compiled),
            not_compiled: get(&s.not_compiled),
            fallbacks: get(&s.fallbacks),
            checked_accesses: get(&s.checked_accesses),
            translate_ns: get(&s.translate_ns),
            loaded: get(&s.loaded),
            loaded_insts: get(&s.loaded_insts),
            load_ns: get(&s.load_ns),
            stored: get(&s.stored),
            interpreted: get(&s.interpreted),
        }
    }

    /// Waits until the background translator has translated everything handed to it so far (for measurements
    /// and tests that want the translations in place, and on the disk).
    pub fn settle(&self) {
        let Some(w) = &self.worker else { return };
        while w.pending.load(Ordering::Acquire) > 0 {
            std::thread::sleep(std::time::Duration::from_micros(200));
        }
    }

    /// What to do at `pc`: run its translated block, or interpret it (translating it first, or handing it to
    /// the background translator, once it is hot).
    fn step(&self, run: &WaveRun<'_>, pc: u64, observed: Observed) -> Result<Step, EngineError> {
        // translations are keyed by the code's content and the offset (so one serves every dispatch and load
        // address of the code); observed blocks (each way of reporting) apart from plain ones
        let key = (run.code.key ^ observed.tag(), pc.wrapping_sub(run.code.base));
        let id = self.shared.id;
        let way = (key.1 >> 2) as usize % NEAR_WAYS;
        if let Some(e) = NEAR.with_borrow(|n| n[way].filter(|&(i, k, _)| i == id && k == key).map(|(.., e)| e)) {
            return Ok(Step::Run(e));
        }
        let near = |e: Entry| NEAR.with_borrow_mut(|n| n[way] = Some((id, key, e)));
        let local = ENTRIES.with_borrow(|m| m.get(&(id, key)).cloned());
        let slot = match local {
            Some(Local::Ready(e)) => {
                near(e);
                return Ok(Step::Run(e));
            }
            Some(Local::Warm(slot)) => slot,
            None => {
                let found = self
                    .shared
                    .slots
                    .read()
                    .unwrap_or_else(|e| e.into_inner())
                    .get(&key)
                    .cloned();
                let slot = match found {
                    Some(s) => s,
                    None => self.meet(run, pc, observed, key)?,
                };
                ENTRIES.with_borrow_mut(|m| m.insert((id, key), Local::Warm(slot.clone())));
                slot
            }
        };
        if let Some(e) = slot.entry.get() {
            let e = *e;
            ENTRIES.with_borrow_mut(|m| m.insert((id, key), Local::Ready(e)));
            near(e);
            return Ok(Step::Run(e));
        }
        let translation_error = |why: &String| EngineError::Translation {
            kernel: run.cx.kernel.to_string(),
            pc,
            why: why.clone(),
        };
        if let Some(why) = slot.failed.get() {
            return Err(translation_error(why));
        }
        let hot_after = if slot.cached {
            self.options.hot_after_cached
        } else {
            self.options.hot_after
        };
        let hot_after = if self.crosscheck { 0 } else { hot_after };
        let runs = slot.runs.fetch_add(1, Ordering::Relaxed);
        if runs < hot_after {
            self.shared.interpreted.fetch_add(1, Ordering::Relaxed);
            return Ok(Step::warm(&slot));
        }
        // hot: to the background translator when it is idle (the host has a core to spare, or this thread would
        // find it so soon), else translated here
        if let Some(w) = &self.worker {
            if slot.claimed.load(Ordering::Acquire) {
                self.shared.interpreted.fetch_add(1, Ordering::Relaxed);
                return Ok(Step::warm(&slot));
            }
            if w.pending
                .compare_exchange(0, 1, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
            {
                if !slot.claimed.swap(true, Ordering::AcqRel) {
                    let queue = w.queue.lock().unwrap_or_else(|e| e.into_inner());
                    match queue.as_ref().map(|q| q.send(slot.clone())) {
                        Some(Ok(())) => {}
                        _ => {
                            w.pending.fetch_sub(1, Ordering::AcqRel);
                        }
                    }
                } else {
                    w.pending.fetch_sub(1, Ordering::AcqRel);
                }
                self.shared.interpreted.fetch_add(1, Ordering::Relaxed);
                return Ok(Step::warm(&slot));
            }
        }
        // eager: wait for whoever translates it; tiered: interpret while another thread translates it
        let _guard = if hot_after == 0 {
            slot.translating.lock().unwrap_or_else(|e| e.into_inner())
        } else {
            match slot.translating.try_lock() {
                Ok(g) => g,
                Err(_) => {
                    self.shared.interpreted.fetch_add(1, Ordering::Relaxed);
                    return Ok(Step::warm(&slot));
                }
            }
        };
        slot.claimed.store(true, Ordering::Release);
        if slot.entry.get().is_none() && slot.failed.get().is_none() {
            self.shared.translate_slot(&slot);
        }
        match (slot.entry.get(), slot.failed.get()) {
            (Some(e), _) => Ok(Step::Run(*e)),
            (None, Some(why)) => Err(translation_error(why)),
            (None, None) => Err(translation_error(&"the block was not translated".to_string())),
        }
    }

    /// A block met for the first time: decoded and given a slot under `key`.
    fn meet(&self, run: &WaveRun<'_>, pc: u64, observed: Observed, key: Key) -> Result<Arc<Slot>, EngineError> {
        let mut insts = Vec::new();
        let mut at = pc;
        let (limit, trace) = if observed == Observed::No {
            (MAX_TRACE, true)
        } else {
            (MAX_BLOCK, false)
        };
        while insts.len() < limit {
            match run.cache.get(run.mem, run.code, at) {
                // an instruction that reads a clock starts a block: the wave's clock is set before it runs
                Ok(inst) if emu_core::sem::reads_clock(&inst) && !insts.is_empty() => break,
                Ok(inst) => {
                    let end = compile::ends_block(&inst) && !(trace && compile::goes_on_past(&inst, at));
                    at += inst.size() as u64;
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
        let offset = pc - run.code.base;
        let cached = self
            .shared
            .disk
            .as_ref()
            .is_some_and(|d| d.contains(&BlockKey::of(&insts, offset, observed)));
        let slot = Slot {
            key,
            pc,
            base: run.code.base,
            observed,
            insts,
            cached,
            runs: AtomicU32::new(0),
            claimed: AtomicBool::new(false),
            entry: OnceLock::new(),
            failed: OnceLock::new(),
            translating: Mutex::new(()),
        };
        let mut slots = self.shared.slots.write().unwrap_or_else(|e| e.into_inner());
        // another thread may have met it meanwhile
        Ok(slots.entry(key).or_insert_with(|| Arc::new(slot)).clone())
    }
}

impl Shared {
    /// Translates (or loads from the disk cache) the block of `slot`, and records the result in it.
    fn translate_slot(&self, slot: &Slot) {
        match self.translate(slot) {
            Ok(e) => {
                let _ = slot.entry.set(e);
            }
            Err(e) => {
                let _ = slot.failed.set(e.to_string());
            }
        }
    }

    fn translate(&self, slot: &Slot) -> Result<Entry, JitError> {
        let t = std::time::Instant::now();
        let obs = (slot.observed != Observed::No).then_some((observe as compile::Observe, slot.observed));
        let (pc, base) = (slot.pc, slot.base);
        let mut built = compile::build(
            self.isa.pointer_type(),
            slot.insts.clone(),
            pc,
            base,
            interpret_one,
            obs,
        )?;
        let syms = built.symbols(interpret_one, obs.map(|o| o.0));
        let n = built.insts.len() as u64;
        let disk = self.disk.as_ref();
        let key = disk.map(|_| BlockKey::of(&built.insts, built.offset, slot.observed));
        let calls = crate::disk::calls_fingerprint(&built.calls, syms.len());
        let cached = match (disk, &key) {
            (Some(d), Some(k)) => d.load(k, calls).ok(),
            _ => None,
        };
        let from_disk = cached.is_some();
        let code = match cached {
            Some(c) => c,
            None => {
                let code = compile::codegen(&*self.isa, &mut built, &syms, pc)?;
                if let (Some(d), Some(k)) = (disk, &key) {
                    if code.persistable {
                        d.store(k, calls, &code);
                        self.stored.fetch_add(1, Ordering::Relaxed);
                    }
                }
                code
            }
        };
        let func = {
            let mut module = self.module.lock().unwrap_or_else(|e| e.into_inner());
            let (code_key, offset) = slot.key;
            compile::load(
                &mut module.0,
                &code,
                &syms,
                pc,
                &format!("block_{code_key:x}_{offset:x}"),
            )?
        };
        let block = built.finish(func);
        let entry = Entry::of(&block);
        let ns = t.elapsed().as_nanos() as u64;
        if from_disk {
            self.loaded.fetch_add(1, Ordering::Relaxed);
            self.loaded_insts.fetch_add(n, Ordering::Relaxed);
            self.load_ns.fetch_add(ns, Ordering::Relaxed);
        } else {
            self.blocks_n.fetch_add(1, Ordering::Relaxed);
            self.compiled.fetch_add(block.compiled as u64, Ordering::Relaxed);
            self.not_compiled
                .fetch_add(n - block.compiled as u64, Ordering::Relaxed);
            self.translate_ns.fetch_add(ns, Ordering::Relaxed);
        }
        self.blocks.lock().unwrap_or_else(|e| e.into_inner()).push(block);
        Ok(entry)
    }
}

/// How a block run by [`Jit::run_block_once`] ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BlockExit {
    /// Continue at this PC (after this many instructions).
    Continue {
        next_pc: u64,
        executed: u64,
    },
    Barrier {
        executed: u64,
    },
    End {
        executed: u64,
    },
    /// An instruction faulted: its PC and the report.
    Fault {
        pc: u64,
        error: String,
    },
}

impl Jit {
    /// Translates `insts` (consecutive, from `pc`) as one block, without caching it, and runs it once on `wave`
    /// with `mem` and `lds` — what the differential tests compare with the interpreter instruction by
    /// instruction.
    pub fn run_block_once(
        &self,
        insts: Vec<Inst>,
        pc: u64,
        wave: &mut WaveState,
        mem: &DeviceMemory,
        lds: &mut [u8],
    ) -> Result<BlockExit, JitError> {
        let block = {
            let mut module = self.shared.module.lock().unwrap_or_else(|e| e.into_inner());
            let n = self.shared.blocks_n.fetch_add(1, Ordering::Relaxed);
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
        let mut env = Env {
            mem,
            wave: wave_ptr,
            lds: lds_ptr,
            error: None,
            fallbacks: 0,
            checked_accesses: 0,
            observer: None,
            wants_accesses: false,
            workgroup: [0; 3],
            wave_index: 0,
            accesses: Vec::new(),
        };
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
            CONTINUE => BlockExit::Continue {
                next_pc: ctx.next_pc,
                executed,
            },
            BARRIER => BlockExit::Barrier { executed },
            END => BlockExit::End { executed },
            FAULT => {
                let (pc, text, e) = env.error.take().unwrap_or((0, String::new(), ExecError::Trap(0)));
                BlockExit::Fault {
                    pc,
                    error: format!("{text}: {e}"),
                }
            }
            status => return Err(JitError::Status { pc, status }),
        })
    }
}

/// Runs `n` instructions of `interp` (a copy of the wave from before a block) on the interpreter and compares
/// the registers with `jit` (the wave after the block); the first difference, readably.
fn lockstep(
    interp: &mut WaveState,
    jit: &WaveState,
    run: &WaveRun<'_>,
    lds: &mut [u8],
    n: u64,
    status: u32,
) -> Result<(), JitError> {
    let (mem, start) = (run.mem, interp.pc);
    let mut text = Vec::new();
    for _ in 0..n {
        let pc = interp.pc;
        let inst = run
            .cache
            .get(mem, run.code, pc)
            .map_err(|error| JitError::Decode { pc, error })?;
        text.push(disasm::text(&inst));
        let mut b = Interp {
            wave: interp,
            mem,
            lds,
            mnemonic: inst.info.name,
            accesses: None,
        };
        match execute(&mut b, &inst, pc) {
            Ok(flow) => {
                interp.slack.locate(pc, || disasm::text(&inst));
                interp.pc = flow.next_pc(pc, inst.size() as u64).0
            }
            // both engines stop at the same fault (the JIT's report is the interpreter's own)
            Err(_) if status == crate::compile::FAULT => return Ok(()),
            Err(error) => return Err(JitError::InterpreterFaults { pc, error }),
        }
        interp.executed += 1;
    }
    // the last instructions before the fault or the difference are the interesting ones
    let last = || text[text.len().saturating_sub(8)..].to_vec();
    if status == crate::compile::FAULT {
        return Err(JitError::JitFaults {
            start,
            executed: n,
            last: last(),
        });
    }
    match diff_waves(interp, jit) {
        Some(diff) => Err(JitError::Differ {
            start,
            executed: n,
            diff,
            last: last(),
        }),
        None => Ok(()),
    }
}

/// What the crosscheck compares of device memory after a block that writes it: the buffers and the private
/// memory of the workgroups (a block may read a private word it then writes, so the interpreter's run of it
/// must start from the private memory the JIT's started from).
const CHECKED: &[emu_core::memory::AllocKind] = &[
    emu_core::memory::AllocKind::Buffer,
    emu_core::memory::AllocKind::Scratch,
];

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
    let by_jit = run.mem.snapshot(CHECKED).map_err(fail)?;
    let lds_by_jit = lds.to_vec();
    run.mem.restore_buffers(buffers).map_err(fail)?;
    lds.copy_from_slice(lds_before);
    let start = interp.pc;
    lockstep(interp, jit, run, lds, n, status)?;
    let by_interp = run.mem.snapshot(CHECKED).map_err(fail)?;
    if let Some(diff) = diff_memory(&by_interp, &by_jit, lds, &lds_by_jit) {
        return Err(JitError::Differ {
            start,
            executed: n,
            diff,
            last: Vec::new(),
        });
    }
    Ok(())
}

/// The first byte where the interpreter's buffers or LDS differ from the JIT's, in words.
pub(crate) fn diff_memory(
    interp: &[(u64, Vec<u8>)],
    jit: &[(u64, Vec<u8>)],
    interp_lds: &[u8],
    jit_lds: &[u8],
) -> Option<String> {
    if let Some(i) = (0..interp_lds.len()).find(|&i| interp_lds[i] != jit_lds[i]) {
        return Some(format!(
            "LDS byte {i:#x}: interpreter {:#04x}, JIT {:#04x}",
            interp_lds[i], jit_lds[i]
        ));
    }
    for ((a, x), (_, y)) in interp.iter().zip(jit) {
        if x != y {
            let i = (0..x.len()).find(|&i| x[i] != y[i]).unwrap_or(0);
            // the aligned dword around the byte reads better than the byte alone
            let w = i & !3;
            let word = |b: &[u8]| {
                b.get(w..w + 4)
                    .map(|d| format!("{:#010x}", u32::from_le_bytes(d.try_into().unwrap())))
                    .unwrap_or_else(|| format!("{:#04x}", b[i]))
            };
            return Some(format!(
                "memory at {:#x} (byte {i:#x} of the buffer at {a:#x}): interpreter {}, JIT {}",
                a + w as u64,
                word(x),
                word(y)
            ));
        }
    }
    None
}

/// The first difference between the interpreter's and the JIT's wave state (next PC, SCC, SGPRs, VGPRs,
/// AGPRs, slack accesses), in words.
pub(crate) fn diff_waves(interp: &WaveState, jit: &WaveState) -> Option<String> {
    if interp.pc != jit.pc {
        return Some(format!("next pc: interpreter {:#x}, JIT {:#x}", interp.pc, jit.pc));
    }
    if interp.slack != jit.slack {
        let first = |w: &WaveState| {
            w.slack.first.as_ref().map_or("none".to_string(), |f| {
                format!("{:?} lane {:?}: {}", f.at, f.lane, f.slack)
            })
        };
        return Some(format!(
            "slack accesses: interpreter {} (first {}), JIT {} (first {})",
            interp.slack.count,
            first(interp),
            jit.slack.count,
            first(jit)
        ));
    }
    if interp.scc != jit.scc {
        return Some(format!("SCC: interpreter {}, JIT {}", interp.scc, jit.scc));
    }
    if let Some(r) = (0..128).find(|&r| interp.sgprs[r] != jit.sgprs[r]) {
        return Some(format!(
            "s{r}: interpreter {:#x}, JIT {:#x}",
            interp.sgprs[r], jit.sgprs[r]
        ));
    }
    for (file, x, y) in [("v", &interp.vgprs, &jit.vgprs), ("a", &interp.agprs, &jit.agprs)] {
        for r in 0..x.len().max(y.len()) {
            let (p, q) = (
                x.get(r).copied().unwrap_or([0; 64]),
                y.get(r).copied().unwrap_or([0; 64]),
            );
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
        if let Some(o) = env.observer {
            // the batches before it first
            ctx.report_batches(o, env.workgroup, env.wave_index);
        }
        // SAFETY: the wave and the LDS behind `env` are the runner's, untouched by it during the block.
        let (wave, lds) = unsafe { (&mut *env.wave, &mut *env.lds) };
        wave.scc = ctx.scc != 0;
        let issue_exec = wave.exec();
        let mem = env.mem;
        ctx.take_records(wave, env.access_log());
        let log = env.access_log().map(|v| v as *mut Vec<emu_core::observe::LaneAccess>);
        // the log is the Env's own vector, untouched elsewhere while the interpreter runs
        let r = {
            // SAFETY: as above.
            let accesses = log.map(|p| unsafe { &mut *p });
            let mut b = Interp {
                wave,
                mem,
                lds,
                mnemonic: inst.info.name,
                accesses,
            };
            execute(&mut b, inst, pc)
        };
        env.fallbacks += 1;
        let switch = match (&r, env.observer) {
            (Ok(_), Some(o)) => {
                let ev = InstEvent {
                    workgroup: env.workgroup,
                    wave: env.wave_index,
                    pc,
                    inst,
                    exec: issue_exec,
                    accesses: Accesses::of(&env.accesses),
                };
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
        wave.slack.locate(pc, || disasm::text(inst));
        ctx.sgprs = wave.sgprs.as_mut_ptr();
        ctx.vgprs = wave.vgprs.as_mut_ptr();
        ctx.agprs = wave.agprs.as_mut_ptr();
        ctx.windows = wave.windows_mut();
        ctx.scc = wave.scc as u32;
        if r.is_ok() {
            ctx.pass |= emu_core::sem::pass_bits(inst);
        }
        match r {
            Ok(Flow::Next) if !switch => 0,
            Ok(flow) => {
                let (next, stop) = flow.next_pc(pc, inst.size() as u64);
                ctx.next_pc = next;
                match (stop, flow) {
                    (Stop::Barrier, _) => BARRIER,
                    (Stop::End, _) => END,
                    (Stop::Running, Flow::Next) => compile::SWITCH,
                    // as the interpreter's turn ends going back round a polling loop
                    (Stop::Running, _)
                        if next <= pc && emu_core::sem::goes_back(&mut ctx.pass) && ctx.poll_ends != 0 =>
                    {
                        compile::POLL
                    }
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

/// Reports a compiled instruction, or without one the pending batch, to the observer of an observed block (see
/// [`compile::Observe`]).
extern "C" fn observe(ctx: *mut Ctx, inst: *const Inst, offset: u64) -> u32 {
    let run = || {
        // SAFETY: called by an observed block with the runner's Ctx.
        let ctx = unsafe { &mut *ctx };
        // SAFETY: the Env outlives the block call and nothing else touches it meanwhile.
        let env = unsafe { &mut *(ctx.env as *mut Env<'_>) };
        let Some(o) = env.observer else { return 0 };
        if inst.is_null() {
            ctx.take_batch(o, env.workgroup, env.wave_index);
            return 0;
        }
        ctx.report_batches(o, env.workgroup, env.wave_index);
        // SAFETY: not null: an instruction of the block.
        let inst = unsafe { &*inst };
        let (workgroup, wave) = (env.workgroup, env.wave_index);
        // SAFETY: the wave behind the Env is the runner's, untouched by it while the block runs.
        let accesses = ctx.take_accesses(unsafe { &*env.wave }, env.access_log());
        let ev = InstEvent {
            workgroup,
            wave,
            pc: ctx.code_base + offset,
            inst,
            exec: ctx.issue_exec,
            accesses,
        };
        if o.instruction_then_switch(&ev) {
            ctx.switch = 1;
        }
        drop(ev);
        env.accesses.clear();
        0
    };
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)).unwrap_or(compile::INTERNAL)
}

/// A window table left by a wave that ended, without its private windows, and the version of the memory it
/// was found in ([`DeviceMemory::version`]).
struct Bequest {
    memory: (u64, u64),
    windows: Windows,
    /// Every slot holds a window (a later wave's windows at the same version replace them until then).
    full: bool,
}

thread_local! {
    /// The windows of the last wave that ended on this thread.
    static BEQUEATHED: std::cell::RefCell<Option<Box<Bequest>>> = const { std::cell::RefCell::new(None) };
}

/// Keeps the windows of `wave`, which ended, for the next wave this thread starts with none of its own (see
/// [`start_windows`]): a grid's waves mostly access the same buffers at the same sites, and each site's first
/// access would otherwise take the interpreter's checked path again. The wave's own private segment is left out
/// (it is no other wave's). A wave leaves its windows unless a wave that ended before it at the same memory
/// version left windows in every slot.
fn bequeath_windows(mem: &DeviceMemory, wave: &WaveState) {
    if !wave.windows_found {
        // nothing it did not start with
        return;
    }
    if mem.version() != wave.windows_version {
        // an allocation changed while the wave ran: a window it found may lie in memory that is gone
        return;
    }
    BEQUEATHED.with_borrow_mut(|b| {
        if b.as_ref().is_some_and(|b| b.memory == wave.windows_version && b.full) {
            return;
        }
        let b = b.get_or_insert_with(|| {
            Box::new(Bequest {
                memory: (0, 0),
                windows: Windows::default(),
                full: false,
            })
        });
        b.memory = wave.windows_version;
        let Some(from) = wave.windows.as_deref() else { return };
        let to = &mut b.windows;
        let mut full = true;
        for (to, from) in to
            .vector
            .iter_mut()
            .zip(&from.vector)
            .chain(to.scalar.iter_mut().zip(&from.scalar))
        {
            *to = if wave.touches_private(from.start, from.start + from.len) {
                BufferWindow::default()
            } else {
                *from
            };
            full &= to.len != 0;
        }
        b.full = full;
    });
}

/// The windows `wave` (which has executed nothing) starts with: its own when they were found at the memory's
/// present version (a state made over from a wave of an earlier workgroup, [`WaveState::reset`], or given the
/// registers and windows of a wave that ended, `engine::give_registers`), else those the
/// first wave to end on this thread at that version left, else none. Either way every window still lies in
/// live memory of a kind compiled code may access, and where the new wave's lanes fall is checked, as always.
fn start_windows(mem: &DeviceMemory, wave: &mut WaveState) {
    let now = mem.version();
    if wave.windows_version == now {
        return;
    }
    wave.windows_version = now;
    BEQUEATHED.with_borrow(|b| match b.as_ref().filter(|b| b.memory == now) {
        Some(b) => *wave.windows_mut() = b.windows,
        None => wave.windows = None,
    });
}

/// An observer passed on unchanged that notes whether it asked for another wave (the interpreted tier runs a
/// block's worth of instructions, and a switch asked after the last of them must still end the wave's turn).
struct Noting<'o, O: Observer> {
    inner: &'o O,
    switched: AtomicBool,
}

impl<O: Observer> Observer for Noting<'_, O> {
    const ACTIVE: bool = O::ACTIVE;
    const WANTS_ACCESSES: bool = O::WANTS_ACCESSES;
    const BATCHES: bool = O::BATCHES;

    fn batch(&self, b: &emu_core::observe::InstBatch<'_>) {
        self.inner.batch(b);
    }

    fn event(&self, ev: &emu_core::observe::Event<'_>) {
        self.inner.event(ev);
    }

    fn instruction(&self, ev: &InstEvent<'_>) {
        self.inner.instruction(ev);
    }

    fn switch_wave(&self, ev: &InstEvent<'_>) -> bool {
        let s = self.inner.switch_wave(ev);
        if s {
            self.switched.store(true, Ordering::Relaxed);
        }
        s
    }

    fn wave_end(&self, workgroup: [u32; 3], wave: u32, instructions: u64) {
        self.inner.wave_end(workgroup, wave, instructions);
    }
}

impl WaveRunner for Jit {
    fn run_wave<O: Observer>(&self, run: WaveRun<'_>, observer: &O) -> Result<(), EngineError> {
        let kernel = || run.cx.kernel.to_string();
        // a turn (cooperative launches): the wave returns, still running, once it has used it
        let turn_starts = run.wave.executed;
        let turn_ends = run
            .limits
            .slice
            .map_or(u64::MAX, |s| run.wave.executed.saturating_add(s));
        let wave_ptr: *mut WaveState = &mut *run.wave;
        let lds_ptr: *mut [u8] = &mut *run.lds;
        // an observed dispatch runs blocks that report every instruction (translated separately)
        let observed: Option<&dyn crate::ctx::DynObserver> = if O::ACTIVE { Some(observer) } else { None };
        let mode = match (O::ACTIVE, O::BATCHES) {
            (false, _) => Observed::No,
            (true, false) => Observed::Each,
            (true, true) => Observed::Batched,
        };
        let mut env = Env {
            mem: run.mem,
            wave: wave_ptr,
            lds: lds_ptr,
            error: None,
            fallbacks: 0,
            checked_accesses: 0,
            observer: observed,
            wants_accesses: O::ACTIVE && O::WANTS_ACCESSES,
            workgroup: run.workgroup,
            wave_index: run.wave_index,
            accesses: if O::WANTS_ACCESSES { ACCESSES.take() } else { Vec::new() },
        };
        let env_ptr: *mut Env<'_> = &mut env;
        // SAFETY: reached only through `wave_ptr` here and in the helpers the blocks call.
        let mut ctx = Ctx::reused(unsafe { &mut *wave_ptr }, env_ptr.cast(), 0);
        {
            // SAFETY: as above; no block is running yet.
            let wave = unsafe { &mut *wave_ptr };
            if wave.executed == 0 {
                start_windows(run.mem, wave);
                ctx.windows = wave.windows_mut();
            }
        }
        let mut near_limit = false;
        // the block being interpreted while it warms up: its slot, the PC it started at, the last piece's PC
        let mut warming: Option<(Arc<Slot>, u64, u64)> = None;
        let result = loop {
            // SAFETY: the wave is only reached through `wave_ptr` in this loop and in helper calls it makes.
            let wave = unsafe { &mut *wave_ptr };
            if wave.status != WaveStatus::Running || wave.executed >= turn_ends {
                break Ok(());
            }
            // blocks start at clock-reading instructions, so a turn that ends before one ends between blocks
            if run.limits.clock_ends_turn
                && wave.executed > turn_starts
                && run
                    .cache
                    .get(run.mem, run.code, wave.pc)
                    .is_ok_and(|i| emu_core::sem::reads_clock(&i))
            {
                break Ok(());
            }
            // a watched dispatch: what the wave did shows in its progress, and a stopped dispatch stops here
            if let Some(p) = run.cx.progress {
                if wave.executed - wave.reported >= emu_core::watch::CHUNK {
                    p.note(wave);
                }
                if p.stopped() {
                    break Err(EngineError::Stopped { kernel: kernel() });
                }
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
            // a block still interpreted goes on piece by piece while the wave goes on forward inside it
            let going_on = warming.as_ref().and_then(|(s, start, last)| {
                let piece = if wave.pc > *last {
                    s.piece(wave.pc - start)
                } else {
                    None
                };
                piece.map(|n| Step::Interpret(n, Some(s.clone())))
            });
            // in VGPR index mode the interpreter runs the wave, one instruction at a time
            let (step, start) = match going_on {
                _ if wave.gpr_idx => (Ok(Step::Interpret(1, None)), wave.pc),
                Some(piece) => (Ok(piece), warming.as_ref().map_or(wave.pc, |w| w.1)),
                // a block met here starts here
                None => (self.step(&run, wave.pc, mode), wave.pc),
            };
            warming = match &step {
                Ok(Step::Interpret(_, Some(s))) => Some((s.clone(), start, wave.pc)),
                _ => None,
            };
            let block = match step {
                Ok(Step::Run(b)) => b,
                Ok(Step::Interpret(n, _)) => {
                    // not hot yet: the interpreter runs the block's instructions (fewer when the wave's turn
                    // ends first), stopping early at a barrier, the end, or when the observer switches waves
                    let n = n.min(turn_ends - wave.executed);
                    let before = wave.executed;
                    let interp = WaveRun {
                        mem: run.mem,
                        code: run.code,
                        cx: run.cx,
                        workgroup: run.workgroup,
                        wave_index: run.wave_index,
                        wave,
                        // SAFETY: no block is running; the LDS is reached only through this borrow meanwhile.
                        lds: unsafe { &mut *lds_ptr },
                        cache: run.cache,
                        limits: Limits {
                            slice: Some(n),
                            ..run.limits
                        },
                    };
                    let noting = Noting {
                        inner: observer,
                        switched: AtomicBool::new(false),
                    };
                    if let Err(e) = emu_core::engine::Interpreter.run_wave(interp, &noting) {
                        break Err(e);
                    }
                    // SAFETY: the interpreter has returned the wave.
                    let wave = unsafe { &*wave_ptr };
                    if wave.status == WaveStatus::Running
                        && (noting.switched.into_inner() || wave.polled || wave.executed - before < n)
                    {
                        // the observer asked for another wave (also after the last instruction of the run), or
                        // the wave went back round a polling loop (also at the last)
                        break Ok(());
                    }
                    continue;
                }
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
                    match run.mem.snapshot(CHECKED) {
                        Ok(b) => Some((b, lds.to_vec())),
                        Err(error) => {
                            let diff = JitError::Snapshot { error }.to_string();
                            break Err(EngineError::Crosscheck {
                                kernel: kernel(),
                                workgroup: run.workgroup,
                                wave: run.wave_index,
                                pc: block_pc,
                                diff,
                            });
                        }
                    }
                };
                Some((wave.clone(), memory))
            } else {
                None
            };
            let mut budget = run
                .limits
                .max_wave_instructions
                .min(turn_ends)
                .saturating_sub(wave.executed);
            if run.cx.progress.is_some() {
                // compiled loops come back to look at the dispatch's progress now and then
                budget = budget.min(emu_core::watch::CHUNK);
            }
            ctx.sgprs = wave.sgprs.as_mut_ptr();
            ctx.vgprs = wave.vgprs.as_mut_ptr();
            ctx.agprs = wave.agprs.as_mut_ptr();
            ctx.windows = wave.windows_mut();
            ctx.scc = wave.scc as u32;
            ctx.next_pc = wave.pc;
            ctx.executed = 0;
            (ctx.clock_now, ctx.clock_step) = crate::ctx::clock_of(wave);
            ctx.switch = 0;
            ctx.poll_ends = run.limits.poll_ends_turn as u32;
            ctx.pass = wave.pass;
            ctx.budget = budget;
            ctx.code_base = run.code.base;
            // SAFETY: the LDS outlives the wave's run; blocks access it only within lds_len.
            let lds = unsafe { &mut *lds_ptr };
            (ctx.lds_ptr, ctx.lds_len) = (lds.as_mut_ptr(), lds.len() as u64);
            let status = (block.func)(&mut *ctx);
            if let (Some(o), true) = (observed, ctx.batch_n != 0 || ctx.held.n != 0) {
                // the batches the block ended with, before what the status brings (the wave's end)
                ctx.report_batches(o, run.workgroup, run.wave_index);
            }
            // SAFETY: the block has returned; the wave is ours again.
            let wave = unsafe { &mut *wave_ptr };
            wave.scc = ctx.scc != 0;
            wave.pass = ctx.pass;
            wave.executed += ctx.executed;
            wave.pc = ctx.next_pc;
            if let Some((mut other, memory)) = before {
                // SAFETY: the block has returned; the LDS is ours again.
                let lds = unsafe { &mut *lds_ptr };
                let checked = match memory {
                    None => lockstep(&mut other, wave, &run, lds, ctx.executed, status),
                    Some((buffers, lds_before)) => {
                        lockstep_with_memory(&mut other, wave, &run, lds, ctx.executed, status, &buffers, &lds_before)
                    }
                };
                if let Err(e) = checked {
                    break Err(EngineError::Crosscheck {
                        kernel: kernel(),
                        workgroup: run.workgroup,
                        wave: run.wave_index,
                        pc: block_pc,
                        diff: e.to_string(),
                    });
                }
            }
            match status {
                CONTINUE if ctx.switch != 0 => break Ok(()),
                CONTINUE => {}
                compile::POLL => {
                    wave.polled = true;
                    break Ok(());
                }
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
                    break Err(EngineError::Fault {
                        kernel: kernel(),
                        workgroup: run.workgroup,
                        wave: run.wave_index,
                        pc,
                        text,
                        error: Box::new(error),
                    });
                }
                _ => {
                    break Err(EngineError::Fault {
                        kernel: kernel(),
                        workgroup: run.workgroup,
                        wave: run.wave_index,
                        pc: wave.pc,
                        text: String::new(),
                        error: Box::new(ExecError::Unsupported {
                            mnemonic: "the interpreter panicked inside a JIT helper",
                        }),
                    })
                }
            }
        };
        // SAFETY: no block is running; the wave is ours again.
        let wave = unsafe { &*wave_ptr };
        if wave.status == WaveStatus::Done {
            bequeath_windows(run.mem, wave);
        }
        Ctx::give_back(ctx);
        if O::WANTS_ACCESSES {
            env.accesses.clear();
            ACCESSES.set(std::mem::take(&mut env.accesses));
        }
        if env.fallbacks > 0 {
            self.shared.fallbacks.fetch_add(env.fallbacks, Ordering::Relaxed);
        }
        if env.checked_accesses > 0 {
            self.shared
                .checked_accesses
                .fetch_add(env.checked_accesses, Ordering::Relaxed);
        }
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
        assert_eq!(
            diff_waves(&a, &b).unwrap(),
            "v2 lane 17: interpreter 0x0, JIT 0x3f800000"
        );
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
        assert_eq!(
            diff_memory(&a, &b, &lds, &lds).unwrap(),
            "memory at 0x2004 (byte 0x5 of the buffer at 0x2000): interpreter 0x00000000, JIT 0x00008000"
        );
        let mut l2 = lds.clone();
        l2[31] = 7;
        assert_eq!(
            diff_memory(&a, &b, &lds, &l2).unwrap(),
            "LDS byte 0x1f: interpreter 0x00, JIT 0x07"
        );
    }
}

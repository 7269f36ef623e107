//! The JIT as an `emu_core` [`WaveRunner`]: looks up (or translates) the block at a wave's PC, calls it, and
//! follows its status; instructions it does not translate run on the interpreter, called from the block.
//!
//! **Tiers.** Translating a block costs about a thousand times more than interpreting it once, so a block runs
//! on the interpreter until it has been entered [`JitOptions::hot_after`] times (counted over all waves and
//! dispatches of this JIT), and only then is translated — on the thread that found it hot, or on a background
//! thread while the interpreter goes on running it ([`JitOptions::background`]). A block the disk cache holds
//! ([`crate::disk`]) becomes hot sooner ([`JitOptions::hot_after_cached`]): loading it costs only the front
//! end. Both engines compute the same results bit for bit, so which tier ran a block changes nothing but time.
//!
//! This module holds the [`Jit`] and its table of the blocks met so far; `tiers` decides what runs a block
//! and translates it, `run` runs a wave from block to block, `callbacks` is what compiled blocks call back
//! into, `windows` hands buffer windows from wave to wave, `crosscheck` compares the JIT with the
//! interpreter, and `options` holds the options and statistics.
//!
//! [`WaveRunner`]: emu_core::engine::WaveRunner

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock};

use cranelift_codegen::isa::OwnedTargetIsa;
use cranelift_codegen::settings::{self, Configurable};
use cranelift_jit::{JITBuilder, JITModule};

use isa_amdgpu::Inst;

use crate::code_memory::CodeMemory;
use crate::compile::{Block, Observed};
use crate::ctx::Ctx;
use crate::disk::DiskCache;
use crate::JitError;

mod callbacks;
mod crosscheck;
mod options;
mod run;
mod tiers;
mod windows;

pub use crosscheck::BlockExit;

pub use options::{JitOptions, JitStats};

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

static NEXT_JIT_ID: AtomicU64 = AtomicU64::new(1);

/// Everything translation needs, shared with the background translator.
struct Shared {
    /// Tells this JIT's entries in `tiers::ENTRIES` from other JITs'.
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
}

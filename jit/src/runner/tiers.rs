//! The block at a wave's PC: found in this thread's caches or the shared table, met for the first time, and
//! run on the interpreter until it is hot, then translated (here, by the background translator, or loaded
//! from the disk cache).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use emu_core::engine::{EngineError, WaveRun};

use crate::compile::{self, Observed, MAX_BLOCK, MAX_TRACE};
use crate::disk::BlockKey;
use crate::JitError;

use super::callbacks::{interpret_one, observe};
use super::{Entry, Hasher, Jit, Key, Shared, Slot};

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

/// What to do with the block at a wave's PC.
pub(super) enum Step {
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
impl Jit {
    /// What to do at `pc`: run its translated block, or interpret it (translating it first, or handing it to
    /// the background translator, once it is hot).
    pub(super) fn step(&self, run: &WaveRun<'_>, pc: u64, observed: Observed) -> Result<Step, EngineError> {
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
    pub(super) fn translate_slot(&self, slot: &Slot) {
        match self.translate(slot) {
            Ok(e) => {
                let _ = slot.entry.set(e);
            }
            Err(e) => {
                let _ = slot.failed.set(e.to_string());
            }
        }
    }

    pub(super) fn translate(&self, slot: &Slot) -> Result<Entry, JitError> {
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

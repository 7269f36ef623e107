//! Signals: 64-byte `amd_signal_t` records in device memory (kernels read and write the value at offset 8, as
//! ROCm's device libraries do), handed out from 64 KiB slabs. The handle is the record's address.

use std::collections::HashSet;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use emu_core::memory::AllocKind;

use crate::ffi::{self, Status};
use crate::runtime::Runtime;

const SLAB: u64 = 64 * 1024;

#[derive(Default)]
pub struct Signals {
    inner: Mutex<SignalSlots>,
}

#[derive(Default)]
struct SignalSlots {
    live: HashSet<u64, crate::runtime::HandleHash>,
    free: Vec<u64>,
    /// Signals of other processes attached through IPC handles: signal → the mapping of its page here.
    adopted: std::collections::HashMap<u64, u64>,
    /// Signals made for IPC (`HSA_AMD_SIGNAL_IPC`): each has a page of its own, so sharing it shares no other.
    ipc: HashSet<u64>,
}

/// How long a waiter sleeps between looks at a signal that only a kernel may change.
const POLL: Duration = Duration::from_micros(500);

impl Signals {
    /// A new signal holding `initial`; with `ipc`, in a page of its own that can be shared with other processes.
    pub fn create(&self, rt: &Runtime, initial: i64, ipc: bool) -> Result<u64, Status> {
        let mut s = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let h = if ipc {
            let h = rt
                .mem
                .allocate(ffi::AMD_SIGNAL_SIZE as u64, AllocKind::Buffer, "IPC signal")
                .map_err(|_| ffi::ERROR_OUT_OF_RESOURCES)?;
            s.ipc.insert(h);
            h
        } else {
            if s.free.is_empty() {
                let slab = rt
                    .mem
                    .allocate(SLAB, AllocKind::Buffer, "signals")
                    .map_err(|_| ffi::ERROR_OUT_OF_RESOURCES)?;
                s.free.extend(
                    (0..SLAB / ffi::AMD_SIGNAL_SIZE as u64)
                        .rev()
                        .map(|i| slab + i * ffi::AMD_SIGNAL_SIZE as u64),
                );
            }
            s.free.pop().ok_or(ffi::ERROR_OUT_OF_RESOURCES)?
        };
        let mut record = [0u8; ffi::AMD_SIGNAL_SIZE];
        record[..8].copy_from_slice(&ffi::AMD_SIGNAL_KIND_USER.to_le_bytes());
        record[8..16].copy_from_slice(&initial.to_le_bytes());
        rt.mem.write(h, &record).map_err(|_| ffi::ERROR)?;
        s.live.insert(h);
        Ok(h)
    }

    pub fn destroy(&self, rt: &Runtime, h: u64) -> Result<(), Status> {
        let mut s = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        if !s.live.remove(&h) {
            return Err(ffi::ERROR_INVALID_SIGNAL);
        }
        drop_async_handlers(h);
        match s.adopted.remove(&h) {
            // another process's signal: its mapping goes (the signal lives on there)
            Some(mapping) => {
                let _ = rt.mem.free(mapping);
            }
            None if s.ipc.remove(&h) => {
                let _ = rt.mem.free(h);
            }
            None => s.free.push(h),
        }
        Ok(())
    }

    /// Makes `h`, a signal of another process mapped here at `mapping`, a live signal of this runtime.
    pub fn adopt(&self, h: u64, mapping: u64) {
        let mut s = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        s.live.insert(h);
        s.adopted.insert(h, mapping);
    }

    /// Whether `h` was made for IPC.
    pub fn is_ipc(&self, h: u64) -> bool {
        self.inner.lock().unwrap_or_else(|e| e.into_inner()).ipc.contains(&h)
    }

    pub fn is_live(&self, h: u64) -> bool {
        self.inner.lock().unwrap_or_else(|e| e.into_inner()).live.contains(&h)
    }
}

/// The value of a live signal, as an atomic in device memory.
pub fn value(rt: &Runtime, h: u64) -> Result<&AtomicI64, Status> {
    if !rt.signals.is_live(h) {
        return Err(ffi::ERROR_INVALID_SIGNAL);
    }
    // SAFETY: a live signal is a 64-byte-aligned record inside a live signal slab in device memory, which stays
    // mapped as long as the runtime (which `rt` borrows) lives; the value is an aligned i64 at offset 8.
    Ok(unsafe { AtomicI64::from_ptr((h + 8) as *mut i64) })
}

/// The record's `start_ts`/`end_ts` (dispatch and copy timestamps).
pub fn timestamps(rt: &Runtime, h: u64) -> Result<(&AtomicU64, &AtomicU64), Status> {
    value(rt, h)?;
    // SAFETY: as in `value`: aligned u64 fields of a live record.
    Ok(unsafe {
        (
            AtomicU64::from_ptr((h as usize + ffi::AMD_SIGNAL_START_TS) as *mut u64),
            AtomicU64::from_ptr((h as usize + ffi::AMD_SIGNAL_END_TS) as *mut u64),
        )
    })
}

/// The read-modify-write operations of the `hsa_signal_*` family.
#[derive(Clone, Copy)]
pub enum Rmw {
    Add,
    Sub,
    And,
    Or,
    Xor,
    Exchange,
}

pub fn rmw(rt: &Runtime, h: u64, op: Rmw, v: i64) -> Result<i64, Status> {
    let a = value(rt, h)?;
    let old = match op {
        Rmw::Add => a.fetch_add(v, Ordering::AcqRel),
        Rmw::Sub => a.fetch_sub(v, Ordering::AcqRel),
        Rmw::And => a.fetch_and(v, Ordering::AcqRel),
        Rmw::Or => a.fetch_or(v, Ordering::AcqRel),
        Rmw::Xor => a.fetch_xor(v, Ordering::AcqRel),
        Rmw::Exchange => a.swap(v, Ordering::AcqRel),
    };
    rt.notify();
    Ok(old)
}

pub fn store(rt: &Runtime, h: u64, v: i64) -> Result<(), Status> {
    value(rt, h)?.store(v, Ordering::Release);
    rt.notify();
    Ok(())
}

pub fn cas(rt: &Runtime, h: u64, expected: i64, v: i64) -> Result<i64, Status> {
    let old = match value(rt, h)?.compare_exchange(expected, v, Ordering::AcqRel, Ordering::Acquire) {
        Ok(o) | Err(o) => o,
    };
    rt.notify();
    Ok(old)
}

pub fn satisfied(condition: u32, value: i64, compare: i64) -> bool {
    match condition {
        ffi::CONDITION_EQ => value == compare,
        ffi::CONDITION_NE => value != compare,
        ffi::CONDITION_LT => value < compare,
        ffi::CONDITION_GTE => value >= compare,
        _ => true,
    }
}

/// Waits until `condition(value, compare)` holds or `timeout_ns` passes; returns the value then.
pub fn wait(rt: &Runtime, h: u64, condition: u32, compare: i64, timeout_ns: u64) -> Result<i64, Status> {
    if condition > ffi::CONDITION_GTE {
        return Err(ffi::ERROR_INVALID_ARGUMENT);
    }
    let a = value(rt, h)?;
    let hit = wait_until(rt, timeout_ns, || {
        let v = a.load(Ordering::Acquire);
        satisfied(condition, v, compare).then_some(v)
    });
    // on a timeout, the value as it stands
    Ok(hit.unwrap_or_else(|| a.load(Ordering::Acquire)))
}

/// `hsa_amd_signal_wait_any`: the index of the first signal whose condition holds (or `u32::MAX` on timeout),
/// and its value.
pub fn wait_any(
    rt: &Runtime,
    signals: &[u64],
    conditions: &[u32],
    compares: &[i64],
    timeout_ns: u64,
) -> Result<(u32, i64), Status> {
    if signals.is_empty() || conditions.iter().any(|&c| c > ffi::CONDITION_GTE) {
        return Err(ffi::ERROR_INVALID_ARGUMENT);
    }
    let values = signals.iter().map(|&h| value(rt, h)).collect::<Result<Vec<_>, _>>()?;
    let hit = wait_until(rt, timeout_ns, || {
        values.iter().enumerate().find_map(|(i, a)| {
            let v = a.load(Ordering::Acquire);
            satisfied(conditions[i], v, compares[i]).then_some((i as u32, v))
        })
    });
    Ok(hit.unwrap_or((u32::MAX, 0)))
}

/// Looks with `look` until it finds something or `timeout_ns` passes: for [`crate::runtime::SPIN`] without
/// pause, then sleeping in between (host changes wake it at once; changes made by kernels are seen within
/// [`POLL`]).
pub(crate) fn wait_until<T>(rt: &Runtime, timeout_ns: u64, mut look: impl FnMut() -> Option<T>) -> Option<T> {
    let deadline = Instant::now().checked_add(Duration::from_nanos(timeout_ns));
    if let Some(t) = crate::runtime::spin(crate::runtime::SPIN.min(Duration::from_nanos(timeout_ns)), &mut look) {
        return Some(t);
    }
    loop {
        // the change count is taken before looking, so no change in between is missed
        let seen = rt.changes();
        if let Some(t) = look() {
            return Some(t);
        }
        let left = match deadline {
            Some(d) => d.checked_duration_since(Instant::now()).filter(|l| !l.is_zero())?,
            None => POLL,
        };
        rt.wait_since(seen, left.min(POLL));
    }
}

/// A handler registered with `hsa_amd_signal_async_handler`.
pub struct AsyncHandler {
    pub signal: u64,
    pub condition: u32,
    pub value: i64,
    pub handler: extern "C" fn(i64, *mut std::ffi::c_void) -> bool,
    pub arg: usize,
}

/// The registered handlers, each with the number it was registered under. Other threads register handlers
/// and drop those of a destroyed signal while the handler thread calls them, so the thread names handlers by
/// that number, never by their position. Lock order: the signal table (`Signals::inner`), then this.
static HANDLERS: Mutex<Handlers> = Mutex::new(Handlers {
    next: 0,
    list: Vec::new(),
});
static HANDLER_THREAD: std::sync::Once = std::sync::Once::new();

struct Handlers {
    next: u64,
    list: Vec<(u64, AsyncHandler)>,
}

fn handlers() -> std::sync::MutexGuard<'static, Handlers> {
    HANDLERS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Forgets every handler (at `hsa_shut_down`: their signals are gone).
pub fn clear_async_handlers() {
    handlers().list.clear();
}

/// Forgets the handlers of signal `h` (it is being destroyed; the handle will be handed out again).
fn drop_async_handlers(h: u64) {
    handlers().list.retain(|(_, a)| a.signal != h);
}

/// Registers `h`; one thread calls every handler whose condition holds (and drops those that return false).
pub fn add_async_handler(h: AsyncHandler) {
    {
        let mut hs = handlers();
        let id = hs.next;
        hs.next += 1;
        hs.list.push((id, h));
    }
    HANDLER_THREAD.call_once(|| {
        let _ = std::thread::Builder::new()
            .name("wavejit-signals".into())
            .spawn(|| loop {
                let Ok(rt) = crate::runtime::rt() else {
                    std::thread::sleep(Duration::from_millis(5));
                    continue;
                };
                let seen = rt.changes();
                // the conditions are read without the handler lock held: reading a signal takes the signal
                // table's lock, which `Signals::destroy` holds while it drops handlers (the other order)
                let watched: Vec<(u64, u64, u32, i64)> = handlers()
                    .list
                    .iter()
                    .map(|(id, h)| (*id, h.signal, h.condition, h.value))
                    .collect();
                let ready: Vec<(u64, i64)> = watched
                    .into_iter()
                    .filter_map(|(id, signal, condition, want)| {
                        value(&rt, signal)
                            .ok()
                            .map(|a| (id, a.load(Ordering::Acquire)))
                            .filter(|(_, v)| satisfied(condition, *v, want))
                    })
                    .collect();
                if ready.is_empty() {
                    rt.wait_since(seen, POLL);
                    continue;
                }
                // call outside the lock (a handler may register another); a handler dropped meanwhile (its signal
                // destroyed) is not called; remove those that asked to stop
                for (id, v) in ready {
                    let Some((f, arg)) = handlers()
                        .list
                        .iter()
                        .find(|(i, _)| *i == id)
                        .map(|(_, h)| (h.handler, h.arg))
                    else {
                        continue;
                    };
                    let again = std::panic::catch_unwind(|| f(v, arg as *mut std::ffi::c_void)).unwrap_or(false);
                    if !again {
                        handlers().list.retain(|(i, _)| *i != id);
                    }
                }
            });
    });
}

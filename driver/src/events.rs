//! KFD events: what the runtime sleeps on, and what the GPU wakes it with.
//!
//! Signal events have a slot in the event page, a 32 KiB buffer object the program allocates and hands over with
//! its first `CREATE_EVENT` (4096 slots of 8 bytes, all ones while nothing is pending). The GPU signals one the
//! way the hardware does: it stores the event id into the slot (the mailbox a signal points at) and raises an
//! interrupt ([`Events::interrupt`]), after which the driver resets the slot and sets the event. Memory events
//! carry a GPU memory fault's data ([`Events::memory_fault`]) to every waiter, which is how the runtime learns of
//! one. A waiter ([`Events::wait`]) sleeps on a condition variable, not holding any lock the GPU needs.
//!
//! Setting an event works as Linux's `set_event`: it wakes every waiter asleep on it, and an auto-reset event
//! that woke someone is taken by them all at once; set with nobody asleep on it, it stays set until the next wait
//! takes it. ROCr depends on every waiter waking: destroying a queue, it sets the queue's inactive signal and then
//! waits on that signal's event itself, while its event thread, asleep on the same event, must wake to answer.

use std::collections::HashMap;
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::args::{self, Args, Errno};

/// Event types (`KFD_IOC_EVENT_*`).
pub const SIGNAL: u32 = 0;
pub const HW_EXCEPTION: u32 = 3;
pub const DEBUG_EVENT: u32 = 5;
pub const MEMORY: u32 = 8;

/// Slots of the event page.
pub const SLOTS: u32 = 4096;
/// A slot with nothing pending.
const UNSIGNALED: u64 = u64::MAX;
/// The first id of events without a slot (as Linux numbers them).
const FIRST_NONSIGNAL_ID: u32 = 0x8000_0000;
/// `event_page_offset` of an event with a slot: non-zero, as the kernel's mmap token is.
const EVENTS_TOKEN: u64 = 2 << 62;

#[derive(Debug)]
struct Event {
    kind: u32,
    auto_reset: bool,
    /// Set while nobody was asleep on it: the next wait takes it (an auto-reset event then clears).
    signaled: bool,
    /// How often it was set: a waiter asleep on it since an earlier count has been woken.
    sets: u64,
    /// Waits asleep on it.
    waiters: u32,
    /// Tells it from an event made later with the same id.
    serial: u64,
    /// A memory event's fault data (`kfd_hsa_memory_exception_data`, 32 bytes) once a fault happened.
    fault: Option<[u8; 32]>,
}

/// The event page: where its slots are in the driver's view.
struct Page {
    slots: *mut u64,
}

#[derive(Default)]
struct State {
    events: HashMap<u32, Event>,
    page: Option<Page>,
    next_nonsignal: u32,
    /// Events made so far (their serials).
    made: u64,
    /// Bumped at every change: waiters look again.
    changes: u64,
}

// SAFETY: the page pointer is into the driver's view of a buffer object the event table keeps (the page is never
// freed while the driver lives); slot accesses are atomic.
unsafe impl Send for State {}

/// The events of the process.
#[derive(Default)]
pub struct Events {
    state: Mutex<State>,
    changed: Condvar,
}

impl State {
    fn slot(&self, id: u32) -> Option<&std::sync::atomic::AtomicU64> {
        let page = self.page.as_ref()?;
        // SAFETY: ids with slots are below SLOTS; the page holds SLOTS aligned u64s in the driver's view.
        (id < SLOTS).then(|| unsafe { std::sync::atomic::AtomicU64::from_ptr(page.slots.add(id as usize)) })
    }

    /// Sets event `id`: every waiter asleep on it wakes; an auto-reset event stays set only when none was.
    fn set(&mut self, id: u32) {
        if let Some(e) = self.events.get_mut(&id) {
            e.sets += 1;
            e.signaled = !e.auto_reset || e.waiters == 0;
            self.changes += 1;
        }
    }
}

/// One event of a wait.
struct Waiting {
    serial: u64,
    /// The event's count of sets when the wait began.
    sets: u64,
    /// Asleep on it (it was not set when the wait began).
    asleep: bool,
    woken: bool,
}

impl Events {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// `CREATE_EVENT`. `page` is the driver's pointer to the buffer object whose handle the program passes in
    /// `event_page_offset`, when it does.
    pub fn create(&self, a: &mut Args, page: Option<*mut u64>) -> Result<(), Errno> {
        let kind = a.u32(12);
        let auto_reset = a.u32(16) != 0;
        let mut st = self.lock();
        if let Some(p) = page {
            if st.page.is_some() {
                return Err(libc::EINVAL);
            }
            for i in 0..SLOTS as usize {
                // SAFETY: the page is SLOTS u64s long (checked by the caller).
                unsafe { p.add(i).write_volatile(UNSIGNALED) };
            }
            st.page = Some(Page { slots: p });
        }
        let with_slot = kind == SIGNAL || kind == DEBUG_EVENT;
        let id = if with_slot {
            if st.page.is_none() {
                return Err(libc::EINVAL);
            }
            (1..SLOTS).find(|i| !st.events.contains_key(i)).ok_or(libc::ENOMEM)?
        } else {
            let id = FIRST_NONSIGNAL_ID + st.next_nonsignal;
            st.next_nonsignal += 1;
            id
        };
        if let Some(s) = st.slot(id).filter(|_| with_slot) {
            s.store(UNSIGNALED, std::sync::atomic::Ordering::Release);
        }
        st.made += 1;
        let serial = st.made;
        st.events.insert(
            id,
            Event {
                kind,
                auto_reset,
                signaled: false,
                sets: 0,
                waiters: 0,
                serial,
                fault: None,
            },
        );
        a.set_u64(0, if with_slot { EVENTS_TOKEN } else { 0 });
        a.set_u32(8, id); // event_trigger_data
        a.set_u32(24, id);
        a.set_u32(28, if with_slot { id } else { 0 });
        Ok(())
    }

    /// `DESTROY_EVENT`: waiters on it return.
    pub fn destroy(&self, id: u32) -> Result<(), Errno> {
        let mut st = self.lock();
        st.events.remove(&id).ok_or(libc::EINVAL)?;
        st.changes += 1;
        drop(st);
        self.changed.notify_all();
        Ok(())
    }

    /// `SET_EVENT` (signal events only).
    pub fn set(&self, id: u32) -> Result<(), Errno> {
        let mut st = self.lock();
        match st.events.get(&id) {
            Some(e) if e.kind == SIGNAL || e.kind == DEBUG_EVENT => st.set(id),
            _ => return Err(libc::EINVAL),
        }
        drop(st);
        self.changed.notify_all();
        Ok(())
    }

    /// `RESET_EVENT`.
    pub fn reset(&self, id: u32) -> Result<(), Errno> {
        let mut st = self.lock();
        st.events.get_mut(&id).ok_or(libc::EINVAL)?.signaled = false;
        Ok(())
    }

    /// An interrupt from the GPU for `event_id`, after it wrote the id into the event's slot: the slot is reset and
    /// the event set. With an id that names no slot (0, as PM4's RELEASE_MEM gives on gfx9), every slot holding
    /// something is.
    pub fn interrupt(&self, event_id: u32) {
        let mut st = self.lock();
        let mut ids = Vec::new();
        match st.slot(event_id).filter(|_| event_id != 0) {
            Some(s) => {
                if s.swap(UNSIGNALED, std::sync::atomic::Ordering::AcqRel) != UNSIGNALED {
                    ids.push(event_id);
                }
            }
            None => {
                for id in 1..SLOTS {
                    if let Some(s) = st.slot(id) {
                        if s.load(std::sync::atomic::Ordering::Acquire) != UNSIGNALED {
                            s.store(UNSIGNALED, std::sync::atomic::Ordering::Release);
                            ids.push(id);
                        }
                    }
                }
            }
        }
        // an interrupt without a written slot still wakes the waiters, who look at memory again
        for id in ids {
            st.set(id);
        }
        st.changes += 1;
        drop(st);
        self.changed.notify_all();
    }

    /// A GPU memory fault at `address` on GPU `gpu_id`: every memory event is set and carries its data
    /// (`kfd_hsa_memory_exception_data`: page not present, the page's address, the GPU).
    pub fn memory_fault(&self, gpu_id: u32, address: u64) {
        let mut data = [0u8; 32];
        data[0..4].copy_from_slice(&1u32.to_le_bytes()); // NotPresent
        data[16..24].copy_from_slice(&(address & !0xfff).to_le_bytes());
        data[24..28].copy_from_slice(&gpu_id.to_le_bytes());
        let mut st = self.lock();
        let ids: Vec<u32> = st
            .events
            .iter()
            .filter(|(_, e)| e.kind == MEMORY)
            .map(|(i, _)| *i)
            .collect();
        for id in ids {
            if let Some(e) = st.events.get_mut(&id) {
                e.fault = Some(data);
            }
            st.set(id);
        }
        st.changes += 1;
        drop(st);
        self.changed.notify_all();
    }

    /// A GPU error that is not a memory fault, on a queue without an error signal of its own: every
    /// hardware-exception event is set and carries the GPU (`kfd_hsa_hw_exception_data`: reset type, cause,
    /// memory lost, gpu_id @12).
    pub fn hw_exception(&self, gpu_id: u32) {
        let mut data = [0u8; 32];
        data[12..16].copy_from_slice(&gpu_id.to_le_bytes());
        let mut st = self.lock();
        let ids: Vec<u32> = st
            .events
            .iter()
            .filter(|(_, e)| e.kind == HW_EXCEPTION)
            .map(|(i, _)| *i)
            .collect();
        for id in ids {
            if let Some(e) = st.events.get_mut(&id) {
                e.fault = Some(data);
            }
            st.set(id);
        }
        st.changes += 1;
        drop(st);
        self.changed.notify_all();
    }

    /// Wakes every waiter to look at memory again (the GPU made progress).
    pub fn nudge(&self) {
        self.lock().changes += 1;
        self.changed.notify_all();
    }

    /// `WAIT_EVENTS`: `events_ptr` points at `n` `kfd_event_data` (48 bytes: data, ext, event id @40); waits
    /// until any (or all) are set, or `timeout_ms` passes (0: look once; 0xffffffff: forever). Returns the wait
    /// result (0 complete, 1 timeout, 2 an event was destroyed), having written the fault data of the memory
    /// events that woke it.
    ///
    /// An event set when the wait begins wakes it at once and, auto-reset, is taken; the wait sleeps on the others
    /// until they are set.
    pub fn wait(&self, events_ptr: u64, n: u32, all: bool, timeout_ms: u32) -> Result<u32, Errno> {
        const DATA: usize = 48;
        if n == 0 || n > 4096 {
            return Err(libc::EINVAL);
        }
        let mut data = vec![0u8; n as usize * DATA];
        args::read_user(events_ptr, &mut data)?;
        let ids: Vec<u32> = (0..n as usize)
            .map(|i| u32::from_le_bytes(data[i * DATA + 40..i * DATA + 44].try_into().expect("4 bytes")))
            .collect();
        let deadline = (timeout_ms != u32::MAX).then(|| Instant::now() + Duration::from_millis(timeout_ms as u64));
        let mut st = self.lock();
        if ids.iter().any(|id| !st.events.contains_key(id)) {
            return Err(libc::EINVAL);
        }
        let mut waits: Vec<Waiting> = ids
            .iter()
            .map(|id| {
                let e = st.events.get_mut(id).expect("checked above");
                let woken = e.signaled;
                if woken {
                    e.signaled = !e.auto_reset;
                } else {
                    e.waiters += 1;
                }
                Waiting {
                    serial: e.serial,
                    sets: e.sets,
                    asleep: !woken,
                    woken,
                }
            })
            .collect();
        let result = loop {
            let mut gone = false;
            for (w, id) in waits.iter_mut().zip(&ids) {
                match st.events.get(id).filter(|e| e.serial == w.serial) {
                    Some(e) => w.woken |= e.sets != w.sets,
                    None => gone = true,
                }
            }
            if gone {
                break 2;
            }
            let done = if all {
                waits.iter().all(|w| w.woken)
            } else {
                waits.iter().any(|w| w.woken)
            };
            if done {
                for (i, (w, id)) in waits.iter().zip(&ids).enumerate() {
                    if let Some(f) = st.events.get(id).filter(|_| w.woken).and_then(|e| e.fault) {
                        data[i * DATA..i * DATA + 32].copy_from_slice(&f);
                    }
                }
                break 0;
            }
            let left = match deadline {
                Some(d) => match d.checked_duration_since(Instant::now()) {
                    Some(l) if !l.is_zero() => l,
                    _ => break 1,
                },
                None => Duration::from_secs(3600),
            };
            st = self.changed.wait_timeout(st, left).unwrap_or_else(|e| e.into_inner()).0;
        };
        // the wait sleeps on its events no more
        for (w, id) in waits.iter().zip(&ids).filter(|(w, _)| w.asleep) {
            if let Some(e) = st.events.get_mut(id).filter(|e| e.serial == w.serial) {
                e.waiters -= 1;
            }
        }
        drop(st);
        if result == 0 {
            args::write_user(events_ptr, &data)?;
        }
        Ok(result)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn create(ev: &Events, kind: u32, auto_reset: bool, page: Option<*mut u64>) -> (u32, u32, u64) {
        let buf = [0u8; 32];
        let mut a = Args::copy_in(buf.as_ptr() as u64, 0xc020_4b08, 32).unwrap();
        a.set_u32(12, kind);
        a.set_u32(16, auto_reset as u32);
        ev.create(&mut a, page).unwrap();
        (a.u32(24), a.u32(28), a.u64(0))
    }

    fn wait_data(ids: &[u32]) -> Vec<u8> {
        let mut d = vec![0u8; ids.len() * 48];
        for (i, id) in ids.iter().enumerate() {
            d[i * 48 + 40..i * 48 + 44].copy_from_slice(&id.to_le_bytes());
        }
        d
    }

    #[test]
    fn signal_events_get_slots_in_the_page_and_an_interrupt_sets_them() {
        let ev = Events::default();
        let mut page = vec![0u64; SLOTS as usize];
        let (mem, slot, token) = create(&ev, MEMORY, false, Some(page.as_mut_ptr()));
        assert!(mem >= FIRST_NONSIGNAL_ID && slot == 0 && token == 0);
        assert!(page.iter().all(|s| *s == UNSIGNALED));
        let (sig, slot, token) = create(&ev, SIGNAL, true, None);
        assert_eq!((sig, slot), (1, 1));
        assert_ne!(token, 0);
        // nothing pending: a poll times out
        let mut d = wait_data(&[sig]);
        assert_eq!(ev.wait(d.as_mut_ptr() as u64, 1, false, 0).unwrap(), 1);
        // the GPU writes the id into the slot and interrupts
        page[sig as usize] = sig as u64;
        ev.interrupt(sig);
        assert_eq!(page[sig as usize], UNSIGNALED, "the slot is reset");
        assert_eq!(ev.wait(d.as_mut_ptr() as u64, 1, false, 0).unwrap(), 0);
        // auto-reset: consumed
        assert_eq!(ev.wait(d.as_mut_ptr() as u64, 1, false, 0).unwrap(), 1);
        // an interrupt with id 0 scans the slots
        page[sig as usize] = 7;
        ev.interrupt(0);
        assert_eq!(ev.wait(d.as_mut_ptr() as u64, 1, false, 0).unwrap(), 0);
    }

    /// Waits on `ids` on another thread (the result, or the timeout's 1, within `timeout_ms`).
    fn wait_on(ev: &std::sync::Arc<Events>, ids: &[u32], timeout_ms: u32) -> std::thread::JoinHandle<u32> {
        let (ev, ids) = (ev.clone(), ids.to_vec());
        std::thread::spawn(move || {
            let mut d = wait_data(&ids);
            ev.wait(d.as_mut_ptr() as u64, ids.len() as u32, false, timeout_ms)
                .unwrap()
        })
    }

    /// Until `n` waits are asleep on event `id`.
    fn until_asleep(ev: &Events, id: u32, n: u32) {
        let start = std::time::Instant::now();
        while ev.lock().events[&id].waiters != n {
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "{n} waiters never slept on event {id}"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    #[test]
    fn one_set_wakes_every_waiter_asleep_on_an_auto_reset_event_and_is_taken_by_them() {
        let ev = std::sync::Arc::new(Events::default());
        let mut page = vec![0u64; SLOTS as usize];
        create(&ev, MEMORY, false, Some(page.as_mut_ptr()));
        let (sig, _, _) = create(&ev, SIGNAL, true, None);
        let (other, _, _) = create(&ev, SIGNAL, true, None);
        let first = wait_on(&ev, &[sig], 10_000);
        let second = wait_on(&ev, &[other, sig], 10_000);
        until_asleep(&ev, sig, 2);
        ev.set(sig).unwrap();
        assert_eq!(first.join().unwrap(), 0, "the first waiter woke");
        assert_eq!(second.join().unwrap(), 0, "the second waiter woke too");
        let mut d = wait_data(&[sig]);
        assert_eq!(
            ev.wait(d.as_mut_ptr() as u64, 1, false, 0).unwrap(),
            1,
            "the waiters took the set"
        );
        assert_eq!(ev.lock().events[&sig].waiters, 0, "nobody is asleep on it any more");
    }

    #[test]
    fn a_thread_that_sets_an_event_and_then_waits_on_it_leaves_the_set_to_the_waiter_asleep_on_it() {
        // ROCr destroying a queue: it sets the queue's inactive signal, whose event its event thread sleeps on,
        // and then waits on that event itself until the event thread has answered
        let ev = std::sync::Arc::new(Events::default());
        let mut page = vec![0u64; SLOTS as usize];
        create(&ev, MEMORY, false, Some(page.as_mut_ptr()));
        let (sig, _, _) = create(&ev, SIGNAL, true, None);
        let event_thread = wait_on(&ev, &[sig], 10_000);
        until_asleep(&ev, sig, 1);
        ev.set(sig).unwrap();
        let mut d = wait_data(&[sig]);
        assert_eq!(
            ev.wait(d.as_mut_ptr() as u64, 1, false, 50).unwrap(),
            1,
            "the setter's own wait does not take the set"
        );
        assert_eq!(event_thread.join().unwrap(), 0, "the waiter asleep on the event woke");
        // set with nobody asleep on it, it stays set for the next wait, which takes it
        ev.set(sig).unwrap();
        assert_eq!(ev.wait(d.as_mut_ptr() as u64, 1, false, 0).unwrap(), 0);
        assert_eq!(ev.wait(d.as_mut_ptr() as u64, 1, false, 0).unwrap(), 1);
    }

    #[test]
    fn a_sleeping_waiter_is_woken_by_set_event_and_a_fault_reaches_memory_events() {
        let ev = std::sync::Arc::new(Events::default());
        let mut page = vec![0u64; SLOTS as usize];
        let (mem, _, _) = create(&ev, MEMORY, false, Some(page.as_mut_ptr()));
        let (sig, _, _) = create(&ev, SIGNAL, false, None);
        let e2 = ev.clone();
        let waiter = std::thread::spawn(move || {
            let mut d = wait_data(&[sig, mem]);
            let r = e2.wait(d.as_mut_ptr() as u64, 2, false, u32::MAX - 1).unwrap();
            (r, d)
        });
        std::thread::sleep(Duration::from_millis(50));
        ev.set(sig).unwrap();
        let (r, _) = waiter.join().unwrap();
        assert_eq!(r, 0);
        ev.reset(sig).unwrap();
        ev.memory_fault(0xa001, 0x7f00_1234_5678);
        let mut d = wait_data(&[sig, mem]);
        assert_eq!(ev.wait(d.as_mut_ptr() as u64, 2, false, 1000).unwrap(), 0);
        let f = &d[48..80];
        assert_eq!(u32::from_le_bytes(f[0..4].try_into().unwrap()), 1, "not present");
        assert_eq!(u64::from_le_bytes(f[16..24].try_into().unwrap()), 0x7f00_1234_5000);
        assert_eq!(u32::from_le_bytes(f[24..28].try_into().unwrap()), 0xa001);
        assert!(
            d[..32].iter().all(|b| *b == 0),
            "the signal event carries no fault data"
        );
        assert!(ev.set(mem).is_err(), "SET_EVENT is for signal events");
        let mut d = wait_data(&[12345]);
        assert_eq!(ev.wait(d.as_mut_ptr() as u64, 1, false, 0), Err(libc::EINVAL));
    }
}

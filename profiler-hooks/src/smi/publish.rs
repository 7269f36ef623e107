//! The writer's side: a process's record, created once and then changed in place through a shared mapping.

use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Mutex, Once};

use memmap2::MmapMut;

use super::layout as l;
use super::{ensure_dir, io, monotonic_ns, process_start_ticks, SmiError};

/// The fixed description of one emulated device.
#[derive(Debug, Clone)]
pub struct DeviceInfo<'a> {
    pub preset: &'a str,
    pub gfx: &'a str,
    pub name: &'a str,
    pub compute_units: u32,
    pub vram_total: u64,
    pub engine_clock_mhz: u32,
    pub memory_clock_mhz: u32,
    pub pci_device_id: u32,
}

/// The pid of this process as of the last fork: a forked child must neither change nor remove its parent's
/// record, which it inherits mapped.
static CURRENT_PID: AtomicU32 = AtomicU32::new(0);
static AT_FORK: Once = Once::new();

extern "C" fn after_fork_in_child() {
    // SAFETY: getpid has no preconditions; it is async-signal-safe, as a fork handler needs.
    CURRENT_PID.store(unsafe { libc::getpid() } as u32, Ordering::Relaxed);
}

/// This process's published record. Every method is a few atomic operations on the mapped page; none makes a
/// system call except reading the clock (vDSO) when a device becomes busy or idle.
pub struct Publisher {
    _map: MmapMut,
    /// The mapped page (the mapping above stays alive as long as this).
    base: *mut u8,
    path: PathBuf,
    pid: u32,
    devices: usize,
    /// Dispatches running per device: the busy seqlock's only writer holds this.
    running: Vec<Mutex<u32>>,
}

// SAFETY: the page behind `base` is only ever accessed through atomics (or, while creating, before the value
// exists), and the mapping is owned by the publisher, so sharing it between threads is sound.
unsafe impl Send for Publisher {}
// SAFETY: as above.
unsafe impl Sync for Publisher {}

fn put_str(page: &mut [u8], at: usize, len: usize, s: &str) {
    // cut at a character boundary, leaving a NUL
    let mut n = s.len().min(len - 1);
    while !s.is_char_boundary(n) {
        n -= 1;
    }
    page[at..at + n].copy_from_slice(&s.as_bytes()[..n]);
}

impl Publisher {
    /// Publishes this process (named `program`) with `devices` in `dir` (see [`super::registry_dir`]).
    pub fn create(dir: &Path, program: &str, devices: &[DeviceInfo]) -> Result<Publisher, SmiError> {
        if devices.len() > l::MAX_DEVICES {
            return Err(SmiError::TooManyDevices {
                count: devices.len(),
                max: l::MAX_DEVICES,
            });
        }
        ensure_dir(dir)?;
        let pid = std::process::id();
        AT_FORK.call_once(|| {
            CURRENT_PID.store(pid, Ordering::Relaxed);
            // SAFETY: registers a plain function with no captured state; failure only means forks go unnoticed.
            unsafe { libc::pthread_atfork(None, None, Some(after_fork_in_child)) };
        });
        let tmp = dir.join(format!("{pid}.tmp"));
        let path = dir.join(format!("{pid}.smi"));
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&tmp)
            .map_err(io(&tmp))?;
        file.set_len(l::FILE_SIZE as u64).map_err(io(&tmp))?;
        // SAFETY: the file is ours, just made and sized; nobody truncates it while mapped (readers only read).
        let mut map = unsafe { MmapMut::map_mut(&file) }.map_err(io(&tmp))?;
        let page = &mut map[..];
        page[l::MAGIC_AT..l::MAGIC_AT + 8].copy_from_slice(&l::MAGIC);
        page[l::VERSION_AT..l::VERSION_AT + 4].copy_from_slice(&l::VERSION.to_le_bytes());
        page[l::DEVICE_COUNT_AT..l::DEVICE_COUNT_AT + 4].copy_from_slice(&(devices.len() as u32).to_le_bytes());
        page[l::PID_AT..l::PID_AT + 8].copy_from_slice(&(pid as u64).to_le_bytes());
        let ticks = process_start_ticks(pid).unwrap_or(0);
        page[l::START_TICKS_AT..l::START_TICKS_AT + 8].copy_from_slice(&ticks.to_le_bytes());
        page[l::STARTED_NS_AT..l::STARTED_NS_AT + 8].copy_from_slice(&monotonic_ns().to_le_bytes());
        put_str(page, l::NAME_AT, l::NAME_LEN, program);
        for (i, d) in devices.iter().enumerate() {
            let at = |f: usize| l::device(i, f);
            page[at(l::INDEX)..at(l::INDEX) + 4].copy_from_slice(&(i as u32).to_le_bytes());
            page[at(l::COMPUTE_UNITS)..at(l::COMPUTE_UNITS) + 4].copy_from_slice(&d.compute_units.to_le_bytes());
            put_str(page, at(l::PRESET), l::PRESET_LEN, d.preset);
            put_str(page, at(l::GFX), l::GFX_LEN, d.gfx);
            put_str(page, at(l::NAME), l::DEVICE_NAME_LEN, d.name);
            page[at(l::VRAM_TOTAL)..at(l::VRAM_TOTAL) + 8].copy_from_slice(&d.vram_total.to_le_bytes());
            page[at(l::ENGINE_CLOCK)..at(l::ENGINE_CLOCK) + 4].copy_from_slice(&d.engine_clock_mhz.to_le_bytes());
            page[at(l::MEMORY_CLOCK)..at(l::MEMORY_CLOCK) + 4].copy_from_slice(&d.memory_clock_mhz.to_le_bytes());
            page[at(l::PCI_DEVICE)..at(l::PCI_DEVICE) + 4].copy_from_slice(&d.pci_device_id.to_le_bytes());
        }
        // readers see the record only once it is complete
        std::fs::rename(&tmp, &path).map_err(io(&path))?;
        let base = map.as_mut_ptr();
        Ok(Publisher {
            _map: map,
            base,
            path,
            pid,
            devices: devices.len(),
            running: (0..devices.len()).map(|_| Mutex::new(0)).collect(),
        })
    }

    /// The record's file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The live counter at `field` of device `device`, if this process (not a forked child) owns the record.
    fn counter(&self, device: usize, field: usize) -> Option<&AtomicU64> {
        if device >= self.devices || CURRENT_PID.load(Ordering::Relaxed) != self.pid {
            return None;
        }
        // SAFETY: the offset lies inside the mapped page (checked layout, device < count) and is 8-byte
        // aligned; the page lives as long as `self`, and every access to it is atomic.
        Some(unsafe { AtomicU64::from_ptr(self.base.add(l::device(device, field)).cast::<u64>()) })
    }

    /// `bytes` more of device `device`'s memory are allocated.
    pub fn vram_allocated(&self, device: usize, bytes: u64) {
        if let Some(c) = self.counter(device, l::VRAM_USED) {
            c.fetch_add(bytes, Ordering::Relaxed);
        }
    }

    /// `bytes` of device `device`'s memory were freed.
    pub fn vram_freed(&self, device: usize, bytes: u64) {
        if let Some(c) = self.counter(device, l::VRAM_USED) {
            // never below zero, even if a free was seen without its allocation
            let _ = c.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |v| Some(v.saturating_sub(bytes)));
        }
    }

    /// A queue with a packet processor was created on device `device`.
    pub fn queue_created(&self, device: usize) {
        if let Some(c) = self.counter(device, l::QUEUES) {
            c.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Such a queue was destroyed.
    pub fn queue_destroyed(&self, device: usize) {
        if let Some(c) = self.counter(device, l::QUEUES) {
            let _ = c.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |v| Some(v.saturating_sub(1)));
        }
    }

    /// A dispatch starts on device `device`; it ends when the guard is dropped.
    pub fn dispatch(&self, device: usize) -> DispatchGuard<'_> {
        self.busy_change(device, true);
        DispatchGuard {
            publisher: self,
            device,
        }
    }

    fn busy_change(&self, device: usize, start: bool) {
        let (Some(seq), Some(busy), Some(since)) = (
            self.counter(device, l::BUSY_SEQ),
            self.counter(device, l::BUSY_NS),
            self.counter(device, l::BUSY_SINCE),
        ) else {
            return;
        };
        let mut running = self.running[device].lock().unwrap_or_else(|e| e.into_inner());
        let was = *running;
        *running = if start { was + 1 } else { was.saturating_sub(1) };
        let becomes_busy = start && was == 0;
        let becomes_idle = !start && was == 1;
        if becomes_busy || becomes_idle {
            // seqlock: odd while the pair changes; readers retry until they see the same even value twice
            seq.fetch_add(1, Ordering::AcqRel);
            let now = monotonic_ns();
            if becomes_busy {
                since.store(now, Ordering::Release);
            } else {
                let began = since.load(Ordering::Acquire);
                busy.fetch_add(now.saturating_sub(began), Ordering::Release);
                since.store(0, Ordering::Release);
            }
            seq.fetch_add(1, Ordering::AcqRel);
        }
        if !start {
            if let Some(d) = self.counter(device, l::DISPATCHES) {
                d.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// Removes the record now (the runtime shuts down); the counters keep working on the unlinked page.
    pub fn retire(&self) {
        if CURRENT_PID.load(Ordering::Relaxed) == self.pid {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

impl Drop for Publisher {
    fn drop(&mut self) {
        self.retire();
    }
}

/// A running dispatch (see [`Publisher::dispatch`]).
pub struct DispatchGuard<'a> {
    publisher: &'a Publisher,
    device: usize,
}

impl Drop for DispatchGuard<'_> {
    fn drop(&mut self) {
        self.publisher.busy_change(self.device, false);
    }
}

//! The reader's side: every live record of a registry directory, stale ones deleted.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use memmap2::Mmap;

use super::layout as l;
use super::{io, monotonic_ns, process_start_ticks, SmiError};

/// One process's record as read.
#[derive(Debug, Clone, PartialEq)]
pub struct ProcessRecord {
    pub pid: u32,
    /// Field 22 of `/proc/<pid>/stat`.
    pub start_ticks: u64,
    /// `CLOCK_MONOTONIC` ns when its runtime started.
    pub started_ns: u64,
    pub name: String,
    pub devices: Vec<DeviceRecord>,
    pub path: PathBuf,
}

/// One of its devices: the fixed description and the counters at the time of reading.
#[derive(Debug, Clone, PartialEq)]
pub struct DeviceRecord {
    pub index: u32,
    pub preset: String,
    pub gfx: String,
    pub name: String,
    pub compute_units: u32,
    pub vram_total: u64,
    pub engine_clock_mhz: u32,
    pub memory_clock_mhz: u32,
    pub pci_device_id: u32,
    pub vram_used: u64,
    pub dispatches: u64,
    /// Nanoseconds with a dispatch running, including a dispatch running now.
    pub busy_ns: u64,
    pub busy_now: bool,
    pub queues: u64,
}

fn u32_at(p: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(p[at..at + 4].try_into().expect("4 bytes"))
}

fn u64_at(p: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(p[at..at + 8].try_into().expect("8 bytes"))
}

fn str_at(p: &[u8], at: usize, len: usize) -> String {
    let b = &p[at..at + len];
    let end = b.iter().position(|&c| c == 0).unwrap_or(len);
    String::from_utf8_lossy(&b[..end]).into_owned()
}

/// Reads the live counter at `at` of a mapped record.
fn live(page: &[u8], at: usize) -> u64 {
    // SAFETY: `at` is an 8-byte-aligned offset inside the mapped page (page-aligned base); the writer changes
    // it only atomically, so an atomic load of it is sound; the mapping outlives the reference.
    unsafe { AtomicU64::from_ptr(page.as_ptr().add(at) as *mut u64) }.load(Ordering::Acquire)
}

/// Reads one record file; `None` if it is not a (complete, current-format) record.
fn read_record(path: &Path) -> Result<Option<ProcessRecord>, SmiError> {
    let file = std::fs::File::open(path).map_err(io(path))?;
    if file.metadata().map_err(io(path))?.len() < l::FILE_SIZE as u64 {
        return Ok(None);
    }
    // SAFETY: a read-only shared mapping of a registry file; its writer never truncates it.
    let map = unsafe { Mmap::map(&file) }.map_err(io(path))?;
    let p = &map[..l::FILE_SIZE];
    if p[l::MAGIC_AT..l::MAGIC_AT + 8] != l::MAGIC || u32_at(p, l::VERSION_AT) != l::VERSION {
        return Ok(None);
    }
    let count = (u32_at(p, l::DEVICE_COUNT_AT) as usize).min(l::MAX_DEVICES);
    let devices = (0..count)
        .map(|i| {
            let at = |f: usize| l::device(i, f);
            // the busy pair under its seqlock: retry while a change is under way
            let (busy_ns, since) = loop {
                let s0 = live(p, at(l::BUSY_SEQ));
                let (b, s) = (live(p, at(l::BUSY_NS)), live(p, at(l::BUSY_SINCE)));
                if s0.is_multiple_of(2) && live(p, at(l::BUSY_SEQ)) == s0 {
                    break (b, s);
                }
                std::hint::spin_loop();
            };
            let running = if since != 0 {
                monotonic_ns().saturating_sub(since)
            } else {
                0
            };
            DeviceRecord {
                index: u32_at(p, at(l::INDEX)),
                preset: str_at(p, at(l::PRESET), l::PRESET_LEN),
                gfx: str_at(p, at(l::GFX), l::GFX_LEN),
                name: str_at(p, at(l::NAME), l::DEVICE_NAME_LEN),
                compute_units: u32_at(p, at(l::COMPUTE_UNITS)),
                vram_total: u64_at(p, at(l::VRAM_TOTAL)),
                engine_clock_mhz: u32_at(p, at(l::ENGINE_CLOCK)),
                memory_clock_mhz: u32_at(p, at(l::MEMORY_CLOCK)),
                pci_device_id: u32_at(p, at(l::PCI_DEVICE)),
                vram_used: live(p, at(l::VRAM_USED)),
                dispatches: live(p, at(l::DISPATCHES)),
                busy_ns: busy_ns + running,
                busy_now: since != 0,
                queues: live(p, at(l::QUEUES)),
            }
        })
        .collect();
    Ok(Some(ProcessRecord {
        pid: u64_at(p, l::PID_AT) as u32,
        start_ticks: u64_at(p, l::START_TICKS_AT),
        started_ns: u64_at(p, l::STARTED_NS_AT),
        name: str_at(p, l::NAME_AT, l::NAME_LEN),
        devices,
        path: path.to_path_buf(),
    }))
}

/// Every live record in `dir`, by pid. Records of processes that are gone (no `/proc/<pid>`, or a process
/// with another start time: the pid was reused) are deleted, and so are leftovers of records never completed.
/// A missing directory holds no records.
pub fn scan(dir: &Path) -> Result<Vec<ProcessRecord>, SmiError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io(dir)(e)),
    };
    let mut found = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        let Some((pid, ext)) = name.to_str().and_then(|n| n.split_once('.')) else {
            continue;
        };
        let Ok(pid) = pid.parse::<u32>() else { continue };
        match ext {
            // a record being made, or left half made by a process that died
            "tmp" if process_start_ticks(pid).is_none() => {
                let _ = std::fs::remove_file(&path);
            }
            "smi" => {
                let record = match read_record(&path) {
                    Ok(r) => r,
                    // removed under our feet: its process just ended
                    Err(SmiError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => continue,
                    Err(e) => return Err(e),
                };
                let alive = record
                    .as_ref()
                    .is_some_and(|r| r.pid == pid && process_start_ticks(pid) == Some(r.start_ticks));
                match record {
                    Some(r) if alive => found.push(r),
                    _ => {
                        let _ = std::fs::remove_file(&path);
                    }
                }
            }
            _ => {}
        }
    }
    found.sort_by_key(|r| r.pid);
    Ok(found)
}

/// [`scan`] over every directory a reader looks in ([`super::reader_dirs`]), a process counted once.
pub fn scan_all() -> Result<Vec<ProcessRecord>, SmiError> {
    let mut all: Vec<ProcessRecord> = Vec::new();
    for dir in super::reader_dirs() {
        for r in scan(&dir)? {
            if !all.iter().any(|a| a.pid == r.pid) {
                all.push(r);
            }
        }
    }
    all.sort_by_key(|r| r.pid);
    Ok(all)
}

//! The SMI registry: what every process running on the runtime shim tells about its emulated GPUs, for
//! `wavejit smi` and for the sysfs view `rocm-smi` reads under `wavejit exec`.
//!
//! # Where
//! One directory per user: `$WAVEJIT_SMI_DIR` if set, else `$XDG_RUNTIME_DIR/wavejit` when `XDG_RUNTIME_DIR`
//! names a directory, else `/tmp/wavejit-$UID`; created with mode 0700 and used only while it belongs to the
//! user and nobody else may write it ([`registry_dir`], [`ensure_dir`]). Readers look at both default places.
//!
//! # What: one file per process, `<pid>.smi`, 4096 bytes, little-endian ([`layout`])
//! The shim creates it as `<pid>.tmp`, fills the header and the devices' fixed fields, and renames it, so a
//! reader never sees a half-made record. The shim keeps it mapped (`MAP_SHARED`) and changes the live fields
//! with single atomic operations — an allocation or a free is one `fetch_add` on a mapped page, a dispatch two
//! clock reads and a few stores — so publishing costs no system call after the file is made ([`Publisher`]).
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 8 | magic `WJSMI\0\0\0` |
//! | 8 | 4 | format version (1) |
//! | 12 | 4 | number of devices (at most 16) |
//! | 16 | 8 | pid |
//! | 24 | 8 | process start time: field 22 of `/proc/<pid>/stat` (clock ticks after boot), tells a reused pid |
//! | 32 | 8 | when the runtime started: `CLOCK_MONOTONIC` nanoseconds |
//! | 40 | 8 | reserved |
//! | 48 | 64 | program name (the base name of `argv[0]`), NUL-padded UTF-8 |
//! | 128 + 224·i | 224 | device i |
//!
//! Device i (offsets within its 224 bytes):
//!
//! | offset | size | field | changes |
//! |---|---|---|---|
//! | 0 | 4 | index: the process's GPU ordinal (HIP device number) | fixed |
//! | 4 | 4 | compute units | fixed |
//! | 8 | 16 | preset id (`mi210`), NUL-padded | fixed |
//! | 24 | 16 | gfx target (`gfx90a`) | fixed |
//! | 40 | 48 | marketing name (`AMD Instinct MI210`) | fixed |
//! | 88 | 8 | VRAM total, bytes | fixed |
//! | 96 | 4 | engine clock, MHz (the preset's) | fixed |
//! | 100 | 4 | memory clock, MHz ([`product`]) | fixed |
//! | 104 | 4 | PCI device id ([`product`]) | fixed |
//! | 112 | 8 | VRAM used: bytes of live allocations from the device's memory pool | atomic add/sub |
//! | 120 | 8 | dispatches completed | atomic add |
//! | 128 | 8 | busy sequence: odd while the next two change (a seqlock) | by one writer |
//! | 136 | 8 | busy time: nanoseconds with at least one dispatch running, up to the last idle moment | |
//! | 144 | 8 | busy since: `CLOCK_MONOTONIC` ns the device became busy, 0 while idle | |
//! | 152 | 8 | live AQL queues (with a packet processor) on the device | atomic add/sub |
//!
//! Busy time counts wall time during which at least one kernel dispatch of the process was running on the
//! device (overlapping dispatches of several queues count once): a reader adds `now - busy since` while the
//! device is busy.
//!
//! # Cleaning
//! The shim removes its file when the runtime shuts down and at process exit (`atexit`). A process that dies
//! (SIGKILL) leaves its file: readers ([`scan`]) check that `/proc/<pid>` exists and has the recorded start
//! time, and delete records of processes that are gone.
//!
//! # Machine-wide cards
//! Each process emulates GPUs of its own; the SMI views treat device index N of preset P as one card of the
//! machine, as several processes share one real GPU ([`cards`]): its memory use and busy time add up over the
//! processes that use it. Its number follows from (N, P) alone ([`card_number`]).

mod cards;
pub mod layout;
mod publish;
mod read;

use std::path::{Path, PathBuf};

pub use cards::{card_number, cards, Card, CardUser, Identity, Sample};
pub use publish::{DeviceInfo, Publisher};
pub use read::{scan, scan_all, DeviceRecord, ProcessRecord};

/// Errors of the SMI registry, with the path involved.
#[derive(Debug, thiserror::Error)]
pub enum SmiError {
    #[error("SMI registry {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("SMI registry directory {path} is not private to this user ({why}); not using it")]
    NotPrivate { path: PathBuf, why: String },
    #[error("SMI registry: {count} emulated devices, the record holds at most {max}")]
    TooManyDevices { count: usize, max: usize },
}

pub(crate) fn io(path: &Path) -> impl FnOnce(std::io::Error) -> SmiError + '_ {
    move |source| SmiError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn uid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// The fallback directory, `/tmp/wavejit-$UID` (used when `XDG_RUNTIME_DIR` is not set).
fn tmp_dir() -> PathBuf {
    PathBuf::from(format!("/tmp/wavejit-{}", uid()))
}

/// The directory of this user's registry: `$WAVEJIT_SMI_DIR`, `$XDG_RUNTIME_DIR/wavejit`, or
/// `/tmp/wavejit-$UID`.
pub fn registry_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("WAVEJIT_SMI_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(d);
    }
    match std::env::var_os("XDG_RUNTIME_DIR")
        .map(PathBuf::from)
        .filter(|d| d.is_absolute() && d.is_dir())
    {
        Some(d) => d.join("wavejit"),
        None => tmp_dir(),
    }
}

/// Every directory a reader looks in: [`registry_dir`], and the `/tmp` fallback as well unless
/// `WAVEJIT_SMI_DIR` chose one (a program started without `XDG_RUNTIME_DIR` publishes there).
pub fn reader_dirs() -> Vec<PathBuf> {
    let main = registry_dir();
    let mut dirs = vec![main.clone()];
    if std::env::var_os("WAVEJIT_SMI_DIR").is_none_or(|d| d.is_empty()) && main != tmp_dir() {
        dirs.push(tmp_dir());
    }
    dirs
}

/// Creates `dir` (mode 0700) if missing and checks that it is a directory of this user that nobody else can
/// write (another user could otherwise plant or read records).
pub fn ensure_dir(dir: &Path) -> Result<(), SmiError> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt};
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(io(dir)(e)),
    }
    let meta = std::fs::symlink_metadata(dir).map_err(io(dir))?;
    let why = if !meta.is_dir() {
        Some("not a directory".to_string())
    } else if meta.uid() != uid() {
        Some(format!("owned by uid {}", meta.uid()))
    } else if meta.mode() & 0o022 != 0 {
        Some(format!("mode {:o}", meta.mode() & 0o777))
    } else {
        None
    };
    match why {
        Some(why) => Err(SmiError::NotPrivate {
            path: dir.to_path_buf(),
            why,
        }),
        None => Ok(()),
    }
}

/// `CLOCK_MONOTONIC` in nanoseconds: one clock for every process of the machine.
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid timespec to write; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Field 22 of `/proc/<pid>/stat`: when the process started, in clock ticks after boot (with the pid, it names
/// one process: pids are reused, start times are not).
pub fn process_start_ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // the command name (field 2) is in parentheses and may hold spaces and parentheses: fields 3.. follow the last ')'
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_ascii_whitespace().nth(19)?.parse().ok()
}

#[cfg(test)]
mod tests;

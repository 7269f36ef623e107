//! Shared virtual memory: `AMDKFD_IOC_SVM` (KFD 1.5 and later), what HIP's managed memory (`hipMallocManaged`,
//! `hipMemAdvise`, `hipMemPrefetchAsync`, `hipMemRangeGetAttribute`) and ROCr's `hsa_amd_svm_*` come down to.
//!
//! The program's own pages, wherever they are mapped, get attributes by page range ([`Ranges`]): a preferred and
//! a prefetch location, which GPUs may access them (ACCESS, ACCESS_IN_PLACE, NO_ACCESS), flags (host access,
//! coherent, GPU read-only, read-mostly, …) and a migration granularity. SET_ATTR gives the pages of its range
//! that had no attributes the defaults first and then the changes, in the order given, as the kernel's
//! `svm_range_add` does; neighbours left with equal attributes merge again, which no answer can tell. GET_ATTR
//! answers by the kernel's rules (`svm_range_get_attr`) over the ranges that meet the asked range, pages without
//! attributes not counted: a location all of them share or UNDEFINED, the flags set in all of them (SET_FLAGS)
//! and clear in all of them (CLR_FLAGS), the smallest granularity, and per GPU asked ACCESS where all of them
//! give it, ACCESS_IN_PLACE where all of them give that, NO_ACCESS otherwise; with no range at all, the defaults.
//! Both refuse a range that is not all mapped in the process (EFAULT) or holds memory already mapped to the GPUs
//! — a buffer object, the emulator's own arena — (EADDRINUSE), and `ALLOC_MEMORY_OF_GPU` refuses a range that has
//! SVM attributes (EADDRINUSE), as the kernel does.
//!
//! What the attributes change is reachability: pages some GPU may access (ACCESS or ACCESS_IN_PLACE) are entered
//! into the GPUs' address space at the program's address, reaching the program's own bytes as userptr memory does
//! ([`crate::memory`]), fine-grained while they are COHERENT (what float atomics there do depends on the device,
//! as for coherent buffer objects); they leave it when every GPU's access is taken away. XNACK is off
//! (SET_XNACK_MODE refuses it), so, as on such a GPU, no page is reachable before access is given, and an access
//! anywhere else stays a GPU memory fault.
//!
//! Not modeled: migration. All memory is the host's, and the emulated GPUs reach it in place, so PREFETCH_LOC and
//! PREFERRED_LOC are recorded and answered but move no data. GPU_RO and GPU_EXEC are recorded, not enforced. The
//! page tables are one for all GPUs (as for buffer objects): a range one GPU may access is reachable by the others
//! too.
//!
//! A program frees managed memory with `munmap` (HIP does), which the kernel hears of through an MMU notifier and
//! this driver does not. So before every SVM ioctl it checks that the pages of every range are still mapped (one
//! `msync` a range), and before every kernel dispatch and SDMA batch that the pages reachable by the GPUs are;
//! the pages that are not lose their attributes and their place in the GPUs' address space, so a kernel touching
//! freed managed memory faults instead of reaching host memory that is gone. Memory unmapped and mapped again at
//! the same address between two checks keeps the attributes it had (the kernel would have dropped them); memory
//! unmapped while a kernel runs on it is the program's race, as on a GPU, but ends the process here.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

use crate::args::{Args, Errno};
use crate::Driver;

const PAGE: u64 = 4096;

/// Operations (`kfd_ioctl_svm_op`).
const OP_SET_ATTR: u32 = 0;
const OP_GET_ATTR: u32 = 1;

/// Attribute types (`kfd_ioctl_svm_attr_type`).
pub mod attr {
    pub const PREFERRED_LOC: u32 = 0;
    pub const PREFETCH_LOC: u32 = 1;
    pub const ACCESS: u32 = 2;
    pub const ACCESS_IN_PLACE: u32 = 3;
    pub const NO_ACCESS: u32 = 4;
    pub const SET_FLAGS: u32 = 5;
    pub const CLR_FLAGS: u32 = 6;
    pub const GRANULARITY: u32 = 7;
}

/// Range flags (`KFD_IOCTL_SVM_FLAG_*`).
pub mod flag {
    pub const HOST_ACCESS: u32 = 1 << 0;
    pub const COHERENT: u32 = 1 << 1;
    pub const HIVE_LOCAL: u32 = 1 << 2;
    pub const GPU_RO: u32 = 1 << 3;
    pub const GPU_EXEC: u32 = 1 << 4;
    pub const GPU_READ_MOSTLY: u32 = 1 << 5;
}

/// Locations (`kfd_ioctl_svm_location`): system memory, or none; any other value is a GPU's id.
pub const SYSMEM: u32 = 0;
pub const UNDEFINED: u32 = 0xffff_ffff;

/// `kfd_ioctl_svm_args` up to its attributes: start_addr @0, size @8, op @16, nattr @20; then `nattr` pairs of
/// type and value (`kfd_ioctl_svm_attribute`), which the request's size covers (the thunk adds them to it).
const HEADER: usize = 24;

/// GPUs one access bitmap holds (the kernel's `MAX_GPU_INSTANCE`).
const MAX_GPUS: usize = 64;

/// The attributes of a page range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Attrs {
    /// A GPU's id, [`SYSMEM`] or [`UNDEFINED`].
    pub preferred: u32,
    pub prefetch: u32,
    /// The GPUs (a bit per place in `WAVEJIT_DEVICES`) given ACCESS, and those given ACCESS_IN_PLACE.
    pub access: u64,
    pub in_place: u64,
    /// [`flag`]s.
    pub flags: u32,
    /// Migration granularity: log2 of pages (a byte, as the kernel keeps it).
    pub granularity: u8,
}

impl Default for Attrs {
    /// A new range's (the kernel's `svm_range_set_default_attributes`, XNACK off): no locations, no GPU access,
    /// host access and coherent, 2 MiB granularity.
    fn default() -> Attrs {
        Attrs {
            preferred: UNDEFINED,
            prefetch: UNDEFINED,
            access: 0,
            in_place: 0,
            flags: flag::HOST_ACCESS | flag::COHERENT,
            granularity: 9,
        }
    }
}

/// One change SET_ATTR makes, checked (GPUs by place).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    Preferred(u32),
    Prefetch(u32),
    Access(usize),
    InPlace(usize),
    NoAccess(usize),
    SetFlags(u32),
    ClearFlags(u32),
    Granularity(u8),
}

impl Attrs {
    fn apply(&mut self, c: Change) {
        match c {
            Change::Preferred(v) => self.preferred = v,
            Change::Prefetch(v) => self.prefetch = v,
            Change::Access(g) => {
                self.access |= 1 << g;
                self.in_place &= !(1 << g);
            }
            Change::InPlace(g) => {
                self.access &= !(1 << g);
                self.in_place |= 1 << g;
            }
            Change::NoAccess(g) => {
                self.access &= !(1 << g);
                self.in_place &= !(1 << g);
            }
            Change::SetFlags(f) => self.flags |= f,
            Change::ClearFlags(f) => self.flags &= !f,
            Change::Granularity(g) => self.granularity = g,
        }
    }

    /// Whether some GPU may access the pages.
    fn reachable(&self) -> bool {
        self.access | self.in_place != 0
    }
}

/// What GET_ATTR answers for an address range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Summary {
    pub preferred: u32,
    pub prefetch: u32,
    /// GPUs every range gives ACCESS, and ACCESS_IN_PLACE.
    pub access: u64,
    pub in_place: u64,
    /// The flags of all ranges ANDed, and ORed.
    pub flags_and: u32,
    pub flags_or: u32,
    pub granularity: u8,
}

/// A run of pages the GPUs may reach: `[start, end)`, and whether it is fine-grained (COHERENT).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub start: u64,
    pub end: u64,
    pub fine: bool,
}

/// The attribute map: page-aligned, disjoint ranges by start, each with its end and attributes; no two adjacent
/// ranges have equal attributes.
#[derive(Debug, Default)]
pub struct Ranges {
    map: BTreeMap<u64, (u64, Attrs)>,
}

impl Ranges {
    /// Splits the range holding `at` (if any) so that one starts at `at`.
    fn split(&mut self, at: u64) {
        if let Some((&s, &(e, a))) = self.map.range(..at).next_back() {
            if e > at {
                self.map.insert(s, (at, a));
                self.map.insert(at, (e, a));
            }
        }
    }

    /// Merges adjacent ranges with equal attributes, from the range before `start` to the one at `end`.
    fn merge(&mut self, start: u64, end: u64) {
        let first = self.map.range(..start).next_back().map_or(start, |(&s, _)| s);
        let starts: Vec<u64> = self.map.range(first..=end).map(|(&s, _)| s).collect();
        let mut kept: Option<u64> = None;
        for s in starts {
            let (e, a) = self.map[&s];
            if let Some(k) = kept {
                let (ke, ka) = self.map[&k];
                if ke == s && ka == a {
                    self.map.remove(&s);
                    self.map.insert(k, (e, a));
                    continue;
                }
            }
            kept = Some(s);
        }
    }

    /// Applies `changes`, in order, to every page of `[start, end)`, pages without attributes getting the
    /// defaults first.
    pub fn set(&mut self, start: u64, end: u64, changes: &[Change]) {
        self.split(start);
        self.split(end);
        let mut gaps = Vec::new();
        let mut at = start;
        for (&s, &(e, _)) in self.map.range(start..end) {
            if s > at {
                gaps.push((at, s));
            }
            at = e;
        }
        if at < end {
            gaps.push((at, end));
        }
        for (s, e) in gaps {
            self.map.insert(s, (e, Attrs::default()));
        }
        for (_, (_, a)) in self.map.range_mut(start..end) {
            for &c in changes {
                a.apply(c);
            }
        }
        self.merge(start, end);
    }

    /// Forgets the attributes of `[start, end)`.
    pub fn remove(&mut self, start: u64, end: u64) {
        self.split(start);
        self.split(end);
        let starts: Vec<u64> = self.map.range(start..end).map(|(&s, _)| s).collect();
        for s in starts {
            self.map.remove(&s);
        }
    }

    /// The ranges that meet `[start, end)`, whole: (start, end, attributes).
    fn meeting(&self, start: u64, end: u64) -> impl Iterator<Item = (u64, u64, Attrs)> + '_ {
        let before = self.map.range(..start).next_back().filter(|(_, &(e, _))| e > start);
        before
            .into_iter()
            .chain(self.map.range(start..end))
            .map(|(&s, &(e, a))| (s, e, a))
    }

    /// Whether some page of `[start, end)` has attributes.
    pub fn overlaps(&self, start: u64, end: u64) -> bool {
        self.meeting(start, end).next().is_some()
    }

    /// Every range: (start, end, attributes), in address order.
    pub fn iter(&self) -> impl Iterator<Item = (u64, u64, Attrs)> + '_ {
        self.map.iter().map(|(&s, &(e, a))| (s, e, a))
    }

    /// GET_ATTR's answer for `[start, end)` with `gpus` the bitmap of the process's GPUs (see the module doc).
    pub fn summary(&self, start: u64, end: u64, gpus: u64) -> Summary {
        let mut parts = self.meeting(start, end).map(|(_, _, a)| a).peekable();
        let Some(&first) = parts.peek() else {
            let d = Attrs::default();
            return Summary {
                preferred: d.preferred,
                prefetch: d.prefetch,
                access: 0,
                in_place: 0,
                flags_and: d.flags,
                flags_or: d.flags,
                granularity: d.granularity,
            };
        };
        let mut s = Summary {
            preferred: first.preferred,
            prefetch: first.prefetch,
            access: gpus,
            in_place: gpus,
            flags_and: !0,
            flags_or: 0,
            granularity: u8::MAX,
        };
        for a in parts {
            if a.preferred != s.preferred {
                s.preferred = UNDEFINED;
            }
            if a.prefetch != s.prefetch {
                s.prefetch = UNDEFINED;
            }
            s.access &= a.access;
            s.in_place &= a.in_place;
            s.flags_and &= a.flags;
            s.flags_or |= a.flags;
            s.granularity = s.granularity.min(a.granularity);
        }
        s
    }

    /// The runs of pages some GPU may access, adjacent ranges of the same graininess joined.
    pub fn reachable(&self) -> Vec<Span> {
        let mut out: Vec<Span> = Vec::new();
        for (s, e, a) in self.iter().filter(|(_, _, a)| a.reachable()) {
            let fine = a.flags & flag::COHERENT != 0;
            match out.last_mut() {
                Some(l) if l.end == s && l.fine == fine => l.end = e,
                _ => out.push(Span { start: s, end: e, fine }),
            }
        }
        out
    }
}

#[derive(Default)]
struct State {
    ranges: Ranges,
    /// The spans entered into the GPUs' address space now, by start: (end, fine-grained).
    mapped: BTreeMap<u64, (u64, bool)>,
    /// Spans the GPUs' address space refused (they overlap memory mapped otherwise), said once each.
    refused: BTreeSet<(u64, u64)>,
}

/// The process's SVM ranges and what of them the GPUs reach.
#[derive(Default)]
pub struct Svm {
    state: Mutex<State>,
    /// The number of spans entered into the GPUs' address space (with none, a dispatch has nothing to check).
    mapped: AtomicUsize,
}

impl Svm {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Whether every page of `[start, end)` is mapped in this process.
fn host_mapped(start: u64, end: u64) -> bool {
    let Ok(len) = usize::try_from(end - start) else {
        return false;
    };
    // SAFETY: msync with MS_ASYNC only looks at the mappings of the page-aligned range (since Linux 2.6.19 it
    // writes nothing back); it fails with ENOMEM when a page of the range is not mapped.
    unsafe { libc::msync(start as *mut libc::c_void, len, libc::MS_ASYNC) == 0 }
}

/// The parts of `[start, end)` not mapped in this process, from `/proc/self/maps` (all of it when that cannot be
/// read).
fn holes(start: u64, end: u64) -> Vec<(u64, u64)> {
    let Ok(maps) = std::fs::read_to_string("/proc/self/maps") else {
        return vec![(start, end)];
    };
    let mut out = Vec::new();
    let mut at = start;
    for line in maps.lines() {
        let Some((s, e)) = line
            .split_whitespace()
            .next()
            .and_then(|r| r.split_once('-'))
            .and_then(|(s, e)| Some((u64::from_str_radix(s, 16).ok()?, u64::from_str_radix(e, 16).ok()?)))
        else {
            continue;
        };
        if e <= at {
            continue;
        }
        if s >= end {
            break;
        }
        if s > at {
            out.push((at, s));
        }
        at = e;
        if at >= end {
            break;
        }
    }
    if at < end {
        out.push((at, end));
    }
    out
}

impl Driver {
    /// `AMDKFD_IOC_SVM` (see the module doc).
    pub fn svm_ioctl(&self, a: &mut Args) -> Result<(), Errno> {
        let (start, size, op, nattr) = (a.u64(0), a.u64(8), a.u32(16), a.u32(20) as usize);
        if start == 0 || size == 0 || !start.is_multiple_of(PAGE) || !size.is_multiple_of(PAGE) {
            return Err(libc::EINVAL);
        }
        let end = start.checked_add(size).ok_or(libc::EINVAL)?;
        if nattr
            .checked_mul(8)
            .and_then(|n| n.checked_add(HEADER))
            .is_none_or(|n| n > a.user_len())
        {
            return Err(libc::EINVAL);
        }
        let pairs: Vec<(u32, u32)> = (0..nattr)
            .map(|i| (a.u32(HEADER + 8 * i), a.u32(HEADER + 8 * i + 4)))
            .collect();
        let mut st = self.svm.lock();
        if self.forget_unmapped(&mut st) {
            self.sync_svm(&mut st);
        }
        match op {
            OP_SET_ATTR => {
                let changes = pairs
                    .iter()
                    .map(|&(t, v)| self.svm_change(t, v))
                    .collect::<Result<Vec<_>, _>>()?;
                self.svm_usable(start, end)?;
                st.ranges.set(start, end, &changes);
                self.sync_svm(&mut st);
            }
            OP_GET_ATTR => {
                self.svm_usable(start, end)?;
                use attr::*;
                if pairs.iter().any(|&(t, _)| {
                    !matches!(
                        t,
                        PREFERRED_LOC | PREFETCH_LOC | ACCESS | SET_FLAGS | CLR_FLAGS | GRANULARITY
                    )
                }) {
                    return Err(libc::EINVAL);
                }
                let gpus = if self.gpus.len() >= MAX_GPUS {
                    u64::MAX
                } else {
                    (1u64 << self.gpus.len()) - 1
                };
                let s = st.ranges.summary(start, end, gpus);
                for (i, &(t, v)) in pairs.iter().enumerate() {
                    let (at_type, at_value) = (HEADER + 8 * i, HEADER + 8 * i + 4);
                    match t {
                        PREFERRED_LOC => a.set_u32(at_value, s.preferred),
                        PREFETCH_LOC => a.set_u32(at_value, s.prefetch),
                        ACCESS => {
                            let bit = 1u64 << self.svm_gpu(v)?;
                            let kind = if s.access & bit != 0 {
                                ACCESS
                            } else if s.in_place & bit != 0 {
                                ACCESS_IN_PLACE
                            } else {
                                NO_ACCESS
                            };
                            a.set_u32(at_type, kind);
                        }
                        SET_FLAGS => a.set_u32(at_value, s.flags_and),
                        CLR_FLAGS => a.set_u32(at_value, !s.flags_or),
                        _ => a.set_u32(at_value, s.granularity as u32),
                    }
                }
            }
            _ => return Err(libc::EINVAL),
        }
        Ok(())
    }

    /// Before GPU work (a dispatch, an SDMA batch): the pages the GPUs reach must still be mapped in the process;
    /// those the program unmapped leave the GPUs' address space and lose their attributes.
    pub fn svm_check(&self) {
        if self.svm.mapped.load(Ordering::Acquire) == 0 {
            return;
        }
        let mut st = self.svm.lock();
        if st.mapped.iter().all(|(&s, &(e, _))| host_mapped(s, e)) {
            return;
        }
        if self.forget_unmapped(&mut st) {
            self.sync_svm(&mut st);
        }
    }

    /// Whether some page of `[start, end)` has SVM attributes (pages the program unmapped have none).
    pub fn svm_overlaps(&self, start: u64, end: u64) -> bool {
        let mut st = self.svm.lock();
        if !st.ranges.overlaps(start, end) {
            return false;
        }
        if self.forget_unmapped(&mut st) {
            self.sync_svm(&mut st);
        }
        st.ranges.overlaps(start, end)
    }

    /// The place of the GPU whose id is `gpu_id`, if the access bitmaps hold it.
    fn svm_gpu(&self, gpu_id: u32) -> Result<usize, Errno> {
        self.gpu_index(gpu_id).filter(|&g| g < MAX_GPUS).ok_or(libc::EINVAL)
    }

    /// SET_ATTR's attribute `t` with value `v`, checked as the kernel's `svm_range_check_attr` checks it.
    fn svm_change(&self, t: u32, v: u32) -> Result<Change, Errno> {
        Ok(match t {
            attr::PREFERRED_LOC => {
                if v != SYSMEM && v != UNDEFINED {
                    self.svm_gpu(v)?;
                }
                Change::Preferred(v)
            }
            attr::PREFETCH_LOC => {
                if v != SYSMEM {
                    self.svm_gpu(v)?;
                }
                Change::Prefetch(v)
            }
            attr::ACCESS => Change::Access(self.svm_gpu(v)?),
            attr::ACCESS_IN_PLACE => Change::InPlace(self.svm_gpu(v)?),
            attr::NO_ACCESS => Change::NoAccess(self.svm_gpu(v)?),
            attr::SET_FLAGS => Change::SetFlags(v),
            attr::CLR_FLAGS => Change::ClearFlags(v),
            attr::GRANULARITY => Change::Granularity(v as u8),
            _ => return Err(libc::EINVAL),
        })
    }

    /// `[start, end)` may have SVM attributes: all mapped in the process (else EFAULT), none of it memory the
    /// GPUs reach otherwise — a buffer object mapped to them, the emulator's arena — (else EADDRINUSE).
    fn svm_usable(&self, start: u64, end: u64) -> Result<(), Errno> {
        if !host_mapped(start, end) {
            return Err(libc::EFAULT);
        }
        if self.mem.overlaps(start, end - start) || self.bos.mapped_within(start, end) {
            return Err(libc::EADDRINUSE);
        }
        Ok(())
    }

    /// Forgets the attributes of the pages the program unmapped; whether there were any.
    fn forget_unmapped(&self, st: &mut State) -> bool {
        let gone: Vec<(u64, u64)> = st
            .ranges
            .iter()
            .filter(|&(s, e, _)| !host_mapped(s, e))
            .map(|(s, e, _)| (s, e))
            .collect();
        for &(s, e) in &gone {
            for (hs, he) in holes(s, e) {
                st.ranges.remove(hs, he);
            }
        }
        !gone.is_empty()
    }

    /// Makes the GPUs' address space hold the pages some GPU may access, and no other SVM page: spans whose
    /// extent or graininess changed leave it, new ones enter it (the others stay, so kernels running on them go
    /// on undisturbed).
    fn sync_svm(&self, st: &mut State) {
        let want: BTreeMap<u64, (u64, bool)> = st
            .ranges
            .reachable()
            .into_iter()
            .map(|s| (s.start, (s.end, s.fine)))
            .collect();
        let leaving: Vec<u64> = st
            .mapped
            .iter()
            .filter(|&(s, v)| want.get(s) != Some(v))
            .map(|(&s, _)| s)
            .collect();
        for s in leaving {
            let _ = self.mem.unmap_host(s);
            st.mapped.remove(&s);
        }
        for (s, (e, fine)) in want {
            if st.mapped.contains_key(&s) {
                continue;
            }
            // the program's pages, at their own address
            match self.mem.map_host_at(s, e - s, s, "SVM memory") {
                Ok(()) => {
                    if fine {
                        let _ = self.mem.set_fine_grained(s);
                    }
                    st.mapped.insert(s, (e, fine));
                }
                Err(_) => {
                    if st.refused.insert((s, e)) {
                        eprintln!(
                            "wavejit: SVM range {s:#x}..{e:#x} overlaps memory mapped to the GPUs otherwise; kernels reach it only through that"
                        );
                    }
                }
            }
        }
        self.svm.mapped.store(st.mapped.len(), Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{self, eventually, AqlQueue, Host, DATA, READ_INDEX, SIGNALS};

    const P: u64 = PAGE;

    fn pages(r: &Ranges) -> Vec<(u64, u64)> {
        r.iter().map(|(s, e, _)| (s / P, e / P)).collect()
    }

    #[test]
    fn set_attr_splits_the_ranges_it_meets_and_equal_neighbours_merge_again() {
        let mut r = Ranges::default();
        r.set(10 * P, 20 * P, &[Change::Access(0)]);
        assert_eq!(pages(&r), [(10, 20)]);
        // the middle of a range: three ranges, the outer two as before
        r.set(12 * P, 14 * P, &[Change::Preferred(0xa001)]);
        assert_eq!(pages(&r), [(10, 12), (12, 14), (14, 20)]);
        let mid = r.iter().nth(1).unwrap().2;
        assert_eq!((mid.preferred, mid.access), (0xa001, 1));
        // across a range's end into pages without attributes: those get the defaults, then the change
        r.set(18 * P, 24 * P, &[Change::SetFlags(flag::GPU_READ_MOSTLY)]);
        assert_eq!(pages(&r), [(10, 12), (12, 14), (14, 18), (18, 20), (20, 24)]);
        let new = r.iter().last().unwrap().2;
        assert_eq!(new.access, 0, "a new range has no GPU access");
        assert_eq!(new.flags, flag::HOST_ACCESS | flag::COHERENT | flag::GPU_READ_MOSTLY);
        // undoing the changes merges the neighbours back
        r.set(12 * P, 14 * P, &[Change::Preferred(UNDEFINED)]);
        assert_eq!(pages(&r), [(10, 18), (18, 20), (20, 24)]);
        r.set(20 * P, 24 * P, &[Change::Access(0)]);
        r.set(18 * P, 24 * P, &[Change::ClearFlags(flag::GPU_READ_MOSTLY)]);
        assert_eq!(pages(&r), [(10, 24)]);
        // changes apply in order; access kinds replace one another
        r.set(
            10 * P,
            11 * P,
            &[Change::InPlace(1), Change::Access(1), Change::NoAccess(0)],
        );
        let first = r.iter().next().unwrap().2;
        assert_eq!((first.access, first.in_place), (0b10, 0));
        // removing a middle part leaves the rest, and what the GPUs reach follows
        r.remove(15 * P, 16 * P);
        assert_eq!(pages(&r), [(10, 11), (11, 15), (16, 24)]);
        let spans: Vec<(u64, u64)> = r.reachable().iter().map(|s| (s.start / P, s.end / P)).collect();
        assert_eq!(spans, [(10, 15), (16, 24)], "adjacent ranges any GPU reaches join");
        r.set(11 * P, 12 * P, &[Change::ClearFlags(flag::COHERENT)]);
        let fine: Vec<bool> = r.reachable().iter().map(|s| s.fine).collect();
        assert_eq!(
            fine,
            [true, false, true, true],
            "coarse-grained pages are a span of their own"
        );
    }

    #[test]
    fn get_attr_follows_the_kernels_rules_over_mixed_ranges() {
        let mut r = Ranges::default();
        let all = 0b11;
        // no range at all: the defaults, no GPU access
        let d = r.summary(P, 4 * P, all);
        assert_eq!((d.preferred, d.prefetch, d.granularity), (UNDEFINED, UNDEFINED, 9));
        assert_eq!((d.access, d.in_place), (0, 0));
        assert_eq!(d.flags_and, flag::HOST_ACCESS | flag::COHERENT);
        assert_eq!(d.flags_or, d.flags_and);

        r.set(
            P,
            4 * P,
            &[Change::Access(0), Change::Access(1), Change::Preferred(0xa001)],
        );
        r.set(
            4 * P,
            8 * P,
            &[Change::Access(0), Change::InPlace(1), Change::Preferred(0xa001)],
        );
        r.set(8 * P, 9 * P, &[Change::Preferred(SYSMEM), Change::Granularity(3)]);
        r.set(2 * P, 3 * P, &[Change::SetFlags(flag::GPU_RO)]);
        let one = r.summary(P, 2 * P, all);
        assert_eq!((one.preferred, one.access, one.in_place), (0xa001, 0b11, 0));
        // shared values stand; mixed ones fall to UNDEFINED / NO_ACCESS
        let both = r.summary(P, 8 * P, all);
        assert_eq!(both.preferred, 0xa001);
        assert_eq!(
            (both.access, both.in_place),
            (0b01, 0),
            "GPU 1 has ACCESS in one, IN_PLACE in the other"
        );
        assert_eq!(both.flags_and & flag::GPU_RO, 0, "read-only in one part only");
        assert_ne!(both.flags_or & flag::GPU_RO, 0);
        let all_of_it = r.summary(0, 16 * P, all);
        assert_eq!(all_of_it.preferred, UNDEFINED);
        assert_eq!(all_of_it.granularity, 3, "the smallest");
        assert_eq!(all_of_it.access, 0);
        // pages without attributes inside the range are not counted
        r.set(12 * P, 13 * P, &[Change::Preferred(SYSMEM)]);
        assert_eq!(r.summary(8 * P, 13 * P, all).preferred, SYSMEM);
        // the part of a range that reaches into the asked one counts
        assert_eq!(r.summary(5 * P, 6 * P, all).in_place, 0b10);
        // prefetch: UNDEFINED until set everywhere asked
        r.set(P, 4 * P, &[Change::Prefetch(SYSMEM)]);
        assert_eq!(r.summary(P, 4 * P, all).prefetch, SYSMEM);
        assert_eq!(r.summary(P, 5 * P, all).prefetch, UNDEFINED);
    }

    /// An SVM ioctl of `op` on `[start, start + size)` with `attrs`: the attributes as the driver left them.
    fn svm(
        d: &std::sync::Arc<Driver>,
        op: u32,
        start: u64,
        size: u64,
        attrs: &[(u32, u32)],
    ) -> Result<Vec<(u32, u32)>, Errno> {
        let mut b = vec![0u8; HEADER + 8 * attrs.len()];
        b[0..8].copy_from_slice(&start.to_le_bytes());
        b[8..16].copy_from_slice(&size.to_le_bytes());
        b[16..20].copy_from_slice(&op.to_le_bytes());
        b[20..24].copy_from_slice(&(attrs.len() as u32).to_le_bytes());
        for (i, &(t, v)) in attrs.iter().enumerate() {
            b[HEADER + 8 * i..HEADER + 8 * i + 4].copy_from_slice(&t.to_le_bytes());
            b[HEADER + 8 * i + 4..HEADER + 8 * i + 8].copy_from_slice(&v.to_le_bytes());
        }
        testing::ioctl(d, 0x20, &mut b)?;
        Ok((0..attrs.len())
            .map(|i| {
                let w = |at: usize| u32::from_le_bytes(b[at..at + 4].try_into().unwrap());
                (w(HEADER + 8 * i), w(HEADER + 8 * i + 4))
            })
            .collect())
    }

    /// `len` bytes of fresh anonymous memory of the test's (not mapped to the GPU).
    fn anonymous(len: usize) -> u64 {
        // SAFETY: a fresh private anonymous mapping; the test unmaps it or lets the process end.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(p, libc::MAP_FAILED);
        p as u64
    }

    #[test]
    fn svm_ioctls_answer_through_the_thunks_structure_and_refuse_what_the_kernel_refuses() {
        use attr::*;
        let d = testing::driver();
        let gpu = d.gpus[0].gpu_id;
        let m = anonymous(16 * P as usize);
        let set = |start, size, attrs: &[(u32, u32)]| svm(&d, OP_SET_ATTR, start, size, attrs);
        let get = |start, size, attrs: &[(u32, u32)]| svm(&d, OP_GET_ATTR, start, size, attrs);
        set(
            m,
            8 * P,
            &[(ACCESS, gpu), (PREFERRED_LOC, gpu), (SET_FLAGS, flag::GPU_READ_MOSTLY)],
        )
        .unwrap();
        set(m + 8 * P, 8 * P, &[(ACCESS_IN_PLACE, gpu)]).unwrap();
        let got = get(
            m,
            8 * P,
            &[
                (PREFERRED_LOC, 0),
                (PREFETCH_LOC, 0),
                (ACCESS, gpu),
                (CLR_FLAGS, 0),
                (SET_FLAGS, 0),
                (GRANULARITY, 0),
            ],
        )
        .unwrap();
        assert_eq!(got[0], (PREFERRED_LOC, gpu));
        assert_eq!(got[1], (PREFETCH_LOC, UNDEFINED));
        assert_eq!(
            got[2],
            (ACCESS, gpu),
            "the type says the access, the value stays the GPU"
        );
        assert_eq!(got[3].1 & (flag::GPU_READ_MOSTLY | flag::COHERENT), 0);
        assert_eq!(got[4].1, flag::HOST_ACCESS | flag::COHERENT | flag::GPU_READ_MOSTLY);
        assert_eq!(got[5], (GRANULARITY, 9));
        let mixed = get(m, 16 * P, &[(PREFERRED_LOC, 0), (ACCESS, gpu), (SET_FLAGS, 0)]).unwrap();
        assert_eq!(mixed[0].1, UNDEFINED);
        assert_eq!(
            mixed[1].0, NO_ACCESS,
            "ACCESS in one half, ACCESS_IN_PLACE in the other"
        );
        assert_eq!(mixed[2].1, flag::HOST_ACCESS | flag::COHERENT);
        assert_eq!(get(m + 8 * P, P, &[(ACCESS, gpu)]).unwrap()[0].0, ACCESS_IN_PLACE);

        // bad arguments: EINVAL
        let einval = Err(libc::EINVAL);
        assert_eq!(set(m + 1, P, &[]), einval, "an unaligned start");
        assert_eq!(set(m, P + 8, &[]), einval, "an unaligned size");
        assert_eq!(set(m, 0, &[]), einval, "no pages");
        assert_eq!(set(0, P, &[]), einval, "address 0");
        assert_eq!(svm(&d, 2, m, P, &[]), einval, "no such operation");
        assert_eq!(set(m, P, &[(8, 0)]), einval, "no such attribute");
        assert_eq!(set(m, P, &[(ACCESS, gpu + 1)]), einval, "no such GPU");
        assert_eq!(
            set(m, P, &[(PREFETCH_LOC, UNDEFINED)]),
            einval,
            "a prefetch goes somewhere"
        );
        assert_eq!(get(m, P, &[(NO_ACCESS, gpu)]), einval, "GET asks with ACCESS only");
        assert_eq!(get(m, P, &[(ACCESS, 7)]), einval, "no such GPU");
        let mut short = vec![0u8; HEADER];
        short[0..8].copy_from_slice(&m.to_le_bytes());
        short[8..16].copy_from_slice(&P.to_le_bytes());
        short[20..24].copy_from_slice(&1u32.to_le_bytes());
        assert_eq!(
            testing::ioctl(&d, 0x20, &mut short),
            Err(libc::EINVAL),
            "an attribute beyond the request's size"
        );
        assert_eq!(
            get(m, P, &[(PREFERRED_LOC, 0)]).unwrap()[0].1,
            gpu,
            "a refused SET changed nothing"
        );

        // pages not mapped in the process: EFAULT; memory mapped to the GPU otherwise: EADDRINUSE
        let hole = anonymous(P as usize);
        // SAFETY: unmapping the page just mapped, which nothing refers to.
        unsafe { libc::munmap(hole as *mut libc::c_void, P as usize) };
        assert_eq!(get(hole, P, &[]), Err(libc::EFAULT));
        assert_eq!(set(hole, P, &[(ACCESS, gpu)]), Err(libc::EFAULT));
        let h = Host::mapped(&d, 4 * P as usize);
        assert_eq!(set(h.at(0), P, &[(ACCESS, gpu)]), Err(libc::EADDRINUSE));
        assert_eq!(get(h.at(0), P, &[(PREFERRED_LOC, 0)]), Err(libc::EADDRINUSE));
        assert_eq!(set(d.mem.base(), P, &[]), Err(libc::EADDRINUSE), "the arena");
        // and a buffer object where SVM attributes are: EADDRINUSE
        let mut alloc = [0u8; 40];
        alloc[0..8].copy_from_slice(&(m + 4 * P).to_le_bytes());
        alloc[8..16].copy_from_slice(&P.to_le_bytes());
        alloc[24..32].copy_from_slice(&(m + 4 * P).to_le_bytes());
        alloc[32..36].copy_from_slice(&gpu.to_le_bytes());
        alloc[36..40].copy_from_slice(&crate::memory::flags::USERPTR.to_le_bytes());
        assert_eq!(testing::ioctl(&d, 0x16, &mut alloc), Err(libc::EADDRINUSE));
    }

    #[test]
    fn a_kernel_reaches_svm_memory_while_a_gpu_may_and_faults_outside_it_or_once_access_is_gone() {
        use attr::*;
        let rig = AqlQueue::new();
        let (d, h) = (&rig.d, &rig.h);
        let gpu = d.gpus[0].gpu_id;
        // a memory event, which the fault reaches
        let mut event = [0u8; 32];
        event[12..16].copy_from_slice(&crate::events::MEMORY.to_le_bytes());
        testing::ioctl(d, 0x08, &mut event).expect("CREATE_EVENT of a memory event");
        let event_id = u32::from_le_bytes(event[24..28].try_into().unwrap());

        const N: usize = 1024;
        let (a, b) = (DATA, DATA + 4 * N);
        let floats = |f: &dyn Fn(usize) -> f32| (0..N).flat_map(|i| f(i).to_le_bytes()).collect::<Vec<u8>>();
        h.write(a, &floats(&|i| i as f32));
        h.write(b, &floats(&|_| 0.25));
        // c: the program's own pages, reachable once SET_ATTR gives the GPU access
        let m = anonymous(4 * P as usize);
        assert!(d.mem.read(m, &mut [0u8; 4]).is_err(), "no access before SET_ATTR");
        svm(d, OP_SET_ATTR, m, 4 * P, &[(ACCESS_IN_PLACE, gpu)]).unwrap();
        assert!(d.mem.read(m + 4 * P - 4, &mut [0u8; 4]).is_ok());
        assert!(
            d.mem.read(m + 4 * P, &mut [0u8; 4]).is_err(),
            "the pages after it are not the GPU's"
        );
        rig.vadd(0, [h.at(a), h.at(b), m], N as u32, SIGNALS);
        assert!(eventually(|| h.u64(SIGNALS + 8) == 0), "the kernel completes");
        // SAFETY: the kernel is done with the SVM pages, which are mapped and 4 KiB long.
        let c = unsafe { std::slice::from_raw_parts(m as *const f32, N) };
        assert!(
            c.iter().enumerate().all(|(i, &v)| v == i as f32 + 0.25),
            "the program sees the kernel's stores"
        );
        // attributes that keep the access (a prefetch, a preferred location) leave the pages reachable
        svm(
            d,
            OP_SET_ATTR,
            m,
            4 * P,
            &[(PREFETCH_LOC, gpu), (PREFERRED_LOC, SYSMEM)],
        )
        .unwrap();
        assert!(d.mem.read(m, &mut [0u8; 4]).is_ok());

        // access taken away: the same kernel faults at the first page of c, and the queue stops
        svm(d, OP_SET_ATTR, m, 4 * P, &[(NO_ACCESS, gpu)]).unwrap();
        assert!(d.mem.read(m, &mut [0u8; 4]).is_err());
        rig.vadd(1, [h.at(a), h.at(b), m], N as u32, SIGNALS + 64);
        let mut wait = [0u8; 48];
        wait[40..44].copy_from_slice(&event_id.to_le_bytes());
        let mut args = [0u8; 24];
        args[0..8].copy_from_slice(&(wait.as_mut_ptr() as u64).to_le_bytes());
        args[8..12].copy_from_slice(&1u32.to_le_bytes());
        args[16..20].copy_from_slice(&10_000u32.to_le_bytes());
        testing::ioctl(d, 0x0c, &mut args).expect("WAIT_EVENTS");
        assert_eq!(
            u32::from_le_bytes(args[20..24].try_into().unwrap()),
            0,
            "the memory event came"
        );
        let address = u64::from_le_bytes(wait[16..24].try_into().unwrap());
        assert_eq!(address, m, "the fault's page");
        assert_eq!(h.u64(SIGNALS + 64 + 8), 1, "the faulting dispatch never completes");
        assert_eq!(h.u64(READ_INDEX), 1);
    }

    #[test]
    fn pages_the_program_unmaps_leave_the_gpus_and_lose_their_attributes() {
        use attr::*;
        let d = testing::driver();
        let gpu = d.gpus[0].gpu_id;
        let m = anonymous(8 * P as usize);
        svm(&d, OP_SET_ATTR, m, 8 * P, &[(ACCESS, gpu), (PREFERRED_LOC, gpu)]).unwrap();
        assert!(d.mem.read(m + 5 * P, &mut [0u8; 4]).is_ok());
        // the program frees the middle pages with munmap, telling no one
        // SAFETY: unmapping pages of the test's own mapping, which nothing else refers to.
        unsafe { libc::munmap((m + 4 * P) as *mut libc::c_void, 2 * P as usize) };
        d.svm_check();
        assert!(
            d.mem.read(m + 5 * P, &mut [0u8; 4]).is_err(),
            "gone from the GPUs' address space"
        );
        assert!(d.mem.read(m + 3 * P, &mut [0u8; 4]).is_ok(), "the rest stays");
        assert!(d.mem.read(m + 6 * P, &mut [0u8; 4]).is_ok());
        let ranges: Vec<(u64, u64)> = d.svm.lock().ranges.iter().map(|(s, e, _)| (s, e)).collect();
        assert_eq!(ranges, [(m, m + 4 * P), (m + 6 * P, m + 8 * P)]);
        // memory mapped there again has no attributes (a GET of it answers the defaults)
        // SAFETY: a fresh anonymous mapping at the hole just made (MAP_FIXED_NOREPLACE refuses anything there).
        let again = unsafe {
            libc::mmap(
                (m + 4 * P) as *mut libc::c_void,
                2 * P as usize,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED_NOREPLACE,
                -1,
                0,
            )
        };
        assert_eq!(again as u64, m + 4 * P);
        let got = svm(&d, OP_GET_ATTR, m + 4 * P, 2 * P, &[(PREFERRED_LOC, 0), (ACCESS, gpu)]).unwrap();
        assert_eq!(got, [(PREFERRED_LOC, UNDEFINED), (NO_ACCESS, gpu)]);
        assert!(d.mem.read(m + 5 * P, &mut [0u8; 4]).is_err());
        // SAFETY: unmapping the whole of the test's memory; the next ioctl forgets the rest
        unsafe { libc::munmap(m as *mut libc::c_void, 8 * P as usize) };
        assert_eq!(svm(&d, OP_GET_ATTR, m, P, &[]), Err(libc::EFAULT));
        assert!(d.svm.lock().ranges.iter().next().is_none());
        assert!(d.mem.read(m, &mut [0u8; 4]).is_err());
    }
}

//! Shared virtual memory attributes (`hsa_amd_svm_attributes_set/get`, `hsa_amd_svm_prefetch_async`): a map
//! of page ranges to their attributes. All emulated agents share one memory, so attributes change no data and
//! prefetches move none; what they do change is reachability: host memory outside the device memory that a
//! GPU agent is given access to becomes reachable by kernels (as `hsa_memory_register` makes it), and loses it
//! again when every GPU agent's access is taken away.

use std::collections::{BTreeMap, HashMap};

use crate::ffi::{self, Status};
use crate::runtime::Runtime;

pub const ATTRIB_GLOBAL_FLAG: u64 = 0;
pub const ATTRIB_READ_ONLY: u64 = 1;
pub const ATTRIB_HIVE_LOCAL: u64 = 2;
pub const ATTRIB_MIGRATION_GRANULARITY: u64 = 3;
pub const ATTRIB_PREFERRED_LOCATION: u64 = 4;
pub const ATTRIB_PREFETCH_LOCATION: u64 = 5;
pub const ATTRIB_READ_MOSTLY: u64 = 6;
pub const ATTRIB_GPU_EXEC: u64 = 7;
pub const ATTRIB_AGENT_ACCESSIBLE: u64 = 0x200;
pub const ATTRIB_AGENT_ACCESSIBLE_IN_PLACE: u64 = 0x201;
pub const ATTRIB_AGENT_NO_ACCESS: u64 = 0x202;
pub const ATTRIB_ACCESS_QUERY: u64 = 0x203;

pub const GLOBAL_FLAG_FINE_GRAINED: u64 = 0;
pub const GLOBAL_FLAG_COARSE_GRAINED: u64 = 1;
pub const GLOBAL_FLAG_INDETERMINATE: u64 = 2;

const PAGE: u64 = 4096;

/// `hsa_amd_svm_attribute_pair_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Pair {
    pub attribute: u64,
    pub value: u64,
}

/// The attributes of a page range; `access` maps agent handles to their access attribute.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Attrs {
    global_flag: u64,
    read_only: u64,
    hive_local: u64,
    granularity: u64,
    preferred: u64,
    prefetch: u64,
    read_mostly: u64,
    gpu_exec: u64,
    access: HashMap<u64, u64>,
}

impl Default for Attrs {
    fn default() -> Attrs {
        // granularity 9: 2 MiB (2^9 pages), ROCm's default
        Attrs {
            global_flag: GLOBAL_FLAG_FINE_GRAINED,
            read_only: 0,
            hive_local: 0,
            granularity: 9,
            preferred: 0,
            prefetch: 0,
            read_mostly: 0,
            gpu_exec: 1,
            access: HashMap::new(),
        }
    }
}

/// A range with attributes: its end, attributes, and whether it is host memory this map made reachable.
#[derive(Clone, Debug)]
struct Span {
    end: u64,
    attrs: Attrs,
    mapped: bool,
}

/// The attribute map: start → span, spans disjoint.
#[derive(Default)]
pub struct Svm {
    spans: BTreeMap<u64, Span>,
}

/// `[ptr, ptr + size)` widened to whole pages, as the API prescribes.
fn pages(ptr: u64, size: u64) -> Result<(u64, u64), Status> {
    if ptr == 0 || size == 0 {
        return Err(ffi::ERROR_INVALID_ARGUMENT);
    }
    let start = ptr / PAGE * PAGE;
    let end = ptr
        .checked_add(size)
        .and_then(|e| e.checked_next_multiple_of(PAGE))
        .ok_or(ffi::ERROR_INVALID_ARGUMENT)?;
    Ok((start, end))
}

impl Svm {
    /// Splits the span holding `at` (if any) so that a span starts at `at`; mapped host memory is re-registered
    /// as two ranges.
    fn split(&mut self, rt: &Runtime, at: u64) {
        let Some((&s, span)) = self.spans.range(..at).next_back() else {
            return;
        };
        if span.end <= at {
            return;
        }
        let mut left = span.clone();
        let mut right = span.clone();
        left.end = at;
        right.end = span.end;
        if span.mapped {
            let _ = rt.mem.unmap_host(s);
            left.mapped = rt.mem.map_host(s, at - s, "SVM range").is_ok();
            right.mapped = rt.mem.map_host(at, span.end - at, "SVM range").is_ok();
        }
        self.spans.insert(s, left);
        self.spans.insert(at, right);
    }

    /// Forgets the spans of host memory made reachable here whose pages are no longer all mapped in this
    /// process (`munmap`, as HIP frees managed memory, is not an HSA call): kernels lose them, so an access
    /// after the free is a fault the emulator reports, never a read of unmapped host memory. Runs before
    /// every dispatch and attribute change; one `msync` per such span.
    pub fn forget_unmapped(&mut self, rt: &Runtime) {
        let gone: Vec<u64> = self
            .spans
            .iter()
            .filter(|(&s, sp)| {
                // SAFETY: msync only inspects the mappings of [s, end) (MS_ASYNC on anonymous memory writes
                // nothing back); it fails with ENOMEM when a page of the range is not mapped.
                sp.mapped && unsafe { libc::msync(s as *mut libc::c_void, (sp.end - s) as usize, libc::MS_ASYNC) } != 0
            })
            .map(|(&s, _)| s)
            .collect();
        for s in gone {
            let _ = rt.mem.unmap_host(s);
            self.spans.remove(&s);
        }
    }

    /// Whether no span makes host memory reachable (so a dispatch has nothing to check).
    pub fn maps_nothing(&self) -> bool {
        !self.spans.values().any(|sp| sp.mapped)
    }

    /// Sets `pairs` on `[ptr, ptr + size)`.
    pub fn set(&mut self, rt: &Runtime, ptr: u64, size: u64, pairs: &[Pair]) -> Result<(), Status> {
        let (start, end) = pages(ptr, size)?;
        self.forget_unmapped(rt);
        // check everything before changing anything
        for p in pairs {
            match p.attribute {
                ATTRIB_GLOBAL_FLAG if p.value > GLOBAL_FLAG_COARSE_GRAINED => return Err(ffi::ERROR_INVALID_ARGUMENT),
                ATTRIB_GLOBAL_FLAG
                | ATTRIB_READ_ONLY
                | ATTRIB_HIVE_LOCAL
                | ATTRIB_MIGRATION_GRANULARITY
                | ATTRIB_READ_MOSTLY
                | ATTRIB_GPU_EXEC => {}
                ATTRIB_PREFERRED_LOCATION if p.value != 0 => {
                    rt.agent(p.value)?;
                }
                ATTRIB_PREFERRED_LOCATION => {}
                ATTRIB_AGENT_ACCESSIBLE | ATTRIB_AGENT_ACCESSIBLE_IN_PLACE | ATTRIB_AGENT_NO_ACCESS => {
                    rt.agent(p.value)?;
                }
                _ => return Err(ffi::ERROR_INVALID_ARGUMENT),
            }
        }
        self.split(rt, start);
        self.split(rt, end);
        // fill the gaps with default spans, so every page of the range has one
        let mut at = start;
        let covered: Vec<(u64, u64)> = self.spans.range(start..end).map(|(&s, sp)| (s, sp.end)).collect();
        for (s, e) in covered {
            if s > at {
                self.spans.insert(
                    at,
                    Span {
                        end: s,
                        attrs: Attrs::default(),
                        mapped: false,
                    },
                );
            }
            at = e;
        }
        if at < end {
            self.spans.insert(
                at,
                Span {
                    end,
                    attrs: Attrs::default(),
                    mapped: false,
                },
            );
        }
        let gpus: Vec<u64> = rt.gpu_handles();
        let starts: Vec<u64> = self.spans.range(start..end).map(|(&s, _)| s).collect();
        for s in starts {
            let span = self.spans.get_mut(&s).expect("a span of the range");
            for p in pairs {
                let a = &mut span.attrs;
                match p.attribute {
                    ATTRIB_GLOBAL_FLAG => a.global_flag = p.value,
                    ATTRIB_READ_ONLY => a.read_only = p.value,
                    ATTRIB_HIVE_LOCAL => a.hive_local = p.value,
                    ATTRIB_MIGRATION_GRANULARITY => a.granularity = p.value,
                    ATTRIB_PREFERRED_LOCATION => a.preferred = p.value,
                    ATTRIB_READ_MOSTLY => a.read_mostly = p.value,
                    ATTRIB_GPU_EXEC => a.gpu_exec = p.value,
                    kind => {
                        a.access.insert(p.value, kind);
                    }
                }
            }
            // host memory outside device memory is reachable by kernels while a GPU may access it
            let gpu_access = gpus.iter().any(|g| {
                matches!(
                    span.attrs.access.get(g),
                    Some(&ATTRIB_AGENT_ACCESSIBLE | &ATTRIB_AGENT_ACCESSIBLE_IN_PLACE)
                )
            });
            let outside = !rt.mem.overlaps(s, span.end - s);
            if outside && gpu_access && !span.mapped {
                span.mapped = rt.mem.map_host(s, span.end - s, "SVM range").is_ok();
                if !span.mapped {
                    eprintln!("wavejit: SVM range {s:#x}..{:#x} overlaps memory already registered otherwise; kernels reach it through that", span.end);
                }
            } else if span.mapped && !gpu_access {
                let _ = rt.mem.unmap_host(s);
                span.mapped = false;
            }
        }
        Ok(())
    }

    /// Answers `pairs` for `[ptr, ptr + size)`: a value the whole range shares, else the attribute's
    /// "indeterminate" answer; `ACCESS_QUERY` pairs get the access kind as their attribute.
    pub fn get(&self, rt: &Runtime, ptr: u64, size: u64, pairs: &mut [Pair]) -> Result<(), Status> {
        let (start, end) = pages(ptr, size)?;
        for p in pairs.iter() {
            match p.attribute {
                ATTRIB_GLOBAL_FLAG
                | ATTRIB_READ_ONLY
                | ATTRIB_HIVE_LOCAL
                | ATTRIB_MIGRATION_GRANULARITY
                | ATTRIB_PREFERRED_LOCATION
                | ATTRIB_PREFETCH_LOCATION
                | ATTRIB_READ_MOSTLY
                | ATTRIB_GPU_EXEC => {}
                ATTRIB_ACCESS_QUERY => {
                    rt.agent(p.value)?;
                }
                _ => return Err(ffi::ERROR_INVALID_ARGUMENT),
            }
        }
        // the attributes of every page range, unset pages with defaults
        let mut parts: Vec<Attrs> = Vec::new();
        let mut at = start;
        if let Some((_, sp)) = self.spans.range(..start).next_back().filter(|(_, sp)| sp.end > start) {
            parts.push(sp.attrs.clone());
            at = sp.end;
        }
        for (&s, sp) in self.spans.range(start..end) {
            if s > at {
                parts.push(Attrs::default());
            }
            parts.push(sp.attrs.clone());
            at = sp.end;
        }
        if at < end {
            parts.push(Attrs::default());
        }
        let in_device_memory = rt.mem.host_accessible(start, end - start);
        for p in pairs.iter_mut() {
            let same = |f: &dyn Fn(&Attrs) -> u64| -> Option<u64> {
                let v = f(&parts[0]);
                parts.iter().all(|a| f(a) == v).then_some(v)
            };
            match p.attribute {
                ATTRIB_GLOBAL_FLAG => p.value = same(&|a| a.global_flag).unwrap_or(GLOBAL_FLAG_INDETERMINATE),
                ATTRIB_READ_ONLY => p.value = same(&|a| a.read_only).unwrap_or(0),
                ATTRIB_HIVE_LOCAL => p.value = same(&|a| a.hive_local).unwrap_or(0),
                ATTRIB_MIGRATION_GRANULARITY => p.value = parts.iter().map(|a| a.granularity).min().unwrap_or(9),
                ATTRIB_PREFERRED_LOCATION => p.value = same(&|a| a.preferred).unwrap_or(0),
                ATTRIB_PREFETCH_LOCATION => p.value = same(&|a| a.prefetch).unwrap_or(0),
                ATTRIB_READ_MOSTLY => p.value = same(&|a| a.read_mostly).unwrap_or(0),
                ATTRIB_GPU_EXEC => p.value = same(&|a| a.gpu_exec).unwrap_or(0),
                _ => {
                    // ACCESS_QUERY: what was set for the agent; otherwise the CPU reaches everything in place, and
                    // GPUs reach device memory and nothing else
                    let agent = p.value;
                    let default = if rt.is_cpu(agent) || in_device_memory {
                        ATTRIB_AGENT_ACCESSIBLE_IN_PLACE
                    } else {
                        ATTRIB_AGENT_NO_ACCESS
                    };
                    p.attribute =
                        same(&|a| a.access.get(&agent).copied().unwrap_or(default)).unwrap_or(ATTRIB_AGENT_NO_ACCESS);
                }
            }
        }
        Ok(())
    }

    /// Records `agent` as the range's prefetch location (no data moves: all agents share one memory).
    pub fn prefetched(&mut self, rt: &Runtime, ptr: u64, size: u64, agent: u64) -> Result<(), Status> {
        let (start, end) = pages(ptr, size)?;
        self.set(rt, start, end - start, &[])?;
        for (_, sp) in self.spans.range_mut(start..end) {
            sp.attrs.prefetch = agent;
        }
        Ok(())
    }
}

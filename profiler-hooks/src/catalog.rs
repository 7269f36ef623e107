//! The hardware counters wavejit reports, by their names on AMD's CDNA GPUs (rocprofv3's `--pmc` names), each
//! with what it counts and where it comes from:
//!
//! - [`Source::Exact`]: counted from what the engines execute — every instruction's table columns, EXEC, and
//!   every lane's address — identical on the interpreter and the JIT, in functional and in timing mode;
//! - [`Source::Modeled`]: read from the timing model's statistics of a dispatch (`--timing`); they are the
//!   model's figures, not the hardware's, and asking for one without the timing model is an error
//!   ([`CounterError::NeedsTiming`]).
//!
//! Where a wavejit counter's definition differs from the hardware's (the hardware counts some of these per
//! quad-cycle or per SE), the description says what wavejit counts.

/// Where a counter's value comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// Counted from executed instructions and lane addresses: the same on every engine.
    Exact,
    /// The timing model's figure (needs `--timing`).
    Modeled,
}

impl Source {
    pub fn name(self) -> &'static str {
        match self {
            Source::Exact => "exact",
            Source::Modeled => "modeled",
        }
    }
}

/// One counter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CounterDef {
    pub name: &'static str,
    pub source: Source,
    pub description: &'static str,
}

/// The catalogue from its table: every row `ID: "NAME" => "description";` is one counter, in the order listed.
/// The exact rows make [`EXACT`] and their indices [`idx`] (`idx::ID`, and `idx::COUNT`, the length of
/// [`crate::HwCounters::exact`]'s array); the modeled rows make [`MODELED`] and the [`Modeled`] counter of
/// each (`Modeled::ID`, in [`Modeled::ALL`]), which [`crate::HwCounters::values`] reads them by.
macro_rules! catalogue {
    (
        exact { $($e:ident: $e_name:literal => $e_description:literal;)* }
        modeled { $($m:ident: $m_name:literal => $m_description:literal;)* }
    ) => {
        /// Indices of the exact counters: their rows in [`EXACT`].
        #[allow(missing_docs)]
        pub mod idx {
            /// Numbers the rows.
            #[allow(non_camel_case_types, clippy::upper_case_acronyms)]
            enum Row {
                $($e,)*
                COUNT,
            }
            $(pub const $e: usize = Row::$e as usize;)*
            /// How many exact counters there are.
            pub const COUNT: usize = Row::COUNT as usize;
        }

        /// The exact counters, in the order of [`idx`].
        pub const EXACT: &[CounterDef; idx::COUNT] = &[$(
            CounterDef {
                name: $e_name,
                source: Source::Exact,
                description: $e_description,
            },
        )*];

        /// A modeled counter: which figure of the timing model's statistics it is.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum Modeled {
            $($m,)*
        }

        impl Modeled {
            /// How many modeled counters there are.
            pub const COUNT: usize = [$(Modeled::$m,)*].len();
            /// Every modeled counter, in the order of [`MODELED`].
            pub const ALL: [Modeled; Modeled::COUNT] = [$(Modeled::$m,)*];
        }

        /// The timing model's counters, in the order of [`Modeled::ALL`].
        pub const MODELED: &[CounterDef; Modeled::COUNT] = &[$(
            CounterDef {
                name: $m_name,
                source: Source::Modeled,
                description: $m_description,
            },
        )*];
    };
}

catalogue! {
    exact {
        WAVES: "SQ_WAVES" => "Waves launched";
        INSTS: "SQ_INSTS" => "Wave instructions executed (every unit)";
        VALU: "SQ_INSTS_VALU" => "VALU instructions, MFMA, transcendental and f64 ones included";
        SALU: "SQ_INSTS_SALU"
            => "Scalar ALU instructions (not the sequencer's own: s_nop, s_waitcnt, s_barrier, s_endpgm)";
        SMEM: "SQ_INSTS_SMEM" => "Scalar memory instructions";
        VMEM_RD: "SQ_INSTS_VMEM_RD" => "Vector memory read instructions (buffer, global, scratch, flat loads)";
        VMEM_WR: "SQ_INSTS_VMEM_WR" => "Vector memory write instructions (stores and atomics)";
        LDS: "SQ_INSTS_LDS" => "LDS (DS) instructions";
        FLAT: "SQ_INSTS_FLAT" => "FLAT instructions (flat_*; global_* and scratch_* are counted as VMEM)";
        BRANCH: "SQ_INSTS_BRANCH" => "Branch instructions (s_branch, s_cbranch_*, s_setpc, s_swappc, s_call)";
        MFMA: "SQ_INSTS_MFMA" => "Matrix (MFMA/SMFMAC) instructions";
        VALU_ADD_F16: "SQ_INSTS_VALU_ADD_F16" => "VALU add/subtract instructions on f16";
        VALU_MUL_F16: "SQ_INSTS_VALU_MUL_F16" => "VALU multiply instructions on f16";
        VALU_FMA_F16: "SQ_INSTS_VALU_FMA_F16" => "VALU fused multiply-add instructions on f16";
        VALU_TRANS_F16: "SQ_INSTS_VALU_TRANS_F16" => "VALU transcendental instructions on f16";
        VALU_ADD_F32: "SQ_INSTS_VALU_ADD_F32" => "VALU add/subtract instructions on f32";
        VALU_MUL_F32: "SQ_INSTS_VALU_MUL_F32" => "VALU multiply instructions on f32";
        VALU_FMA_F32: "SQ_INSTS_VALU_FMA_F32" => "VALU fused multiply-add instructions on f32";
        VALU_TRANS_F32: "SQ_INSTS_VALU_TRANS_F32" => "VALU transcendental instructions on f32";
        VALU_ADD_F64: "SQ_INSTS_VALU_ADD_F64" => "VALU add/subtract instructions on f64";
        VALU_MUL_F64: "SQ_INSTS_VALU_MUL_F64" => "VALU multiply instructions on f64";
        VALU_FMA_F64: "SQ_INSTS_VALU_FMA_F64" => "VALU fused multiply-add instructions on f64";
        VALU_TRANS_F64: "SQ_INSTS_VALU_TRANS_F64" => "VALU transcendental instructions on f64";
        MFMA_MOPS_F16: "SQ_INSTS_VALU_MFMA_MOPS_F16"
            => "Matrix math operations (2 per multiply-add) on f16 inputs, in units of 512";
        MFMA_MOPS_BF16: "SQ_INSTS_VALU_MFMA_MOPS_BF16" => "Matrix math operations on bf16 inputs, in units of 512";
        MFMA_MOPS_F32: "SQ_INSTS_VALU_MFMA_MOPS_F32"
            => "Matrix math operations on f32 (and xf32) inputs, in units of 512";
        MFMA_MOPS_F64: "SQ_INSTS_VALU_MFMA_MOPS_F64" => "Matrix math operations on f64 inputs, in units of 512";
        THREAD_INSTS_VALU: "SQ_THREAD_INSTS_VALU"
            => "Active lanes summed over VALU instructions (the lane-level view of SQ_THREAD_CYCLES_VALU)";
        TCP_ACCESSES: "TCP_TOTAL_CACHE_ACCESSES"
            => "Vector L1 cache lines touched: per vector memory instruction to device memory, the distinct lines its \
               active lanes' addresses fall in (coalescing); the line size is the preset's L1 line";
        TA_FLAT_READ: "TA_FLAT_READ_WAVEFRONTS"
            => "FLAT-encoded (flat_, global_, scratch_) load instructions reaching device memory";
        TA_FLAT_WRITE: "TA_FLAT_WRITE_WAVEFRONTS"
            => "FLAT-encoded store and atomic instructions reaching device memory";
        LDS_IDX_ACTIVE: "SQ_LDS_IDX_ACTIVE"
            => "Cycles the LDS banks serve indexed DS accesses (one per phase, plus conflicts), from the lanes' \
               addresses";
        LDS_BANK_CONFLICT: "SQ_LDS_BANK_CONFLICT"
            => "Cycles lost to LDS bank conflicts (32 banks of 4 bytes, a broadcast of one dword free), from the \
               lanes' addresses";
    }
    modeled {
        GrbmCount: "GRBM_COUNT" => "Shader-clock cycles of the dispatch (the model's clock)";
        GrbmGuiActive: "GRBM_GUI_ACTIVE" => "Cycles the GPU was busy with the dispatch";
        SqWaveCycles: "SQ_WAVE_CYCLES" => "Wave-cycles: every wave's lifetime summed";
        SqBusyCycles: "SQ_BUSY_CYCLES" => "Cycles from the first wave's start to the last wave's end";
        SqWaitInstAny: "SQ_WAIT_INST_ANY"
            => "Wave-cycles waiting to issue, any reason (dependencies, s_waitcnt, barriers, busy units, fetch, \
               arbitration)";
        SqActiveInstValu: "SQ_ACTIVE_INST_VALU" => "Cycles the VALUs and matrix cores were busy, summed over SIMDs";
        SqActiveInstSalu: "SQ_ACTIVE_INST_SALU" => "Cycles the scalar ALUs were busy";
        SqActiveInstLds: "SQ_ACTIVE_INST_LDS" => "Cycles the LDS was busy";
        SqActiveInstVmem: "SQ_ACTIVE_INST_VMEM"
            => "Cycles the texture address units were busy issuing vector memory instructions";
        TcpTccReadReq: "TCP_TCC_READ_REQ"
            => "Vector L1 read misses sent to the L2, one per L1 line (the unit of TCP_TOTAL_CACHE_ACCESSES)";
        TcpTccWriteReq: "TCP_TCC_WRITE_REQ"
            => "Vector L1 writes sent to the L2 (write-through), one per L1 line written";
        TcpTccAtomicReq: "TCP_TCC_ATOMIC_REQ" => "Vector L1 atomics sent to the L2, one per L1 line";
        TccReq: "TCC_REQ"
            => "L2 requests from the vector L1, scalar cache and instruction cache, one per line of the cache asking \
               (a count, not a size)";
        TccHit: "TCC_HIT" => "L2 hits";
        TccMiss: "TCC_MISS" => "L2 misses";
        TccEaRdreq: "TCC_EA_RDREQ" => "L2 read requests to memory (line fills), in 64-byte units";
        TccEaWrreq: "TCC_EA_WRREQ" => "L2 write requests to memory (write-backs), in 64-byte units";
        MallHit: "MALL_HIT" => "Infinity Cache (MALL) hits (0 where the device has none)";
        MallMiss: "MALL_MISS" => "Infinity Cache (MALL) misses";
        HbmReadBytes: "HBM_READ_BYTES" => "Bytes read from device memory (HBM)";
        HbmWriteBytes: "HBM_WRITE_BYTES" => "Bytes written to device memory (HBM)";
        SqValuMfmaBusyCycles: "SQ_VALU_MFMA_BUSY_CYCLES" => "Cycles the matrix cores were busy, summed over SIMDs";
        SqActiveInstAny: "SQ_ACTIVE_INST_ANY"
            => "Wave-cycles from a wave's start to its end minus its stalled cycles (issuing or executing)";
    }
}

/// Every counter: the exact ones, then the modeled ones.
pub fn all() -> impl Iterator<Item = &'static CounterDef> {
    EXACT.iter().chain(MODELED)
}

/// rocprofv3's suffix for a counter summed over every instance of its block (XCDs, shader engines, channels:
/// its `reduce(X, sum)`). wavejit counts every counter over the whole device, so `X_sum` is `X`.
pub const SUM_SUFFIX: &str = "_sum";

/// The counter named `name` (case-insensitive), or named `X_sum` for counter `X` (see [`SUM_SUFFIX`]).
pub fn lookup(name: &str) -> Option<&'static CounterDef> {
    let base = all().find(|c| c.name.eq_ignore_ascii_case(name));
    base.or_else(|| {
        let cut = name.len().checked_sub(SUM_SUFFIX.len())?;
        let (head, tail) = (name.get(..cut)?, name.get(cut..)?);
        tail.eq_ignore_ascii_case(SUM_SUFFIX)
            .then(|| all().find(|c| c.name.eq_ignore_ascii_case(head)))
            .flatten()
    })
}

/// A counter as asked for: the name it is recorded under (`SQ_WAVES`, or rocprofv3's `SQ_WAVES_sum`, spelled
/// as the catalogue spells the counter) and the counter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selected {
    pub name: String,
    pub def: &'static CounterDef,
}

/// A counter list that cannot be collected.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum CounterError {
    #[error("unknown counter `{name}` (`wavejit profile --list-counters` lists them)")]
    Unknown { name: String },
    #[error("{names} come from the timing model: add --timing to collect them")]
    NeedsTiming { names: String },
}

/// The counters `list` names (comma- or space-separated; a name with rocprofv3's `_sum` suffix is recorded
/// under that name), or every counter this mode has when `list` is `None` (the exact ones; the modeled ones
/// too with `timing`). Modeled counters without `timing` are an error naming the flag.
pub fn select(list: Option<&str>, timing: bool) -> Result<Vec<Selected>, CounterError> {
    let Some(list) = list else {
        return Ok(all()
            .filter(|c| timing || c.source == Source::Exact)
            .map(|def| Selected {
                name: def.name.to_string(),
                def,
            })
            .collect());
    };
    let mut out: Vec<Selected> = Vec::new();
    for name in list.split([',', ' ']).map(str::trim).filter(|s| !s.is_empty()) {
        let def = lookup(name).ok_or_else(|| CounterError::Unknown { name: name.to_string() })?;
        let name = if def.name.eq_ignore_ascii_case(name) {
            def.name.to_string()
        } else {
            format!("{}{SUM_SUFFIX}", def.name)
        };
        if !out.iter().any(|s| s.name == name) {
            out.push(Selected { name, def });
        }
    }
    let mut needs: Vec<&str> = Vec::new();
    for c in out.iter().filter(|c| c.def.source == Source::Modeled) {
        if !needs.contains(&c.def.name) {
            needs.push(c.def.name);
        }
    }
    if !timing && !needs.is_empty() {
        return Err(CounterError::NeedsTiming {
            names: needs.join(", "),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rocprofv3s_sum_names_are_the_device_wide_counters_recorded_under_the_name_asked_for() {
        assert_eq!(lookup("SQ_WAVES_sum"), lookup("SQ_WAVES"));
        assert_eq!(lookup("sq_waves_SUM").map(|c| c.name), Some("SQ_WAVES"));
        assert_eq!(lookup("SQ_WAVES_summed"), None);
        assert_eq!(lookup("_sum"), None);
        let s = select(Some("SQ_WAVES_sum,SQ_WAVES,sq_waves_sum"), false).unwrap();
        assert_eq!(
            s.iter().map(|s| (s.name.as_str(), s.def.name)).collect::<Vec<_>>(),
            [("SQ_WAVES_sum", "SQ_WAVES"), ("SQ_WAVES", "SQ_WAVES")]
        );
    }

    #[test]
    fn names_are_unique_and_lookup_ignores_case() {
        let mut names: Vec<&str> = all().map(|c| c.name).collect();
        let n = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), n);
        assert_eq!(lookup("tcc_hit").map(|c| c.source), Some(Source::Modeled));
        assert_eq!(lookup("SQ_WAVES").map(|c| c.source), Some(Source::Exact));
    }

    #[test]
    fn modeled_counters_without_timing_are_refused_by_name() {
        let e = select(Some("SQ_WAVES,TCC_HIT,TCC_MISS"), false).unwrap_err();
        assert_eq!(
            e,
            CounterError::NeedsTiming {
                names: "TCC_HIT, TCC_MISS".into()
            }
        );
        assert!(e.to_string().contains("--timing"), "{e}");
        assert_eq!(select(Some("SQ_WAVES TCC_HIT"), true).unwrap().len(), 2);
        let sum = select(Some("tcc_hit_SUM"), false).unwrap_err();
        assert_eq!(
            sum,
            CounterError::NeedsTiming {
                names: "TCC_HIT".into()
            }
        );
        assert!(matches!(
            select(Some("SQ_NOPE"), true),
            Err(CounterError::Unknown { .. })
        ));
        assert!(select(None, false)
            .unwrap()
            .iter()
            .all(|c| c.def.source == Source::Exact));
        assert_eq!(select(None, true).unwrap().len(), EXACT.len() + MODELED.len());
    }
}

//! A dispatch's statistics as JSON: what `wavejit run --stats-json` writes and the Python package's
//! `Device.last.stats` holds.

use emu_core::engine::RunStats;
use emu_core::timing::TimingStats;
use profiler_hooks::ClassCounter;

/// What the JIT did during one dispatch.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct JitDelta {
    pub blocks: u64,
    pub compiled: u64,
    pub fallbacks: u64,
    /// Blocks loaded from the disk cache, and block runs on the interpreter tier.
    pub loaded: u64,
    pub interpreted: u64,
    /// Memory accesses of compiled code through the interpreter's checked path.
    pub checked_accesses: u64,
}

impl JitDelta {
    /// What `jit` did since its statistics were `before`.
    pub fn since(before: &jit::JitStats, jit: &jit::Jit) -> JitDelta {
        let after = jit.stats();
        JitDelta {
            blocks: after.blocks - before.blocks,
            compiled: after.compiled - before.compiled,
            fallbacks: after.fallbacks - before.fallbacks,
            loaded: after.loaded - before.loaded,
            interpreted: after.interpreted - before.interpreted,
            checked_accesses: after.checked_accesses - before.checked_accesses,
        }
    }
}

/// One dispatch as its statistics report it.
pub struct Report<'a> {
    pub kernel: &'a str,
    /// The device preset's id and the engine's name (`jit`, `interp`, `crosscheck`).
    pub device: &'a str,
    pub engine: &'a str,
    pub stats: &'a RunStats,
    pub memcheck: bool,
    /// Host seconds the dispatch took.
    pub seconds: f64,
    pub jit: JitDelta,
    pub timing: Option<&'a TimingStats>,
    /// Instructions per functional unit and vector lane operations, when the interpreter counted them.
    pub by_unit: Option<&'a ClassCounter>,
}

impl Report<'_> {
    /// The statistics: counts of workgroups, waves and instructions, the JIT's work, with `timing` the modeled
    /// cycles, time and the model's figures ([`timing_json`]), with `by_unit` `instructions_by_unit` and
    /// `vector_lane_ops`.
    pub fn json(&self) -> Result<serde_json::Value, serde_json::Error> {
        let (s, jd) = (self.stats, &self.jit);
        let mut j = serde_json::json!({
            "kernel": self.kernel,
            "device": self.device,
            "engine": self.engine,
            "workgroups": s.workgroups,
            "waves": s.waves,
            "wave_instructions": s.wave_instructions,
            "slack_accesses": s.slack,
            "memcheck": self.memcheck,
            "seconds": self.seconds,
            "jit_blocks": jd.blocks,
            "jit_compiled_instructions": jd.compiled,
            "jit_fallbacks": jd.fallbacks,
            "jit_loaded_blocks": jd.loaded,
            "jit_interpreted_block_runs": jd.interpreted,
        });
        if let Some(t) = self.timing {
            let (cycles, ns, all) = timing_json(t)?;
            j["cycles"] = cycles;
            j["ns"] = ns;
            j["timing"] = all;
        }
        if let Some(c) = self.by_unit {
            j["instructions_by_unit"] = serde_json::json!(c
                .counts()
                .into_iter()
                .map(|(u, n)| (u.name(), n))
                .collect::<std::collections::BTreeMap<_, _>>());
            j["vector_lane_ops"] = serde_json::json!(c.vector_lanes());
        }
        Ok(j)
    }
}

/// The `--stats-json` fields of a timed dispatch: `cycles`, `ns` and `timing` (occupancy, issued and busy per
/// unit, stalls by reason, every memory level's counters with its hit rate, LDS bank-conflict cycles).
pub fn timing_json(
    t: &TimingStats,
) -> Result<(serde_json::Value, serde_json::Value, serde_json::Value), serde_json::Error> {
    let mut timing = serde_json::to_value(t)?;
    if let Some(memory) = timing.get_mut("memory").and_then(|m| m.as_object_mut()) {
        for (name, level) in t.levels() {
            if let Some(obj) = memory.get_mut(name).and_then(|v| v.as_object_mut()) {
                obj.insert("hit_rate".into(), serde_json::json!(level.hit_rate()));
                obj.insert(
                    "bytes_moved".into(),
                    serde_json::json!(level.bytes_read + level.bytes_written),
                );
            }
        }
    }
    Ok((serde_json::json!(t.cycles), serde_json::json!(t.ns), timing))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_report_has_the_run_counts_and_the_timing_and_unit_figures_only_when_given() {
        let stats = RunStats {
            workgroups: 2,
            waves: 8,
            wave_instructions: 100,
            ..RunStats::default()
        };
        let report = |timing, by_unit| Report {
            kernel: "k",
            device: "mi300x",
            engine: "interp",
            stats: &stats,
            memcheck: false,
            seconds: 0.5,
            jit: JitDelta::default(),
            timing,
            by_unit,
        };
        let plain = report(None, None).json().unwrap();
        assert_eq!(plain["wave_instructions"], 100);
        assert_eq!(plain["workgroups"], 2);
        assert_eq!(plain["device"], "mi300x");
        for absent in ["cycles", "ns", "timing", "instructions_by_unit", "vector_lane_ops"] {
            assert!(plain.get(absent).is_none(), "{absent}");
        }
        let t = TimingStats {
            cycles: 1234,
            ns: 584.0,
            ..TimingStats::default()
        };
        let counter = ClassCounter::default();
        let full = report(Some(&t), Some(&counter)).json().unwrap();
        assert_eq!(full["cycles"], 1234);
        assert_eq!(full["ns"], 584.0);
        assert!(
            full["timing"]["memory"]["l2"]["hit_rate"].is_number(),
            "{}",
            full["timing"]
        );
        assert!(full["instructions_by_unit"].is_object());
        assert_eq!(full["vector_lane_ops"], 0);
    }
}

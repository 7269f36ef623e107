//! A dispatch's statistics as JSON: what `wavejit run --stats-json` writes and the Python package's
//! `Device.last.stats` holds.

use emu_core::timing::TimingStats;

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

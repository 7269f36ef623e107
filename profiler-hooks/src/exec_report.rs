//! What a program under `wavejit exec` dispatched, handed from the runtime shim inside the program to the
//! `wavejit exec` that started it: per kernel, its dispatches, and in timing mode their modeled time.
//!
//! `wavejit exec` names a directory in [`VAR`]; the shim of each process of the program writes
//! `<pid>.json` there when the process exits (an [`ExecReport`]), and exec reads them all once the program has
//! ended ([`read_dir`]). A process that ends abnormally (a fault's abort, a signal) writes none.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

/// The environment variable naming the report directory.
pub const VAR: &str = "WAVEJIT_EXEC_REPORT";

/// One kernel's dispatches.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelReport {
    pub dispatches: u64,
    /// Dispatches that ended with a fault.
    pub failed: u64,
    pub wave_instructions: u64,
    /// In timing mode: the modeled time and cycles of the dispatches, summed.
    pub modeled_ns: u64,
    pub cycles: u64,
}

/// A process's report: its kernels by symbol, and whether it ran in timing mode.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecReport {
    pub timing: bool,
    pub kernels: BTreeMap<String, KernelReport>,
}

impl ExecReport {
    /// Adds `other`'s dispatches to these.
    pub fn merge(&mut self, other: ExecReport) {
        self.timing |= other.timing;
        for (k, r) in other.kernels {
            let e = self.kernels.entry(k).or_default();
            e.dispatches += r.dispatches;
            e.failed += r.failed;
            e.wave_instructions += r.wave_instructions;
            e.modeled_ns += r.modeled_ns;
            e.cycles += r.cycles;
        }
    }

    /// Writes this report as `dir/<pid>.json`.
    pub fn write(&self, dir: &Path, pid: u32) -> std::io::Result<()> {
        let text = serde_json::to_string(self).map_err(std::io::Error::other)?;
        std::fs::write(dir.join(format!("{pid}.json")), text)
    }
}

/// The reports of every process that wrote one into `dir`, merged, and how many processes wrote one.
pub fn read_dir(dir: &Path) -> (ExecReport, usize) {
    let mut all = ExecReport::default();
    let mut n = 0;
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = entry.path();
        if p.extension().is_some_and(|e| e == "json") {
            if let Some(r) = std::fs::read(&p)
                .ok()
                .and_then(|b| serde_json::from_slice::<ExecReport>(&b).ok())
            {
                all.merge(r);
                n += 1;
            }
        }
    }
    (all, n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_of_several_processes_merge_by_kernel() {
        let dir = std::env::temp_dir().join(format!("wavejit-exec-report-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let one = |k: &str, ns| {
            let mut r = ExecReport {
                timing: true,
                ..Default::default()
            };
            r.kernels.insert(
                k.into(),
                KernelReport {
                    dispatches: 1,
                    modeled_ns: ns,
                    ..Default::default()
                },
            );
            r
        };
        one("a", 10).write(&dir, 1).unwrap();
        one("a", 5).write(&dir, 2).unwrap();
        one("b", 7).write(&dir, 3).unwrap();
        std::fs::write(dir.join("junk.json"), "{").unwrap();
        let (r, n) = read_dir(&dir);
        assert_eq!(n, 3);
        assert_eq!(r.kernels["a"].dispatches, 2);
        assert_eq!(r.kernels["a"].modeled_ns, 15);
        assert_eq!(r.kernels["b"].modeled_ns, 7);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

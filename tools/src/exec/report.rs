//! What `wavejit exec` says after the program ends, from the dispatch reports its processes wrote
//! (`profiler_hooks::exec_report`): that a kernel `--debug` or `--trace-html` named was never dispatched, and in
//! timing mode the modeled time of every kernel.

use std::fmt::Write;

use isa_amdgpu::codeobj::names;
use profiler_hooks::exec_report::ExecReport;

/// The error for `--debug`/`--trace-html` naming a kernel (`what` says which option) that no process dispatched.
pub fn never_dispatched(report: &ExecReport, processes: usize, option: &str, kernel: &str) -> Option<String> {
    if report.kernels.keys().any(|k| names::matches(k, kernel)) {
        return None;
    }
    let ran: Vec<String> = report.kernels.keys().map(|k| names::demangle(k)).collect();
    let which = if ran.is_empty() && processes == 0 {
        "the program dispatched no kernel (or ended before it could say which)".to_string()
    } else if ran.is_empty() {
        "the program dispatched no kernel".to_string()
    } else {
        format!("it dispatched: {}", ran.join(", "))
    };
    Some(format!(
        "{option} {kernel}: no kernel of that name was dispatched; {which}"
    ))
}

/// The modeled-time table of a timing-mode run: per kernel its dispatches, modeled time (total and mean) and
/// cycles, longest first; `None` when nothing ran in the timing model.
pub fn timing_summary(report: &ExecReport) -> Option<String> {
    if !report.timing || report.kernels.is_empty() {
        return None;
    }
    let mut rows: Vec<(String, &profiler_hooks::exec_report::KernelReport)> =
        report.kernels.iter().map(|(k, r)| (names::demangle(k), r)).collect();
    rows.sort_by(|a, b| b.1.modeled_ns.cmp(&a.1.modeled_ns).then_with(|| a.0.cmp(&b.0)));
    let width = rows.iter().map(|r| r.0.chars().count()).max().unwrap_or(6).clamp(6, 60);
    let mut s = String::from("wavejit: modeled time per kernel (timing model):\n");
    let _ = writeln!(
        s,
        "  {:width$}  {:>10}  {:>12}  {:>12}  {:>14}",
        "kernel", "dispatches", "total", "mean", "cycles"
    );
    let (mut all_ns, mut all_n) = (0u64, 0u64);
    for (name, r) in &rows {
        let shown: String = if name.chars().count() > width {
            name.chars().take(width - 1).chain(['…']).collect()
        } else {
            name.clone()
        };
        let _ = writeln!(
            s,
            "  {shown:width$}  {:>10}  {:>12}  {:>12}  {:>14}",
            r.dispatches,
            time(r.modeled_ns),
            time(r.modeled_ns / r.dispatches.max(1)),
            r.cycles
        );
        all_ns += r.modeled_ns;
        all_n += r.dispatches;
    }
    let _ = writeln!(s, "  {:width$}  {:>10}  {:>12}", "all kernels", all_n, time(all_ns));
    Some(s)
}

/// Nanoseconds as a person reads them.
fn time(ns: u64) -> String {
    match ns {
        0..10_000 => format!("{ns} ns"),
        10_000..10_000_000 => format!("{:.1} us", ns as f64 / 1e3),
        10_000_000..10_000_000_000 => format!("{:.2} ms", ns as f64 / 1e6),
        _ => format!("{:.2} s", ns as f64 / 1e9),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use profiler_hooks::exec_report::KernelReport;

    fn report(kernels: &[(&str, u64, u64)]) -> ExecReport {
        ExecReport {
            timing: true,
            kernels: kernels
                .iter()
                .map(|&(k, n, ns)| {
                    (
                        k.to_string(),
                        KernelReport {
                            dispatches: n,
                            modeled_ns: ns,
                            ..Default::default()
                        },
                    )
                })
                .collect(),
        }
    }

    #[test]
    fn a_kernel_never_dispatched_is_named_with_those_that_were() {
        let r = report(&[("_Z4vaddPfS_S_i", 1, 10)]);
        assert_eq!(never_dispatched(&r, 1, "--debug", "vadd"), None);
        assert_eq!(never_dispatched(&r, 1, "--debug", "_Z4vaddPfS_S_i"), None);
        let e = never_dispatched(&r, 1, "--debug", "vsub").unwrap();
        assert_eq!(
            e,
            "--debug vsub: no kernel of that name was dispatched; it dispatched: vadd(float*, float*, float*, int)"
        );
        let e = never_dispatched(&ExecReport::default(), 0, "--trace-html", "k").unwrap();
        assert!(e.contains("dispatched no kernel"), "{e}");
    }

    #[test]
    fn the_timing_summary_lists_kernels_longest_first_with_totals() {
        let s = timing_summary(&report(&[("a", 2, 3_000), ("_Z1bv", 1, 20_000)])).unwrap();
        let lines: Vec<&str> = s.lines().collect();
        assert!(
            lines[2].trim_start().starts_with("b()") && lines[2].contains("20.0 us"),
            "{s}"
        );
        assert!(
            lines[3].trim_start().starts_with("a ") && lines[3].contains("1500 ns"),
            "{s}"
        );
        assert!(lines[4].contains("all kernels") && lines[4].contains("23.0 us"), "{s}");
        assert_eq!(timing_summary(&ExecReport::default()), None);
    }
}

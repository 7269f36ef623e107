//! `--timing`: the timing model's statistics as a short human summary (`gpu::stats` has them as JSON).

use emu_core::timing::TimingStats;

fn mib(bytes: u64) -> String {
    let m = bytes as f64 / (1u64 << 20) as f64;
    if m >= 10.0 {
        format!("{m:.0} MiB")
    } else if m >= 0.01 {
        format!("{m:.2} MiB")
    } else {
        format!("{} KiB", bytes.div_ceil(1024))
    }
}

fn count(n: u64) -> String {
    match n {
        0..10_000 => n.to_string(),
        10_000..10_000_000 => format!("{:.1}k", n as f64 / 1e3),
        _ => format!("{:.1}M", n as f64 / 1e6),
    }
}

/// A few lines on where the modeled time went.
pub fn summary(t: &TimingStats) -> String {
    let o = &t.occupancy;
    let mut s = format!(
        "timing ({} model): {} cycles = {:.2} us at {} MHz\n  occupancy {:.0}% ({:.1} waves per CU on average), kernel limit {} of {} waves per SIMD (by {})\n",
        t.device,
        t.cycles,
        t.ns / 1e3,
        t.shader_mhz,
        o.achieved * 100.0,
        o.mean_waves_per_cu,
        o.limit_waves_per_simd,
        o.max_waves_per_simd,
        o.limited_by
    );
    let units = |p: &emu_core::timing::stats::PerUnit| {
        [
            ("valu", p.valu),
            ("mfma", p.mfma),
            ("salu", p.salu),
            ("smem", p.smem),
            ("vmem", p.vmem),
            ("lds", p.lds),
            ("branch", p.branch),
            ("internal", p.internal),
        ]
        .into_iter()
        .filter(|(_, n)| *n > 0)
        .map(|(u, n)| format!("{u} {}", count(n)))
        .collect::<Vec<_>>()
        .join(", ")
    };
    s += &format!("  issued: {}\n  busy cycles: {}\n", units(&t.issued), units(&t.busy));
    let st = &t.stalls;
    let reasons: Vec<String> = [
        ("vmcnt", st.vmcnt),
        ("lgkmcnt", st.lgkmcnt),
        ("barrier", st.barrier),
        ("dependency", st.dependency),
        ("unit busy", st.unit_busy),
        ("fetch", st.fetch),
        ("sleep", st.sleep),
        ("arbitration", st.arbitration),
    ]
    .into_iter()
    .filter(|(_, n)| *n > 0)
    .map(|(r, n)| format!("{r} {}", count(n)))
    .collect();
    s += &format!(
        "  stall wave-cycles: {}\n",
        if reasons.is_empty() {
            "none".to_string()
        } else {
            reasons.join(", ")
        }
    );
    let levels: Vec<String> = t
        .levels()
        .into_iter()
        .filter(|(_, l)| l.requests > 0)
        .map(|(name, l)| {
            if name == "hbm" {
                format!("hbm {} read, {} written", mib(l.bytes_read), mib(l.bytes_written))
            } else {
                format!(
                    "{name} {:.0}% hits ({} read, {} written)",
                    l.hit_rate() * 100.0,
                    mib(l.bytes_read),
                    mib(l.bytes_written)
                )
            }
        })
        .collect();
    s += &format!(
        "  memory: {}\n  LDS bank-conflict cycles: {}",
        levels.join("; "),
        t.lds_bank_conflict_cycles
    );
    s
}

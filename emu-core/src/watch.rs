//! Watching long dispatches: progress a person can see, and a timeout.
//!
//! Every dispatch run through [`crate::engine::run_launch`] (functionally or in the timing model) has a
//! [`Progress`]: waves done and resident, instructions so far, and a flag that stops it. One watchdog thread per
//! process looks at the dispatches in flight a few times a second. A dispatch that has run longer than
//! [`Watch::report_after`] gets a report on stderr every [`Watch::every`] — on a terminal one line rewritten in
//! place (and cleared when the dispatch ends), otherwise a plain line each time, for logs and CI. A dispatch that
//! runs past [`Watch::timeout`] is stopped: the engines see [`Progress::stopped`] between blocks (compiled code
//! returns to its runner at least every [`CHUNK`] instructions while it is watched) and the dispatch fails with
//! [`crate::engine::EngineError::Timeout`], naming where each wave still running was.
//!
//! Watching changes no result: waves run the same instructions in the same order; only how often compiled
//! code returns to its runner differs.

use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

/// The most instructions a watched wave runs in compiled code before its runner looks at the dispatch's
/// [`Progress`] again (about a hundredth of a second of one host core on the JIT).
pub const CHUNK: u64 = 1 << 22;

/// How long dispatches are watched: when reports start, how often they come, and when a dispatch is stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Watch {
    pub report_after: Duration,
    pub every: Duration,
    /// Stop a dispatch that has run this long (`None`: never).
    pub timeout: Option<Duration>,
}

impl Default for Watch {
    fn default() -> Self {
        Watch {
            report_after: Duration::from_secs(5),
            every: Duration::from_secs(5),
            timeout: None,
        }
    }
}

/// The environment variable programs started by test harnesses set a timeout with (seconds, fractions
/// allowed; `wavejit` commands' `--timeout` sets it for the programs they run).
pub const TIMEOUT_VAR: &str = "WAVEJIT_TIMEOUT";

/// The environment variable that sets how long a dispatch runs before its first progress report, and the time
/// between reports (seconds; 0: no reports).
pub const PROGRESS_VAR: &str = "WAVEJIT_PROGRESS";

impl Watch {
    /// The default watch with the timeout `WAVEJIT_TIMEOUT` sets and the report interval of
    /// `WAVEJIT_PROGRESS` (seconds; empty or 0: none).
    pub fn from_env() -> Result<Watch, String> {
        Watch::from_vars(&|name| std::env::var(name).ok())
    }

    /// [`Watch::from_env`] with `var` looking the variables up.
    pub fn from_vars(var: &dyn Fn(&str) -> Option<String>) -> Result<Watch, String> {
        let read = |name: &str| match var(name) {
            None => Ok(None),
            Some(v) => parse_timeout(&v).map(Some).map_err(|e| format!("{name}={v}: {e}")),
        };
        let timeout = read(TIMEOUT_VAR)?.flatten();
        let mut w = Watch {
            timeout,
            ..Watch::default()
        };
        match read(PROGRESS_VAR)? {
            None => {}
            Some(None) => (w.report_after, w.every) = (Duration::MAX, Duration::MAX),
            Some(Some(d)) => (w.report_after, w.every) = (d, d),
        }
        Ok(w)
    }
}

/// A timeout as people write it: seconds (`30`, `2.5`), `0` or empty for none.
pub fn parse_timeout(text: &str) -> Result<Option<Duration>, String> {
    let t = text.trim();
    if t.is_empty() {
        return Ok(None);
    }
    let secs: f64 = t
        .strip_suffix('s')
        .unwrap_or(t)
        .parse()
        .map_err(|_| "expected a number of seconds (0: no timeout)".to_string())?;
    if !secs.is_finite() || secs < 0.0 {
        return Err("expected a number of seconds (0: no timeout)".into());
    }
    Ok((secs > 0.0).then(|| Duration::from_secs_f64(secs)))
}

/// A dispatch in flight, as the watchdog and the engines see it.
#[derive(Debug)]
pub struct Progress {
    kernel: String,
    waves_total: u64,
    started: Instant,
    watch: Watch,
    waves_done: AtomicU64,
    waves_resident: AtomicU64,
    instructions: AtomicU64,
    stop: AtomicBool,
    /// The per-wave instruction limit, for the reports' hint.
    limit: u64,
    /// Where each wave was when the dispatch was stopped: (workgroup, wave, pc).
    stopped_at: Mutex<Vec<([u32; 3], u32, u64)>>,
    /// Whether a report of this dispatch is showing on the terminal (to be cleared when it ends).
    on_terminal: AtomicBool,
}

impl Progress {
    /// The progress of a dispatch of `kernel` with `waves_total` waves, watched by the process's watchdog.
    pub fn start(kernel: &str, waves_total: u64, watch: Watch, limit: u64) -> Arc<Progress> {
        let p = Arc::new(Progress {
            kernel: isa_amdgpu::codeobj::names::demangle(kernel),
            waves_total,
            started: Instant::now(),
            watch,
            waves_done: AtomicU64::new(0),
            waves_resident: AtomicU64::new(0),
            instructions: AtomicU64::new(0),
            stop: AtomicBool::new(false),
            limit,
            stopped_at: Mutex::new(Vec::new()),
            on_terminal: AtomicBool::new(false),
        });
        watchdog().register(&p);
        p
    }

    /// Whether the dispatch is to stop (its timeout passed): engines look between blocks.
    #[inline]
    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// Stops the dispatch (as its timeout does).
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }

    /// Adds what `wave` executed since it was last noted.
    #[inline]
    pub fn note(&self, wave: &mut crate::wave::WaveState) {
        let new = wave.executed.saturating_sub(wave.reported);
        if new > 0 {
            self.instructions.fetch_add(new, Ordering::Relaxed);
            wave.reported = wave.executed;
        }
    }

    /// `n` waves became resident.
    pub fn resident(&self, n: u64) {
        self.waves_resident.fetch_add(n, Ordering::Relaxed);
    }

    /// `n` resident waves ended.
    pub fn done(&self, n: u64) {
        self.waves_resident.fetch_sub(n, Ordering::Relaxed);
        self.waves_done.fetch_add(n, Ordering::Relaxed);
    }

    /// Records where a wave was when the dispatch stopped.
    pub fn stopped_wave(&self, workgroup: [u32; 3], wave: u32, pc: u64) {
        self.stopped_at
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((workgroup, wave, pc));
    }

    /// Where the waves were when the dispatch stopped, in dispatch order.
    pub fn stopped_waves(&self) -> Vec<([u32; 3], u32, u64)> {
        let mut v = self.stopped_at.lock().unwrap_or_else(|e| e.into_inner()).clone();
        v.sort_by_key(|(wg, w, _)| ([wg[2], wg[1], wg[0]], *w));
        v
    }

    /// (waves done, waves resident, instructions so far).
    pub fn counts(&self) -> (u64, u64, u64) {
        (
            self.waves_done.load(Ordering::Relaxed),
            self.waves_resident.load(Ordering::Relaxed),
            self.instructions.load(Ordering::Relaxed),
        )
    }

    /// Waves in the whole dispatch.
    pub fn total(&self) -> u64 {
        self.waves_total
    }

    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    pub fn timeout(&self) -> Option<Duration> {
        self.watch.timeout
    }

    /// The report line: kernel, time, waves, instructions, and how to change the limits.
    fn line(&self) -> String {
        let (done, resident, instructions) = self.counts();
        let limit = if self.limit == u64::MAX {
            "no per-wave instruction limit".to_string()
        } else {
            format!("per-wave limit {} instructions", si(self.limit))
        };
        let timeout = match self.watch.timeout {
            Some(t) => format!("stopped at {}", seconds(t)),
            None => "--timeout SECS or WAVEJIT_TIMEOUT stops it".to_string(),
        };
        format!(
            "wavejit: kernel {} running for {}: {done} of {} waves done, {resident} resident, {} instructions so far ({limit}: --max-instructions or WAVEJIT_MAX_INSTRUCTIONS; {timeout})",
            self.kernel,
            seconds(self.started.elapsed()),
            self.waves_total,
            si(instructions),
        )
    }
}

impl Progress {
    /// The report as one terminal row of `width` columns, redrawn in place: the counts first, the kernel's name
    /// cut to fit (a wrapped row would stay behind in the scrollback, as `\r` returns only to its last row).
    fn row(&self, width: usize) -> String {
        let (done, resident, instructions) = self.counts();
        let head = format!(
            "wavejit: {}: {done} of {} waves done, {resident} resident, {} instructions (--timeout, \
             --max-instructions): kernel ",
            seconds(self.started.elapsed()),
            self.waves_total,
            si(instructions),
        );
        fit(&(head + &self.kernel), width.saturating_sub(1).max(20))
    }
}

/// `text` cut to `columns` characters, the last of them `…` where it was cut.
fn fit(text: &str, columns: usize) -> String {
    if text.chars().count() <= columns {
        return text.to_string();
    }
    let mut cut: String = text.chars().take(columns - 1).collect();
    cut.push('…');
    cut
}

/// The width of the terminal on stderr, 80 where it does not say.
fn terminal_width() -> usize {
    // SAFETY: TIOCGWINSZ writes a winsize into the struct it is given, which lives through the call.
    let mut size: libc::winsize = unsafe { std::mem::zeroed() };
    // SAFETY: as above; the descriptor is only inspected.
    let ok = unsafe { libc::ioctl(2, libc::TIOCGWINSZ, &mut size) } == 0;
    if ok && size.ws_col > 0 {
        size.ws_col as usize
    } else {
        80
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if self.on_terminal.load(Ordering::Relaxed) {
            let _guard = PRINT.lock().unwrap_or_else(|e| e.into_inner());
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[K");
            let _ = err.flush();
        }
    }
}

/// `n` with an SI prefix (1.2 G).
fn si(n: u64) -> String {
    match n {
        0..1_000 => n.to_string(),
        1_000..1_000_000 => format!("{:.1} k", n as f64 / 1e3),
        1_000_000..1_000_000_000 => format!("{:.1} M", n as f64 / 1e6),
        _ => format!("{:.1} G", n as f64 / 1e9),
    }
}

fn seconds(d: Duration) -> String {
    format!("{:.0} s", d.as_secs_f64())
}

/// Serializes the watchdog's writes to stderr with the clearing of a finished dispatch's line.
static PRINT: Mutex<()> = Mutex::new(());

/// The process's watchdog: the dispatches in flight, looked at by one thread.
struct Watchdog {
    live: Mutex<Vec<(Weak<Progress>, Instant)>>,
}

fn watchdog() -> &'static Watchdog {
    static W: std::sync::OnceLock<&'static Watchdog> = std::sync::OnceLock::new();
    W.get_or_init(|| {
        let w: &'static Watchdog = Box::leak(Box::new(Watchdog {
            live: Mutex::new(Vec::new()),
        }));
        let spawned = std::thread::Builder::new()
            .name("wavejit-watchdog".into())
            .spawn(move || w.watch());
        if let Err(e) = spawned {
            eprintln!("wavejit: no watchdog for long dispatches ({e}): no progress reports, no timeouts");
        }
        w
    })
}

fn is_terminal() -> bool {
    // SAFETY: isatty only inspects the descriptor.
    unsafe { libc::isatty(2) == 1 }
}

impl Watchdog {
    fn register(&self, p: &Arc<Progress>) {
        self.live
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((Arc::downgrade(p), Instant::now()));
    }

    fn watch(&self) {
        let terminal = is_terminal();
        loop {
            std::thread::sleep(Duration::from_millis(200));
            let due: Vec<Arc<Progress>> = {
                let mut live = self.live.lock().unwrap_or_else(|e| e.into_inner());
                live.retain(|(w, _)| w.strong_count() > 0);
                let now = Instant::now();
                let mut due = Vec::new();
                for (w, last) in live.iter_mut() {
                    let Some(p) = w.upgrade() else { continue };
                    let age = p.started.elapsed();
                    if p.watch.timeout.is_some_and(|t| age >= t) && !p.stopped() {
                        p.stop();
                    }
                    // `last` starts as the time the dispatch registered
                    if age >= p.watch.report_after && now.duration_since(*last) >= p.watch.every {
                        *last = now;
                        due.push(p);
                    }
                }
                due
            };
            if due.is_empty() {
                continue;
            }
            let _guard = PRINT.lock().unwrap_or_else(|e| e.into_inner());
            let mut err = std::io::stderr().lock();
            for p in due {
                // on a terminal the last dispatch reported holds the line; otherwise a line per report
                if terminal {
                    let _ = write!(err, "\r\x1b[K{}", p.row(terminal_width()));
                    p.on_terminal.store(true, Ordering::Relaxed);
                } else {
                    let _ = writeln!(err, "{}", p.line());
                }
            }
            let _ = err.flush();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_read_as_seconds_and_zero_or_empty_is_none() {
        assert_eq!(parse_timeout("30").unwrap(), Some(Duration::from_secs(30)));
        assert_eq!(parse_timeout(" 2.5s ").unwrap(), Some(Duration::from_millis(2500)));
        assert_eq!(parse_timeout("0").unwrap(), None);
        assert_eq!(parse_timeout("").unwrap(), None);
        assert!(parse_timeout("-1").is_err());
        assert!(parse_timeout("soon").is_err());
    }

    #[test]
    fn the_terminal_row_fits_its_width_with_the_counts_before_the_kernel_name() {
        let name = "void csrsv_analysis_lower_kernel<1024u, 64u, false, int, int>(int, int const*, int const*)";
        let p = Progress::start(name, 192, Watch::default(), u64::MAX);
        p.resident(48);
        p.done(48);
        for width in [40, 80, 200] {
            let row = p.row(width);
            assert!(row.chars().count() < width, "{width}: {row}");
            assert!(row.starts_with("wavejit: 0 s: 48 of 192 waves"), "{row}");
        }
        assert!(p
            .row(80)
            .starts_with("wavejit: 0 s: 48 of 192 waves done, 0 resident, 0 instructions"));
        assert!(p.row(80).ends_with('…'));
        assert!(p.row(400).ends_with(name));
        assert_eq!(fit("abcdef", 4), "abc…");
        assert_eq!(fit("abc", 4), "abc");
    }

    #[test]
    fn a_watched_dispatch_past_its_timeout_is_stopped_by_the_watchdog() {
        let watch = Watch {
            timeout: Some(Duration::from_millis(100)),
            ..Watch::default()
        };
        let p = Progress::start("k", 1, watch, u64::MAX);
        let until = Instant::now() + Duration::from_secs(10);
        while !p.stopped() && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(p.stopped());
        let q = Progress::start("k", 1, Watch::default(), u64::MAX);
        std::thread::sleep(Duration::from_millis(500));
        assert!(!q.stopped());
    }
}

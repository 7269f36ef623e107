//! What the JIT is told ([`JitOptions`]: tiers, background translation, the disk cache) and what it reports
//! ([`JitStats`]: blocks translated, loaded, interpreted, and the time it took).

use crate::disk::DiskConfig;

/// Counters of what the JIT did (all dispatches so far).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct JitStats {
    /// Blocks translated (by Cranelift; blocks loaded from the disk cache are `loaded`).
    pub blocks: u64,
    /// Instructions in them that were compiled, and that were left to the interpreter.
    pub compiled: u64,
    pub not_compiled: u64,
    /// Instructions executed by the interpreter on behalf of compiled blocks.
    pub fallbacks: u64,
    /// Memory accesses of compiled instructions made through the interpreter's checked path: a site's first
    /// access in a wave, lanes outside the memory its last access found, or memory compiled code does not
    /// reach directly (another workgroup's private memory, an access that needs more than a lane check).
    pub checked_accesses: u64,
    /// Nanoseconds spent translating (front end and code generation of the `blocks`).
    pub translate_ns: u64,
    /// Blocks whose code came from the disk cache, their instructions, and the nanoseconds spent loading them
    /// (front end, reading, relocating).
    pub loaded: u64,
    pub loaded_insts: u64,
    pub load_ns: u64,
    /// Translated blocks written to the disk cache.
    pub stored: u64,
    /// Block runs on the interpreter tier (blocks not hot yet).
    pub interpreted: u64,
}

impl std::fmt::Display for JitStats {
    /// One line: what was translated, loaded, stored and interpreted, and what it cost.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let insts = self.compiled + self.not_compiled;
        write!(
            f,
            "{} blocks translated ({} instructions, {:.1} ms, {:.1} us per instruction), {} loaded from the disk cache ({} instructions, {:.1} ms), {} stored, {} block runs interpreted before their blocks were hot, {} instructions left to the interpreter by compiled blocks, {} of their memory accesses through the interpreter's checked path",
            self.blocks,
            insts,
            self.translate_ns as f64 / 1e6,
            self.translate_ns as f64 / 1e3 / insts.max(1) as f64,
            self.loaded,
            self.loaded_insts,
            self.load_ns as f64 / 1e6,
            self.stored,
            self.interpreted,
            self.fallbacks,
            self.checked_accesses
        )
    }
}

/// How the JIT chooses between interpreting and translating, and where it keeps translations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JitOptions {
    /// Entries into a block that run on the interpreter before it is translated (0: translate on first use).
    pub hot_after: u32,
    /// The same for a block the disk cache holds.
    pub hot_after_cached: u32,
    /// Translate hot blocks on a background thread (the interpreter runs them meanwhile) instead of on the
    /// thread that found them hot.
    pub background: bool,
    /// Keep translations on disk for other processes.
    pub disk: Option<DiskConfig>,
}

impl JitOptions {
    /// Every block translated on first use, nothing kept on disk: what the tests and the crosscheck use (every
    /// block runs compiled).
    pub fn eager() -> JitOptions {
        JitOptions {
            hot_after: 0,
            hot_after_cached: 0,
            background: false,
            disk: None,
        }
    }

    /// The default engine: tiered, with the thresholds measured on this repository's programs (README,
    /// "Translation cost"), and the disk cache of [`DiskConfig::from_env`].
    pub fn tiered() -> JitOptions {
        JitOptions {
            hot_after: 3000,
            hot_after_cached: 150,
            background: true,
            disk: DiskConfig::from_env(),
        }
    }

    /// [`JitOptions::tiered`] with the thresholds and background translation adjustable for measurements:
    /// `WAVEJIT_JIT_HOT=N[,M]` (entries before translating; M for cached blocks), `WAVEJIT_JIT_BACKGROUND=0|1`.
    pub fn from_env() -> JitOptions {
        let mut o = JitOptions::tiered();
        if let Ok(v) = std::env::var("WAVEJIT_JIT_HOT") {
            let mut parts = v.split(',').map(|p| p.trim().parse::<u32>());
            if let Some(Ok(n)) = parts.next() {
                o.hot_after = n;
                o.hot_after_cached = n.min(o.hot_after_cached);
            }
            if let Some(Ok(m)) = parts.next() {
                o.hot_after_cached = m;
            }
        }
        if let Ok(v) = std::env::var("WAVEJIT_JIT_BACKGROUND") {
            o.background = v.trim() != "0";
        }
        o
    }
}

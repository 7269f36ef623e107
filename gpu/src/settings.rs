//! What a program on emulated GPUs is run with, from the environment `wavejit exec` gives it (also set by hand):
//!
//! | variable | meaning | default |
//! |---|---|---|
//! | `WAVEJIT_DEVICES` | emulated GPUs, comma-separated presets | `mi210` |
//! | `WAVEJIT_ENGINE` | `jit`, `interp` or `crosscheck` | `jit` |
//! | `WAVEJIT_TIMING` | `1`: dispatches run in the timing model | off |
//! | `WAVEJIT_MEMCHECK` | `1`: every byte outside an allocation faults | off |
//! | `WAVEJIT_MAX_INSTRUCTIONS` | instructions per wave, `0`/`none` for no limit | 10 billion |
//! | `WAVEJIT_TIMEOUT`, `WAVEJIT_PROGRESS` | [`emu_core::watch`] | none, 5 s |
//!
//! A value that means nothing is an error naming the variable, never a silent default.

use emu_core::engine::DEFAULT_MAX_WAVE_INSTRUCTIONS;
use emu_core::watch::Watch;
use emu_core::DevicePreset;

/// Which engine runs kernels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EngineChoice {
    Jit,
    Interp,
    /// Both, every block compared.
    Crosscheck,
}

/// The settings of a process on emulated GPUs.
#[derive(Debug, Clone)]
pub struct Settings {
    pub devices: Vec<&'static DevicePreset>,
    pub engine: EngineChoice,
    pub timing: bool,
    pub memcheck: bool,
    /// Per-wave instruction limit (`u64::MAX`: none).
    pub max_wave_instructions: u64,
    pub watch: Watch,
}

impl Settings {
    /// The settings the environment gives.
    pub fn from_env() -> Result<Settings, String> {
        let var = |name: &str| std::env::var(name).ok();
        Settings::from_vars(&var)
    }

    /// The settings `var` (a lookup of environment variables) gives.
    pub fn from_vars(var: &dyn Fn(&str) -> Option<String>) -> Result<Settings, String> {
        let devices = devices(
            var("WAVEJIT_DEVICES")
                .as_deref()
                .unwrap_or(DevicePreset::program_default().id),
        )?;
        let engine = match var("WAVEJIT_ENGINE").as_deref().map(str::trim) {
            None | Some("" | "jit") => EngineChoice::Jit,
            Some("interp") => EngineChoice::Interp,
            Some("crosscheck") => EngineChoice::Crosscheck,
            Some(other) => return Err(format!("WAVEJIT_ENGINE={other}: expected jit, interp or crosscheck")),
        };
        let flag = |name: &str, what: &str| match var(name).as_deref() {
            None | Some("" | "0") => Ok(false),
            Some("1") => Ok(true),
            Some(other) => Err(format!("{name}={other}: expected 1 ({what}) or 0")),
        };
        let timing = flag("WAVEJIT_TIMING", "timing model")?;
        let memcheck = flag("WAVEJIT_MEMCHECK", "every byte outside an allocation faults")?;
        let max_wave_instructions = match var("WAVEJIT_MAX_INSTRUCTIONS") {
            None => DEFAULT_MAX_WAVE_INSTRUCTIONS,
            Some(v) => match v.trim() {
                "" => DEFAULT_MAX_WAVE_INSTRUCTIONS,
                "none" | "0" => u64::MAX,
                n => n.replace('_', "").parse::<u64>().map_err(|_| {
                    format!("WAVEJIT_MAX_INSTRUCTIONS={v}: expected a number of instructions per wave, or 0 (none) for no limit")
                })?,
            },
        };
        let watch = Watch::from_vars(var)?;
        Ok(Settings {
            devices,
            engine,
            timing,
            memcheck,
            max_wave_instructions,
            watch,
        })
    }

    /// The JIT this process's settings ask for (`None`: the interpreter runs kernels).
    pub fn jit(&self) -> Result<Option<jit::Jit>, String> {
        match self.engine {
            EngineChoice::Interp => Ok(None),
            EngineChoice::Jit => jit::Jit::with_options(jit::JitOptions::from_env())
                .map(Some)
                .map_err(|e| e.to_string()),
            EngineChoice::Crosscheck => jit::Jit::crosscheck().map(Some).map_err(|e| e.to_string()),
        }
    }
}

/// `WAVEJIT_DEVICES`: comma-separated preset names, at least one.
fn devices(list: &str) -> Result<Vec<&'static DevicePreset>, String> {
    let devices = list
        .split(',')
        .map(|s| s.trim())
        .filter(|s| !s.is_empty())
        .map(|s| DevicePreset::by_name(s).map_err(|e| e.to_string()))
        .collect::<Result<Vec<_>, _>>()?;
    if devices.is_empty() {
        return Err("WAVEJIT_DEVICES names no device".into());
    }
    Ok(devices)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(vars: &[(&str, &str)]) -> Result<Settings, String> {
        let vars: Vec<(String, String)> = vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        Settings::from_vars(&|name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()))
    }

    #[test]
    fn defaults_are_one_mi210_on_the_jit_with_the_common_limit() {
        let s = with(&[]).unwrap();
        assert_eq!(s.devices.len(), 1);
        assert_eq!(s.devices[0].id, "mi210");
        assert_eq!(s.engine, EngineChoice::Jit);
        assert!(!s.timing && !s.memcheck);
        assert_eq!(s.max_wave_instructions, DEFAULT_MAX_WAVE_INSTRUCTIONS);
        assert_eq!(s.watch.timeout, None);
    }

    #[test]
    fn every_variable_is_read_and_nonsense_is_an_error_naming_it() {
        let s = with(&[
            ("WAVEJIT_DEVICES", "mi300x, mi210"),
            ("WAVEJIT_ENGINE", "interp"),
            ("WAVEJIT_TIMING", "1"),
            ("WAVEJIT_MEMCHECK", "1"),
            ("WAVEJIT_MAX_INSTRUCTIONS", "1_000"),
            ("WAVEJIT_TIMEOUT", "2"),
        ])
        .unwrap();
        assert_eq!(s.devices.iter().map(|d| d.id).collect::<Vec<_>>(), ["mi300x", "mi210"]);
        assert_eq!(s.engine, EngineChoice::Interp);
        assert!(s.timing && s.memcheck);
        assert_eq!(s.max_wave_instructions, 1000);
        assert_eq!(s.watch.timeout, Some(std::time::Duration::from_secs(2)));
        assert_eq!(
            with(&[("WAVEJIT_MAX_INSTRUCTIONS", "none")])
                .unwrap()
                .max_wave_instructions,
            u64::MAX
        );
        for (k, v, says) in [
            ("WAVEJIT_DEVICES", "mi999", "mi999"),
            ("WAVEJIT_DEVICES", ",", "names no device"),
            ("WAVEJIT_ENGINE", "fast", "WAVEJIT_ENGINE=fast"),
            ("WAVEJIT_TIMING", "yes", "WAVEJIT_TIMING=yes"),
            ("WAVEJIT_MEMCHECK", "yes", "WAVEJIT_MEMCHECK=yes: expected 1"),
            ("WAVEJIT_MAX_INSTRUCTIONS", "many", "WAVEJIT_MAX_INSTRUCTIONS=many"),
            ("WAVEJIT_TIMEOUT", "soon", "WAVEJIT_TIMEOUT=soon"),
        ] {
            let e = with(&[(k, v)]).unwrap_err();
            assert!(e.contains(says), "{k}={v}: {e}");
        }
    }
}

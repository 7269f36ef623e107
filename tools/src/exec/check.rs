//! What `wavejit exec` refuses before it starts a program: emulated GPUs its GPU code cannot run on.
//!
//! A HIP program carries its kernels in a fat binary with one code object per target, and HIP's runtime runs a
//! kernel only on a GPU of a target it has code for. HIP 5.x (Debian's `libamdhip64.so.5`) predates gfx942 and
//! crashes when the only GPU it finds is one. Both are known before the program starts, so exec says so then,
//! with the devices that would work, rather than let the program die with a signal.

use std::path::Path;

use emu_core::DevicePreset;
use object::read::elf::{Dyn, FileHeader};

/// The GPU processors (`gfx90a`, …) the fat binary of `program` carries code for, in the order found; empty
/// for a program without one (HSA programs, programs whose kernels are in libraries they load).
pub fn fat_binary_targets(program: &Path) -> Vec<String> {
    let Ok(bundles) = isa_amdgpu::codeobj::list_bundles(program) else {
        return Vec::new();
    };
    let mut found: Vec<String> = Vec::new();
    for e in bundles.iter().flat_map(|b| &b.entries) {
        // ids are `hipv4-amdgcn-amd-amdhsa--gfx90a[:features]`; the host entry has no processor
        let Some(target) = e.id.rsplit("--").next().filter(|t| t.starts_with("gfx")) else {
            continue;
        };
        let processor = target.split(':').next().unwrap_or(target).to_string();
        if !found.contains(&processor) {
            found.push(processor);
        }
    }
    found
}

/// The shared libraries `program` names as needed (its ELF dynamic section's DT_NEEDED entries); empty when it
/// is not a 64-bit ELF file or names none.
pub fn needed_libraries(program: &Path) -> Vec<String> {
    let Ok(data) = std::fs::read(program) else {
        return Vec::new();
    };
    needed_in(&data).unwrap_or_default()
}

fn needed_in(data: &[u8]) -> Option<Vec<String>> {
    let header = object::elf::FileHeader64::<object::Endianness>::parse(data).ok()?;
    let endian = header.endian().ok()?;
    let sections = header.sections(endian, data).ok()?;
    let (dynamic, index) = sections.dynamic(endian, data).ok()??;
    let strings = sections.strings(endian, data, index).ok()?;
    let mut names = Vec::new();
    for d in dynamic {
        if d.tag32(endian) == Some(object::elf::DT_NEEDED) {
            if let Ok(name) = d.string(endian, strings) {
                names.push(String::from_utf8_lossy(name).into_owned());
            }
        }
    }
    Some(names)
}

/// Refuses `devices` for `program` when none of them can run its GPU code: its fat binary has no code for any
/// of their targets, or it runs on HIP 5.x and every one of them is a target HIP 5.x does not know.
pub fn devices_fit(program: &Path, devices: &[&'static DevicePreset]) -> Result<(), String> {
    let shown = program.display();
    let names = |ds: &mut dyn Iterator<Item = &&'static DevicePreset>| {
        ds.map(|d| format!("{} ({})", d.id, d.gfx))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let targets = fat_binary_targets(program);
    if !targets.is_empty() && !devices.iter().any(|d| targets.iter().any(|t| t == d.gfx)) {
        let would: Vec<&str> = emu_core::device::PRESETS
            .iter()
            .filter(|p| targets.iter().any(|t| t == p.gfx))
            .map(|p| p.id)
            .collect();
        let hint = if would.is_empty() {
            "no emulated device runs these targets".to_string()
        } else {
            format!("use --device {} (or leave --device out)", would.join(" or "))
        };
        return Err(format!(
            "{shown} carries GPU code for {} only; {} cannot run it: {hint}",
            targets.join(", "),
            names(&mut devices.iter())
        ));
    }
    let hip5 = needed_libraries(program)
        .iter()
        .any(|l| l.starts_with("libamdhip64.so.5"));
    if hip5 && devices.iter().all(|d| !hip5_knows(d)) {
        let would: Vec<&str> = emu_core::device::PRESETS
            .iter()
            .filter(|p| hip5_knows(p))
            .map(|p| p.id)
            .collect();
        return Err(format!(
            "{shown} runs on HIP 5 (libamdhip64.so.5), which predates {}: use --device {}",
            names(&mut devices.iter()),
            would.join(" or ")
        ));
    }
    Ok(())
}

/// Whether HIP 5.x (ROCm 5.2's runtime, Debian's) knows the device's target.
fn hip5_knows(d: &DevicePreset) -> bool {
    d.gfx != "gfx942"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_host_binary_names_its_libraries_and_other_files_name_none() {
        let exe = std::env::current_exe().unwrap();
        assert!(
            needed_libraries(&exe).iter().any(|l| l.starts_with("libc.so")),
            "{exe:?}"
        );
        assert!(needed_libraries(Path::new("/nonexistent")).is_empty());
        assert!(needed_in(b"not an ELF file").is_none());
    }
}

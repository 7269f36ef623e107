//! `wavejit disasm`: listings identical to llvm-objdump's (LLVM 19 for gfx90a/gfx942, LLVM 22 for gfx950).

use std::io::Write as _;
use std::path::Path;

use isa_amdgpu::codeobj::{self, CodeObject};
use isa_amdgpu::listing;
use isa_amdgpu::Target;

/// Disassembles `file` (or the bundled sample) to stdout.
pub fn run(file: Option<&Path>, target: Option<&str>, kernel: Option<&str>) -> Result<(), Box<dyn std::error::Error>> {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let objects = match file {
        Some(path) => codeobj::open_any(path, target)?
            .into_iter()
            .map(|l| l.code_object)
            .collect::<Vec<_>>(),
        None => {
            let (name, bytes) = test_kernels::SAMPLE;
            writeln!(out, "# bundled sample kernel {name} (wavejit disasm FILE for your own)")?;
            vec![CodeObject::parse(bytes, name)?]
        }
    };
    if objects.is_empty() {
        return Err(format!(
            "no code object{} in the file",
            target.map(|t| format!(" for target {t}")).unwrap_or_default()
        )
        .into());
    }
    let mut printed = 0usize;
    for co in &objects {
        let tgt = Target::from_name(&co.target.processor).ok_or_else(|| {
            format!(
                "{}: target {} has no instruction table (supported: gfx90a, gfx940/941/942, gfx950)",
                co.name,
                co.target.canonical()
            )
        })?;
        if objects.len() > 1 {
            writeln!(out, "# {} ({})", co.name, co.target.canonical())?;
        }
        if kernel.is_none() {
            if let Some((section, lines)) = listing::before_first_symbol(co, tgt) {
                writeln!(out, "{section}:")?;
                for line in lines {
                    writeln!(out, "{line}")?;
                }
            }
        }
        for f in &co.functions {
            if kernel.is_some_and(|k| !isa_amdgpu::codeobj::names::matches(&f.name, k)) {
                continue;
            }
            printed += 1;
            writeln!(out, "{}:", f.name)?;
            for line in listing::function(co, f, tgt) {
                writeln!(out, "{line}")?;
            }
        }
    }
    if let (Some(k), 0) = (kernel, printed) {
        return Err(format!("no function named {k}").into());
    }
    out.flush()?;
    Ok(())
}

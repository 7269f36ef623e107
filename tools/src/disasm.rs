//! `wavejit disasm`: llvm-objdump-19-identical listings.

use std::io::Write as _;
use std::path::Path;

use isa_amdgpu::codeobj::{self, CodeObject};
use isa_amdgpu::inst::Inst;
use isa_amdgpu::listing;
use isa_amdgpu::table::OperandKind;
use isa_amdgpu::{disasm, Target};

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
                "{}: target {} has no instruction table (supported: gfx90a, gfx940/941/942)",
                co.name,
                co.target.canonical()
            )
        })?;
        if objects.len() > 1 {
            writeln!(out, "# {} ({})", co.name, co.target.canonical())?;
        }
        for f in &co.functions {
            if kernel.is_some_and(|k| !isa_amdgpu::codeobj::names::matches(&f.name, k)) {
                continue;
            }
            printed += 1;
            writeln!(out, "{}:", f.name)?;
            // the function, then the padding up to the next symbol, as llvm-objdump lists them
            let bytes = [f.code(), f.padding()].concat();
            let mut skip_to = f.address;
            for item in listing::list(&bytes, f.address, tgt) {
                if item.address < skip_to {
                    continue;
                }
                // a run of 8 or more zero bytes prints as `...` and is skipped in whole dwords (llvm-objdump's
                // rule without --disassemble-zeroes)
                let zeros = bytes[(item.address - f.address) as usize..]
                    .iter()
                    .take_while(|b| **b == 0)
                    .count();
                if zeros >= 8 {
                    writeln!(out, "\t\t...")?;
                    skip_to = item.address + (zeros & !3) as u64;
                    continue;
                }
                let line = match &item.inst {
                    Ok(inst) => {
                        let mut l = listing::line(&disasm::text(inst), item.address, &item.words);
                        if let Some(t) = branch_target(inst, item.address) {
                            if let Some(s) = co.symbolize(t) {
                                l.push_str(&format!(" <{s}>"));
                            }
                        }
                        l
                    }
                    Err(_) => listing::line(&format!(".long 0x{:08x}", item.words[0]), item.address, &item.words),
                };
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

/// The target address of a direct branch.
fn branch_target(inst: &Inst, address: u64) -> Option<u64> {
    let o = inst.info.operands.iter().find(|o| o.kind == OperandKind::Label)?;
    let simm = inst.field(o.field) as u16 as i16 as i64;
    Some((address as i64 + 4 + simm * 4) as u64)
}

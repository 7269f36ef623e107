//! `wavejit info FILE [--target SEL] [--json]`: what is inside a code object, bundle file or HIP host binary.
//!
//! Entry point (to wire into main.rs):
//!
//! ```ignore
//! mod info;
//! info::run(&path, target.as_deref(), json)?;
//! // pub fn run(path: &std::path::Path, target: Option<&str>, json: bool)
//! //     -> Result<(), Box<dyn std::error::Error>>
//! ```
//!
//! For every code object in the file: where it came from (bundle index and entry id), target id, code object
//! version; per kernel: name, entry address, descriptor fields (segment sizes, kernarg size, register counts
//! from `COMPUTE_PGM_RSRC*` and from metadata, user/system SGPRs, work-item id VGPRs, wavefront size, float
//! modes) and arguments. `--json` prints the same as one JSON document.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;

use isa_amdgpu::codeobj::kd::{PgmRsrc3, SgprInput};
use isa_amdgpu::codeobj::{self, CodeObject, Kernel, LoadedCodeObject};
use serde_json::{json, Value};

/// Prints the code objects of `path` (filtered by `target`, e.g. `gfx90a` or `gfx90a:xnack-`), as text or,
/// with `json`, as one JSON document on stdout.
pub fn run(path: &Path, target: Option<&str>, json: bool) -> Result<(), Box<dyn std::error::Error>> {
    let objects = codeobj::open_any(path, target)?;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    if json {
        let doc = json!({
            "file": path.display().to_string(),
            "target_selector": target,
            "code_objects": objects.iter().map(code_object_json).collect::<Vec<_>>(),
        });
        serde_json::to_writer_pretty(&mut out, &doc)?;
        writeln!(out)?;
    } else {
        if objects.is_empty() {
            match target {
                Some(t) => writeln!(out, "{}: no code objects for target {t}", path.display())?,
                None => writeln!(out, "{}: no AMDGPU code objects", path.display())?,
            }
        }
        for lco in &objects {
            out.write_all(code_object_text(lco).as_bytes())?;
        }
    }
    out.flush()?;
    Ok(())
}

fn sgpr_list(list: &[SgprInput]) -> String {
    if list.is_empty() {
        return "none".into();
    }
    list.iter()
        .map(|s| format!("{}({})", s.name, s.count))
        .collect::<Vec<_>>()
        .join(" ")
}

fn opt<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map_or_else(|| "-".to_string(), |v| v.to_string())
}

fn source_text(lco: &LoadedCodeObject) -> String {
    let s = &lco.source;
    match (s.bundle_index, s.entry_index, &s.entry_id) {
        (Some(b), Some(e), Some(id)) => format!(
            "{} [bundle {b} entry {e} {id}] at file offset {:#x}, {:#x} bytes",
            s.path.display(),
            s.file_offset,
            s.size
        ),
        _ => format!("{} ({:#x} bytes)", s.path.display(), s.size),
    }
}

fn code_object_text(lco: &LoadedCodeObject) -> String {
    let co = &lco.code_object;
    let mut t = String::new();
    let _ = writeln!(t, "{}", source_text(lco));
    let _ = write!(
        t,
        "  target {}  code object v{}  e_flags {:#x}",
        co.target, co.code_object_version, co.e_flags
    );
    if let Some(g) = co.target.generic_version {
        let _ = write!(t, "  generic v{g}");
    }
    let _ = writeln!(t);
    if let Some(md) = &co.metadata {
        let version = md.version.iter().map(|v| v.to_string()).collect::<Vec<_>>().join(".");
        let _ = writeln!(
            t,
            "  metadata: amdhsa.target {}  amdhsa.version {version}",
            opt(md.target.as_deref())
        );
    } else {
        let _ = writeln!(t, "  metadata: none");
    }
    if let Some(text) = co.text {
        let _ = writeln!(
            t,
            "  .text {:#x}..{:#x} ({:#x} bytes), {} functions, {} kernels",
            text.address,
            text.address.saturating_add(text.size),
            text.size,
            co.functions.len(),
            co.kernels.len()
        );
    }
    for k in &co.kernels {
        kernel_text(&mut t, co, k);
    }
    t
}

fn kernel_text(t: &mut String, co: &CodeObject, k: &Kernel) {
    let d = &k.descriptor;
    let md = co.kernel_metadata(k);
    let _ = writeln!(t, "  kernel {}", k.name);
    let func = co.kernel_function(k).map_or_else(
        || "no function symbol".to_string(),
        |f| format!("{}, {:#x} bytes", f.name, f.size),
    );
    let _ = writeln!(
        t,
        "    entry {:#x} ({func})  descriptor {} at {:#x}",
        k.entry_address, k.descriptor_symbol, k.descriptor_address
    );
    let _ = writeln!(
        t,
        "    segments: group {} B  private {} B/work-item  kernarg {} B (metadata size {} align {})",
        d.group_segment_fixed_size,
        d.private_segment_fixed_size,
        d.kernarg_size,
        opt(md.and_then(|m| m.kernarg_segment_size)),
        opt(md.and_then(|m| m.kernarg_segment_align)),
    );
    let mut regs = format!("    registers (rsrc): VGPRs {}", d.vgpr_alloc_count());
    if let Some(acc) = d.accum_offset() {
        let _ = write!(regs, " (ArchVGPRs + AccVGPRs; AccVGPRs from v{acc})");
    }
    let _ = write!(regs, "  SGPRs {}", opt(d.sgpr_alloc_count()));
    let _ = writeln!(t, "{regs}");
    if let Some(m) = md {
        let _ = writeln!(
            t,
            "    registers (metadata): vgpr {}  agpr {}  sgpr {}  spills vgpr {} sgpr {}",
            opt(m.vgpr_count),
            opt(m.agpr_count),
            opt(m.sgpr_count),
            opt(m.vgpr_spill_count),
            opt(m.sgpr_spill_count)
        );
    }
    let _ = writeln!(
        t,
        "    wavefront {}  max workgroup {}  dynamic stack {}",
        d.wavefront_size(),
        opt(md.and_then(|m| m.max_flat_workgroup_size)),
        d.properties.uses_dynamic_stack
    );
    let _ = writeln!(
        t,
        "    user SGPRs {}: {}",
        d.rsrc2.user_sgpr_count,
        sgpr_list(&d.user_sgprs())
    );
    let _ = writeln!(t, "    system SGPRs: {}", sgpr_list(&d.system_sgprs()));
    let _ = writeln!(
        t,
        "    work-item id VGPRs: {} (enable_vgpr_workitem_id {})",
        opt(d.workitem_id_vgprs()),
        d.rsrc2.enable_vgpr_workitem_id
    );
    let r1 = &d.rsrc1;
    let _ = writeln!(
        t,
        "    float: round_32 {} round_16_64 {} denorm_32 {} denorm_16_64 {}  dx10_clamp {} ieee_mode {} fp16_ovfl {}",
        r1.float_round_mode_32,
        r1.float_round_mode_16_64,
        r1.float_denorm_mode_32,
        r1.float_denorm_mode_16_64,
        u8::from(r1.enable_dx10_clamp),
        u8::from(r1.enable_ieee_mode),
        u8::from(r1.fp16_ovfl)
    );
    match d.rsrc3 {
        PgmRsrc3::Gfx90a { tg_split, .. } => {
            let _ = writeln!(t, "    tg_split {}", u8::from(tg_split));
        }
        PgmRsrc3::Gfx10Plus {
            shared_vgpr_count,
            inst_pref_size,
            ..
        } => {
            let _ = writeln!(
                t,
                "    wgp_mode {} mem_ordered {} fwd_progress {} shared_vgpr_count {shared_vgpr_count} inst_pref_size {inst_pref_size}",
                u8::from(r1.wgp_mode),
                u8::from(r1.mem_ordered),
                u8::from(r1.fwd_progress)
            );
        }
        PgmRsrc3::None { .. } => {}
    }
    if d.preload.length > 0 {
        let _ = writeln!(
            t,
            "    kernarg preload: {} dwords from dword {}",
            d.preload.length, d.preload.offset
        );
    }
    if let Some(m) = md {
        let _ = writeln!(t, "    args ({}):", m.args.len());
        for (i, a) in m.args.iter().enumerate() {
            let mut line = format!(
                "      [{i}] offset {:<4} size {:<3} {:<28}",
                a.offset, a.size, a.value_kind
            );
            if let Some(n) = &a.name {
                let _ = write!(line, " {n}");
            }
            if let Some(ty) = &a.type_name {
                let _ = write!(line, ": {ty}");
            }
            let mut attrs = Vec::new();
            if let Some(s) = &a.address_space {
                attrs.push(s.clone());
            }
            if a.is_const {
                attrs.push("const".into());
            }
            if a.is_restrict {
                attrs.push("restrict".into());
            }
            if a.is_volatile {
                attrs.push("volatile".into());
            }
            if let Some(acc) = &a.access {
                attrs.push(acc.clone());
            }
            if !attrs.is_empty() {
                let _ = write!(line, " ({})", attrs.join(", "));
            }
            let _ = writeln!(t, "{}", line.trim_end());
        }
    }
}

fn code_object_json(lco: &LoadedCodeObject) -> Value {
    let co = &lco.code_object;
    json!({
        "source": lco.source,
        "name": co.name,
        "target": co.target.to_string(),
        "target_detail": co.target,
        "code_object_version": co.code_object_version,
        "e_flags": co.e_flags,
        "elf_type": co.elf_type,
        "text": co.text,
        "function_count": co.functions.len(),
        "metadata": co.metadata.as_ref().map(|m| json!({
            "version": m.version,
            "target": m.target,
            "printf": m.printf,
            "extra": m.extra,
        })),
        "kernels": co.kernels.iter().map(|k| kernel_json(co, k)).collect::<Vec<_>>(),
    })
}

fn kernel_json(co: &CodeObject, k: &Kernel) -> Value {
    let d = &k.descriptor;
    json!({
        "name": k.name,
        "descriptor_symbol": k.descriptor_symbol,
        "descriptor_address": k.descriptor_address,
        "entry_address": k.entry_address,
        "function": co.kernel_function(k).map(|f| json!({ "name": f.name, "address": f.address, "size": f.size })),
        "group_segment_fixed_size": d.group_segment_fixed_size,
        "private_segment_fixed_size": d.private_segment_fixed_size,
        "kernarg_size": d.kernarg_size,
        "wavefront_size": d.wavefront_size(),
        "registers": {
            "vgpr_alloc": d.vgpr_alloc_count(),
            "sgpr_alloc": d.sgpr_alloc_count(),
            "accum_offset": d.accum_offset(),
            "agpr_alloc_max": d.agpr_alloc_count(),
        },
        "user_sgpr_count": d.rsrc2.user_sgpr_count,
        "user_sgprs": d.user_sgprs(),
        "system_sgprs": d.system_sgprs(),
        "workitem_id_vgprs": d.workitem_id_vgprs(),
        "descriptor": d,
        "metadata": co.kernel_metadata(k),
    })
}

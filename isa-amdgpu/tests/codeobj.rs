//! Code-object reader checked against LLVM's own tools: kernels compiled with clang-19 at test time, then what
//! `CodeObject` reads is compared with `llvm-readelf-19` (header, symbols, metadata notes), `llvm-objdump-19`
//! (kernel descriptors, instruction bytes, branch-target labels) and the `.amdhsa_*` directives clang emits
//! with `-S`. Bundles are built with `clang-offload-bundler-19` and embedded with `llvm-objcopy-19`.
//! A test whose tool or package is missing fails, naming it (scripts/setup.sh installs them).

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

use common::*;
use isa_amdgpu::codeobj::kd::{KernelDescriptor, PgmRsrc3};
use isa_amdgpu::codeobj::{self, bundle, CodeObject, CodeObjectError, GfxFamily};

/// Checks our decoded descriptor against `.amdhsa_*` directives. `from_binary`: the directives come from
/// `llvm-objdump` of the descriptor bytes (register counts are the rounded allocation), not from clang -S
/// (register counts are the exact next free register). Returns how many directives were compared.
fn check_kd(ctx: &str, kd: &KernelDescriptor, dirs: &BTreeMap<String, i64>, from_binary: bool) -> usize {
    let b = |x: bool| i64::from(x);
    let r1 = &kd.rsrc1;
    let r2 = &kd.rsrc2;
    let p = &kd.properties;
    let mut ours: BTreeMap<&str, i64> = BTreeMap::from([
        ("group_segment_fixed_size", i64::from(kd.group_segment_fixed_size)),
        ("private_segment_fixed_size", i64::from(kd.private_segment_fixed_size)),
        ("kernarg_size", i64::from(kd.kernarg_size)),
        ("user_sgpr_count", i64::from(r2.user_sgpr_count)),
        (
            "user_sgpr_private_segment_buffer",
            b(p.enable_sgpr_private_segment_buffer),
        ),
        ("user_sgpr_dispatch_ptr", b(p.enable_sgpr_dispatch_ptr)),
        ("user_sgpr_queue_ptr", b(p.enable_sgpr_queue_ptr)),
        ("user_sgpr_kernarg_segment_ptr", b(p.enable_sgpr_kernarg_segment_ptr)),
        ("user_sgpr_dispatch_id", b(p.enable_sgpr_dispatch_id)),
        ("user_sgpr_flat_scratch_init", b(p.enable_sgpr_flat_scratch_init)),
        ("user_sgpr_private_segment_size", b(p.enable_sgpr_private_segment_size)),
        ("user_sgpr_kernarg_preload_length", i64::from(kd.preload.length)),
        ("user_sgpr_kernarg_preload_offset", i64::from(kd.preload.offset)),
        ("wavefront_size32", b(p.enable_wavefront_size32)),
        ("uses_dynamic_stack", b(p.uses_dynamic_stack)),
        ("enable_private_segment", b(r2.enable_private_segment)),
        (
            "system_sgpr_private_segment_wavefront_offset",
            b(r2.enable_private_segment),
        ),
        ("system_sgpr_workgroup_id_x", b(r2.enable_sgpr_workgroup_id_x)),
        ("system_sgpr_workgroup_id_y", b(r2.enable_sgpr_workgroup_id_y)),
        ("system_sgpr_workgroup_id_z", b(r2.enable_sgpr_workgroup_id_z)),
        ("system_sgpr_workgroup_info", b(r2.enable_sgpr_workgroup_info)),
        ("system_vgpr_workitem_id", i64::from(r2.enable_vgpr_workitem_id)),
        ("float_round_mode_32", i64::from(r1.float_round_mode_32.bits())),
        ("float_round_mode_16_64", i64::from(r1.float_round_mode_16_64.bits())),
        ("float_denorm_mode_32", i64::from(r1.float_denorm_mode_32.bits())),
        ("float_denorm_mode_16_64", i64::from(r1.float_denorm_mode_16_64.bits())),
        ("dx10_clamp", b(r1.enable_dx10_clamp)),
        ("ieee_mode", b(r1.enable_ieee_mode)),
        ("fp16_overflow", b(r1.fp16_ovfl)),
        ("workgroup_processor_mode", b(r1.wgp_mode)),
        ("memory_ordered", b(r1.mem_ordered)),
        ("forward_progress", b(r1.fwd_progress)),
        (
            "exception_fp_ieee_invalid_op",
            b(r2.enable_exception_fp_ieee_invalid_op),
        ),
        ("exception_fp_denorm_src", b(r2.enable_exception_fp_denorm_src)),
        ("exception_fp_ieee_div_zero", b(r2.enable_exception_fp_ieee_div_zero)),
        ("exception_fp_ieee_overflow", b(r2.enable_exception_fp_ieee_overflow)),
        ("exception_fp_ieee_underflow", b(r2.enable_exception_fp_ieee_underflow)),
        ("exception_fp_ieee_inexact", b(r2.enable_exception_fp_ieee_inexact)),
        ("exception_int_div_zero", b(r2.enable_exception_int_div_zero)),
    ]);
    match kd.rsrc3 {
        PgmRsrc3::Gfx90a { tg_split, .. } => {
            ours.insert("accum_offset", i64::from(kd.accum_offset().unwrap()));
            ours.insert("tg_split", b(tg_split));
        }
        PgmRsrc3::Gfx10Plus {
            shared_vgpr_count,
            inst_pref_size,
            ..
        } => {
            ours.insert("shared_vgpr_count", i64::from(shared_vgpr_count));
            ours.insert("inst_pref_size", i64::from(inst_pref_size));
        }
        PgmRsrc3::None { .. } => {}
    }
    if from_binary {
        ours.insert("next_free_vgpr", i64::from(kd.vgpr_alloc_count()));
        if let Some(s) = kd.sgpr_alloc_count() {
            ours.insert("next_free_sgpr", i64::from(s));
        }
    }
    let mut compared = 0;
    for (name, &theirs) in dirs {
        if let Some(&mine) = ours.get(name.as_str()) {
            assert_eq!(mine, theirs, "{ctx}: .amdhsa_{name}");
            compared += 1;
        }
    }
    if !from_binary {
        // clang -S gives the exact next free VGPR; the descriptor holds it rounded up to the granule.
        let n = dirs[&"next_free_vgpr".to_string()];
        let g = i64::from(kd.vgpr_granule());
        let blocks = ((n.max(1) + g - 1) / g - 1).max(0);
        assert_eq!(
            i64::from(kd.rsrc1.granulated_workitem_vgpr_count),
            blocks,
            "{ctx}: granulated VGPRs for next_free_vgpr {n}"
        );
        compared += 1;
    }
    compared
}

/// Every instruction line `// ADDR: W0 W1 ...` of `llvm-objdump -d`: address → encoding bytes.
fn objdump_instruction_bytes(path: &Path) -> Vec<(u64, Vec<u8>)> {
    let text = run(Command::new("llvm-objdump-19").arg("-d").arg(path));
    let mut out = Vec::new();
    for line in text.lines() {
        let Some((_, comment)) = line.split_once("// ") else {
            continue;
        };
        let mut parts = comment.split_whitespace();
        let Some(addr) = parts.next().and_then(|a| a.strip_suffix(':')) else {
            continue;
        };
        let Ok(addr) = u64::from_str_radix(addr, 16) else {
            continue;
        };
        let mut bytes = Vec::new();
        for w in parts {
            match u32::from_str_radix(w, 16) {
                Ok(v) if w.len() == 8 => bytes.extend_from_slice(&v.to_le_bytes()),
                _ => break,
            }
        }
        if !bytes.is_empty() {
            out.push((addr, bytes));
        }
    }
    out
}

/// Compares everything we read from the code object at `path` with the LLVM tools' view of it.
/// `asm` is clang's -S output for the same compile. With `require_kd_oracle`, every kernel descriptor must be
/// decoded by llvm-objdump or described by `asm` (LLVM 19's objdump cannot decode some library descriptors).
/// Returns a one-line summary.
fn check_against_llvm(path: &Path, asm: Option<&str>, require_kd_oracle: bool) -> String {
    let ctx = path.display().to_string();
    let bytes = std::fs::read(path).unwrap();
    let co = CodeObject::parse(&bytes, &ctx).unwrap_or_else(|e| panic!("{e}"));

    // Header: version and flags.
    let (abi, flags) = readelf_header(path);
    assert_eq!(co.code_object_version, abi + 2, "{ctx}: code object version");
    assert_eq!(co.e_flags, flags, "{ctx}: e_flags");

    // Target id as LLVM writes it into the metadata.
    let notes = readelf_notes(path);
    let md = co.metadata.as_ref().expect("metadata note");
    let md_target = notes.target.clone().expect("amdhsa.target in llvm-readelf output");
    assert_eq!(md.target.as_deref(), Some(md_target.as_str()), "{ctx}: amdhsa.target");
    let expected_id = md_target.rsplit_once("--").unwrap().1;
    assert_eq!(co.target.to_string(), expected_id, "{ctx}: target id from e_flags");
    assert_eq!(md.version, notes.version, "{ctx}: amdhsa.version");

    // Metadata kernels and args, field by field as llvm-readelf prints them.
    assert_eq!(md.kernels.len(), notes.kernels.len(), "{ctx}: metadata kernel count");
    for nk in &notes.kernels {
        let name = &nk.fields[".name"];
        let km = md
            .kernels
            .iter()
            .find(|k| &k.name == name)
            .unwrap_or_else(|| panic!("{ctx}: kernel {name}"));
        let ours: BTreeMap<&str, Option<String>> = BTreeMap::from([
            (".symbol", Some(km.symbol.clone())),
            (".sgpr_count", km.sgpr_count.map(|v| v.to_string())),
            (".vgpr_count", km.vgpr_count.map(|v| v.to_string())),
            (".agpr_count", km.agpr_count.map(|v| v.to_string())),
            (".sgpr_spill_count", km.sgpr_spill_count.map(|v| v.to_string())),
            (".vgpr_spill_count", km.vgpr_spill_count.map(|v| v.to_string())),
            (".kernarg_segment_size", km.kernarg_segment_size.map(|v| v.to_string())),
            (
                ".kernarg_segment_align",
                km.kernarg_segment_align.map(|v| v.to_string()),
            ),
            (
                ".group_segment_fixed_size",
                km.group_segment_fixed_size.map(|v| v.to_string()),
            ),
            (
                ".private_segment_fixed_size",
                km.private_segment_fixed_size.map(|v| v.to_string()),
            ),
            (".wavefront_size", km.wavefront_size.map(|v| v.to_string())),
            (
                ".max_flat_workgroup_size",
                km.max_flat_workgroup_size.map(|v| v.to_string()),
            ),
            (".uses_dynamic_stack", km.uses_dynamic_stack.map(|v| v.to_string())),
            (".language", km.language.clone()),
            (
                ".uniform_work_group_size",
                km.uniform_work_group_size.map(|v| u8::from(v).to_string()),
            ),
        ]);
        for (key, theirs) in &nk.fields {
            if let Some(mine) = ours.get(key.as_str()) {
                assert_eq!(mine.as_deref(), Some(theirs.as_str()), "{ctx}: kernel {name} {key}");
            }
        }
        assert_eq!(km.args.len(), nk.args.len(), "{ctx}: kernel {name} arg count");
        for (i, (a, na)) in km.args.iter().zip(&nk.args).enumerate() {
            assert_eq!(a.offset.to_string(), na[".offset"], "{ctx}: {name} arg {i} offset");
            assert_eq!(a.size.to_string(), na[".size"], "{ctx}: {name} arg {i} size");
            assert_eq!(a.value_kind, na[".value_kind"], "{ctx}: {name} arg {i} value_kind");
            assert_eq!(
                a.type_name.as_deref(),
                na.get(".type_name").map(|s| s.as_str()),
                "{ctx}: {name} arg {i} type"
            );
            assert_eq!(
                a.name.as_deref(),
                na.get(".name").map(|s| s.as_str()),
                "{ctx}: {name} arg {i} name"
            );
            assert_eq!(a.address_space.as_deref(), na.get(".address_space").map(|s| s.as_str()));
            assert_eq!(
                a.is_const,
                na.get(".is_const").is_some_and(|v| v == "true"),
                "{ctx}: {name} arg {i} const"
            );
            assert_eq!(a.is_restrict, na.get(".is_restrict").is_some_and(|v| v == "true"));
            assert_eq!(a.is_volatile, na.get(".is_volatile").is_some_and(|v| v == "true"));
        }
    }

    // Symbols: functions and kernel descriptors, from .symtab.
    let syms: Vec<ReadelfSym> = readelf_symbols(path)
        .into_iter()
        .filter(|s| s.table == ".symtab")
        .collect();
    let their_funcs: BTreeSet<(String, u64, u64)> = syms
        .iter()
        .filter(|s| s.kind == "FUNC")
        .map(|s| (s.name.clone(), s.value, s.size))
        .collect();
    let our_funcs: BTreeSet<(String, u64, u64)> = co
        .functions
        .iter()
        .map(|f| (f.name.clone(), f.address, f.size))
        .collect();
    assert_eq!(our_funcs, their_funcs, "{ctx}: functions");
    let their_kds: BTreeSet<(String, u64)> = syms
        .iter()
        .filter(|s| s.kind == "OBJECT" && s.name.ends_with(".kd"))
        .map(|s| (s.name.clone(), s.value))
        .collect();
    let our_kds: BTreeSet<(String, u64)> = co
        .kernels
        .iter()
        .map(|k| (k.descriptor_symbol.clone(), k.descriptor_address))
        .collect();
    assert_eq!(our_kds, their_kds, "{ctx}: kernel descriptors");
    for k in &co.kernels {
        let f = syms
            .iter()
            .find(|s| s.kind == "FUNC" && s.name == k.name)
            .expect("kernel function symbol");
        assert_eq!(k.entry_address, f.value, "{ctx}: {} entry", k.name);
        assert_eq!(co.kernel_function(k).map(|f| f.name.as_str()), Some(k.name.as_str()));
        assert_eq!(
            co.kernel_metadata(k).map(|m| m.symbol.as_str()),
            Some(k.descriptor_symbol.as_str())
        );
    }

    // Function bytes: the instructions llvm-objdump prints inside each function tile its code exactly and
    // have the same bytes there.
    let insns = objdump_instruction_bytes(path);
    assert!(!insns.is_empty(), "{ctx}: objdump printed no instructions");
    let mut checked = 0;
    for f in &co.functions {
        let mut covered = 0usize;
        for (addr, enc) in insns.iter().filter(|(a, _)| *a >= f.address && *a < f.address + f.size) {
            let off = (addr - f.address) as usize;
            assert_eq!(
                off, covered,
                "{ctx}: {} instruction at {addr:#x} not contiguous",
                f.name
            );
            assert_eq!(
                &f.code()[off..off + enc.len()],
                &enc[..],
                "{ctx}: bytes at {addr:#x} in {}",
                f.name
            );
            covered += enc.len();
            checked += 1;
        }
        assert_eq!(
            covered as u64, f.size,
            "{ctx}: {} instructions cover the function",
            f.name
        );
    }
    let text = co.text.expect(".text");
    assert!(co
        .functions
        .iter()
        .all(|f| f.address >= text.address && f.address + f.size <= text.address + text.size));

    // Branch-target labels.
    let labels = objdump_branch_labels(path);
    for (target, label) in &labels {
        assert_eq!(
            co.symbolize(*target).map(|s| s.to_string()).as_deref(),
            Some(label.as_str()),
            "{ctx}: {target:#x}"
        );
    }

    // Kernel descriptors against llvm-objdump's decoding of the same bytes (when LLVM 19 can decode them)
    // and against the directives clang emitted.
    let kd_text = run_lenient(Command::new("llvm-objdump-19").args(["-D", "-j", ".rodata"]).arg(path));
    let from_bin = amdhsa_directives(&kd_text);
    let from_asm = asm.map(amdhsa_directives).unwrap_or_default();
    let mut compared = 0;
    for k in &co.kernels {
        let kctx = format!("{ctx}: {}", k.name);
        if let Some(d) = from_bin.get(&k.name) {
            compared += check_kd(&kctx, &k.descriptor, d, true);
        }
        if let Some(d) = from_asm.get(&k.name) {
            compared += check_kd(&kctx, &k.descriptor, d, false);
        }
        let decoded = |m: &BTreeMap<String, BTreeMap<String, i64>>| m.get(&k.name).is_some_and(|d| !d.is_empty());
        assert!(
            !require_kd_oracle || decoded(&from_bin) || decoded(&from_asm),
            "{kctx}: no oracle decoded this descriptor"
        );
    }
    format!(
        "{ctx}: {} kernels, {} functions, {checked} instructions, {} branch labels, {compared} descriptor fields compared ({} via objdump)",
        co.kernels.len(),
        co.functions.len(),
        labels.len(),
        from_bin.values().filter(|d| !d.is_empty()).count()
    )
}

fn has_mfma(mcpu: &str) -> bool {
    ["gfx908", "gfx90a", "gfx940", "gfx941", "gfx942"]
        .iter()
        .any(|p| mcpu.starts_with(p))
}

#[test]
fn compiled_code_objects_match_llvm_readelf_objdump_and_clang_directives() {
    require_llvm();
    let scratch = Scratch::new("llvm");
    let configs: &[(&str, Option<u32>)] = &[
        ("gfx908", Some(4)),
        ("gfx908:sramecc+:xnack-", Some(5)),
        ("gfx90a", Some(4)),
        ("gfx90a", Some(5)),
        ("gfx90a:xnack+", None),
        ("gfx90a:sramecc-:xnack-", None),
        ("gfx942", Some(5)),
        ("gfx942:sramecc+:xnack-", Some(4)),
        ("gfx1030", Some(5)),
        ("gfx1100", Some(4)),
        ("gfx1100", Some(5)),
        ("gfx90a", Some(6)),
        ("gfx9-generic", Some(6)),
    ];
    let mut families = BTreeSet::new();
    let mut versions = BTreeSet::new();
    for (i, &(mcpu, version)) in configs.iter().enumerate() {
        let mut source = KERNELS_CL.to_string();
        if has_mfma(mcpu) {
            source.push_str(MFMA_CL);
        }
        let out = scratch.path(&format!("k{i}.co"));
        compile_cl(&scratch, &source, mcpu, version, &out);
        let asm = compile_cl_asm(&scratch, &source, mcpu, version);
        println!("{}", check_against_llvm(&out, Some(&asm), true));
        let co = CodeObject::parse(&std::fs::read(&out).unwrap(), "x").unwrap();
        families.insert(format!("{:?}", co.target.family()));
        versions.insert(co.code_object_version);
        if mcpu == "gfx9-generic" {
            assert_eq!(co.target.generic_version, Some(1), "generic version from e_flags");
        }
    }
    assert!(versions.is_superset(&BTreeSet::from([4, 5, 6])), "{versions:?}");
    assert!(families.len() >= 4, "{families:?}");
}

#[test]
fn mfma_kernel_reports_accvgprs_in_rsrc3_and_metadata() {
    require_llvm();
    let scratch = Scratch::new("mfma");
    for mcpu in ["gfx90a", "gfx942"] {
        let out = scratch.path(&format!("{mcpu}.co"));
        compile_cl(&scratch, MFMA_CL, mcpu, None, &out);
        let co = CodeObject::parse(&std::fs::read(&out).unwrap(), mcpu).unwrap();
        let k = co.kernel("mfma").expect("mfma kernel");
        let md = co.kernel_metadata(k).unwrap();
        let agprs = md.agpr_count.expect(".agpr_count");
        assert!(agprs > 0, "{mcpu}: MFMA kernel uses AccVGPRs");
        assert_eq!(co.target.family(), Some(GfxFamily::Gfx90a));
        let acc = k.descriptor.accum_offset().unwrap();
        // accum_offset is the ArchVGPR count rounded up to 4; the allocation covers both files.
        let notes = readelf_notes(&out);
        let nk = &notes.kernels[0];
        let arch_plus_acc: u32 = nk.fields[".vgpr_count"].parse().unwrap();
        assert!(k.descriptor.vgpr_alloc_count() >= arch_plus_acc, "{mcpu}");
        assert!(acc + agprs as u32 <= k.descriptor.vgpr_alloc_count(), "{mcpu}");
    }
}

#[test]
fn relocatable_object_entry_resolves_through_rel64() {
    require_llvm();
    let scratch = Scratch::new("rel");
    let src = scratch.path("k.cl");
    std::fs::write(&src, KERNELS_CL).unwrap();
    let out = scratch.path("k.o");
    run(Command::new("clang-19")
        .args([
            "-x",
            "cl",
            "-cl-std=CL2.0",
            "-target",
            "amdgcn-amd-amdhsa",
            "-nogpulib",
            "-O3",
            "-c",
        ])
        .arg("-mcpu=gfx90a")
        .arg(&src)
        .arg("-o")
        .arg(&out));
    let co = CodeObject::parse(&std::fs::read(&out).unwrap(), "k.o").unwrap();
    assert_eq!(co.elf_type, 1, "ET_REL");
    let syms = readelf_symbols(&out);
    assert!(!co.kernels.is_empty());
    for k in &co.kernels {
        let f = syms.iter().find(|s| s.kind == "FUNC" && s.name == k.name).unwrap();
        assert_eq!(k.descriptor.kernel_code_entry_byte_offset, 0, "unrelocated field");
        assert_eq!(k.entry_address, f.value, "{}: entry from R_AMDGPU_REL64", k.name);
        assert_eq!(co.kernel_function(k).unwrap().name, k.name);
    }
}

/// Builds two bundles with clang-offload-bundler, concatenates them 4096-aligned, and embeds the result in a
/// host object and (if linking works) a shared library. Returns (scratch, bundle paths, fat file, host files,
/// device inputs by bundle).
struct FatFixture {
    scratch: Scratch,
    bundles: Vec<std::path::PathBuf>,
    fat: std::path::PathBuf,
    hosts: Vec<std::path::PathBuf>,
    /// Per bundle: (entry id, device code object path).
    device: Vec<Vec<(String, std::path::PathBuf)>>,
}

fn fat_fixture() -> FatFixture {
    require_tools(&["clang-offload-bundler-19", "llvm-objcopy-19"]);
    let scratch = Scratch::new("fat");
    let compile = |mcpu: &str, name: &str| {
        let p = scratch.path(name);
        compile_cl(&scratch, KERNELS_CL, mcpu, Some(4), &p);
        p
    };
    let specs: Vec<Vec<(&str, &str)>> = vec![
        vec![
            ("gfx90a:xnack-", "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-"),
            ("gfx908", "hipv4-amdgcn-amd-amdhsa--gfx908"),
        ],
        vec![
            ("gfx90a:xnack+", "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+"),
            ("gfx942", "hipv4-amdgcn-amd-amdhsa--gfx942"),
        ],
    ];
    let host_empty = scratch.path("host.empty");
    std::fs::write(&host_empty, b"").unwrap();
    let mut bundles = Vec::new();
    let mut device = Vec::new();
    for (b, spec) in specs.iter().enumerate() {
        let mut targets = vec!["host-x86_64-unknown-linux-gnu".to_string()];
        let mut inputs = vec![host_empty.clone()];
        let mut dev = Vec::new();
        for (e, (mcpu, id)) in spec.iter().enumerate() {
            let p = compile(mcpu, &format!("b{b}e{e}.co"));
            targets.push(id.to_string());
            inputs.push(p.clone());
            dev.push((id.to_string(), p));
        }
        let out = scratch.path(&format!("b{b}.hipfb"));
        let mut cmd = Command::new("clang-offload-bundler-19");
        cmd.arg("--type=o").arg(format!("--targets={}", targets.join(",")));
        for i in &inputs {
            cmd.arg(format!("--input={}", i.display()));
        }
        cmd.arg(format!("--output={}", out.display()));
        run(&mut cmd);
        bundles.push(out);
        device.push(dev);
    }
    let mut fat = Vec::new();
    for b in &bundles {
        fat.resize(fat.len().div_ceil(4096) * 4096, 0);
        fat.extend_from_slice(&std::fs::read(b).unwrap());
    }
    let fat_path = scratch.path("fat.hipfb");
    std::fs::write(&fat_path, &fat).unwrap();

    let hsrc = scratch.path("h.c");
    std::fs::write(&hsrc, "int host_marker(void) { return 42; }\n").unwrap();
    let hobj = scratch.path("h.o");
    run(Command::new("clang-19")
        .arg("-c")
        .arg("-fPIC")
        .arg(&hsrc)
        .arg("-o")
        .arg(&hobj));
    let fat_obj = scratch.path("h_fat.o");
    run(Command::new("llvm-objcopy-19")
        .arg(format!("--add-section=.hip_fatbin={}", fat_path.display()))
        .arg("--set-section-flags=.hip_fatbin=alloc,readonly")
        .arg("--set-section-alignment=.hip_fatbin=4096")
        .arg(&hobj)
        .arg(&fat_obj));
    let mut hosts = vec![fat_obj.clone()];
    let so = scratch.path("libfat.so");
    match Command::new("clang-19")
        .arg("-shared")
        .arg(&fat_obj)
        .arg("-o")
        .arg(&so)
        .output()
    {
        Ok(o) if o.status.success() => hosts.push(so),
        _ => println!("note: linking a shared library failed; testing the host object only"),
    }
    FatFixture {
        scratch,
        bundles,
        fat: fat_path,
        hosts,
        device,
    }
}

#[test]
fn host_elf_and_bundle_files_yield_every_device_entry() {
    require_llvm();
    let fx = fat_fixture();
    // What clang-offload-bundler lists for each bundle on its own.
    let mut expected: Vec<(usize, String)> = Vec::new();
    for (b, path) in fx.bundles.iter().enumerate() {
        let list = run(Command::new("clang-offload-bundler-19")
            .arg("--list")
            .arg("--type=o")
            .arg(format!("--input={}", path.display())));
        let ids: BTreeSet<String> = list
            .lines()
            .map(|l| l.trim().to_string())
            .filter(|l| !l.is_empty())
            .collect();
        let ours: BTreeSet<String> = bundle::parse_bundles(&std::fs::read(path).unwrap(), "b").unwrap()[0]
            .entries
            .iter()
            .map(|e| e.id.clone())
            .collect();
        assert_eq!(ours, ids, "bundle {b} entry ids");
        for id in ids.iter().filter(|i| i.contains("amdgcn")) {
            expected.push((b, id.clone()));
        }
    }
    let mut files = fx.hosts.clone();
    files.push(fx.fat.clone());
    for file in &files {
        let loaded = codeobj::open_any(file, None).unwrap_or_else(|e| panic!("{e}"));
        let got: Vec<(usize, String)> = loaded
            .iter()
            .map(|l| (l.source.bundle_index.unwrap(), l.source.entry_id.clone().unwrap()))
            .collect();
        let mut exp = expected.clone();
        exp.sort();
        let mut g = got.clone();
        g.sort();
        assert_eq!(g, exp, "{}: entries", file.display());
        let whole = std::fs::read(file).unwrap();
        for l in &loaded {
            let b = l.source.bundle_index.unwrap();
            let id = l.source.entry_id.as_ref().unwrap();
            let original = &fx.device[b].iter().find(|(i, _)| i == id).unwrap().1;
            let orig_bytes = std::fs::read(original).unwrap();
            // The code object we parsed is byte-identical to the one bundled, and sits where we say in the file.
            assert_eq!(l.code_object.bytes(), &orig_bytes[..], "{}: {id}", file.display());
            let off = l.source.file_offset as usize;
            assert_eq!(&whole[off..off + orig_bytes.len()], &orig_bytes[..]);
            let direct = CodeObject::parse(&orig_bytes, "orig").unwrap();
            assert_eq!(l.code_object.target, direct.target);
            assert_eq!(l.code_object.kernels.len(), direct.kernels.len());
            assert_eq!(
                Some(l.code_object.target.to_string()),
                id.rsplit_once("--").map(|x| x.1.to_string())
            );
        }
        let listed = codeobj::list_bundles(file).unwrap();
        assert_eq!(listed.len(), fx.bundles.len(), "{}: bundle count", file.display());
    }
    drop(fx.scratch);
}

#[test]
fn target_selector_filters_bundle_entries() {
    require_llvm();
    let fx = fat_fixture();
    let ids = |sel: &str| -> BTreeSet<String> {
        codeobj::open_any(&fx.fat, Some(sel))
            .unwrap()
            .into_iter()
            .map(|l| l.source.entry_id.unwrap().rsplit_once("--").unwrap().1.to_string())
            .collect()
    };
    // Entries in the fixture: gfx90a:xnack-, gfx908, gfx90a:xnack+, gfx942.
    assert_eq!(
        ids("gfx90a"),
        BTreeSet::from(["gfx90a:xnack-".to_string(), "gfx90a:xnack+".to_string()])
    );
    assert_eq!(ids("gfx90a:xnack-"), BTreeSet::from(["gfx90a:xnack-".to_string()]));
    assert_eq!(ids("gfx90a:xnack+"), BTreeSet::from(["gfx90a:xnack+".to_string()]));
    // gfx908 entry has no xnack setting ("any"), so it satisfies any xnack request.
    assert_eq!(ids("gfx908:xnack+"), BTreeSet::from(["gfx908".to_string()]));
    assert_eq!(ids("gfx942:sramecc-"), BTreeSet::from(["gfx942".to_string()]));
    assert!(ids("gfx1100").is_empty());
    let err = codeobj::open_any(&fx.fat, Some("gfx90a:bogus+")).unwrap_err();
    assert!(matches!(err, CodeObjectError::BadSelector { .. }), "{err}");
    // A plain code object file is filtered by its own target.
    let co_path = &fx.device[0][0].1; // gfx90a:xnack-
    assert_eq!(codeobj::open_any(co_path, Some("gfx90a")).unwrap().len(), 1);
    assert_eq!(codeobj::open_any(co_path, Some("gfx90a:xnack+")).unwrap().len(), 0);
}

#[test]
fn rocrand_gfx90a_kernels_match_clang_offload_bundler() {
    let lib = Path::new("/usr/lib/x86_64-linux-gnu/librocrand.so.1");
    require_file(lib, "librocrand1");
    require_llvm();
    require_tools(&["clang-offload-bundler-19", "llvm-objcopy-19"]);
    let lib = std::fs::canonicalize(lib).unwrap();
    let scratch = Scratch::new("rocrand");
    let fatbin = scratch.path("rocrand.hipfb");
    run(Command::new("llvm-objcopy-19")
        .arg(format!("--dump-section=.hip_fatbin={}", fatbin.display()))
        .arg(&lib)
        .arg(scratch.path("discard")));
    let fat = std::fs::read(&fatbin).unwrap();
    let magic_count = count_occurrences(&fat, b"__CLANG_OFFLOAD_BUNDLE__");
    let bundles = codeobj::list_bundles(&lib).unwrap();
    assert_eq!(
        bundles.len(),
        magic_count,
        "bundles vs magic strings in the dumped .hip_fatbin"
    );

    // clang-offload-bundler sees the first bundle: its entry list and each gfx90a entry's kernels.
    let list = run(Command::new("clang-offload-bundler-19")
        .arg("--list")
        .arg("--type=o")
        .arg(format!("--input={}", fatbin.display())));
    let ids: BTreeSet<String> = list
        .lines()
        .map(|l| l.trim().to_string())
        .filter(|l| !l.is_empty())
        .collect();
    let ours: BTreeSet<String> = bundles[0].entries.iter().map(|e| e.id.clone()).collect();
    assert_eq!(ours, ids);

    let loaded = codeobj::open_any(&lib, Some("gfx90a")).unwrap();
    let gfx90a_ids: Vec<&String> = ids.iter().filter(|i| i.contains("--gfx90a")).collect();
    assert!(!gfx90a_ids.is_empty(), "rocrand has gfx90a entries");
    let mut expected_kernels = 0;
    for id in &gfx90a_ids {
        let out = scratch.path("entry.co");
        run(Command::new("clang-offload-bundler-19")
            .args(["--unbundle", "--type=o"])
            .arg(format!("--input={}", fatbin.display()))
            .arg(format!("--targets={id}"))
            .arg(format!("--output={}", out.display())));
        let bytes = std::fs::read(&out).unwrap();
        let kds: BTreeSet<String> = readelf_symbols(&out)
            .into_iter()
            .filter(|s| s.kind == "OBJECT" && s.name.ends_with(".kd"))
            .map(|s| s.name)
            .collect();
        expected_kernels += kds.len();
        let ours = loaded
            .iter()
            .find(|l| l.source.bundle_index == Some(0) && l.source.entry_id.as_deref() == Some(id.as_str()))
            .unwrap_or_else(|| panic!("entry {id} loaded"));
        assert_eq!(ours.code_object.bytes(), &bytes[..], "{id}: bytes");
        let our_kds: BTreeSet<String> = ours
            .code_object
            .kernels
            .iter()
            .map(|k| k.descriptor_symbol.clone())
            .collect();
        assert_eq!(our_kds, kds, "{id}: kernels");
        // The full comparison with llvm-readelf/llvm-objdump on a real library code object.
        println!("{}", check_against_llvm(&out, None, true));
        // Metadata matches kernels one to one.
        let notes = readelf_notes(&out);
        assert_eq!(notes.kernels.len(), kds.len());
        assert!(ours
            .code_object
            .kernels
            .iter()
            .all(|k| k.metadata_index.is_some() && k.function_index.is_some()));
    }
    let ours_first: usize = loaded
        .iter()
        .filter(|l| l.source.bundle_index == Some(0))
        .map(|l| l.code_object.kernels.len())
        .sum();
    assert_eq!(ours_first, expected_kernels);
    println!(
        "rocrand: {} bundles, {} gfx90a code objects, {} gfx90a kernels",
        bundles.len(),
        loaded.len(),
        loaded.iter().map(|l| l.code_object.kernels.len()).sum::<usize>()
    );
}

/// Slow (a 1.2 GB library, ~500 process runs): `cargo test -p isa-amdgpu --test codeobj -- --ignored`.
#[test]
#[ignore]
fn rocsparse_all_bundles_match_clang_offload_bundler() {
    let lib = Path::new("/usr/lib/x86_64-linux-gnu/librocsparse.so.0");
    require_file(lib, "librocsparse0");
    require_tools(&["clang-offload-bundler-19", "llvm-readelf-19"]);
    let lib = std::fs::canonicalize(lib).unwrap();
    let scratch = Scratch::new("rocsparse");
    let t = std::time::Instant::now();
    let loaded = codeobj::open_any(&lib, Some("gfx90a")).unwrap();
    let elapsed = t.elapsed();
    let bundles = codeobj::list_bundles(&lib).unwrap();
    let whole = std::fs::read(&lib).unwrap();
    // Independent bundle count: magic strings inside the .hip_fatbin section's file range.
    let secs = run(Command::new("llvm-readelf-19").args(["-S", "-W"]).arg(&lib));
    let line = secs.lines().find(|l| l.contains(".hip_fatbin ")).unwrap();
    let f: Vec<&str> = line.split(']').nth(1).unwrap().split_whitespace().collect();
    let off = usize::from_str_radix(f[3], 16).unwrap();
    let size = usize::from_str_radix(f[4], 16).unwrap();
    assert_eq!(
        bundles.len(),
        count_occurrences(&whole[off..off + size], b"__CLANG_OFFLOAD_BUNDLE__")
    );
    let mut expected = 0usize;
    for b in &bundles {
        let path = scratch.path("one.hipfb");
        let start = off + b.offset as usize;
        std::fs::write(&path, &whole[start..start + b.len as usize]).unwrap();
        let list = run(Command::new("clang-offload-bundler-19")
            .arg("--list")
            .arg("--type=o")
            .arg(format!("--input={}", path.display())));
        for id in list.lines().map(str::trim).filter(|i| i.contains("--gfx90a")) {
            let out = scratch.path("e.co");
            run(Command::new("clang-offload-bundler-19")
                .args(["--unbundle", "--type=o"])
                .arg(format!("--input={}", path.display()))
                .arg(format!("--targets={id}"))
                .arg(format!("--output={}", out.display())));
            let n = readelf_symbols(&out)
                .iter()
                .filter(|s| s.table == ".symtab" && s.kind == "OBJECT" && s.name.ends_with(".kd"))
                .count();
            expected += n;
        }
    }
    let ours: usize = loaded.iter().map(|l| l.code_object.kernels.len()).sum();
    println!(
        "rocsparse: {} bundles, {} gfx90a code objects, {ours} kernels, open_any took {elapsed:?}",
        bundles.len(),
        loaded.len()
    );
    assert_eq!(ours, expected);
}

#[test]
fn malformed_inputs_give_errors_that_say_what_and_where() {
    require_llvm();
    let scratch = Scratch::new("bad");
    let out = scratch.path("k.co");
    compile_cl(&scratch, KERNELS_CL, "gfx90a", Some(5), &out);
    let good = std::fs::read(&out).unwrap();

    let e = CodeObject::parse(&good[..40], "short.co").unwrap_err().to_string();
    assert!(e.contains("short.co") && e.contains("truncated ELF header"), "{e}");

    let mut bad = good.clone();
    bad[18] = 62; // EM_X86_64
    let e = CodeObject::parse(&bad, "m.co").unwrap_err().to_string();
    assert!(
        e.contains("not an AMDGPU code object") && e.contains("e_machine 62"),
        "{e}"
    );

    let mut bad = good.clone();
    bad[8] = 0; // ABI version 0 = code object v2
    let e = CodeObject::parse(&bad, "v2.co").unwrap_err().to_string();
    assert!(e.contains("code object v2"), "{e}");

    // Metadata note whose MessagePack root is an array instead of a map.
    let co = CodeObject::parse(&good, "k.co").unwrap();
    let note = co.sections.iter().find(|s| s.sh_type == 7).expect("note section");
    let desc = note.file_offset as usize + 12 + 8; // n_namesz, n_descsz, n_type, "AMDGPU\0" padded to 8
    let mut bad = good.clone();
    bad[desc] = 0x90; // empty fixarray
    let e = CodeObject::parse(&bad, "md.co").unwrap_err().to_string();
    assert!(e.contains("metadata note: expected map, found array"), "{e}");

    // A kernel descriptor symbol pointing past its section.
    let kd_sym = co.kernels[0].descriptor_address;
    let symtab = co.sections.iter().find(|s| s.name == ".symtab").unwrap();
    let mut bad = good.clone();
    let entries = symtab.size as usize / 24;
    let mut patched = false;
    for i in 0..entries {
        let at = symtab.file_offset as usize + i * 24;
        let value = u64::from_le_bytes(bad[at + 8..at + 16].try_into().unwrap());
        let info = bad[at + 4];
        if value == kd_sym && info & 0xf == 1 {
            bad[at + 8..at + 16].copy_from_slice(&(kd_sym + 0x10_0000).to_le_bytes());
            patched = true;
        }
    }
    assert!(patched);
    let e = CodeObject::parse(&bad, "kd.co").unwrap_err().to_string();
    assert!(
        e.contains("kd.co") && e.contains(&co.kernels[0].descriptor_symbol) && e.contains("outside section"),
        "{e}"
    );

    // Bundle whose entry runs past the end.
    let host = scratch.path("host.empty");
    std::fs::write(&host, b"").unwrap();
    require_tools(&["clang-offload-bundler-19"]);
    {
        let b = scratch.path("b.hipfb");
        run(Command::new("clang-offload-bundler-19")
            .arg("--type=o")
            .arg("--targets=host-x86_64-unknown-linux-gnu,hipv4-amdgcn-amd-amdhsa--gfx90a")
            .arg(format!("--input={}", host.display()))
            .arg(format!("--input={}", out.display()))
            .arg(format!("--output={}", b.display())));
        let bytes = std::fs::read(&b).unwrap();
        let e = bundle::parse_bundles(&bytes[..bytes.len() - 100], "b.hipfb")
            .unwrap_err()
            .to_string();
        assert!(e.contains("b.hipfb") && e.contains("past end of bundle"), "{e}");
    }

    let junk = scratch.path("junk.bin");
    std::fs::write(&junk, b"hello world").unwrap();
    let e = codeobj::open_any(&junk, None).unwrap_err().to_string();
    assert!(e.contains("neither an ELF file nor a clang offload bundle"), "{e}");
    let e = codeobj::open_any(&scratch.path("missing.co"), None)
        .unwrap_err()
        .to_string();
    assert!(e.contains("missing.co"), "{e}");
}

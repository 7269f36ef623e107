//! The translation cache on disk: a second JIT (as a second process would) on the same directory translates
//! nothing and computes the same results; corrupted and truncated files are ignored and replaced, and so are
//! files planted from another user's cache; a directory or key file others may write or read is not used; the
//! directory stays within its size bound; two processes translating the same blocks into one directory at once
//! leave only whole, usable files.

use std::path::{Path, PathBuf};
use std::process::Command;

use emu_core::dispatch::DispatchShape;
use emu_core::engine::{KernelDispatch, Limits};
use emu_core::kernarg::ArgValue;
use emu_core::memory::{AllocKind, DeviceMemory};
use emu_core::observe::NoObserver;
use emu_core::DevicePreset;
use isa_amdgpu::codeobj::CodeObject;
use jit::disk::{DiskCache, DiskConfig, DiskError};
use jit::{Jit, JitOptions};

/// A fresh cache directory for one test.
fn cache_dir(test: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("wavejit-disk-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// A JIT that translates every block on first use and keeps translations in `dir`.
fn jit_on(dir: &Path, max_bytes: u64) -> Jit {
    Jit::with_options(JitOptions {
        disk: Some(DiskConfig {
            dir: dir.to_path_buf(),
            max_bytes,
        }),
        ..JitOptions::eager()
    })
    .unwrap()
}

/// Runs the tiled SGEMM (n = 64) and vadd on `jit` and returns C and the vadd result, as bytes.
fn workload(jit: &Jit) -> (Vec<u8>, Vec<u8>) {
    let dev = DevicePreset::by_name("mi210").unwrap();
    let mem = DeviceMemory::new(1 << 30).unwrap();
    let n = 64u32;
    let bytes = (n * n * 4) as u64;
    let fill = |label: &str, seed: u32| {
        let a = mem.allocate(bytes, AllocKind::Buffer, label).unwrap();
        let v: Vec<u8> = (0..n * n)
            .flat_map(|i| ((i.wrapping_mul(seed) % 17) as f32 - 8.0).to_le_bytes())
            .collect();
        mem.write(a, &v).unwrap();
        a
    };
    let (a, b) = (fill("A", 7), fill("B", 13));
    let c = mem.allocate(bytes, AllocKind::Buffer, "C").unwrap();
    let co = CodeObject::parse(test_kernels::by_name("sgemm-gfx90a.co").unwrap(), "sgemm").unwrap();
    let args = [
        ArgValue::Pointer(a),
        ArgValue::Pointer(b),
        ArgValue::Pointer(c),
        ArgValue::U32(n),
    ];
    let shape = DispatchShape::new([n, n, 1], [16, 16, 1], dev).unwrap();
    KernelDispatch {
        mem: &mem,
        device: dev,
        co: &co,
        kernel: &co.kernels[0],
        shape,
        args: &args,
        limits: Limits::default(),
    }
    .run_with(jit, &NoObserver)
    .unwrap();
    let mut out_c = vec![0u8; bytes as usize];
    mem.read(c, &mut out_c).unwrap();
    let co = CodeObject::parse(test_kernels::by_name("vadd-gfx90a.co").unwrap(), "vadd").unwrap();
    let m = 1000u32;
    let sum = mem.allocate(4 * m as u64, AllocKind::Buffer, "sum").unwrap();
    let args = [
        ArgValue::Pointer(a),
        ArgValue::Pointer(b),
        ArgValue::Pointer(sum),
        ArgValue::U32(m),
    ];
    let shape = DispatchShape::new([m, 1, 1], [256, 1, 1], dev).unwrap();
    KernelDispatch {
        mem: &mem,
        device: dev,
        co: &co,
        kernel: &co.kernels[0],
        shape,
        args: &args,
        limits: Limits::default(),
    }
    .run_with(jit, &NoObserver)
    .unwrap();
    let mut out_sum = vec![0u8; 4 * m as usize];
    mem.read(sum, &mut out_sum).unwrap();
    (out_c, out_sum)
}

/// The block files in `dir`.
fn block_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for sub in std::fs::read_dir(dir).unwrap().flatten().filter(|s| s.path().is_dir()) {
        for f in std::fs::read_dir(sub.path()).unwrap().flatten() {
            files.push(f.path());
        }
    }
    files.sort();
    files
}

#[test]
fn a_second_jit_on_the_same_cache_translates_nothing_and_computes_the_same() {
    let dir = cache_dir("second");
    let first = jit_on(&dir, 64 << 20);
    let expected = workload(&first);
    let s1 = first.stats();
    assert!(s1.blocks > 0 && s1.stored == s1.blocks && s1.loaded == 0, "{s1}");
    assert_eq!(block_files(&dir).len() as u64, s1.stored);
    drop(first);
    let second = jit_on(&dir, 64 << 20);
    assert_eq!(workload(&second), expected);
    let s2 = second.stats();
    assert_eq!(s2.blocks, 0, "the second JIT translated: {s2}");
    assert_eq!(s2.loaded, s1.blocks, "{s2}");
    assert_eq!(s2.loaded_insts, s1.compiled + s1.not_compiled);
    // loading is far cheaper than translating (it runs the front end, not Cranelift's code generation)
    assert!(
        s2.load_ns < s1.translate_ns / 3,
        "load {} ns, translation {} ns",
        s2.load_ns,
        s1.translate_ns
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_tiered_jit_loads_the_hot_blocks_an_earlier_one_kept_and_translates_nothing() {
    let dir = cache_dir("tiered");
    let options = JitOptions {
        hot_after: 4,
        hot_after_cached: 2,
        background: true,
        disk: Some(DiskConfig {
            dir: dir.clone(),
            max_bytes: 64 << 20,
        }),
    };
    let first = Jit::with_options(options.clone()).unwrap();
    let expected = workload(&first);
    first.settle();
    let s1 = first.stats();
    assert!(s1.interpreted > 0 && s1.blocks > 0 && s1.stored == s1.blocks, "{s1}");
    drop(first);
    let second = Jit::with_options(options).unwrap();
    assert_eq!(workload(&second), expected);
    second.settle();
    let s2 = second.stats();
    assert_eq!(s2.blocks, 0, "{s2}");
    assert_eq!(s2.loaded, s1.blocks, "{s2}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn corrupted_truncated_and_foreign_cache_files_are_ignored_and_replaced() {
    let dir = cache_dir("corrupt");
    let first = jit_on(&dir, 64 << 20);
    let expected = workload(&first);
    let translated = first.stats().blocks;
    drop(first);
    let files = block_files(&dir);
    assert!(files.len() >= 3, "{files:?}");
    for (i, f) in files.iter().enumerate() {
        let mut bytes = std::fs::read(f).unwrap();
        match i % 3 {
            // a flipped bit in the machine code
            0 => {
                let at = bytes.len() / 2;
                bytes[at] ^= 0x10;
            }
            // a file cut short (a writer that died, a full disk)
            1 => bytes.truncate(bytes.len() / 3),
            // something else entirely under that name
            _ => bytes = b"not a block file".to_vec(),
        }
        std::fs::write(f, &bytes).unwrap();
    }
    let second = jit_on(&dir, 64 << 20);
    assert_eq!(workload(&second), expected, "results from damaged files");
    let s = second.stats();
    assert_eq!(
        (s.loaded, s.blocks),
        (0, translated),
        "every damaged file is translated again: {s}"
    );
    drop(second);
    // and the files were replaced with good ones
    let third = jit_on(&dir, 64 << 20);
    assert_eq!(workload(&third), expected);
    assert_eq!((third.stats().blocks, third.stats().loaded), (0, translated));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn block_files_planted_from_another_users_cache_are_not_loaded() {
    // the attacker runs the same program with a cache of their own, whose files carry every public hash and
    // checksum right, and puts them into the victim's directory under the same names
    let (victim, attacker) = (cache_dir("victim"), cache_dir("attacker"));
    let first = jit_on(&victim, 64 << 20);
    let expected = workload(&first);
    let translated = first.stats().blocks;
    drop(first);
    workload(&jit_on(&attacker, 64 << 20));
    let theirs = block_files(&attacker);
    assert_eq!(theirs.len(), block_files(&victim).len());
    for f in &theirs {
        let to = victim.join(f.strip_prefix(&attacker).unwrap());
        assert!(
            to.is_file(),
            "the attacker's file has the name of one of the victim's: {to:?}"
        );
        std::fs::copy(f, &to).unwrap();
    }
    let second = jit_on(&victim, 64 << 20);
    assert_eq!(workload(&second), expected);
    let s = second.stats();
    assert_eq!(
        (s.loaded, s.blocks),
        (0, translated),
        "no planted file is loaded, every block is translated again: {s}"
    );
    // the key stays each user's own: 0600 in a 0700 directory
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!((mode(&victim), mode(&victim.join(jit::disk::KEY_FILE))), (0o700, 0o600));
    assert_ne!(
        std::fs::read(victim.join(jit::disk::KEY_FILE)).unwrap(),
        std::fs::read(attacker.join(jit::disk::KEY_FILE)).unwrap()
    );
    let _ = std::fs::remove_dir_all(&victim);
    let _ = std::fs::remove_dir_all(&attacker);
}

#[test]
fn a_cache_directory_or_key_file_that_others_may_write_or_read_is_not_used() {
    use std::os::unix::fs::PermissionsExt;
    let isa = cranelift_native::builder()
        .unwrap()
        .finish(cranelift_codegen::settings::Flags::new(
            cranelift_codegen::settings::builder(),
        ))
        .unwrap();
    let config = |dir: &Path| DiskConfig {
        dir: dir.to_path_buf(),
        max_bytes: 64 << 20,
    };
    let chmod = |p: &Path, mode: u32| std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
    // a directory its group may write: refused, and a JIT on it keeps nothing there
    let dir = cache_dir("group-writable");
    std::fs::create_dir(&dir).unwrap();
    chmod(&dir, 0o770);
    match DiskCache::open(config(&dir), &*isa) {
        Err(DiskError::NotPrivate { why, .. }) => assert!(why.contains("mode 770"), "{why}"),
        other => panic!("a group-writable directory was accepted: {:?}", other.err()),
    }
    let jit = jit_on(&dir, 64 << 20);
    workload(&jit);
    assert_eq!((jit.stats().stored, jit.stats().loaded), (0, 0), "{}", jit.stats());
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "nothing written into it");
    // a key file others may read: refused
    chmod(&dir, 0o700);
    DiskCache::open(config(&dir), &*isa).unwrap();
    let key = dir.join(jit::disk::KEY_FILE);
    chmod(&key, 0o644);
    match DiskCache::open(config(&dir), &*isa) {
        Err(DiskError::NotPrivate { why, .. }) => assert!(why.contains("mode 644"), "{why}"),
        other => panic!("a key file others may read was accepted: {:?}", other.err()),
    }
    // a key of the wrong length: refused, not padded or cut
    chmod(&key, 0o600);
    std::fs::write(&key, b"short").unwrap();
    assert!(matches!(
        DiskCache::open(config(&dir), &*isa),
        Err(DiskError::BadKey { len: 5, .. })
    ));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_cache_directory_stays_within_its_size_bound_dropping_the_least_recently_used() {
    let dir = cache_dir("bound");
    let unbounded = jit_on(&dir, 64 << 20);
    let expected = workload(&unbounded);
    drop(unbounded);
    let all = DiskCache::size_on_disk(&dir);
    let files = block_files(&dir).len();
    let _ = std::fs::remove_dir_all(&dir);
    // room for about a third of the blocks
    let max = all / 3;
    let bounded = jit_on(&dir, max);
    assert_eq!(workload(&bounded), expected);
    let size = DiskCache::size_on_disk(&dir);
    assert!(size <= max && size > 0, "{size} bytes on disk, bound {max}");
    assert!(block_files(&dir).len() < files);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Not a test of its own: the child process of `two_processes_translating_at_once_leave_a_usable_cache`, which
/// runs it with `WAVEJIT_TEST_CHILD_CACHE` set.
#[test]
#[ignore = "run as a child process by two_processes_translating_at_once_leave_a_usable_cache"]
fn child_translates_the_workload_into_a_shared_cache() {
    let dir = std::env::var_os("WAVEJIT_TEST_CHILD_CACHE").expect("WAVEJIT_TEST_CHILD_CACHE names the cache directory");
    let jit = jit_on(Path::new(&dir), 64 << 20);
    workload(&jit);
    println!("child: {}", jit.stats());
}

#[test]
fn two_processes_translating_at_once_leave_a_usable_cache() {
    let dir = cache_dir("concurrent");
    let exe = std::env::current_exe().unwrap();
    let spawn = || {
        Command::new(&exe)
            .args([
                "--ignored",
                "--exact",
                "child_translates_the_workload_into_a_shared_cache",
                "--nocapture",
            ])
            .env("WAVEJIT_TEST_CHILD_CACHE", &dir)
            .spawn()
            .unwrap()
    };
    // twice over, so the second round's writers replace files a reader of the first may be reading
    for round in 0..2 {
        let (a, b) = (spawn(), spawn());
        for mut c in [a, b] {
            assert!(c.wait().unwrap().success(), "round {round}: a child failed");
        }
    }
    let names: Vec<String> = block_files(&dir)
        .iter()
        .map(|f| f.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert!(
        names.iter().all(|n| n.ends_with(".wjb")),
        "temporary files left: {names:?}"
    );
    let jit = jit_on(&dir, 64 << 20);
    let reference = Jit::new().unwrap();
    assert_eq!(workload(&jit), workload(&reference));
    let s = jit.stats();
    assert!(
        s.blocks == 0 && s.loaded > 0,
        "every file written at once is whole and usable: {s}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn every_block_of_every_bundled_kernel_translates_to_code_free_of_process_addresses() {
    // the front end of every block (as the runner splits them), then the pass that turns this process's
    // addresses into relocations: a block whose code still held one could not go to disk. A new address the
    // code generator embeds must be added to `jit::reloc::Symbols`.
    let ptr = cranelift_codegen::ir::types::I64;
    let mut blocks = 0;
    for (name, bytes) in test_kernels::ALL {
        let co = CodeObject::parse(bytes, name).unwrap();
        let target = isa_amdgpu::Target::from_name(&co.target.processor).unwrap();
        let text = co.text_bytes();
        let insts: Vec<isa_amdgpu::Inst> = isa_amdgpu::decode_all(text, 0, target)
            .into_iter()
            .filter_map(|(_, r)| r.ok())
            .collect();
        for block in insts.split_inclusive(jit::compile::ends_block) {
            for chunk in block.chunks(jit::compile::MAX_BLOCK) {
                let pc = 0x1000;
                let built = jit::compile::build(ptr, chunk.to_vec(), pc, pc, dummy_interpret, None);
                let mut built = built.unwrap_or_else(|e| panic!("{name}: {e}"));
                let syms = built.symbols(dummy_interpret, None);
                let free = jit::reloc::make_relocatable(&mut built.func, &syms);
                assert!(
                    free,
                    "{name}: a block from {} still holds an address of this process",
                    isa_amdgpu::disasm::text(&chunk[0])
                );
                blocks += 1;
            }
        }
    }
    assert!(blocks > 200, "{blocks} blocks");
}

extern "C" fn dummy_interpret(_: *mut jit::ctx::Ctx, _: *const isa_amdgpu::Inst, _: u64) -> u32 {
    0
}

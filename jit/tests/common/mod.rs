//! What the engine tests share: a dispatch on the interpreter and on an engine from the same device memory,
//! compared; instructions assembled by llvm-mc-19.

use emu_core::engine::{EngineError, KernelDispatch, RunStats};

/// Runs `d` on the interpreter, then on `engine` from the same memory: both must leave every buffer
/// byte-identical and fail (if they fail) with the same report; on one host thread they run the same schedule
/// and must also count the same statistics (on more, contended atomic retry loops may spin differently).
/// `engine_name` names the engine in failure messages. Returns the engine's result.
// not every test binary that includes this module dispatches kernels
#[allow(dead_code)]
pub fn against_interpreter(
    d: &KernelDispatch<'_>,
    engine: &jit::Jit,
    engine_name: &str,
) -> Result<RunStats, EngineError> {
    let (mem, kernel, limits) = (d.mem, d.kernel, d.limits);
    let before = mem.snapshot_buffers().unwrap();
    let interp = d.run();
    let after_interp = mem.snapshot_buffers().unwrap();
    mem.restore_buffers(&before).unwrap();
    let jitted = d.run_with(engine, &emu_core::observe::NoObserver);
    match (&interp, &jitted) {
        (Ok(i), Ok(j)) => {
            assert!(
                mem.snapshot_buffers().unwrap() == after_interp,
                "{}: the {engine_name}'s memory differs from the interpreter's",
                kernel.name
            );
            if limits.threads == Some(1) {
                assert!(
                    i.same_but_code_address(j),
                    "{}: statistics differ: interpreter {i:?}, JIT {j:?}",
                    kernel.name
                );
            }
        }
        // the code is loaded at a different address for each dispatch: compare reports without addresses; and a
        // fault report names the allocations on both sides of the address, which may be an earlier dispatch's
        // code or kernarg segment, freed by the time of a later one
        (Err(i), Err(j)) => assert_eq!(
            without_hex(&i.to_string()).replace(" (freed)", ""),
            without_hex(&j.to_string()).replace(" (freed)", ""),
            "{}: the engines fail differently",
            kernel.name
        ),
        _ => panic!(
            "{}: interpreter {:?}, {engine_name} {:?}",
            kernel.name,
            interp.as_ref().err(),
            jitted.as_ref().err()
        ),
    }
    jitted
}

/// `text` with every hexadecimal number replaced by `0x_`.
#[allow(dead_code)]
fn without_hex(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find("0x") {
        out.push_str(&rest[..i]);
        out.push_str("0x_");
        rest = rest[i + 2..].trim_start_matches(|c: char| c.is_ascii_hexdigit());
    }
    out + rest
}

/// Assembles every line of `asm` for `target` with llvm-mc-19, one encoding per line.
// not every test binary that includes this module assembles
#[allow(dead_code)]
pub fn assemble(asm: &[&str], target: isa_amdgpu::Target) -> Vec<Vec<u8>> {
    let out = std::process::Command::new("llvm-mc-19")
        .args(["-triple", "amdgcn-amd-amdhsa", &format!("-mcpu={}", target.name()), "-show-encoding"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin.take().expect("stdin").write_all(asm.join("\n").as_bytes())?;
            c.wait_with_output()
        })
        .unwrap_or_else(|e| panic!("llvm-mc-19 is needed for the tests that assemble instructions (scripts/setup.sh installs llvm-19): {e}"));
    assert!(
        out.status.success(),
        "llvm-mc-19 rejected the instructions for {}:\n{}",
        target.name(),
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let enc: Vec<Vec<u8>> = text
        .lines()
        .filter_map(|l| {
            l.split_once("encoding: [").map(|(_, e)| {
                e.trim_end_matches(']')
                    .split(',')
                    .map(|b| u8::from_str_radix(b.trim().trim_start_matches("0x"), 16).expect("a byte"))
                    .collect()
            })
        })
        .collect();
    assert_eq!(
        enc.len(),
        asm.len(),
        "llvm-mc-19 gave {} encodings for {} lines",
        enc.len(),
        asm.len()
    );
    enc
}

/// Where byte `q` of lane `l`'s private segment lies from the segment's base: the lanes' dwords interleaved,
/// as the hardware's swizzled scratch (ROCr's resource: 4-byte elements, index stride 64).
// not every test binary that includes this module reaches private memory
#[allow(dead_code)]
pub fn swizzled(l: usize, q: usize) -> usize {
    q / 4 * 256 + 4 * l + q % 4
}

//! The probe and the emitter agree: an instruction the probe accepts (`jit::compile::translatable`) is emitted
//! without the emitter meeting anything it cannot emit, in every way a block can be observed; and the probe
//! refuses what the JIT leaves to the interpreter.

use isa_amdgpu::{decode, Inst, Target};
use jit::compile::{build, translatable, Observed};

extern "C" fn no_call(_: *mut jit::ctx::Ctx, _: *const Inst, _: u64) -> u32 {
    0
}

/// The instructions of the LLVM test vectors of `file`, and of `random` pseudo-random words (which decode to
/// every kind of operand, invalid register numbers included).
fn corpus(target: Target, file: &str, random: usize) -> Vec<Inst> {
    let path = format!("{}/../isa-amdgpu/tests/data/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap();
    let mut words: Vec<Vec<u8>> = text
        .lines()
        .filter_map(|line| {
            let hex = line.split('\t').next()?;
            (0..hex.len() / 2)
                .map(|i| u8::from_str_radix(hex.get(2 * i..2 * i + 2)?, 16).ok())
                .collect()
        })
        .collect();
    let mut s = 0x9e37_79b9_7f4a_7c15u64 ^ target as u64;
    for _ in 0..random {
        let mut w = Vec::new();
        // three dwords: room for a literal
        for _ in 0..3 {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            w.extend_from_slice(&(s as u32).to_le_bytes());
        }
        words.push(w);
    }
    words.iter().filter_map(|w| decode(w, 0x1000, target).ok()).collect()
}

#[test]
fn every_instruction_the_probe_accepts_is_emitted_in_every_observation_mode() {
    let ptr = cranelift_codegen::ir::types::I64;
    let (mut accepted, mut refused) = (0, 0);
    for (target, file) in [
        (Target::Gfx90a, "vectors-gfx90a.txt"),
        (Target::Gfx942, "vectors-gfx942.txt"),
    ] {
        for inst in corpus(target, file, 20_000) {
            if !translatable(&inst, 0x1000) {
                refused += 1;
                continue;
            }
            accepted += 1;
            for observed in [Observed::No, Observed::Each, Observed::Batched] {
                let observe = (observed != Observed::No).then_some((no_call as jit::compile::Observe, observed));
                if let Err(e) = build(ptr, vec![inst], 0x1000, 0x1000, no_call, observe) {
                    panic!(
                        "{} ({target:?}, {observed:?}): the probe accepts it, the emitter does not: {e}",
                        isa_amdgpu::disasm::text(&inst)
                    );
                }
            }
        }
    }
    assert!(
        accepted > 30_000 && refused > 1_000,
        "{accepted} accepted, {refused} refused"
    );
}

#[test]
fn the_probe_refuses_what_only_the_interpreter_runs_and_accepts_plain_arithmetic() {
    let one = |target: Target, hex: &str| -> Inst {
        let bytes: Vec<u8> = (0..hex.len() / 2)
            .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap())
            .collect();
        decode(&bytes, 0x1000, target).unwrap()
    };
    // (encodings from the LLVM vectors)
    let cases = [
        // v_add_f32_e32 v225, s5, v10
        ("0514c203", true),
        // s_memtime s[8:9]: the shader clock
        ("020290c000000000", true),
        // s_memrealtime s[2:3]: the real-time clock
        ("820094c004000000", false),
        // s_set_gpr_idx_on s3, gpr_idx(SRC0,SRC2): index mode
        ("030511bf", false),
        // image_load a0, v16, s[4:11] d16
        ("020001f010000180", false),
        // buffer_load_format_x v0, off, s[0:3], s3 offset:1: a typed buffer access
        ("010000e0ff000003", false),
    ];
    for (hex, compiles) in cases {
        let inst = one(Target::Gfx90a, hex);
        assert_eq!(
            translatable(&inst, 0x1000),
            compiles,
            "{}",
            isa_amdgpu::disasm::text(&inst)
        );
    }
}

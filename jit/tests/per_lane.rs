//! Instructions whose results differ from lane to lane, on both engines and targets, against CPU references
//! written from the CDNA3 ISA guide's definitions: each instruction (assembled by llvm-mc-19) runs once on the
//! interpreter and once as a JIT block from the same wave, and both must leave what the reference computes.

use std::sync::OnceLock;

use emu_core::interp::Interp;
use emu_core::memory::DeviceMemory;
use emu_core::sem::execute;
use emu_core::wave::{Lanes, WaveState};
use isa_amdgpu::{decode, Target};

mod common;

fn jit() -> &'static jit::Jit {
    static JIT: OnceLock<jit::Jit> = OnceLock::new();
    JIT.get_or_init(|| jit::Jit::new().expect("a JIT for this host"))
}

/// Pseudo-random lane values (a fixed 64-bit LCG), the same on every run.
fn lanes(seed: u64, f: impl Fn(u64) -> u32) -> Lanes {
    let mut x = seed;
    std::array::from_fn(|_| {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        f(x >> 33)
    })
}

/// Runs the one instruction `asm` on `wave` for `target`: on the interpreter and as a JIT block, each from a copy;
/// both must leave the same registers. Returns the interpreter's wave.
fn run_both(asm: &str, target: Target, wave: &WaveState) -> WaveState {
    let bytes = &common::assemble(&[asm], target)[0];
    let inst = decode(bytes, 0x1000, target).unwrap_or_else(|e| panic!("{asm}: {e}"));
    let mem = DeviceMemory::new(1 << 20).expect("device memory");
    let (mut a, mut j) = (wave.clone(), wave.clone());
    let (mut lds_a, mut lds_j) = (vec![0u8; 65536], vec![0u8; 65536]);
    let mut b = Interp {
        wave: &mut a,
        mem: &mem,
        lds: &mut lds_a,
        mnemonic: "per_lane",
        accesses: None,
    };
    execute(&mut b, &inst, 0x1000).unwrap_or_else(|e| panic!("{asm} [{}] interpreter: {e}", target.name()));
    let exit = jit()
        .run_block_once(vec![inst], 0x1000, &mut j, &mem, &mut lds_j)
        .unwrap_or_else(|e| panic!("{asm}: the JIT failed: {e}"));
    assert!(
        matches!(exit, jit::BlockExit::Continue { .. }),
        "{asm} [{}] JIT: {exit:?}",
        target.name()
    );
    assert!(
        a.vgprs == j.vgprs && a.sgprs == j.sgprs,
        "{asm} [{}]: the engines leave different registers",
        target.name()
    );
    a
}

/// ds_permute_b32 (forward permute): every lane of EXEC, in lane order, sends its DATA0 to lane
/// ((ADDR + offset) / 4) mod 64 of a temporary that starts at 0 (so of several senders the highest lane wins);
/// VDST takes the temporary in EXEC's lanes and keeps its value in the others.
#[test]
fn ds_permute_sends_each_active_lane_to_the_lane_its_address_names_and_the_highest_sender_wins() {
    for target in Target::EXECUTED {
        for (seed, exec) in [(1u64, u64::MAX), (2, 0x0f0f_3c3c_ffff_0001), (3, 0x8000_0000_0000_0001)] {
            let mut w = WaveState::new(0x1000, 8, 0);
            w.set_exec(exec);
            // destination lanes with collisions (a byte address below 0, in high bits, or past lane 63 included)
            let dest = lanes(seed, |x| (x % 80) as u32);
            w.vgprs[1] = std::array::from_fn(|l| (dest[l] * 4).wrapping_sub(4) | if l % 7 == 0 { 0x100 } else { 0 });
            w.vgprs[2] = std::array::from_fn(|l| 0x1000 * l as u32 + 7);
            w.vgprs[0] = [0xdead_beef; 64];
            let out = run_both("ds_permute_b32 v0, v1, v2 offset:4", target, &w);
            let mut tmp = [0u32; 64];
            for l in (0..64).filter(|l| exec >> l & 1 == 1) {
                tmp[((w.vgprs[1][l].wrapping_add(4) / 4) % 64) as usize] = w.vgprs[2][l];
            }
            let want: Lanes = std::array::from_fn(|l| if exec >> l & 1 == 1 { tmp[l] } else { 0xdead_beef });
            assert_eq!(out.vgprs[0], want, "[{}] exec {exec:#x}", target.name());
        }
    }
}

/// A forward permute by a permutation p followed by a backward permute (ds_bpermute_b32: lane l reads lane
/// ADDR / 4) by the same p gives every lane its own value back.
#[test]
fn ds_bpermute_undoes_ds_permute_by_the_same_permutation() {
    for target in Target::EXECUTED {
        let mut w = WaveState::new(0x1000, 8, 0);
        w.set_exec(u64::MAX);
        // a permutation of the lanes: l -> (l * 37 + 11) mod 64 (37 is odd, so it is one-to-one)
        w.vgprs[1] = std::array::from_fn(|l| ((l as u32 * 37 + 11) % 64) * 4);
        w.vgprs[2] = lanes(9, |x| x as u32);
        let sent = run_both("ds_permute_b32 v3, v1, v2", target, &w);
        let back = run_both("ds_bpermute_b32 v4, v1, v3", target, &sent);
        assert_eq!(back.vgprs[4], w.vgprs[2], "[{}]", target.name());
    }
}

/// Runs `asm` on the interpreter alone (the JIT's runner hands a wave in VGPR index mode to it).
fn interpret(asm: &str, target: Target, wave: &mut WaveState) -> Result<(), String> {
    let bytes = &common::assemble(&[asm], target)[0];
    let inst = decode(bytes, 0x1000, target).unwrap_or_else(|e| panic!("{asm}: {e}"));
    let mem = DeviceMemory::new(1 << 20).expect("device memory");
    let mut lds = vec![0u8; 65536];
    let mut b = Interp {
        wave,
        mem: &mem,
        lds: &mut lds,
        mnemonic: "per_lane",
        accesses: None,
    };
    execute(&mut b, &inst, 0x1000).map(|_| ()).map_err(|e| e.to_string())
}

/// VGPR index mode (CDNA3 ISA guide, "VGPR Indexing"): s_set_gpr_idx_on sets M0[7:0] = S0[7:0] and M0[15:12] =
/// the mode and turns the mode on (both engines); v_mov_b32 then adds the index to its VGPR source (mode bit 12)
/// and destination (bit 15); s_set_gpr_idx_idx/mode change the fields, s_set_gpr_idx_off ends the mode.
#[test]
fn index_mode_moves_between_the_vgprs_m0_selects_and_refuses_other_valu_instructions() {
    for target in Target::EXECUTED {
        let mut w = WaveState::new(0x1000, 40, 0);
        w.set_exec(0xffff_0000_ffff_00ff);
        w.sgprs[124] = 0xabcd_0000;
        w.sgprs[2] = 0x1234_5605;
        for r in 0..40 {
            w.vgprs[r] = std::array::from_fn(|l| (r * 1000 + l) as u32);
        }
        // SRC0 and DST: mode 0b1001
        let mut w = run_both("s_set_gpr_idx_on s2, gpr_idx(SRC0,DST)", target, &w);
        assert!(w.gpr_idx, "[{}]", target.name());
        assert_eq!(w.sgprs[124], 0xabcd_9005, "[{}] M0", target.name());
        let before = w.vgprs.clone();
        interpret("v_mov_b32 v10, v20", target, &mut w).unwrap();
        let exec = w.exec();
        for r in 0..40 {
            let want: Lanes = if r == 15 {
                std::array::from_fn(|l| {
                    if exec >> l & 1 == 1 {
                        before[25][l]
                    } else {
                        before[15][l]
                    }
                })
            } else {
                before[r]
            };
            assert_eq!(w.vgprs[r], want, "[{}] v{r}", target.name());
        }
        // only the source indexed; an SGPR source is not
        let w2 = run_both("s_set_gpr_idx_mode gpr_idx(SRC0)", target, &w);
        assert_eq!(w2.sgprs[124], 0xabcd_1005, "[{}] M0", target.name());
        let mut w2 = run_both(
            "s_set_gpr_idx_idx s3",
            target,
            &WaveState {
                sgprs: {
                    let mut s = w2.sgprs;
                    s[3] = 0x102;
                    s
                },
                ..w2
            },
        );
        assert_eq!(w2.sgprs[124], 0xabcd_1002, "[{}] M0", target.name());
        interpret("v_mov_b32 v1, v3", target, &mut w2).unwrap();
        assert_eq!(w2.vgprs[1][3], before[5][3], "[{}]", target.name());
        interpret("v_mov_b32 v1, s2", target, &mut w2).unwrap();
        assert_eq!(w2.vgprs[1][3], 0x1234_5605, "[{}]", target.name());
        // other VALU instructions stop, and so does an index past v255
        let e = interpret("v_add_u32 v1, v2, v3", target, &mut w2.clone()).unwrap_err();
        assert!(
            e.contains("v_add_u32_e32: VGPR index mode (s_set_gpr_idx_on) on an instruction other than v_mov_b32"),
            "{e}"
        );
        let mut far = w2.clone();
        far.sgprs[124] = 0x8080;
        let e = interpret("v_mov_b32 v200, v1", target, &mut far).unwrap_err();
        assert!(
            e.contains("VGPR index mode reaches past v255, which the ISA guide calls illegal"),
            "{e}"
        );
        let off = run_both("s_set_gpr_idx_off", target, &w2);
        assert!(!off.gpr_idx, "[{}]", target.name());
    }
}

/// ds_swizzle_b32's FFT and rotate modes (offset 0xe000 and up, 0xc000 and up) read the lanes of the ISA guide's
/// examples (written there as the values 1..=0x20 of the lanes read), in each group of 32 lanes, on both engines.
#[test]
fn ds_swizzle_fft_and_rotate_modes_read_the_lanes_of_the_isa_guide_examples() {
    let fft0 = [
        1, 0x11, 9, 0x19, 5, 0x15, 0xd, 0x1d, 3, 0x13, 0xb, 0x1b, 7, 0x17, 0xf, 0x1f, 2, 0x12, 0xa, 0x1a, 6, 0x16, 0xe,
        0x1e, 4, 0x14, 0xc, 0x1c, 8, 0x18, 0x10, 0x20,
    ];
    let right1 = [
        0x1f, 2, 1, 4, 3, 6, 5, 8, 7, 0xa, 9, 0xc, 0xb, 0xe, 0xd, 0x10, 0xf, 0x12, 0x11, 0x14, 0x13, 0x16, 0x15, 0x18,
        0x17, 0x1a, 0x19, 0x1c, 0x1b, 0x1e, 0x1d, 0x20,
    ];
    for target in Target::EXECUTED {
        for (offset, table) in [(0xe000u32, fft0), (0xc000 | 1 << 10 | 1 << 5 | 1, right1)] {
            let mut w = WaveState::new(0x1000, 4, 0);
            w.set_exec(u64::MAX);
            w.vgprs[1] = std::array::from_fn(|l| 0x100 * l as u32 + 3);
            let out = run_both(&format!("ds_swizzle_b32 v0, v1 offset:{offset}"), target, &w);
            let want: Lanes = std::array::from_fn(|l| w.vgprs[1][(l & 0x20) + table[l & 0x1f] as usize - 1]);
            assert_eq!(out.vgprs[0], want, "[{}] offset {offset:#x}", target.name());
        }
    }
}

/// v_mad_u64_u32 and v_mad_i64_i32 (CDNA3 ISA guide, VOP3B): {VDST+1, VDST} = S0 * S1 + {S2+1, S2}, the
/// product of the 32-bit sources unsigned (signed) and exact, the sum wrapped to 64 bits; SDST's lane bit is the
/// carry out of bit 63 (unsigned) or the signed overflow of the sum, and 0 in lanes outside EXEC, where VDST
/// keeps its value. Lane values mix random words with the extremes, so about half the lanes carry; with an
/// addend of 0 none does.
#[test]
fn mad_64_32_multiplies_adds_and_reports_the_carry_or_overflow_in_every_lane() {
    let extreme = |x: u64, r: u32| [0, 1, 0x7fff_ffff, 0x8000_0000, 0xffff_ffff, r][(x % 6) as usize];
    for target in Target::EXECUTED {
        for (seed, exec) in [(1u64, u64::MAX), (2, 0x0f0f_3c3c_ffff_0001), (3, 0x8000_0000_0000_0001)] {
            let mut w = WaveState::new(0x1000, 8, 0);
            w.set_exec(exec);
            w.vgprs[1] = lanes(seed, |x| extreme(x >> 8, x as u32));
            w.vgprs[2] = lanes(seed + 10, |x| extreme(x >> 8, (x as u32).rotate_left(7)));
            w.vgprs[4] = lanes(seed + 20, |x| x as u32);
            w.vgprs[5] = lanes(seed + 30, |x| extreme(x >> 8, x as u32 ^ 0x5555_5555));
            w.sgprs[2] = 0x9e37_79b9;
            for (asm, signed, s2, zero) in [
                ("v_mad_u64_u32 v[6:7], s[10:11], v1, v2, v[4:5]", false, false, false),
                ("v_mad_i64_i32 v[6:7], s[10:11], v1, v2, v[4:5]", true, false, false),
                ("v_mad_u64_u32 v[6:7], s[10:11], s2, v1, v[4:5]", false, true, false),
                ("v_mad_i64_i32 v[6:7], s[10:11], s2, v2, v[4:5]", true, true, false),
                ("v_mad_u64_u32 v[6:7], s[10:11], v1, v2, 0", false, false, true),
                ("v_mad_i64_i32 v[6:7], s[10:11], v1, v2, 0", true, false, true),
            ] {
                w.vgprs[6] = [0xdead_beef; 64];
                w.vgprs[7] = [0x0bad_f00d; 64];
                w.sgprs[10] = 0x1234_5678;
                w.sgprs[11] = 0x9abc_def0;
                let out = run_both(asm, target, &w);
                let mut carry = 0u64;
                for l in 0..64 {
                    let (x, y) = if s2 {
                        (w.sgprs[2], w.vgprs[if signed { 2 } else { 1 }][l])
                    } else {
                        (w.vgprs[1][l], w.vgprs[2][l])
                    };
                    let acc = if zero {
                        0
                    } else {
                        (w.vgprs[5][l] as u64) << 32 | w.vgprs[4][l] as u64
                    };
                    let (sum, over) = if signed {
                        let p = x as i32 as i128 * y as i32 as i128 + acc as i64 as i128;
                        (p as u64, p < i64::MIN as i128 || p > i64::MAX as i128)
                    } else {
                        let p = x as u128 * y as u128 + acc as u128;
                        (p as u64, p > u64::MAX as u128)
                    };
                    let on = exec >> l & 1 == 1;
                    let want = if on {
                        (sum as u32, (sum >> 32) as u32)
                    } else {
                        (0xdead_beef, 0x0bad_f00d)
                    };
                    assert_eq!(
                        (out.vgprs[6][l], out.vgprs[7][l]),
                        want,
                        "{asm} [{}] lane {l}, exec {exec:#x}",
                        target.name()
                    );
                    carry |= ((on && over) as u64) << l;
                }
                let got = (out.sgprs[11] as u64) << 32 | out.sgprs[10] as u64;
                assert_eq!(got, carry, "{asm} [{}]: SDST, exec {exec:#x}", target.name());
                if exec == u64::MAX && !zero {
                    assert!(
                        carry != 0 && carry != u64::MAX,
                        "{asm}: lanes that carry and lanes that do not"
                    );
                }
            }
        }
    }
}

/// Runs `asm` on `wave` and `lds` (64 KiB) on the interpreter and as a JIT block, each from a copy; both must
/// leave the same registers and LDS. Returns the interpreter's.
fn run_both_lds(asm: &str, target: Target, wave: &WaveState, lds: &[u8]) -> (WaveState, Vec<u8>) {
    let bytes = &common::assemble(&[asm], target)[0];
    let inst = decode(bytes, 0x1000, target).unwrap_or_else(|e| panic!("{asm}: {e}"));
    let mem = DeviceMemory::new(1 << 20).expect("device memory");
    let (mut a, mut j) = (wave.clone(), wave.clone());
    let (mut lds_a, mut lds_j) = (lds.to_vec(), lds.to_vec());
    let mut b = Interp {
        wave: &mut a,
        mem: &mem,
        lds: &mut lds_a,
        mnemonic: "per_lane",
        accesses: None,
    };
    execute(&mut b, &inst, 0x1000).unwrap_or_else(|e| panic!("{asm} [{}] interpreter: {e}", target.name()));
    let exit = jit()
        .run_block_once(vec![inst], 0x1000, &mut j, &mem, &mut lds_j)
        .unwrap_or_else(|e| panic!("{asm}: the JIT failed: {e}"));
    assert!(
        matches!(exit, jit::BlockExit::Continue { .. }),
        "{asm} [{}] JIT: {exit:?}",
        target.name()
    );
    assert!(
        a.vgprs == j.vgprs && a.sgprs == j.sgprs,
        "{asm} [{}]: the engines leave different registers",
        target.name()
    );
    assert!(
        lds_a == lds_j,
        "{asm} [{}]: the engines leave different LDS",
        target.name()
    );
    (a, lds_a)
}

/// Runs `asm`, which must fault, on both engines from `wave` and `lds` (`what` names the case): the JIT's fault
/// ends with the interpreter's message, and the two leave the same LDS.
fn faults_alike(asm: &str, what: &str, target: Target, wave: &WaveState, lds: &[u8]) {
    let bytes = &common::assemble(&[asm], target)[0];
    let inst = decode(bytes, 0x1000, target).expect("decodes");
    let mem = DeviceMemory::new(1 << 20).expect("device memory");
    let (mut a, mut j, mut lds_a, mut lds_j) = (wave.clone(), wave.clone(), lds.to_vec(), lds.to_vec());
    let mut b = Interp {
        wave: &mut a,
        mem: &mem,
        lds: &mut lds_a,
        mnemonic: inst.info.name,
        accesses: None,
    };
    let fault = execute(&mut b, &inst, 0x1000).expect_err("past the LDS").to_string();
    let exit = jit()
        .run_block_once(vec![inst], 0x1000, &mut j, &mem, &mut lds_j)
        .expect("runs");
    let jit::BlockExit::Fault { error, .. } = exit else {
        panic!("{what}: {exit:?}")
    };
    assert!(error.ends_with(&fault), "{what}: {error} / {fault}");
    assert!(lds_a == lds_j, "{what}: the engines leave different LDS");
}

/// ds_write_b64 / ds_read_b64 and their read2/write2 forms (CDNA3 ISA guide, DS): each lane in EXEC stores
/// (loads) the 8 bytes {DATA+1, DATA} at ADDR + offset (offset0/offset1 times 8 for the two-address forms), low
/// dword first; lanes outside EXEC leave the LDS and VDST as they are. Lanes at consecutive 8-byte addresses
/// (whole chunks at once in the JIT when EXEC is full), up to the LDS's last byte (and past it: a fault on both
/// engines), and lanes with their pairs swapped (lane by lane), under a full and a partial EXEC.
#[test]
fn lds_64_bit_accesses_move_each_lanes_two_dwords_at_consecutive_and_scattered_addresses() {
    const LEN: u32 = 65536;
    for target in Target::EXECUTED {
        for exec in [u64::MAX, 0x0f0f_3c3c_ffff_0001] {
            // (first address, lane spacing rule): consecutive, consecutive up to the end, pairs swapped
            for (base, swap) in [(0x100u32, false), (LEN - 8 * 64 - 16, false), (0x2000, true)] {
                let mut w = WaveState::new(0x1000, 16, 0);
                w.set_exec(exec);
                w.vgprs[1] = std::array::from_fn(|l| base + 8 * if swap { l as u32 ^ 1 } else { l as u32 });
                w.vgprs[2] = lanes(base as u64 + 1, |x| x as u32);
                w.vgprs[3] = lanes(base as u64 + 2, |x| x as u32 ^ 0xa5a5_0000);
                w.vgprs[4] = lanes(base as u64 + 3, |x| x as u32);
                w.vgprs[5] = lanes(base as u64 + 4, |x| x as u32 ^ 0x5a5a_0000);
                for r in 6..12 {
                    w.vgprs[r] = [0xdead_0000 + r as u32; 64];
                }
                let lds: Vec<u8> = (0..LEN).map(|i| (i * 7 + 3) as u8).collect();
                let on = |l: usize| exec >> l & 1 == 1;
                let put = |mem: &mut Vec<u8>, at: u32, lo: u32, hi: u32| {
                    mem[at as usize..at as usize + 8].copy_from_slice(&((hi as u64) << 32 | lo as u64).to_le_bytes())
                };
                let word =
                    |mem: &[u8], at: u32| u32::from_le_bytes(mem[at as usize..at as usize + 4].try_into().unwrap());
                let name = |asm: &str| format!("{asm} [{}] base {base:#x} exec {exec:#x}", target.name());

                let (_, after) = run_both_lds("ds_write_b64 v1, v[2:3] offset:16", target, &w, &lds);
                let mut want = lds.clone();
                for l in (0..64).filter(|&l| on(l)) {
                    put(&mut want, w.vgprs[1][l] + 16, w.vgprs[2][l], w.vgprs[3][l]);
                }
                assert!(after == want, "{}: LDS", name("ds_write_b64"));
                let (r, _) = run_both_lds("ds_read_b64 v[6:7], v1 offset:16", target, &w, &after);
                for l in 0..64 {
                    let got = (r.vgprs[6][l], r.vgprs[7][l]);
                    let expect = if on(l) {
                        (w.vgprs[2][l], w.vgprs[3][l])
                    } else {
                        (0xdead_0006, 0xdead_0007)
                    };
                    assert_eq!(got, expect, "{}: lane {l}", name("ds_read_b64"));
                }
                if base + 8 * 64 + 512 > LEN {
                    // the last active lane's access across the LDS's end: both engines fault alike
                    let last = 63 - exec.leading_zeros();
                    let asm = format!("ds_write_b64 v1, v[2:3] offset:{}", LEN - (base + 8 * last) - 4);
                    faults_alike(&asm, &name("past the end"), target, &w, &lds);
                    continue;
                }
                let (_, after) = run_both_lds("ds_write2_b64 v1, v[2:3], v[4:5] offset1:64", target, &w, &lds);
                let mut want = lds.clone();
                for l in (0..64).filter(|&l| on(l)) {
                    put(&mut want, w.vgprs[1][l], w.vgprs[2][l], w.vgprs[3][l]);
                    put(&mut want, w.vgprs[1][l] + 512, w.vgprs[4][l], w.vgprs[5][l]);
                }
                assert!(after == want, "{}: LDS", name("ds_write2_b64"));
                let (r, _) = run_both_lds("ds_read2_b64 v[8:11], v1 offset0:1 offset1:64", target, &w, &lds);
                for l in 0..64 {
                    let a = w.vgprs[1][l];
                    let expect = [
                        word(&lds, a + 8),
                        word(&lds, a + 12),
                        word(&lds, a + 512),
                        word(&lds, a + 516),
                    ];
                    let expect = if on(l) {
                        expect
                    } else {
                        [0xdead_0008, 0xdead_0009, 0xdead_000a, 0xdead_000b]
                    };
                    let got = [8, 9, 10, 11].map(|k| r.vgprs[k][l]);
                    assert_eq!(got, expect, "{}: lane {l}", name("ds_read2_b64"));
                }
            }
        }
    }
}

/// ds_write2_b64 / ds_read2_b64 at adjacent offsets (offset1 = offset0 + 1: each lane's two pairs are 16 bytes
/// in a row, as rocPRIM's block exchanges of 64-bit items write and read them). The writes are two passes: every
/// active lane's first pair, then every lane's second, so where lanes overlap a later lane's first pair does not
/// cover an earlier lane's second (CDNA3 ISA guide, DS: DATA0 at ADDR + OFFSET0 * 8, DATA1 at ADDR + OFFSET1 *
/// 8). Lanes 16 bytes or more apart in increasing order (one 16-byte access a lane in the JIT when EXEC is full),
/// 8 bytes apart (overlapping), in decreasing order, up to the LDS's end and past it (a fault on both engines).
#[test]
fn lds_64_bit_pairs_at_adjacent_offsets_are_written_in_two_passes_and_read_whole() {
    const LEN: u32 = 65536;
    type Layout = (&'static str, fn(u32) -> u32);
    let layouts: [Layout; 6] = [
        ("a block exchange's rows", |l| 64 * l + 8 * (l >> 2)),
        ("16 bytes apart", |l| 0x200 + 16 * l),
        ("8 bytes apart", |l| 0x100 + 8 * l),
        ("decreasing", |l| 0x4000 - 24 * l),
        ("all at one address", |_| 0x800),
        ("up to the end", |l| LEN - 24 - 16 * (63 - l)),
    ];
    for target in Target::EXECUTED {
        for exec in [u64::MAX, 0xfff0_3c3c_ffff_0001] {
            for (layout, at) in layouts {
                let mut w = WaveState::new(0x1000, 16, 0);
                w.set_exec(exec);
                w.vgprs[1] = std::array::from_fn(|l| at(l as u32));
                for r in 2..6 {
                    w.vgprs[r] = lanes(r as u64 * 977, |x| x as u32 ^ (r as u32) << 28);
                }
                for r in 8..12 {
                    w.vgprs[r] = [0xdead_0000 + r as u32; 64];
                }
                let lds: Vec<u8> = (0..LEN).map(|i| (i * 13 + 5) as u8).collect();
                let on = |l: usize| exec >> l & 1 == 1;
                let name = |asm: &str| format!("{asm} [{}] {layout}, exec {exec:#x}", target.name());
                let word =
                    |mem: &[u8], at: u32| u32::from_le_bytes(mem[at as usize..at as usize + 4].try_into().unwrap());

                let (_, after) = run_both_lds("ds_write2_b64 v1, v[2:3], v[4:5] offset0:1 offset1:2", target, &w, &lds);
                let mut want = lds.clone();
                for (pass, (lo, hi)) in [(2usize, 3usize), (4, 5)].into_iter().enumerate() {
                    for l in (0..64).filter(|&l| on(l)) {
                        let a = (w.vgprs[1][l] + 8 + 8 * pass as u32) as usize;
                        want[a..a + 4].copy_from_slice(&w.vgprs[lo][l].to_le_bytes());
                        want[a + 4..a + 8].copy_from_slice(&w.vgprs[hi][l].to_le_bytes());
                    }
                }
                assert!(after == want, "{}: LDS", name("ds_write2_b64"));

                let (r, _) = run_both_lds("ds_read2_b64 v[8:11], v1 offset0:1 offset1:2", target, &w, &after);
                for l in 0..64 {
                    let a = w.vgprs[1][l] + 8;
                    let expect = if on(l) {
                        [0, 4, 8, 12].map(|k| word(&after, a + k))
                    } else {
                        [0xdead_0008, 0xdead_0009, 0xdead_000a, 0xdead_000b]
                    };
                    assert_eq!(
                        [8, 9, 10, 11].map(|k| r.vgprs[k][l]),
                        expect,
                        "{}: lane {l}",
                        name("ds_read2_b64")
                    );
                }

                if layout == "up to the end" {
                    // one more byte: the last active lane's second pair crosses the LDS's end, on both engines alike
                    let mut past = w.clone();
                    past.vgprs[1] = std::array::from_fn(|l| at(l as u32) + 8);
                    for asm in [
                        "ds_write2_b64 v1, v[2:3], v[4:5] offset0:1 offset1:2",
                        "ds_read2_b64 v[8:11], v1 offset0:1 offset1:2",
                    ] {
                        faults_alike(asm, &name(asm), target, &past, &lds);
                    }
                }
            }
        }
    }
}

//! Private memory on both engines against a CPU model of each lane's private bytes: MUBUF through the private
//! segment buffer (gfx90a), SCRATCH (gfx942) and FLAT's private aperture (gfx90a; also with a third of the
//! lanes in global memory, each in a buffer of its own bytes), stores and loads of 1 to 16
//! bytes at one offset in every lane, at offsets that differ by lane, and at offsets that cross dwords, under a
//! full and a partial EXEC, each block run twice (the second run finds its sites' windows, as a loop's later
//! passes do). In device memory the lanes' dwords are interleaved as the hardware's swizzled private segment
//! buffer has them (ROCr's scratch resource on gfx9: ELEMENT_SIZE 4 bytes, INDEX_STRIDE 64, ADD_TID_ENABLE):
//! byte q of lane l at (q / 4) × 256 + 4 l + q % 4.

mod common;
use common::swizzled;

use std::sync::OnceLock;

use emu_core::interp::Interp;
use emu_core::memory::{AllocKind, DeviceMemory};
use emu_core::sem::{execute, PRIVATE_APERTURE_HI};
use emu_core::wave::WaveState;
use isa_amdgpu::{decode, Target};

fn jit() -> &'static jit::Jit {
    static JIT: OnceLock<jit::Jit> = OnceLock::new();
    JIT.get_or_init(|| jit::Jit::new().expect("a JIT for this host"))
}

/// Bytes of each lane's private segment.
const LANE_BYTES: usize = 64;
/// Lanes 3, 17 and 40..47 are off.
const PARTIAL: u64 = !(1 << 3 | 1 << 17 | 0xff << 40);

/// Each lane's private bytes at the start.
fn initial() -> Vec<Vec<u8>> {
    (0..64)
        .map(|l| (0..LANE_BYTES).map(|q| (l * 31 + q * 7 + 0x91) as u8).collect())
        .collect()
}

/// A device memory holding `private` in the swizzled layout and, for FLAT's global lanes, each lane's bytes in
/// a buffer of its own 64 bytes; returns it, the segment's base and the buffer.
fn memory(private: &[Vec<u8>]) -> (DeviceMemory, u64, u64) {
    let mem = DeviceMemory::new(1 << 20).unwrap();
    let base = mem
        .allocate(64 * LANE_BYTES as u64, AllocKind::Scratch, "private")
        .unwrap();
    let slab = mem
        .allocate(64 * LANE_BYTES as u64, AllocKind::Buffer, "global")
        .unwrap();
    let mut raw = vec![0u8; 64 * LANE_BYTES];
    for (l, bytes) in private.iter().enumerate() {
        for (q, &x) in bytes.iter().enumerate() {
            raw[swizzled(l, q)] = x;
        }
    }
    mem.write(base, &raw).unwrap();
    mem.write(slab, &private.concat()).unwrap();
    (mem, base, slab)
}

/// Whether lane `l` of the form accesses global memory (a third of the lanes of "flat-mixed").
fn global_lane(form: &str, l: usize) -> bool {
    form == "flat-mixed" && l.is_multiple_of(3)
}

/// Each lane's bytes as `mem` holds them where the lane accesses them, and where it does not.
fn lanes_of(mem: &DeviceMemory, base: u64, slab: u64, form: &str) -> (Vec<Vec<u8>>, Vec<Vec<u8>>) {
    let (mut raw, mut global) = (vec![0u8; 64 * LANE_BYTES], vec![0u8; 64 * LANE_BYTES]);
    mem.read(base, &mut raw).unwrap();
    mem.read(slab, &mut global).unwrap();
    let private = (0..64).map(|l| (0..LANE_BYTES).map(|q| raw[swizzled(l, q)]).collect::<Vec<u8>>());
    let global = global.chunks(LANE_BYTES).map(<[u8]>::to_vec);
    private
        .zip(global)
        .enumerate()
        .map(|(l, (p, g))| if global_lane(form, l) { (g, p) } else { (p, g) })
        .unzip()
}

/// A wave with `exec`, each lane's offsets ([`set_offsets`]), v[4:7] = data, the private segment buffer in
/// s[0:3] and FLAT_SCRATCH at the segment.
fn wave(base: u64, exec: u64) -> WaveState {
    let mut w = WaveState::new(0x1000, 24, 0);
    w.set_exec(exec);
    for l in 0..64 {
        for r in 0..4 {
            w.vgprs[4 + r][l] = 0x0101_0101u32.wrapping_mul(l as u32 + 1) ^ (0x1357_9bdf << r);
        }
    }
    let res = [
        base as u32,
        (base >> 32) as u32,
        u32::MAX,
        emu_core::dispatch::PRIVATE_RESOURCE_DWORD3,
    ];
    w.sgprs[..4].copy_from_slice(&res);
    (w.sgprs[102], w.sgprs[103]) = (base as u32, (base >> 32) as u32);
    (w.scratch_base, w.scratch_lane_bytes) = (base, LANE_BYTES as u32);
    w
}

/// Sets each lane's offset in its bytes: v1 = `offsets`, and v[12:13] the same as a FLAT address, in the
/// private aperture or, for a global lane, in the lane's 64 bytes of `slab`.
fn set_offsets(w: &mut WaveState, offsets: &[u32; 64], form: &str, slab: u64) {
    for (l, &o) in offsets.iter().enumerate() {
        let flat = if global_lane(form, l) {
            slab + (LANE_BYTES * l) as u64 + o as u64
        } else {
            (PRIVATE_APERTURE_HI as u64) << 32 | o as u64
        };
        (w.vgprs[1][l], w.vgprs[12][l], w.vgprs[13][l]) = (o, flat as u32, (flat >> 32) as u32);
    }
}

/// One access of a case: `bytes` at the lane's offset + `imm`, a store from v4 on or a load (sign-extended or
/// not) into `dst` on.
#[derive(Clone, Copy)]
enum Op {
    Store {
        bytes: usize,
        imm: u32,
    },
    Load {
        bytes: usize,
        signed: bool,
        imm: u32,
        dst: usize,
    },
}

/// The instruction for `op` in one of the three forms ("mubuf", "scratch", "flat").
fn asm(form: &str, op: Op) -> String {
    let width = |bytes: usize, signed: bool, load: bool| match (bytes, signed, load) {
        (1, false, true) => "ubyte",
        (1, true, true) => "sbyte",
        (2, false, true) => "ushort",
        (2, true, true) => "sshort",
        (1, _, false) => "byte",
        (2, _, false) => "short",
        (4, ..) => "dword",
        (8, ..) => "dwordx2",
        (16, ..) => "dwordx4",
        _ => unreachable!("a width"),
    };
    let regs = |first: usize, bytes: usize| {
        if bytes <= 4 {
            format!("v{first}")
        } else {
            format!("v[{first}:{}]", first + bytes / 4 - 1)
        }
    };
    match (form, op) {
        ("mubuf", Op::Store { bytes, imm }) => format!(
            "buffer_store_{} {}, v1, s[0:3], 0 offen offset:{imm}",
            width(bytes, false, false),
            regs(4, bytes)
        ),
        (
            "mubuf",
            Op::Load {
                bytes,
                signed,
                imm,
                dst,
            },
        ) => format!(
            "buffer_load_{} {}, v1, s[0:3], 0 offen offset:{imm}",
            width(bytes, signed, true),
            regs(dst, bytes)
        ),
        ("scratch", Op::Store { bytes, imm }) => format!(
            "scratch_store_{} v1, {}, off offset:{imm}",
            width(bytes, false, false),
            regs(4, bytes)
        ),
        (
            "scratch",
            Op::Load {
                bytes,
                signed,
                imm,
                dst,
            },
        ) => format!(
            "scratch_load_{} {}, v1, off offset:{imm}",
            width(bytes, signed, true),
            regs(dst, bytes)
        ),
        ("flat" | "flat-mixed", Op::Store { bytes, imm }) => format!(
            "flat_store_{} v[12:13], {} offset:{imm}",
            width(bytes, false, false),
            regs(4, bytes)
        ),
        (
            "flat" | "flat-mixed",
            Op::Load {
                bytes,
                signed,
                imm,
                dst,
            },
        ) => format!(
            "flat_load_{} {}, v[12:13] offset:{imm}",
            width(bytes, signed, true),
            regs(dst, bytes)
        ),
        _ => unreachable!("a form"),
    }
}

/// The CPU model of `ops` on `w`'s lanes and private bytes.
fn model(ops: &[Op], w: &mut WaveState, private: &mut [Vec<u8>]) {
    let exec = w.exec();
    for &op in ops {
        for l in (0..64).filter(|&l| exec >> l & 1 == 1) {
            match op {
                Op::Store { bytes, imm } => {
                    let at = (w.vgprs[1][l] + imm) as usize;
                    for k in 0..bytes {
                        private[l][at + k] = (w.vgprs[4 + k / 4][l] >> (8 * (k % 4))) as u8;
                    }
                }
                Op::Load {
                    bytes,
                    signed,
                    imm,
                    dst,
                } => {
                    let at = (w.vgprs[1][l] + imm) as usize;
                    let lane = &private[l];
                    let get = |k: usize| lane[at + k] as u32;
                    if bytes < 4 {
                        let raw = (0..bytes).fold(0, |v, k| v | get(k) << (8 * k));
                        let shift = 32 - 8 * bytes as u32;
                        w.vgprs[dst][l] = if signed {
                            ((raw << shift) as i32 >> shift) as u32
                        } else {
                            raw
                        };
                    } else {
                        for d in 0..bytes / 4 {
                            w.vgprs[dst + d][l] = (0..4).fold(0, |v, k| v | get(4 * d + k) << (8 * k));
                        }
                    }
                }
            }
        }
    }
}

/// Runs `ops` as one block, twice, on both engines (each on its own copy of the memory) and checks both
/// against the model; or returns the fault both engines report.
fn run(target: Target, form: &str, ops: &[Op], exec: u64, offsets: &[u32; 64]) -> Result<(), String> {
    run_passes(target, form, ops, exec, &[*offsets, *offsets])
}

/// [`run`] with a pass of the block for each of `passes`, each from its lanes' offsets.
fn run_passes(target: Target, form: &str, ops: &[Op], exec: u64, passes: &[[u32; 64]]) -> Result<(), String> {
    let text: Vec<String> = ops.iter().map(|&op| asm(form, op)).collect();
    let code: Vec<u8> = common::assemble(&text.iter().map(String::as_str).collect::<Vec<_>>(), target).concat();
    let mut insts = Vec::new();
    let mut pc = 0x1000u64;
    while pc < 0x1000 + code.len() as u64 {
        let inst = decode(&code[(pc - 0x1000) as usize..], pc, target).unwrap();
        pc += inst.size() as u64;
        insts.push(inst);
    }
    let start = initial();
    let ((mi, base, slab), (mj, base_j, slab_j)) = (memory(&start), memory(&start));
    let (mut a, mut j) = (wave(base, exec), wave(base_j, exec));
    let mut lds = vec![0u8; 64];
    let mut fault = None;
    for offsets in passes {
        set_offsets(&mut a, offsets, form, slab);
        set_offsets(&mut j, offsets, form, slab_j);
        let mut at = 0x1000;
        for inst in &insts {
            let r = execute(
                &mut Interp {
                    wave: &mut a,
                    mem: &mi,
                    lds: &mut lds,
                    mnemonic: inst.info.name,
                    accesses: None,
                },
                inst,
                at,
            );
            if let Err(e) = r {
                fault = Some(format!("{}: {e}", isa_amdgpu::disasm::text(inst)));
                break;
            }
            at += inst.size() as u64;
        }
        let exit = jit()
            .run_block_once(insts.clone(), 0x1000, &mut j, &mj, &mut lds)
            .unwrap();
        match (&fault, exit) {
            (None, jit::BlockExit::Continue { .. }) => {}
            (Some(f), jit::BlockExit::Fault { error, .. }) => {
                assert_eq!(f, &error, "{text:?}: the engines stop differently");
                return Err(error);
            }
            (f, e) => panic!("{text:?}: interpreter {f:?}, JIT {e:?}"),
        }
    }
    let (mut want, mut private) = (wave(base, exec), start.clone());
    for offsets in passes {
        set_offsets(&mut want, offsets, form, slab);
        model(ops, &mut want, &mut private);
    }
    let what = format!("{} {form} {text:?} exec {exec:#x}", target.name());
    for (engine, (mem, base, slab)) in [("interpreter", (&mi, base, slab)), ("JIT", (&mj, base_j, slab_j))] {
        let (seen, other) = lanes_of(mem, base, slab, form);
        assert!(
            seen == private,
            "{what}: the {engine}'s lanes' bytes differ from the model"
        );
        assert!(
            other == start,
            "{what}: the {engine} wrote where the lanes do not access"
        );
    }
    // every register but v[12:13], each engine's own FLAT addresses
    for (engine, w) in [("interpreter", &a), ("JIT", &j)] {
        let regs = (0..24).filter(|r| !(12..14).contains(r));
        let diff = regs
            .flat_map(|r| (0..64).map(move |l| (r, l)))
            .find(|&(r, l)| w.vgprs[r][l] != want.vgprs[r][l]);
        if let Some((r, l)) = diff {
            panic!(
                "{what}: the {engine}'s v{r} in lane {l} is {:#x}, the model's {:#x}",
                w.vgprs[r][l], want.vgprs[r][l]
            );
        }
    }
    Ok(())
}

/// Stores of every width and loads back, 0 to 40 bytes past the lanes' offsets: the wide ones at dword steps,
/// the narrow ones at odd and even bytes, a dword 2 bytes on, so that the lanes' offsets decide which accesses
/// cross dwords.
fn ops() -> Vec<Op> {
    use Op::*;
    vec![
        Store { bytes: 16, imm: 0 },
        Load {
            bytes: 16,
            signed: false,
            imm: 0,
            dst: 8,
        },
        Store { bytes: 8, imm: 20 },
        Load {
            bytes: 8,
            signed: false,
            imm: 16,
            dst: 14,
        },
        Store { bytes: 2, imm: 3 },
        Store { bytes: 1, imm: 30 },
        Load {
            bytes: 4,
            signed: false,
            imm: 2,
            dst: 16,
        },
        Load {
            bytes: 2,
            signed: true,
            imm: 29,
            dst: 17,
        },
        Load {
            bytes: 1,
            signed: true,
            imm: 28,
            dst: 18,
        },
        Load {
            bytes: 2,
            signed: false,
            imm: 1,
            dst: 19,
        },
        Load {
            bytes: 1,
            signed: false,
            imm: 31,
            dst: 20,
        },
        Store { bytes: 4, imm: 36 },
        Load {
            bytes: 4,
            signed: false,
            imm: 36,
            dst: 21,
        },
    ]
}

#[test]
fn private_accesses_of_every_width_match_each_lanes_bytes_on_both_engines_in_the_swizzled_layout() {
    let layouts: [(&str, [u32; 64]); 4] = [
        ("one dword-aligned offset", [8; 64]),
        ("one offset crossing dwords", [5; 64]),
        ("dword offsets by lane", std::array::from_fn(|l| 4 * (l as u32 % 5))),
        ("byte offsets by lane", std::array::from_fn(|l| l as u32 % 7)),
    ];
    for (target, form) in [
        (Target::Gfx90a, "mubuf"),
        (Target::Gfx942, "scratch"),
        (Target::Gfx90a, "flat"),
        (Target::Gfx90a, "flat-mixed"),
    ] {
        for (name, offsets) in &layouts {
            for exec in [u64::MAX, PARTIAL] {
                run(target, form, &ops(), exec, offsets).unwrap_or_else(|e| panic!("{form} {name}: {e}"));
            }
        }
    }
}

#[test]
fn a_private_access_past_a_lanes_segment_faults_alike_on_both_engines() {
    // 16 bytes from 56 reach byte 72 of a 64-byte segment: in every lane (one offset), in one lane, or in a lane
    // EXEC leaves out (no fault)
    let store = [Op::Store { bytes: 16, imm: 0 }];
    for (target, form) in [
        (Target::Gfx90a, "mubuf"),
        (Target::Gfx942, "scratch"),
        (Target::Gfx90a, "flat"),
    ] {
        let e = run(target, form, &store, u64::MAX, &[56; 64]).unwrap_err();
        assert!(
            e.contains("private (scratch) access past the 64-byte private segment of a lane"),
            "{form}: {e}"
        );
        let one: [u32; 64] = std::array::from_fn(|l| if l == 17 { 56 } else { 16 });
        assert!(
            run(target, form, &store, u64::MAX, &one).is_err(),
            "{form}: lane 17 past its segment"
        );
        run(target, form, &store, PARTIAL, &one).unwrap_or_else(|e| panic!("{form}: lane 17 is off: {e}"));
        let load = [Op::Load {
            bytes: 4,
            signed: false,
            imm: 61,
            dst: 8,
        }];
        assert!(
            run(target, form, &load, u64::MAX, &[0; 64]).is_err(),
            "{form}: a dword from byte 61"
        );
        // after passes that found the site's memory, a pass whose lanes reach past their segment still faults
        let e = run_passes(target, form, &store, u64::MAX, &[[16; 64], [40; 64], [56; 64]]).unwrap_err();
        assert!(e.contains("private (scratch) access past"), "{form}: {e}");
        let load = [Op::Load {
            bytes: 4,
            signed: false,
            imm: 56,
            dst: 8,
        }];
        let e = run_passes(target, form, &load, u64::MAX, &[[0; 64], [4; 64], [8; 64]]).unwrap_err();
        assert!(e.contains("private (scratch) access past"), "{form}: {e}");
    }
}

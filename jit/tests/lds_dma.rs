//! LDS DMA on both engines against a CPU reference: gfx942's `global_load_lds_*` and `scratch_load_lds_*`, and
//! MUBUF loads with the `lds` bit on gfx90a and gfx942. Each active lane's value (the load's bytes, sign- or
//! zero-extended to a dword; 0 for a buffer lane out of range) goes to the LDS dword at M0 + the instruction's
//! offset + 4 × lane id (LLVM's "AMDGPU DMA Operations": the offset applies to both addresses, and the LDS
//! address is offset by 4 × lane_id for sizes up to 4 bytes); inactive lanes leave their dword alone, and a
//! dword past the workgroup's LDS is the usual LDS fault.

mod common;

use std::sync::OnceLock;

use emu_core::interp::Interp;
use emu_core::memory::{AllocKind, DeviceMemory};
use emu_core::sem::execute;
use emu_core::wave::WaveState;
use isa_amdgpu::{decode, Target};

fn jit() -> &'static jit::Jit {
    static JIT: OnceLock<jit::Jit> = OnceLock::new();
    JIT.get_or_init(|| jit::Jit::new().expect("a JIT for this host"))
}

const LDS: usize = 64 * 1024;
/// Lanes 3, 17 and 40..47 are off.
const EXEC: u64 = !(1 << 3 | 1 << 17 | 0xff << 40);
/// Bytes of each lane's private segment.
const LANE_BYTES: u32 = 256;

/// The byte at offset `i` of the source buffer (and of every lane's private segment): half of them negative
/// as bytes and as shorts.
fn byte(i: u64) -> u8 {
    (i.wrapping_mul(37) ^ 0x5a) as u8
}

struct Setup {
    mem: DeviceMemory,
    buf: u64,
    scratch: u64,
}

fn setup() -> Setup {
    let mem = DeviceMemory::new(1 << 24).unwrap();
    let buf = mem.allocate(4096, AllocKind::Buffer, "source").unwrap();
    mem.write(buf, &(0..4096).map(byte).collect::<Vec<u8>>()).unwrap();
    let scratch = mem
        .allocate(64 * LANE_BYTES as u64, AllocKind::Scratch, "private")
        .unwrap();
    // every lane's byte i is byte(i): private memory is swizzled, byte i of lane l at (i / 4) * 256 + 4 l + i % 4
    let seg: Vec<u8> = (0..64 * LANE_BYTES as u64).map(|x| byte(x / 256 * 4 + x % 4)).collect();
    mem.write(scratch, &seg).unwrap();
    Setup { mem, buf, scratch }
}

/// A wave with EXEC, M0 = `m0`, v[0:1] = lane addresses buf + 2 × lane, v2 = 2 × lane + 8, s[4:5] = buf, s6 = 8, a
/// buffer resource over the first `records` bytes in s[8:11], and its private segments.
fn wave(s: &Setup, m0: u32, records: u32) -> WaveState {
    let mut w = WaveState::new(0x1000, 8, 0);
    w.set_exec(EXEC);
    w.sgprs[124] = m0;
    for l in 0..64 {
        let a = s.buf + 2 * l as u64;
        (w.vgprs[0][l], w.vgprs[1][l], w.vgprs[2][l]) = (a as u32, (a >> 32) as u32, 2 * l as u32 + 8);
    }
    (w.sgprs[4], w.sgprs[5], w.sgprs[6]) = (s.buf as u32, (s.buf >> 32) as u32, 8);
    (w.sgprs[8], w.sgprs[9], w.sgprs[10], w.sgprs[11]) = (s.buf as u32, (s.buf >> 32) as u32, records, 0x0002_7000);
    (w.sgprs[102], w.sgprs[103]) = (s.scratch as u32, (s.scratch >> 32) as u32);
    (w.scratch_base, w.scratch_lane_bytes) = (s.scratch, LANE_BYTES);
    w
}

/// Runs `asm` on both engines from the same wave and an LDS filled with 0xee; returns each engine's LDS, or
/// the error both gave.
fn run(asm: &str, target: Target, s: &Setup, m0: u32, records: u32) -> Result<Vec<u8>, String> {
    let bytes = common::assemble(&[asm], target).remove(0);
    let inst = decode(&bytes, 0x1000, target).unwrap();
    let mut a = wave(s, m0, records);
    let mut j = a.clone();
    let (mut la, mut lj) = (vec![0xee; LDS], vec![0xee; LDS]);
    let interp = execute(
        &mut Interp {
            wave: &mut a,
            mem: &s.mem,
            lds: &mut la,
            mnemonic: inst.info.name,
            accesses: None,
        },
        &inst,
        0x1000,
    );
    let exit = jit()
        .run_block_once(vec![inst], 0x1000, &mut j, &s.mem, &mut lj)
        .unwrap();
    match (interp, exit) {
        (Ok(_), jit::BlockExit::Continue { .. }) => {
            assert!(la == lj, "{asm}: the engines leave different LDS");
            assert!(
                a.vgprs == j.vgprs && a.sgprs == j.sgprs,
                "{asm}: the engines leave different registers"
            );
            assert!(a.vgprs == wave(s, m0, records).vgprs, "{asm}: LDS DMA writes no VGPR");
            Ok(la)
        }
        (Err(e), jit::BlockExit::Fault { error, .. }) => {
            assert_eq!(
                format!("{}: {e}", isa_amdgpu::disasm::text(&inst)),
                error,
                "{asm}: the engines stop differently"
            );
            Err(e.to_string())
        }
        (i, e) => panic!("{asm}: interpreter {i:?}, JIT {e:?}"),
    }
}

/// The CPU reference: LDS filled with 0xee, then for every active lane the dword at `m0 + offset + 4 × lane`
/// set to `value(lane)`.
fn reference(m0: u32, offset: i32, value: impl Fn(u64) -> u32) -> Vec<u8> {
    let mut lds = vec![0xee; LDS];
    for l in (0..64).filter(|l| EXEC >> l & 1 == 1) {
        let at = (m0 as i64 + offset as i64 + 4 * l as i64) as usize;
        lds[at..at + 4].copy_from_slice(&value(l).to_le_bytes());
    }
    lds
}

/// The `bytes`-byte value at offset `at` of the source (or of a private segment), sign- or zero-extended.
fn load(at: u64, bytes: u32, signed: bool) -> u32 {
    let raw = (0..bytes as u64).fold(0u32, |v, i| v | (byte(at + i) as u32) << (8 * i));
    let shift = 32 - 8 * bytes;
    if signed {
        ((raw << shift) as i32 >> shift) as u32
    } else {
        raw
    }
}

#[test]
fn global_load_lds_writes_each_lanes_extended_value_to_m0_plus_offset_plus_four_times_the_lane() {
    let s = setup();
    for (name, bytes, signed) in [
        ("ubyte", 1, false),
        ("sbyte", 1, true),
        ("ushort", 2, false),
        ("sshort", 2, true),
        ("dword", 4, false),
    ] {
        // per-lane addresses v[0:1] = buf + 2 lane, offset 8 on both sides
        let asm = format!("global_load_lds_{name} v[0:1], off offset:8");
        let lds = run(&asm, Target::Gfx942, &s, 0x100, 0).unwrap();
        assert!(lds == reference(0x100, 8, |l| load(2 * l + 8, bytes, signed)), "{asm}");
    }
    // SGPR base plus VGPR offsets, a negative offset
    let asm = "global_load_lds_dword v2, s[4:5] offset:-4";
    let lds = run(asm, Target::Gfx942, &s, 0x204, 0).unwrap();
    assert!(lds == reference(0x204, -4, |l| load(2 * l + 8 - 4, 4, false)), "{asm}");
}

#[test]
fn scratch_load_lds_reads_each_lanes_private_segment() {
    let s = setup();
    // VGPR offsets (2 lane + 8) within each lane's segment
    let lds = run("scratch_load_lds_sshort v2, off offset:6", Target::Gfx942, &s, 0x40, 0).unwrap();
    assert!(
        lds == reference(0x40, 6, |l| load(2 * l + 8 + 6, 2, true)),
        "scratch_load_lds_sshort"
    );
    // an SGPR offset (8) and no VGPR: every lane reads its own segment's bytes 12..16
    let lds = run("scratch_load_lds_dword off, s6 offset:4", Target::Gfx942, &s, 0, 0).unwrap();
    assert!(lds == reference(0, 4, |_| load(12, 4, false)), "scratch_load_lds_dword");
}

#[test]
fn buffer_loads_with_the_lds_bit_write_zero_for_lanes_out_of_range_on_both_targets() {
    let s = setup();
    for t in Target::EXECUTED {
        for (name, bytes, signed) in [
            ("ubyte", 1, false),
            ("sbyte", 1, true),
            ("ushort", 2, false),
            ("sshort", 2, true),
            ("dword", 4, false),
        ] {
            // offsets 2 lane + 8 + 4 (offen, offset:4) in a buffer of 100 bytes: the lanes from 44 on are out of range
            let asm = format!("buffer_load_{name} v2, s[8:11], 0 offen offset:4 lds");
            let lds = run(&asm, t, &s, 0x80, 100).unwrap();
            let want = reference(0x80, 4, |l| {
                if 2 * l + 12 + bytes as u64 <= 100 {
                    load(2 * l + 12, bytes, signed)
                } else {
                    0
                }
            });
            assert!(lds == want, "{} {asm}", t.name());
        }
        // an SGPR offset goes to the memory address only
        let lds = run("buffer_load_dword v2, s[8:11], s6 offen lds", t, &s, 0, 4096).unwrap();
        assert!(
            lds == reference(0, 0, |l| load(2 * l + 8 + 8, 4, false)),
            "{} soffset",
            t.name()
        );
    }
}

#[test]
fn a_lane_whose_lds_dword_lies_past_the_allocation_faults_on_both_engines() {
    let s = setup();
    // lane 63's dword is at 0xff00 + 252 + 4 = 0x10000, past the 64 KiB
    let e = run(
        "global_load_lds_dword v[0:1], off offset:4",
        Target::Gfx942,
        &s,
        0xff00,
        0,
    )
    .unwrap_err();
    assert!(
        e.contains("lane 63") && e.contains("outside the workgroup's 65536-byte LDS allocation"),
        "{e}"
    );
    let e = run(
        "buffer_load_ubyte v2, s[8:11], 0 offen lds",
        Target::Gfx90a,
        &s,
        0xfffc,
        4096,
    )
    .unwrap_err();
    assert!(e.contains("lane 1:") && e.contains("LDS"), "{e}");
}

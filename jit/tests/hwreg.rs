//! The hardware registers on both engines: what the `hwid` kernel reads with s_getreg_b32 (HW_ID, XCC_ID,
//! MODE, STATUS, GPR_ALLOC, LDS_ALLOC) against CPU references from the ISA guides' field layouts — the fixed
//! placement of a functional dispatch, and in timing mode the model's own placement as its wave-start events
//! report it — and the writes to MODE and other registers that stop a wave, with their messages.

mod common;

use std::sync::{Mutex, OnceLock};

use emu_core::dispatch::DispatchShape;
use emu_core::engine::{Interpreter, KernelDispatch, Limits};
use emu_core::interp::Interp;
use emu_core::kernarg::ArgValue;
use emu_core::memory::{AllocKind, DeviceMemory};
use emu_core::observe::{Event, NoObserver, Observer, Placement};
use emu_core::sem::execute;
use emu_core::wave::WaveState;
use emu_core::DevicePreset;
use isa_amdgpu::codeobj::CodeObject;
use isa_amdgpu::{decode, Target};

fn jit() -> &'static jit::Jit {
    static JIT: OnceLock<jit::Jit> = OnceLock::new();
    JIT.get_or_init(|| jit::Jit::new().expect("a JIT for this host"))
}

const GROUPS: u32 = 40;
const WAVES: u32 = 4;

struct Run {
    dev: &'static DevicePreset,
    co: CodeObject,
    mem: DeviceMemory,
    out: u64,
    args: [ArgValue; 1],
}

fn setup(preset: &str) -> Run {
    let dev = DevicePreset::by_name(preset).unwrap();
    let name = format!("hwid-{}.co", dev.gfx);
    let co = CodeObject::parse(test_kernels::by_name(&name).unwrap(), &name).unwrap();
    let mem = DeviceMemory::new(1 << 30).unwrap();
    let out = mem
        .allocate(4 * 8 * (GROUPS * WAVES) as u64, AllocKind::Buffer, "out")
        .unwrap();
    Run {
        dev,
        co,
        mem,
        out,
        args: [ArgValue::Pointer(out)],
    }
}

impl Run {
    fn dispatch(&self) -> KernelDispatch<'_> {
        let shape = DispatchShape::new([256 * GROUPS, 1, 1], [256, 1, 1], self.dev).unwrap();
        KernelDispatch {
            mem: &self.mem,
            device: self.dev,
            co: &self.co,
            kernel: &self.co.kernels[0],
            shape,
            args: &self.args,
            limits: Limits::default(),
        }
    }

    /// Per wave of the grid: the 8 words the kernel stored.
    fn words(&self) -> Vec<[u32; 8]> {
        let mut b = vec![0u8; 4 * 8 * (GROUPS * WAVES) as usize];
        self.mem.read(self.out, &mut b).unwrap();
        b.chunks_exact(32)
            .map(|w| std::array::from_fn(|k| u32::from_le_bytes(w[4 * k..4 * k + 4].try_into().unwrap())))
            .collect()
    }
}

/// HW_ID's fields (WAVE_ID 3:0, SIMD_ID 5:4, CU_ID 11:8, SH_ID 12, SE_ID 15:13 on gfx90a and 14:13 on gfx942).
fn fields(target: Target, hw_id: u32) -> (u32, u32, u32, u32, u32) {
    let se_bits = if target == Target::Gfx942 { 2 } else { 3 };
    (
        hw_id & 0xf,
        hw_id >> 4 & 3,
        hw_id >> 8 & 0xf,
        hw_id >> 12 & 1,
        hw_id >> 13 & ((1 << se_bits) - 1),
    )
}

/// What every wave reads that does not depend on where it runs: MODE of clang's descriptor (round to nearest
/// even, denormals kept, DX10 clamp, IEEE: 0x3f0); STATUS with VALID (16) and IN_TG (11, four waves) and not
/// EXECZ (9: its first lane runs); GPR_ALLOC's sizes from the descriptor (VGPRs in its granule minus one at
/// 13:8, SGPRs in 16s minus one at 27:24) and bases 0; LDS_ALLOC's size in 64-dword units at 20:12 (1 KiB,
/// allocated in 128-dword granules: 4); the LDS word of the work-item mirrored in the workgroup.
fn check_fixed(run: &Run, words: &[[u32; 8]]) {
    let kd = &run.co.kernels[0].descriptor;
    let vgpr_size = kd.rsrc1.granulated_workitem_vgpr_count as u32;
    let sgpr_size = kd.sgpr_alloc_count().unwrap().div_ceil(16) - 1;
    assert_eq!(kd.group_segment_fixed_size, 1024);
    for (w, o) in words.iter().enumerate() {
        let (g, first) = (w as u32 / WAVES, (w as u32 % WAVES) * 64);
        assert_eq!(o[2], 0x3f0, "wave {w}: MODE");
        assert_eq!(
            o[3] & (1 << 16 | 1 << 11 | 1 << 9),
            1 << 16 | 1 << 11,
            "wave {w}: STATUS {:#x}",
            o[3]
        );
        assert_eq!(o[4], vgpr_size << 8 | sgpr_size << 24, "wave {w}: GPR_ALLOC");
        assert_eq!(o[5], 4 << 12, "wave {w}: LDS_ALLOC");
        assert_eq!(o[6], g * 256 + 255 - first, "wave {w}: LDS");
    }
}

/// The fixed placement of a functional dispatch, as the ISA reference of `wavejit::hwreg` states it:
/// workgroup `i` on XCD `i mod XCDs`; the `j`-th of an XCD on SE `j mod SEs`, CU `(j / SEs) mod CUs of that SE`
/// (an XCD's CUs dealt round-robin over its SEs); wave `w` on SIMD `w mod 4`, slot `w / 4`.
fn fixed_place(xcds: u32, ses: u32, cus_per_xcd: u32, group: u32, wave: u32) -> (u32, u32, u32, u32, u32) {
    let (xcd, j) = (group % xcds, group / xcds);
    let se = j % ses;
    let cus_of_se = (0..cus_per_xcd).filter(|c| c % ses == se).count() as u32;
    (xcd, se, (j / ses) % cus_of_se, wave % 4, wave / 4)
}

#[test]
fn a_functional_dispatch_reads_its_fixed_placement_and_descriptor_in_hardware_registers_on_both_engines() {
    // MI300X: 8 XCDs of 38 CUs on 4 SEs; MI210: one of 104 CUs on 8 SEs
    for (preset, xcds, ses, cus) in [("mi300x", 8, 4, 38), ("mi210", 1, 8, 104)] {
        let run = setup(preset);
        let d = run.dispatch();
        common::against_interpreter(&d, jit(), "JIT").unwrap();
        let words = run.words();
        check_fixed(&run, &words);
        for (w, o) in words.iter().enumerate() {
            let (g, wave) = (w as u32 / WAVES, w as u32 % WAVES);
            let (xcd, se, cu, simd, slot) = fixed_place(xcds, ses, cus, g, wave);
            assert_eq!(
                fields(run.dev.target, o[0]),
                (slot, simd, cu, 0, se),
                "{preset} workgroup {g} wave {wave}: HW_ID {:#x}",
                o[0]
            );
            assert_eq!(o[0] >> 16, 0, "{preset}: TG_ID and the queue fields");
            assert_eq!(
                o[1],
                if run.dev.target == Target::Gfx942 { xcd } else { 0 },
                "{preset} workgroup {g}: XCC_ID"
            );
        }
    }
}

/// Keeps the placement of every wave start.
#[derive(Default)]
struct Placements(Mutex<Vec<([u32; 3], u32, Placement)>>);

impl Observer for Placements {
    fn event(&self, ev: &Event<'_>) {
        if let Event::WaveStart {
            workgroup,
            wave,
            placement: Some(p),
            ..
        } = ev
        {
            self.0.lock().unwrap().push((*workgroup, *wave, *p));
        }
    }
}

#[test]
fn in_timing_mode_hw_id_and_xcc_id_name_the_models_placement_on_both_engines() {
    for preset in ["mi300x", "mi210"] {
        let run = setup(preset);
        let m = emu_core::timing::machine::Machine::by_preset(preset).unwrap();
        let d = run.dispatch();
        let seen = Placements::default();
        d.run_timed(jit(), &seen).unwrap();
        let words = run.words();
        d.run_timed(&Interpreter, &NoObserver).unwrap();
        assert!(run.words() == words, "{preset}: the engines read different registers");
        check_fixed(&run, &words);
        let placed = seen.0.into_inner().unwrap();
        assert_eq!(placed.len(), (GROUPS * WAVES) as usize);
        let mut slots = std::collections::BTreeSet::new();
        for ([g, ..], wave, p) in placed {
            let o = words[(g * WAVES + wave) as usize];
            let (slot, simd, cu, sh, se) = fields(run.dev.target, o[0]);
            // the model deals an XCD's CUs round-robin over its SEs: CU c of the XCD is CU c / SEs of SE c mod SEs
            let c = p.cu % m.topology.cus_per_xcd;
            assert_eq!(
                (simd, cu, sh, se),
                (p.simd, c / m.topology.ses_per_xcd, 0, p.se),
                "{preset} workgroup {g} wave {wave} at {p:?}: HW_ID {:#x}",
                o[0]
            );
            assert_eq!(c % m.topology.ses_per_xcd, p.se);
            assert!(slot < m.core.waves_per_simd, "{slot}");
            assert_eq!(
                o[1],
                if run.dev.target == Target::Gfx942 { p.xcd } else { 0 },
                "{preset}: XCC_ID"
            );
            slots.insert(slot);
        }
        assert!(slots.contains(&0));
    }
}

/// One instruction on a fresh wave (MODE 0x3f0) on both engines: the error both give, or `None`.
fn stops(asm: &str, target: Target, s0: u32) -> Option<String> {
    let bytes = common::assemble(&[asm], target).remove(0);
    let inst = decode(&bytes, 0x1000, target).unwrap();
    let mem = DeviceMemory::new(1 << 20).unwrap();
    let mut a = WaveState::new(0x1000, 8, 0);
    a.set_exec(u64::MAX);
    a.sgprs[0] = s0;
    let mut j = a.clone();
    let (mut la, mut lj) = (vec![0u8; 1024], vec![0u8; 1024]);
    let interp = execute(
        &mut Interp {
            wave: &mut a,
            mem: &mem,
            lds: &mut la,
            mnemonic: inst.info.name,
            accesses: None,
        },
        &inst,
        0x1000,
    )
    .err()
    .map(|e| e.to_string());
    let exit = jit().run_block_once(vec![inst], 0x1000, &mut j, &mem, &mut lj).unwrap();
    let jitted = match exit {
        jit::BlockExit::Fault { error, .. } => Some(error),
        _ => None,
    };
    let text = isa_amdgpu::disasm::text(&inst);
    assert_eq!(
        interp.as_ref().map(|e| format!("{text}: {e}")),
        jitted,
        "{asm}: the engines stop differently"
    );
    assert_eq!(a.hw, j.hw, "{asm}: the engines leave different hardware registers");
    interp
}

#[test]
fn mode_writes_the_engines_do_not_model_stop_naming_the_field_and_value_and_other_registers_are_refused_by_name() {
    for t in Target::EXECUTED {
        // writing the modes the engines compute with is taken
        assert_eq!(stops("s_setreg_b32 hwreg(HW_REG_MODE, 0, 8), s0", t, 0xf0), None);
        assert_eq!(stops("s_setreg_imm32_b32 hwreg(HW_REG_MODE, 8, 2), 3", t, 0), None);
        // round toward zero (3) for f32
        let e = stops("s_setreg_b32 hwreg(HW_REG_MODE, 0, 2), s0", t, 3).unwrap();
        assert!(e.contains("MODE.FP_ROUND.32 to 3") && e.contains("nearest even"), "{e}");
        // flush f64/f16 denormals (FP_DENORM.64_16 = 0), as LLVM's f32 division sequence would with flushing
        let e = stops("s_setreg_imm32_b32 hwreg(HW_REG_MODE, 4, 4), 3", t, 0).unwrap();
        assert!(
            e.contains("MODE.FP_DENORM.64_16 to 0") && e.contains("denormals"),
            "{e}"
        );
        let e = stops("s_setreg_b32 hwreg(HW_REG_MODE, 9, 1), s0", t, 0).unwrap();
        assert!(e.contains("MODE.IEEE to 0"), "{e}");
        let e = stops("s_setreg_b32 hwreg(HW_REG_MODE, 12, 7), s0", t, 4).unwrap();
        assert!(e.contains("MODE.EXCP_EN to 4") && e.contains("trap"), "{e}");
        let e = stops("s_setreg_imm32_b32 hwreg(HW_REG_MODE, 27, 1), 1", t, 0).unwrap();
        assert!(
            e.contains("MODE.GPR_IDX_EN to 1") && e.contains("s_set_gpr_idx_on"),
            "{e}"
        );
        // the other registers
        let e = stops("s_setreg_b32 hwreg(HW_REG_HW_ID), s0", t, 0).unwrap();
        assert!(e.contains("writes HW_ID, which is read-only"), "{e}");
        let e = stops("s_setreg_b32 hwreg(HW_REG_STATUS, 0, 1), s0", t, 1).unwrap();
        assert!(e.contains("STATUS") && e.contains("trap handler"), "{e}");
        let e = stops("s_getreg_b32 s1, hwreg(HW_REG_TRAPSTS)", t, 0).unwrap();
        assert!(e.contains("IEEE exception flags of TRAPSTS"), "{e}");
        let e = stops("s_getreg_b32 s1, hwreg(HW_REG_TBA_LO)", t, 0).unwrap();
        assert!(e.contains("TBA/TMA"), "{e}");
        let e = stops("s_getreg_b32 s1, hwreg(9)", t, 0).unwrap();
        assert!(e.contains("this target does not have"), "{e}");
    }
    assert_eq!(stops("s_getreg_b32 s1, hwreg(HW_REG_XCC_ID)", Target::Gfx942, 0), None);
    let e = stops("s_getreg_b32 s1, hwreg(20)", Target::Gfx90a, 0).unwrap();
    assert!(e.contains("this target does not have"), "{e}");
}

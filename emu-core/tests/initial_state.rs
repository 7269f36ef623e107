//! The initial wave state and kernarg segment against what compiler-generated code expects: every bundled
//! test kernel (gfx90a and gfx942) loads its arguments through the SGPR pair where we put the kernarg pointer,
//! and every argument load lies inside the segment we build.

use emu_core::dispatch::{DispatchAddresses, DispatchContext, DispatchShape};
use emu_core::kernarg::{build_kernarg, ArgValue, HiddenValues};
use emu_core::DevicePreset;
use isa_amdgpu::codeobj::CodeObject;
use isa_amdgpu::{decode_all, Encoding, Field, Target};

fn device_for(target: Target) -> &'static DevicePreset {
    DevicePreset::by_name(if target == Target::Gfx942 { "mi300x" } else { "mi210" }).unwrap()
}

/// A value for each of a kernel's arguments but the hidden ones: a pointer (never followed) for every 8-byte
/// one, 7 for the rest.
fn placeholder_args(meta: &isa_amdgpu::codeobj::KernelMetadata) -> Vec<ArgValue> {
    meta.args
        .iter()
        .filter(|a| !a.value_kind.starts_with("hidden_"))
        .map(|a| {
            if a.size == 8 {
                ArgValue::Pointer(0x7e00_0000_1000)
            } else {
                ArgValue::U32(7)
            }
        })
        .collect()
}

#[test]
fn kernarg_pointer_lands_where_every_test_kernel_reads_it() {
    let (mut kernels, mut expected) = (0, 0);
    for (name, bytes) in test_kernels::ALL {
        let co = CodeObject::parse(bytes, name).unwrap();
        assert!(!co.kernels.is_empty(), "{name} has no kernels");
        expected += co.kernels.len();
        let target = Target::from_name(&co.target.processor).unwrap();
        let dev = device_for(target);
        for k in &co.kernels {
            let meta = co.kernel_metadata(k).expect("metadata for every kernel");
            let f = co.kernel_function(k).expect("code for every kernel");
            let shape = DispatchShape::new([1000, 1, 1], [256, 1, 1], dev).unwrap();
            let user = placeholder_args(meta);
            let kernarg = build_kernarg(meta, &user, &shape, &HiddenValues::default()).unwrap();
            let addrs = DispatchAddresses {
                kernarg: 0x7e00_0000_0000,
                ..Default::default()
            };
            let cx = DispatchContext {
                progress: None,
                user_sgprs: None,
                kernel: &k.name,
                kd: &k.descriptor,
                device: dev,
                shape,
                kernarg: &kernarg,
                addrs,
            };
            let st = cx.initial_wave_state([3, 0, 0], 1).unwrap();
            let kp = st
                .sgpr_map
                .iter()
                .find(|(n, _)| *n == "kernarg_segment_ptr")
                .expect("kernarg pointer enabled")
                .1;
            assert_eq!(st.sgprs[kp as usize], 0x0000_0000);
            assert_eq!(st.sgprs[kp as usize + 1], 0x7e00);
            // the partial last workgroup (1000 = 3*256 + 232): wave 1 holds work-items 64..127, all present
            assert_eq!(st.exec, u64::MAX);
            assert_eq!(st.vgprs[0][5], 64 + 5);
            // every SMEM load through the kernarg pointer stays inside the segment we built
            let mut loads = 0;
            for (_, r) in decode_all(f.code(), f.address, target) {
                let Ok(inst) = r else { continue };
                if inst.encoding() != Encoding::Smem || !inst.info.name.starts_with("s_load") {
                    continue;
                }
                if inst.field(Field::Sbase) * 2 != kp || inst.field(Field::Imm) != 1 {
                    continue;
                }
                let dwords = match inst.info.name {
                    "s_load_dword" => 1,
                    n => n.trim_start_matches("s_load_dwordx").parse::<u64>().unwrap(),
                };
                let end = inst.field(Field::Offset) as u64 + 4 * dwords;
                assert!(
                    end <= kernarg.len() as u64 + 4,
                    "{}: load up to byte {end} of a {}-byte segment",
                    k.name,
                    kernarg.len()
                );
                loads += 1;
            }
            assert!(loads > 0, "{} ({name}) never loads through s[{kp}:{}]", k.name, kp + 1);
            kernels += 1;
        }
    }
    assert_eq!(kernels, expected);
    assert!(kernels > test_kernels::ALL.len(), "mfma holds three kernels");
}

#[test]
fn hidden_arguments_carry_the_dispatch_geometry() {
    let co = CodeObject::parse(test_kernels::by_name("vadd-gfx90a.co").unwrap(), "vadd").unwrap();
    let k = &co.kernels[0];
    let meta = co.kernel_metadata(k).unwrap();
    let dev = device_for(Target::Gfx90a);
    let shape = DispatchShape::new([1000, 1, 1], [256, 1, 1], dev).unwrap();
    let user = [
        ArgValue::Pointer(1),
        ArgValue::Pointer(2),
        ArgValue::Pointer(3),
        ArgValue::U32(1000),
    ];
    let ka = build_kernarg(meta, &user, &shape, &HiddenValues::default()).unwrap();
    let at = |kind: &str| meta.args.iter().find(|a| a.value_kind == kind).unwrap().offset as usize;
    let u16_at = |o: usize| u16::from_le_bytes([ka[o], ka[o + 1]]);
    let u32_at = |o: usize| u32::from_le_bytes([ka[o], ka[o + 1], ka[o + 2], ka[o + 3]]);
    assert_eq!(u32_at(at("hidden_block_count_x")), 4);
    assert_eq!(u16_at(at("hidden_group_size_x")), 256);
    assert_eq!(u16_at(at("hidden_remainder_x")), 1000 % 256);
    assert_eq!(u32_at(24), 1000, "the by-value n follows the three pointers");
    // vadd reads its block size from the hidden group size (s_load_dword ... 0x2c on gfx90a)
    assert_eq!(at("hidden_group_size_x"), 0x2c);
    // too few arguments is an error that names the kernel
    let e = build_kernarg(meta, &user[..2], &shape, &HiddenValues::default()).unwrap_err();
    assert!(e.to_string().contains("vadd takes 4 arguments, 2 given"), "{e}");
}

#[test]
fn packed_workitem_ids_put_y_and_z_above_x() {
    let co = CodeObject::parse(test_kernels::by_name("vadd-gfx942.co").unwrap(), "vadd").unwrap();
    let mut kd = co.kernels[0].descriptor.clone();
    kd.rsrc2.enable_vgpr_workitem_id = 2; // x, y and z
    let dev = device_for(Target::Gfx942);
    let shape = DispatchShape::new([16, 8, 2], [16, 8, 2], dev).unwrap();
    let cx = DispatchContext {
        progress: None,
        user_sgprs: None,
        kernel: "vadd",
        kd: &kd,
        device: dev,
        shape,
        kernarg: &[],
        addrs: DispatchAddresses::default(),
    };
    let st = cx.initial_wave_state([0, 0, 0], 1).unwrap();
    // lane 6 of wave 1 is work-item 70: x = 6, y = 4, z = 0; lane 63 is 127: x = 15, y = 7
    assert_eq!(st.vgprs[0][6], 6 | 4 << 10);
    assert_eq!(st.vgprs[0][63], 15 | 7 << 10);
    let st = cx.initial_wave_state([0, 0, 0], 2).unwrap();
    assert_eq!(st.vgprs[0][0], 1 << 20, "work-item 128 is (0, 0, 1)");
    assert_eq!(st.vgprs[0][63], 15 | 3 << 10 | 1 << 20, "work-item 191 is (15, 3, 1)");
}

/// A workgroup built without register files, each wave then given its own in the memory of a wave that ended
/// (more registers, written, and windows, one of them over that wave's private segment), starts as the one built
/// whole: the same registers, work-item ids and state, and the ended wave's windows but the private one.
#[test]
fn registers_given_at_first_run_match_a_group_built_whole() {
    use emu_core::dispatch::WaveTemplate;
    use emu_core::engine::{self, Interpreter, KernelDispatch, Limits};
    use emu_core::observe::NoObserver;
    use emu_core::wave::{BufferWindow, WaveClock, WaveState};
    let mut checked = 0;
    for (name, bytes) in test_kernels::ALL {
        let co = CodeObject::parse(bytes, name).unwrap();
        let dev = device_for(Target::from_name(&co.target.processor).unwrap());
        let mem = emu_core::DeviceMemory::new(1 << 30).unwrap();
        for k in co
            .kernels
            .iter()
            .filter(|k| k.descriptor.private_segment_fixed_size == 0)
        {
            let meta = co.kernel_metadata(k).unwrap();
            let args = placeholder_args(meta);
            // 1000 work-items in workgroups of 256: the last of the four is partial
            let shape = DispatchShape::new([1000, 1, 1], [256, 1, 1], dev).unwrap();
            let d = KernelDispatch {
                mem: &mem,
                device: dev,
                co: &co,
                kernel: k,
                shape,
                args: &args,
                limits: Limits::default(),
            };
            d.launch(|mem, device, launch, limits| {
                let seam = engine::Dispatch::new(mem, device, launch, limits, &Interpreter, &NoObserver);
                let template = WaveTemplate::new(&seam.context()).unwrap();
                for i in [0, 3] {
                    let whole = engine::build_group(mem, device, launch, &template, i, WaveClock::default())?;
                    let mut later = seam.group_registers_later(&template, i, WaveClock::default())?;
                    for (w, wave) in later.waves.iter_mut().enumerate() {
                        assert!(wave.vgprs.is_empty() && wave.agprs.is_empty());
                        let mut ended = WaveState::new(0x40, 300, 9);
                        ended.vgprs[5] = [0xdead; 64];
                        ended.agprs[2] = [7; 64];
                        (ended.scratch_base, ended.scratch_lane_bytes) = (0x10_0000, 16);
                        let shared = BufferWindow {
                            start: 0x20_0000,
                            len: 0x1000,
                            host: 0x5000,
                        };
                        let private = BufferWindow {
                            start: 0x10_0100,
                            len: 0x100,
                            host: 0x6000,
                        };
                        (ended.windows_mut().vector[0], ended.windows_mut().vector[1]) = (shared, private);
                        ended.windows_version = (4, 5);
                        seam.keep_parts(&mut ended);
                        assert!(
                            ended.vgprs.is_empty() && ended.windows.is_none(),
                            "its parts were taken"
                        );
                        seam.give_registers(&template, whole.wg, w as u32, wave);
                        let windows = wave.windows.take().expect("the ended wave's windows");
                        assert_eq!(
                            (windows.vector[0], windows.vector[1], wave.windows_version),
                            (shared, BufferWindow::default(), (4, 5))
                        );
                        wave.windows_version = (0, 0);
                    }
                    assert_eq!(
                        format!("{:?}", later.waves),
                        format!("{:?}", whole.waves),
                        "{}: workgroup {i}",
                        k.name
                    );
                    checked += 1;
                }
                Ok(())
            })
            .unwrap();
        }
    }
    assert!(checked >= 20, "only {checked} workgroups compared");
}

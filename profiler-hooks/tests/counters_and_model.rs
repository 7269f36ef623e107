//! The exact counters against the timing model on an instruction whose lanes access memory more than four times
//! each: a trilinear sample of a 3-D image reads eight texels per lane, and the texture unit looks up the lines
//! of every one. `TCP_TOTAL_CACHE_ACCESSES` must equal the model's vector L1 lookups, and both the lines that
//! the texels and the store touch, worked out here from the linear image layout.
//!
//! The kernel is assembled at test time by llvm-mc-19 and linked by ld.lld-19 (gfx90a: gfx942 has no image
//! instructions; scripts/setup.sh installs llvm-19).

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::Command;

use emu_core::dispatch::DispatchShape;
use emu_core::engine::{Interpreter, KernelDispatch, Limits};
use emu_core::image::{Dim, Format, Resource, Sampler, Wrap, SEL_0, SEL_1, SEL_X};
use emu_core::kernarg::ArgValue;
use emu_core::memory::{AllocKind, DeviceMemory};
use emu_core::DevicePreset;
use isa_amdgpu::codeobj::CodeObject;
use profiler_hooks::HwCounters;

/// Lane `l` samples the 3-D image (T# and S# at `desc`, `desc + 32`) at unnormalized (l + 1, 1, 1): the
/// texels (l or l + 1, 0 or 1, 0 or 1), each weighed 1/8; it stores the result at `out + 4 l`.
const KERNEL: &str = r#"
	.text
	.globl	image3d_sample
	.p2align	8
	.type	image3d_sample,@function
image3d_sample:
	s_load_dwordx4 s[16:19], s[0:1], 0x0
	s_waitcnt lgkmcnt(0)
	s_load_dwordx8 s[4:11], s[16:17], 0x0
	s_load_dwordx4 s[12:15], s[16:17], 0x20
	v_cvt_f32_u32_e32 v2, v0
	v_add_f32_e32 v2, 1.0, v2
	v_mov_b32_e32 v3, 1.0
	v_mov_b32_e32 v4, 1.0
	s_waitcnt lgkmcnt(0)
	image_sample v1, v[2:4], s[4:11], s[12:15] dmask:0x1
	v_lshlrev_b32_e32 v5, 2, v0
	s_waitcnt vmcnt(0)
	global_store_dword v5, v1, s[18:19]
	s_endpgm
.Lfunc_end0:
	.size	image3d_sample, .Lfunc_end0-image3d_sample

	.rodata
	.p2align	6
	.amdhsa_kernel image3d_sample
		.amdhsa_user_sgpr_kernarg_segment_ptr 1
		.amdhsa_next_free_vgpr 8
		.amdhsa_next_free_sgpr 24
		.amdhsa_accum_offset 8
		.amdhsa_kernarg_size 16
		.amdhsa_float_denorm_mode_32 3
	.end_amdhsa_kernel

	.amdgpu_metadata
---
amdhsa.kernels:
  - .args:
      - .address_space:  global
        .offset:         0
        .size:           8
        .value_kind:     global_buffer
      - .address_space:  global
        .offset:         8
        .size:           8
        .value_kind:     global_buffer
    .group_segment_fixed_size: 0
    .kernarg_segment_align: 8
    .kernarg_segment_size: 16
    .max_flat_workgroup_size: 64
    .name:           image3d_sample
    .private_segment_fixed_size: 0
    .sgpr_count:     24
    .symbol:         image3d_sample.kd
    .vgpr_count:     8
    .wavefront_size: 64
amdhsa.target:   amdgcn-amd-amdhsa--gfx90a
amdhsa.version:
  - 1
  - 2
...
	.end_amdgpu_metadata
"#;

/// [`KERNEL`] assembled and linked into a code object.
fn code_object() -> CodeObject {
    let dir = std::env::temp_dir().join(format!("wavejit-counters-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = |f: &str| -> PathBuf { dir.join(f) };
    std::fs::write(path("k.s"), KERNEL).unwrap();
    let run = |cmd: &mut Command| {
        let out = cmd
            .output()
            .unwrap_or_else(|e| panic!("{cmd:?}: {e} (scripts/setup.sh installs llvm-19 and lld-19)"));
        assert!(
            out.status.success(),
            "{cmd:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    run(Command::new("llvm-mc-19")
        .args(["-triple", "amdgcn-amd-amdhsa", "-mcpu=gfx90a", "-filetype=obj"])
        .arg(path("k.s"))
        .arg("-o")
        .arg(path("k.o")));
    run(Command::new("ld.lld-19")
        .arg("-shared")
        .arg(path("k.o"))
        .arg("-o")
        .arg(path("k.co")));
    let bytes = std::fs::read(path("k.co")).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    CodeObject::parse(&bytes, "image3d_sample.co").unwrap()
}

#[test]
fn eight_texels_a_lane_count_as_the_model_looks_them_up() {
    let dev = DevicePreset::by_name("mi210").unwrap();
    let co = code_object();
    let mem = DeviceMemory::new(1 << 30).unwrap();
    // 65 x 2 x 2 texels of 4 bytes, rows 79 texels apart: a row's start moves by 60 bytes mod 64 from one row to
    // the next, so the texels (l + 1, 1, 0) of lanes 0..63 start a 64-byte line and span 4 lines, (l + 1, 1, 1)
    // do not and span 5
    let (width, height, depth, pitch) = (65u32, 2u32, 2u32, 79u32);
    let texels = (pitch * height * depth) as usize;
    let image = mem.allocate(texels as u64 * 4, AllocKind::Buffer, "image").unwrap();
    assert_eq!(image % 256, 0, "an image's base is 256-byte aligned");
    let value = |x: u32, y: u32, z: u32| (x + 100 * y + 1000 * z) as f32;
    let mut bytes = vec![0u8; texels * 4];
    for z in 0..depth {
        for y in 0..height {
            for x in 0..width {
                let i = ((z * height + y) * pitch + x) as usize;
                bytes[4 * i..4 * i + 4].copy_from_slice(&value(x, y, z).to_le_bytes());
            }
        }
    }
    mem.write(image, &bytes).unwrap();
    let resource = Resource {
        base: image,
        dim: Dim::D3,
        format: Format::new(4, 7).unwrap(),
        width,
        height,
        depth,
        pitch,
        swizzle: [SEL_X, SEL_0, SEL_0, SEL_1],
        sw_mode: 0,
    };
    let sampler = Sampler {
        wrap: [Wrap::ClampLast; 3],
        unnormalized: true,
        linear: true,
        border: emu_core::image::Border::TransparentBlack,
    };
    let desc = mem.allocate(48, AllocKind::Buffer, "descriptors").unwrap();
    let words: Vec<u8> = resource
        .encode()
        .iter()
        .chain(sampler.encode().iter())
        .flat_map(|w| w.to_le_bytes())
        .collect();
    mem.write(desc, &words).unwrap();
    let out = mem.allocate(256, AllocKind::Buffer, "out").unwrap();
    let args = [ArgValue::Pointer(desc), ArgValue::Pointer(out)];
    let counters = HwCounters::new(dev, 0);
    let d = KernelDispatch {
        mem: &mem,
        device: dev,
        co: &co,
        kernel: &co.kernels[0],
        shape: DispatchShape::new([64, 1, 1], [64, 1, 1], dev).unwrap(),
        args: &args,
        limits: Limits::default(),
    };
    let (_, timing) = d.run_timed(&Interpreter, &counters).unwrap();

    // each lane's sample is the mean of its eight texels
    let mut got = vec![0u8; 256];
    mem.read(out, &mut got).unwrap();
    for l in 0..64u32 {
        let sample = f32::from_le_bytes(got[4 * l as usize..4 * l as usize + 4].try_into().unwrap());
        assert_eq!(sample, l as f32 + 0.5 + 50.0 + 500.0, "lane {l}");
    }

    // the lines of each texel round (the k-th texel of every lane), and of the store
    let line = 64u64;
    let texel = |x: u32, y: u32, z: u32| image + ((z * height + y) * pitch + x) as u64 * 4;
    let rounds: Vec<u64> = (0..8u32)
        .map(|k| {
            let (dx, dy, dz) = (k & 1, k >> 1 & 1, k >> 2 & 1);
            let lines: BTreeSet<u64> = (0..64).map(|l| texel(l + dx, dy, dz) / line).collect();
            lines.len() as u64
        })
        .collect();
    assert_eq!((rounds[3], rounds[7]), (4, 5), "the geometry the case is built on");
    let want = rounds.iter().sum::<u64>() + 256 / line;
    let values = counters.values(Some(&timing));
    let tcp = values
        .iter()
        .find(|(name, _)| *name == "TCP_TOTAL_CACHE_ACCESSES")
        .expect("the counter")
        .1;
    assert_eq!(
        tcp, timing.memory.l1.requests,
        "TCP_TOTAL_CACHE_ACCESSES against the model's L1 lookups"
    );
    assert_eq!(tcp, want, "the lines of the texel rounds {rounds:?} and the store");
}

//! Compiled memory accesses at the edges: no lane active before any window exists, a workgroup without LDS,
//! accesses that leave the window — the JIT must neither touch host memory it has not checked nor differ from
//! the interpreter.

use emu_core::dispatch::DispatchShape;
use emu_core::engine::{Interpreter, KernelDispatch, Limits};
use emu_core::interp::Interp;
use emu_core::kernarg::ArgValue;
use emu_core::memory::{AllocKind, DeviceMemory};
use emu_core::observe::NoObserver;
use emu_core::sem::{execute, Flow};
use emu_core::wave::WaveState;
use emu_core::DevicePreset;
use isa_amdgpu::codeobj::CodeObject;
use isa_amdgpu::table::rows_of;
use isa_amdgpu::{decode, Encoding, Field, Inst, Opcode, Target};

fn build(op: Opcode, enc: Encoding, fields: &[(Field, u32)]) -> Inst {
    let row = rows_of(op, Target::Gfx942).find(|r| r.encoding == enc).unwrap();
    let mut b = Inst::build(row, Target::Gfx942).unwrap();
    for &(f, v) in fields {
        b = b.set(f, v).unwrap();
    }
    decode(&b.encode().unwrap(), 0x1000, Target::Gfx942).unwrap()
}

/// The bundled code object of kernel file `name` for gfx90a (run on an MI210) and for gfx942 (on an MI300X).
fn on_both_targets(name: &str) -> impl Iterator<Item = (&'static str, &'static DevicePreset, CodeObject)> + '_ {
    [("gfx90a", "mi210"), ("gfx942", "mi300x")]
        .into_iter()
        .map(move |(target, preset)| {
            let file = format!("{name}-{target}.co");
            (
                target,
                DevicePreset::by_name(preset).unwrap(),
                CodeObject::parse(test_kernels::by_name(&file).unwrap(), &file).unwrap(),
            )
        })
}

/// Runs `insts` once on each engine from the same wave (EXEC `exec`, v[2:3] = `addr` in every lane, v4 = 7)
/// and returns (interpreter outcome, JIT outcome, interpreter wave, JIT wave).
fn both(
    insts: &[Inst],
    exec: u64,
    addr: u64,
    lds_bytes: usize,
    mem: &DeviceMemory,
) -> (Option<String>, jit::BlockExit, WaveState, WaveState) {
    both_from(insts, lds_bytes, mem, || {
        let mut w = WaveState::new(0x1000, 8, 0);
        w.vgprs[2] = [addr as u32; 64];
        w.vgprs[3] = [(addr >> 32) as u32; 64];
        w.vgprs[4] = [7; 64];
        w.set_exec(exec);
        w
    })
}

/// [`both`] from the wave `make` returns.
fn both_from(
    insts: &[Inst],
    lds_bytes: usize,
    mem: &DeviceMemory,
    make: impl Fn() -> WaveState,
) -> (Option<String>, jit::BlockExit, WaveState, WaveState) {
    let mut a = make();
    let mut lds = vec![0u8; lds_bytes];
    let mut fault = None;
    let mut pc = 0x1000;
    for inst in insts {
        let mut b = Interp {
            wave: &mut a,
            mem,
            lds: &mut lds,
            mnemonic: inst.info.name,
            accesses: None,
        };
        match execute(&mut b, inst, pc) {
            Ok(Flow::Next) => {}
            Ok(f) => panic!("{f:?}"),
            Err(e) => {
                fault = Some(e.to_string());
                break;
            }
        }
        pc += inst.size() as u64;
    }
    let jit = jit::Jit::new().unwrap();
    let mut j = make();
    let mut lds_j = vec![0u8; lds_bytes];
    let exit = jit
        .run_block_once(insts.to_vec(), 0x1000, &mut j, mem, &mut lds_j)
        .unwrap();
    assert_eq!(lds, lds_j, "LDS contents");
    (fault, exit, a, j)
}

#[test]
fn no_active_lane_before_any_window_and_no_lds_touch_nothing() {
    let mem = DeviceMemory::new(1 << 20).unwrap();
    let load = build(
        Opcode::GlobalLoadDword,
        Encoding::Global,
        &[(Field::Vdst, 1), (Field::Addr, 2), (Field::Saddr, 0x7f)],
    );
    let store = build(
        Opcode::GlobalStoreDword,
        Encoding::Global,
        &[(Field::Data, 4), (Field::Addr, 2), (Field::Saddr, 0x7f)],
    );
    let ds_read = build(Opcode::DsReadB32, Encoding::Ds, &[(Field::Vdst, 1), (Field::Addr, 2)]);
    let ds_write = build(Opcode::DsWriteB32, Encoding::Ds, &[(Field::Data0, 4), (Field::Addr, 2)]);
    // EXEC 0: nothing happens on either engine, whatever the (unmapped) address and the (absent) LDS
    let (fault, exit, a, j) = both(&[load, store, ds_read, ds_write], 0, 0xdead_0000, 0, &mem);
    assert_eq!(fault, None);
    assert!(matches!(exit, jit::BlockExit::Continue { .. }), "{exit:?}");
    assert_eq!(a.vgprs, j.vgprs);
    // one lane on an unmapped address: both fault, with the same report
    let (fault, exit, _, _) = both(&[load], 1 << 5, 0xdead_0000, 0, &mem);
    let jit::BlockExit::Fault { error, .. } = exit else {
        panic!("{exit:?}")
    };
    assert!(error.ends_with(&fault.unwrap()), "{error}");
    // LDS access with no LDS allocated: both fault
    let (fault, exit, _, _) = both(&[ds_write], 1, 0, 0, &mem);
    assert!(fault.is_some() && matches!(exit, jit::BlockExit::Fault { .. }));
}

#[test]
fn accesses_inside_and_past_a_buffer_match_the_interpreter() {
    let mem = DeviceMemory::new(1 << 20).unwrap();
    let buf = mem.allocate(256, AllocKind::Buffer, "buf").unwrap();
    mem.write(buf, &(0..64u32).flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>())
        .unwrap();
    let load = |offset: u32| {
        build(
            Opcode::GlobalLoadDword,
            Encoding::Global,
            &[
                (Field::Vdst, 1),
                (Field::Addr, 2),
                (Field::Saddr, 0x7f),
                (Field::Offset, offset),
            ],
        )
    };
    // the first load sets the window (interpreted), the second runs inline, the third leaves the buffer
    let (fault, exit, a, j) = both(&[load(0), load(8), load(252)], u64::MAX, buf, 0, &mem);
    assert_eq!(fault, None);
    assert!(matches!(exit, jit::BlockExit::Continue { .. }), "{exit:?}");
    assert_eq!(a.vgprs[1], j.vgprs[1]);
    assert_eq!(j.vgprs[1][0], 63);
    // past the end, inside the buffer's page: both engines read the page and count every lane
    mem.write(buf + 252, &[0; 4]).unwrap();
    mem.write_guest(buf + 256, &0x55u32.to_le_bytes()).unwrap();
    let (fault, exit, a, j) = both(&[load(0), load(256)], u64::MAX, buf, 0, &mem);
    assert_eq!(fault, None);
    assert!(matches!(exit, jit::BlockExit::Continue { .. }), "{exit:?}");
    assert_eq!((a.vgprs[1][0], j.vgprs[1][0]), (0x55, 0x55));
    assert_eq!((a.slack.count, j.slack.count), (64, 64));
    let (fa, fj) = (a.slack.first.unwrap(), j.slack.first.unwrap());
    assert_eq!((fa.lane, &fa.slack), (fj.lane, &fj.slack));
    assert_eq!(
        fj.at.as_ref().map(|(pc, _)| *pc),
        Some(0x1008),
        "the JIT names the instruction"
    );
    assert!(
        fj.slack
            .location
            .starts_with("4 bytes past the end of the 256-byte allocation"),
        "{}",
        fj.slack
    );
    // outside the page: both fault, as they do under memcheck inside it
    let (fault, exit, _, _) = both(&[load(0)], u64::MAX, buf + 4096, 0, &mem);
    let jit::BlockExit::Fault { error, .. } = exit else {
        panic!("{exit:?}")
    };
    assert!(
        error.contains("past the end of the 256-byte allocation") && error.ends_with(&fault.unwrap()),
        "{error}"
    );
    mem.set_memcheck(true);
    let (fault, exit, _, _) = both(&[load(0), load(256)], u64::MAX, buf, 0, &mem);
    let jit::BlockExit::Fault { error, .. } = exit else {
        panic!("{exit:?}")
    };
    assert!(
        error.contains("just past the end of the 256-byte allocation") && error.ends_with(&fault.unwrap()),
        "{error}"
    );
}

#[test]
fn stores_past_the_end_inside_the_page_land_there_on_both_engines_and_fault_under_memcheck() {
    let mem = DeviceMemory::new(1 << 20).unwrap();
    let buf = mem.allocate(100, AllocKind::Buffer, "buf").unwrap();
    let store = |offset: u32| {
        build(
            Opcode::GlobalStoreDword,
            Encoding::Global,
            &[
                (Field::Data, 4),
                (Field::Addr, 2),
                (Field::Saddr, 0x7f),
                (Field::Offset, offset),
            ],
        )
    };
    // the first store sets the window, the second leaves the buffer for its page
    let (fault, exit, a, j) = both(&[store(0), store(200)], 0b1011, buf, 0, &mem);
    assert_eq!(fault, None);
    assert!(matches!(exit, jit::BlockExit::Continue { .. }), "{exit:?}");
    assert_eq!((a.slack.count, j.slack.count), (3, 3));
    let mut b = [0u8; 4];
    mem.read_guest(buf + 200, &mut b).unwrap();
    assert_eq!(u32::from_le_bytes(b), 7);
    let f = j.slack.first.unwrap();
    assert_eq!((f.lane, f.mnemonic), (Some(0), "global_store_dword"));
    assert_eq!(
        f.slack.to_string(),
        format!(
            "write of 4 bytes at {:#x}: 104 bytes past the end of the 100-byte allocation at {buf:#x} (buf)",
            buf + 200
        )
    );
    mem.set_memcheck(true);
    let (fault, exit, a, j) = both(&[store(0), store(200)], 0b1011, buf, 0, &mem);
    let jit::BlockExit::Fault { error, .. } = exit else {
        panic!("{exit:?}")
    };
    assert!(
        error.contains("write of 4 bytes")
            && error.contains("100 bytes past the end of the 100-byte allocation")
            && error.ends_with(&fault.unwrap()),
        "{error}"
    );
    assert_eq!((a.slack.count, j.slack.count), (0, 0));
}

#[test]
fn a_lane_far_past_its_buffer_faults_in_the_redzone_under_memcheck_on_both_engines_through_a_window() {
    let mem = DeviceMemory::new(1 << 30).unwrap();
    mem.set_memcheck(true);
    let buf = mem.allocate(400, AllocKind::Buffer, "small").unwrap();
    // without redzones, 400,000 bytes past the end of `small` lies inside this one
    let next = mem.allocate(4 << 20, AllocKind::Buffer, "next").unwrap();
    let far = buf + 400 + 400_000;
    let store = |addr: u32| {
        build(
            Opcode::GlobalStoreDword,
            Encoding::Global,
            &[(Field::Data, 4), (Field::Addr, addr), (Field::Saddr, 0x7f)],
        )
    };
    // the first store (both lanes at `small`) gives the JIT its window on `small`; in the second, lane 0 stays
    // inside it and lane 1 writes 400,000 bytes past the end
    let (fault, exit, _, _) = both_from(&[store(6), store(2)], 0, &mem, || {
        let mut w = WaveState::new(0x1000, 8, 0);
        for (lane, addr) in [buf, far].into_iter().enumerate() {
            (w.vgprs[2][lane], w.vgprs[3][lane]) = (addr as u32, (addr >> 32) as u32);
        }
        (w.vgprs[6], w.vgprs[7]) = ([buf as u32; 64], [(buf >> 32) as u32; 64]);
        w.vgprs[4] = [7; 64];
        w.set_exec(0b11);
        w
    });
    let jit::BlockExit::Fault { error, .. } = exit else {
        panic!("{exit:?}")
    };
    let fault = fault.expect("the interpreter faults");
    assert!(error.ends_with(&fault), "{error}");
    assert!(
        fault.contains(&format!(
            "lane 1: write of 4 bytes at {far:#x}: 400000 bytes past the end of the 400-byte allocation at \
             {buf:#x} (small) and {} bytes before the 4194304-byte allocation at {next:#x} (next)",
            next - far
        )),
        "{fault}"
    );
    let mut neighbour = vec![0u8; 4 << 20];
    mem.read(next, &mut neighbour).unwrap();
    assert!(neighbour.iter().all(|&x| x == 0), "the next allocation was written");
}

/// A buffer that crosses a 4 GiB boundary of the device address space: compiled accesses check lanes against
/// the part of the buffer in their 4 GiB half, so a grid-stride loop over it stays on the fast path on both
/// sides of the boundary and must write exactly what the interpreter writes.
#[test]
fn a_loop_over_a_buffer_across_a_4_gib_boundary_matches_the_interpreter() {
    let dev = DevicePreset::by_name("mi210").unwrap();
    let mem = DeviceMemory::new(16 << 30).unwrap();
    let n = 1u32 << 16; // float4s: 1 MiB per array
    let bytes = n as u64 * 16;
    // the arena is filled from its start, one guard page after each allocation: pad up to half a buffer
    // before the first 4 GiB boundary past the base
    let boundary = (mem.base() | 0xffff_ffff) + 1;
    let pad = boundary - mem.base() - bytes / 2 - emu_core::memory::PAGE;
    mem.allocate(pad, AllocKind::Buffer, "pad").unwrap();
    let a = mem.allocate(bytes, AllocKind::Buffer, "a").unwrap();
    assert!(
        a < boundary && a + bytes > boundary,
        "a at {a:#x} crosses {boundary:#x}"
    );
    let b = mem.allocate(bytes, AllocKind::Buffer, "b").unwrap();
    let c = mem.allocate(bytes, AllocKind::Buffer, "c").unwrap();
    let floats = |f: &dyn Fn(u32) -> f32| (0..4 * n).flat_map(|i| f(i).to_le_bytes()).collect::<Vec<u8>>();
    mem.write(b, &floats(&|i| i as f32)).unwrap();
    mem.write(c, &floats(&|i| (i % 7) as f32 - 3.0)).unwrap();
    let co = CodeObject::parse(test_kernels::by_name("stream-gfx90a.co").unwrap(), "stream").unwrap();
    let threads = 256u32;
    let args = [
        ArgValue::Pointer(a),
        ArgValue::Pointer(b),
        ArgValue::Pointer(c),
        ArgValue::F32(0.5),
        ArgValue::U32(n),
        ArgValue::U32(threads),
    ];
    let d = KernelDispatch {
        mem: &mem,
        device: dev,
        co: &co,
        kernel: co.kernel("stream_triad").unwrap(),
        shape: DispatchShape::new([threads, 1, 1], [threads, 1, 1], dev).unwrap(),
        args: &args,
        limits: Limits {
            threads: Some(1),
            ..Limits::default()
        },
    };
    d.run_with(&Interpreter, &NoObserver).unwrap();
    let mut expected = vec![0u8; bytes as usize];
    mem.read(a, &mut expected).unwrap();
    mem.write(a, &vec![0u8; bytes as usize]).unwrap();
    let jit = jit::Jit::new().unwrap();
    d.run_with(&jit, &NoObserver).unwrap();
    let mut got = vec![0u8; bytes as usize];
    mem.read(a, &mut got).unwrap();
    assert!(got == expected, "the JIT's a[] differs from the interpreter's");
    // and both are the triad (b + 0.5 c is exact for these values)
    for i in [0u32, 1, 4 * n / 2 - 1, 4 * n / 2, 4 * n - 1] {
        let v = f32::from_le_bytes(got[4 * i as usize..4 * i as usize + 4].try_into().unwrap());
        assert_eq!(v, i as f32 + 0.5 * ((i % 7) as f32 - 3.0), "a[{i}]");
    }
}

#[test]
fn private_arrays_stay_in_compiled_code_after_each_sites_first_access() {
    // the bundled private_array kernel: 64 private stores and 16 private loads per lane, all of one wave's
    // segment; on gfx90a MUBUF through the private segment buffer, on gfx942 scratch_* instructions
    for (target, dev, co) in on_both_targets("private_array") {
        let mem = DeviceMemory::new(1 << 30).unwrap();
        let waves = 40usize;
        let items = 64 * waves;
        let idx: Vec<i32> = (0..97).map(|i| (i * 29 + 3) % 200).collect();
        let didx = mem.allocate(idx.len() as u64 * 4, AllocKind::Buffer, "idx").unwrap();
        mem.write(didx, &idx.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>())
            .unwrap();
        let dout = mem.allocate(items as u64 * 4, AllocKind::Buffer, "out").unwrap();
        let shape = DispatchShape::new([items as u32, 1, 1], [64, 1, 1], dev).unwrap();
        let args = [
            ArgValue::Pointer(dout),
            ArgValue::Pointer(didx),
            ArgValue::U32(idx.len() as u32),
        ];
        let jit = jit::Jit::with_options(jit::JitOptions::eager()).unwrap();
        let d = KernelDispatch {
            mem: &mem,
            device: dev,
            co: &co,
            kernel: &co.kernels[0],
            shape,
            args: &args,
            limits: Limits::default(),
        };
        d.run_with(&jit, &NoObserver)
            .unwrap_or_else(|e| panic!("{target}: {e}"));
        let mut out = vec![0u8; items * 4];
        mem.read(dout, &mut out).unwrap();
        let got: Vec<u32> = out
            .chunks(4)
            .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        let want: Vec<u32> = test_kernels::reference::private_array(&idx, items)
            .iter()
            .map(|x| x.to_bits())
            .collect();
        assert_eq!(got, want, "{target}");
        // each wave executes about 100 memory instructions, 80 of them private: with every private access on
        // the checked path, 96 of them per wave take it on gfx90a. Once the wave's segment is found, the
        // private sites access it directly; the 16 loads from `idx` find their buffer each
        let s = jit.stats();
        let per_wave = s.checked_accesses as f64 / waves as f64;
        assert!(
            per_wave <= 30.0,
            "{target}: {} accesses through the interpreter, {per_wave:.1} per wave",
            s.checked_accesses
        );
        assert_eq!(s.fallbacks, 0, "{target}");
    }
}

#[test]
fn host_memory_mapped_or_pinned_is_accessed_directly_and_as_the_interpreter_does() {
    // stream_triad (a[i] = b[i] + s * c[i] over float4s, each lane 8 elements apart a wave's width) with its
    // three arrays in host memory, as HIP's managed memory is (mapped) or as pinned host memory is (aliased)
    let dev = DevicePreset::by_name("mi210").unwrap();
    let co = CodeObject::parse(test_kernels::by_name("stream-gfx90a.co").unwrap(), "stream-gfx90a.co").unwrap();
    let kernel = co.kernels.iter().find(|k| k.name == "stream_triad").unwrap();
    let (waves, passes) = (40usize, 8usize);
    let threads = 64 * waves;
    let words = 4 * threads * passes;
    for pinned in [false, true] {
        let mem = DeviceMemory::new(1 << 26).unwrap();
        let mut host: Vec<Vec<u32>> = vec![
            vec![0; words],
            (0..words as u32).map(|i| (i as f32 * 0.5).to_bits()).collect(),
            (0..words as u32).map(|i| (1000.0 - i as f32).to_bits()).collect(),
        ];
        let mut addr = [0u64; 3];
        for (k, h) in host.iter_mut().enumerate() {
            let (p, len) = (h.as_mut_ptr() as u64, words as u64 * 4);
            addr[k] = if pinned {
                mem.alias_host(p, len, "pinned").unwrap()
            } else {
                mem.map_host(p, len, "mapped").map(|_| p).unwrap()
            };
        }
        let shape = DispatchShape::new([threads as u32, 1, 1], [256, 1, 1], dev).unwrap();
        let (p, u, f) = (ArgValue::Pointer, ArgValue::U32, ArgValue::F32);
        let args = [
            p(addr[0]),
            p(addr[1]),
            p(addr[2]),
            f(2.5),
            u((threads * passes) as u32),
            u(threads as u32),
        ];
        let d = KernelDispatch {
            mem: &mem,
            device: dev,
            co: &co,
            kernel,
            shape,
            args: &args,
            limits: Limits::default(),
        };
        d.run_with(&Interpreter, &NoObserver).unwrap();
        let by_interpreter = std::mem::replace(&mut host[0], vec![0; words]);
        // the array moved: map the new one
        let (p0, len) = (host[0].as_mut_ptr() as u64, words as u64 * 4);
        let a = if pinned {
            mem.alias_host(p0, len, "pinned a").unwrap()
        } else {
            mem.map_host(p0, len, "mapped a").map(|_| p0).unwrap()
        };
        let args = [
            p(a),
            p(addr[1]),
            p(addr[2]),
            f(2.5),
            u((threads * passes) as u32),
            u(threads as u32),
        ];
        let d = KernelDispatch { args: &args, ..d };
        let jit = jit::Jit::with_options(jit::JitOptions::eager()).unwrap();
        d.run_with(&jit, &NoObserver).unwrap();
        assert_eq!(host[0], by_interpreter, "pinned {pinned}");
        assert!(host[0].iter().any(|&x| x != 0));
        // each wave makes 3 * 8 accesses of its arrays; only each site's first goes through the interpreter
        let s = jit.stats();
        assert!(
            s.checked_accesses <= 6 * waves as u64,
            "pinned {pinned}: {} accesses through the interpreter for {waves} waves",
            s.checked_accesses
        );
    }
}

#[test]
fn later_waves_start_with_the_windows_an_earlier_one_found_while_the_memory_is_unchanged() {
    // vadd (c[i] = a[i] + b[i]) over 256 waves on one host thread: each wave makes one access at each of its
    // three sites and one scalar load, so only the first wave's go through the interpreter
    let dev = DevicePreset::by_name("mi210").unwrap();
    let co = CodeObject::parse(test_kernels::by_name("vadd-gfx90a.co").unwrap(), "vadd-gfx90a.co").unwrap();
    let n = 64 * 256usize;
    let mem = DeviceMemory::new(1 << 26).unwrap();
    let f32s = |k: usize| -> Vec<u8> { (0..n).flat_map(|i| ((i * k) as f32).to_le_bytes()).collect() };
    let (a, b, c) = (
        mem.allocate(4 * n as u64, AllocKind::Buffer, "a").unwrap(),
        mem.allocate(4 * n as u64, AllocKind::Buffer, "b").unwrap(),
        mem.allocate(4 * n as u64, AllocKind::Buffer, "c").unwrap(),
    );
    mem.write(a, &f32s(1)).unwrap();
    mem.write(b, &f32s(3)).unwrap();
    let shape = DispatchShape::new([n as u32, 1, 1], [256, 1, 1], dev).unwrap();
    let args = [
        ArgValue::Pointer(a),
        ArgValue::Pointer(b),
        ArgValue::Pointer(c),
        ArgValue::U32(n as u32),
    ];
    let d = KernelDispatch {
        mem: &mem,
        device: dev,
        co: &co,
        kernel: &co.kernels[0],
        shape,
        args: &args,
        limits: Limits {
            threads: Some(1),
            ..Limits::default()
        },
    };
    let jit = jit::Jit::with_options(jit::JitOptions::eager()).unwrap();
    d.run_with(&jit, &NoObserver).unwrap();
    let mut out = vec![0u8; 4 * n];
    mem.read(c, &mut out).unwrap();
    assert_eq!(out, f32s(4));
    let first = jit.stats().checked_accesses;
    assert!(first <= 8, "{first} accesses through the interpreter for 256 waves");
    // the same dispatch again (its kernel arguments are a new allocation): again only its first wave's
    d.run_with(&jit, &NoObserver).unwrap();
    assert!(jit.stats().checked_accesses - first <= 8);
    // once a buffer is freed, no window outlives it: a kernel given its address faults on both engines alike
    mem.free(b).unwrap();
    let jit_fault = d.run_with(&jit, &NoObserver).unwrap_err().to_string();
    let interp_fault = d.run_with(&Interpreter, &NoObserver).unwrap_err().to_string();
    // (each dispatch places its code anew, so the PCs differ)
    let without_pc = |f: &str| {
        f.split_once(", pc ")
            .map(|(a, b)| {
                (
                    a.to_string(),
                    b.split_once(' ').map_or(String::new(), |(_, r)| r.to_string()),
                )
            })
            .unwrap()
    };
    assert_eq!(without_pc(&jit_fault), without_pc(&interp_fault));
    assert!(jit_fault.contains("freed earlier"), "{jit_fault}");
}

#[test]
fn scalar_loads_from_the_dispatch_packet_and_the_arguments_keep_a_window_each() {
    // the bundled packet kernel reads its workgroup size and the grid's from the dispatch packet, as HIP's code
    // object v4 kernels do, beside its kernel arguments: four scalar load sites taking turns between the two
    // allocations. With one scalar window per wave, two of them went through the interpreter in every wave
    for (target, dev, co) in on_both_targets("packet") {
        let mem = DeviceMemory::new(1 << 26).unwrap();
        let (waves, n) = (256usize, 64 * 256 - 5);
        let input: Vec<u32> = (0..n as u32).map(|i| i * 3 + 1).collect();
        let din = mem.allocate(4 * n as u64, AllocKind::Buffer, "in").unwrap();
        mem.write(din, &input.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>())
            .unwrap();
        let dout = mem.allocate(4 * n as u64, AllocKind::Buffer, "out").unwrap();
        let shape = DispatchShape::new([64 * waves as u32, 1, 1], [128, 1, 1], dev).unwrap();
        let args = [ArgValue::Pointer(din), ArgValue::Pointer(dout), ArgValue::U32(n as u32)];
        let d = KernelDispatch {
            mem: &mem,
            device: dev,
            co: &co,
            kernel: &co.kernels[0],
            shape,
            args: &args,
            limits: Limits {
                threads: Some(1),
                ..Limits::default()
            },
        };
        let jit = jit::Jit::with_options(jit::JitOptions::eager()).unwrap();
        d.run_with(&jit, &NoObserver)
            .unwrap_or_else(|e| panic!("{target}: {e}"));
        let mut out = vec![0u8; 4 * n];
        mem.read(dout, &mut out).unwrap();
        let got: Vec<u32> = out
            .chunks(4)
            .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        let want: Vec<u32> = input.iter().map(|x| x * 128 + 64 * waves as u32).collect();
        assert_eq!(got, want, "{target}");
        let checked = jit.stats().checked_accesses;
        assert!(
            checked <= 12,
            "{target}: {checked} accesses through the interpreter for {waves} waves"
        );
    }
}

#[test]
fn dword_stores_chunk_by_chunk_or_lane_by_lane_leave_what_the_interpreter_leaves() {
    // a one-dword store whose lanes come four consecutive dwords at a time is stored a chunk at a time; every
    // other shape lane by lane. Lanes write in order, so where lanes share an address the last one's value stays
    let mem = DeviceMemory::new(1 << 20).unwrap();
    let buf = mem.allocate(1024, AllocKind::Buffer, "buf").unwrap();
    let load = build(
        Opcode::GlobalLoadDword,
        Encoding::Global,
        &[(Field::Vdst, 1), (Field::Addr, 6), (Field::Saddr, 0x7f)],
    );
    let store = build(
        Opcode::GlobalStoreDword,
        Encoding::Global,
        &[
            (Field::Data, 4),
            (Field::Addr, 2),
            (Field::Saddr, 0x7f),
            (Field::Offset, 8),
        ],
    );
    type Pattern = (&'static str, fn(u64) -> u64);
    let patterns: [Pattern; 6] = [
        ("consecutive", |l| 4 * l),
        ("chunks overlapping", |l| 4 * (l % 4) + 8 * (l / 4)),
        ("chunks in reverse", |l| 16 * (15 - l / 4) + 4 * (l % 4)),
        ("one chunk's four dwords", |l| 4 * (l % 4)),
        ("one dword", |_| 20),
        ("every other dword", |l| 8 * l),
    ];
    for (name, at) in patterns {
        for exec in [u64::MAX, 0xffff_fffe_ffff_ffff, 0x00ff_0000_0000_00ff] {
            let mut outcomes = Vec::new();
            for engine in ["interp", "jit"] {
                mem.write(buf, &[0xee; 1024]).unwrap();
                let mut w = WaveState::new(0x1000, 8, 0);
                for l in 0..64 {
                    let a = buf + at(l as u64);
                    (w.vgprs[2][l], w.vgprs[3][l], w.vgprs[4][l]) = (a as u32, (a >> 32) as u32, 1000 + l as u32);
                    (w.vgprs[6][l], w.vgprs[7][l]) = (buf as u32, (buf >> 32) as u32);
                }
                w.set_exec(exec);
                let mut lds = Vec::new();
                if engine == "interp" {
                    let mut pc = 0x1000;
                    for inst in [&load, &store] {
                        let mut b = Interp {
                            wave: &mut w,
                            mem: &mem,
                            lds: &mut lds,
                            mnemonic: inst.info.name,
                            accesses: None,
                        };
                        assert_eq!(execute(&mut b, inst, pc).unwrap(), Flow::Next);
                        pc += inst.size() as u64;
                    }
                } else {
                    // the load fills the store site's window too, so the store runs compiled
                    let jit = jit::Jit::new().unwrap();
                    let exit = jit
                        .run_block_once(vec![load, store], 0x1000, &mut w, &mem, &mut lds)
                        .unwrap();
                    assert!(matches!(exit, jit::BlockExit::Continue { .. }), "{exit:?}");
                    assert!(
                        w.windows_mut().vector.iter().all(|x| x.start == buf && x.len == 1024),
                        "{name}: the load filled every window"
                    );
                }
                let mut bytes = vec![0u8; 1024];
                mem.read(buf, &mut bytes).unwrap();
                outcomes.push(bytes);
            }
            let first = outcomes[0].iter().zip(&outcomes[1]).position(|(a, b)| a != b);
            assert_eq!(
                first, None,
                "{name}, exec {exec:#x}: the engines' memory differs from this byte on"
            );
        }
    }
}

#[test]
fn sixteen_byte_lane_reads_from_scattered_addresses_match_the_interpreter() {
    // ds_read_b128: each lane's four dwords from its own address (out of lane order, some shared, some not
    // 16-byte aligned), under a full and a partial EXEC; the compiled read loads a lane's 16 bytes at once and
    // transposes them into the four registers
    let mem = DeviceMemory::new(1 << 20).unwrap();
    let read = build(
        Opcode::DsReadB128,
        Encoding::Ds,
        &[(Field::Vdst, 8), (Field::Addr, 5), (Field::Offset0, 12)],
    );
    let lds: Vec<u8> = (0..2048u32).map(|i| (i * 7 + i / 256) as u8).collect();
    for exec in [u64::MAX, 0x8421_f0f0_0f0f_1248] {
        let make = || {
            let mut w = WaveState::new(0x1000, 16, 0);
            for l in 0..64u32 {
                w.vgprs[5][l as usize] = (l * 37 % 64) * 24 + if l % 5 == 0 { 4 } else { 0 };
            }
            w.vgprs[8..12].iter_mut().for_each(|r| *r = [0xdead_beef; 64]);
            w.set_exec(exec);
            w
        };
        let mut a = make();
        let mut lds_a = lds.clone();
        let mut b = Interp {
            wave: &mut a,
            mem: &mem,
            lds: &mut lds_a,
            mnemonic: read.info.name,
            accesses: None,
        };
        assert!(matches!(execute(&mut b, &read, 0x1000), Ok(Flow::Next)));
        let mut j = make();
        let mut lds_j = lds.clone();
        let exit = jit::Jit::new()
            .unwrap()
            .run_block_once(vec![read], 0x1000, &mut j, &mem, &mut lds_j)
            .unwrap();
        assert!(matches!(exit, jit::BlockExit::Continue { .. }), "{exit:?}");
        assert_eq!(a.vgprs[8..12], j.vgprs[8..12], "EXEC {exec:#x}");
        // and both are the LDS bytes at the lane's address (lane 3 is active under both masks)
        let l = 3usize;
        let at = (a.vgprs[5][l] + 12) as usize;
        assert_eq!(
            a.vgprs[10][l],
            u32::from_le_bytes(lds[at + 8..at + 12].try_into().unwrap())
        );
    }
}

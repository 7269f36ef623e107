//! What an observer sees: every instruction by unit, each lane's addresses, and waves interleaved at its asking,
//! without changing results.

use super::*;

pub fn an_observer_sees_every_instruction_by_unit_without_changing_results<E: Engine>(e: &E) {
    use isa_amdgpu::table::Unit;
    use profiler_hooks::ClassCounter;
    let (dev, co) = setup("reduce", "gfx942");
    let n = 512;
    let (input, _) = inputs(n);
    let run = |counter: Option<&ClassCounter>| {
        let mem = DeviceMemory::new(1 << 30).unwrap();
        let din = upload(&mem, &input, "in");
        let dout = upload(&mem, &[0.0; 2], "out");
        let shape = DispatchShape::new([n as u32, 1, 1], [256, 1, 1], dev).unwrap();
        let args = [ArgValue::Pointer(din), ArgValue::Pointer(dout), ArgValue::U32(n as u32)];
        let d = KernelDispatch {
            mem: &mem,
            device: dev,
            co: &co,
            kernel: &co.kernels[0],
            shape,
            args: &args,
            limits: Limits::default(),
        };
        let stats = match counter {
            Some(c) => e.run_observed(&d, c),
            None => run_kernel(e, d),
        }
        .unwrap();
        (download(&mem, dout, 2), stats)
    };
    let counter = ClassCounter::default();
    let (observed, stats) = run(Some(&counter));
    let (plain, _) = run(None);
    assert_eq!(observed, plain);
    let counts = counter.counts();
    assert_eq!(
        counts.iter().map(|(_, n)| n).sum::<u64>(),
        stats.wave_instructions,
        "every instruction is seen once"
    );
    for unit in [Unit::Salu, Unit::Smem, Unit::Valu, Unit::Lds, Unit::Vmem, Unit::Branch] {
        assert!(counter.count(unit) > 0, "{unit:?} missing from {counts:?}");
    }
    assert!(counter.vector_lanes() > 0);
}

/// Records every lane access and the order in which waves issue; asks to switch waves after every instruction.
#[derive(Default)]
struct Recorder {
    accesses: std::sync::Mutex<Vec<(u32, emu_core::observe::LaneAccess)>>,
    order: std::sync::Mutex<Vec<u32>>,
}

impl emu_core::observe::Observer for Recorder {
    const WANTS_ACCESSES: bool = true;
    fn instruction(&self, ev: &emu_core::observe::InstEvent<'_>) {
        self.order.lock().unwrap().push(ev.wave);
        self.accesses
            .lock()
            .unwrap()
            .extend(ev.accesses.iter().map(|a| (ev.wave, a)));
    }
    fn switch_wave(&self, _ev: &emu_core::observe::InstEvent<'_>) -> bool {
        true
    }
}

pub fn an_observer_sees_each_lanes_addresses_and_can_interleave_waves_without_changing_results<E: Engine>(e: &E) {
    use emu_core::observe::{Dir, Space};
    let (dev, co) = setup("vadd", "gfx90a");
    let mem = DeviceMemory::new(1 << 30).unwrap();
    let n = 200; // one workgroup of 256: four waves, the last with 8 active lanes
    let (a, b) = inputs(n);
    let (da, db, dc) = (
        upload(&mem, &a, "a"),
        upload(&mem, &b, "b"),
        upload(&mem, &vec![0.0; n], "c"),
    );
    let shape = DispatchShape::new([n as u32, 1, 1], [256, 1, 1], dev).unwrap();
    let args = [
        ArgValue::Pointer(da),
        ArgValue::Pointer(db),
        ArgValue::Pointer(dc),
        ArgValue::U32(n as u32),
    ];
    let rec = Recorder::default();
    e.run_observed(
        &KernelDispatch {
            mem: &mem,
            device: dev,
            co: &co,
            kernel: &co.kernels[0],
            shape,
            args: &args,
            limits: Limits::default(),
        },
        &rec,
    )
    .unwrap();
    assert_eq!(
        bits(&download(&mem, dc, n)),
        bits(&test_kernels::reference::vadd(&a, &b))
    );
    let acc = rec.accesses.into_inner().unwrap();
    // each work-item i reads a[i] and b[i] and writes c[i], as lane i % 64 of wave i / 64
    for (base, dir) in [(da, Dir::Read), (db, Dir::Read), (dc, Dir::Write)] {
        let mut seen: Vec<u64> = acc
            .iter()
            .filter(|(_, x)| {
                x.space == Space::Global && x.dir == dir && (base..base + 4 * n as u64).contains(&x.address)
            })
            .map(|(w, x)| {
                assert_eq!(
                    (x.address - base) / 4,
                    *w as u64 * 64 + x.lane as u64,
                    "lane and address agree"
                );
                assert_eq!(x.bytes, 4);
                x.address
            })
            .collect();
        seen.sort();
        assert_eq!(seen, (0..n as u64).map(|i| base + 4 * i).collect::<Vec<_>>());
    }
    assert!(
        acc.iter().any(|(_, x)| x.space == Space::Scalar && x.dir == Dir::Read),
        "scalar kernarg loads are recorded too"
    );
    // with a switch after every instruction, consecutive instructions come from different waves
    let order = rec.order.into_inner().unwrap();
    let switches = order.windows(2).filter(|w| w[0] != w[1]).count();
    assert!(
        switches * 10 > order.len() * 7,
        "{switches} switches in {} instructions",
        order.len()
    );
}

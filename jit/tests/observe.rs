//! The JIT feeds the observation seam exactly as the interpreter does: the same events per wave (PC, EXEC at
//! issue, every lane's memory accesses), the same counts per unit, and an observer can interleave waves.

use std::collections::BTreeMap;
use std::sync::Mutex;

use emu_core::dispatch::DispatchShape;
use emu_core::engine::{KernelDispatch, Limits};
use emu_core::kernarg::ArgValue;
use emu_core::memory::{AllocKind, DeviceMemory};
use emu_core::observe::{InstEvent, LaneAccess, Observer};
use emu_core::DevicePreset;
use isa_amdgpu::codeobj::CodeObject;
use profiler_hooks::ClassCounter;

type Event = (u64, u64, Vec<LaneAccess>);
type Events = BTreeMap<([u32; 3], u32), Vec<Event>>;

/// Every event, per (workgroup, wave), in order; optionally asks to switch waves after each instruction.
struct Recorder {
    events: Mutex<Events>,
    order: Mutex<Vec<u32>>,
    switch: bool,
}

impl Recorder {
    fn new(switch: bool) -> Recorder {
        Recorder {
            events: Mutex::new(BTreeMap::new()),
            order: Mutex::new(Vec::new()),
            switch,
        }
    }
}

impl Observer for Recorder {
    const WANTS_ACCESSES: bool = true;
    fn instruction(&self, ev: &InstEvent<'_>) {
        self.order.lock().unwrap().push(ev.wave);
        self.events
            .lock()
            .unwrap()
            .entry((ev.workgroup, ev.wave))
            .or_default()
            .push((ev.pc, ev.exec, ev.accesses.to_vec()));
    }
    fn switch_wave(&self, _: &InstEvent<'_>) -> bool {
        self.switch
    }
}

fn reduce_run(observe: impl FnOnce(&DeviceMemory, &'static DevicePreset, &CodeObject, u64, u64)) -> Vec<f32> {
    let dev = DevicePreset::by_name("mi300x").unwrap();
    let co = CodeObject::parse(test_kernels::by_name("reduce-gfx942.co").unwrap(), "reduce").unwrap();
    let mem = DeviceMemory::new(1 << 30).unwrap();
    let n = 512usize;
    let input: Vec<u8> = (0..n).flat_map(|i| (i as f32 * 0.5).to_le_bytes()).collect();
    let din = mem.allocate(input.len() as u64, AllocKind::Buffer, "in").unwrap();
    mem.write(din, &input).unwrap();
    let dout = mem.allocate(8, AllocKind::Buffer, "out").unwrap();
    observe(&mem, dev, &co, din, dout);
    let mut b = [0u8; 8];
    mem.read(dout, &mut b).unwrap();
    vec![
        f32::from_le_bytes(b[..4].try_into().unwrap()),
        f32::from_le_bytes(b[4..].try_into().unwrap()),
    ]
}

fn dispatch<O: Observer>(
    jit: Option<&jit::Jit>,
    o: &O,
    mem: &DeviceMemory,
    dev: &'static DevicePreset,
    co: &CodeObject,
    din: u64,
    dout: u64,
) {
    let shape = DispatchShape::new([512, 1, 1], [256, 1, 1], dev).unwrap();
    let args = [ArgValue::Pointer(din), ArgValue::Pointer(dout), ArgValue::U32(512)];
    let d = KernelDispatch {
        mem,
        device: dev,
        co,
        kernel: &co.kernels[0],
        shape,
        args: &args,
        limits: Limits {
            threads: Some(1),
            ..Limits::default()
        },
    };
    match jit {
        Some(j) => d.run_with(j, o).unwrap(),
        None => d.run_observed(o).unwrap(),
    };
}

#[test]
fn compiled_blocks_report_the_interpreters_events_with_lane_accesses() {
    let jit = jit::Jit::new().unwrap();
    let (ri, rj) = (Recorder::new(false), Recorder::new(false));
    let out_i = reduce_run(|m, d, c, i, o| dispatch(None, &ri, m, d, c, i, o));
    let out_j = reduce_run(|m, d, c, i, o| dispatch(Some(&jit), &rj, m, d, c, i, o));
    assert_eq!(out_i, out_j);
    let (ei, ej) = (ri.events.into_inner().unwrap(), rj.events.into_inner().unwrap());
    assert_eq!(ei.len(), ej.len(), "waves");
    for (k, evs) in &ei {
        let other = &ej[k];
        assert_eq!(evs.len(), other.len(), "{k:?}: instructions");
        for (i, (a, b)) in evs.iter().zip(other).enumerate() {
            // addresses differ by where each dispatch put its code and buffers: compare the access shapes, and
            // PCs relative to the wave's first (the kernel's entry)
            assert_eq!(
                (a.0 - evs[0].0, a.1),
                (b.0 - other[0].0, b.1),
                "{k:?} instruction {i}: pc/exec"
            );
            let shape = |v: &Vec<LaneAccess>| v.iter().map(|x| (x.lane, x.space, x.bytes, x.dir)).collect::<Vec<_>>();
            assert_eq!(shape(&a.2), shape(&b.2), "{k:?} instruction {i}: accesses");
        }
    }
    assert!(jit.stats().compiled > 0);
}

#[test]
fn unit_counts_match_and_an_observer_can_interleave_compiled_waves() {
    let jit = jit::Jit::new().unwrap();
    let (ci, cj) = (ClassCounter::default(), ClassCounter::default());
    reduce_run(|m, d, c, i, o| dispatch(None, &ci, m, d, c, i, o));
    reduce_run(|m, d, c, i, o| dispatch(Some(&jit), &cj, m, d, c, i, o));
    assert_eq!(ci.counts(), cj.counts());
    assert_eq!(ci.vector_lanes(), cj.vector_lanes());
    let sw = Recorder::new(true);
    let out = reduce_run(|m, d, c, i, o| dispatch(Some(&jit), &sw, m, d, c, i, o));
    let plain = reduce_run(|m, d, c, i, o| dispatch(None, &Recorder::new(false), m, d, c, i, o));
    assert_eq!(out, plain);
    let order = sw.order.into_inner().unwrap();
    let switches = order.windows(2).filter(|w| w[0] != w[1]).count();
    assert!(
        switches * 10 > order.len() * 7,
        "{switches} switches in {} instructions",
        order.len()
    );
}

//! Every bundled-kernel test case (the kernel-cases crate) observed on both engines: from the
//! same device memory, the interpreter and the JIT must report the same instructions per wave, with the same
//! EXEC and the same lane accesses (lane, space, direction, size, and the address — LDS offsets and device
//! addresses of the case's buffers exactly; the kernel's code, its argument segment and its private memory
//! are placed anew for each dispatch, so PCs count from the wave's first and scalar and scratch accesses are
//! compared without their addresses), in the same form: a range ([`LaneRange`]) from both engines, or records
//! from both. Compiled code records its own accesses, so this checks those records and the ranges it makes
//! without them.
//! Each dispatch runs on one host thread, so both engines follow the same schedule. The JIT runs twice: for
//! an observer that takes each instruction, and for one that takes batches (`Observer::BATCHES`).

use std::collections::BTreeMap;
use std::sync::{Mutex, OnceLock};

use emu_core::observe::{InstEvent, LaneAccess, LaneRange, Observer, Space};

fn jit() -> &'static jit::Jit {
    static JIT: OnceLock<jit::Jit> = OnceLock::new();
    JIT.get_or_init(|| jit::Jit::new().expect("a JIT for this host"))
}

/// Per wave, each instruction's PC, EXEC, its accesses lane by lane and the range they came as (if they did).
type Events = BTreeMap<([u32; 3], u32), Vec<(u64, u64, Vec<LaneAccess>, Option<LaneRange>)>>;

#[derive(Default)]
struct WaveEvents(Mutex<Events>);

impl Observer for WaveEvents {
    const WANTS_ACCESSES: bool = true;
    fn instruction(&self, ev: &InstEvent<'_>) {
        self.0
            .lock()
            .unwrap()
            .entry((ev.workgroup, ev.wave))
            .or_default()
            .push((ev.pc, ev.exec, ev.accesses.to_vec(), ev.accesses.range().copied()));
    }
}

/// The same record from an observer that takes runs of instructions without memory accesses as batches
/// (`Observer::BATCHES`: the JIT keeps such runs, and loops of them, in compiled code and reports them at the
/// run's end, a loop's identical passes as one batch with a count); the default `batch` passes each instruction
/// of each pass to `instruction`.
#[derive(Default)]
struct BatchedWaveEvents(WaveEvents);

impl Observer for BatchedWaveEvents {
    const WANTS_ACCESSES: bool = true;
    const BATCHES: bool = true;
    fn instruction(&self, ev: &InstEvent<'_>) {
        self.0.instruction(ev)
    }
}

/// An access as compared: addresses of memory placed per dispatch left out.
fn comparable(a: &LaneAccess) -> (u8, Space, u32, emu_core::observe::Dir, Option<u64>) {
    let address = match a.space {
        Space::Scalar | Space::Scratch => None,
        _ => Some(a.address),
    };
    (a.lane, a.space, a.bytes, a.dir, address)
}

/// The engine under test: the interpreter and the JIT observed from the same memory, their events compared;
/// the JIT's outcome.
fn engine_run(
    d: &emu_core::engine::KernelDispatch<'_>,
) -> Result<emu_core::engine::RunStats, emu_core::engine::EngineError> {
    // one host thread: both engines then run the same schedule (contended atomic retry loops spin the same)
    let one = emu_core::engine::KernelDispatch {
        limits: emu_core::engine::Limits {
            threads: Some(1),
            ..d.limits
        },
        ..*d
    };
    let d = &one;
    let (mem, kernel) = (d.mem, d.kernel);
    let before = mem.snapshot_buffers().unwrap();
    let (ri, rj) = (WaveEvents::default(), WaveEvents::default());
    let interp = d.run_observed(&ri);
    let after_interp = mem.snapshot_buffers().unwrap();
    mem.restore_buffers(&before).unwrap();
    let jitted = d.run_with(jit(), &rj);
    assert_eq!(
        interp.is_ok(),
        jitted.is_ok(),
        "{}: interpreter {:?}, JIT {:?}",
        kernel.name,
        interp.as_ref().err(),
        jitted.as_ref().err()
    );
    assert!(
        mem.snapshot_buffers().unwrap() == after_interp,
        "{}: the JIT's memory differs from the interpreter's",
        kernel.name
    );
    mem.restore_buffers(&before).unwrap();
    let rb = BatchedWaveEvents::default();
    let batched = d.run_with(jit(), &rb);
    assert_eq!(
        interp.is_ok(),
        batched.is_ok(),
        "{}: interpreter {:?}, JIT with batches {:?}",
        kernel.name,
        interp.as_ref().err(),
        batched.as_ref().err()
    );
    assert!(
        mem.snapshot_buffers().unwrap() == after_interp,
        "{}: the JIT's memory (batches) differs from the interpreter's",
        kernel.name
    );
    let ei = ri.0.into_inner().unwrap();
    let (accesses, in_ranges) = same_events(&ei, &rj.0.into_inner().unwrap(), &format!("{}, JIT", kernel.name));
    same_events(
        &ei,
        &rb.0 .0.into_inner().unwrap(),
        &format!("{}, JIT with batches", kernel.name),
    );
    // every bundled kernel reads its arguments at least
    assert!(interp.is_err() || accesses > 0, "{}: no accesses reported", kernel.name);
    // lane i of vadd and saxpy moves element i of each array: whole waves in one range
    assert!(
        interp.is_err() || !["vadd", "saxpy"].contains(&kernel.name.as_str()) || in_ranges > 0,
        "{}: no range",
        kernel.name
    );
    jitted
}

/// Asserts that `ej` holds the interpreter's events `ei` (PCs relative to each wave's first); the number of
/// accesses compared (and of those that came as ranges).
fn same_events(ei: &Events, ej: &Events, name: &str) -> (usize, usize) {
    assert_eq!(
        ei.keys().collect::<Vec<_>>(),
        ej.keys().collect::<Vec<_>>(),
        "{name}: the waves observed"
    );
    let (mut accesses, mut in_ranges) = (0, 0);
    for (k, a) in ei {
        let b = &ej[k];
        let n = a.len().min(b.len());
        for i in 0..n {
            let (x, y) = (&a[i], &b[i]);
            // device functions may sit below the kernel's entry: offsets are taken modulo 2^64
            assert_eq!(
                (x.0.wrapping_sub(a[0].0), x.1),
                (y.0.wrapping_sub(b[0].0), y.1),
                "{name} {k:?} instruction {i}: pc, exec"
            );
            let (cx, cy): (Vec<_>, Vec<_>) = (
                x.2.iter().map(comparable).collect(),
                y.2.iter().map(comparable).collect(),
            );
            assert!(
                cx == cy,
                "{name} {k:?} instruction {i} (pc +{:#x}): interpreter's accesses {:?}\nJIT's {:?}",
                x.0.wrapping_sub(a[0].0),
                &x.2[..x.2.len().min(4)],
                &y.2[..y.2.len().min(4)]
            );
            assert_eq!(
                x.3,
                y.3,
                "{name} {k:?} instruction {i} (pc +{:#x}): the range",
                x.0.wrapping_sub(a[0].0)
            );
            if let Some(r) = x.3 {
                assert_eq!(
                    r.iter().collect::<Vec<_>>(),
                    x.2,
                    "{name} {k:?} instruction {i}: a range reads as its lanes"
                );
                in_ranges += cx.len();
            }
            accesses += cx.len();
        }
        assert_eq!(a.len(), b.len(), "{name} {k:?}: instructions");
    }
    (accesses, in_ranges)
}

/// The engine under test: [`engine_run`]; with an observer (the cases' own observers), the JIT.
struct ObservedEngines;

impl kernel_cases::Engine for ObservedEngines {
    fn run(
        &self,
        d: &emu_core::engine::KernelDispatch<'_>,
    ) -> Result<emu_core::engine::RunStats, emu_core::engine::EngineError> {
        engine_run(d)
    }

    fn run_observed<O: Observer>(
        &self,
        d: &emu_core::engine::KernelDispatch<'_>,
        observer: &O,
    ) -> Result<emu_core::engine::RunStats, emu_core::engine::EngineError> {
        d.run_with(jit(), observer)
    }
}

kernel_cases::tests!(ObservedEngines);

//! Every bundled-kernel test case (the kernel-cases crate) in timing mode. Each dispatch runs
//! functionally on the JIT, then in the timing model on the JIT and on the interpreter, from the same device
//! memory: the timed runs must leave every buffer byte-identical to the functional one (timing only schedules),
//! fail the same way when it fails, and both engines must give the same modeled cycles and statistics; then
//! the case checks the results against its CPU reference.

use std::sync::OnceLock;

use emu_core::engine::{EngineError, Interpreter, KernelDispatch, RunStats};
use emu_core::observe::NoObserver;

fn jit() -> &'static jit::Jit {
    static JIT: OnceLock<jit::Jit> = OnceLock::new();
    JIT.get_or_init(|| jit::Jit::new().expect("a JIT for this host"))
}

/// Kernels whose instruction streams depend on how their waves race (compare-and-swap retry loops, spin-waits
/// on flags other workgroups set): the engines execute a wave's block at different granularity (a block on the
/// JIT, an instruction on the interpreter), so their functional effects reach memory at different modeled
/// times and the retries or polls, and so the cycles, may differ, as they do from a functional run's. Their
/// results may not.
const RACY: &[&str] = &["cas", "reverse_chain", "lds_handoff"];

/// Kernels that sync the grid (GWS barrier and semaphores), which the timing model refuses: their cases check
/// the functional run, after the refusal is checked here.
const GRID_SYNC: &[&str] = &["gws_sema"];

/// The engine under test: the timing model, checked against a functional run and across engines.
fn engine_run(d: &KernelDispatch<'_>) -> Result<RunStats, EngineError> {
    let (mem, kernel) = (d.mem, d.kernel);
    if GRID_SYNC.contains(&kernel.name.as_str()) {
        for timed in [
            d.run_timed(jit(), &NoObserver).err(),
            d.run_timed(&Interpreter, &NoObserver).err(),
        ] {
            let Some(EngineError::Timing { what, .. }) = timed else {
                panic!("{}: timing mode ran a grid-wide sync: {timed:?}", kernel.name)
            };
            assert!(
                what.starts_with("grid-wide sync (ds_gws_barrier, the ds_gws_sema_* semaphores) is not modeled"),
                "{}: {what}",
                kernel.name
            );
        }
        return d.run_with(jit(), &NoObserver);
    }
    let before = mem.snapshot_buffers().unwrap();
    let functional = d.run_with(jit(), &NoObserver);
    let after_functional = mem.snapshot_buffers().unwrap();
    mem.restore_buffers(&before).unwrap();
    let timed = d.run_timed(jit(), &NoObserver);
    let after_timed = mem.snapshot_buffers().unwrap();
    mem.restore_buffers(&before).unwrap();
    let interpreted = d.run_timed(&Interpreter, &NoObserver);
    let after_interpreted = mem.snapshot_buffers().unwrap();
    match (&functional, &timed, &interpreted) {
        (Ok(f), Ok((t, ts)), Ok((i, is))) => {
            assert!(
                after_timed == after_functional,
                "{}: timing mode changed the results",
                kernel.name
            );
            assert!(
                after_interpreted == after_functional,
                "{}: timing mode on the interpreter changed the results",
                kernel.name
            );
            assert_eq!((f.workgroups, f.waves), (t.workgroups, t.waves), "{}", kernel.name);
            assert!(
                t.cycles.is_some_and(|c| c > 0) && t.cycles == Some(ts.cycles),
                "{}: {t:?}",
                kernel.name
            );
            if !RACY.contains(&kernel.name.as_str()) {
                assert_eq!(
                    f.wave_instructions, t.wave_instructions,
                    "{}: the same instructions run",
                    kernel.name
                );
                assert!(
                    t.same_but_code_address(i) && ts == is,
                    "{}: the engines give different timings: {t:?} {ts:?}, {i:?} {is:?}",
                    kernel.name
                );
            }
            assert_eq!(f.slack, t.slack, "{}: slack accesses", kernel.name);
            Ok(t.clone())
        }
        (Err(f), Err(t), Err(i)) => {
            let kind = |e: &EngineError| std::mem::discriminant(e);
            assert_eq!(kind(f), kind(t), "{}: functional {f}, timed {t}", kernel.name);
            assert_eq!(kind(t), kind(i), "{}: JIT {t}, interpreter {i}", kernel.name);
            Err(timed.expect_err("checked"))
        }
        _ => panic!(
            "{}: functional {:?}, timed {:?}, timed on the interpreter {:?}",
            kernel.name,
            functional.as_ref().err(),
            timed.as_ref().err(),
            interpreted.as_ref().err()
        ),
    }
}

/// The engine under test: [`engine_run`]; with an observer, the JIT, functionally (in timing mode the model, not
/// an observer, decides when a wave switches, which the observer cases ask to control).
struct Timed;

impl kernel_cases::Engine for Timed {
    fn run(&self, d: &KernelDispatch<'_>) -> Result<RunStats, EngineError> {
        engine_run(d)
    }

    fn run_observed<O: emu_core::observe::Observer>(
        &self,
        d: &KernelDispatch<'_>,
        observer: &O,
    ) -> Result<RunStats, EngineError> {
        d.run_with(jit(), observer)
    }
}

kernel_cases::tests!(Timed);

//! `wavejit._wavejit`: the engine behind the `wavejit` Python package (`python/wavejit/`), bound directly with
//! PyO3. The package's Python layer gives it numpy arrays and the Triton driver; this module holds what runs on
//! the emulated GPU: a device's memory and engine ([`device`]), code objects and their kernels ([`module`]),
//! kernel arguments laid out from the metadata ([`args`]) and launches with their statistics, counters and
//! explorer page ([`launch`]).
//!
//! Nothing here panics across the boundary: every entry point that runs engine code catches a panic and raises
//! `WavejitError` ([`guarded`]); kernels run with the GIL released.

use std::panic::{catch_unwind, AssertUnwindSafe};

use pyo3::create_exception;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

mod args;
mod device;
mod launch;
mod module;

create_exception!(
    _wavejit,
    WavejitError,
    PyRuntimeError,
    "wavejit could not do what was asked: an unsupported feature, a kernel the engines refuse, an internal error."
);
create_exception!(
    _wavejit,
    GpuFault,
    WavejitError,
    "A kernel faulted on the emulated GPU. The message is wavejit's fault report (as `wavejit run` prints it); the \
     attributes kernel, workgroup, wave, pc, instruction, lane and address hold its parts (None where the fault has \
     no such part)."
);

/// Why a call into the engine failed, made into a Python exception once the GIL is held again.
#[derive(Debug)]
pub(crate) enum Failure {
    Engine(Box<emu_core::engine::EngineError>),
    Value(String),
    Memory(String),
    Other(String),
}

impl From<emu_core::engine::EngineError> for Failure {
    fn from(e: emu_core::engine::EngineError) -> Failure {
        Failure::Engine(Box::new(e))
    }
}

impl Failure {
    pub(crate) fn into_py(self, py: Python<'_>) -> PyErr {
        match self {
            Failure::Engine(e) => launch::engine_error(py, *e),
            Failure::Value(m) => pyo3::exceptions::PyValueError::new_err(m),
            Failure::Memory(m) => pyo3::exceptions::PyMemoryError::new_err(m),
            Failure::Other(m) => WavejitError::new_err(m),
        }
    }
}

/// The text of a panic's payload.
fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(no message)".into())
}

/// `f`, with a panic inside it turned into a [`Failure`] saying what was being done.
pub(crate) fn guarded<T>(what: &str, f: impl FnOnce() -> Result<T, Failure>) -> Result<T, Failure> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|p| {
        Err(Failure::Other(format!(
            "internal error in wavejit while {what}: {}",
            panic_text(p.as_ref())
        )))
    })
}

/// The device presets: `(id, name, gfx, compute_units, memory_bytes, lds_bytes)` for each, in wavejit's order.
#[pyfunction]
fn presets() -> Vec<(&'static str, &'static str, &'static str, u32, u64, u64)> {
    emu_core::PRESETS
        .iter()
        .map(|p| (p.id, p.name, p.gfx, p.compute_units, p.memory_bytes, p.lds_bytes))
        .collect()
}

/// The bundled test kernels' code objects (`vadd-gfx942.co`, ...): their file names.
#[pyfunction]
fn bundled_names() -> Vec<&'static str> {
    test_kernels::ALL.iter().map(|(n, _)| *n).collect()
}

/// The bytes of the bundled code object `name` (`vadd-gfx942.co`); `KeyError` naming the others if none is.
#[pyfunction]
fn bundled<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyBytes>> {
    match test_kernels::by_name(name) {
        Some(b) => Ok(PyBytes::new(py, b)),
        None => Err(pyo3::exceptions::PyKeyError::new_err(format!(
            "no bundled code object {name:?} (bundled: {})",
            bundled_names().join(", ")
        ))),
    }
}

/// Parses JSON text into Python objects (`json.loads`).
pub(crate) fn json_to_py<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyAny>> {
    py.import("json")?.call_method1("loads", (text,))
}

/// A dict from `(key, value)` pairs.
pub(crate) fn dict<'py, V: IntoPyObject<'py>>(
    py: Python<'py>,
    pairs: impl IntoIterator<Item = (&'py str, V)>,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (k, v) in pairs {
        d.set_item(k, v)?;
    }
    Ok(d)
}

#[pymodule]
fn _wavejit(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("WavejitError", py.get_type::<WavejitError>())?;
    m.add("GpuFault", py.get_type::<GpuFault>())?;
    m.add_function(wrap_pyfunction!(presets, m)?)?;
    m.add_function(wrap_pyfunction!(bundled, m)?)?;
    m.add_function(wrap_pyfunction!(bundled_names, m)?)?;
    m.add_class::<device::Device>()?;
    m.add_class::<device::Buffer>()?;
    m.add_class::<module::Module>()?;
    m.add_class::<module::Kernel>()?;
    m.add_class::<launch::Launch>()?;
    Ok(())
}

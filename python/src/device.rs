//! An emulated GPU of the Python package: its preset, its device memory, the engine that runs its kernels and
//! what its last launch did; and the device buffers that hold the package's arrays.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use emu_core::memory::{AllocError, AllocKind, DeviceMemory};
use emu_core::DevicePreset;
use isa_amdgpu::codeobj::{self, SharedBytes};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyDict};

use crate::launch::LaunchData;
use crate::module::Module;
use crate::{dict, guarded, Failure};

/// How a device runs its kernels.
#[derive(Debug, Clone)]
pub(crate) struct Options {
    pub timing: bool,
    pub counters: bool,
    pub memcheck: bool,
    pub threads: Option<usize>,
    pub max_wave_instructions: u64,
    pub watch: emu_core::watch::Watch,
    /// Instructions a recorded launch's explorer page holds.
    pub trace_max: u64,
}

/// One emulated GPU, shared by the Python objects made from it (its buffers and modules keep it alive).
pub(crate) struct Core {
    /// Tells devices apart (Triton keys its caches of compiled kernels by it).
    pub serial: u64,
    pub preset: &'static DevicePreset,
    pub mem: DeviceMemory,
    /// The JIT, or `None` when the interpreter runs kernels.
    pub jit: Option<jit::Jit>,
    pub options: Options,
    /// Launches run one at a time, as on one in-order queue.
    pub queue: Mutex<()>,
    /// The modeled clock: shader cycles of every timed launch so far, at the shader clock they ran at.
    pub modeled: Mutex<ModeledClock>,
    pub last: Mutex<Option<Arc<LaunchData>>>,
}

/// The modeled time of a device's timed launches, kept as a whole number of shader cycles.
#[derive(Debug, Clone, Copy, Default)]
pub struct ModeledClock {
    pub cycles: u64,
    /// The shader clock of the timed launches (0 before the first).
    pub shader_mhz: u32,
}

impl ModeledClock {
    pub fn ns(&self) -> f64 {
        if self.shader_mhz == 0 {
            return 0.0;
        }
        self.cycles as f64 * 1000.0 / self.shader_mhz as f64
    }
}

impl Core {
    pub fn modeled(&self) -> ModeledClock {
        *self.modeled.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn engine(&self) -> &'static str {
        if self.jit.is_some() {
            "jit"
        } else {
            "interp"
        }
    }
}

fn alloc_failure(e: AllocError) -> Failure {
    match e {
        AllocError::OutOfMemory { .. } => Failure::Memory(e.to_string()),
        e => Failure::Other(e.to_string()),
    }
}

/// An emulated GPU: a device preset with its memory and an engine.
#[pyclass(module = "wavejit._wavejit", frozen)]
pub struct Device {
    pub(crate) core: Arc<Core>,
}

#[pymethods]
impl Device {
    /// `name`: a preset (`wavejit.devices()`); `engine`: `"jit"` or `"interp"`; `timing`: run launches in the
    /// timing model; `threads`: host threads running workgroups (`None`: all cores); `counters`: collect the
    /// hardware-named counters of each launch; `memcheck`: every byte outside an allocation faults;
    /// `max_instructions`: per-wave limit (`None`: `WAVEJIT_MAX_INSTRUCTIONS` or ten billion, 0: none);
    /// `timeout`: seconds after which a launch stops (`None`: `WAVEJIT_TIMEOUT` or never); `trace_max`:
    /// instructions a recorded launch keeps for the explorer.
    #[new]
    #[pyo3(signature = (name="mi300x", engine="jit", timing=false, threads=None, counters=true, memcheck=false,
                        max_instructions=None, timeout=None, trace_max=50_000))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        name: &str,
        engine: &str,
        timing: bool,
        threads: Option<usize>,
        counters: bool,
        memcheck: bool,
        max_instructions: Option<u64>,
        timeout: Option<f64>,
        trace_max: u64,
    ) -> PyResult<Device> {
        let preset = DevicePreset::by_name(name).map_err(|_| {
            pyo3::exceptions::PyValueError::new_err(format!(
                "no device preset {name:?} (presets: {})",
                emu_core::PRESETS.iter().map(|p| p.id).collect::<Vec<_>>().join(", ")
            ))
        })?;
        let on_jit = match engine {
            "jit" => true,
            "interp" => false,
            other => {
                return Err(pyo3::exceptions::PyValueError::new_err(format!(
                    "engine {other:?}: expected \"jit\" (compiled with Cranelift) or \"interp\" (the interpreter)"
                )))
            }
        };
        if threads == Some(0) {
            return Err(pyo3::exceptions::PyValueError::new_err(
                "threads=0: expected a number of host threads, or None for all cores",
            ));
        }
        if let Some(t) = timeout {
            if !(t.is_finite() && t > 0.0) {
                return Err(pyo3::exceptions::PyValueError::new_err(format!(
                    "timeout={t}: expected a positive number of seconds, or None"
                )));
            }
        }
        // the limits the environment sets for every route onto emulated GPUs, unless given here
        let settings = gpu::Settings::from_env().map_err(pyo3::exceptions::PyValueError::new_err)?;
        let options = Options {
            timing,
            counters,
            memcheck,
            threads,
            max_wave_instructions: max_instructions
                .map(emu_core::engine::instruction_limit)
                .unwrap_or(settings.max_wave_instructions),
            watch: emu_core::watch::Watch {
                timeout: timeout.map(Duration::from_secs_f64).or(settings.watch.timeout),
                ..settings.watch
            },
            trace_max,
        };
        let core = py
            .allow_threads(|| {
                guarded("making the device", || {
                    let mem = DeviceMemory::new(preset.memory_bytes).map_err(alloc_failure)?;
                    mem.set_memcheck(memcheck);
                    let jit = on_jit
                        .then(|| jit::Jit::with_options(jit::JitOptions::from_env()))
                        .transpose()
                        .map_err(|e| Failure::Other(format!("the JIT could not start: {e}")))?;
                    static SERIAL: AtomicU64 = AtomicU64::new(1);
                    Ok(Core {
                        serial: SERIAL.fetch_add(1, Ordering::Relaxed),
                        preset,
                        mem,
                        jit,
                        options,
                        queue: Mutex::new(()),
                        modeled: Mutex::new(ModeledClock::default()),
                        last: Mutex::new(None),
                    })
                })
            })
            .map_err(|f| f.into_py(py))?;
        Ok(Device { core: Arc::new(core) })
    }

    /// A number no other device of this process has.
    #[getter]
    fn serial(&self) -> u64 {
        self.core.serial
    }

    /// The preset's id (`mi300x`).
    #[getter]
    fn id(&self) -> &'static str {
        self.core.preset.id
    }

    /// The marketing name (`AMD Instinct MI300X`).
    #[getter]
    fn name(&self) -> &'static str {
        self.core.preset.name
    }

    /// The processor (`gfx942`).
    #[getter]
    fn gfx(&self) -> &'static str {
        self.core.preset.gfx
    }

    #[getter]
    fn engine(&self) -> &'static str {
        self.core.engine()
    }

    #[getter]
    fn timing(&self) -> bool {
        self.core.options.timing
    }

    #[getter]
    fn counters(&self) -> bool {
        self.core.options.counters
    }

    #[getter]
    fn memcheck(&self) -> bool {
        self.core.options.memcheck
    }

    #[getter]
    fn threads(&self) -> Option<usize> {
        self.core.options.threads
    }

    /// The preset's figures: compute units, wave size, LDS and memory bytes, clocks, caches.
    #[getter]
    fn properties<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let p = self.core.preset;
        dict(
            py,
            [
                ("compute_units", p.compute_units as u64),
                ("simds_per_cu", p.simds_per_cu as u64),
                ("wave_size", p.wave_size as u64),
                ("max_waves_per_simd", p.max_waves_per_simd as u64),
                ("vgprs_per_lane", p.vgprs_per_lane as u64),
                ("sgprs_per_wave", p.sgprs_per_wave as u64),
                ("lds_bytes", p.lds_bytes),
                ("max_workgroup_size", p.max_workgroup_size as u64),
                ("engine_clock_mhz", p.engine_clock_mhz as u64),
                ("memory_bytes", p.memory_bytes),
                ("memory_bandwidth_gbs", p.memory_bandwidth_gbs as u64),
                ("l1_vector_bytes", p.l1_vector_bytes),
                ("l2_bytes", p.l2_bytes),
                ("mall_bytes", p.mall_bytes),
            ],
        )
    }

    /// Bytes of device memory allocated now.
    #[getter]
    fn used_bytes(&self) -> u64 {
        self.core.mem.used()
    }

    /// Modeled nanoseconds of all timed launches so far (0 without timing).
    #[getter]
    fn modeled_ns(&self) -> f64 {
        self.core.modeled().ns()
    }

    /// Modeled shader cycles of all timed launches so far (0 without timing): an exact count, so the
    /// difference of two readings is the same for the same launches however many came before.
    #[getter]
    fn modeled_cycles(&self) -> u64 {
        self.core.modeled().cycles
    }

    /// Nanoseconds per modeled shader cycle (`None` before the first timed launch).
    #[getter]
    fn modeled_ns_per_cycle(&self) -> Option<f64> {
        let m = self.core.modeled();
        (m.shader_mhz != 0).then(|| 1000.0 / m.shader_mhz as f64)
    }

    /// `nbytes` of device memory (zeroed), labelled `label` in fault reports.
    #[pyo3(signature = (nbytes, label="array"))]
    fn allocate(&self, py: Python<'_>, nbytes: u64, label: &str) -> PyResult<Buffer> {
        let core = &self.core;
        let address = py
            .allow_threads(|| {
                guarded("allocating device memory", || {
                    // a zero-byte array still has an address of its own
                    core.mem
                        .allocate(nbytes.max(1), AllocKind::Buffer, label)
                        .map_err(alloc_failure)
                })
            })
            .map_err(|f| f.into_py(py))?;
        Ok(Buffer {
            core: core.clone(),
            address,
            nbytes,
        })
    }

    /// The code objects of `data` (a code object, a HIP executable or library with a `.hip_fatbin`, or an
    /// offload bundle) for this device's target, as one module; `name` names them in messages.
    fn load_bytes(&self, py: Python<'_>, data: &[u8], name: &str) -> PyResult<Module> {
        let bytes = SharedBytes::copy_from_slice(data);
        self.load(py, bytes, name)
    }

    /// [`Self::load_bytes`] of the file at `path`.
    fn load_file(&self, py: Python<'_>, path: std::path::PathBuf) -> PyResult<Module> {
        let bytes = SharedBytes::map_file(&path).map_err(|e| {
            let msg = format!("cannot read {}: {e}", path.display());
            if path.exists() {
                pyo3::exceptions::PyOSError::new_err(msg)
            } else {
                pyo3::exceptions::PyFileNotFoundError::new_err(msg)
            }
        })?;
        self.load(py, bytes, &path.display().to_string())
    }

    /// What the last launch did (`None` before the first).
    #[getter]
    fn last(&self) -> Option<crate::launch::Launch> {
        let last = self.core.last.lock().unwrap_or_else(|e| e.into_inner());
        last.clone().map(|data| crate::launch::Launch { data })
    }

    fn __repr__(&self) -> String {
        let o = &self.core.options;
        format!(
            "<wavejit.Device {} ({}, {}) engine={}{}{}>",
            self.core.preset.id,
            self.core.preset.name,
            self.core.preset.gfx,
            self.core.engine(),
            if o.timing { " timing" } else { "" },
            if o.memcheck { " memcheck" } else { "" }
        )
    }
}

impl Device {
    fn load(&self, py: Python<'_>, bytes: SharedBytes, name: &str) -> PyResult<Module> {
        let preset = self.core.preset;
        let objects = py
            .allow_threads(|| {
                guarded("reading the code object", || {
                    codeobj::open_bytes(&bytes, Path::new(name), None).map_err(|e| Failure::Value(e.to_string()))
                })
            })
            .map_err(|f| f.into_py(py))?;
        let found: Vec<String> = objects.iter().map(|l| l.code_object.target.canonical()).collect();
        let co = objects
            .into_iter()
            .map(|l| l.code_object)
            .find(|co| isa_amdgpu::Target::from_name(&co.target.processor) == Some(preset.target))
            .ok_or_else(|| {
                pyo3::exceptions::PyValueError::new_err(if found.is_empty() {
                    format!("{name}: no AMDGPU code object in it")
                } else {
                    format!(
                        "{name}: no code object for the {} ({}) in it; it holds {}",
                        preset.id,
                        preset.gfx,
                        found.join(", ")
                    )
                })
            })?;
        Ok(Module {
            core: self.core.clone(),
            co: Arc::new(co),
            name: name.to_string(),
        })
    }
}

/// Bytes of device memory; freed when the last reference to it goes.
#[pyclass(module = "wavejit._wavejit", frozen)]
pub struct Buffer {
    core: Arc<Core>,
    address: u64,
    nbytes: u64,
}

impl Drop for Buffer {
    fn drop(&mut self) {
        let _ = self.core.mem.free(self.address);
    }
}

impl Buffer {
    fn range(&self, offset: u64, len: u64) -> PyResult<()> {
        if offset.checked_add(len).is_none_or(|end| end > self.nbytes) {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "{len} bytes at offset {offset} do not fit the {}-byte buffer",
                self.nbytes
            )));
        }
        Ok(())
    }
}

#[pymethods]
impl Buffer {
    /// The device address.
    #[getter]
    fn address(&self) -> u64 {
        self.address
    }

    #[getter]
    fn nbytes(&self) -> u64 {
        self.nbytes
    }

    /// Copies `data` into the buffer at `offset`.
    #[pyo3(signature = (data, offset=0))]
    fn write(&self, py: Python<'_>, data: &[u8], offset: u64) -> PyResult<()> {
        self.range(offset, data.len() as u64)?;
        let (mem, at) = (&self.core.mem, self.address + offset);
        py.allow_threads(|| {
            guarded("writing device memory", || {
                mem.write(at, data).map_err(|e| Failure::Other(e.to_string()))
            })
        })
        .map_err(|f| f.into_py(py))
    }

    /// A copy of the buffer's bytes.
    fn read<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyByteArray>> {
        let (mem, at) = (&self.core.mem, self.address);
        PyByteArray::new_with(py, self.nbytes as usize, |buf| {
            mem.read(at, buf)
                .map_err(|e| crate::WavejitError::new_err(e.to_string()))
        })
    }

    /// Sets every byte to 0.
    fn zero(&self, py: Python<'_>) -> PyResult<()> {
        let (mem, at, n) = (&self.core.mem, self.address, self.nbytes as usize);
        py.allow_threads(|| {
            guarded("clearing device memory", || {
                mem.write(at, &vec![0u8; n]).map_err(|e| Failure::Other(e.to_string()))
            })
        })
        .map_err(|f| f.into_py(py))
    }

    /// Copies `other`'s bytes (a buffer of the same size on the same device) into this one.
    fn copy_from(&self, py: Python<'_>, other: &Buffer) -> PyResult<()> {
        if !Arc::ptr_eq(&self.core, &other.core) {
            return Err(pyo3::exceptions::PyValueError::new_err(
                "copying between arrays of different devices: copy through numpy (a.numpy())",
            ));
        }
        if other.nbytes != self.nbytes {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "copying a {}-byte array into a {}-byte one",
                other.nbytes, self.nbytes
            )));
        }
        let (mem, from, to, n) = (&self.core.mem, other.address, self.address, self.nbytes as usize);
        py.allow_threads(|| {
            guarded("copying device memory", || {
                let mut tmp = vec![0u8; n];
                mem.read(from, &mut tmp)
                    .and_then(|_| mem.write(to, &tmp))
                    .map_err(|e| Failure::Other(e.to_string()))
            })
        })
        .map_err(|f| f.into_py(py))
    }
}

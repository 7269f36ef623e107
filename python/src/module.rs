//! Code objects loaded for a device ([`Module`]) and their kernels ([`Kernel`]): names, metadata, the
//! disassembly, and launches.

use std::sync::Arc;

use isa_amdgpu::codeobj::{names, CodeObject};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};

use crate::device::Core;
use crate::dict;
use crate::launch::{launch, Launch, Request};

/// The code object of a device's target from what `Device.load` was given.
#[pyclass(module = "wavejit._wavejit", frozen)]
pub struct Module {
    pub(crate) core: Arc<Core>,
    pub(crate) co: Arc<CodeObject>,
    pub(crate) name: String,
}

#[pymethods]
impl Module {
    /// What it was loaded from.
    #[getter]
    fn name(&self) -> &str {
        &self.name
    }

    /// Its target id (`gfx942:sramecc+:xnack-`).
    #[getter]
    fn target(&self) -> String {
        self.co.target.canonical()
    }

    /// Its kernels' symbols, in the code object's order.
    #[getter]
    fn kernels(&self) -> Vec<String> {
        self.co.kernels.iter().map(|k| k.name.clone()).collect()
    }

    /// The kernel `name` names: its symbol, demangled name or plain function name.
    fn kernel(&self, name: &str) -> PyResult<Kernel> {
        let index = names::pick_kernel(&self.co, name)
            .map_err(|e| pyo3::exceptions::PyKeyError::new_err(format!("{}: {e}", self.name)))?;
        Ok(Kernel {
            core: self.core.clone(),
            co: self.co.clone(),
            index,
        })
    }

    fn __getitem__(&self, name: &str) -> PyResult<Kernel> {
        self.kernel(name)
    }

    fn __contains__(&self, name: &str) -> bool {
        names::pick_kernel(&self.co, name).is_ok()
    }

    fn __len__(&self) -> usize {
        self.co.kernels.len()
    }

    fn __repr__(&self) -> String {
        format!(
            "<wavejit.Module {} ({}): {}>",
            self.name,
            self.co.target.canonical(),
            self.co
                .kernels
                .iter()
                .map(|k| names::demangle(&k.name))
                .collect::<Vec<_>>()
                .join(", ")
        )
    }
}

/// A kernel of a loaded module.
#[pyclass(module = "wavejit._wavejit", frozen)]
pub struct Kernel {
    pub(crate) core: Arc<Core>,
    pub(crate) co: Arc<CodeObject>,
    pub(crate) index: usize,
}

impl Kernel {
    pub(crate) fn kernel(&self) -> &isa_amdgpu::codeobj::Kernel {
        &self.co.kernels[self.index]
    }

    pub(crate) fn metadata(&self) -> PyResult<&isa_amdgpu::codeobj::KernelMetadata> {
        self.co.kernel_metadata(self.kernel()).ok_or_else(|| {
            pyo3::exceptions::PyValueError::new_err(format!(
                "kernel {}: no metadata for it in the code object, so its arguments are unknown",
                self.kernel().name
            ))
        })
    }
}

#[pymethods]
impl Kernel {
    /// The symbol (the mangled name of a C++ kernel).
    #[getter]
    fn name(&self) -> &str {
        &self.kernel().name
    }

    /// The demangled name (`vadd(float*, float*, float*, int)`); the symbol when it is not mangled.
    #[getter]
    fn demangled(&self) -> String {
        names::demangle(&self.kernel().name)
    }

    /// The kernel's `amdhsa.kernels` entry of the metadata, as JSON values.
    #[getter]
    fn metadata_json(&self) -> PyResult<String> {
        serde_json::to_string(self.metadata()?).map_err(|e| crate::WavejitError::new_err(e.to_string()))
    }

    /// The arguments the metadata lists, hidden ones too: `name`, `type_name`, `kind` (`global_buffer`,
    /// `by_value`, `hidden_block_count_x`, ...), `offset`, `size`, `address_space`, `hidden`.
    #[getter]
    fn args<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        for (i, a) in self.metadata()?.args.iter().enumerate() {
            let d = PyDict::new(py);
            d.set_item("name", a.name.clone().unwrap_or_else(|| format!("#{i}")))?;
            d.set_item("type_name", a.type_name.clone())?;
            d.set_item("kind", &a.value_kind)?;
            d.set_item("offset", a.offset)?;
            d.set_item("size", a.size)?;
            d.set_item("address_space", a.address_space.clone())?;
            d.set_item("hidden", a.value_kind.starts_with("hidden_"))?;
            list.append(d)?;
        }
        Ok(list)
    }

    /// The kernel descriptor's figures: static LDS and private bytes, registers, kernarg bytes.
    #[getter]
    fn descriptor<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let kd = &self.kernel().descriptor;
        let agprs = kd.agpr_alloc_count().unwrap_or(0);
        dict(
            py,
            [
                ("group_segment_fixed_size", kd.group_segment_fixed_size as u64),
                ("private_segment_fixed_size", kd.private_segment_fixed_size as u64),
                ("kernarg_size", kd.kernarg_size as u64),
                ("vgprs", (kd.vgpr_alloc_count() - agprs) as u64),
                ("agprs", agprs as u64),
                ("sgprs", kd.sgpr_alloc_count().unwrap_or(0) as u64),
            ],
        )
    }

    /// The kernel's code as `wavejit disasm` (and llvm-objdump) lists it.
    fn disasm(&self) -> PyResult<String> {
        let k = self.kernel();
        let f = self.co.kernel_function(k).ok_or_else(|| {
            crate::WavejitError::new_err(format!("kernel {}: no function symbol at its entry", k.name))
        })?;
        let target = isa_amdgpu::Target::from_name(&self.co.target.processor).ok_or_else(|| {
            crate::WavejitError::new_err(format!("no instruction table for {}", self.co.target.processor))
        })?;
        let mut text = format!("{}:\n", f.name);
        for line in isa_amdgpu::listing::function(&self.co, f, target) {
            text.push_str(&line);
            text.push('\n');
        }
        Ok(text)
    }

    /// Runs the kernel over `grid` work-items (not workgroups: as `wavejit run --grid` and HSA count them) in
    /// workgroups of `block`, with `lds` bytes of LDS per workgroup beyond its static LDS, and `args` in the
    /// kernel's argument order (device arrays or addresses for buffers, Python or numpy numbers for values;
    /// hidden arguments are filled in). `block` may be left out when the kernel requires a workgroup size.
    /// `trace`: also record the launch for the wavefront explorer (`Launch.trace_html()`).
    #[pyo3(signature = (*args, grid, block=None, lds=0, trace=false))]
    fn __call__(
        &self,
        py: Python<'_>,
        args: &Bound<'_, PyTuple>,
        grid: &Bound<'_, PyAny>,
        block: Option<&Bound<'_, PyAny>>,
        lds: u32,
        trace: bool,
    ) -> PyResult<Launch> {
        self.launch(py, args, grid, block, lds, trace)
    }

    /// The same as calling the kernel.
    #[pyo3(signature = (*args, grid, block=None, lds=0, trace=false))]
    fn launch(
        &self,
        py: Python<'_>,
        args: &Bound<'_, PyTuple>,
        grid: &Bound<'_, PyAny>,
        block: Option<&Bound<'_, PyAny>>,
        lds: u32,
        trace: bool,
    ) -> PyResult<Launch> {
        let meta = self.metadata()?;
        let values = crate::args::convert(meta, args)?;
        let grid = crate::args::dims("grid", grid)?;
        let block = match block {
            Some(b) => crate::args::dims("block", b)?,
            None => match meta.reqd_workgroup_size[..] {
                [x, y, z] => [x as u32, y as u32, z as u32],
                _ => {
                    return Err(pyo3::exceptions::PyTypeError::new_err(format!(
                        "kernel {}: block= (the workgroup size) is required",
                        self.kernel().name
                    )))
                }
            },
        };
        launch(
            py,
            self,
            Request {
                grid,
                block,
                lds,
                args: values,
                trace,
            },
        )
    }

    fn __repr__(&self) -> String {
        format!(
            "<wavejit.Kernel {} on {}>",
            names::demangle(&self.kernel().name),
            self.core.preset.id
        )
    }
}

//! Python values as kernel arguments: each explicit argument the metadata lists takes a device array (or an
//! address) when it is a buffer, and a number of the slot's size when it is passed by value; the kernarg segment
//! itself is laid out by `emu_core::kernarg` from the metadata, hidden arguments included.

use emu_core::kernarg::ArgValue;
use isa_amdgpu::codeobj::{KernelArg, KernelMetadata};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt, PyTuple};

/// How a by-value argument's C type says to read a Python number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Flavour {
    Float,
    /// bfloat16 (`__bf16`): a float whose 2-byte slot holds bfloat16, not IEEE half.
    BFloat16,
    Int,
    /// No type name (Triton's kernels, assembly): by the value's own type.
    Unknown,
}

fn flavour(type_name: Option<&str>) -> Flavour {
    let Some(t) = type_name else {
        return Flavour::Unknown;
    };
    let t = t.trim().trim_start_matches("const ").trim();
    match t {
        "float" | "double" | "half" | "_Float16" | "__fp16" | "__half" => Flavour::Float,
        "__bf16" | "bfloat16" | "__hip_bfloat16" | "hip_bfloat16" => Flavour::BFloat16,
        "int" | "uint" | "unsigned int" | "long" | "ulong" | "unsigned long" | "long long" | "unsigned long long"
        | "short" | "ushort" | "unsigned short" | "char" | "uchar" | "unsigned char" | "signed char" | "bool"
        | "_Bool" | "size_t" | "int32_t" | "uint32_t" | "int64_t" | "uint64_t" | "int16_t" | "uint16_t" | "int8_t"
        | "uint8_t" => Flavour::Int,
        _ => Flavour::Unknown,
    }
}

/// Where an argument is, for messages: `argument 3 (n: uint) of vadd`.
fn place(meta: &KernelMetadata, index: usize, a: &KernelArg) -> String {
    let name = a.name.clone().unwrap_or_else(|| format!("#{index}"));
    match &a.type_name {
        Some(t) => format!("argument {index} ({name}: {t}) of {}", meta.name),
        None => format!("argument {index} ({name}) of {}", meta.name),
    }
}

fn type_name(v: &Bound<'_, PyAny>) -> String {
    v.get_type()
        .qualname()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".into())
}

/// The values of `given` for `meta`'s explicit arguments.
pub fn convert(meta: &KernelMetadata, given: &Bound<'_, PyTuple>) -> PyResult<Vec<ArgValue>> {
    let explicit: Vec<&KernelArg> = meta
        .args
        .iter()
        .filter(|a| !a.value_kind.starts_with("hidden_"))
        .collect();
    if explicit.len() != given.len() {
        let listed: Vec<String> = explicit
            .iter()
            .enumerate()
            .map(|(i, a)| a.name.clone().unwrap_or_else(|| format!("#{i}")))
            .collect();
        return Err(PyTypeError::new_err(format!(
            "{} takes {} arguments ({}), {} given",
            meta.name,
            explicit.len(),
            listed.join(", "),
            given.len()
        )));
    }
    explicit
        .iter()
        .zip(given.iter())
        .enumerate()
        .map(|(i, (a, v))| one(meta, i, a, &v))
        .collect()
}

fn one(meta: &KernelMetadata, index: usize, a: &KernelArg, v: &Bound<'_, PyAny>) -> PyResult<ArgValue> {
    let at = || place(meta, index, a);
    match a.value_kind.as_str() {
        "global_buffer" => pointer(v).map_err(|why| PyTypeError::new_err(format!("{} is a buffer: {why}", at()))),
        "by_value" => by_value(v, a.size, flavour(a.type_name.as_deref())).map_err(|e| {
            let msg = e.value(v.py()).to_string();
            if e.is_instance_of::<PyValueError>(v.py()) {
                PyValueError::new_err(format!("{}: {msg}", at()))
            } else {
                PyTypeError::new_err(format!("{}: {msg}", at()))
            }
        }),
        other => Err(PyTypeError::new_err(format!(
            "{}: arguments of kind {other} cannot be given from Python",
            at()
        ))),
    }
}

/// A buffer argument: an object with `data_ptr()` (a device array), an address, or `None` (null).
fn pointer(v: &Bound<'_, PyAny>) -> Result<ArgValue, String> {
    if v.is_none() {
        return Ok(ArgValue::Pointer(0));
    }
    if v.is_instance_of::<PyInt>() && !v.is_instance_of::<PyBool>() {
        return v
            .extract::<u64>()
            .map(ArgValue::Pointer)
            .map_err(|_| format!("the address {v} is not a 64-bit address"));
    }
    if v.hasattr("data_ptr").unwrap_or(false) {
        let p = v
            .call_method0("data_ptr")
            .map_err(|e| format!("its data_ptr() failed: {e}"))?;
        return p
            .extract::<u64>()
            .map(ArgValue::Pointer)
            .map_err(|_| format!("its data_ptr() gave {}, not a 64-bit address", type_name(&p)));
    }
    if v.hasattr("__array_interface__").unwrap_or(false) {
        return Err(format!(
            "expected a device array, got a host {} (copy it to the device with dev.array(...))",
            type_name(v)
        ));
    }
    Err(format!(
        "expected a device array (anything with data_ptr()), an int address or None, got {}",
        type_name(v)
    ))
}

/// A by-value argument in a `size`-byte slot.
fn by_value(v: &Bound<'_, PyAny>, size: u64, flavour: Flavour) -> PyResult<ArgValue> {
    let ty = || type_name(v);
    // numpy scalars: their own bytes, which must fill the slot
    if !v.is_instance_of::<PyInt>() && !v.is_instance_of::<PyFloat>() && v.hasattr("dtype")? && v.hasattr("tobytes")? {
        let kind: String = v.getattr("dtype")?.getattr("kind")?.extract()?;
        if v.getattr("ndim")?.extract::<usize>()? != 0 {
            return Err(PyTypeError::new_err(format!(
                "a {size}-byte value, got an array ({}); give device arrays for buffers",
                ty()
            )));
        }
        match (kind.as_str(), flavour) {
            ("f", Flavour::Int) => {
                return Err(PyTypeError::new_err(format!("an integer, got {}", ty())));
            }
            ("f", Flavour::BFloat16) => {
                return Err(PyTypeError::new_err(format!(
                    "a bfloat16 (a Python float, or its bits as numpy.uint16), got {}",
                    ty()
                )));
            }
            ("b" | "i" | "u" | "f", _) => {}
            _ => return Err(PyTypeError::new_err(format!("a number, got {}", ty()))),
        }
        let bytes: Vec<u8> = v.call_method0("tobytes")?.extract()?;
        if bytes.len() as u64 != size {
            return Err(PyTypeError::new_err(format!(
                "a {size}-byte value, got {} ({} bytes)",
                ty(),
                bytes.len()
            )));
        }
        return Ok(raw(&bytes));
    }
    let float_slot = matches!(flavour, Flavour::Float | Flavour::BFloat16);
    if v.is_instance_of::<PyFloat>() || (float_slot && v.is_instance_of::<PyInt>()) {
        if flavour == Flavour::Int {
            return Err(PyTypeError::new_err(format!("an integer, got {}", ty())));
        }
        let x: f64 = v.extract()?;
        return match size {
            2 if flavour == Flavour::BFloat16 => Ok(ArgValue::U16(half::bf16::from_f64(x).to_bits())),
            2 => Ok(ArgValue::U16(half::f16::from_f64(x).to_bits())),
            4 => Ok(ArgValue::F32(x as f32)),
            8 => Ok(ArgValue::F64(x)),
            _ => Err(PyTypeError::new_err(format!(
                "a {size}-byte slot takes no float (2, 4 or 8 bytes do)"
            ))),
        };
    }
    if v.is_instance_of::<PyInt>() {
        let x: i128 = v
            .extract()
            .map_err(|_| PyValueError::new_err(format!("{v} does not fit a {size}-byte slot")))?;
        let bits = size * 8;
        if !matches!(size, 1 | 2 | 4 | 8) {
            return Err(PyTypeError::new_err(format!(
                "a {size}-byte slot takes no integer (1, 2, 4 or 8 bytes do)"
            )));
        }
        let (lo, hi) = (-(1i128 << (bits - 1)), (1i128 << bits) - 1);
        if x < lo || x > hi {
            return Err(PyValueError::new_err(format!(
                "{x} does not fit a {size}-byte slot ({lo} to {hi})"
            )));
        }
        return Ok(raw(&(x as u64).to_le_bytes()[..size as usize]));
    }
    Err(PyTypeError::new_err(format!("a number, got {}", ty())))
}

/// The value whose little-endian bytes are `b` (1, 2, 4 or 8 of them).
fn raw(b: &[u8]) -> ArgValue {
    match *b {
        [x] => ArgValue::U8(x),
        [x, y] => ArgValue::U16(u16::from_le_bytes([x, y])),
        [a, b, c, d] => ArgValue::U32(u32::from_le_bytes([a, b, c, d])),
        _ => {
            let mut w = [0u8; 8];
            w[..b.len().min(8)].copy_from_slice(&b[..b.len().min(8)]);
            ArgValue::U64(u64::from_le_bytes(w))
        }
    }
}

/// A grid or workgroup size: an int or a sequence of one to three positive ints.
pub fn dims(what: &str, v: &Bound<'_, PyAny>) -> PyResult<[u32; 3]> {
    let parts: Vec<Bound<'_, PyAny>> = if v.is_instance_of::<PyInt>() {
        vec![v.clone()]
    } else if v.is_instance_of::<pyo3::types::PyString>() {
        return Err(PyTypeError::new_err(format!(
            "{what}: expected an int or a tuple of one to three ints, got str"
        )));
    } else {
        v.try_iter()
            .map_err(|_| {
                PyTypeError::new_err(format!(
                    "{what}: expected an int or a tuple of one to three ints, got {}",
                    type_name(v)
                ))
            })?
            .collect::<PyResult<_>>()?
    };
    if parts.is_empty() || parts.len() > 3 {
        return Err(PyValueError::new_err(format!(
            "{what}: expected one to three sizes, got {}",
            parts.len()
        )));
    }
    let mut d = [1u32; 3];
    for (i, p) in parts.iter().enumerate() {
        d[i] = match p.extract::<u32>() {
            Ok(n) if n > 0 => n,
            _ => {
                return Err(PyValueError::new_err(format!(
                    "{what}: {p} is not a positive 32-bit integer"
                )))
            }
        };
    }
    Ok(d)
}

//! The pre-1.1 code object API: a code object is its bytes (an AMDGPU ELF), its symbols named as its executable
//! symbols are; loading one into an executable (`hsa_executable_load_code_object`) is loading those bytes.
//! Also the HSAIL finalizer extension (`hsa_ext_program_*`), which made such code objects from HSAIL and is not
//! provided.

use std::ffi::{c_char, c_void, CStr};
use std::sync::Arc;

use super::executable::symbol_attribute;
use super::{iterate, nonnull, out, slice, with};
use crate::ffi::{self, Status};
use crate::info::{self, put};
use crate::loader;
use crate::runtime::{Runtime, ISA_TAG};

/// `hsa_code_object_serialize`'s allocator: size, the caller's data, where to put the address.
type AllocCallback = extern "C" fn(usize, u64, *mut *mut c_void) -> Status;
/// `hsa_code_object_iterate_symbols`'s callback: code object, symbol, the caller's data.
type CodeSymbolCallback = extern "C" fn(u64, u64, *mut c_void) -> Status;

export! {
    fn hsa_code_object_deserialize(data: *mut c_void, size: usize, _options: *const c_char, handle: *mut u64) -> Status = ffi::ERROR; {
        with(|r| {
            nonnull(handle)?;
            // SAFETY: `data` points to `size` elements that stay valid for the call, as the API requires.
            let bytes = unsafe { slice(data.cast::<u8>(), size) }?;
            let co = isa_amdgpu::codeobj::CodeObject::parse(bytes, "code object").map_err(|e| {
                eprintln!("wavejit: hsa_code_object_deserialize: {e}");
                ffi::ERROR_INVALID_CODE_OBJECT
            })?;
            let id = crate::runtime::CODE_OBJECT_TAG + r.next_id();
            let symbols: Vec<(u64, loader::CodeSymbol)> = loader::code_symbols(&co).into_iter().map(|s| (crate::runtime::CODE_SYMBOL_TAG + r.next_id(), s)).collect();
            {
                let mut map = r.loader.code_symbols.lock().unwrap_or_else(|e| e.into_inner());
                for (i, (h, _)) in symbols.iter().enumerate() {
                    map.insert(*h, (id, i));
                }
            }
            let old = loader::OldCodeObject { bytes: Arc::new(bytes.to_vec()), processor: co.target.processor.clone(), symbols };
            r.loader.code_objects.lock().unwrap_or_else(|e| e.into_inner()).insert(id, old);
            // SAFETY: `handle` is null or points to storage for the result, as the API requires.
            unsafe { out(handle, id) }
        })
    }
    fn hsa_code_object_serialize(handle: u64, alloc: Option<AllocCallback>, data: u64, _options: *const c_char, serialized: *mut *mut c_void, size: *mut usize) -> Status = ffi::ERROR; {
        with(|r| {
            let alloc = alloc.ok_or(ffi::ERROR_INVALID_ARGUMENT)?;
            nonnull(serialized)?;
            nonnull(size)?;
            let bytes = r.loader.code_object(handle)?.0;
            let mut at: *mut c_void = std::ptr::null_mut();
            match alloc(bytes.len(), data, &mut at) {
                ffi::SUCCESS if !at.is_null() => {}
                ffi::SUCCESS => return Err(ffi::ERROR_OUT_OF_RESOURCES),
                s => return Err(s),
            }
            // SAFETY: the application's callback gave `at` room for `bytes.len()` bytes.
            unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), at.cast::<u8>(), bytes.len()) };
            // SAFETY: `size` is null or points to storage for the result, as the API requires.
            unsafe { out(size, bytes.len()) }?;
            // SAFETY: `serialized` is null or points to storage for the result, as the API requires.
            unsafe { out(serialized, at) }
        })
    }
    fn hsa_code_object_destroy(handle: u64) -> Status = ffi::ERROR; {
        with(|r| {
            let gone = r.loader.code_objects.lock().unwrap_or_else(|e| e.into_inner()).remove(&handle).ok_or(ffi::ERROR_INVALID_CODE_OBJECT)?;
            let mut map = r.loader.code_symbols.lock().unwrap_or_else(|e| e.into_inner());
            for (h, _) in gone.symbols {
                map.remove(&h);
            }
            Ok(())
        })
    }
    fn hsa_code_object_get_info(handle: u64, attribute: u32, value: *mut c_void) -> Status = ffi::ERROR; {
        with(|r| {
            let (_, processor) = r.loader.code_object(handle)?;
            match attribute {
                // version, type (program), ISA, machine model (large), profile (base), rounding mode (near)
                // SAFETY: `value` is null or points to storage for the result, as the API requires.
                0 => unsafe { info::put_str::<64>(value, "2.1") },
                // SAFETY: `value` is null or points to storage for the result, as the API requires.
                1 => unsafe { put(value, 0u32) },
                2 => {
                    let isa = r.isas.iter().position(|(d, _)| d.gfx == processor).ok_or_else(|| {
                        eprintln!("wavejit: the code object is for {processor}, which no emulated agent runs");
                        ffi::ERROR_INVALID_ISA
                    })?;
                    // SAFETY: `value` is null or points to storage for the result, as the API requires.
                    unsafe { put(value, ISA_TAG + isa as u64) }
                }
                // SAFETY: `value` is null or points to storage for the result, as the API requires.
                3 => unsafe { put(value, ffi::MACHINE_MODEL_LARGE) },
                // SAFETY: `value` is null or points to storage for the result, as the API requires.
                4 => unsafe { put(value, ffi::PROFILE_BASE) },
                // SAFETY: `value` is null or points to storage for the result, as the API requires.
                5 => unsafe { put(value, ffi::ROUNDING_MODE_NEAR) },
                _ => Err(ffi::ERROR_INVALID_ARGUMENT),
            }
        })
    }
    fn hsa_code_object_get_symbol(handle: u64, name: *const c_char, symbol: *mut u64) -> Status = ffi::ERROR; {
        with(|r| code_symbol_named(r, handle, name, symbol))
    }
    fn hsa_code_object_get_symbol_from_name(handle: u64, _module: *const c_char, name: *const c_char, symbol: *mut u64) -> Status = ffi::ERROR; {
        with(|r| code_symbol_named(r, handle, name, symbol))
    }
    fn hsa_code_object_iterate_symbols(handle: u64, callback: Option<CodeSymbolCallback>, data: *mut c_void) -> Status = ffi::ERROR; {
        with(|r| {
            let cb = callback.ok_or(ffi::ERROR_INVALID_ARGUMENT)?;
            let handles: Vec<u64> = {
                let cos = r.loader.code_objects.lock().unwrap_or_else(|e| e.into_inner());
                cos.get(&handle).ok_or(ffi::ERROR_INVALID_CODE_OBJECT)?.symbols.iter().map(|(h, _)| *h).collect()
            };
            iterate(handles, |s| cb(handle, s, data))
        })
    }
    fn hsa_code_symbol_get_info(symbol: u64, attribute: u32, value: *mut c_void) -> Status = ffi::ERROR; {
        with(|r| {
            let (co, i) = r.loader.code_symbols.lock().unwrap_or_else(|e| e.into_inner()).get(&symbol).copied().ok_or(ffi::ERROR_INVALID_CODE_SYMBOL)?;
            let s = r.loader.code_objects.lock().unwrap_or_else(|e| e.into_inner()).get(&co).map(|c| c.symbols[i].1.clone()).ok_or(ffi::ERROR_INVALID_CODE_SYMBOL)?;
            symbol_attribute(&s.name, s.kernel.is_some(), s.kernel, s.size, attribute, value)
        })
    }
    fn hsa_executable_load_code_object(exe: u64, agent: u64, handle: u64, _options: *const c_char) -> Status = ffi::ERROR; {
        with(|r| {
            let (_, dev) = r.gpu(agent)?;
            let bytes = r.loader.code_object(handle)?.0;
            r.loader.load_bytes(r, exe, agent, dev, &bytes).map(drop)
        })
    }
}

unsupported!(ffi::ERROR, "the HSAIL finalizer is not provided (load AMDGPU code objects instead)":
    hsa_ext_program_add_module, hsa_ext_program_create, hsa_ext_program_destroy, hsa_ext_program_finalize,
    hsa_ext_program_get_info, hsa_ext_program_iterate_modules);

/// The symbol named `name` of pre-1.1 code object `handle` (a kernel also by its name without `.kd`).
fn code_symbol_named(r: &Runtime, handle: u64, name: *const c_char, symbol: *mut u64) -> Result<(), Status> {
    nonnull(name)?;
    nonnull(symbol)?;
    // SAFETY: a NUL-terminated name, as the API requires.
    let n = unsafe { CStr::from_ptr(name) }.to_string_lossy();
    // SAFETY: `symbol` is null or points to storage for the result, as the API requires.
    unsafe { out(symbol, r.loader.code_symbol(handle, &n)?) }
}

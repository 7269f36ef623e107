//! Code object readers (from memory or a file), executables (loading code objects for an agent, freezing,
//! external variables) and their symbols, and the AMD loader extension's functions, which reach the
//! application through the extension table (system.rs). The loading itself is in the crate's loader.rs.

use std::ffi::{c_char, c_void, CStr};
use std::sync::Arc;

use super::{iterate, nonnull, out, slice, with};
use crate::ffi::{self, Status};
use crate::loader::{self, SegmentDescriptor};
use crate::runtime::{Runtime, AGENT_TAG};

export! {
    fn hsa_code_object_reader_create_from_memory(data: *const c_void, size: usize, reader: *mut u64) -> Status = ffi::ERROR; {
        with(|r| {
            nonnull(reader)?;
            // SAFETY: `data` points to `size` elements that stay valid for the call, as the API requires.
            let bytes = unsafe { slice(data.cast::<u8>(), size) }?;
            if bytes.is_empty() {
                return Err(ffi::ERROR_INVALID_ARGUMENT);
            }
            let id = crate::runtime::READER_TAG + r.next_id();
            r.loader.readers.lock().unwrap_or_else(|e| e.into_inner()).insert(id, Arc::new(bytes.to_vec()));
            // SAFETY: `reader` is null or points to storage for the result, as the API requires.
            unsafe { out(reader, id) }
        })
    }
    fn hsa_code_object_reader_create_from_file(fd: i32, reader: *mut u64) -> Status = ffi::ERROR; {
        with(|r| {
            nonnull(reader)?;
            let bytes = read_fd(fd).ok_or(ffi::ERROR_INVALID_FILE)?;
            let id = crate::runtime::READER_TAG + r.next_id();
            r.loader.readers.lock().unwrap_or_else(|e| e.into_inner()).insert(id, Arc::new(bytes));
            // SAFETY: `reader` is null or points to storage for the result, as the API requires.
            unsafe { out(reader, id) }
        })
    }
    fn hsa_code_object_reader_destroy(reader: u64) -> Status = ffi::ERROR; {
        with(|r| {
            let removed = r.loader.readers.lock().unwrap_or_else(|e| e.into_inner()).remove(&reader);
            removed.map(drop).ok_or(ffi::ERROR_INVALID_CODE_OBJECT_READER)
        })
    }
    fn hsa_executable_create(_profile: u32, _state: u32, _options: *const c_char, exe: *mut u64) -> Status = ffi::ERROR; {
        with(|r| new_executable(r, exe))
    }
    fn hsa_executable_create_alt(_profile: u32, _rounding: u32, _options: *const c_char, exe: *mut u64) -> Status = ffi::ERROR; {
        with(|r| new_executable(r, exe))
    }
    fn hsa_executable_destroy(exe: u64) -> Status = ffi::ERROR; { with(|r| r.loader.destroy(r, exe)) }
    fn hsa_executable_load_agent_code_object(exe: u64, agent: u64, reader: u64, _options: *const c_char, loaded: *mut u64) -> Status = ffi::ERROR; {
        with(|r| {
            let (_, dev) = r.gpu(agent)?;
            let id = r.loader.load(r, exe, agent, dev, reader)?;
            if !loaded.is_null() {
                // SAFETY: `loaded` is null or points to storage for the result, as the API requires.
                unsafe { out(loaded, id) }?;
            }
            Ok(())
        })
    }
    fn hsa_executable_load_program_code_object(exe: u64, reader: u64, _options: *const c_char, loaded: *mut u64) -> Status = ffi::ERROR; {
        with(|r| {
            // a program code object serves every agent: load it for the first GPU whose target it names
            let bytes = r.loader.readers.lock().unwrap_or_else(|e| e.into_inner()).get(&reader).cloned().ok_or(ffi::ERROR_INVALID_CODE_OBJECT_READER)?;
            let co = isa_amdgpu::codeobj::CodeObject::parse(&bytes, "code object").map_err(|_| ffi::ERROR_INVALID_CODE_OBJECT)?;
            let (i, dev) = r.agents.iter().enumerate().find_map(|(i, a)| a.gpu.filter(|g| g.gfx == co.target.processor).map(|g| (i, g))).ok_or(ffi::ERROR_INVALID_ISA)?;
            let id = r.loader.load(r, exe, AGENT_TAG + i as u64, dev, reader)?;
            if !loaded.is_null() {
                // SAFETY: `loaded` is null or points to storage for the result, as the API requires.
                unsafe { out(loaded, id) }?;
            }
            Ok(())
        })
    }
    fn hsa_executable_freeze(exe: u64, _options: *const c_char) -> Status = ffi::ERROR; {
        with(|r| {
            let mut exes = r.loader.executables.lock().unwrap_or_else(|e| e.into_inner());
            let e = exes.get_mut(&exe).ok_or(ffi::ERROR_INVALID_EXECUTABLE)?;
            if e.frozen {
                return Err(ffi::ERROR_FROZEN_EXECUTABLE);
            }
            e.frozen = true;
            Ok(())
        })
    }
    fn hsa_executable_get_info(exe: u64, attribute: u32, value: *mut c_void) -> Status = ffi::ERROR; {
        with(|r| {
            let frozen = r.loader.executables.lock().unwrap_or_else(|e| e.into_inner()).get(&exe).map(|e| e.frozen).ok_or(ffi::ERROR_INVALID_EXECUTABLE)?;
            match attribute {
                // SAFETY: `value` is null or points to storage for the result, as the API requires.
                ffi::EXECUTABLE_INFO_PROFILE => unsafe { out(value.cast::<u32>(), ffi::PROFILE_BASE) },
                // SAFETY: `value` is null or points to storage for the result, as the API requires.
                ffi::EXECUTABLE_INFO_STATE => unsafe { out(value.cast::<u32>(), if frozen { ffi::EXECUTABLE_STATE_FROZEN } else { ffi::EXECUTABLE_STATE_UNFROZEN }) },
                // SAFETY: `value` is null or points to storage for the result, as the API requires.
                ffi::EXECUTABLE_INFO_DEFAULT_FLOAT_ROUNDING_MODE => unsafe { out(value.cast::<u32>(), ffi::ROUNDING_MODE_NEAR) },
                _ => Err(ffi::ERROR_INVALID_ARGUMENT),
            }
        })
    }
    fn hsa_executable_validate(exe: u64, result: *mut u32) -> Status = ffi::ERROR; {
        with(|r| {
            r.loader.symbols_of(exe)?;
            // SAFETY: `result` is null or points to storage for the result, as the API requires.
            unsafe { out(result, 0) }
        })
    }
    fn hsa_executable_validate_alt(exe: u64, _options: *const c_char, result: *mut u32) -> Status = ffi::ERROR; {
        hsa_executable_validate(exe, result)
    }
    fn hsa_executable_get_symbol_by_name(exe: u64, name: *const c_char, agent: *const u64, symbol: *mut u64) -> Status = ffi::ERROR; {
        with(|r| {
            nonnull(name)?;
            // SAFETY: a NUL-terminated name, as the API requires.
            let n = unsafe { CStr::from_ptr(name) }.to_string_lossy();
            // SAFETY: a non-null agent pointer points to a handle.
            let a = if agent.is_null() { None } else { Some(unsafe { *agent }) };
            match r.loader.find(exe, &n, a) {
                // SAFETY: `symbol` is null or points to storage for the result, as the API requires.
                Some(s) => unsafe { out(symbol, s) },
                // a known executable without the symbol, or no such executable
                None => r.loader.symbols_of(exe).and(Err(ffi::ERROR_INVALID_SYMBOL_NAME)),
            }
        })
    }
    fn hsa_executable_get_symbol(exe: u64, _module: *const c_char, name: *const c_char, agent: u64, _cc: i32, symbol: *mut u64) -> Status = ffi::ERROR; {
        with(|r| {
            nonnull(name)?;
            // SAFETY: a NUL-terminated name, as the API requires.
            let n = unsafe { CStr::from_ptr(name) }.to_string_lossy();
            // SAFETY: `symbol` is null or points to storage for the result, as the API requires.
            r.loader.find(exe, &n, Some(agent)).map_or(Err(ffi::ERROR_INVALID_SYMBOL_NAME), |s| unsafe { out(symbol, s) })
        })
    }
    fn hsa_executable_symbol_get_info(symbol: u64, attribute: u32, value: *mut c_void) -> Status = ffi::ERROR; {
        with(|r| symbol_info(r, symbol, attribute, value))
    }
    fn hsa_executable_iterate_symbols(exe: u64, callback: Option<extern "C" fn(u64, u64, *mut c_void) -> Status>, data: *mut c_void) -> Status = ffi::ERROR; {
        with(|r| {
            let cb = callback.ok_or(ffi::ERROR_INVALID_ARGUMENT)?;
            iterate(r.loader.symbols_of(exe)?, |s| cb(exe, s, data))
        })
    }
    fn hsa_executable_iterate_program_symbols(exe: u64, callback: Option<extern "C" fn(u64, u64, *mut c_void) -> Status>, _data: *mut c_void) -> Status = ffi::ERROR; {
        // program-allocated variables are not made by this loader: there are none to visit
        with(|r| {
            callback.ok_or(ffi::ERROR_INVALID_ARGUMENT)?;
            r.loader.symbols_of(exe).map(drop)
        })
    }
    fn hsa_executable_iterate_agent_symbols(exe: u64, agent: u64, callback: Option<extern "C" fn(u64, u64, u64, *mut c_void) -> Status>, data: *mut c_void) -> Status = ffi::ERROR; {
        with(|r| {
            let cb = callback.ok_or(ffi::ERROR_INVALID_ARGUMENT)?;
            r.agent(agent)?;
            let syms = r.loader.symbols_of(exe)?;
            let mine: Vec<u64> = {
                let table = r.loader.symbols.read().unwrap_or_else(|e| e.into_inner());
                syms.into_iter().filter(|s| table.get(s).is_some_and(|x| x.agent == agent)).collect()
            };
            iterate(mine, |s| cb(exe, agent, s, data))
        })
    }
    fn hsa_executable_global_variable_define(exe: u64, name: *const c_char, address: *mut c_void) -> Status = ffi::ERROR; {
        with(|r| define_variable(r, exe, name, address))
    }
    fn hsa_executable_agent_global_variable_define(exe: u64, agent: u64, name: *const c_char, address: *mut c_void) -> Status = ffi::ERROR; {
        with(|r| {
            r.agent(agent)?;
            define_variable(r, exe, name, address)
        })
    }
    fn hsa_executable_readonly_variable_define(exe: u64, agent: u64, name: *const c_char, address: *mut c_void) -> Status = ffi::ERROR; {
        with(|r| {
            r.agent(agent)?;
            define_variable(r, exe, name, address)
        })
    }
}

/// Makes an empty executable and hands back its handle.
fn new_executable(r: &Runtime, exe: *mut u64) -> Result<(), Status> {
    nonnull(exe)?;
    let id = crate::runtime::EXECUTABLE_TAG + r.next_id();
    r.loader
        .executables
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(id, Default::default());
    // SAFETY: `exe` is null or points to storage for the result, as the API requires.
    unsafe { out(exe, id) }
}

/// Defines an external variable of executable `exe` (for relocations of code objects loaded afterwards).
fn define_variable(r: &Runtime, exe: u64, name: *const c_char, address: *mut c_void) -> Result<(), Status> {
    nonnull(name)?;
    nonnull(address)?;
    // SAFETY: a NUL-terminated name, as the API requires.
    let n = unsafe { CStr::from_ptr(name) }.to_string_lossy();
    r.loader.define(exe, &n, address as u64)
}

/// `hsa_executable_symbol_get_info`: an attribute of executable symbol `symbol`.
fn symbol_info(r: &Runtime, symbol: u64, attribute: u32, value: *mut c_void) -> Result<(), Status> {
    let s = r
        .loader
        .symbols
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .get(&symbol)
        .cloned()
        .ok_or(ffi::ERROR_INVALID_EXECUTABLE_SYMBOL)?;
    match attribute {
        // SAFETY: `value` is null or points to storage for the result, as the API requires.
        ffi::SYMBOL_INFO_AGENT => unsafe { out(value.cast::<u64>(), s.agent) },
        // SAFETY: `value` is null or points to storage for the result, as the API requires.
        ffi::SYMBOL_INFO_VARIABLE_ADDRESS => unsafe { out(value.cast::<u64>(), s.address) },
        // SAFETY: `value` is null or points to storage for the result, as the API requires.
        ffi::SYMBOL_INFO_KERNEL_OBJECT => unsafe {
            out(value.cast::<u64>(), s.kernel.ok_or(ffi::ERROR_INVALID_ARGUMENT)?)
        },
        _ => {
            let props = s.kernel.and_then(|k| r.loader.kernel(k)).map(|k| k.props);
            symbol_attribute(&s.name, s.kernel.is_some(), props, s.size, attribute, value)
        }
    }
}

/// The attributes executable symbols and (pre-1.1) code symbols share, whose numbers are the same in both
/// enumerations: of a symbol named `name`, a kernel (`props` when known) or a variable of `size` bytes.
pub(super) fn symbol_attribute(
    name: &str,
    is_kernel: bool,
    props: Option<loader::KernelProps>,
    size: u64,
    attribute: u32,
    value: *mut c_void,
) -> Result<(), Status> {
    let v32 = value.cast::<u32>();
    let kernel = || props.ok_or(ffi::ERROR_INVALID_ARGUMENT);
    match attribute {
        // SAFETY: `v32` is null or points to storage for the result, as the API requires.
        ffi::SYMBOL_INFO_TYPE => unsafe {
            out(
                v32,
                if is_kernel {
                    ffi::SYMBOL_KIND_KERNEL
                } else {
                    ffi::SYMBOL_KIND_VARIABLE
                },
            )
        },
        // SAFETY: `v32` is null or points to storage for the result, as the API requires.
        ffi::SYMBOL_INFO_NAME_LENGTH => unsafe { out(v32, name.len() as u32) },
        ffi::SYMBOL_INFO_NAME => {
            nonnull(value)?;
            // SAFETY: the caller provides NAME_LENGTH bytes for the (unterminated) name.
            unsafe { std::ptr::copy_nonoverlapping(name.as_ptr(), value.cast::<u8>(), name.len()) };
            Ok(())
        }
        // SAFETY: `v32` is null or points to storage for the result, as the API requires.
        ffi::SYMBOL_INFO_MODULE_NAME_LENGTH => unsafe { out(v32, 0) },
        ffi::SYMBOL_INFO_MODULE_NAME => Ok(()),
        // SAFETY: `v32` is null or points to storage for the result, as the API requires.
        ffi::SYMBOL_INFO_LINKAGE => unsafe { out(v32, 1) },
        // SAFETY: `value` is null or points to storage for the result, as the API requires.
        ffi::SYMBOL_INFO_IS_DEFINITION => unsafe { out(value.cast::<bool>(), true) },
        // SAFETY: `v32` is null or points to storage for the result, as the API requires.
        ffi::SYMBOL_INFO_VARIABLE_ALLOCATION | ffi::SYMBOL_INFO_VARIABLE_SEGMENT => unsafe { out(v32, 0) },
        // SAFETY: `v32` is null or points to storage for the result, as the API requires.
        ffi::SYMBOL_INFO_VARIABLE_ALIGNMENT => unsafe { out(v32, 8) },
        // SAFETY: `v32` is null or points to storage for the result, as the API requires.
        ffi::SYMBOL_INFO_VARIABLE_SIZE => unsafe { out(v32, size as u32) },
        // SAFETY: `value` is null or points to storage for the result, as the API requires.
        ffi::SYMBOL_INFO_VARIABLE_IS_CONST => unsafe { out(value.cast::<bool>(), false) },
        // SAFETY: `v32` is null or points to storage for the result, as the API requires.
        ffi::SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE => unsafe { out(v32, kernel()?.kernarg_size) },
        // SAFETY: `v32` is null or points to storage for the result, as the API requires.
        ffi::SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_ALIGNMENT => unsafe { out(v32, kernel()?.kernarg_align) },
        // SAFETY: `v32` is null or points to storage for the result, as the API requires.
        ffi::SYMBOL_INFO_KERNEL_GROUP_SEGMENT_SIZE => unsafe { out(v32, kernel()?.group_size) },
        // SAFETY: `v32` is null or points to storage for the result, as the API requires.
        ffi::SYMBOL_INFO_KERNEL_PRIVATE_SEGMENT_SIZE => unsafe { out(v32, kernel()?.private_size) },
        // SAFETY: `value` is null or points to storage for the result, as the API requires.
        ffi::SYMBOL_INFO_KERNEL_DYNAMIC_CALLSTACK => unsafe { out(value.cast::<bool>(), kernel()?.dynamic_callstack) },
        // the call convention, and (code symbols) the indirect-function call convention
        // SAFETY: `v32` is null or points to storage for the result, as the API requires.
        ffi::SYMBOL_INFO_KERNEL_CALL_CONVENTION | 16 => unsafe { out(v32, 0) },
        _ => Err(ffi::ERROR_INVALID_ARGUMENT),
    }
}

/// The whole contents of file descriptor `fd`, read from its start (the descriptor's offset is left alone).
fn read_fd(fd: i32) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        // SAFETY: pread into our own buffer of the given length; an invalid fd only makes it fail.
        let n = unsafe { libc::pread(fd, buf.as_mut_ptr().cast(), buf.len(), out.len() as libc::off_t) };
        match n {
            0 => return (!out.is_empty()).then_some(out),
            n if n > 0 => out.extend_from_slice(&buf[..n as usize]),
            _ => return None,
        }
    }
}

/// `hsa_ven_amd_loader_query_host_address`: the host address of loaded code at device address `device`, which
/// is `device` itself (device addresses are host addresses).
pub(super) extern "C" fn loader_query_host_address(device: *const c_void, host: *mut *const c_void) -> Status {
    std::panic::catch_unwind(|| {
        with(|r| {
            nonnull(host)?;
            r.loader.code_at(device as u64).ok_or(ffi::ERROR_INVALID_ARGUMENT)?;
            // SAFETY: `host` is null or points to storage for the result, as the API requires.
            unsafe { out(host, device) }
        })
    })
    .unwrap_or(ffi::ERROR)
}

/// `hsa_ven_amd_loader_query_segment_descriptors`: with no `descriptors`, how many there are; else fills them
/// (INVALID_ARGUMENT, and the count, when `*count` leaves too little room).
pub(super) extern "C" fn loader_query_segment_descriptors(
    descriptors: *mut SegmentDescriptor,
    count: *mut usize,
) -> Status {
    std::panic::catch_unwind(|| {
        with(|r| {
            nonnull(count)?;
            let segments = r.loader.segments();
            // SAFETY: checked non-null above.
            let room = unsafe { *count };
            if descriptors.is_null() {
                // SAFETY: `count` is null or points to storage for the result, as the API requires.
                return unsafe { out(count, segments.len()) };
            }
            if room < segments.len() {
                // SAFETY: `count` is null or points to storage for the result, as the API requires.
                unsafe { out(count, segments.len()) }?;
                return Err(ffi::ERROR_INVALID_ARGUMENT);
            }
            for (i, s) in segments.into_iter().enumerate() {
                // SAFETY: `descriptors` has room for `room` descriptors (at least `segments.len()`), as the API requires.
                unsafe { out(descriptors.wrapping_add(i), s) }?;
            }
            Ok(())
        })
    })
    .unwrap_or(ffi::ERROR)
}

/// `hsa_ven_amd_loader_query_executable`: the executable whose code holds a device address.
pub(super) extern "C" fn loader_query_executable(device: *const c_void, exe: *mut u64) -> Status {
    std::panic::catch_unwind(|| {
        with(|r| {
            let (id, _) = r.loader.code_at(device as u64).ok_or(ffi::ERROR_INVALID_ARGUMENT)?;
            // SAFETY: `exe` is null or points to storage for the result, as the API requires.
            unsafe { out(exe, id) }
        })
    })
    .unwrap_or(ffi::ERROR)
}

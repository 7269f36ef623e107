//! Code object readers, executables and their symbols: a code object is loaded into device memory (its
//! allocated sections at their addresses from one base, dynamic relocations applied), its kernels registered by
//! kernel-object address (the descriptor's address, what dispatch packets carry) and its variables by name.
//! Also the code objects of the pre-1.1 API with their symbols, and the segment descriptors the AMD loader
//! extension reports.

use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::{Arc, Mutex, RwLock};

use emu_core::engine::{load_code, DecodeCache, LoadedCode};
use isa_amdgpu::codeobj::kd::KernelDescriptor;
use isa_amdgpu::codeobj::{CodeObject, SymbolKind};

use crate::ffi::{self, Status};
use crate::runtime::{Runtime, AGENT_TAG};

/// A kernel ready to dispatch.
pub struct KernelEntry {
    pub name: String,
    pub code: Arc<LoadedCode>,
    /// Decoded instructions of the code object, kept across dispatches.
    pub cache: Arc<DecodeCache>,
    pub descriptor: KernelDescriptor,
    pub entry: u64,
    pub props: KernelProps,
    /// Functions and arguments by name, for the debugger and the explorer.
    pub info: inspect::DebugInfo,
}

/// What symbol queries report of a kernel.
#[derive(Clone, Copy, Debug)]
pub struct KernelProps {
    pub kernarg_size: u32,
    pub kernarg_align: u32,
    pub group_size: u32,
    pub private_size: u32,
    pub dynamic_callstack: bool,
    /// `.agpr_count` of the kernel's metadata.
    pub agpr_count: Option<u64>,
}

impl KernelProps {
    fn of(co: &CodeObject, k: &isa_amdgpu::codeobj::Kernel) -> KernelProps {
        let meta = co.kernel_metadata(k);
        KernelProps {
            kernarg_size: meta
                .and_then(|m| m.kernarg_segment_size)
                .unwrap_or(k.descriptor.kernarg_size as u64) as u32,
            kernarg_align: meta.and_then(|m| m.kernarg_segment_align).unwrap_or(16) as u32,
            group_size: k.descriptor.group_segment_fixed_size,
            private_size: k.descriptor.private_segment_fixed_size,
            dynamic_callstack: k.descriptor.properties.uses_dynamic_stack,
            agpr_count: meta.and_then(|m| m.agpr_count),
        }
    }
}

/// The variables a code object defines (global, not kernel descriptors, in a section).
fn defined_variables(co: &CodeObject) -> impl Iterator<Item = &isa_amdgpu::codeobj::Symbol> {
    co.symbols
        .iter()
        .filter(|s| s.kind == SymbolKind::Object && s.binding != 0 && !s.name.ends_with(".kd") && s.section_index != 0)
}

/// A symbol of an executable.
#[derive(Clone)]
pub struct Symbol {
    pub executable: u64,
    pub agent: u64,
    /// The ELF name (`foo.kd` for kernels).
    pub name: String,
    pub kernel: Option<u64>,
    /// Variable address and size.
    pub address: u64,
    pub size: u64,
}

#[derive(Default)]
pub struct Executable {
    pub frozen: bool,
    /// Variables defined by the application for the code objects' undefined symbols: name → address.
    pub externals: HashMap<String, u64>,
    pub code: Vec<(u64, Arc<LoadedCode>)>,
    pub symbols: Vec<u64>,
}

#[derive(Default)]
pub struct Loader {
    pub readers: Mutex<HashMap<u64, Arc<Vec<u8>>>>,
    pub executables: Mutex<HashMap<u64, Executable>>,
    pub symbols: RwLock<HashMap<u64, Symbol>>,
    kernels: RwLock<HashMap<u64, Arc<KernelEntry>>>,
    /// Code objects of the pre-1.1 API (`hsa_code_object_deserialize`): their bytes and symbols.
    pub code_objects: Mutex<HashMap<u64, OldCodeObject>>,
    /// Their symbols: handle → (code object, index in its symbols).
    pub code_symbols: Mutex<HashMap<u64, (u64, usize)>>,
}

/// A symbol of a pre-1.1 code object, as `hsa_code_symbol_get_info` describes it.
#[derive(Clone, Debug)]
pub struct CodeSymbol {
    pub name: String,
    pub kernel: Option<KernelProps>,
    pub size: u64,
}

/// A pre-1.1 code object: its bytes, target and symbols (with their handles).
pub struct OldCodeObject {
    pub bytes: Arc<Vec<u8>>,
    pub processor: String,
    pub symbols: Vec<(u64, CodeSymbol)>,
}

/// `hsa_ven_amd_loader_segment_descriptor_t`: a code object loaded into an executable, for the AMD loader
/// extension's `hsa_ven_amd_loader_query_segment_descriptors`.
#[repr(C)]
pub struct SegmentDescriptor {
    agent: u64,
    executable: u64,
    storage_type: u32,
    storage_base: *const c_void,
    storage_size: usize,
    storage_offset: usize,
    segment_base: *const c_void,
    segment_size: usize,
}

/// The symbols a code object defines, named as its executable symbols are.
pub fn code_symbols(co: &CodeObject) -> Vec<CodeSymbol> {
    let kernels = co.kernels.iter().map(|k| CodeSymbol {
        name: k.descriptor_symbol.clone(),
        kernel: Some(KernelProps::of(co, k)),
        size: 64,
    });
    kernels
        .chain(defined_variables(co).map(|s| CodeSymbol {
            name: s.name.clone(),
            kernel: None,
            size: s.size,
        }))
        .collect()
}

const R_AMDGPU_ABS64: u32 = 3;
const R_AMDGPU_RELATIVE64: u32 = 13;

impl Loader {
    pub fn kernel(&self, object: u64) -> Option<Arc<KernelEntry>> {
        self.kernels
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(&object)
            .cloned()
    }

    /// Loads the code object held by `reader` for agent `agent` (a GPU running `target`) into executable `exe`.
    pub fn load(
        &self,
        rt: &Runtime,
        exe: u64,
        agent: u64,
        device: &emu_core::DevicePreset,
        reader: u64,
    ) -> Result<u64, Status> {
        let bytes = self
            .readers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&reader)
            .cloned()
            .ok_or(ffi::ERROR_INVALID_CODE_OBJECT_READER)?;
        self.load_bytes(rt, exe, agent, device, &bytes)
    }

    /// Loads code object `bytes` for agent `agent` into executable `exe`.
    pub fn load_bytes(
        &self,
        rt: &Runtime,
        exe: u64,
        agent: u64,
        device: &emu_core::DevicePreset,
        bytes: &[u8],
    ) -> Result<u64, Status> {
        {
            let exes = self.executables.lock().unwrap_or_else(|e| e.into_inner());
            match exes.get(&exe) {
                None => return Err(ffi::ERROR_INVALID_EXECUTABLE),
                Some(e) if e.frozen => return Err(ffi::ERROR_FROZEN_EXECUTABLE),
                Some(_) => {}
            }
        }
        let co = CodeObject::parse(bytes, "code object").map_err(|e| {
            eprintln!("wavejit: cannot load a code object: {e}");
            ffi::ERROR_INVALID_CODE_OBJECT
        })?;
        if co.target.processor != device.gfx {
            eprintln!(
                "wavejit: a code object for {} cannot run on the emulated {} ({})",
                co.target.canonical(),
                device.name,
                device.gfx
            );
            return Err(ffi::ERROR_INVALID_ISA);
        }
        let code = Arc::new(load_code(&rt.mem, &co).map_err(|e| {
            eprintln!("wavejit: cannot load a code object: {e}");
            ffi::ERROR_INVALID_CODE_OBJECT
        })?);
        let externals = self
            .executables
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&exe)
            .map(|e| e.externals.clone())
            .unwrap_or_default();
        if let Err(why) = relocate(rt, bytes, code.base, &externals) {
            eprintln!("wavejit: cannot relocate a code object: {why}");
            let _ = rt.mem.free(code.base);
            return Err(ffi::ERROR_INVALID_CODE_OBJECT);
        }
        let cache = Arc::new(DecodeCache::new(&code));
        let mut new_symbols = Vec::new();
        for k in &co.kernels {
            let object = code.base + k.descriptor_address;
            let entry = KernelEntry {
                name: k.name.clone(),
                code: code.clone(),
                cache: cache.clone(),
                descriptor: k.descriptor.clone(),
                entry: code.base + k.entry_address,
                props: KernelProps::of(&co, k),
                info: inspect::DebugInfo::of(&co, k),
            };
            self.kernels
                .write()
                .unwrap_or_else(|e| e.into_inner())
                .insert(object, Arc::new(entry));
            new_symbols.push(Symbol {
                executable: exe,
                agent,
                name: k.descriptor_symbol.clone(),
                kernel: Some(object),
                address: object,
                size: 64,
            });
        }
        for s in defined_variables(&co) {
            new_symbols.push(Symbol {
                executable: exe,
                agent,
                name: s.name.clone(),
                kernel: None,
                address: code.base + s.address,
                size: s.size,
            });
        }
        let ids: Vec<u64> = {
            let mut syms = self.symbols.write().unwrap_or_else(|e| e.into_inner());
            new_symbols
                .into_iter()
                .map(|s| {
                    let id = crate::runtime::SYMBOL_TAG + rt.next_id();
                    syms.insert(id, s);
                    id
                })
                .collect()
        };
        let loaded = rt.next_id();
        let mut exes = self.executables.lock().unwrap_or_else(|e| e.into_inner());
        let e = exes.get_mut(&exe).ok_or(ffi::ERROR_INVALID_EXECUTABLE)?;
        e.code.push((loaded, code));
        e.symbols.extend(ids);
        Ok(loaded)
    }

    /// Defines `name` at `address` for code objects loaded into `exe` afterwards.
    pub fn define(&self, exe: u64, name: &str, address: u64) -> Result<(), Status> {
        let mut exes = self.executables.lock().unwrap_or_else(|e| e.into_inner());
        let e = exes.get_mut(&exe).ok_or(ffi::ERROR_INVALID_EXECUTABLE)?;
        if e.frozen {
            return Err(ffi::ERROR_FROZEN_EXECUTABLE);
        }
        if e.externals.contains_key(name) {
            return Err(ffi::ERROR_VARIABLE_ALREADY_DEFINED);
        }
        e.externals.insert(name.to_string(), address);
        Ok(())
    }

    /// Frees an executable's code and forgets its symbols and kernels.
    pub fn destroy(&self, rt: &Runtime, exe: u64) -> Result<(), Status> {
        let e = self
            .executables
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&exe)
            .ok_or(ffi::ERROR_INVALID_EXECUTABLE)?;
        let mut syms = self.symbols.write().unwrap_or_else(|e| e.into_inner());
        let mut kernels = self.kernels.write().unwrap_or_else(|e| e.into_inner());
        for id in e.symbols {
            if let Some(s) = syms.remove(&id) {
                if let Some(k) = s.kernel {
                    kernels.remove(&k);
                }
            }
        }
        for (_, code) in e.code {
            let _ = rt.mem.free(code.base);
        }
        Ok(())
    }

    /// The symbol of executable `exe` called `name` (kernels also answer to their name without `.kd`).
    pub fn find(&self, exe: u64, name: &str, agent: Option<u64>) -> Option<u64> {
        let exes = self.executables.lock().unwrap_or_else(|e| e.into_inner());
        let e = exes.get(&exe)?;
        let syms = self.symbols.read().unwrap_or_else(|e| e.into_inner());
        e.symbols.iter().copied().find(|id| {
            syms.get(id).is_some_and(|s| {
                (s.name == name || (s.kernel.is_some() && s.name.strip_suffix(".kd") == Some(name)))
                    && agent.is_none_or(|a| a == s.agent)
            })
        })
    }

    /// The executable whose code holds `address`, and that code.
    pub fn code_at(&self, address: u64) -> Option<(u64, Arc<LoadedCode>)> {
        let exes = self.executables.lock().unwrap_or_else(|e| e.into_inner());
        exes.iter().find_map(|(id, e)| {
            e.code
                .iter()
                .find(|(_, c)| address >= c.base && address < c.base + c.size.max(1))
                .map(|(_, c)| (*id, c.clone()))
        })
    }

    /// The symbols of executable `exe`.
    pub fn symbols_of(&self, exe: u64) -> Result<Vec<u64>, Status> {
        self.executables
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&exe)
            .map(|e| e.symbols.clone())
            .ok_or(ffi::ERROR_INVALID_EXECUTABLE)
    }

    /// One segment descriptor for each code object loaded into an executable: stored in memory (storage type
    /// 2), the storage and the segment both its loaded image. Its agent is that of the executable's first
    /// symbol (the first GPU for an executable without symbols).
    pub fn segments(&self) -> Vec<SegmentDescriptor> {
        let exes = self.executables.lock().unwrap_or_else(|e| e.into_inner());
        let syms = self.symbols.read().unwrap_or_else(|e| e.into_inner());
        exes.iter()
            .flat_map(|(id, e)| {
                let agent = e
                    .symbols
                    .first()
                    .and_then(|s| syms.get(s))
                    .map_or(AGENT_TAG + 1, |s| s.agent);
                e.code.iter().map(move |(_, c)| SegmentDescriptor {
                    agent,
                    executable: *id,
                    storage_type: 2,
                    storage_base: c.base as *const c_void,
                    storage_size: c.size as usize,
                    storage_offset: 0,
                    segment_base: c.base as *const c_void,
                    segment_size: c.size as usize,
                })
            })
            .collect()
    }

    /// A pre-1.1 code object's bytes and target processor.
    pub fn code_object(&self, handle: u64) -> Result<(Arc<Vec<u8>>, String), Status> {
        let cos = self.code_objects.lock().unwrap_or_else(|e| e.into_inner());
        cos.get(&handle)
            .map(|c| (c.bytes.clone(), c.processor.clone()))
            .ok_or(ffi::ERROR_INVALID_CODE_OBJECT)
    }

    /// The symbol of pre-1.1 code object `handle` called `name` (kernels also answer to their name without
    /// `.kd`).
    pub fn code_symbol(&self, handle: u64, name: &str) -> Result<u64, Status> {
        let cos = self.code_objects.lock().unwrap_or_else(|e| e.into_inner());
        let c = cos.get(&handle).ok_or(ffi::ERROR_INVALID_CODE_OBJECT)?;
        let found = c
            .symbols
            .iter()
            .find(|(_, s)| s.name == name || (s.kernel.is_some() && s.name.strip_suffix(".kd") == Some(name)));
        Ok(found.ok_or(ffi::ERROR_INVALID_SYMBOL_NAME)?.0)
    }
}

/// Applies the code object's dynamic relocations to its image loaded at `base`; undefined symbols resolve to
/// the application's `externals`.
fn relocate(rt: &Runtime, bytes: &[u8], base: u64, externals: &HashMap<String, u64>) -> Result<(), String> {
    use object::read::elf::{ElfFile64, Rela, Sym};
    use object::{Object, ObjectSection};
    let file = ElfFile64::<object::LittleEndian>::parse(bytes).map_err(|e| e.to_string())?;
    let endian = object::LittleEndian;
    let dynsyms = file.elf_dynamic_symbol_table();
    for section in file.sections() {
        if section.name() != Ok(".rela.dyn") {
            continue;
        }
        let data = section.data().map_err(|e| e.to_string())?;
        let relas: &[object::elf::Rela64<object::LittleEndian>] =
            object::pod::slice_from_all_bytes(data).map_err(|_| "a malformed .rela.dyn".to_string())?;
        for r in relas {
            let (offset, kind, addend) = (r.r_offset(endian), r.r_type(endian, false), r.r_addend(endian));
            let value = match kind {
                R_AMDGPU_RELATIVE64 => base.wrapping_add(addend as u64),
                R_AMDGPU_ABS64 => {
                    let index = r.r_sym(endian, false) as usize;
                    let sym = dynsyms.symbol(object::SymbolIndex(index)).map_err(|e| e.to_string())?;
                    if sym.st_shndx(endian) == 0 {
                        let name = sym
                            .name(endian, dynsyms.strings())
                            .map(|n| String::from_utf8_lossy(n).into_owned())
                            .unwrap_or_default();
                        let at = externals.get(&name).ok_or_else(|| format!("relocation at {offset:#x} names the undefined symbol {name:?}, which the application did not define"))?;
                        at.wrapping_add(addend as u64)
                    } else {
                        base.wrapping_add(sym.st_value(endian)).wrapping_add(addend as u64)
                    }
                }
                0 => continue,
                other => return Err(format!("relocation type {other} at {offset:#x} is not supported")),
            };
            rt.mem
                .load_code_bytes(base + offset, &value.to_le_bytes())
                .map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}

//! Blocks whose machine code holds no address of this process, so it can be kept on disk and used by another
//! process ([`crate::disk`]).
//!
//! The code generator refers to things of this process by their addresses: the helpers compiled code calls
//! (`interpret_one`, `observe`, `wave_call`, `mfma_registers`), the mask table, the block's own instructions and its interpreter
//! calls (`Call`s, on the heap). Before Cranelift compiles a block, [`make_relocatable`] replaces every 64-bit
//! constant that is one of these addresses by a `symbol_value` of a *block symbol* ([`Sym`]), so Cranelift
//! emits an absolute relocation there instead of the number. [`Code`] is the machine code with those
//! relocations; [`Code::patched`] writes the addresses of this process (of this block's instructions and
//! calls) into a copy. Any other constant that points into this process's memory makes the block
//! `persistable: false`: it still runs here, but is never written to disk (a new embedded address in the code
//! generator must be added to [`Symbols`]; `every_bundled_kernel_translates_to_relocatable_code` says so).

use cranelift_codegen::binemit::Reloc;
use cranelift_codegen::ir::immediates::Imm64;
use cranelift_codegen::ir::{
    self, types, ExternalName, GlobalValueData, InstBuilder, InstructionData, UserExternalName,
};
use cranelift_codegen::{FinalizedMachReloc, FinalizedRelocTarget};
use cranelift_module::{FuncId, ModuleReloc, ModuleRelocTarget};

use isa_amdgpu::Inst;

use crate::call::Call;
use crate::compile::{InterpretOne, Observe};
use crate::ctx::MASK_TABLE;

/// The namespace of block symbols in Cranelift external names.
pub const NAMESPACE: u32 = 0x574a; // "WJ"

/// What an address in a block's code refers to; its index ([`Sym::index`]) is the symbol number in [`Code`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sym {
    /// `runner::callbacks::interpret_one`.
    Interpret,
    /// `runner::callbacks::observe`.
    Observe,
    /// `call::wave_call`.
    WaveCall,
    /// `ctx::MASK_TABLE`.
    MaskTable,
    /// `call::mfma_registers`.
    MfmaRegisters,
    /// The block's instruction slice (an instruction is an addend into it).
    Insts,
    /// The block's n-th interpreter call.
    Call(u32),
}

impl Sym {
    pub fn index(self) -> u32 {
        match self {
            Sym::Interpret => 0,
            Sym::Observe => 1,
            Sym::WaveCall => 2,
            Sym::MaskTable => 3,
            Sym::MfmaRegisters => 4,
            Sym::Insts => 5,
            Sym::Call(n) => 6 + n,
        }
    }
}

/// The addresses of a block's symbols in this process, by [`Sym::index`]: start and length of what each names
/// (functions have length 1: only their entry is theirs).
pub struct Symbols(Vec<(u64, u64)>);

impl Symbols {
    /// The symbols of a block with instructions `insts` and interpreter calls `calls`.
    pub fn of(insts: &[Inst], calls: &[Box<Call>], interpret: InterpretOne, observe: Option<Observe>) -> Symbols {
        let mut s = vec![
            (interpret as usize as u64, 1),
            // a block that does not observe has no use for it
            observe.map_or((0, 0), |f| (f as usize as u64, 1)),
            (crate::call::wave_call as *const () as u64, 1),
            (MASK_TABLE.as_ptr() as u64, std::mem::size_of_val(&MASK_TABLE) as u64),
            (crate::call::mfma_registers as *const () as u64, 1),
            (insts.as_ptr() as u64, std::mem::size_of_val(insts).max(1) as u64),
        ];
        s.extend(
            calls
                .iter()
                .map(|c| (&**c as *const Call as u64, std::mem::size_of::<Call>() as u64)),
        );
        Symbols(s)
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The symbol `value` points into, and the offset from its start.
    fn find(&self, value: u64) -> Option<(u32, i64)> {
        self.0
            .iter()
            .position(|&(start, len)| value.wrapping_sub(start) < len)
            .map(|i| (i as u32, (value - self.0[i].0) as i64))
    }

    fn address(&self, index: u32) -> Option<u64> {
        self.0.get(index as usize).map(|s| s.0)
    }
}

/// The address ranges mapped into this process (`/proc/self/maps`), read when a constant might be an address.
struct Mappings(Option<Vec<(u64, u64)>>);

impl Mappings {
    fn contains(&mut self, value: u64) -> bool {
        let ranges = self.0.get_or_insert_with(|| {
            let text = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
            text.lines()
                .filter_map(|l| {
                    let (a, b) = l.split_whitespace().next()?.split_once('-')?;
                    Some((u64::from_str_radix(a, 16).ok()?, u64::from_str_radix(b, 16).ok()?))
                })
                .collect()
        });
        // without the map (not Linux), every constant in the user address range counts
        ranges.is_empty() || ranges.iter().any(|&(a, b)| (a..b).contains(&value))
    }
}

/// Replaces every 64-bit constant of `func` that points at one of `syms` by a relocated symbol value. Returns
/// whether the function is now free of this process's addresses (no other 64-bit constant lies in its
/// mapped memory).
pub fn make_relocatable(func: &mut ir::Function, syms: &Symbols) -> bool {
    let mut names: Vec<Option<ir::UserExternalNameRef>> = vec![None; syms.len()];
    let mut maps = Mappings(None);
    let mut free = true;
    let mut at = Vec::new();
    for block in func.layout.blocks() {
        at.extend(func.layout.block_insts(block));
    }
    for inst in at {
        let InstructionData::UnaryImm {
            opcode: ir::Opcode::Iconst,
            imm,
        } = func.dfg.insts[inst]
        else {
            continue;
        };
        if func.dfg.ctrl_typevar(inst) != types::I64 {
            continue;
        }
        let value = imm.bits() as u64;
        // small numbers are never addresses (the first 64 KiB are not mapped), nor are numbers above the user
        // half of the address space (all-ones masks, f64 bit patterns)
        if !(0x1_0000..0x8000_0000_0000).contains(&value) {
            continue;
        }
        match syms.find(value) {
            Some((index, addend)) => {
                let name = *names[index as usize].get_or_insert_with(|| {
                    func.declare_imported_user_function(UserExternalName::new(NAMESPACE, index))
                });
                // a global value per use, as the constant was: one shared value would be kept live (in a
                // register or the stack) across the whole block instead of being materialized where it is used
                let gv = func.create_global_value(GlobalValueData::Symbol {
                    name: ExternalName::User(name),
                    offset: Imm64::new(addend),
                    colocated: false,
                    tls: false,
                });
                func.dfg.replace(inst).symbol_value(types::I64, gv);
            }
            None => free &= !maps.contains(value),
        }
    }
    free
}

/// What a relocation points at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A block symbol, by [`Sym::index`].
    Sym(u32),
    /// A library function (soft float and the like), resolved by the module.
    LibCall(ir::LibCall),
    /// An offset inside the block's own code.
    SelfOffset(u32),
}

/// A relocation of [`Code`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Relocation {
    pub offset: u32,
    pub kind: Reloc,
    pub target: Target,
    pub addend: i64,
}

/// A block's machine code before its symbols are resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Code {
    pub bytes: Vec<u8>,
    pub align: u64,
    pub relocs: Vec<Relocation>,
    /// Free of this process's addresses: it may be kept on disk.
    pub persistable: bool,
}

/// Why [`Code::patched`] cannot resolve a block's code.
#[derive(Debug, Clone, thiserror::Error)]
pub enum RelocError {
    #[error("relocation at {offset:#x} names symbol {index}, but the block has {symbols} symbols")]
    NoSymbol { offset: u32, index: u32, symbols: usize },
    #[error("relocation at {offset:#x} is {kind:?}, not the absolute 8-byte kind block symbols use")]
    Kind { offset: u32, kind: Reloc },
    #[error("relocation at {offset:#x} lies outside the {len}-byte code")]
    Outside { offset: u32, len: usize },
    #[error("external name {what} in a block (only block symbols and library calls are expected)")]
    Name { what: String },
}

impl Code {
    /// The code of a compiled function: its bytes and relocations in terms of block symbols.
    pub fn from_compiled(
        bytes: &[u8],
        align: u64,
        relocs: &[FinalizedMachReloc],
        func: &ir::Function,
        persistable: bool,
    ) -> Result<Code, RelocError> {
        let mut out = Vec::with_capacity(relocs.len());
        let mut persistable = persistable;
        for r in relocs {
            let target = match &r.target {
                FinalizedRelocTarget::ExternalName(ExternalName::User(name)) => {
                    let n = &func.params.user_named_funcs()[*name];
                    if n.namespace != NAMESPACE {
                        return Err(RelocError::Name { what: format!("{n:?}") });
                    }
                    Target::Sym(n.index)
                }
                FinalizedRelocTarget::ExternalName(ExternalName::LibCall(l)) => Target::LibCall(*l),
                FinalizedRelocTarget::ExternalName(other) => {
                    return Err(RelocError::Name {
                        what: format!("{other:?}"),
                    })
                }
                FinalizedRelocTarget::Func(offset) => Target::SelfOffset(*offset),
            };
            // only absolute relocations are kept on disk (the others depend on where the code is)
            persistable &= r.kind == Reloc::Abs8 || matches!(target, Target::SelfOffset(_));
            out.push(Relocation {
                offset: r.offset,
                kind: r.kind,
                target,
                addend: r.addend,
            });
        }
        Ok(Code {
            bytes: bytes.to_vec(),
            align,
            relocs: out,
            persistable,
        })
    }

    /// The bytes with every block symbol's address written in, and the relocations left for the module
    /// (library calls, offsets in the code) as the module's relocations of function `id`.
    pub fn patched(&self, syms: &Symbols, id: FuncId) -> Result<(Vec<u8>, Vec<ModuleReloc>), RelocError> {
        let mut bytes = self.bytes.clone();
        let mut rest = Vec::new();
        for r in &self.relocs {
            match r.target {
                Target::Sym(index) => {
                    let address = syms.address(index).ok_or(RelocError::NoSymbol {
                        offset: r.offset,
                        index,
                        symbols: syms.len(),
                    })?;
                    if r.kind != Reloc::Abs8 {
                        return Err(RelocError::Kind {
                            offset: r.offset,
                            kind: r.kind,
                        });
                    }
                    let at = r.offset as usize;
                    let slot = bytes.get_mut(at..at + 8).ok_or(RelocError::Outside {
                        offset: r.offset,
                        len: self.bytes.len(),
                    })?;
                    slot.copy_from_slice(&address.wrapping_add(r.addend as u64).to_le_bytes());
                }
                Target::LibCall(l) => rest.push(ModuleReloc {
                    offset: r.offset,
                    kind: r.kind,
                    name: ModuleRelocTarget::LibCall(l),
                    addend: r.addend,
                }),
                Target::SelfOffset(o) => rest.push(ModuleReloc {
                    offset: r.offset,
                    kind: r.kind,
                    name: ModuleRelocTarget::FunctionOffset(id, o),
                    addend: r.addend,
                }),
            }
            if (r.offset as usize).saturating_add(8) > self.bytes.len() && r.kind == Reloc::Abs8 {
                return Err(RelocError::Outside {
                    offset: r.offset,
                    len: self.bytes.len(),
                });
            }
        }
        Ok((bytes, rest))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    extern "C" fn interpret(_: *mut crate::ctx::Ctx, _: *const Inst, _: u64) -> u32 {
        0
    }

    #[test]
    fn symbols_are_listed_in_the_order_of_their_numbers() {
        let f = interpret as extern "C" fn(*mut crate::ctx::Ctx, *const Inst, u64) -> u32;
        let syms = Symbols::of(&[], &[], f, Some(f));
        assert_eq!(syms.address(Sym::Interpret.index()), Some(f as usize as u64));
        assert_eq!(
            syms.address(Sym::WaveCall.index()),
            Some(crate::call::wave_call as *const () as u64)
        );
        assert_eq!(syms.address(Sym::MaskTable.index()), Some(MASK_TABLE.as_ptr() as u64));
        assert_eq!(
            syms.address(Sym::MfmaRegisters.index()),
            Some(crate::call::mfma_registers as *const () as u64)
        );
        assert_eq!(syms.len() as u32, Sym::Call(0).index());
        // an address inside the mask table is the table plus an addend
        assert_eq!(
            syms.find(MASK_TABLE.as_ptr() as u64 + 48),
            Some((Sym::MaskTable.index(), 48))
        );
    }
}

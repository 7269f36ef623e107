//! What a block knows across its instructions ([`RegCache`]), and the reads of the vector register files:
//! range checks, the known and pending values a read takes, and keeping a value read before the register is
//! written (settling).

use cranelift_codegen::ir::{InstBuilder, InstructionData, Opcode, Value, ValueDef};
use cranelift_frontend::FunctionBuilder;

use emu_core::sem::Backend;

use crate::backend::ir::{dummy, vflags};
use crate::backend::memory::lds::LdsPattern;
use crate::backend::refused::OUTSIDE_FILE;
use crate::backend::types::{JitBackend, Lazy, Vv, CHUNKS, I32X4};
use crate::ctx::{Ctx, KEEP, PARKED};

/// Register numbers from here on are past the architectural files (256 + a few for multi-dword operands):
/// they come only from invalid encodings, whose instructions are left to the interpreter.
pub(super) const FILE_REGS: u32 = 272;

/// Key of an LDS address pattern in the block's cache: a register (until it is written).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum PatternKey {
    Reg(i32, u32),
}

/// What the block being compiled knows across instructions: the lane patterns of LDS address vectors. Vector
/// register values are not kept (every read loads where it is used: see [`Vv`]); the block compiler clears the
/// cache where code it does not see runs (interpreter fallbacks) and at a loop's head.
///
/// It also holds the block's *deferred register writes*: consecutive instructions that only compute on
/// registers ([`crate::compile::defers`]) leave their vector register writes pending, as lazy expressions over
/// the registers as they were before the first of them (a later read of a pending register gets its
/// expression), and the block writes them all at once, in one loop over the chunks ([`JitBackend::flush`]):
/// chunk i of every pending register is computed from chunk i of the registers, and each value that feeds
/// several is computed once, so a chain of instructions keeps its values in host registers instead of storing
/// and reloading each one.
#[derive(Default)]
pub struct RegCache<'f> {
    /// The lane pattern of LDS address vectors already classified, so each read or write through the same
    /// address register reuses it (dropped when the register is written).
    pub(super) lds: std::collections::HashMap<PatternKey, LdsPattern>,
    /// Registers (file field, number) written with lanes known while translating, and the lane mask of the
    /// write: they hold those lanes there until written again.
    pub(super) known: Vec<((i32, u32), Value, [u32; 64])>,
    /// The lazy vectors of the instructions since the last flush (the pending writes' expressions point here).
    pub(super) lazies: Vec<Lazy<'f>>,
    /// The constant vectors made so far in the block ([`Backend::v_const`], and lanes folded while translating):
    /// their chunks and lanes.
    pub(super) consts: Vec<([Value; CHUNKS], [u32; 64])>,
    /// Pending writes: (register file field, register) and the register's value, in the order first written.
    pub(super) pending: Vec<((i32, u32), Vv)>,
    /// The instruction being emitted defers its register writes.
    pub defer: bool,
    /// Parked slots taken by pending writes.
    pub(super) parked: usize,
    /// EXEC as loaded (or set) by an earlier instruction of the block and unchanged since: later instructions
    /// use the same value, so a pending write's lane mask can be recognised as today's EXEC.
    pub(super) exec: Option<Value>,
    /// The instruction being emitted is *lane-local*: each lane's results depend only on that lane's operands,
    /// and it writes nothing outside EXEC's lanes (its lane masks are ANDed with EXEC). Its reads of a register
    /// whose pending write covers EXEC's lanes take the written value alone ([`JitBackend::read_file`]).
    pub lane_local: bool,
    /// The instruction being emitted reads only EXEC's lanes of its vector registers and writes none outside
    /// them: lane-local ones, and the lane permutes that read their index and data in EXEC's lanes alone. Its
    /// reads of a register known in EXEC's lanes ([`RegCache::known`]) take the known lanes.
    pub exec_lanes: bool,
    /// Lane masks the same in every lane (all lanes or none): compares and carries of wave-uniform operands.
    pub(super) uniform_masks: Vec<Value>,
    /// Lane masks ANDed from such a mask and EXEC, as a carry or compare result is written: (the AND, the
    /// uniform mask, EXEC).
    pub(super) exec_masked: Vec<(Value, Value, Value)>,
    /// Lane masks split into their low and high halves (to be written to an SGPR pair): (low, high, the mask).
    pub(super) halves: Vec<(Value, Value, Value)>,
    /// SGPRs (slots) an earlier instruction set to one of those halves on the block's main path, unchanged since:
    /// a read takes the value written, so that the mask read back from the pair is the mask written.
    pub(super) sgpr_halves: Vec<(usize, Value)>,
}

impl RegCache<'_> {
    /// Forgets what the block knows about registers, as where code it does not see runs.
    pub fn clear(&mut self) {
        self.lds.clear();
        self.known.clear();
        self.exec = None;
        self.sgpr_halves.clear();
    }

    /// A register is written: what was known of it no longer holds.
    pub(super) fn written(&mut self, field: i32, reg: u32) {
        self.lds.remove(&PatternKey::Reg(field, reg));
        self.known.retain(|(k, _, _)| *k != (field, reg));
    }

    /// Whether there are pending writes.
    pub fn pending(&self) -> bool {
        !self.pending.is_empty()
    }

    /// Parked slots still free: an instruction that defers its writes needs up to four.
    pub fn parked_free(&self) -> usize {
        PARKED - self.parked
    }
}

/// Whether lane mask `m` has no lanes outside mask `w`, as far as their definitions show (`depth` ANDs deep):
/// `w` itself, or an AND (an AND NOT's first operand) of such a mask, as EXEC narrowed by s_and_saveexec is.
pub(super) fn within(b: &FunctionBuilder<'_>, m: Value, w: Value, depth: u32) -> bool {
    if m == w {
        return true;
    }
    let dfg = &b.func.dfg;
    let ValueDef::Result(inst, 0) = dfg.value_def(dfg.resolve_aliases(m)) else {
        return false;
    };
    match dfg.insts[inst] {
        InstructionData::Binary {
            opcode: Opcode::Band,
            args,
        } if depth > 0 => args.iter().any(|&a| within(b, a, w, depth - 1)),
        InstructionData::Binary {
            opcode: Opcode::BandNot,
            args,
        } if depth > 0 => within(b, args[0], w, depth - 1),
        _ => false,
    }
}

impl<'a, 'f> JitBackend<'a, 'f> {
    /// Before register `reg` of the file at `field` is written: reads of it handed out earlier in this
    /// instruction keep the value they read — copied to a keep slot of the context (or, with none left, loaded
    /// into SSA values).
    pub(super) fn settle(&mut self, field: i32, reg: u32) {
        self.settle_except(field, reg, &[]);
    }

    /// [`Self::settle`], but for the lazy vectors in `except` (read in place by the write itself).
    pub(super) fn settle_except(&mut self, field: i32, reg: u32, except: &[usize]) {
        let pending: Vec<usize> = self
            .lazies
            .iter()
            .enumerate()
            .filter(|(k, l)| {
                !except.contains(k)
                    && matches!(l, Lazy::Reg { field: f, reg: r, kept: None, loaded: None } if *f == field && *r == reg)
            })
            .map(|(k, _)| k)
            .collect();
        for k in pending {
            let base = self.reg_base(field, reg);
            let ctx = self.ctx;
            let slot = (self.kept < KEEP).then_some(self.kept);
            let b = &mut *self.b;
            let mut vals = [dummy(); CHUNKS];
            for (i, x) in vals.iter_mut().enumerate() {
                *x = b.ins().load(I32X4, vflags(), base, 16 * i as i32);
                if let Some(slot) = slot {
                    b.ins()
                        .store(vflags(), *x, ctx, Ctx::KEEP + (256 * slot + 16 * i) as i32);
                }
            }
            if let Lazy::Reg { kept, loaded, .. } = &mut self.lazies[k] {
                match slot {
                    Some(slot) => *kept = Some(slot),
                    None => *loaded = Some(vals),
                }
            }
            if slot.is_some() {
                self.kept += 1;
            }
        }
        self.cache.written(field, reg);
    }

    /// The address of register `reg` in the file at `field`, from the base loaded at the instruction's start.
    pub(super) fn reg_base(&mut self, field: i32, reg: u32) -> Value {
        let (v, a) = self.file_base;
        let base = if field == Ctx::AGPRS { a } else { v };
        let b = &mut *self.b;
        b.ins().iadd_imm(base, reg as i64 * 256)
    }

    /// Register `reg` of the VGPR or AGPR file (`base_field`): range-checked and counted for sizing the file,
    /// then read (a placeholder for a number outside the file).
    pub(super) fn read_file(&mut self, base_field: i32, reg: u32) -> Vv {
        if !self.note_reg(base_field, reg) {
            return self.dv();
        }
        if let Some(lanes) = self.known_on_exec(base_field, reg) {
            return self.v_const(&lanes);
        }
        if let Some(v) = self.written_on_exec(base_field, reg) {
            return v;
        }
        self.load_reg(base_field, reg)
    }

    /// In a lane-local instruction ([`RegCache::lane_local`]), the value of a register's pending write made
    /// under today's EXEC: the register holds it in every lane the instruction computes, so the blend with what
    /// the register held before is left out (a value written from scalars stays one scalar).
    fn written_on_exec(&self, field: i32, reg: u32) -> Option<Vv> {
        let c = &*self.cache;
        if !(c.defer && c.lane_local) {
            return None;
        }
        self.pending_under(field, reg, c.exec?).map(|(new, _)| new)
    }

    /// In an instruction that reads only EXEC's lanes ([`RegCache::exec_lanes`]), the lanes of a register an
    /// earlier instruction of the block wrote with known lanes under today's EXEC (see [`RegCache::known`]).
    fn known_on_exec(&self, field: i32, reg: u32) -> Option<[u32; 64]> {
        let c = &*self.cache;
        if !c.exec_lanes {
            return None;
        }
        self.known_under(field, reg, c.exec?)
    }

    /// The lanes register `reg` of the file at `field` holds in the lanes of mask `m`, where an earlier write
    /// gave it known lanes under a mask that holds `m`'s lanes.
    fn known_under(&self, field: i32, reg: u32, m: Value) -> Option<[u32; 64]> {
        let b = &*self.b;
        self.cache
            .known
            .iter()
            .find(|(k, w, _)| *k == (field, reg) && within(b, m, *w, 4))
            .map(|(_, _, lanes)| *lanes)
    }

    /// The pending write of register `reg` of the file at `field` when it was made under lane mask `m`: its
    /// value in those lanes and the register's value before it.
    pub(super) fn pending_under(&self, field: i32, reg: u32, m: Value) -> Option<(Vv, Vv)> {
        let (_, v) = self.cache.pending.iter().find(|(k, _)| *k == (field, reg))?;
        match &self.lazies[v.lazy? as usize] {
            Lazy::Blend { m: pm, new, old } if *pm == m => Some((*new, *old)),
            _ => None,
        }
    }

    /// Writes register `reg` of the VGPR or AGPR file, as [`Self::read_file`] reads it.
    pub(super) fn write_file(&mut self, base_field: i32, reg: u32, v: Vv, m: Value) {
        if self.note_reg(base_field, reg) {
            self.store_reg(base_field, reg, v, m);
        }
    }

    /// Checks `reg` against the file and records it for sizing the file; false for numbers outside it.
    fn note_reg(&mut self, base_field: i32, reg: u32) -> bool {
        if !self.reg_ok(reg) {
            return false;
        }
        let used = if base_field == Ctx::AGPRS {
            &mut self.agprs_used
        } else {
            &mut self.vgprs_used
        };
        *used = (*used).max(reg + 1);
        true
    }

    pub(super) fn load_reg(&mut self, base_field: i32, reg: u32) -> Vv {
        if let Some((_, v)) = self.cache.pending.iter().find(|(k, _)| *k == (base_field, reg)) {
            return *v;
        }
        self.lazies.push(Lazy::Reg {
            field: base_field,
            reg,
            kept: None,
            loaded: None,
        });
        Vv {
            c: [dummy(); CHUNKS],
            uniform: None,
            lazy: Some(self.lazies.len() as u32 - 1),
        }
    }

    /// Whether `reg` is inside the register files ([`FILE_REGS`]); one outside is not emitted.
    fn reg_ok(&mut self, reg: u32) -> bool {
        if reg >= FILE_REGS {
            self.no(OUTSIDE_FILE);
            return false;
        }
        true
    }
}

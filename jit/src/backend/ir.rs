//! Cranelift IR helpers the backend's families share: memory flags, placeholders, block joins of vectors, lane
//! masks from mask bits, constants recognized in the IR, and [`Chunks`], the float rules' lane algebra over
//! `i32x4` chunks.

use cranelift_codegen::entity::EntityRef;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, InstBuilder, InstructionData, MemFlags, Opcode, Value, ValueDef};
use cranelift_frontend::FunctionBuilder;

use emu_core::rules;

use crate::backend::types::{Vv, CHUNKS, F32X4, I32X4};
use crate::ctx::MASK_TABLE;

pub(super) fn dummy() -> Value {
    Value::new(0)
}

pub(super) fn little() -> MemFlags {
    MemFlags::new().with_endianness(cranelift_codegen::ir::Endianness::Little)
}

pub(super) fn trusted() -> MemFlags {
    MemFlags::trusted()
}

/// Vector loads and stores: register files, context slots and memory are not promised 16-byte alignment.
pub(super) fn vflags() -> MemFlags {
    MemFlags::new().with_notrap()
}

/// The value of `v` where an `iconst` defines it.
pub(super) fn scalar_const(b: &FunctionBuilder<'_>, v: Value) -> Option<u32> {
    let dfg = &b.func.dfg;
    let ValueDef::Result(inst, 0) = dfg.value_def(dfg.resolve_aliases(v)) else {
        return None;
    };
    match dfg.insts[inst] {
        InstructionData::UnaryImm {
            opcode: Opcode::Iconst,
            imm,
        } => Some(imm.bits() as u32),
        _ => None,
    }
}

/// The `i32x4` lane mask (all ones where set) of the low 4 bits of `bits` (an `i64`), from [`MASK_TABLE`].
pub(super) fn mask_chunk(b: &mut FunctionBuilder<'_>, bits: Value) -> Value {
    let table = b.ins().iconst(types::I64, MASK_TABLE.as_ptr() as i64);
    let idx = b.ins().band_imm(bits, 15);
    let off = b.ins().imul_imm(idx, 16);
    let addr = b.ins().iadd(table, off);
    b.ins().load(I32X4, vflags(), addr, 0)
}

/// The `i32x4` lane mask of the chunk at byte offset `off` (an `i64`) of lane mask `m`: its bits 4 (off / 16)
/// and up, a shift by off / 4.
pub(super) fn mask_chunk_at(b: &mut FunctionBuilder<'_>, m: Value, off: Value) -> Value {
    let by = b.ins().ushr_imm(off, 2);
    let bits = b.ins().ushr(m, by);
    mask_chunk(b, bits)
}

/// An `i32x4` of zeros.
pub(super) fn zero_vec(b: &mut FunctionBuilder<'_>) -> Value {
    let z = b.ins().iconst(types::I32, 0);
    b.ins().splat(I32X4, z)
}

/// Sixteen-byte chunks of lanes (four i32 lanes) as the [`rules::LaneAlgebra`] the float rules are written
/// over: the rules' single definitions lowered to IR.
pub(super) struct Chunks<'b, 'f>(pub(super) &'b mut FunctionBuilder<'f>);

impl rules::LaneAlgebra for Chunks<'_, '_> {
    type W = Value;
    type C = Value;
    fn constant(&mut self, x: u32) -> Value {
        let c = self.0.ins().iconst(types::I32, x as i32 as i64);
        self.0.ins().splat(I32X4, c)
    }
    fn and(&mut self, a: Value, b: Value) -> Value {
        self.0.ins().band(a, b)
    }
    fn or(&mut self, a: Value, b: Value) -> Value {
        self.0.ins().bor(a, b)
    }
    fn xor(&mut self, a: Value, b: Value) -> Value {
        self.0.ins().bxor(a, b)
    }
    fn sub(&mut self, a: Value, b: Value) -> Value {
        self.0.ins().isub(a, b)
    }
    fn shr(&mut self, a: Value, n: u32) -> Value {
        self.0.ins().ushr_imm(a, n as i64)
    }
    fn gt_u(&mut self, a: Value, b: Value) -> Value {
        self.0.ins().icmp(IntCC::UnsignedGreaterThan, a, b)
    }
    fn both(&mut self, a: Value, b: Value) -> Value {
        self.0.ins().band(a, b)
    }
    fn select(&mut self, c: Value, a: Value, b: Value) -> Value {
        self.0.ins().bitselect(c, a, b)
    }
    fn fmin_ordered(&mut self, a: Value, b: Value) -> Value {
        // Cranelift's fmin is IEEE 754-2019 minimum: -0 below +0
        let (x, y) = (
            self.0.ins().bitcast(F32X4, little(), a),
            self.0.ins().bitcast(F32X4, little(), b),
        );
        let m = self.0.ins().fmin(x, y);
        self.0.ins().bitcast(I32X4, little(), m)
    }
    fn fmax_ordered(&mut self, a: Value, b: Value) -> Value {
        let (x, y) = (
            self.0.ins().bitcast(F32X4, little(), a),
            self.0.ins().bitcast(F32X4, little(), b),
        );
        let m = self.0.ins().fmax(x, y);
        self.0.ins().bitcast(I32X4, little(), m)
    }
}

/// Jumps to `join` passing `values`' chunks as its block parameters.
pub(super) fn jump_with(b: &mut FunctionBuilder<'_>, join: cranelift_codegen::ir::Block, values: &[Vv]) {
    let args: Vec<_> = values.iter().flat_map(|v| v.c).map(|x| x.into()).collect();
    b.ins().jump(join, &args);
}

/// Continues at `join` and returns its parameters as vectors (16 chunks each).
pub(super) fn join_vectors(b: &mut FunctionBuilder<'_>, join: cranelift_codegen::ir::Block) -> Vec<Vv> {
    b.switch_to_block(join);
    b.seal_block(join);
    let params = b.block_params(join).to_vec();
    params
        .chunks(CHUNKS)
        .map(|c| Vv {
            c: c.try_into().expect("16 chunks"),
            uniform: None,
            lazy: None,
        })
        .collect()
}

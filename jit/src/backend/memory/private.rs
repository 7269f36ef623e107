//! Private (scratch) accesses: a whole wave at one dword-aligned private offset reads or writes its rows
//! straight from host memory through the site's window; anything else the semantics' way.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, InstBuilder, MemFlags, Value};
use cranelift_frontend::FunctionBuilder;

use emu_core::sem::{Backend, ExecError};

use crate::backend::ir::{dummy, join_vectors, jump_with, trusted};
use crate::backend::types::{JitBackend, Vv, CHUNKS, I32X4};
use crate::ctx::Ctx;
use crate::ctx::{window_field, window_slot};

/// Whether every lane of `v` (materialized) equals the scalar `x`, as an i8.
fn all_lanes_equal(b: &mut FunctionBuilder<'_>, v: &Vv, x: Value) -> Value {
    let x = b.ins().splat(I32X4, x);
    let mut same = b.ins().icmp(IntCC::Equal, v.c[0], x);
    for c in &v.c[1..] {
        let e = b.ins().icmp(IntCC::Equal, *c, x);
        same = b.ins().band(same, e);
    }
    b.ins().vall_true(same)
}

impl<'a, 'f> JitBackend<'a, 'f> {
    /// A private access of `bytes` (whole dwords) by the lanes of `m`: where every lane is active at one
    /// private offset (`uniform` tells whether the lanes share one and gives it) that is dword-aligned and
    /// inside the lane's segment, the whole wave reads or writes one row of 64 dwords per dword of the access
    /// ([`emu_core::sem::SWIZZLE_ROW`]) straight from host memory when the site's window holds the rows (a stack
    /// slot, an unrolled private array, in a loop's later passes); with no lane active, nothing; any other
    /// access (and a fault) through `generic`, the semantics' way.
    fn private_rows(
        &mut self,
        bytes: u32,
        data: Option<&[Vv]>,
        m: Value,
        uniform: impl FnOnce(&mut FunctionBuilder<'f>) -> (Value, Value),
        generic: impl FnOnce(&mut Self, Option<&[Vv]>) -> Result<Vec<Vv>, ExecError>,
    ) -> Result<Vec<Vv>, ExecError> {
        let rows = (bytes / 4) as i64;
        let data: Option<Vec<Vv>> = data.map(|d| d.iter().map(|v| self.mat(*v)).collect());
        let outs = if data.is_some() { 0 } else { rows as usize };
        let ctx = self.ctx;
        let slot = window_slot(self.site.offset);
        let (fast, join, rel, wins) = {
            let b = &mut *self.b;
            // no lane (FLAT's private lanes, mostly): nothing to access
            let join = b.create_block();
            for _ in 0..outs * CHUNKS {
                b.append_block_param(join, I32X4);
            }
            let (none, some) = (b.create_block(), b.create_block());
            let empty = b.ins().icmp_imm(IntCC::Equal, m, 0);
            b.ins().brif(empty, none, &[], some, &[]);
            b.switch_to_block(none);
            b.seal_block(none);
            let zero = b.ins().iconst(types::I32, 0);
            let zero = b.ins().splat(I32X4, zero);
            let zeros: Vec<_> = (0..outs * CHUNKS).map(|_| zero.into()).collect();
            b.ins().jump(join, &zeros);
            b.switch_to_block(some);
            b.seal_block(some);
            let (same, first) = uniform(b);
            let full = b.ins().icmp_imm(IntCC::Equal, m, -1);
            let low = b.ins().band_imm(first, 3);
            let aligned = b.ins().icmp_imm(IntCC::Equal, low, 0);
            let ok = b.ins().band(same, full);
            let ok = b.ins().band(ok, aligned);
            // inside the lane's segment (the window, the wave's own segment, refuses a row past it as well)
            let lane_bytes = b.ins().load(types::I64, trusted(), ctx, Ctx::SCRATCH_LANE_BYTES);
            let first64 = b.ins().uextend(types::I64, first);
            let end = b.ins().iadd_imm(first64, bytes as i64);
            let inside = b.ins().icmp(IntCC::UnsignedLessThanOrEqual, end, lane_bytes);
            let ok = b.ins().band(ok, inside);
            let base = b.ins().load(types::I64, trusted(), ctx, Ctx::SCRATCH_BASE);
            let dword = b.ins().ushr_imm(first, 2);
            let dword = b.ins().uextend(types::I64, dword);
            let row = b.ins().imul_imm(dword, emu_core::sem::SWIZZLE_ROW);
            let addr = b.ins().iadd(base, row);
            let wins = b.ins().load(types::I64, trusted(), ctx, Ctx::WINDOWS);
            let start = b.ins().load(types::I64, trusted(), wins, window_field(slot, 0));
            let len = b.ins().load(types::I64, trusted(), wins, window_field(slot, 1));
            let rel = b.ins().isub(addr, start);
            let room = b.ins().iadd_imm(len, -rows * emu_core::sem::SWIZZLE_ROW);
            let short = b.ins().icmp_imm(IntCC::SignedLessThan, room, 0);
            let outside = b.ins().icmp(IntCC::UnsignedGreaterThan, rel, room);
            let bad = b.ins().bor(short, outside);
            let ok = b.ins().band_not(ok, bad);
            let (fast, slow) = (b.create_block(), b.create_block());
            b.ins().brif(ok, fast, &[], slow, &[]);
            b.switch_to_block(slow);
            b.seal_block(slow);
            (fast, join, rel, wins)
        };
        let slow_out = generic(self, data.as_deref())?;
        let slow_out: Vec<Vv> = slow_out.into_iter().map(|v| self.mat(v)).collect();
        let b = &mut *self.b;
        jump_with(b, join, &slow_out);
        b.switch_to_block(fast);
        b.seal_block(fast);
        let host = b.ins().load(types::I64, trusted(), wins, window_field(slot, 2));
        let at = b.ins().iadd(host, rel);
        let mut loaded = Vec::with_capacity(outs);
        for j in 0..rows as usize {
            let mut c = [dummy(); CHUNKS];
            for (i, x) in c.iter_mut().enumerate() {
                let off = (j as i64 * emu_core::sem::SWIZZLE_ROW) as i32 + 16 * i as i32;
                match &data {
                    Some(d) => {
                        b.ins().store(MemFlags::new(), d[j].c[i], at, off);
                    }
                    None => *x = b.ins().load(I32X4, MemFlags::new(), at, off),
                }
            }
            if data.is_none() {
                loaded.push(Vv {
                    c,
                    uniform: None,
                    lazy: None,
                });
            }
        }
        jump_with(b, join, &loaded);
        Ok(join_vectors(b, join))
    }

    /// [`Backend::scratch`].
    pub(in crate::backend) fn emit_scratch(&mut self) -> (Value, Value, Value) {
        // the wave's, in its context (set from the wave for every block)
        let ctx = self.ctx;
        let b = &mut *self.b;
        let base = b.ins().load(types::I64, trusted(), ctx, Ctx::SCRATCH_BASE);
        let lo = b.ins().ireduce(types::I32, base);
        let hi = b.ins().ushr_imm(base, 32);
        let hi = b.ins().ireduce(types::I32, hi);
        let lane_bytes = b.ins().load(types::I32, trusted(), ctx, Ctx::SCRATCH_LANE_BYTES);
        (lo, hi, lane_bytes)
    }

    /// [`Backend::private_access`].
    pub(in crate::backend) fn emit_private_access(
        &mut self,
        name: &'static str,
        p: Vv,
        bytes: u32,
        signed: bool,
        data: Option<&[Vv]>,
        m: Value,
    ) -> Result<Vec<Vv>, ExecError> {
        if bytes < 4 || self.observed {
            return emu_core::sem::private_access(self, name, p, bytes, signed, data, m);
        }
        let p = self.mat(p);
        // the lanes' one offset, when they have one
        let uniform = |b: &mut FunctionBuilder<'_>| {
            let first = b.ins().extractlane(p.c[0], 0);
            (all_lanes_equal(b, &p, first), first)
        };
        self.private_rows(bytes, data, m, uniform, |s, data| {
            emu_core::sem::private_access(s, name, p, bytes, signed, data, m)
        })
    }

    /// [`Backend::flat_access`].
    pub(in crate::backend) fn emit_flat_access(
        &mut self,
        inst: &isa_amdgpu::Inst,
        lo: Vv,
        hi: Vv,
        data: Option<&[Vv]>,
        m: Value,
    ) -> Result<Vec<Vv>, ExecError> {
        let bytes = inst.info.mem.bytes as u32;
        if bytes < 4 || self.observed {
            return emu_core::sem::flat_access(self, inst, lo, hi, data, m);
        }
        let (lo, hi) = (self.mat(lo), self.mat(hi));
        // FLAT_SCRATCH's offset into the wave's segment
        let fs = self.s_get(102);
        let (base, _, _) = self.scratch();
        let offset = inst.field(isa_amdgpu::encoding::Field::Offset) & 0xfff;
        // every lane in the private aperture at one address: that private offset
        let uniform = |b: &mut FunctionBuilder<'_>| {
            let first = b.ins().extractlane(lo.c[0], 0);
            let same = all_lanes_equal(b, &lo, first);
            let aperture = b.ins().iconst(types::I32, emu_core::sem::PRIVATE_APERTURE_HI as i64);
            let private = all_lanes_equal(b, &hi, aperture);
            let rel = b.ins().isub(fs, base);
            let p = b.ins().iadd(rel, first);
            let p = b.ins().iadd_imm(p, offset as i64);
            (b.ins().band(same, private), p)
        };
        self.private_rows(bytes, data, m, uniform, |s, data| {
            emu_core::sem::flat_access(s, inst, lo, hi, data, m)
        })
    }
}

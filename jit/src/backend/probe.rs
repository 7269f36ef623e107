//! The probe: whether the JIT can emit every operation an instruction needs, found by running the instruction's
//! semantics on a [`Backend`] that emits nothing (its values are placeholders). An instruction it refuses runs
//! on the interpreter; one it accepts is emitted by [`super::JitBackend`], which then meets none of the reasons
//! it refuses for ([`super::refused`]).
//!
//! The probe refuses the operations the JIT never emits, register numbers outside the files, and interpreter
//! calls whose operand counts, which the instruction decides, do not fit the context's call slots: an MFMA's
//! registers, a lane function's operands and results, a scalar memory access's dwords, an atomic's data. (The
//! emitter's other calls into the interpreter take a few operands, which always fit.)

use emu_core::image::{FormatAccess, ImageInst};
use emu_core::lanefn::LaneFn;
use emu_core::sem::{AtomicOp, Backend, Clock, Compare, ExecError, MaskOp, Mfma, SOp, VCvt, VOp, VOp64, VUn, VUn64};

use crate::backend::calls::call_fits;
use crate::backend::refused::{CALL_OPERANDS, GWS, IMAGE, INDEX_MODE, OUTSIDE_FILE, REAL_CLOCK, TYPED_BUFFER, VGPR_AT};
use crate::backend::regcache::FILE_REGS;

/// A backend that only finds out whether the JIT can emit an instruction (run the semantics on it, then look at
/// [`Probe::unsupported`]).
#[derive(Default)]
pub struct Probe {
    /// The first operation the JIT cannot emit, if any.
    pub unsupported: Option<&'static str>,
}

impl Probe {
    /// Records that `what` cannot be emitted.
    fn no(&mut self, what: &'static str) {
        if self.unsupported.is_none() {
            self.unsupported = Some(what);
        }
    }

    /// An interpreter call with these operand counts (as [`call_fits`] takes them).
    fn call(&mut self, vin: usize, sin: usize, min: usize, vout: usize, sout: usize, mout: usize) {
        if !call_fits(vin, sin, min, vout, sout, mout) {
            self.no(CALL_OPERANDS);
        }
    }

    /// A read or write of vector or accumulation register `reg`.
    fn reg(&mut self, reg: u32) {
        if reg >= FILE_REGS {
            self.no(OUTSIDE_FILE);
        }
    }
}

impl Backend for Probe {
    type S = ();
    type V = ();
    type M = ();

    fn s_const(&mut self, _x: u32) {}
    fn s_get(&mut self, _reg: u32) {}
    fn s_set(&mut self, _reg: u32, _v: ()) {}
    fn s_get_at(&mut self, _index: ()) {}
    fn s_set_at(&mut self, _index: (), _v: ()) {}
    fn s_op(&mut self, _op: SOp, _a: (), _b: ()) {}
    fn s_add_carry(&mut self, _a: (), _b: (), _carry_in: ()) -> ((), ()) {
        ((), ())
    }
    fn scc(&mut self) {}
    fn s_select(&mut self, _cond: (), _b: (), _a: ()) {}
    fn set_scc(&mut self, _v: ()) {}
    fn s_nonzero(&mut self, _v: ()) {}

    fn mask_from(&mut self, _lo: (), _hi: ()) {}
    fn mask_parts(&mut self, _m: ()) -> ((), ()) {
        ((), ())
    }
    fn exec(&mut self) {}
    fn set_exec(&mut self, _m: ()) {}

    fn v_get(&mut self, reg: u32) {
        self.reg(reg);
    }
    fn v_set(&mut self, reg: u32, _v: (), _m: ()) {
        self.reg(reg);
    }
    fn v_splat(&mut self, _s: ()) {}
    fn v_op(&mut self, _op: VOp, _a: (), _b: ()) {}
    fn v_fma_f32(&mut self, _a: (), _b: (), _c: ()) {}
    fn v_cmp(&mut self, _c: Compare, _a: (), _b: ()) {}
    fn v_add_carry(&mut self, _a: (), _b: (), _carry_in: Option<()>) -> ((), ()) {
        ((), ())
    }
    fn v_un(&mut self, _op: VUn, _a: ()) {}
    fn v_op64(&mut self, _op: VOp64, _a: ((), ()), _b: ((), ())) -> ((), ()) {
        ((), ())
    }
    fn v_un64(&mut self, _op: VUn64, _a: ((), ())) -> ((), ()) {
        ((), ())
    }
    fn v_fma_f64(&mut self, _a: ((), ()), _b: ((), ()), _c: ((), ())) -> ((), ()) {
        ((), ())
    }
    fn v_cvt(&mut self, _op: VCvt, _a: ((), ())) -> ((), ()) {
        ((), ())
    }
    fn v_cmp64(&mut self, _c: Compare, _a: ((), ()), _b: ((), ())) {}
    fn v_select(&mut self, _m: (), _a: (), _b: ()) {}
    fn v_mad_u64_u32(&mut self, _a: (), _b: (), _c: ((), ()), _signed: bool) -> (((), ()), ()) {
        (((), ()), ())
    }
    fn v_sub_borrow(&mut self, _a: (), _b: (), _borrow_in: Option<()>) -> ((), ()) {
        ((), ())
    }
    fn mask_op(&mut self, _op: MaskOp, _a: (), _b: ()) {}

    fn s_shl64(&mut self, _lo: (), _hi: (), _amount: ()) -> ((), ()) {
        ((), ())
    }
    fn s_shr64(&mut self, _lo: (), _hi: (), _amount: (), _signed: bool) -> ((), ()) {
        ((), ())
    }
    fn v_shl64(&mut self, _lo: (), _hi: (), _amount: ()) -> ((), ()) {
        ((), ())
    }

    fn scratch(&mut self) -> ((), (), ()) {
        ((), (), ())
    }
    fn uniform_bit(&mut self, _s: (), _bit: u32, likely: bool) -> bool {
        // the JIT compiles the likely way (the other runs on the interpreter)
        likely
    }
    fn s_clock(&mut self, clock: Clock) -> ((), ()) {
        if clock != Clock::Shader {
            self.no(REAL_CLOCK);
        }
        ((), ())
    }
    fn index_mode(&mut self) -> bool {
        // compiled code never runs in index mode
        false
    }
    fn set_index_mode(&mut self, _on: bool) {
        self.no(INDEX_MODE);
    }
    fn v_get_at(&mut self, _reg: ()) {
        self.no(VGPR_AT);
    }
    fn v_set_at(&mut self, _reg: (), _v: (), _m: ()) {
        self.no(VGPR_AT);
    }
    fn s_hwreg(&mut self, _reg: emu_core::hwreg::Held) {}
    fn s_set_mode(&mut self, _value: (), _mask: u32) -> Result<(), ExecError> {
        // checked when the code runs
        Ok(())
    }
    fn fail_if_any(&mut self, _bad: (), _err: ExecError) -> Result<(), ExecError> {
        // checked when the code runs
        Ok(())
    }
    fn s_interrupt(&mut self, _ctxid: ()) {}

    fn v_lane_read(&mut self, _v: (), _lane: ()) {}
    fn v_first_lane(&mut self, _v: (), _m: ()) {}
    fn v_permute(&mut self, _data: (), _index: (), _m: ()) {}
    fn v_permute_forward(&mut self, _data: (), _index: (), _m: ()) {}
    fn v_lane_ids(&mut self) {}
    fn v_const(&mut self, _values: &[u32; 64]) {}
    fn a_get(&mut self, reg: u32) {
        self.reg(reg);
    }
    fn a_set(&mut self, reg: u32, _v: (), _m: ()) {
        self.reg(reg);
    }
    fn v_mfma(&mut self, shape: Mfma, a: &[()], b: &[()], c: &[()]) -> Vec<()> {
        self.call(a.len() + b.len() + c.len(), 0, 0, shape.acc_regs(), 0, 0);
        vec![(); shape.acc_regs()]
    }
    fn v_buffer_format(
        &mut self,
        op: &FormatAccess,
        _word3: (),
        _lo: (),
        _hi: (),
        _data: &[()],
        _m: (),
    ) -> Result<Vec<()>, ExecError> {
        self.no(TYPED_BUFFER);
        Ok(vec![(); if op.load { op.data_regs() } else { 0 }])
    }
    fn v_image(
        &mut self,
        op: &ImageInst,
        _t: [(); 8],
        _s: [(); 4],
        _addr: &[()],
        _data: &[()],
        _m: (),
    ) -> Result<Vec<()>, ExecError> {
        self.no(IMAGE);
        Ok(vec![(); op.data_regs()])
    }
    fn v_lanefn(&mut self, f: LaneFn, args: &[()]) -> Vec<()> {
        self.call(args.len(), 0, 0, f.outputs(), 0, 0);
        vec![(); f.outputs()]
    }
    fn s_lanefn(&mut self, f: LaneFn, args: &[()]) -> Vec<()> {
        self.call(0, args.len(), 0, 0, f.outputs(), 0);
        vec![(); f.outputs()]
    }
    fn gws_barrier(&mut self, _count: ()) {
        self.no(GWS);
    }
    fn gws_sema(&mut self, _op: emu_core::gws::SemaOp, _m0: (), _offset0: u32, _value: ()) {
        self.no(GWS);
    }
    fn s_popcount64(&mut self, _lo: (), _hi: ()) {}

    fn lds_atomic(&mut self, _op: AtomicOp, _addr: (), _offset: u32, _data: (), _m: ()) -> Result<(), ExecError> {
        Ok(())
    }
    fn v_atomic_cmpswap(
        &mut self,
        _lo: (),
        _hi: (),
        _offset: i64,
        src: &[()],
        cmp: &[()],
        _m: (),
    ) -> Result<Vec<()>, ExecError> {
        self.call(2 + src.len() + cmp.len(), 0, 1, src.len(), 0, 0);
        Ok(vec![(); src.len()])
    }
    fn v_atomic(&mut self, _op: AtomicOp, _lo: (), _hi: (), _offset: i64, _data: (), _m: ()) -> Result<(), ExecError> {
        Ok(())
    }
    fn v_load_narrow(
        &mut self,
        _lo: (),
        _hi: (),
        _offset: i64,
        _bytes: u32,
        _signed: bool,
        _m: (),
    ) -> Result<(), ExecError> {
        Ok(())
    }
    fn v_store_narrow(
        &mut self,
        _lo: (),
        _hi: (),
        _offset: i64,
        _bytes: u32,
        _data: (),
        _m: (),
    ) -> Result<(), ExecError> {
        Ok(())
    }

    fn lds_read(&mut self, _addr: (), _offset: u32, dwords: u32, _m: ()) -> Result<Vec<()>, ExecError> {
        Ok(vec![(); dwords as usize])
    }
    fn lds_read_narrow(
        &mut self,
        _addr: (),
        _offset: u32,
        _bytes: u32,
        _signed: bool,
        _m: (),
    ) -> Result<(), ExecError> {
        Ok(())
    }
    fn lds_write_narrow(&mut self, _addr: (), _offset: u32, _bytes: u32, _data: (), _m: ()) -> Result<(), ExecError> {
        Ok(())
    }
    fn lds_atomic64(
        &mut self,
        _op: AtomicOp,
        _addr: (),
        _offset: u32,
        _data: ((), ()),
        _m: (),
    ) -> Result<((), ()), ExecError> {
        Ok(((), ()))
    }
    fn lds_atomic2(
        &mut self,
        _op: AtomicOp,
        _addr: (),
        _offset: u32,
        a: &[()],
        b: &[()],
        _m: (),
    ) -> Result<Vec<()>, ExecError> {
        self.call(1 + a.len() + b.len(), 0, 1, a.len(), 0, 0);
        Ok(vec![(); a.len()])
    }
    fn v_atomic64(
        &mut self,
        _op: AtomicOp,
        _lo: (),
        _hi: (),
        _offset: i64,
        _data: ((), ()),
        _m: (),
    ) -> Result<((), ()), ExecError> {
        Ok(((), ()))
    }
    fn lds_write(&mut self, _addr: (), _offset: u32, _data: &[()], _m: ()) -> Result<(), ExecError> {
        Ok(())
    }

    fn s_load(&mut self, _lo: (), _hi: (), dwords: u32) -> Result<Vec<()>, ExecError> {
        self.call(0, 2, 0, 0, dwords as usize, 0);
        Ok(vec![(); dwords as usize])
    }
    fn s_load_part(&mut self, _lo: (), _hi: (), dwords: u32, _valid: ()) -> Result<Vec<()>, ExecError> {
        self.call(0, 3, 0, 0, dwords as usize, 0);
        Ok(vec![(); dwords as usize])
    }
    fn s_store(&mut self, _lo: (), _hi: (), data: &[()], _valid: ()) -> Result<(), ExecError> {
        self.call(0, 3 + data.len(), 0, 0, 0, 0);
        Ok(())
    }
    fn s_atomic(
        &mut self,
        _op: AtomicOp,
        _lo: (),
        _hi: (),
        data: &[()],
        _cmp: &[()],
        _valid: (),
    ) -> Result<Vec<()>, ExecError> {
        // compare-and-swap passes its compare values, the others as many copies of the data
        self.call(0, 3 + 2 * data.len(), 0, 0, data.len(), 0);
        Ok(vec![(); data.len()])
    }
    fn v_load(&mut self, _lo: (), _hi: (), _offset: i64, dwords: u32, _m: ()) -> Result<Vec<()>, ExecError> {
        Ok(vec![(); dwords as usize])
    }
    fn v_store(&mut self, _lo: (), _hi: (), _offset: i64, _data: &[()], _m: ()) -> Result<(), ExecError> {
        Ok(())
    }
}

//! The interpreter: [`Backend`] over a live wave, computing whole-wave arrays at once.
//!
//! The [`Backend`] implementation is here; the interpreter's memory accesses (checked, noted for an observer,
//! images' texels through them) are in [`access`], its whole-wave arithmetic in [`lanes`].

mod access;
mod lanes;
#[cfg(test)]
mod tests;

use crate::image::{FormatAccess, ImageInst, ImageKind, Resource, Sampler};
use crate::lanefn::float::ldexp;
use crate::lanefn::LaneFn;
use crate::memory::DeviceMemory;
use crate::observe::{LaneAccess, Space};
use crate::sem::{AtomicOp, Backend, Compare, ExecError, MaskOp, Mfma, SOp, VCvt, VOp, VOp64, VUn, VUn64};
use crate::wave::{Lanes, WaveState, LANES};
use access::{atomic32, atomic64, lane_address, lds_address, LaneTexels};
use lanes::{f, nan2, nan2_64};
pub use lanes::{v_op_lanes, v_un_lanes};

/// A wave being interpreted, with the memory it reads and writes.
pub struct Interp<'a> {
    pub wave: &'a mut WaveState,
    pub mem: &'a DeviceMemory,
    /// The workgroup's LDS.
    pub lds: &'a mut [u8],
    /// Mnemonic of the instruction being executed (for fault reports).
    pub mnemonic: &'static str,
    /// Where to record each lane's memory accesses, for an observer that asks for them.
    pub accesses: Option<&'a mut Vec<LaneAccess>>,
}

impl Backend for Interp<'_> {
    type S = u32;
    type V = Lanes;
    type M = u64;

    fn s_const(&mut self, x: u32) -> u32 {
        x
    }
    fn s_get(&mut self, reg: u32) -> u32 {
        match crate::wave::sgpr_slot(reg) {
            Some(i) => self.wave.sgprs[i],
            None => 0,
        }
    }
    fn s_set(&mut self, reg: u32, v: u32) {
        if let Some(i) = crate::wave::sgpr_slot(reg) {
            self.wave.sgprs[i] = v;
        }
    }
    fn s_get_at(&mut self, index: u32) -> u32 {
        self.s_get(index & 127)
    }
    fn s_set_at(&mut self, index: u32, v: u32) {
        self.s_set(index & 127, v)
    }
    fn s_op(&mut self, op: SOp, a: u32, b: u32) -> u32 {
        match op {
            SOp::Add => a.wrapping_add(b),
            SOp::Sub => a.wrapping_sub(b),
            SOp::Mul => a.wrapping_mul(b),
            SOp::MulHiU32 => ((a as u64 * b as u64) >> 32) as u32,
            SOp::MulHiI32 => ((a as i32 as i64 * b as i32 as i64) >> 32) as u32,
            SOp::And => a & b,
            SOp::Or => a | b,
            SOp::Xor => a ^ b,
            SOp::Shl => a.wrapping_shl(b & 31),
            SOp::Lshr => a.wrapping_shr(b & 31),
            SOp::Ashr => ((a as i32) >> (b & 31)) as u32,
            SOp::LtU => (a < b) as u32,
            SOp::LtI => ((a as i32) < (b as i32)) as u32,
            SOp::Eq => (a == b) as u32,
            SOp::Brev => a.reverse_bits(),
            SOp::Ff1 => {
                if a == 0 {
                    u32::MAX
                } else {
                    a.trailing_zeros()
                }
            }
        }
    }
    fn s_add_carry(&mut self, a: u32, b: u32, carry_in: u32) -> (u32, u32) {
        let s = a as u64 + b as u64 + (carry_in & 1) as u64;
        (s as u32, (s >> 32) as u32)
    }
    fn s_select(&mut self, cond: u32, b: u32, a: u32) -> u32 {
        if cond & 1 == 1 {
            b
        } else {
            a
        }
    }
    fn scc(&mut self) -> u32 {
        self.wave.scc as u32
    }
    fn set_scc(&mut self, v: u32) {
        self.wave.scc = v & 1 == 1;
    }
    fn s_nonzero(&mut self, v: u32) -> u32 {
        (v != 0) as u32
    }

    fn mask_from(&mut self, lo: u32, hi: u32) -> u64 {
        lo as u64 | (hi as u64) << 32
    }
    fn mask_parts(&mut self, m: u64) -> (u32, u32) {
        (m as u32, (m >> 32) as u32)
    }
    fn exec(&mut self) -> u64 {
        self.wave.exec()
    }
    fn set_exec(&mut self, m: u64) {
        self.wave.set_exec(m);
    }

    fn v_get(&mut self, reg: u32) -> Lanes {
        self.wave.vgprs.get(reg as usize).copied().unwrap_or([0; LANES])
    }
    fn v_set(&mut self, reg: u32, v: Lanes, m: u64) {
        let n = self.wave.vgprs.len();
        if reg as usize >= n {
            // beyond the kernel's allocation: the hardware would clobber another wave; wavejit grows the file
            self.wave.vgprs.resize(reg as usize + 1, [0; LANES]);
        }
        let dst = &mut self.wave.vgprs[reg as usize];
        if m == u64::MAX {
            *dst = v;
        } else {
            for l in Self::lanes(m) {
                dst[l] = v[l];
            }
        }
    }
    fn v_splat(&mut self, s: u32) -> Lanes {
        [s; LANES]
    }
    fn v_op(&mut self, op: VOp, a: Lanes, b: Lanes) -> Lanes {
        v_op_lanes(op, &a, &b)
    }
    fn v_fma_f32(&mut self, a: Lanes, b: Lanes, c: Lanes) -> Lanes {
        let mut r = [0u32; LANES];
        for i in 0..LANES {
            r[i] = nan2(
                a[i],
                b[i],
                nan2(c[i], c[i], f(a[i]).mul_add(f(b[i]), f(c[i])).to_bits()),
            );
        }
        r
    }
    fn v_cmp(&mut self, c: Compare, a: Lanes, b: Lanes) -> u64 {
        crate::rules::compare_lanes(c, LANES, |i| (a[i] as u64, b[i] as u64))
    }
    fn v_add_carry(&mut self, a: Lanes, b: Lanes, carry_in: Option<u64>) -> (Lanes, u64) {
        let cin = carry_in.unwrap_or(0);
        let mut r = [0u32; LANES];
        let mut carry = 0u64;
        for i in 0..LANES {
            let s = a[i] as u64 + b[i] as u64 + (cin >> i & 1);
            r[i] = s as u32;
            carry |= (s >> 32) << i;
        }
        (r, carry)
    }
    fn v_un(&mut self, op: VUn, a: Lanes) -> Lanes {
        v_un_lanes(op, &a)
    }
    fn v_op64(&mut self, op: VOp64, a: (Lanes, Lanes), b: (Lanes, Lanes)) -> (Lanes, Lanes) {
        let mut r = ([0u32; LANES], [0u32; LANES]);
        for i in 0..LANES {
            let x = (a.1[i] as u64) << 32 | a.0[i] as u64;
            let y = (b.1[i] as u64) << 32 | b.0[i] as u64;
            let d = |v: u64| f64::from_bits(v);
            let v = match op {
                VOp64::AddF64 => nan2_64(x, y, (d(x) + d(y)).to_bits()),
                VOp64::MulF64 => nan2_64(x, y, (d(x) * d(y)).to_bits()),
                VOp64::AddU64 => x.wrapping_add(y),
                VOp64::Lshr => x >> (y & 63),
                VOp64::Ashr => ((x as i64) >> (y & 63)) as u64,
                VOp64::LdexpF64 => ldexp(d(x), y as u32 as i32).to_bits(),
            };
            r.0[i] = v as u32;
            r.1[i] = (v >> 32) as u32;
        }
        r
    }
    fn v_un64(&mut self, op: VUn64, a: (Lanes, Lanes)) -> (Lanes, Lanes) {
        let mut r = ([0u32; LANES], [0u32; LANES]);
        for i in 0..LANES {
            let x = f64::from_bits((a.1[i] as u64) << 32 | a.0[i] as u64);
            let v = match op {
                VUn64::TruncF64 => x.trunc(),
                VUn64::FloorF64 => x.floor(),
                VUn64::RcpF64 => 1.0 / x,
                VUn64::SqrtF64 => x.sqrt(),
            }
            .to_bits();
            r.0[i] = v as u32;
            r.1[i] = (v >> 32) as u32;
        }
        r
    }
    fn v_fma_f64(&mut self, a: (Lanes, Lanes), b: (Lanes, Lanes), c: (Lanes, Lanes)) -> (Lanes, Lanes) {
        let mut r = ([0u32; LANES], [0u32; LANES]);
        let get = |p: &(Lanes, Lanes), i: usize| f64::from_bits((p.1[i] as u64) << 32 | p.0[i] as u64);
        for i in 0..LANES {
            let bits = |p: &(Lanes, Lanes)| (p.1[i] as u64) << 32 | p.0[i] as u64;
            let v = get(&a, i).mul_add(get(&b, i), get(&c, i)).to_bits();
            let v = nan2_64(bits(&a), bits(&b), nan2_64(bits(&c), bits(&c), v));
            r.0[i] = v as u32;
            r.1[i] = (v >> 32) as u32;
        }
        r
    }
    fn v_cvt(&mut self, op: VCvt, a: (Lanes, Lanes)) -> (Lanes, Lanes) {
        let mut r = ([0u32; LANES], [0u32; LANES]);
        for i in 0..LANES {
            let x64 = f64::from_bits((a.1[i] as u64) << 32 | a.0[i] as u64);
            let wide = |v: f64, r: &mut (Lanes, Lanes)| {
                let b = v.to_bits();
                r.0[i] = b as u32;
                r.1[i] = (b >> 32) as u32;
            };
            match op {
                VCvt::F64FromU32 => wide(a.0[i] as f64, &mut r),
                VCvt::F64FromI32 => wide(a.0[i] as i32 as f64, &mut r),
                VCvt::F64FromF32 => wide(f(a.0[i]) as f64, &mut r),
                VCvt::U32FromF64 => r.0[i] = x64 as u32,
                VCvt::I32FromF64 => r.0[i] = x64 as i32 as u32,
                VCvt::F32FromF64 => r.0[i] = (x64 as f32).to_bits(),
            }
        }
        r
    }
    fn v_cmp64(&mut self, c: Compare, a: (Lanes, Lanes), b: (Lanes, Lanes)) -> u64 {
        crate::rules::compare_lanes(c, LANES, |i| {
            (
                (a.1[i] as u64) << 32 | a.0[i] as u64,
                (b.1[i] as u64) << 32 | b.0[i] as u64,
            )
        })
    }
    fn v_select(&mut self, m: u64, a: Lanes, b: Lanes) -> Lanes {
        let mut r = a;
        for l in Self::lanes(m) {
            r[l] = b[l];
        }
        r
    }
    fn v_mad_u64_u32(&mut self, a: Lanes, b: Lanes, c: (Lanes, Lanes), signed: bool) -> ((Lanes, Lanes), u64) {
        let mut r = ([0u32; LANES], [0u32; LANES]);
        let mut carry = 0u64;
        for i in 0..LANES {
            let acc = (c.1[i] as u64) << 32 | c.0[i] as u64;
            let (v, over) = if signed {
                let p = a[i] as i32 as i128 * b[i] as i32 as i128 + acc as i64 as i128;
                (p as u64, p != (p as i64) as i128)
            } else {
                let p = a[i] as u128 * b[i] as u128 + acc as u128;
                (p as u64, p >> 64 != 0)
            };
            r.0[i] = v as u32;
            r.1[i] = (v >> 32) as u32;
            carry |= (over as u64) << i;
        }
        (r, carry)
    }
    fn v_sub_borrow(&mut self, a: Lanes, b: Lanes, borrow_in: Option<u64>) -> (Lanes, u64) {
        let bin = borrow_in.unwrap_or(0);
        let mut r = [0u32; LANES];
        let mut borrow = 0u64;
        for i in 0..LANES {
            let d = a[i] as i64 - b[i] as i64 - (bin >> i & 1) as i64;
            r[i] = d as u32;
            borrow |= ((d < 0) as u64) << i;
        }
        (r, borrow)
    }
    fn mask_op(&mut self, op: MaskOp, a: u64, b: u64) -> u64 {
        match op {
            MaskOp::And => a & b,
            MaskOp::Or => a | b,
            MaskOp::Xor => a ^ b,
            MaskOp::AndNot => a & !b,
        }
    }
    fn s_shr64(&mut self, lo: u32, hi: u32, amount: u32, signed: bool) -> (u32, u32) {
        let x = (hi as u64) << 32 | lo as u64;
        let v = if signed {
            ((x as i64) >> (amount & 63)) as u64
        } else {
            x >> (amount & 63)
        };
        (v as u32, (v >> 32) as u32)
    }
    fn s_shl64(&mut self, lo: u32, hi: u32, amount: u32) -> (u32, u32) {
        let v = ((hi as u64) << 32 | lo as u64) << (amount & 63);
        (v as u32, (v >> 32) as u32)
    }
    fn scratch(&mut self) -> (u32, u32, u32) {
        (
            self.wave.scratch_base as u32,
            (self.wave.scratch_base >> 32) as u32,
            self.wave.scratch_lane_bytes,
        )
    }
    fn uniform_bit(&mut self, s: u32, bit: u32, _likely: bool) -> bool {
        s >> bit & 1 == 1
    }
    fn s_clock(&mut self, clock: crate::sem::Clock) -> (u32, u32) {
        let v = self.wave.clock.read(clock, self.wave.executed);
        (v as u32, (v >> 32) as u32)
    }
    fn index_mode(&mut self) -> bool {
        self.wave.gpr_idx
    }
    fn set_index_mode(&mut self, on: bool) {
        self.wave.gpr_idx = on;
    }
    fn v_get_at(&mut self, reg: u32) -> Lanes {
        self.v_get(reg)
    }
    fn v_set_at(&mut self, reg: u32, v: Lanes, m: u64) {
        self.v_set(reg, v, m)
    }
    fn s_hwreg(&mut self, reg: crate::hwreg::Held) -> u32 {
        self.wave.hw.get(reg, self.wave.gpr_idx)
    }
    fn s_interrupt(&mut self, ctxid: u32) {
        crate::interrupt::raise(ctxid);
    }
    fn s_set_mode(&mut self, value: u32, mask: u32) -> Result<(), ExecError> {
        let old = self.wave.hw.get(crate::hwreg::Held::Mode, self.wave.gpr_idx);
        match crate::hwreg::mode_write(old, value, mask) {
            Ok(new) => {
                self.wave.hw.mode = new & !crate::hwreg::MODE_GPR_IDX_EN;
                Ok(())
            }
            Err((fd, value)) => Err(ExecError::ModeField {
                mnemonic: self.mnemonic,
                field: fd.name,
                value,
                why: fd.refused.unwrap_or_default(),
            }),
        }
    }
    fn fail_if_any(&mut self, bad: u64, err: ExecError) -> Result<(), ExecError> {
        if bad == 0 {
            return Ok(());
        }
        Err(match err {
            ExecError::Private { mnemonic, .. } => ExecError::Private {
                mnemonic,
                lane_bytes: self.wave.scratch_lane_bytes,
            },
            e => e,
        })
    }
    fn v_lane_read(&mut self, v: Lanes, lane: u32) -> u32 {
        v[(lane & 63) as usize]
    }
    fn v_first_lane(&mut self, v: Lanes, m: u64) -> u32 {
        v[if m == 0 { 0 } else { m.trailing_zeros() as usize }]
    }
    fn v_permute(&mut self, data: Lanes, index: Lanes, m: u64) -> Lanes {
        let mut r = [0u32; LANES];
        for l in 0..LANES {
            let src = (index[l] & 63) as usize;
            r[l] = if m >> src & 1 == 1 { data[src] } else { 0 };
        }
        r
    }
    fn v_permute_forward(&mut self, data: Lanes, index: Lanes, m: u64) -> Lanes {
        let mut r = [0u32; LANES];
        for l in Self::lanes(m) {
            r[(index[l] & 63) as usize] = data[l];
        }
        r
    }
    fn v_lane_ids(&mut self) -> Lanes {
        let mut r = [0u32; LANES];
        for (i, x) in r.iter_mut().enumerate() {
            *x = i as u32;
        }
        r
    }
    fn v_const(&mut self, values: &[u32; 64]) -> Lanes {
        *values
    }
    fn a_get(&mut self, reg: u32) -> Lanes {
        self.wave.agprs.get(reg as usize).copied().unwrap_or([0; LANES])
    }
    fn a_set(&mut self, reg: u32, v: Lanes, m: u64) {
        if reg as usize >= self.wave.agprs.len() {
            self.wave.agprs.resize(reg as usize + 1, [0; LANES]);
        }
        let dst = &mut self.wave.agprs[reg as usize];
        for l in Self::lanes(m) {
            dst[l] = v[l];
        }
    }
    fn v_mfma(&mut self, shape: Mfma, a: &[Lanes], b: &[Lanes], c: &[Lanes]) -> Vec<Lanes> {
        crate::sem::mfma_lanes(shape, a, b, c)
    }
    fn gws_barrier(&mut self, count: u32) {
        self.wave.gws = Some(count);
    }
    fn gws_sema(&mut self, op: crate::gws::SemaOp, m0: u32, offset0: u32, value: u32) {
        use crate::gws::SemaOp;
        let op = match op {
            SemaOp::Init(_) => SemaOp::Init(value),
            SemaOp::Br(_) => SemaOp::Br(value),
            op => op,
        };
        self.wave.sema = Some(crate::gws::SemaRequest {
            op,
            resource: crate::gws::resource_id(m0, offset0),
        });
    }
    fn v_buffer_format(
        &mut self,
        op: &FormatAccess,
        word3: u32,
        lo: Lanes,
        hi: Lanes,
        data: &[Lanes],
        m: u64,
    ) -> Result<Vec<Lanes>, ExecError> {
        let mnemonic = self.mnemonic;
        let (format, swizzle) = FormatAccess::format(word3).map_err(|what| ExecError::Image { mnemonic, what })?;
        let mut out = vec![[0u32; LANES]; if op.load { op.data_regs() } else { 0 }];
        for l in Self::lanes(m) {
            let d: Vec<u32> = data.iter().map(|v| v[l]).collect();
            let address = lane_address(&lo, &hi, l, 0);
            let mut mem = LaneTexels { interp: self, lane: l };
            let v = op.lane(&mut mem, &format, swizzle, address, &d)?;
            for (o, x) in out.iter_mut().zip(v) {
                o[l] = x;
            }
        }
        Ok(out)
    }
    fn v_image(
        &mut self,
        op: &ImageInst,
        t: [u32; 8],
        s: [u32; 4],
        addr: &[Lanes],
        data: &[Lanes],
        m: u64,
    ) -> Result<Vec<Lanes>, ExecError> {
        let mnemonic = self.mnemonic;
        let bad = |what: String| ExecError::Image { mnemonic, what };
        let r = Resource::decode(t).map_err(bad)?;
        let sampler = match op.kind {
            ImageKind::Sample | ImageKind::Gather => Some(Sampler::decode(s).map_err(bad)?),
            _ => None,
        };
        if sampler.is_some() && r.format.num.integer() && sampler.is_some_and(|s| s.linear) {
            return Err(bad(format!(
                "linear filtering of an integer ({:?}) image is not valid",
                r.format.num
            )));
        }
        op.check(&r).map_err(bad)?;
        let mut out = vec![[0u32; LANES]; op.result_regs(&r)];
        for l in Self::lanes(m) {
            let a: Vec<u32> = addr.iter().map(|v| v[l]).collect();
            let d: Vec<u32> = data.iter().map(|v| v[l]).collect();
            let mut mem = LaneTexels { interp: self, lane: l };
            let v = op.lane(&mut mem, &r, sampler.as_ref(), &a, &d)?;
            for (o, x) in out.iter_mut().zip(v) {
                o[l] = x;
            }
        }
        Ok(out)
    }
    fn v_lanefn(&mut self, f: LaneFn, args: &[Lanes]) -> Vec<Lanes> {
        let mut out = vec![[0u32; LANES]; f.outputs()];
        let (mut x, mut y) = ([0u32; 8], [0u32; 4]);
        for l in 0..LANES {
            for (i, a) in args.iter().enumerate() {
                x[i] = a[l];
            }
            f.eval(&x[..args.len()], &mut y[..out.len()]);
            for (o, v) in out.iter_mut().zip(y) {
                o[l] = v;
            }
        }
        out
    }
    fn s_lanefn(&mut self, f: LaneFn, args: &[u32]) -> Vec<u32> {
        let mut out = vec![0u32; f.outputs()];
        f.eval(args, &mut out);
        out
    }
    fn s_popcount64(&mut self, lo: u32, hi: u32) -> u32 {
        lo.count_ones() + hi.count_ones()
    }
    fn lds_atomic(&mut self, op: AtomicOp, addr: Lanes, offset: u32, data: Lanes, m: u64) -> Result<Lanes, ExecError> {
        let mut old = [0u32; LANES];
        for l in Self::lanes(m) {
            let a = lds_address(addr[l], offset);
            let r = self.lds_range(l, a, 1, crate::memory::Access::Write)?;
            let cell = &mut self.lds[r];
            let o = u32::from_le_bytes([cell[0], cell[1], cell[2], cell[3]]);
            cell.copy_from_slice(&atomic32(op, o, data[l]).to_le_bytes());
            old[l] = o;
        }
        Ok(old)
    }
    fn v_atomic(
        &mut self,
        op: AtomicOp,
        lo: Lanes,
        hi: Lanes,
        offset: i64,
        data: Lanes,
        m: u64,
    ) -> Result<Lanes, ExecError> {
        let mut old = [0u32; LANES];
        for l in Self::lanes(m) {
            let addr = lane_address(&lo, &hi, l, offset);
            let d = data[l];
            self.note(l, Space::Global, addr, 4, true);
            if self.dropped(op, addr, 4, l)? {
                continue;
            }
            let r = self.mem.atomic_u32(addr, |o| atomic32(op, o, d));
            old[l] = self.atomic(Some(l as u32), addr, 4, r)?;
        }
        Ok(old)
    }
    fn v_atomic_cmpswap(
        &mut self,
        lo: Lanes,
        hi: Lanes,
        offset: i64,
        src: &[Lanes],
        cmp: &[Lanes],
        m: u64,
    ) -> Result<Vec<Lanes>, ExecError> {
        let mut old = vec![[0u32; LANES]; src.len()];
        for l in Self::lanes(m) {
            let addr = lane_address(&lo, &hi, l, offset);
            self.note(l, Space::Global, addr, 4 * src.len() as u32, true);
            if src.len() == 1 {
                let (s, c) = (src[0][l], cmp[0][l]);
                let r = self.mem.atomic_u32(addr, |o| if o == c { s } else { o });
                old[0][l] = self.atomic(Some(l as u32), addr, 4, r)?;
            } else {
                let (s, c) = (
                    (src[1][l] as u64) << 32 | src[0][l] as u64,
                    (cmp[1][l] as u64) << 32 | cmp[0][l] as u64,
                );
                let r = self.mem.atomic_u64(addr, |o| if o == c { s } else { o });
                let o = self.atomic(Some(l as u32), addr, 8, r)?;
                (old[0][l], old[1][l]) = (o as u32, (o >> 32) as u32);
            }
        }
        Ok(old)
    }
    fn v_load_narrow(
        &mut self,
        lo: Lanes,
        hi: Lanes,
        offset: i64,
        bytes: u32,
        signed: bool,
        m: u64,
    ) -> Result<Lanes, ExecError> {
        let mut out = [0u32; LANES];
        for l in Self::lanes(m) {
            let addr = lane_address(&lo, &hi, l, offset);
            let mut b = [0u8; 2];
            self.note(l, Space::Global, addr, bytes, false);
            self.read(Some(l as u32), addr, &mut b[..bytes as usize])?;
            out[l] = match (bytes, signed) {
                (1, false) => b[0] as u32,
                (1, true) => b[0] as i8 as i32 as u32,
                (_, false) => u16::from_le_bytes(b) as u32,
                (_, true) => i16::from_le_bytes(b) as i32 as u32,
            };
        }
        Ok(out)
    }
    fn v_store_narrow(
        &mut self,
        lo: Lanes,
        hi: Lanes,
        offset: i64,
        bytes: u32,
        data: Lanes,
        m: u64,
    ) -> Result<(), ExecError> {
        for l in Self::lanes(m) {
            let addr = lane_address(&lo, &hi, l, offset);
            self.note(l, Space::Global, addr, bytes, true);
            self.write(Some(l as u32), addr, &data[l].to_le_bytes()[..bytes as usize])?;
        }
        Ok(())
    }
    fn lds_read(&mut self, addr: Lanes, offset: u32, dwords: u32, m: u64) -> Result<Vec<Lanes>, ExecError> {
        let mut out = vec![[0u32; LANES]; dwords as usize];
        for l in Self::lanes(m) {
            let a = lds_address(addr[l], offset);
            let range = self.lds_range(l, a, dwords, crate::memory::Access::Read)?;
            for (d, o) in out.iter_mut().enumerate() {
                let b = &self.lds[range.start + 4 * d..range.start + 4 * d + 4];
                o[l] = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            }
        }
        Ok(out)
    }
    fn lds_read_narrow(
        &mut self,
        addr: Lanes,
        offset: u32,
        bytes: u32,
        signed: bool,
        m: u64,
    ) -> Result<Lanes, ExecError> {
        let mut out = [0u32; LANES];
        for l in Self::lanes(m) {
            let a = lds_address(addr[l], offset);
            let r = self.lds_bytes(l, a, bytes, crate::memory::Access::Read)?;
            let b = &self.lds[r];
            out[l] = match (bytes, signed) {
                (1, false) => b[0] as u32,
                (1, true) => b[0] as i8 as i32 as u32,
                (_, false) => u16::from_le_bytes([b[0], b[1]]) as u32,
                (_, true) => i16::from_le_bytes([b[0], b[1]]) as i32 as u32,
            };
        }
        Ok(out)
    }
    fn lds_write_narrow(&mut self, addr: Lanes, offset: u32, bytes: u32, data: Lanes, m: u64) -> Result<(), ExecError> {
        for l in Self::lanes(m) {
            let a = lds_address(addr[l], offset);
            let r = self.lds_bytes(l, a, bytes, crate::memory::Access::Write)?;
            self.lds[r].copy_from_slice(&data[l].to_le_bytes()[..bytes as usize]);
        }
        Ok(())
    }
    fn lds_atomic64(
        &mut self,
        op: AtomicOp,
        addr: Lanes,
        offset: u32,
        data: (Lanes, Lanes),
        m: u64,
    ) -> Result<(Lanes, Lanes), ExecError> {
        let mut old = ([0u32; LANES], [0u32; LANES]);
        for l in Self::lanes(m) {
            let a = lds_address(addr[l], offset);
            let r = self.lds_range(l, a, 2, crate::memory::Access::Write)?;
            let cell = &mut self.lds[r];
            let o = u64::from_le_bytes(cell[..8].try_into().unwrap_or_default());
            let d = (data.1[l] as u64) << 32 | data.0[l] as u64;
            cell.copy_from_slice(&atomic64(op, o, d).to_le_bytes());
            (old.0[l], old.1[l]) = (o as u32, (o >> 32) as u32);
        }
        Ok(old)
    }
    fn lds_atomic2(
        &mut self,
        op: AtomicOp,
        addr: Lanes,
        offset: u32,
        a: &[Lanes],
        b: &[Lanes],
        m: u64,
    ) -> Result<Vec<Lanes>, ExecError> {
        let n = a.len();
        let bits = 32 * n as u32;
        let mut old = vec![[0u32; LANES]; n];
        let value = |v: &[Lanes], l: usize| {
            if n == 2 {
                (v[1][l] as u64) << 32 | v[0][l] as u64
            } else {
                v[0][l] as u64
            }
        };
        for l in Self::lanes(m) {
            let at = lds_address(addr[l], offset);
            let r = self.lds_range(l, at, n as u32, crate::memory::Access::Write)?;
            let cell = &mut self.lds[r];
            let mut bytes = [0u8; 8];
            bytes[..4 * n].copy_from_slice(cell);
            let cur = u64::from_le_bytes(bytes);
            let new = crate::rules::atomic2(op, cur, value(a, l), value(b, l), bits).unwrap_or(cur);
            cell.copy_from_slice(&new.to_le_bytes()[..4 * n]);
            for (i, o) in old.iter_mut().enumerate() {
                o[l] = (cur >> (32 * i)) as u32;
            }
        }
        Ok(old)
    }
    fn v_atomic64(
        &mut self,
        op: AtomicOp,
        lo: Lanes,
        hi: Lanes,
        offset: i64,
        data: (Lanes, Lanes),
        m: u64,
    ) -> Result<(Lanes, Lanes), ExecError> {
        let mut old = ([0u32; LANES], [0u32; LANES]);
        for l in Self::lanes(m) {
            let addr = lane_address(&lo, &hi, l, offset);
            let d = (data.1[l] as u64) << 32 | data.0[l] as u64;
            self.note(l, Space::Global, addr, 8, true);
            if self.dropped(op, addr, 8, l)? {
                continue;
            }
            let r = self.mem.atomic_u64(addr, |o| atomic64(op, o, d));
            let o = self.atomic(Some(l as u32), addr, 8, r)?;
            (old.0[l], old.1[l]) = (o as u32, (o >> 32) as u32);
        }
        Ok(old)
    }
    fn lds_write(&mut self, addr: Lanes, offset: u32, data: &[Lanes], m: u64) -> Result<(), ExecError> {
        for l in Self::lanes(m) {
            let a = lds_address(addr[l], offset);
            let range = self.lds_range(l, a, data.len() as u32, crate::memory::Access::Write)?;
            for (d, v) in data.iter().enumerate() {
                self.lds[range.start + 4 * d..range.start + 4 * d + 4].copy_from_slice(&v[l].to_le_bytes());
            }
        }
        Ok(())
    }
    fn v_shl64(&mut self, lo: Lanes, hi: Lanes, amount: Lanes) -> (Lanes, Lanes) {
        let mut rl = [0u32; LANES];
        let mut rh = [0u32; LANES];
        for i in 0..LANES {
            let v = ((hi[i] as u64) << 32 | lo[i] as u64) << (amount[i] & 63);
            rl[i] = v as u32;
            rh[i] = (v >> 32) as u32;
        }
        (rl, rh)
    }

    fn s_load(&mut self, lo: u32, hi: u32, dwords: u32) -> Result<Vec<u32>, ExecError> {
        let addr = ((hi as u64) << 32 | lo as u64) & !3;
        self.note(0, Space::Scalar, addr, dwords * 4, false);
        // at most 16 dwords: read them through a stack buffer
        let mut buf = [0u8; 64];
        let buf = buf.get_mut(..dwords as usize * 4).ok_or(ExecError::Unsupported {
            mnemonic: self.mnemonic,
        })?;
        self.read(None, addr, buf)?;
        Ok(buf
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect())
    }
    fn s_load_part(&mut self, lo: u32, hi: u32, dwords: u32, valid: u32) -> Result<Vec<u32>, ExecError> {
        let n = valid.min(dwords);
        let mut out = if n == 0 { Vec::new() } else { self.s_load(lo, hi, n)? };
        out.resize(dwords as usize, 0);
        Ok(out)
    }
    fn s_store(&mut self, lo: u32, hi: u32, data: &[u32], valid: u32) -> Result<(), ExecError> {
        let n = (valid as usize).min(data.len());
        if n == 0 {
            return Ok(());
        }
        let addr = ((hi as u64) << 32 | lo as u64) & !3;
        self.note(0, Space::Scalar, addr, 4 * n as u32, true);
        let bytes: Vec<u8> = data[..n].iter().flat_map(|d| d.to_le_bytes()).collect();
        self.write(None, addr, &bytes)
    }
    fn s_atomic(
        &mut self,
        op: AtomicOp,
        lo: u32,
        hi: u32,
        data: &[u32],
        cmp: &[u32],
        valid: u32,
    ) -> Result<Vec<u32>, ExecError> {
        if valid == 0 {
            return Ok(vec![0; data.len()]);
        }
        let addr = ((hi as u64) << 32 | lo as u64) & !3;
        self.note(0, Space::Scalar, addr, 4 * data.len() as u32, true);
        let pair = |v: &[u32]| (v[1] as u64) << 32 | v[0] as u64;
        // compare-and-swap through the two-operand rule (memory equal to cmp becomes data)
        if let [d] = *data {
            let old = match (op, cmp) {
                (AtomicOp::CmpSwap, &[c]) => self.mem.atomic_u32(addr, |o| {
                    crate::rules::atomic2(op, o as u64, c as u64, d as u64, 32).unwrap_or(o as u64) as u32
                }),
                _ => self.mem.atomic_u32(addr, |o| atomic32(op, o, d)),
            };
            return Ok(vec![self.atomic(None, addr, 4, old)?]);
        }
        let d = pair(data);
        let old = if op == AtomicOp::CmpSwap {
            let c = pair(cmp);
            self.mem
                .atomic_u64(addr, |o| crate::rules::atomic2(op, o, c, d, 64).unwrap_or(o))
        } else {
            self.mem.atomic_u64(addr, |o| atomic64(op, o, d))
        };
        let old = self.atomic(None, addr, 8, old)?;
        Ok(vec![old as u32, (old >> 32) as u32])
    }
    fn v_load(&mut self, lo: Lanes, hi: Lanes, offset: i64, dwords: u32, m: u64) -> Result<Vec<Lanes>, ExecError> {
        let mut out = vec![[0u32; LANES]; dwords as usize];
        let mut buf = [0u8; 16];
        if let Some(w) = self.span(&lo, &hi, offset, dwords * 4, m, crate::memory::Access::Read) {
            for l in Self::lanes(m) {
                let addr = lane_address(&lo, &hi, l, offset);
                self.note(l, Space::Global, addr, dwords * 4, false);
                let b = &mut buf[..dwords as usize * 4];
                let ok = w.read(addr, b);
                debug_assert!(ok, "inside the span");
                for (d, o) in out.iter_mut().enumerate() {
                    o[l] = u32::from_le_bytes([b[4 * d], b[4 * d + 1], b[4 * d + 2], b[4 * d + 3]]);
                }
            }
            return Ok(out);
        }
        for l in Self::lanes(m) {
            let addr = lane_address(&lo, &hi, l, offset);
            self.note(l, Space::Global, addr, dwords * 4, false);
            let b = &mut buf[..dwords as usize * 4];
            self.read(Some(l as u32), addr, b)?;
            for (d, o) in out.iter_mut().enumerate() {
                o[l] = u32::from_le_bytes([b[4 * d], b[4 * d + 1], b[4 * d + 2], b[4 * d + 3]]);
            }
        }
        Ok(out)
    }
    fn v_store(&mut self, lo: Lanes, hi: Lanes, offset: i64, data: &[Lanes], m: u64) -> Result<(), ExecError> {
        let mut buf = [0u8; 16];
        if let Some(w) = self.span(&lo, &hi, offset, data.len() as u32 * 4, m, crate::memory::Access::Write) {
            for l in Self::lanes(m) {
                let addr = lane_address(&lo, &hi, l, offset);
                for (d, v) in data.iter().enumerate() {
                    buf[4 * d..4 * d + 4].copy_from_slice(&v[l].to_le_bytes());
                }
                self.note(l, Space::Global, addr, data.len() as u32 * 4, true);
                let ok = w.write(addr, &buf[..data.len() * 4]);
                debug_assert!(ok, "inside the span");
            }
            return Ok(());
        }
        for l in Self::lanes(m) {
            let addr = lane_address(&lo, &hi, l, offset);
            for (d, v) in data.iter().enumerate() {
                buf[4 * d..4 * d + 4].copy_from_slice(&v[l].to_le_bytes());
            }
            self.note(l, Space::Global, addr, data.len() as u32 * 4, true);
            self.write(Some(l as u32), addr, &buf[..data.len() * 4])?;
        }
        Ok(())
    }
}

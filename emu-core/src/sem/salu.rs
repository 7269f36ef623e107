//! The scalar ALU: SOP1, SOP2, SOPC and SOPK arithmetic, logic, shifts, compares, selects, bit counts and
//! field extractions, bit masks (s_bfm), 64-bit mask operations, the EXEC-saving forms and the hardware
//! registers (s_getreg, s_setreg: what each holds and which writes are taken is [`crate::hwreg`]'s).

use isa_amdgpu::encoding::{Encoding, Field};
use isa_amdgpu::table::Implicit;
use isa_amdgpu::{Inst, Opcode};

use super::backend::*;
use super::operand::*;
use super::{form, unsupported, ExecError, Flow};
use crate::hwreg::{self, Held, Readable};
use crate::lanefn::{BitOp, LaneFn, SaluOp};

/// Executes a scalar ALU instruction.
pub(super) fn execute<B: Backend>(b: &mut B, inst: &Inst) -> Result<Flow<B::S>, ExecError> {
    use Opcode as O;
    if let Some(c) = inst.info.compare {
        return compare(b, inst, c);
    }
    match inst.info.opcode {
        O::SMinU32 | O::SMinI32 | O::SMaxU32 | O::SMaxI32 => {
            // min: D = S0 < S1 ? S0 : S1, SCC = S0 < S1; max: D = S0 > S1 ? S0 : S1, SCC = S0 > S1
            let a = scalar_src(b, inst, inst.field(Field::Ssrc0))?;
            let c = scalar_src(b, inst, inst.field(Field::Ssrc1))?;
            let lt = if matches!(inst.info.opcode, O::SMinU32 | O::SMaxU32) {
                SOp::LtU
            } else {
                SOp::LtI
            };
            let first = if matches!(inst.info.opcode, O::SMinU32 | O::SMinI32) {
                b.s_op(lt, a, c)
            } else {
                b.s_op(lt, c, a)
            };
            let r = b.s_select(first, a, c);
            b.s_set(inst.field(Field::Sdst), r);
            b.set_scc(first);
            Ok(Flow::Next)
        }
        O::SNotB32 | O::SFf1I32B32 => {
            let a = scalar_src(b, inst, inst.field(Field::Ssrc0))?;
            let r = if inst.info.opcode == O::SNotB32 {
                let ones = b.s_const(u32::MAX);
                let r = b.s_op(SOp::Xor, a, ones);
                let nz = b.s_nonzero(r);
                b.set_scc(nz);
                r
            } else {
                b.s_op(SOp::Ff1, a, a)
            };
            b.s_set(inst.field(Field::Sdst), r);
            Ok(Flow::Next)
        }
        O::SNotB64 => {
            let (lo, hi) = scalar_src64(b, inst, Field::Ssrc0)?;
            let ones = b.s_const(u32::MAX);
            let (rl, rh) = (b.s_op(SOp::Xor, lo, ones), b.s_op(SOp::Xor, hi, ones));
            set_s64_scc_nonzero(b, inst, rl, rh);
            Ok(Flow::Next)
        }
        O::SBfeU32 => {
            // D = (S0 >> S1[4:0]) & ((1 << S1[22:16]) - 1); SCC = D != 0
            let a = scalar_src(b, inst, inst.field(Field::Ssrc0))?;
            let c = scalar_src(b, inst, inst.field(Field::Ssrc1))?;
            let (k31, k16, k7f, one, zero) = (
                b.s_const(31),
                b.s_const(16),
                b.s_const(0x7f),
                b.s_const(1),
                b.s_const(0),
            );
            let off = b.s_op(SOp::And, c, k31);
            let width = b.s_op(SOp::Lshr, c, k16);
            let width = b.s_op(SOp::And, width, k7f);
            let shifted = b.s_op(SOp::Lshr, a, off);
            let bit = b.s_op(SOp::Shl, one, width);
            let mask = b.s_op(SOp::Sub, bit, one);
            let narrow = b.s_op(SOp::And, shifted, mask);
            let k32 = b.s_const(32);
            let wide = b.s_op(SOp::LtU, width, k32);
            let r = b.s_select(wide, narrow, shifted);
            let empty = b.s_op(SOp::Eq, width, zero);
            let r = b.s_select(empty, zero, r);
            b.s_set(inst.field(Field::Sdst), r);
            let nz = b.s_nonzero(r);
            b.set_scc(nz);
            Ok(Flow::Next)
        }
        O::SBrevB32 => {
            let v = scalar_src(b, inst, inst.field(Field::Ssrc0))?;
            let r = b.s_op(SOp::Brev, v, v);
            b.s_set(inst.field(Field::Sdst), r);
            Ok(Flow::Next)
        }
        O::SMovB32 => {
            let v = scalar_src(b, inst, inst.field(Field::Ssrc0))?;
            b.s_set(inst.field(Field::Sdst), v);
            Ok(Flow::Next)
        }
        O::SMovkI32 => {
            let v = b.s_const(inst.field(Field::Simm16) as u16 as i16 as i32 as u32);
            b.s_set(inst.field(Field::Sdst), v);
            Ok(Flow::Next)
        }
        O::SMovB64 => {
            let (lo, hi) = scalar_src64(b, inst, Field::Ssrc0)?;
            let d = inst.field(Field::Sdst);
            b.s_set(d, lo);
            b.s_set(d + 1, hi);
            Ok(Flow::Next)
        }
        O::SSetGprIdxOn | O::SSetGprIdxIdx => super::index::execute(b, inst),
        O::SMovrelsB32 | O::SMovrelsB64 => {
            // D = SGPR[S0 + M0] (and SGPR[S0 + M0 + 1])
            let n = if inst.info.opcode == O::SMovrelsB64 { 2 } else { 1 };
            let d = inst.field(Field::Sdst);
            let v: Vec<B::S> = (0..n).map(|k| relative_get(b, inst.field(Field::Ssrc0) + k)).collect();
            for (k, v) in v.into_iter().enumerate() {
                b.s_set(d + k as u32, v);
            }
            Ok(Flow::Next)
        }
        O::SMovreldB32 | O::SMovreldB64 => {
            // SGPR[D + M0] (and SGPR[D + M0 + 1]) = S0
            let v = if inst.info.opcode == O::SMovreldB64 {
                let (lo, hi) = scalar_src64(b, inst, Field::Ssrc0)?;
                vec![lo, hi]
            } else {
                vec![scalar_src(b, inst, inst.field(Field::Ssrc0))?]
            };
            for (k, v) in v.into_iter().enumerate() {
                relative_set(b, inst.field(Field::Sdst) + k as u32, v);
            }
            Ok(Flow::Next)
        }
        O::SAndn2B32 | O::SOrn2B32 | O::SNandB32 | O::SNorB32 | O::SXnorB32 => {
            let a = scalar_src(b, inst, inst.field(Field::Ssrc0))?;
            let c = scalar_src(b, inst, inst.field(Field::Ssrc1))?;
            let ones = b.s_const(u32::MAX);
            let r = match inst.info.opcode {
                O::SAndn2B32 | O::SOrn2B32 => {
                    let nc = b.s_op(SOp::Xor, c, ones);
                    b.s_op(
                        if inst.info.opcode == O::SAndn2B32 {
                            SOp::And
                        } else {
                            SOp::Or
                        },
                        a,
                        nc,
                    )
                }
                op => {
                    let r = match op {
                        O::SNandB32 => b.s_op(SOp::And, a, c),
                        O::SNorB32 => b.s_op(SOp::Or, a, c),
                        _ => b.s_op(SOp::Xor, a, c),
                    };
                    b.s_op(SOp::Xor, r, ones)
                }
            };
            b.s_set(inst.field(Field::Sdst), r);
            let nz = b.s_nonzero(r);
            b.set_scc(nz);
            Ok(Flow::Next)
        }
        O::SAndB32 | O::SOrB32 | O::SXorB32 | O::SMulI32 | O::SLshlB32 | O::SLshrB32 | O::SAshrI32 => {
            let a = scalar_src(b, inst, inst.field(Field::Ssrc0))?;
            let c = scalar_src(b, inst, inst.field(Field::Ssrc1))?;
            let op = match inst.info.opcode {
                O::SAndB32 => SOp::And,
                O::SOrB32 => SOp::Or,
                O::SXorB32 => SOp::Xor,
                O::SMulI32 => SOp::Mul,
                O::SLshlB32 => SOp::Shl,
                O::SLshrB32 => SOp::Lshr,
                _ => SOp::Ashr,
            };
            let r = b.s_op(op, a, c);
            b.s_set(inst.field(Field::Sdst), r);
            if inst.info.writes.contains(Implicit::SCC) {
                let nz = b.s_nonzero(r);
                b.set_scc(nz);
            }
            Ok(Flow::Next)
        }
        O::SAddU32 | O::SAddcU32 | O::SAddI32 | O::SSubI32 => {
            let a = scalar_src(b, inst, inst.field(Field::Ssrc0))?;
            let c = scalar_src(b, inst, inst.field(Field::Ssrc1))?;
            let sub = inst.info.opcode == O::SSubI32;
            let r = if sub {
                b.s_op(SOp::Sub, a, c)
            } else {
                b.s_op(SOp::Add, a, c)
            };
            let scc = match inst.info.opcode {
                O::SAddU32 | O::SAddcU32 => {
                    let cin = if inst.info.opcode == O::SAddcU32 {
                        b.scc()
                    } else {
                        b.s_const(0)
                    };
                    let (sum, carry) = b.s_add_carry(a, c, cin);
                    b.s_set(inst.field(Field::Sdst), sum);
                    b.set_scc(carry);
                    return Ok(Flow::Next);
                }
                _ => {
                    // signed overflow: add: a and c agree in sign, r does not; sub: a and c differ, r differs from a
                    let ar = b.s_op(SOp::Xor, a, r);
                    let other = if sub {
                        b.s_op(SOp::Xor, a, c)
                    } else {
                        b.s_op(SOp::Xor, c, r)
                    };
                    let both = b.s_op(SOp::And, ar, other);
                    let sh = b.s_const(31);
                    b.s_op(SOp::Lshr, both, sh)
                }
            };
            b.s_set(inst.field(Field::Sdst), r);
            b.set_scc(scc);
            Ok(Flow::Next)
        }
        O::SAndB64 | O::SOrB64 | O::SXorB64 | O::SAndn2B64 => {
            let (al, ah) = scalar_src64(b, inst, Field::Ssrc0)?;
            let (cl, ch) = scalar_src64(b, inst, Field::Ssrc1)?;
            let (cl, ch) = if inst.info.opcode == O::SAndn2B64 {
                let ones = b.s_const(u32::MAX);
                (b.s_op(SOp::Xor, cl, ones), b.s_op(SOp::Xor, ch, ones))
            } else {
                (cl, ch)
            };
            let op = match inst.info.opcode {
                O::SOrB64 => SOp::Or,
                O::SXorB64 => SOp::Xor,
                _ => SOp::And,
            };
            let (rl, rh) = (b.s_op(op, al, cl), b.s_op(op, ah, ch));
            set_s64_scc_nonzero(b, inst, rl, rh);
            Ok(Flow::Next)
        }
        O::SAndSaveexecB64 | O::SOrSaveexecB64 | O::SAndn2SaveexecB64 | O::SXorSaveexecB64 => {
            // sdst = EXEC; EXEC = ssrc0 op EXEC; SCC = EXEC != 0
            let (sl, sh) = scalar_src64(b, inst, Field::Ssrc0)?;
            let src = b.mask_from(sl, sh);
            let exec = b.exec();
            let (el, eh) = b.mask_parts(exec);
            s_set64(b, inst.field(Field::Sdst), el, eh);
            let op = match inst.info.opcode {
                O::SAndSaveexecB64 => MaskOp::And,
                O::SOrSaveexecB64 => MaskOp::Or,
                O::SAndn2SaveexecB64 => MaskOp::AndNot,
                _ => MaskOp::Xor,
            };
            let m = b.mask_op(op, src, exec);
            b.set_exec(m);
            let (nl, nh) = b.mask_parts(m);
            scc_nonzero64(b, nl, nh);
            Ok(Flow::Next)
        }

        // ---- vector ALU -------------------------------------------------------------------------------
        O::SLshlB64 | O::SLshrB64 | O::SAshrI64 => {
            let (lo, hi) = scalar_src64(b, inst, Field::Ssrc0)?;
            let amount = scalar_src(b, inst, inst.field(Field::Ssrc1))?;
            let (rl, rh) = match inst.info.opcode {
                O::SLshlB64 => b.s_shl64(lo, hi, amount),
                O::SLshrB64 => b.s_shr64(lo, hi, amount, false),
                _ => b.s_shr64(lo, hi, amount, true),
            };
            set_s64_scc_nonzero(b, inst, rl, rh);
            Ok(Flow::Next)
        }

        O::SMulHiU32 | O::SMulHiI32 => {
            let a = scalar_src(b, inst, inst.field(Field::Ssrc0))?;
            let c = scalar_src(b, inst, inst.field(Field::Ssrc1))?;
            let op = if inst.info.opcode == O::SMulHiU32 {
                SOp::MulHiU32
            } else {
                SOp::MulHiI32
            };
            let r = b.s_op(op, a, c);
            b.s_set(inst.field(Field::Sdst), r);
            Ok(Flow::Next)
        }
        O::SOrn2B64 | O::SNandB64 | O::SNorB64 | O::SXnorB64 => {
            let (al, ah) = scalar_src64(b, inst, Field::Ssrc0)?;
            let (cl, ch) = scalar_src64(b, inst, Field::Ssrc1)?;
            let ones = b.s_const(u32::MAX);
            let (rl, rh) = match inst.info.opcode {
                O::SOrn2B64 => {
                    let (nl, nh) = (b.s_op(SOp::Xor, cl, ones), b.s_op(SOp::Xor, ch, ones));
                    (b.s_op(SOp::Or, al, nl), b.s_op(SOp::Or, ah, nh))
                }
                O::SNandB64 | O::SNorB64 | O::SXnorB64 => {
                    let op = match inst.info.opcode {
                        O::SNandB64 => SOp::And,
                        O::SNorB64 => SOp::Or,
                        _ => SOp::Xor,
                    };
                    let (xl, xh) = (b.s_op(op, al, cl), b.s_op(op, ah, ch));
                    (b.s_op(SOp::Xor, xl, ones), b.s_op(SOp::Xor, xh, ones))
                }
                _ => unreachable_arm(inst)?,
            };
            s_set64(b, inst.field(Field::Sdst), rl, rh);
            scc_nonzero64(b, rl, rh);
            Ok(Flow::Next)
        }
        O::SBitcmp0B32 | O::SBitcmp1B32 => {
            let a = scalar_src(b, inst, inst.field(Field::Ssrc0))?;
            let c = scalar_src(b, inst, inst.field(Field::Ssrc1))?;
            let bit = b.s_op(SOp::Lshr, a, c);
            let one = b.s_const(1);
            let bit = b.s_op(SOp::And, bit, one);
            let r = if inst.info.opcode == O::SBitcmp0B32 {
                b.s_op(SOp::Xor, bit, one)
            } else {
                bit
            };
            b.set_scc(r);
            Ok(Flow::Next)
        }
        O::SAddkI32 | O::SMulkI32 => {
            let d = inst.field(Field::Sdst);
            let a = b.s_get(d);
            let k = inst.field(Field::Simm16);
            let signed = b.s_const(k as u16 as i16 as i32 as u32);
            match inst.info.opcode {
                O::SAddkI32 => {
                    let r = b.s_op(SOp::Add, a, signed);
                    // SCC = signed overflow
                    let (ar, kr) = (b.s_op(SOp::Xor, a, r), b.s_op(SOp::Xor, signed, r));
                    let both = b.s_op(SOp::And, ar, kr);
                    let sh = b.s_const(31);
                    let ov = b.s_op(SOp::Lshr, both, sh);
                    b.s_set(d, r);
                    b.set_scc(ov);
                }
                _ => {
                    let r = b.s_op(SOp::Mul, a, signed);
                    b.s_set(d, r);
                }
            }
            Ok(Flow::Next)
        }
        O::SCselectB32 => {
            let a = scalar_src(b, inst, inst.field(Field::Ssrc0))?;
            let c = scalar_src(b, inst, inst.field(Field::Ssrc1))?;
            // D = SCC ? S0 : S1
            let scc = b.scc();
            let r = b.s_select(scc, a, c);
            b.s_set(inst.field(Field::Sdst), r);
            Ok(Flow::Next)
        }
        O::SCselectB64 => {
            let (al, ah) = scalar_src64(b, inst, Field::Ssrc0)?;
            let (cl, ch) = scalar_src64(b, inst, Field::Ssrc1)?;
            let scc = b.scc();
            let (rl, rh) = (b.s_select(scc, al, cl), b.s_select(scc, ah, ch));
            let d = inst.field(Field::Sdst);
            b.s_set(d, rl);
            b.s_set(d + 1, rh);
            Ok(Flow::Next)
        }
        O::SSubU32 | O::SSubbU32 => {
            let a = scalar_src(b, inst, inst.field(Field::Ssrc0))?;
            let c = scalar_src(b, inst, inst.field(Field::Ssrc1))?;
            // a - c - borrow = a + !c + (1 - borrow); carry out = !borrow out
            let ones = b.s_const(u32::MAX);
            let nc = b.s_op(SOp::Xor, c, ones);
            let one = b.s_const(1);
            let cin = if inst.info.opcode == O::SSubbU32 {
                let s = b.scc();
                b.s_op(SOp::Xor, s, one)
            } else {
                one
            };
            let (r, carry) = b.s_add_carry(a, nc, cin);
            b.s_set(inst.field(Field::Sdst), r);
            let borrow = b.s_op(SOp::Xor, carry, one);
            b.set_scc(borrow);
            Ok(Flow::Next)
        }
        O::SSextI32I8 | O::SSextI32I16 => {
            // D = sign-extended low byte / half of S0
            let a = scalar_src(b, inst, inst.field(Field::Ssrc0))?;
            let k = b.s_const(if inst.info.opcode == O::SSextI32I8 { 24 } else { 16 });
            let up = b.s_op(SOp::Shl, a, k);
            let r = b.s_op(SOp::Ashr, up, k);
            b.s_set(inst.field(Field::Sdst), r);
            Ok(Flow::Next)
        }
        O::SBfmB32 => {
            // D = ((1 << S0[4:0]) - 1) << S1[4:0] (the shifts take 5 bits)
            let a = scalar_src(b, inst, inst.field(Field::Ssrc0))?;
            let c = scalar_src(b, inst, inst.field(Field::Ssrc1))?;
            let one = b.s_const(1);
            let bit = b.s_op(SOp::Shl, one, a);
            let mask = b.s_op(SOp::Sub, bit, one);
            let r = b.s_op(SOp::Shl, mask, c);
            b.s_set(inst.field(Field::Sdst), r);
            Ok(Flow::Next)
        }
        O::SBfmB64 => {
            // D = ((1 << S0[5:0]) - 1) << S1[5:0], 64 bits
            let a = scalar_src(b, inst, inst.field(Field::Ssrc0))?;
            let c = scalar_src(b, inst, inst.field(Field::Ssrc1))?;
            let (one, zero, ones) = (b.s_const(1), b.s_const(0), b.s_const(u32::MAX));
            let (bl, bh) = b.s_shl64(one, zero, a);
            // minus one: add all ones, carrying into the high word
            let (ml, carry) = b.s_add_carry(bl, ones, zero);
            let (mh, _) = b.s_add_carry(bh, ones, carry);
            let (rl, rh) = b.s_shl64(ml, mh, c);
            s_set64(b, inst.field(Field::Sdst), rl, rh);
            Ok(Flow::Next)
        }
        O::SGetregB32 => {
            // D = the hardware register's bits offset .. offset + size, at bit 0
            let f = hwreg::Field::decode(inst.field(Field::Simm16));
            let value = match hwreg::readable(inst.target, f).map_err(|why| ExecError::Refused {
                mnemonic: inst.info.name,
                why,
            })? {
                Readable::Held(h) => b.s_hwreg(h),
                Readable::Constant(c) => b.s_const(c),
                Readable::Status => status(b),
            };
            let field = if f.offset == 0 && f.size == 32 {
                value
            } else {
                let (sh, mask) = (b.s_const(f.offset), b.s_const(f.mask() >> f.offset));
                let down = b.s_op(SOp::Lshr, value, sh);
                b.s_op(SOp::And, down, mask)
            };
            b.s_set(inst.field(Field::Sdst), field);
            Ok(Flow::Next)
        }
        O::SSetregB32 | O::SSetregImm32B32 => {
            // the register's bits offset .. offset + size = the source's low bits
            let f = hwreg::Field::decode(inst.field(Field::Simm16));
            if let Some(why) = hwreg::unwritable(inst.target, f) {
                return Err(ExecError::Refused {
                    mnemonic: inst.info.name,
                    why,
                });
            }
            let src = match inst.literal() {
                Some(k) if inst.info.opcode == O::SSetregImm32B32 => b.s_const(k),
                _ => scalar_src(b, inst, inst.field(Field::Sdst))?,
            };
            let sh = b.s_const(f.offset);
            let placed = b.s_op(SOp::Shl, src, sh);
            b.s_set_mode(placed, f.mask())?;
            Ok(Flow::Next)
        }
        // ---- more vector ALU --------------------------------------------------------------------------
        O::SBcnt1I32B64 => {
            let (lo, hi) = scalar_src64(b, inst, Field::Ssrc0)?;
            let r = b.s_popcount64(lo, hi);
            b.s_set(inst.field(Field::Sdst), r);
            let nz = b.s_nonzero(r);
            b.set_scc(nz);
            Ok(Flow::Next)
        }
        _ => match scalar_bits(inst.info.opcode) {
            Some(op) => scalar(b, inst, op),
            None => more(b, inst),
        },
    }
}

/// STATUS: its held bits (VALID, IN_TG) with SCC, EXECZ and VCCZ from the registers.
fn status<B: Backend>(b: &mut B) -> B::S {
    let fixed = b.s_hwreg(Held::StatusFixed);
    let scc = b.scc();
    let exec = b.exec();
    let (lo, hi) = b.mask_parts(exec);
    let execz = zero_bit(b, lo, hi, 9);
    let (lo, hi) = (
        b.s_get(crate::wave::sreg::VCC_LO),
        b.s_get(crate::wave::sreg::VCC_LO + 1),
    );
    let vccz = zero_bit(b, lo, hi, 10);
    let r = b.s_op(SOp::Or, fixed, scc);
    let r = b.s_op(SOp::Or, r, execz);
    b.s_op(SOp::Or, r, vccz)
}

/// `1 << bit` if the 64-bit (lo, hi) is 0, else 0.
fn zero_bit<B: Backend>(b: &mut B, lo: B::S, hi: B::S, bit: u32) -> B::S {
    let any = b.s_op(SOp::Or, lo, hi);
    let nz = b.s_nonzero(any);
    let one = b.s_const(1);
    let z = b.s_op(SOp::Xor, nz, one);
    let k = b.s_const(bit);
    b.s_op(SOp::Shl, z, k)
}

/// Scalar bit counts and field extractions.
fn scalar_bits(op: Opcode) -> Option<BitOp> {
    use Opcode as O;
    Some(match op {
        O::SFlbitI32B32 => BitOp::Clz32,
        O::SFlbitI32 => BitOp::Cls32,
        O::SFlbitI32B64 => BitOp::Clz64,
        O::SFlbitI32I64 => BitOp::Cls64,
        O::SFf1I32B64 => BitOp::Ctz64,
        O::SBfeU64 => BitOp::Bfe64 { signed: false },
        O::SBfeI64 => BitOp::Bfe64 { signed: true },
        O::SBfeI32 => BitOp::BfeI32,
        _ => return None,
    })
}

/// SOP1/SOP2 bit operations: 64-bit sources where the operation is 64-bit; the field extractions set SCC to
/// result != 0.
fn scalar<B: Backend>(b: &mut B, inst: &Inst, op: BitOp) -> Result<Flow<B::S>, ExecError> {
    let mut args = Vec::with_capacity(3);
    match op {
        BitOp::Clz64 | BitOp::Cls64 | BitOp::Ctz64 | BitOp::Bfe64 { .. } => {
            let (lo, hi) = scalar_src64(b, inst, Field::Ssrc0)?;
            args.extend([lo, hi]);
        }
        _ => args.push(scalar_src(b, inst, inst.field(Field::Ssrc0))?),
    }
    if matches!(op, BitOp::Bfe64 { .. } | BitOp::BfeI32) {
        args.push(scalar_src(b, inst, inst.field(Field::Ssrc1))?);
    }
    let r = b.s_lanefn(LaneFn::Bits(op), &args);
    let d = inst.field(Field::Sdst);
    if r.len() == 2 {
        s_set64(b, d, r[0], r[1]);
        let any = b.s_op(SOp::Or, r[0], r[1]);
        let nz = b.s_nonzero(any);
        b.set_scc(nz);
    } else {
        b.s_set(d, r[0]);
        if op == BitOp::BfeI32 {
            let nz = b.s_nonzero(r[0]);
            b.set_scc(nz);
        }
    }
    Ok(Flow::Next)
}

/// s_cmp and s_cmpk: SCC = ssrc0 compared with ssrc1, or (s_cmpk) sdst with the 16-bit immediate, zero-extended
/// for u32 and sign-extended for i32. 64-bit compares (eq, ne) compare SGPR pairs.
fn compare<B: Backend>(b: &mut B, inst: &Inst, c: Compare) -> Result<Flow<B::S>, ExecError> {
    let one = b.s_const(1);
    let r = if c.ty.bits() == 64 {
        let (al, ah) = scalar_src64(b, inst, Field::Ssrc0)?;
        let (cl, ch) = scalar_src64(b, inst, Field::Ssrc1)?;
        let (el, eh) = (b.s_op(SOp::Eq, al, cl), b.s_op(SOp::Eq, ah, ch));
        let eq = b.s_op(SOp::And, el, eh);
        match c.pred {
            CmpPred::Eq => eq,
            CmpPred::Ne => b.s_op(SOp::Xor, eq, one),
            _ => return Err(form(inst, "this 64-bit scalar compare")),
        }
    } else {
        let (a, k) = if inst.encoding() == Encoding::Sopk {
            let k = inst.field(Field::Simm16);
            let k = if c.ty.is_signed_int() {
                k as u16 as i16 as i32 as u32
            } else {
                k & 0xffff
            };
            (b.s_get(inst.field(Field::Sdst)), b.s_const(k))
        } else {
            (
                scalar_src(b, inst, inst.field(Field::Ssrc0))?,
                scalar_src(b, inst, inst.field(Field::Ssrc1))?,
            )
        };
        // every predicate is eq or lt, with the operands swapped and/or the result negated
        let lt = if c.ty.is_signed_int() { SOp::LtI } else { SOp::LtU };
        let t = crate::rules::truth(c.pred);
        match (t.lt, t.eq, t.gt) {
            (false, true, false) => b.s_op(SOp::Eq, a, k),
            (true, false, true) => {
                let e = b.s_op(SOp::Eq, a, k);
                b.s_op(SOp::Xor, e, one)
            }
            (true, false, false) => b.s_op(lt, a, k),
            (false, false, true) => b.s_op(lt, k, a),
            (true, true, false) => {
                let gt = b.s_op(lt, k, a);
                b.s_op(SOp::Xor, gt, one)
            }
            (false, true, true) => {
                let l = b.s_op(lt, a, k);
                b.s_op(SOp::Xor, l, one)
            }
            (false, false, false) => b.s_const(0),
            (true, true, true) => one,
        }
    };
    b.set_scc(r);
    Ok(Flow::Next)
}

/// Writes a 64-bit result to SDST and sets SCC to whether it is non-zero (the 64-bit bitwise operations).
fn set_s64_scc_nonzero<B: Backend>(b: &mut B, inst: &Inst, lo: B::S, hi: B::S) {
    let d = inst.field(Field::Sdst);
    b.s_set(d, lo);
    b.s_set(d + 1, hi);
    let any = b.s_op(SOp::Or, lo, hi);
    let nz = b.s_nonzero(any);
    b.set_scc(nz);
}

/// The SALU operations written as lane functions ([`SaluOp`]), the conditional moves and the other
/// EXEC-saving forms.
fn more<B: Backend>(b: &mut B, inst: &Inst) -> Result<Flow<B::S>, ExecError> {
    use Opcode as O;
    use SaluOp as S;
    let d = inst.field(Field::Sdst);
    // (operation, SCC = result != 0)
    let (op, scc) = match inst.info.opcode {
        O::SBcnt0I32B32 => (
            S::Bcnt {
                ones: false,
                wide: false,
            },
            true,
        ),
        O::SBcnt0I32B64 => (
            S::Bcnt {
                ones: false,
                wide: true,
            },
            true,
        ),
        O::SBcnt1I32B32 => (
            S::Bcnt {
                ones: true,
                wide: false,
            },
            true,
        ),
        O::SFf0I32B32 => (S::Ff0 { wide: false }, false),
        O::SFf0I32B64 => (S::Ff0 { wide: true }, false),
        O::SBrevB64 => (S::Brev64, false),
        O::SBitset0B32 => (
            S::Bitset {
                set: false,
                wide: false,
            },
            false,
        ),
        O::SBitset1B32 => (S::Bitset { set: true, wide: false }, false),
        O::SBitset0B64 => (S::Bitset { set: false, wide: true }, false),
        O::SBitset1B64 => (S::Bitset { set: true, wide: true }, false),
        O::SQuadmaskB32 => (S::Quadmask { wide: false }, true),
        O::SQuadmaskB64 => (S::Quadmask { wide: true }, true),
        O::SWqmB32 => (S::Wqm { wide: false }, true),
        O::SWqmB64 => (S::Wqm { wide: true }, true),
        O::SSextI32I8 => (S::Sext(8), false),
        O::SSextI32I16 => (S::Sext(16), false),
        O::SAbsI32 => (S::Abs, true),
        O::SAbsdiffI32 => (S::Absdiff, true),
        O::SLshl1AddU32 => (S::LshlAdd(1), false),
        O::SLshl2AddU32 => (S::LshlAdd(2), false),
        O::SLshl3AddU32 => (S::LshlAdd(3), false),
        O::SLshl4AddU32 => (S::LshlAdd(4), false),
        O::SPackLlB32B16 => (S::Pack { hi0: false, hi1: false }, false),
        O::SPackLhB32B16 => (S::Pack { hi0: false, hi1: true }, false),
        O::SPackHhB32B16 => (S::Pack { hi0: true, hi1: true }, false),
        O::SBitreplicateB64B32 => (S::Bitreplicate, false),
        O::SBitcmp0B64 => (S::Bitcmp64 { one: false }, false),
        O::SBitcmp1B64 => (S::Bitcmp64 { one: true }, false),
        _ => return cmov_and_exec(b, inst),
    };
    let wide_src = matches!(
        op,
        S::Bcnt { wide: true, .. }
            | S::Ff0 { wide: true }
            | S::Brev64
            | S::Quadmask { wide: true }
            | S::Wqm { wide: true }
            | S::Bitcmp64 { .. }
    );
    let mut args = Vec::with_capacity(3);
    match op {
        // s_bitset: D's own bits, the bit index in S0
        S::Bitset { wide, .. } => {
            args.push(b.s_get(d));
            if wide {
                args.push(b.s_get(d + 1));
            }
            args.push(scalar_src(b, inst, inst.field(Field::Ssrc0))?);
        }
        _ => {
            if wide_src {
                let (lo, hi) = scalar_src64(b, inst, Field::Ssrc0)?;
                args.extend([lo, hi]);
            } else {
                args.push(scalar_src(b, inst, inst.field(Field::Ssrc0))?);
            }
            if matches!(op, S::Absdiff | S::LshlAdd(_) | S::Pack { .. } | S::Bitcmp64 { .. }) {
                args.push(scalar_src(b, inst, inst.field(Field::Ssrc1))?);
            }
        }
    }
    let r = b.s_lanefn(LaneFn::Salu(op), &args);
    match op {
        S::Bitcmp64 { .. } => b.set_scc(r[0]),
        // D = the sum, SCC = its carry out
        S::LshlAdd(_) => {
            b.s_set(d, r[0]);
            b.set_scc(r[1]);
        }
        _ if r.len() == 2 => {
            s_set64(b, d, r[0], r[1]);
            if scc {
                scc_nonzero64(b, r[0], r[1]);
            }
        }
        _ => {
            b.s_set(d, r[0]);
            if scc {
                let nz = b.s_nonzero(r[0]);
                b.set_scc(nz);
            }
        }
    }
    Ok(Flow::Next)
}

/// s_cmov/s_cmovk (D = S0 if SCC) and the EXEC-saving forms not in [`execute`]: `s_<op>_saveexec_b64` (D = EXEC,
/// then EXEC = S0 op EXEC) and `s_andn1/andn2_wrexec_b64` (EXEC = S0 op EXEC, then D = EXEC); SCC = EXEC != 0.
fn cmov_and_exec<B: Backend>(b: &mut B, inst: &Inst) -> Result<Flow<B::S>, ExecError> {
    use Opcode as O;
    let d = inst.field(Field::Sdst);
    match inst.info.opcode {
        O::SCmovB32 | O::SCmovkI32 => {
            let v = if inst.info.opcode == O::SCmovkI32 {
                b.s_const(inst.field(Field::Simm16) as u16 as i16 as i32 as u32)
            } else {
                scalar_src(b, inst, inst.field(Field::Ssrc0))?
            };
            let (old, scc) = (b.s_get(d), b.scc());
            let r = b.s_select(scc, v, old);
            b.s_set(d, r);
        }
        O::SCmovB64 => {
            let (lo, hi) = scalar_src64(b, inst, Field::Ssrc0)?;
            let (ol, oh, scc) = (b.s_get(d), b.s_get(d + 1), b.scc());
            let (rl, rh) = (b.s_select(scc, lo, ol), b.s_select(scc, hi, oh));
            s_set64(b, d, rl, rh);
        }
        O::SAndn1SaveexecB64
        | O::SOrn1SaveexecB64
        | O::SOrn2SaveexecB64
        | O::SNandSaveexecB64
        | O::SNorSaveexecB64
        | O::SXnorSaveexecB64
        | O::SAndn1WrexecB64
        | O::SAndn2WrexecB64 => {
            let (sl, sh) = scalar_src64(b, inst, Field::Ssrc0)?;
            let src = b.mask_from(sl, sh);
            let exec = b.exec();
            let ones = b.s_const(u32::MAX);
            let all = b.mask_from(ones, ones);
            let not = |b: &mut B, m: B::M| b.mask_op(MaskOp::Xor, m, all);
            let m = match inst.info.opcode {
                // ~S0 & EXEC
                O::SAndn1SaveexecB64 | O::SAndn1WrexecB64 => b.mask_op(MaskOp::AndNot, exec, src),
                // S0 & ~EXEC
                O::SAndn2WrexecB64 => b.mask_op(MaskOp::AndNot, src, exec),
                O::SOrn1SaveexecB64 => {
                    let n = not(b, src);
                    b.mask_op(MaskOp::Or, n, exec)
                }
                O::SOrn2SaveexecB64 => {
                    let n = not(b, exec);
                    b.mask_op(MaskOp::Or, src, n)
                }
                O::SNandSaveexecB64 => {
                    let x = b.mask_op(MaskOp::And, src, exec);
                    not(b, x)
                }
                O::SNorSaveexecB64 => {
                    let x = b.mask_op(MaskOp::Or, src, exec);
                    not(b, x)
                }
                _ => {
                    let x = b.mask_op(MaskOp::Xor, src, exec);
                    not(b, x)
                }
            };
            let wrexec = matches!(inst.info.opcode, O::SAndn1WrexecB64 | O::SAndn2WrexecB64);
            let (el, eh) = b.mask_parts(if wrexec { m } else { exec });
            s_set64(b, d, el, eh);
            b.set_exec(m);
            let (nl, nh) = b.mask_parts(m);
            scc_nonzero64(b, nl, nh);
        }
        _ => return Err(unsupported(inst)),
    }
    Ok(Flow::Next)
}

/// SGPRs an M0-relative move reaches: s0..s101. The ISA guide's rule for SGPR numbers out of range: a source
/// reads SGPR 0 instead, a destination is not written.
const RELATIVE_SGPRS: u32 = 102;

/// The register number `base + M0` and whether it is one of [`RELATIVE_SGPRS`].
fn relative_index<B: Backend>(b: &mut B, base: u32) -> (B::S, B::S) {
    let m0 = b.s_get(crate::wave::sreg::M0);
    let k = b.s_const(base);
    let index = b.s_op(SOp::Add, m0, k);
    let limit = b.s_const(RELATIVE_SGPRS);
    let ok = b.s_op(SOp::LtU, index, limit);
    (index, ok)
}

/// SGPR[base + M0], or SGPR 0 when that is out of range.
fn relative_get<B: Backend>(b: &mut B, base: u32) -> B::S {
    let (index, ok) = relative_index(b, base);
    let zero = b.s_const(0);
    let index = b.s_select(ok, index, zero);
    b.s_get_at(index)
}

/// SGPR[base + M0] = v, nothing when that is out of range (SGPR 0 rewritten with its own value).
fn relative_set<B: Backend>(b: &mut B, base: u32, v: B::S) {
    let (index, ok) = relative_index(b, base);
    let zero = b.s_const(0);
    let index = b.s_select(ok, index, zero);
    let old = b.s_get_at(index);
    let v = b.s_select(ok, v, old);
    b.s_set_at(index, v);
}

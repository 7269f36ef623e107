//! Image (MIMG) instructions: the resource and sampler descriptors and registers around
//! [`Backend::v_image`], which does the per-lane work.

use isa_amdgpu::encoding::Field;
use isa_amdgpu::Inst;

use super::backend::*;
use super::operand::*;
use super::{form, ExecError, Flow};

/// Executes a MIMG instruction.
pub(super) fn execute<B: Backend>(b: &mut B, inst: &Inst) -> Result<Flow<B::S>, ExecError> {
    image(b, inst).map(|()| Flow::Next)
}

/// MIMG: the descriptors and registers around [`Backend::v_image`], which does the per-lane work.
fn image<B: Backend>(b: &mut B, inst: &Inst) -> Result<(), ExecError> {
    use crate::image::{ImageInst, ImageKind, MAX_ADDRESS};
    if inst.field(Field::Lwe) == 1 {
        return Err(form(inst, "texture fail results (LWE)"));
    }
    if inst.field(Field::A16) == 1 {
        return Err(form(inst, "16-bit image addresses (A16)"));
    }
    let field = |f| inst.field(f) == 1;
    let op = ImageInst::of(
        inst.info.opcode,
        inst.info.atomic,
        inst.field(Field::Dmask),
        field(Field::D16),
        field(Field::Unorm),
        field(Field::Glc),
    )
    .map_err(|what| form(inst, what))?;
    let acc = inst.field(Field::Acc) == 1;
    let (r, sr) = (inst.field(Field::Srsrc) * 4, inst.field(Field::Ssamp) * 4);
    let t = std::array::from_fn(|i| b.s_get(r + i as u32));
    let sampling = matches!(op.kind, ImageKind::Sample | ImageKind::Gather);
    let s = std::array::from_fn(|i| if sampling { b.s_get(sr + i as u32) } else { b.s_const(0) });
    let va = inst.field(Field::Vaddr);
    let addr: Vec<B::V> = (0..MAX_ADDRESS as u32).map(|i| b.v_get((va + i).min(255))).collect();
    let d = inst.field(Field::Vdata);
    let exec = b.exec();
    // stores and atomics read their data from VDATA; what comes back (an atomic's old value with GLC) goes there
    let reads = matches!(op.kind, ImageKind::Store | ImageKind::Atomic(_));
    let data: Vec<B::V> = if reads {
        (0..op.data_regs() as u32).map(|i| data_get(b, acc, d + i)).collect()
    } else {
        Vec::new()
    };
    let out = b.v_image(&op, t, s, &addr, &data, exec)?;
    for (i, v) in out.into_iter().enumerate() {
        data_set(b, acc, d + i as u32, v, exec);
    }
    Ok(())
}

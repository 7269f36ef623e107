//! The MIMG instructions: what each does ([`ImageKind`], [`ImageInst`]) and its per-lane work on an image.

use isa_amdgpu::table::AtomicOp;

use super::format::{data_format_name, Format, Num};
use super::resource::Resource;
use super::sampler::{Sample, Sampler};
use super::Texels;
use crate::lanefn::{f16_to_f64, f64_to_f16};

/// What an MIMG instruction does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImageKind {
    Load,
    Store,
    Sample,
    Gather,
    ResInfo,
    /// `image_atomic_*`, the operation from the table's `atomic` column.
    Atomic(AtomicOp),
}

/// An MIMG instruction as the per-lane work needs it: its kind, which address registers it reads around the
/// coordinates, and its data fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ImageInst {
    pub kind: ImageKind,
    /// `_mip` loads and stores: a mip level after the coordinates.
    pub mip: bool,
    /// `_o`: packed texel offsets first.
    pub offsets: bool,
    /// `_b`: an LOD bias before the coordinates.
    pub bias: bool,
    /// `_d`, `_cd`: derivatives before the coordinates.
    pub derivatives: bool,
    /// `_l`, `_cl`: an LOD or LOD clamp after the coordinates.
    pub lod: bool,
    pub dmask: u32,
    /// Data are 16-bit halves, two to a register.
    pub d16: bool,
    /// The `unorm` bit: coordinates are texel positions.
    pub unorm: bool,
    /// `_pck` loads and stores: channels move as raw bits packed into dwords ([`Resource::load_packed`]).
    pub packed: bool,
    /// `_pck_sgn` loads: the bits above the last packed channel copy its sign.
    pub sign: bool,
    /// The `glc` bit: an atomic returns the texel's old value.
    pub glc: bool,
}

/// The most address registers an emulated MIMG form reads (offsets, bias, 3-D derivatives, three coordinates
/// and an LOD).
pub const MAX_ADDRESS: usize = 12;

impl ImageInst {
    /// The instruction `op` (its table row's `atomic` column for an image atomic) with its DMASK, D16, UNORM and
    /// GLC fields; `Err` names what is not emulated. The form each opcode names is worked out once, the first
    /// time any image instruction runs.
    pub fn of(
        op: isa_amdgpu::Opcode,
        atomic: Option<AtomicOp>,
        dmask: u32,
        d16: bool,
        unorm: bool,
        glc: bool,
    ) -> Result<ImageInst, &'static str> {
        static FORMS: std::sync::OnceLock<Vec<Result<ImageInst, &'static str>>> = std::sync::OnceLock::new();
        let forms = FORMS.get_or_init(|| {
            isa_amdgpu::Opcode::ALL
                .iter()
                .map(|o| Self::parse(o.mnemonic()))
                .collect()
        });
        let mut inst = forms
            .get(op as usize)
            .copied()
            .unwrap_or(Err("this image instruction"))?;
        if let ImageKind::Atomic(_) = inst.kind {
            inst.kind = ImageKind::Atomic(atomic.ok_or("an image atomic without its operation in the table")?);
        }
        (inst.dmask, inst.d16, inst.unorm, inst.glc) = (dmask, d16, unorm, glc);
        if inst.kind == ImageKind::Gather && dmask.count_ones() != 1 {
            return Err("image_gather4 with a DMASK of other than one channel");
        }
        // the ISA guides allow D16 only with sampling, gathers and the converting loads and stores
        if d16 && (inst.packed || matches!(inst.kind, ImageKind::Atomic(_))) {
            return Err("D16 with an image atomic or a packed (_pck) load or store");
        }
        Ok(inst)
    }

    /// The form a mnemonic names (fields zero); `Err` names what is not emulated.
    fn parse(name: &str) -> Result<ImageInst, &'static str> {
        let (dmask, d16, unorm) = (0, false, false);
        let plain = |kind, mip| ImageInst {
            kind,
            mip,
            offsets: false,
            bias: false,
            derivatives: false,
            lod: false,
            dmask,
            d16,
            unorm,
            packed: false,
            sign: false,
            glc: false,
        };
        let packed = |kind, mip, sign| ImageInst {
            packed: true,
            sign,
            ..plain(kind, mip)
        };
        let (kind, rest) = match name {
            "image_load" => return Ok(plain(ImageKind::Load, false)),
            "image_load_mip" => return Ok(plain(ImageKind::Load, true)),
            "image_store" => return Ok(plain(ImageKind::Store, false)),
            "image_store_mip" => return Ok(plain(ImageKind::Store, true)),
            "image_get_resinfo" => return Ok(plain(ImageKind::ResInfo, true)),
            "image_load_pck" => return Ok(packed(ImageKind::Load, false, false)),
            "image_load_pck_sgn" => return Ok(packed(ImageKind::Load, false, true)),
            "image_load_mip_pck" => return Ok(packed(ImageKind::Load, true, false)),
            "image_load_mip_pck_sgn" => return Ok(packed(ImageKind::Load, true, true)),
            "image_store_pck" => return Ok(packed(ImageKind::Store, false, false)),
            "image_store_mip_pck" => return Ok(packed(ImageKind::Store, true, false)),
            // the operation comes from the table row ([`ImageInst::of`]); swap stands for it here
            _ if name.starts_with("image_atomic") => return Ok(plain(ImageKind::Atomic(AtomicOp::Swap), false)),
            _ if name.starts_with("image_get_lod") => return Err("image_get_lod"),
            _ => match (name.strip_prefix("image_sample"), name.strip_prefix("image_gather4")) {
                (Some(rest), _) => (ImageKind::Sample, rest),
                (_, Some(rest)) => (ImageKind::Gather, rest),
                _ => return Err("this image instruction"),
            },
        };
        let mut op = plain(kind, false);
        for part in rest.split('_').filter(|p| !p.is_empty()) {
            match part {
                "o" => op.offsets = true,
                "b" => op.bias = true,
                "d" | "cd" => op.derivatives = true,
                "l" | "cl" => op.lod = true,
                "lz" => {}
                "c" => return Err("depth-compare sampling (_c)"),
                _ => return Err("this sampling form"),
            }
        }
        Ok(op)
    }

    /// Components the instruction moves: one per DMASK bit, or the four texels of a gather.
    fn components(&self) -> usize {
        if self.kind == ImageKind::Gather {
            4
        } else {
            (self.dmask & 0xf).count_ones() as usize
        }
    }

    /// Data registers a store reads or another form writes.
    pub fn data_regs(&self) -> usize {
        let n = self.components();
        if self.d16 {
            n.div_ceil(2)
        } else {
            n
        }
    }

    /// Data registers written for a lane of `r`: none by stores, nor by atomics without GLC; an atomic's old value
    /// (one dword, two for a 64-bit texel); the dwords a packed load's channels fill (VDATA registers past them
    /// keep their values: the guides say nothing of them); otherwise [`ImageInst::data_regs`].
    pub fn result_regs(&self, r: &Resource) -> usize {
        match self.kind {
            ImageKind::Store => 0,
            ImageKind::Atomic(_) if !self.glc => 0,
            ImageKind::Atomic(_) => r.format.bytes() as usize / 4,
            ImageKind::Load if self.packed => {
                let n = (0..r.format.channels).filter(|c| self.dmask >> c & 1 == 1).count() as u32;
                (n * r.format.bits).div_ceil(32) as usize
            }
            _ => self.data_regs(),
        }
    }

    /// Whether the instruction may run on resource `r`, as the ISA guides' image chapter states: atomics work on
    /// one 32- or 64-bit integer per texel (wavejit: formats 32 and 32_32, UINT or SINT), with the DMASK that
    /// counts their data dwords (32-bit: 0x1, compare-and-swap 0x3; 64-bit: 0x3, compare-and-swap 0xf) and
    /// UNORM set. `Err` says what is wrong.
    pub fn check(&self, r: &Resource) -> Result<(), String> {
        let ImageKind::Atomic(op) = self.kind else {
            return Ok(());
        };
        let f = &r.format;
        if !(f.num.integer() && (f.data == 4 || f.data == 11)) {
            return Err(format!(
                "image atomics work on 32- or 64-bit integer texels (data format 32 or 32_32, UINT or SINT); this image is {} {:?}",
                data_format_name(f.data),
                f.num
            ));
        }
        let legal = match (f.bytes(), op == AtomicOp::CmpSwap) {
            (4, false) => 0x1,
            (4, true) | (8, false) => 0x3,
            _ => 0xf,
        };
        if self.dmask != legal {
            return Err(format!(
                "DMASK {:#x} is not valid for this atomic on a {}-bit texel: the ISA guide allows {legal:#x}",
                self.dmask,
                f.bytes() * 8
            ));
        }
        if !self.unorm {
            return Err("image atomics need UNORM set (the ISA guide requires it for image stores and atomics)".into());
        }
        Ok(())
    }

    /// Components moved to or from registers `regs` (d16 halves unpacked).
    pub(super) fn unpack(&self, regs: &[u32], format: &Format) -> [u32; 4] {
        let mut out = [0u32; 4];
        let mut k = 0;
        for (c, o) in out.iter_mut().enumerate() {
            if self.dmask >> c & 1 == 0 {
                continue;
            }
            *o = if self.d16 {
                let h = (regs.get(k / 2).copied().unwrap_or(0) >> (16 * (k % 2))) & 0xffff;
                if format.num == Num::Sint {
                    h as u16 as i16 as i32 as u32
                } else if format.num.integer() {
                    h
                } else {
                    (f16_to_f64(h as u16) as f32).to_bits()
                }
            } else {
                regs.get(k).copied().unwrap_or(0)
            };
            k += 1;
        }
        out
    }

    /// Registers holding `values` (already in component order), d16 halves packed.
    pub(super) fn pack(&self, values: &[u32], format: &Format) -> [u32; 4] {
        let mut out = [0u32; 4];
        for (k, &v) in values.iter().enumerate() {
            if self.d16 {
                let h = if format.num.integer() {
                    v & 0xffff
                } else {
                    f64_to_f16(f32::from_bits(v) as f64) as u32
                };
                out[k / 2] |= h << (16 * (k % 2));
            } else {
                out[k] = v;
            }
        }
        out
    }

    /// One lane: `addr` are its address registers from VADDR on, `data` its store data; returns its result
    /// registers (meaningless for stores).
    pub fn lane<M: Texels>(
        &self,
        mem: &mut M,
        r: &Resource,
        s: Option<&Sampler>,
        addr: &[u32],
        data: &[u32],
    ) -> Result<[u32; 4], M::Error> {
        let nc = r.dim.coords();
        let nf = r.dim.filtered();
        let mut at = 0;
        let offsets = if self.offsets {
            at += 1;
            // six bits per coordinate, signed
            let o = addr[0];
            [0, 1, 2].map(|i| ((o >> (8 * i) & 0x3f) << 26) as i32 >> 26)
        } else {
            [0; 3]
        };
        at += self.bias as usize + if self.derivatives { 2 * nf } else { 0 };
        let coords = &addr[at..at + nc];
        let mip = if self.mip { addr[at + nc] } else { 0 };
        let values: [u32; 4] = match self.kind {
            ImageKind::ResInfo => r.size_info(addr[0]),
            ImageKind::Atomic(op) => {
                let mut c = [0u32; 3];
                c[..nc].copy_from_slice(coords);
                return r.atomic(mem, c, op, data);
            }
            ImageKind::Load | ImageKind::Store if self.packed => {
                let mut c = [0u32; 3];
                c[..nc].copy_from_slice(coords);
                // one level: other levels read zeros and drop stores, as the converting forms do
                if self.kind == ImageKind::Store {
                    if mip == 0 {
                        r.store_packed(mem, c, self.dmask, data)?;
                    }
                    return Ok([0; 4]);
                }
                return Ok(if mip == 0 {
                    r.load_packed(mem, c, self.dmask, self.sign)?
                } else {
                    [0; 4]
                });
            }
            ImageKind::Load | ImageKind::Store => {
                let mut c = [0u32; 3];
                c[..nc].copy_from_slice(coords);
                if self.kind == ImageKind::Store {
                    if mip == 0 {
                        r.store(mem, c, self.unpack(data, &r.format))?;
                    }
                    return Ok([0; 4]);
                }
                if mip != 0 {
                    [0; 4]
                } else {
                    r.load(mem, c)?
                }
            }
            ImageKind::Sample | ImageKind::Gather => {
                let s = s.expect("sampling forms have a sampler");
                let mut c = [0f32; 3];
                for (o, &v) in c.iter_mut().zip(coords) {
                    *o = f32::from_bits(v);
                }
                let kind = if self.kind == ImageKind::Gather {
                    Sample::Gather(self.dmask.trailing_zeros() as usize)
                } else {
                    Sample::Color
                };
                r.sample(mem, s, self.unorm, c, offsets, kind)?
            }
        };
        let picked: Vec<u32> = if self.kind == ImageKind::Gather {
            values.to_vec()
        } else {
            (0..4).filter(|c| self.dmask >> c & 1 == 1).map(|c| values[c]).collect()
        };
        let format = if self.kind == ImageKind::ResInfo {
            Format::of(1, 32, Num::Uint).expect("r32 uint")
        } else {
            r.format
        };
        Ok(self.pack(&picked, &format))
    }
}

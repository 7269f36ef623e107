//! The sampler (S#: addressing modes, border colours, filters) and sampling: `image_sample` and
//! `image_gather4` of a [`Resource`](super::Resource).

use super::format::Format;
use super::resource::Resource;
use super::Texels;

/// Texture addressing modes (`CLAMP_X/Y/Z`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wrap {
    Repeat = 0,
    Mirror = 1,
    ClampLast = 2,
    MirrorOnceLast = 3,
    ClampHalfBorder = 4,
    MirrorOnceHalfBorder = 5,
    ClampBorder = 6,
    MirrorOnceBorder = 7,
}

impl Wrap {
    fn from_bits(b: u32) -> Wrap {
        [
            Wrap::Repeat,
            Wrap::Mirror,
            Wrap::ClampLast,
            Wrap::MirrorOnceLast,
            Wrap::ClampHalfBorder,
            Wrap::MirrorOnceHalfBorder,
            Wrap::ClampBorder,
            Wrap::MirrorOnceBorder,
        ][(b & 7) as usize]
    }

    /// Integer texel index `i` of a coordinate with `n` texels; `None` reads the border.
    fn apply(self, i: i64, n: u32) -> Option<u32> {
        let n = n as i64;
        let r = match self {
            Wrap::Repeat => i.rem_euclid(n),
            Wrap::Mirror => {
                let m = i.rem_euclid(2 * n);
                if m >= n {
                    2 * n - 1 - m
                } else {
                    m
                }
            }
            Wrap::ClampLast => i.clamp(0, n - 1),
            Wrap::MirrorOnceLast => (if i < 0 { -1 - i } else { i }).min(n - 1),
            Wrap::ClampHalfBorder | Wrap::ClampBorder => return (0..n).contains(&i).then_some(i as u32),
            Wrap::MirrorOnceHalfBorder | Wrap::MirrorOnceBorder => {
                let m = if i < 0 { -1 - i } else { i };
                return (m < n).then_some(m as u32);
            }
        };
        Some(r as u32)
    }
}

/// Border colours (`BORDER_COLOR_TYPE`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Border {
    TransparentBlack = 0,
    OpaqueBlack = 1,
    OpaqueWhite = 2,
}

/// A decoded sampler (S#).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sampler {
    pub wrap: [Wrap; 3],
    /// Coordinates are texel positions, not 0..1.
    pub unnormalized: bool,
    /// Bilinear (else nearest) filtering.
    pub linear: bool,
    pub border: Border,
}

impl Sampler {
    pub fn decode(s: [u32; 4]) -> Result<Sampler, String> {
        let w = |i: u32| Wrap::from_bits(s[0] >> (3 * i));
        if s[0] >> 12 & 7 != 0 {
            return Err("depth-compare samplers are not emulated".into());
        }
        let (mag, min) = (s[2] >> 20 & 3, s[2] >> 22 & 3);
        if mag > 1 || min > 1 {
            return Err(format!("anisotropic filtering (filters {mag}, {min}) is not emulated"));
        }
        if mag != min {
            return Err("different magnification and minification filters are not emulated".into());
        }
        let border = match s[3] >> 30 {
            0 => Border::TransparentBlack,
            1 => Border::OpaqueBlack,
            2 => Border::OpaqueWhite,
            _ => return Err("border colours from the border colour table are not emulated".into()),
        };
        Ok(Sampler {
            wrap: [w(0), w(1), w(2)],
            unnormalized: s[0] >> 15 & 1 == 1,
            linear: mag == 1,
            border,
        })
    }

    /// The S# describing this sampler.
    pub fn encode(&self) -> [u32; 4] {
        let wrap = self
            .wrap
            .iter()
            .enumerate()
            .fold(0, |a, (i, &w)| a | (w as u32) << (3 * i));
        let f = self.linear as u32;
        [
            wrap | (self.unnormalized as u32) << 15,
            0xfff << 12,
            f << 20 | f << 22,
            (self.border as u32) << 30,
        ]
    }

    fn border_value(&self, format: &Format) -> [u32; 4] {
        let one = format.one();
        match self.border {
            Border::TransparentBlack => [0; 4],
            Border::OpaqueBlack => [0, 0, 0, one],
            Border::OpaqueWhite => [one; 4],
        }
    }
}

/// Sub-texel steps of sampling positions.
const SUBTEXELS: f32 = 256.0;

/// Which texels `image_sample` / `image_gather4` reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sample {
    /// Filtered colour.
    Color,
    /// Channel `n` of the four texels of the bilinear footprint.
    Gather(usize),
}

impl Resource {
    /// `image_sample` (or `image_gather4`) at float coordinates `c` (layer last for arrays), with texel
    /// `offsets` added (the `_o` forms).
    pub fn sample<M: Texels>(
        &self,
        mem: &mut M,
        s: &Sampler,
        unnormalized: bool,
        c: [f32; 3],
        offsets: [i32; 3],
        kind: Sample,
    ) -> Result<[u32; 4], M::Error> {
        let e = self.extent();
        let nf = self.dim.filtered();
        let layer = self.dim.arrayed().then(|| {
            let l = c[nf].round_ties_even();
            if l.is_nan() {
                0
            } else {
                l.clamp(0.0, (e[nf] - 1) as f32) as u32
            }
        });
        let unnorm = unnormalized || s.unnormalized;
        // texel-space position of each filtered coordinate, in the sampler's fixed point (8 fractional bits, so
        // a coordinate a rounding error off a texel edge lands on it, and filter weights are multiples of 1/256)
        let pos: Vec<f32> = (0..nf)
            .map(|i| {
                let p = if unnorm { c[i] } else { c[i] * e[i] as f32 };
                (p * SUBTEXELS).round_ties_even() / SUBTEXELS
            })
            .collect();
        let linear = s.linear || matches!(kind, Sample::Gather(_));
        // (first texel, weight of the second) along each axis
        let axes: Vec<(i64, f32)> = pos
            .iter()
            .enumerate()
            .map(|(i, &p)| {
                // far outside any image: keep the arithmetic finite (every addressing mode gives the same texel)
                let p = if p.is_nan() {
                    0.0
                } else {
                    p.clamp(-16_777_216.0, 16_777_216.0)
                };
                if linear {
                    let q = p - 0.5;
                    (q.floor() as i64 + offsets[i] as i64, q - q.floor())
                } else {
                    (p.floor() as i64 + offsets[i] as i64, 0.0)
                }
            })
            .collect();
        let corners = if linear { 1 << nf } else { 1 };
        let mut texels = [[0u32; 4]; 8];
        let mut weights = [0f32; 8];
        for (k, (t, w)) in texels.iter_mut().zip(weights.iter_mut()).enumerate().take(corners) {
            let mut at = [0u32; 3];
            let mut weight = 1.0f32;
            let mut inside = true;
            for (i, &(first, frac)) in axes.iter().enumerate() {
                let second = k >> i & 1 == 1;
                weight *= if second { frac } else { 1.0 - frac };
                match s.wrap[i].apply(first + second as i64, e[i]) {
                    Some(v) => at[i] = v,
                    None => inside = false,
                }
            }
            if let Some(l) = layer {
                at[nf] = l;
            }
            *t = match self.fetch(mem, inside.then_some(at))? {
                Some(v) => v,
                None => self.select(s.border_value(&self.format)),
            };
            *w = weight;
        }
        Ok(match kind {
            // gather order: (i0, j1), (i1, j1), (i1, j0), (i0, j0)
            Sample::Gather(ch) if nf == 2 => [texels[2][ch], texels[3][ch], texels[1][ch], texels[0][ch]],
            Sample::Gather(ch) => [texels[0][ch], texels[1][ch], texels[0][ch], texels[1][ch]],
            Sample::Color if !linear || self.format.num.integer() => texels[0],
            Sample::Color => {
                let mut out = [0f32; 4];
                for (t, &w) in texels.iter().zip(weights.iter()).take(corners) {
                    for (o, &v) in out.iter_mut().zip(t.iter()) {
                        *o += w * f32::from_bits(v);
                    }
                }
                out.map(f32::to_bits)
            }
        })
    }
}

//! Processors and target ids: the `EF_AMDGPU_MACH` table, the xnack/sramecc settings in `e_flags`, target-id
//! strings as LLVM prints them (`gfx90a:sramecc-:xnack-`), and selector matching (`gfx90a`, `gfx90a:xnack-`).

use std::fmt;

use serde::Serialize;

/// The hardware generation of a processor, as far as the code-object reader needs it (kernel descriptor layout,
/// register granules).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GfxFamily {
    /// GFX6 (Southern Islands).
    Gfx6,
    /// GFX7 (Sea Islands).
    Gfx7,
    /// GFX8 (Volcanic Islands).
    Gfx8,
    /// GFX9 without the unified VGPR/AGPR file (gfx900 … gfx909, gfx90c, gfx9-generic).
    Gfx9,
    /// gfx90a, gfx940, gfx941, gfx942, gfx950: GFX9 with the unified 512-entry VGPR/AGPR file and `COMPUTE_PGM_RSRC3`
    /// holding `ACCUM_OFFSET` and `TG_SPLIT`.
    Gfx90a,
    /// GFX10 (RDNA 1 and 2).
    Gfx10,
    /// GFX11 (RDNA 3).
    Gfx11,
    /// GFX12 (RDNA 4).
    Gfx12,
}

impl GfxFamily {
    /// True for GFX10 and later (wave32 capable, SGPRs not granulated in `COMPUTE_PGM_RSRC1`).
    pub fn is_gfx10_plus(self) -> bool {
        self >= GfxFamily::Gfx10
    }
}

/// One row of the `EF_AMDGPU_MACH_AMDGCN_*` table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ProcessorInfo {
    /// The `EF_AMDGPU_MACH` value (`e_flags & 0xff`).
    pub mach: u8,
    /// The processor name as LLVM spells it (`gfx90a`, `gfx9-generic`).
    pub name: &'static str,
    /// The generation.
    pub family: GfxFamily,
}

macro_rules! processors {
    ($($mach:literal $name:literal $fam:ident,)*) => {
        /// Every AMDGCN processor LLVM 19 knows, and gfx950 (LLVM 20), by `EF_AMDGPU_MACH` value
        /// (llvm/BinaryFormat/ELF.h).
        pub const PROCESSORS: &[ProcessorInfo] = &[
            $(ProcessorInfo { mach: $mach, name: $name, family: GfxFamily::$fam },)*
        ];
    };
}

processors! {
    0x20 "gfx600" Gfx6, 0x21 "gfx601" Gfx6, 0x3a "gfx602" Gfx6,
    0x22 "gfx700" Gfx7, 0x23 "gfx701" Gfx7, 0x24 "gfx702" Gfx7, 0x25 "gfx703" Gfx7, 0x26 "gfx704" Gfx7,
    0x3b "gfx705" Gfx7,
    0x28 "gfx801" Gfx8, 0x29 "gfx802" Gfx8, 0x2a "gfx803" Gfx8, 0x3c "gfx805" Gfx8, 0x2b "gfx810" Gfx8,
    0x2c "gfx900" Gfx9, 0x2d "gfx902" Gfx9, 0x2e "gfx904" Gfx9, 0x2f "gfx906" Gfx9, 0x30 "gfx908" Gfx9,
    0x31 "gfx909" Gfx9, 0x32 "gfx90c" Gfx9, 0x51 "gfx9-generic" Gfx9,
    0x3f "gfx90a" Gfx90a, 0x40 "gfx940" Gfx90a, 0x4b "gfx941" Gfx90a, 0x4c "gfx942" Gfx90a, 0x4f "gfx950" Gfx90a,
    0x33 "gfx1010" Gfx10, 0x34 "gfx1011" Gfx10, 0x35 "gfx1012" Gfx10, 0x42 "gfx1013" Gfx10,
    0x52 "gfx10-1-generic" Gfx10,
    0x36 "gfx1030" Gfx10, 0x37 "gfx1031" Gfx10, 0x38 "gfx1032" Gfx10, 0x39 "gfx1033" Gfx10,
    0x3e "gfx1034" Gfx10, 0x3d "gfx1035" Gfx10, 0x45 "gfx1036" Gfx10, 0x53 "gfx10-3-generic" Gfx10,
    0x41 "gfx1100" Gfx11, 0x46 "gfx1101" Gfx11, 0x47 "gfx1102" Gfx11, 0x44 "gfx1103" Gfx11,
    0x43 "gfx1150" Gfx11, 0x4a "gfx1151" Gfx11, 0x55 "gfx1152" Gfx11, 0x54 "gfx11-generic" Gfx11,
    0x48 "gfx1200" Gfx12, 0x4e "gfx1201" Gfx12, 0x59 "gfx12-generic" Gfx12,
}

/// Looks a processor up by `EF_AMDGPU_MACH` value.
pub fn processor_by_mach(mach: u8) -> Option<&'static ProcessorInfo> {
    PROCESSORS.iter().find(|p| p.mach == mach)
}

/// Looks a processor up by name (`gfx90a`).
pub fn processor_by_name(name: &str) -> Option<&'static ProcessorInfo> {
    PROCESSORS.iter().find(|p| p.name == name)
}

/// The setting of a target feature (xnack, sramecc) in a target id or in `e_flags`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FeatureSetting {
    /// The processor does not have the feature (`e_flags` value 0).
    Unsupported,
    /// Code works with the feature on or off (absent from the target id).
    #[default]
    Any,
    /// Feature off (`feature-` in the target id).
    Off,
    /// Feature on (`feature+` in the target id).
    On,
}

impl FeatureSetting {
    /// Decodes the two-bit v4+ encoding (0 unsupported, 1 any, 2 off, 3 on).
    pub fn from_v4_bits(bits: u32) -> Self {
        match bits & 3 {
            0 => FeatureSetting::Unsupported,
            1 => FeatureSetting::Any,
            2 => FeatureSetting::Off,
            _ => FeatureSetting::On,
        }
    }

    /// The `+`/`-` suffix used in target ids, for `On`/`Off`.
    pub fn suffix(self) -> Option<char> {
        match self {
            FeatureSetting::On => Some('+'),
            FeatureSetting::Off => Some('-'),
            _ => None,
        }
    }

    /// True if code compiled with setting `self` may run where `wanted` is requested: equal, or `self` is
    /// any/unsupported (code that does not depend on the feature).
    pub fn satisfies(self, wanted: FeatureSetting) -> bool {
        match wanted {
            FeatureSetting::On | FeatureSetting::Off => {
                self == wanted || matches!(self, FeatureSetting::Any | FeatureSetting::Unsupported)
            }
            FeatureSetting::Any | FeatureSetting::Unsupported => true,
        }
    }
}

/// A target id: processor plus xnack/sramecc settings, printed in LLVM's canonical form
/// (`gfx90a`, `gfx90a:xnack+`, `gfx90a:sramecc-:xnack-`; sramecc before xnack, any/unsupported omitted).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct TargetId {
    /// Processor name (`gfx90a`); for an `EF_AMDGPU_MACH` value not in [`PROCESSORS`], `unknown-mach-0xNN`.
    pub processor: String,
    /// `EF_AMDGPU_MACH` value, when the id came from `e_flags`.
    pub mach: Option<u8>,
    /// The sramecc setting.
    pub sramecc: FeatureSetting,
    /// The xnack setting.
    pub xnack: FeatureSetting,
    /// Generic code object version (`e_flags >> 24`, code object v6 generic targets), if non-zero.
    pub generic_version: Option<u8>,
}

impl TargetId {
    /// Decodes `e_flags` of a code object of version `code_object_version` (3, 4, 5, 6).
    ///
    /// v3 has single "enabled" bits (0x100 xnack, 0x200 sramecc), read as `On`, or `Any` when clear.
    pub fn from_e_flags(e_flags: u32, code_object_version: u32) -> TargetId {
        let mach = (e_flags & 0xff) as u8;
        let processor = match processor_by_mach(mach) {
            Some(p) => p.name.to_string(),
            None => format!("unknown-mach-{mach:#04x}"),
        };
        let (xnack, sramecc) = if code_object_version <= 3 {
            let bit = |b: u32| {
                if e_flags & b != 0 {
                    FeatureSetting::On
                } else {
                    FeatureSetting::Any
                }
            };
            (bit(0x100), bit(0x200))
        } else {
            (
                FeatureSetting::from_v4_bits(e_flags >> 8),
                FeatureSetting::from_v4_bits(e_flags >> 10),
            )
        };
        let generic = (e_flags >> 24) as u8;
        TargetId {
            processor,
            mach: Some(mach),
            sramecc,
            xnack,
            generic_version: (code_object_version >= 6 && generic != 0).then_some(generic),
        }
    }

    /// Parses `gfx90a`, `gfx90a:xnack-`, `gfx90a:sramecc+:xnack-`, or a full triple form
    /// `amdgcn-amd-amdhsa--gfx90a:xnack-` (everything up to the last `-` before the processor is dropped).
    /// Features other than xnack and sramecc are rejected.
    pub fn parse(text: &str) -> Result<TargetId, String> {
        let mut parts = text.split(':');
        let head = parts.next().unwrap_or("");
        let processor = match head.rfind("--") {
            Some(i) => head.get(i + 2..).unwrap_or(""),
            None => head,
        };
        if processor.is_empty() {
            return Err(format!("target id {text:?} has no processor"));
        }
        if processor.contains(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_')) {
            return Err(format!("target id {text:?}: bad processor name {processor:?}"));
        }
        let mut id = TargetId {
            processor: processor.to_string(),
            mach: processor_by_name(processor).map(|p| p.mach),
            sramecc: FeatureSetting::Any,
            xnack: FeatureSetting::Any,
            generic_version: None,
        };
        for feature in parts {
            let (name, setting) = match feature.strip_suffix('+') {
                Some(n) => (n, FeatureSetting::On),
                None => match feature.strip_suffix('-') {
                    Some(n) => (n, FeatureSetting::Off),
                    None => return Err(format!("target id {text:?}: feature {feature:?} lacks +/-")),
                },
            };
            match name {
                "xnack" => id.xnack = setting,
                "sramecc" => id.sramecc = setting,
                _ => return Err(format!("target id {text:?}: unknown feature {name:?}")),
            }
        }
        Ok(id)
    }

    /// The canonical target id string (same as [`fmt::Display`]).
    pub fn canonical(&self) -> String {
        self.to_string()
    }

    /// True if this (an entry's or code object's) target satisfies `selector`: same processor, and every
    /// feature the selector sets is either equal here or absent here (any/unsupported).
    pub fn matches(&self, selector: &TargetId) -> bool {
        self.processor == selector.processor
            && self.sramecc.satisfies(selector.sramecc)
            && self.xnack.satisfies(selector.xnack)
    }

    /// The processor's table row, if LLVM 19 knows it.
    pub fn info(&self) -> Option<&'static ProcessorInfo> {
        match self.mach {
            Some(m) => processor_by_mach(m),
            None => processor_by_name(&self.processor),
        }
    }

    /// The processor's generation, if known.
    pub fn family(&self) -> Option<GfxFamily> {
        self.info().map(|p| p.family)
    }
}

impl fmt::Display for TargetId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.processor)?;
        if let Some(c) = self.sramecc.suffix() {
            write!(f, ":sramecc{c}")?;
        }
        if let Some(c) = self.xnack.suffix() {
            write!(f, ":xnack{c}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mach_table_has_unique_values_and_names() {
        for (i, a) in PROCESSORS.iter().enumerate() {
            for b in &PROCESSORS[i + 1..] {
                assert_ne!(a.mach, b.mach, "{} and {}", a.name, b.name);
                assert_ne!(a.name, b.name);
            }
        }
    }

    #[test]
    fn e_flags_v4_give_canonical_target_ids() {
        assert_eq!(TargetId::from_e_flags(0x53f, 4).to_string(), "gfx90a");
        assert_eq!(TargetId::from_e_flags(0xa3f, 5).to_string(), "gfx90a:sramecc-:xnack-");
        assert_eq!(TargetId::from_e_flags(0x73f, 5).to_string(), "gfx90a:xnack+");
        assert_eq!(TargetId::from_e_flags(0x41, 5).to_string(), "gfx1100");
        let generic = TargetId::from_e_flags(0x0100_0151, 6);
        assert_eq!(generic.to_string(), "gfx9-generic");
        assert_eq!(generic.generic_version, Some(1));
    }

    #[test]
    fn selector_matching_treats_any_as_wildcard() {
        let entry_any = TargetId::parse("gfx90a").unwrap();
        let entry_off = TargetId::parse("gfx90a:xnack-").unwrap();
        let entry_on = TargetId::parse("gfx90a:xnack+").unwrap();
        let sel = TargetId::parse("gfx90a:xnack-").unwrap();
        assert!(entry_any.matches(&sel));
        assert!(entry_off.matches(&sel));
        assert!(!entry_on.matches(&sel));
        let plain = TargetId::parse("gfx90a").unwrap();
        assert!(entry_on.matches(&plain) && entry_off.matches(&plain));
        assert!(!TargetId::parse("gfx908").unwrap().matches(&plain));
    }

    #[test]
    fn parse_accepts_triple_prefix_and_rejects_unknown_features() {
        let t = TargetId::parse("amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-").unwrap();
        assert_eq!(t.to_string(), "gfx90a:sramecc+:xnack-");
        assert_eq!(t.mach, Some(0x3f));
        assert!(TargetId::parse("gfx90a:foo+").is_err());
        assert!(TargetId::parse("gfx90a:xnack").is_err());
        assert!(TargetId::parse("").is_err());
    }
}

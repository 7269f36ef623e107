//! Device presets: the emulated GPUs, as data.
//!
//! Numbers are AMD's public specifications (ROCm's GPU hardware specification table and the products' data
//! sheets): compute units, caches, register files, LDS, memory size, clocks, the product's PCI id and memory
//! bus, peak arithmetic throughputs. The functional engine reads the target, the CU count, the topology (XCDs,
//! shader engines, CUs: where HW_ID and XCC_ID place a wave, and what the timing model's dispatcher places
//! workgroups over) and the register/LDS limits; the runtime shim, the driver, sysfs and the SMI views report
//! the rest to programs, and `wavejit analyze` draws its roofs from the peaks. The timing model's machine
//! tables ([`crate::timing::machine::MACHINES`], one per preset, in the same order) take the topology from here
//! and are checked against the rest by a test over [`PRESETS`].
//!
//! Adding a device is a row here (CDNA2 GCDs share `CDNA2_GCD`'s fields) and its machine table; tests over
//! `PRESETS` here, in `timing::machine` and in `profiler-hooks`' SMI cards name whatever else a row lacks.

use std::fmt;

use isa_amdgpu::Target;

const KIB: u64 = 1024;
const MIB: u64 = 1024 * KIB;
const GIB: u64 = 1024 * MIB;

/// One emulated GPU model.
#[derive(Debug, Clone, PartialEq)]
pub struct DevicePreset {
    /// Short name used on command lines (`mi300x`).
    pub id: &'static str,
    /// Other names [`DevicePreset::by_name`] takes for it (`mi250x` for `mi250x-gcd`); help and messages list
    /// the ids.
    pub aliases: &'static [&'static str],
    /// Marketing name (`AMD Instinct MI300X`).
    pub name: &'static str,
    /// ISA the device runs.
    pub target: Target,
    /// Processor name as ROCm reports it (`gfx942`).
    pub gfx: &'static str,
    pub compute_units: u32,
    /// Compute units per shader engine / XCD group, as the runtime shim and the driver report the device's
    /// shader engines (`compute_units / cus_per_group`).
    pub cus_per_group: u32,
    /// How the compute units are grouped into XCDs and shader engines.
    pub topology: Topology,
    pub simds_per_cu: u32,
    pub wave_size: u32,
    /// Wave slots per SIMD.
    pub max_waves_per_simd: u32,
    /// Unified VGPR+AGPR file per SIMD, in 32-bit registers per lane (512 on gfx90a/gfx942).
    pub vgprs_per_lane: u32,
    /// SGPRs a wave may address.
    pub sgprs_per_wave: u32,
    /// LDS per workgroup (and per CU), bytes.
    pub lds_bytes: u64,
    pub max_workgroup_size: u32,
    /// Peak engine clock, MHz.
    pub engine_clock_mhz: u32,
    /// Device memory, bytes.
    pub memory_bytes: u64,
    /// Peak memory bandwidth, GB/s.
    pub memory_bandwidth_gbs: u32,
    pub l1_vector_bytes: u64,
    /// Scalar L1, shared by `cus_per_scalar_cache` CUs.
    pub l1_scalar_bytes: u64,
    pub cus_per_scalar_cache: u32,
    pub l2_bytes: u64,
    /// Last-level (Infinity Cache / MALL) bytes; 0 where there is none.
    pub mall_bytes: u64,
    /// What a floating-point atomic does to fine-grained memory.
    pub fine_grained_float_atomics: FineGrainedFloatAtomics,
    /// PCI device id of the product (as `lspci`, rocminfo's chip id, `/sys/.../device` and the SMI views give
    /// it).
    pub pci_device_id: u32,
    /// PCI revision id: the one libdrm's marketing-name table (`amdgpu.ids`) knows the product by.
    pub pci_revision: u32,
    /// Memory clock, MHz: the HBM clock of the product (its per-pin data rate / 2), which with
    /// `memory_width_bits` gives `memory_bandwidth_gbs`.
    pub memory_clock_mhz: u32,
    /// Memory bus width, bits.
    pub memory_width_bits: u32,
    /// Published peak arithmetic throughputs (the roofline's compute roofs).
    pub peak_tflops: PeakTflops,
}

/// A device's published peak throughputs, TFLOP/s (AMD's data sheets).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PeakTflops {
    pub fp64_vector: f64,
    pub fp32_vector: f64,
    pub fp64_matrix: f64,
    pub fp32_matrix: f64,
    pub fp16_matrix: f64,
}

/// What a floating-point read-modify-write atomic (f32 and packed-f16/bf16 add, f64 add, min and max) does when
/// it reaches fine-grained (host-coherent) memory. ROCm's "Hardware atomics operation support" page: on MI200
/// only the L2 cache performs float atomics; fine-grained memory is write-uncached through the page tables,
/// the atomic goes to the Infinity Fabric, which cannot carry it, and it is a NOP whose requesting lane gets 0.
/// On MI300 the Infinity Fabric performs them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FineGrainedFloatAtomics {
    #[default]
    Performed,
    /// Memory is left unchanged and the returned old value is 0.
    Dropped,
}

/// How a device's compute units are grouped: accelerator complex dies (XCDs), each with its shader engines
/// and compute units. CUs are numbered XCD by XCD and dealt round-robin over an XCD's shader engines.
#[derive(Debug, Clone, PartialEq)]
pub struct Topology {
    /// XCDs (1 for a CDNA2 GCD). Each has its own L2.
    pub xcds: u32,
    /// Shader engines per XCD.
    pub ses_per_xcd: u32,
    /// Active compute units per XCD (not always a multiple of `ses_per_xcd`: MI300X has 38 on 4 SEs).
    pub cus_per_xcd: u32,
    pub source: &'static str,
}

impl Topology {
    /// MI300X: 8 XCDs of 38 active CUs on 4 shader engines each.
    pub const MI300X: Topology = Topology {
        xcds: 8,
        ses_per_xcd: 4,
        cus_per_xcd: 38,
        source: "AMD CDNA3 white paper and ROCm 'MI300 microarchitecture': 8 XCDs of 40 CUs with 38 \
            active (304); 4 shader engines per XCD (rocminfo 'Shader Engines: 32')",
    };

    /// One CDNA2 GCD (MI210, one GCD of an MI250X) with `cus` CUs on 8 shader engines.
    pub const fn cdna2_gcd(cus: u32) -> Topology {
        Topology {
            xcds: 1,
            ses_per_xcd: 8,
            cus_per_xcd: cus,
            source: "CUs: ROCm GPU hardware specifications table (MI210 104, MI250X 110 per GCD); 8 shader \
                engines per GCD: ROCm docs 'Shader engine' (omniperf docs: the MI250X has 8 SEs per \
                accelerator) and rocminfo's 'Shader Engines: 8'",
        }
    }

    /// Compute units on the device.
    pub fn cus(&self) -> u32 {
        self.xcds * self.cus_per_xcd
    }

    /// The XCD of compute unit `cu`.
    pub fn xcd_of(&self, cu: u32) -> u32 {
        cu / self.cus_per_xcd
    }

    /// The shader engine (within its XCD) of compute unit `cu`.
    pub fn se_of(&self, cu: u32) -> u32 {
        (cu % self.cus_per_xcd) % self.ses_per_xcd
    }

    /// The CU within its shader engine of compute unit `cu`.
    pub fn cu_in_se(&self, cu: u32) -> u32 {
        (cu % self.cus_per_xcd) / self.ses_per_xcd
    }
}

/// What the CDNA2 presets share: one GCD (gfx90a) of 64 GiB HBM2e at 1.6 TB/s. A row takes these with
/// `..CDNA2_GCD` and sets its own identity, compute units and peaks.
const CDNA2_GCD: DevicePreset = DevicePreset {
    id: "",
    aliases: &[],
    name: "",
    target: Target::Gfx90a,
    gfx: "gfx90a",
    compute_units: 0,
    cus_per_group: 0,
    topology: Topology::cdna2_gcd(0),
    simds_per_cu: 4,
    wave_size: 64,
    max_waves_per_simd: 8,
    vgprs_per_lane: 512,
    sgprs_per_wave: 102,
    lds_bytes: 64 * KIB,
    max_workgroup_size: 1024,
    engine_clock_mhz: 1700,
    memory_bytes: 64 * GIB,
    memory_bandwidth_gbs: 1638,
    l1_vector_bytes: 16 * KIB,
    l1_scalar_bytes: 16 * KIB,
    cus_per_scalar_cache: 2,
    l2_bytes: 8 * MIB,
    mall_bytes: 0,
    fine_grained_float_atomics: FineGrainedFloatAtomics::Dropped,
    pci_device_id: 0,
    pci_revision: 0,
    // HBM2e, 4096 bits at 1600 MHz: 1.6 TB/s
    memory_clock_mhz: 1600,
    memory_width_bits: 4096,
    peak_tflops: PeakTflops {
        fp64_vector: 0.0,
        fp32_vector: 0.0,
        fp64_matrix: 0.0,
        fp32_matrix: 0.0,
        fp16_matrix: 0.0,
    },
};

/// Every preset, the default first.
pub static PRESETS: &[DevicePreset] = &[
    DevicePreset {
        id: "mi300x",
        aliases: &[],
        name: "AMD Instinct MI300X",
        target: Target::Gfx942,
        gfx: "gfx942",
        compute_units: 304,
        cus_per_group: 38,
        topology: Topology::MI300X,
        simds_per_cu: 4,
        wave_size: 64,
        max_waves_per_simd: 8,
        vgprs_per_lane: 512,
        sgprs_per_wave: 102,
        lds_bytes: 64 * KIB,
        max_workgroup_size: 1024,
        engine_clock_mhz: 2100,
        memory_bytes: 192 * GIB,
        memory_bandwidth_gbs: 5300,
        l1_vector_bytes: 32 * KIB,
        l1_scalar_bytes: 16 * KIB,
        cus_per_scalar_cache: 2,
        l2_bytes: 32 * MIB,
        mall_bytes: 256 * MIB,
        fine_grained_float_atomics: FineGrainedFloatAtomics::Performed,
        pci_device_id: 0x74a1,
        pci_revision: 0x00,
        // HBM3 at 5.2 Gb/s per pin, 8192 bits: 5.3 TB/s
        memory_clock_mhz: 2600,
        memory_width_bits: 8192,
        peak_tflops: PeakTflops {
            fp64_vector: 81.7,
            fp32_vector: 163.4,
            fp64_matrix: 163.4,
            fp32_matrix: 163.4,
            fp16_matrix: 1307.4,
        },
    },
    DevicePreset {
        id: "mi210",
        name: "AMD Instinct MI210",
        compute_units: 104,
        cus_per_group: 26,
        topology: Topology::cdna2_gcd(104),
        pci_device_id: 0x740f,
        pci_revision: 0x02,
        peak_tflops: PeakTflops {
            fp64_vector: 22.6,
            fp32_vector: 22.6,
            fp64_matrix: 45.3,
            fp32_matrix: 45.3,
            fp16_matrix: 181.0,
        },
        ..CDNA2_GCD
    },
    DevicePreset {
        id: "mi250x-gcd",
        // one GCD of the two on the card, as ROCm shows it
        aliases: &["mi250x"],
        name: "AMD Instinct MI250X (one GCD)",
        compute_units: 110,
        cus_per_group: 28,
        topology: Topology::cdna2_gcd(110),
        pci_device_id: 0x740c,
        // "AMD Instinct MI250X / MI250"
        pci_revision: 0x01,
        // half the MI250X's
        peak_tflops: PeakTflops {
            fp64_vector: 23.95,
            fp32_vector: 23.95,
            fp64_matrix: 47.85,
            fp32_matrix: 47.85,
            fp16_matrix: 191.5,
        },
        ..CDNA2_GCD
    },
];

/// The id of [`DevicePreset::program_default`]'s preset.
const PROGRAM_DEFAULT: &str = "mi210";

/// A device name that no preset has.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown device `{0}` (known: {known})", known = PRESETS.iter().map(|p| p.id).collect::<Vec<_>>().join(", "))]
pub struct UnknownDevice(pub String);

impl DevicePreset {
    /// The preset with id or alias `name` (case-insensitive).
    pub fn by_name(name: &str) -> Result<&'static DevicePreset, UnknownDevice> {
        PRESETS
            .iter()
            .find(|p| p.names().any(|n| n.eq_ignore_ascii_case(name)))
            .ok_or_else(|| UnknownDevice(name.to_string()))
    }

    /// The names of the preset: its id, then its aliases.
    pub fn names(&self) -> impl Iterator<Item = &'static str> {
        std::iter::once(self.id).chain(self.aliases.iter().copied())
    }

    /// The default device: an MI300X.
    pub fn default_device() -> &'static DevicePreset {
        &PRESETS[0]
    }

    /// The device a ROCm program gets when nothing chooses one (`WAVEJIT_DEVICES` unset, `wavejit exec` of a
    /// program with no GPU code object): an MI210.
    pub fn program_default() -> &'static DevicePreset {
        Self::by_name(PROGRAM_DEFAULT).expect("PROGRAM_DEFAULT names a preset")
    }

    /// Wave slots on the whole device.
    pub fn max_resident_waves(&self) -> u64 {
        self.compute_units as u64 * self.simds_per_cu as u64 * self.max_waves_per_simd as u64
    }
}

impl fmt::Display for DevicePreset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} ({}, {} CUs, {} GiB)",
            self.name,
            self.gfx,
            self.compute_units,
            self.memory_bytes / GIB
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_match_the_public_specification_table() {
        let mi300x = DevicePreset::by_name("MI300X").unwrap();
        assert_eq!(
            (mi300x.compute_units, mi300x.gfx, mi300x.memory_bytes),
            (304, "gfx942", 192 * GIB)
        );
        assert_eq!(mi300x.compute_units % mi300x.cus_per_group, 0, "38 CUs per XCD");
        assert_eq!((mi300x.l2_bytes, mi300x.mall_bytes), (32 * MIB, 256 * MIB));
        let mi210 = DevicePreset::by_name("mi210").unwrap();
        assert_eq!(
            (mi210.compute_units, mi210.target, mi210.l2_bytes),
            (104, Target::Gfx90a, 8 * MIB)
        );
        assert_eq!(DevicePreset::by_name("mi250x").unwrap().compute_units, 110);
        assert_eq!(DevicePreset::by_name("MI250X-GCD").unwrap().id, "mi250x-gcd");
        for p in PRESETS {
            assert_eq!(p.topology.cus(), p.compute_units, "{}", p.id);
            assert_eq!(p.target.name(), p.gfx);
            assert_eq!(p.wave_size, 64);
            assert_eq!(p.lds_bytes, 64 * KIB);
        }
    }

    #[test]
    fn every_preset_is_complete_and_named_once() {
        let mut names: Vec<String> = PRESETS.iter().flat_map(|p| p.names()).map(str::to_lowercase).collect();
        names.sort();
        let all = names.len();
        names.dedup();
        assert_eq!(names.len(), all, "a name shared by two presets");
        for p in PRESETS {
            assert!(!p.id.is_empty() && !p.name.is_empty(), "{p:?}");
            assert!(p.compute_units > 0 && p.cus_per_group > 0, "{}", p.id);
            assert!(p.pci_device_id != 0, "{}: no PCI device id", p.id);
            let gbs = p.memory_clock_mhz as f64 * 2.0 * p.memory_width_bits as f64 / 8.0 / 1e3;
            assert!(
                (gbs - p.memory_bandwidth_gbs as f64).abs() / (p.memory_bandwidth_gbs as f64) < 0.01,
                "{}: memory clock and width give {gbs} GB/s",
                p.id
            );
            let t = p.peak_tflops;
            for (what, v) in [
                ("fp64_vector", t.fp64_vector),
                ("fp32_vector", t.fp32_vector),
                ("fp64_matrix", t.fp64_matrix),
                ("fp32_matrix", t.fp32_matrix),
                ("fp16_matrix", t.fp16_matrix),
            ] {
                assert!(v > 0.0, "{}: no {what} peak", p.id);
            }
        }
        assert_eq!(
            PRESETS
                .iter()
                .map(|p| p.pci_device_id)
                .collect::<std::collections::HashSet<_>>()
                .len(),
            PRESETS.len()
        );
    }

    #[test]
    fn unknown_devices_list_the_known_ones() {
        let e = DevicePreset::by_name("h100").unwrap_err().to_string();
        assert!(e.contains("h100") && e.contains("mi300x") && e.contains("mi210"), "{e}");
        assert_eq!(DevicePreset::default_device().id, "mi300x");
        assert_eq!(DevicePreset::program_default().id, "mi210");
    }
}

//! The machine description the timing components read: one table per device preset, every number with the
//! public document it comes from, or "assumed"/"calibrated" with the reasoning.
//!
//! Keyed by the preset ids of [`crate::device`] (`mi300x`, `mi210`, `mi250x-gcd`). Cycles are shader
//! (engine) clock cycles unless a field says otherwise.
//!
//! # How the modeled latencies decompose (MI210, shader cycles at 1.7 GHz)
//!
//! The calibration targets are public pointer-chase measurements (128-byte stride, one dependent access at a
//! time). The model is calibrated by running `test-kernels`' `chase` kernels (OpenCL C as public
//! microbenchmarks write them, compiled by clang-19) through the engine in timing mode (`jit/tests/timing.rs`).
//! A chase step there is the load, its trip through the memory pipeline, the `s_waitcnt` that waits for it
//! and the next address computation; the fixed part of that is what the kernel's loop adds to the pipeline's
//! latency: [`VECTOR_CHASE_OVERHEAD`] = 24 cycles (the texture address unit's 4 cycles, the `s_waitcnt` turn,
//! three VALU instructions for the 64-bit address, the loop's branch every 16 steps), [`SCALAR_CHASE_OVERHEAD`]
//! = 19 (the `s_waitcnt` turn, three SALU for the address, the loop) and [`LDS_CHASE_OVERHEAD`] = 11 (the
//! `s_waitcnt` turn, one VALU, the loop). The memory pipeline supplies the rest:
//!
//! | level | modeled pipeline latency | chase step in the engine | measured band |
//! |---|---|---|---|
//! | vector L1 hit | `l1.hit_latency` = 102 | 126 | 124–128 |
//! | L2 hit | 102 + `l2.extra_latency` 150 = 252 | 274 | 249–302 |
//! | HBM | 252 + `hbm.extra_latency` 394 = 646 | 668 | 588–684 (16–66 MB), 665–741 (≥ 240 MB) |
//! | scalar cache hit | `scalar.hit_latency` = 28 | 47 | ≈ 48 |
//! | LDS | `lds.latency` 33 + 2 bank cycles = 35 | 46 | ≈ 48 |
//!
//! The L1 hit latency is one number; how it splits inside the TA/TD pipeline is not published. A plausible
//! split (not used by the model): TA address coalescing 4, UTCL1 translation hit ~20, tag lookup ~8, data RAM
//! read ~16, TD data return and VGPR write ~55. An L2 hit adds the L1 miss path to the L2 channel, the L2 tag
//! and data access and the return (150). An HBM access adds the fabric to the memory controller, the DRAM
//! access and the return (394). The scalar and LDS chases step in multiples of the 4-cycle issue turn, so
//! their latencies are the values that put the step nearest the measurement.
//!
//! HBM latency in the measurements grows with footprint (588–684 cycles at 16–66 MB, 665–741 at ≥ 240 MB),
//! which looks like address translation (TLB reach). The model has no TLB: no public source gives its size,
//! page size or miss cost, so one HBM latency in the overlap of the two bands stands for both.

use std::fmt;

use crate::device::DevicePreset;

/// The chase overhead of the engine's vector pointer chase (see the module docs).
pub const VECTOR_CHASE_OVERHEAD: u64 = 24;
/// The chase overhead of the engine's scalar pointer chase.
pub const SCALAR_CHASE_OVERHEAD: u64 = 19;
/// The chase overhead of the engine's LDS pointer chase.
pub const LDS_CHASE_OVERHEAD: u64 = 11;

const KIB: u64 = 1024;
const MIB: u64 = 1024 * KIB;
const GIB: u64 = 1024 * MIB;

/// Architecture generation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arch {
    /// MI200 series (gfx90a).
    Cdna2,
    /// MI300 series (gfx942).
    Cdna3,
}

/// How a cache treats writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WritePolicy {
    /// Writes stay in the cache (dirty) until the line is evicted.
    WriteBack,
    /// Every write is forwarded to the next level.
    WriteThrough,
}

/// Whether a write that misses allocates the line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AllocPolicy {
    /// A write miss allocates the line (without reading it: GPU caches keep byte masks).
    WriteAllocate,
    /// A write miss goes to the next level and leaves the cache unchanged.
    NoWriteAllocate,
}

/// Clocks.
#[derive(Debug, Clone, PartialEq)]
pub struct Clocks {
    /// Peak shader (engine) clock, MHz.
    pub shader_mhz: u32,
    /// Memory clock, MHz (bytes per channel per memory clock in [`Hbm::bytes_per_clock`]).
    pub memory_mhz: u32,
    pub source: &'static str,
}

pub use crate::device::Topology;

/// Per-CU execution resources.
#[derive(Debug, Clone, PartialEq)]
pub struct Core {
    pub simds_per_cu: u32,
    /// Wave slots per SIMD.
    pub waves_per_simd: u32,
    /// Unified VGPR + AGPR file per SIMD, 32-bit registers per lane.
    pub vgprs_per_lane: u32,
    /// VGPR allocation granule (registers per lane).
    pub vgpr_granule: u32,
    /// SGPRs a wave may address.
    pub sgprs_per_wave: u32,
    /// SGPR allocation granule.
    pub sgpr_granule: u32,
    /// SGPRs per SIMD, shared by its waves.
    pub sgprs_per_simd: u32,
    /// Workgroups of more than one wave a CU holds at once (barrier resources); single-wave workgroups use none.
    pub workgroups_per_cu: u32,
    /// LDS allocation granule, bytes.
    pub lds_granule: u32,
    /// Cycles between a SIMD's issue turns (the scheduler visits the SIMDs round-robin, one per cycle).
    pub issue_cadence: u32,
    /// Instructions a SIMD may issue in one turn (one per category: VALU, VMEM, SALU/SMEM, LDS, branch).
    pub issue_per_turn: u32,
    pub source: &'static str,
}

/// The LDS.
#[derive(Debug, Clone, PartialEq)]
pub struct Lds {
    pub bytes: u64,
    pub banks: u32,
    pub bank_bytes: u32,
    /// Cycles from issue to data for a conflict-free access, not counting the bank cycles that
    /// [`crate::timing::lds::bank_cycles`] computes.
    pub latency: u64,
    /// Bytes per clock the LDS serves (all banks).
    pub bytes_per_clock: u32,
    pub source: &'static str,
}

/// A cache's geometry, policy and speed.
#[derive(Debug, Clone, PartialEq)]
pub struct CacheLevel {
    /// Capacity of one instance, bytes.
    pub bytes: u64,
    pub line_bytes: u32,
    pub ways: u32,
    /// Compute units sharing one instance (1 for the vector L1).
    pub cus_per_instance: u32,
    /// Total cycles of a hit, from the request leaving the CU to data in registers.
    pub hit_latency: u64,
    /// Bytes per clock one instance serves.
    pub bytes_per_clock: u32,
    pub write: WritePolicy,
    pub alloc: AllocPolicy,
    pub source: &'static str,
}

/// A shared, address-interleaved cache level (L2 per XCD, MALL per device).
#[derive(Debug, Clone, PartialEq)]
pub struct SharedLevel {
    /// Capacity of one instance (per XCD for the L2, the whole device for the MALL), bytes.
    pub bytes: u64,
    pub line_bytes: u32,
    pub ways: u32,
    /// Channels of one instance; requests go to a channel by a hash of the address.
    pub channels: u32,
    /// Address bits below this interleave within one channel (`1 << interleave_bits` bytes).
    pub interleave_bits: u32,
    /// Cycles a hit here adds to the path above it.
    pub extra_latency: u64,
    /// Bytes per shader clock per channel.
    pub bytes_per_clock: u32,
    pub write: WritePolicy,
    pub alloc: AllocPolicy,
    pub source: &'static str,
}

/// Device memory.
#[derive(Debug, Clone, PartialEq)]
pub struct Hbm {
    pub kind: &'static str,
    pub bytes: u64,
    /// Pseudo-channels; requests go to a channel by a hash of the address.
    pub channels: u32,
    pub interleave_bits: u32,
    /// Bytes per channel per memory clock.
    pub bytes_per_clock: u32,
    /// Fraction of the peak a channel sustains for reads and for writes (refresh, bank and turnaround
    /// losses), in thousandths.
    pub read_efficiency_milli: u32,
    pub write_efficiency_milli: u32,
    /// Cycles an access adds to the path above it (L2 miss, or MALL miss where there is a MALL).
    pub extra_latency: u64,
    /// Shader cycles a channel loses when it turns from reading to writing or back.
    pub turnaround: u64,
    pub source: &'static str,
}

impl Hbm {
    /// Peak bandwidth, bytes per second.
    pub fn peak_bytes_per_second(&self, clocks: &Clocks) -> f64 {
        self.channels as f64 * self.bytes_per_clock as f64 * clocks.memory_mhz as f64 * 1e6
    }
}

/// Limits on work in flight.
#[derive(Debug, Clone, PartialEq)]
pub struct Limits {
    /// Largest `vmcnt` a wave can wait with (vector memory instructions in flight per wave).
    pub vmcnt_max: u32,
    /// Largest `lgkmcnt` (LDS, scalar memory, messages in flight per wave).
    pub lgkmcnt_max: u32,
    /// Vector L1 misses (line requests to L2, writes until acknowledged) one CU keeps in flight.
    pub l1_misses_per_cu: u32,
    /// Scalar cache misses one scalar cache keeps in flight.
    pub scalar_misses: u32,
    pub source: &'static str,
}

/// Fixed costs outside single instructions.
#[derive(Debug, Clone, PartialEq)]
pub struct Overheads {
    /// Extra cycles of a taken branch (instruction buffer refill).
    pub taken_branch: u64,
    /// Cycles from the last wave arriving at `s_barrier` to the waves issuing again.
    pub barrier_release: u64,
    /// Cycles from a workgroup being placed on a CU to its waves' first instruction (register setup).
    pub wave_launch: u64,
    /// Cycles the workgroup dispatcher (SPI) spends placing one workgroup, per shader engine.
    pub workgroup_dispatch: u64,
    /// Cycles from the dispatch packet being processed to the first workgroup being placed.
    pub kernel_launch: u64,
    pub source: &'static str,
}

/// Everything the timing components know about one device.
#[derive(Debug, Clone, PartialEq)]
pub struct Machine {
    /// The [`crate::device::DevicePreset::id`] this describes.
    pub preset: &'static str,
    pub arch: Arch,
    pub clocks: Clocks,
    pub topology: Topology,
    pub core: Core,
    pub lds: Lds,
    /// Vector L1 (TCP), one per CU.
    pub l1: CacheLevel,
    /// Scalar L1 data cache (sL1D), one per `cus_per_instance` CUs.
    pub scalar: CacheLevel,
    /// Instruction cache (L1I), one per `cus_per_instance` CUs.
    pub icache: CacheLevel,
    /// L2 (TCC), one per XCD.
    pub l2: SharedLevel,
    /// Memory-attached last level (Infinity Cache), shared by all XCDs; `None` where there is none.
    pub mall: Option<SharedLevel>,
    pub hbm: Hbm,
    pub limits: Limits,
    pub overheads: Overheads,
}

impl Machine {
    /// The machine of device preset `id`; `None` for an id no preset has.
    pub fn by_preset(id: &str) -> Option<&'static Machine> {
        MACHINES.iter().find(|m| m.preset == id)
    }

    /// The machine of `preset` (every preset has one: a test checks [`MACHINES`] against
    /// [`crate::device::PRESETS`]).
    pub fn of(preset: &DevicePreset) -> &'static Machine {
        Self::by_preset(preset.id).unwrap_or_else(|| panic!("no machine table for preset {}", preset.id))
    }

    /// Shader cycles per second.
    pub fn shader_hz(&self) -> f64 {
        self.clocks.shader_mhz as f64 * 1e6
    }

    /// HBM bytes per shader clock per channel that reads sustain (peak times the read efficiency).
    pub fn hbm_read_bytes_per_shader_clock(&self) -> f64 {
        self.hbm_bytes_per_shader_clock() * self.hbm.read_efficiency_milli as f64 / 1000.0
    }

    /// HBM bytes per shader clock per channel that writes sustain.
    pub fn hbm_write_bytes_per_shader_clock(&self) -> f64 {
        self.hbm_bytes_per_shader_clock() * self.hbm.write_efficiency_milli as f64 / 1000.0
    }

    fn hbm_bytes_per_shader_clock(&self) -> f64 {
        self.hbm.bytes_per_clock as f64 * self.clocks.memory_mhz as f64 / self.clocks.shader_mhz as f64
    }
}

impl fmt::Display for Machine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} ({:?}, {} CUs at {} MHz, L2 {} MiB x {}, HBM {} channels)",
            self.preset,
            self.arch,
            self.topology.cus(),
            self.clocks.shader_mhz,
            self.l2.bytes / MIB,
            self.topology.xcds,
            self.hbm.channels
        )
    }
}

const SRC_LLVM_GRANULES: &str = "LLVM AMDGPUUsage (gfx90a/gfx942): VGPR allocation granule 8, SGPR granule \
    16, 102 addressable SGPRs; ROCm docs 'Pipeline descriptions' (rocprofiler-compute docs/conceptual/\
    pipeline-descriptions.rst): four 16-wide SIMDs, 8 wave slots per SIMD on CDNA2/3, the scheduler visits one \
    SIMD per cycle round-robin and issues up to one instruction per category (VALU, VMEM, SALU/SMEM, LDS, \
    branch). SGPRs per SIMD 800: LLVM AMDGPUBaseInfo getTotalNumSGPRs (GFX8+), which gives its occupancy \
    table (e.g. more than 100 SGPRs: 7 waves). 16 multi-wave workgroups per CU: LLVM AMDGPUBaseInfo \
    getMaxWorkGroupsPerCU (16 barrier resources; single-wave workgroups need none). LDS granule 512 bytes: \
    AMD Vega/CDNA ISA, COMPUTE_PGM_RSRC2.LDS_SIZE in units of 128 dwords";
const SRC_LDS: &str = "rocprofiler-compute docs 'Pipeline descriptions' (LDS: 32 banks of 4 bytes, 128 B/clock); \
    latency calibrated: a public MI210 LDS pointer chase measures ~48 cycles; test-kernels' chase_lds steps in \
    46 cycles with 33 (35 with 2 bank cycles, plus its 11-cycle loop overhead; 37 would step in 50)";
const SRC_LIMITS: &str = "AMD CDNA3 ISA guide, S_WAITCNT: vmcnt 6 bits (63), lgkmcnt 4 bits (15). Misses in \
    flight per CU: assumed 96 64-byte lines (CDNA2) and 64 128-byte lines (CDNA3), no public figure; \
    calibrated so that test-kernels' stream_read on 104 MI210 CUs reads HBM as measured (1.17-1.40 TB/s) and \
    an L2-resident stream_read lands in the measured 3.7-5.1 TB/s. Scalar misses in flight: assumed 16";
const SRC_OVERHEADS: &str = "taken branch: CLRX 'GCN ISA Instruction Timings' (CLRX/CLRX-mirror \
    doc/GcnTimings.md): a jump costs 4 cycles not taken, ~20 taken, so 16 extra. Barrier release, wave launch, \
    workgroup dispatch and kernel launch: assumed (no public cycle figures): 16, 64, 16 per SE and 2000 cycles \
    (about 1 us at 2 GHz, below the few-microsecond launch latencies HIP users measure end to end)";

/// Every machine, in the order of [`crate::device::PRESETS`].
pub static MACHINES: &[Machine] = &[mi300x(), mi210(), mi250x_gcd()];

const fn cdna2_core() -> Core {
    Core {
        simds_per_cu: 4,
        waves_per_simd: 8,
        vgprs_per_lane: 512,
        vgpr_granule: 8,
        sgprs_per_wave: 102,
        sgpr_granule: 16,
        sgprs_per_simd: 800,
        workgroups_per_cu: 16,
        lds_granule: 512,
        issue_cadence: 4,
        issue_per_turn: 5,
        source: SRC_LLVM_GRANULES,
    }
}

const fn lds() -> Lds {
    Lds {
        bytes: 64 * KIB,
        banks: 32,
        bank_bytes: 4,
        latency: 33,
        bytes_per_clock: 128,
        source: SRC_LDS,
    }
}

const fn overheads() -> Overheads {
    Overheads {
        taken_branch: 16,
        barrier_release: 16,
        wave_launch: 64,
        workgroup_dispatch: 16,
        kernel_launch: 2000,
        source: SRC_OVERHEADS,
    }
}

const fn cdna2_scalar() -> CacheLevel {
    CacheLevel {
        bytes: 16 * KIB,
        line_bytes: 64,
        ways: 4,
        cus_per_instance: 2,
        hit_latency: 28,
        bytes_per_clock: 64,
        write: WritePolicy::WriteThrough,
        alloc: AllocPolicy::NoWriteAllocate,
        source: "size and sharing (16 KiB per 2 CUs): ROCm GPU hardware specifications table (ROCm/ROCm \
            docs/reference/gpu-arch-specs.rst); 64 B/clock: \
            rocprofiler-compute gfx90a/gfx942 speed-of-light (sL1D BW = 64 B x clock x SQCs); 64-byte lines \
            and 4 ways: assumed (RDNA 2's documented scalar cache geometry, no CDNA figure); hit latency \
            calibrated: public MI210 scalar pointer chase ~48 cycles; test-kernels' chase_scalar (three SALU \
            for the address, 19 cycles of overhead) steps in 47 with 28",
    }
}

const fn cdna2(preset: &'static str, cus: u32, memory_source: &'static str) -> Machine {
    Machine {
        preset,
        arch: Arch::Cdna2,
        clocks: Clocks {
            shader_mhz: 1700,
            memory_mhz: 1600,
            source: "AMD Instinct MI210 / MI250X data sheets: peak engine clock 1700 MHz, HBM2e 1.6 TB/s per GCD; \
                memory clock 1600 MHz from rocprofiler-compute's HBM formula (src/utils/specs.py: hbm_bw = \
                mclk x 32 B x channels) with 32 channels: 1600 MHz x 32 B x 32 = 1.64 TB/s",
        },
        topology: Topology::cdna2_gcd(cus),
        core: cdna2_core(),
        lds: lds(),
        l1: CacheLevel {
            bytes: 16 * KIB,
            line_bytes: 64,
            ways: 4,
            cus_per_instance: 1,
            hit_latency: 102,
            bytes_per_clock: 64,
            write: WritePolicy::WriteThrough,
            alloc: AllocPolicy::NoWriteAllocate,
            source: "16 KiB: ROCm GPU hardware specifications table; 64-byte lines: rocprofiler-compute docs \
                'Vector L1 cache' (the L1 line is 64 B on GCN and CDNA); 64 B/clock: rocprofiler-compute \
                gfx90a speed-of-light (vL1D BW = 64 B x clock x CUs); 4 ways: assumed (not published); \
                write-through: rocprofiler-compute docs (writes go to L2), no write-allocate assumed as \
                documented for CDNA3; hit latency calibrated: MI210 pointer chase 124-128 cycles; test-kernels' \
                chase_vector (24 cycles of loop overhead) steps in 126 with 102",
        },
        scalar: cdna2_scalar(),
        icache: CacheLevel {
            bytes: 32 * KIB,
            line_bytes: 64,
            ways: 4,
            cus_per_instance: 2,
            hit_latency: 28,
            bytes_per_clock: 64,
            write: WritePolicy::WriteThrough,
            alloc: AllocPolicy::NoWriteAllocate,
            source: "32 KiB per 2 CUs on CDNA2: ROCm GPU hardware specifications table; 64 B/clock: \
                rocprofiler-compute speed-of-light (L1I BW); lines, ways and latency assumed equal to the \
                scalar cache (same SQC block)",
        },
        l2: SharedLevel {
            bytes: 8 * MIB,
            line_bytes: 128,
            ways: 16,
            channels: 32,
            interleave_bits: 8,
            extra_latency: 150,
            bytes_per_clock: 128,
            write: WritePolicy::WriteBack,
            alloc: AllocPolicy::WriteAllocate,
            source: "8 MiB: ROCm GPU hardware specifications table; 16-way: AMD CDNA2 white paper; 32 channels \
                at 256-byte interleave and 128-byte lines: rocprofiler-compute docs 'L2 cache (TCC)' and \
                soc_gfx90a.py (TCC_channels 32); the channel hash is not public (an XOR fold is assumed); \
                128 B/clock/channel: assumed as for CDNA3 (rocprofiler-compute's gfx90a roofline uses 64, \
                but the public MI210 measurements of 3.7-5.1 TB/s exceed the 3.5 TB/s that would allow); \
                write-back: the L2 is the coherence point and writes back to memory (rocprofiler-compute \
                'Writebacks'); extra latency calibrated: MI210 L2-hit chase 249-302 cycles",
        },
        mall: None,
        hbm: Hbm {
            kind: "HBM2e",
            bytes: 64 * GIB,
            channels: 32,
            interleave_bits: 8,
            bytes_per_clock: 32,
            read_efficiency_milli: 830,
            write_efficiency_milli: 930,
            extra_latency: 394,
            turnaround: 3,
            source: memory_source,
        },
        limits: Limits {
            vmcnt_max: 63,
            lgkmcnt_max: 15,
            l1_misses_per_cu: 96,
            scalar_misses: 16,
            source: SRC_LIMITS,
        },
        overheads: overheads(),
    }
}

const SRC_CDNA2_HBM: &str = "HBM2e 64 GiB per GCD, 1.6 TB/s: AMD Instinct MI210 data sheet and ROCm 'MI250 \
    microarchitecture' (1.6 TB/s per GCD); 32 channels of 32 B per memory clock: rocprofiler-compute \
    src/utils/specs.py (HBM channels = L2 channels on MI200); interleave and hash assumed; efficiencies \
    calibrated with test-kernels' stream kernels on 104 CUs: public MI210 streams read 1.17-1.40 TB/s (83% of \
    1.64 as channel capacity lands stream_read at 1.26) and write ~1.52 TB/s (93%: stream_write at 1.53); \
    read/write turnaround calibrated: a channel turning direction loses 3 cycles (HBM controllers batch \
    reads and writes, so this is the per-switch share of tWTR/tRTW), which lands stream_triad at the \
    measured ~1.23 TB/s; extra latency calibrated: MI210 pointer chase 588-684 cycles at 16-66 MB and \
    665-741 at >= 240 MB, one value (chase_vector steps in 668) inside both bands";

const fn mi210() -> Machine {
    cdna2("mi210", 104, SRC_CDNA2_HBM)
}

const fn mi250x_gcd() -> Machine {
    cdna2("mi250x-gcd", 110, SRC_CDNA2_HBM)
}

const fn mi300x() -> Machine {
    Machine {
        preset: "mi300x",
        arch: Arch::Cdna3,
        clocks: Clocks {
            shader_mhz: 2100,
            memory_mhz: 1300,
            source: "AMD Instinct MI300X data sheet: peak engine clock 2100 MHz, HBM3 5.3 TB/s; memory clock \
                1300 MHz from rocprofiler-compute's HBM formula (mclk x 32 B x 128 channels = 5.32 TB/s)",
        },
        topology: Topology::MI300X,
        core: cdna2_core(),
        lds: lds(),
        l1: CacheLevel {
            bytes: 32 * KIB,
            line_bytes: 128,
            ways: 4,
            cus_per_instance: 1,
            hit_latency: 102,
            bytes_per_clock: 128,
            write: WritePolicy::WriteThrough,
            alloc: AllocPolicy::NoWriteAllocate,
            source: "32 KiB with 128-byte lines, write-through without write-allocate: AMD CDNA3 white paper; \
                128 B/clock: rocprofiler-compute gfx942 speed-of-light (vL1D BW = 128 B x clock x CUs); 4 ways \
                assumed; hit latency assumed equal to the calibrated MI210 value (no stored public MI300X \
                cycle figure; chips and cheese 'Testing AMD's Giant MI300X' and the SC25 MEMO paper 'The MALL \
                is Open' measured it and are the references to recalibrate against)",
        },
        scalar: cdna2_scalar(),
        icache: CacheLevel {
            bytes: 64 * KIB,
            line_bytes: 64,
            ways: 4,
            cus_per_instance: 2,
            hit_latency: 28,
            bytes_per_clock: 64,
            write: WritePolicy::WriteThrough,
            alloc: AllocPolicy::NoWriteAllocate,
            source: "64 KiB per 2 CUs: ROCm GPU hardware specifications table (MI300X); lines, ways and latency \
                assumed equal to the scalar cache",
        },
        l2: SharedLevel {
            bytes: 4 * MIB,
            line_bytes: 128,
            ways: 16,
            channels: 16,
            interleave_bits: 7,
            extra_latency: 150,
            bytes_per_clock: 128,
            write: WritePolicy::WriteBack,
            alloc: AllocPolicy::WriteAllocate,
            source: "4 MiB per XCD, 16-way, 16 channels, 128-byte lines, 128 B/clock per channel: AMD CDNA3 \
                white paper (and rocprofiler-compute soc_gfx942.py: 16 L2 channels per XCD, 128 B/clock in its \
                speed-of-light); interleave and hash assumed; extra latency assumed equal to MI210's",
        },
        mall: Some(SharedLevel {
            bytes: 256 * MIB,
            line_bytes: 128,
            ways: 16,
            channels: 128,
            interleave_bits: 8,
            extra_latency: 200,
            bytes_per_clock: 64,
            write: WritePolicy::WriteBack,
            alloc: AllocPolicy::WriteAllocate,
            source: "256 MiB Infinity Cache, 17.2 TB/s peak: AMD CDNA3 white paper / MI300X launch material; \
                128 channels assumed (one slice in front of each HBM pseudo-channel), 17.2 TB/s / 128 / 2.1 GHz \
                = 64 B/clock per channel; 128-byte lines and 16 ways assumed; write-back with allocation \
                assumed (memory-side cache); extra latency assumed: the trip from the XCD to the IOD through \
                Infinity Fabric, 200 cycles",
        }),
        hbm: Hbm {
            kind: "HBM3",
            bytes: 192 * GIB,
            channels: 128,
            interleave_bits: 8,
            bytes_per_clock: 32,
            read_efficiency_milli: 830,
            write_efficiency_milli: 930,
            extra_latency: 250,
            turnaround: 3,
            source: "HBM3 192 GiB, 5.3 TB/s, 8 stacks: AMD MI300X data sheet; 128 channels: rocprofiler-compute \
                src/utils/specs.py (MI300: 128 HBM channels); efficiencies and turnaround assumed equal to the \
                MI210 calibration; extra latency beyond the MALL assumed 250 cycles",
        },
        limits: Limits {
            vmcnt_max: 63,
            lgkmcnt_max: 15,
            l1_misses_per_cu: 64,
            scalar_misses: 16,
            source: SRC_LIMITS,
        },
        overheads: overheads(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::PRESETS;

    #[test]
    fn every_preset_has_a_machine_with_its_geometry() {
        assert_eq!(
            MACHINES.iter().map(|m| m.preset).collect::<Vec<_>>(),
            PRESETS.iter().map(|p| p.id).collect::<Vec<_>>(),
            "one machine per preset, in the order of PRESETS"
        );
        for p in PRESETS {
            let m = Machine::of(p);
            assert_eq!(m.topology, p.topology, "{}", p.id);
            assert_eq!(m.core.simds_per_cu, p.simds_per_cu, "{}", p.id);
            assert_eq!(m.clocks.shader_mhz, p.engine_clock_mhz, "{}", p.id);
            assert_eq!(m.l1.bytes, p.l1_vector_bytes, "{}", p.id);
            assert_eq!(m.scalar.bytes, p.l1_scalar_bytes, "{}", p.id);
            assert_eq!(m.l2.bytes * m.topology.xcds as u64, p.l2_bytes, "{}", p.id);
            assert_eq!(m.mall.as_ref().map_or(0, |l| l.bytes), p.mall_bytes, "{}", p.id);
            assert_eq!(m.hbm.bytes, p.memory_bytes, "{}", p.id);
            assert_eq!(m.lds.bytes, p.lds_bytes, "{}", p.id);
            assert_eq!(m.core.vgprs_per_lane, p.vgprs_per_lane, "{}", p.id);
            assert_eq!(m.core.waves_per_simd, p.max_waves_per_simd, "{}", p.id);
            assert!(
                m.core.waves_per_simd as usize <= crate::timing::sched::MAX_WAVES,
                "{}: more wave slots than the scheduler holds",
                p.id
            );
            let peak_gbs = m.hbm.peak_bytes_per_second(&m.clocks) / 1e9;
            assert!(
                (peak_gbs - p.memory_bandwidth_gbs as f64).abs() / (p.memory_bandwidth_gbs as f64) < 0.01,
                "{}: {peak_gbs}",
                p.id
            );
        }
    }

    #[test]
    fn geometry_is_consistent() {
        for m in MACHINES {
            for (name, bytes, line, ways) in [
                ("l1", m.l1.bytes, m.l1.line_bytes, m.l1.ways),
                ("scalar", m.scalar.bytes, m.scalar.line_bytes, m.scalar.ways),
                ("icache", m.icache.bytes, m.icache.line_bytes, m.icache.ways),
                ("l2", m.l2.bytes, m.l2.line_bytes, m.l2.ways),
            ] {
                let sets = bytes / line as u64 / ways as u64;
                assert!(sets.is_power_of_two(), "{} {name}: {sets} sets", m.preset);
            }
            assert!(m.topology.cus_per_xcd >= m.topology.ses_per_xcd);
            assert!(!m.clocks.source.is_empty() && !m.hbm.source.is_empty() && !m.l2.source.is_empty());
        }
        let mi300x = Machine::by_preset("mi300x").unwrap();
        assert_eq!((mi300x.topology.xcd_of(37), mi300x.topology.xcd_of(38)), (0, 1));
        assert_eq!(mi300x.topology.se_of(38 + 5), 1);
        // 17.2 TB/s Infinity Cache peak = 128 channels x 64 B x 2.1 GHz.
        let mall = mi300x.mall.as_ref().unwrap();
        let tbs = mall.channels as f64 * mall.bytes_per_clock as f64 * mi300x.shader_hz() / 1e12;
        assert!((tbs - 17.2).abs() < 0.1, "{tbs}");
    }
}

//! Attribute queries: system, agents, ISAs, caches, memory pools and regions, with the values a real device of
//! each emulated model reports (from its preset).

use std::ffi::c_void;

use emu_core::DevicePreset;

use crate::ffi::{self, Status};
use crate::image;
use crate::runtime::{Runtime, CACHE_TAG, ISA_TAG};

/// Writes `v` to the caller's `out`; INVALID_ARGUMENT when it is null.
///
/// # Safety
///
/// `out` is null or valid for writing a `T` (at any alignment).
pub unsafe fn put<T>(out: *mut c_void, v: T) -> Result<(), Status> {
    if out.is_null() {
        return Err(ffi::ERROR_INVALID_ARGUMENT);
    }
    // SAFETY: as the caller guarantees.
    unsafe { std::ptr::write_unaligned(out.cast::<T>(), v) };
    Ok(())
}

/// Writes a NUL-terminated string into a `char[N]` attribute; INVALID_ARGUMENT when `out` is null.
///
/// # Safety
///
/// `out` is null or valid for writing `N` bytes.
pub unsafe fn put_str<const N: usize>(out: *mut c_void, s: &str) -> Result<(), Status> {
    let mut buf = [0u8; N];
    let n = s.len().min(N - 1);
    buf[..n].copy_from_slice(&s.as_bytes()[..n]);
    // SAFETY: as the caller guarantees; the buffer is `N` bytes.
    unsafe { put(out, buf) }
}

/// The PCI device ID of each emulated model (the same the SMI views show).
fn chip_id(dev: &DevicePreset) -> u32 {
    dev.pci_device_id
}

/// The SMI identity of GPU agent `index`: its card is (GPU ordinal, preset).
fn identity(rt: &Runtime, index: usize, g: &DevicePreset) -> profiler_hooks::smi::Identity {
    profiler_hooks::smi::Identity::of(rt.gpu_card(index).unwrap_or(0) as u32, g.id)
}

/// The system attribute `attribute`, written to `out`.
///
/// # Safety
///
/// `out` is null or points to writable storage for the attribute's value, of the type the HSA headers give
/// it (at any alignment).
pub unsafe fn system(rt: &Runtime, attribute: u32, out: *mut c_void) -> Result<(), Status> {
    // SAFETY: each attribute is written as the type the HSA headers give it, which the caller's `out`
    // has room for.
    unsafe {
        match attribute {
            ffi::SYSTEM_INFO_VERSION_MAJOR => put(out, 1u16),
            ffi::SYSTEM_INFO_VERSION_MINOR => put(out, 1u16),
            ffi::SYSTEM_INFO_TIMESTAMP => put(out, rt.timestamp()),
            ffi::SYSTEM_INFO_TIMESTAMP_FREQUENCY => put(out, 1_000_000_000u64),
            ffi::SYSTEM_INFO_SIGNAL_MAX_WAIT => put(out, u64::MAX),
            ffi::SYSTEM_INFO_ENDIANNESS => put(out, 0u32),
            ffi::SYSTEM_INFO_MACHINE_MODEL => put(out, ffi::MACHINE_MODEL_LARGE),
            ffi::SYSTEM_INFO_EXTENSIONS => {
                // a 128-byte bit mask: images (1) and the AMD loader (0x201)
                let mut mask = [0u8; 128];
                mask[0] |= 1 << ffi::EXTENSION_IMAGES;
                mask[(ffi::EXTENSION_AMD_LOADER / 8) as usize % 128] |= 1 << (ffi::EXTENSION_AMD_LOADER % 8);
                put(out, mask)
            }
            // a pointer to the text, as ROCm's runtime answers
            ffi::AMD_SYSTEM_INFO_BUILD_VERSION => {
                put(out, concat!("wavejit ", env!("CARGO_PKG_VERSION"), "\0").as_ptr())
            }
            // HIP's managed memory (hipMallocManaged) then is host memory it maps itself and gives the GPUs access
            // to through the SVM attributes; pageable memory in general is not reachable by kernels
            ffi::AMD_SYSTEM_INFO_SVM_SUPPORTED => put(out, true),
            ffi::AMD_SYSTEM_INFO_SVM_ACCESSIBLE_BY_DEFAULT => put(out, false),
            _ => Err(ffi::ERROR_INVALID_ARGUMENT),
        }
    }
}

/// The `HSA_EXT_AGENT_INFO_IMAGE_*` limits (0x3000..=0x300C) of a GPU with images; zero without. Every value
/// is written as 32-bit words, as ROCm's runtime writes them and its clients (ROCclr) read them, although the
/// header documents `size_t`.
///
/// # Safety
///
/// `out` is null or points to writable storage for the attribute's value, of the type the HSA headers give
/// it (at any alignment).
pub unsafe fn image_limit(g: &DevicePreset, attribute: u32, out: *mut c_void) -> Result<(), Status> {
    let on = image::supported(g) as u32;
    let (d1, d2, d3, layers) = (
        image::MAX_1D * on,
        image::MAX_2D * on,
        image::MAX_3D * on,
        image::MAX_LAYERS * on,
    );
    // SAFETY: each attribute is written as the type the HSA headers give it, which the caller's `out`
    // has room for.
    unsafe {
        match attribute {
            0x3000 | 0x3001 => put(out, d1),
            0x3002 => put(out, image::MAX_1DB * on),
            0x3003..=0x3006 => put(out, [d2; 2]),
            0x3007 => put(out, [d3; 3]),
            0x3008 => put(out, layers),
            0x3009 => put(out, 128 * on),
            0x300A => put(out, 64 * on),
            0x300B => put(out, 16 * on),
            0x300C => put(out, image::ROW_PITCH_ALIGNMENT as u32),
            _ => Err(ffi::ERROR_INVALID_ARGUMENT),
        }
    }
}

/// Attribute `attribute` of agent `index`, written to `out`.
///
/// # Safety
///
/// `out` is null or points to writable storage for the attribute's value, of the type the HSA headers give
/// it (at any alignment).
pub unsafe fn agent(rt: &Runtime, index: usize, attribute: u32, out: *mut c_void) -> Result<(), Status> {
    let a = &rt.agents[index];
    let Some(g) = a.gpu else {
        // SAFETY: as the caller guarantees.
        return unsafe { cpu_agent(rt, index, attribute, out) };
    };
    let isa = rt.isas.iter().position(|(d, _)| d.target == g.target).unwrap_or(0) as u64;
    // SAFETY: each attribute is written as the type the HSA headers give it, which the caller's `out`
    // has room for.
    unsafe {
        match attribute {
            ffi::AGENT_INFO_NAME => put_str::<64>(out, g.gfx),
            ffi::AGENT_INFO_VENDOR_NAME => put_str::<64>(out, "AMD"),
            ffi::AGENT_INFO_FEATURE => put(out, ffi::FEATURE_KERNEL_DISPATCH),
            ffi::AGENT_INFO_MACHINE_MODEL => put(out, ffi::MACHINE_MODEL_LARGE),
            ffi::AGENT_INFO_PROFILE => put(out, ffi::PROFILE_BASE),
            ffi::AGENT_INFO_DEFAULT_FLOAT_ROUNDING_MODE => put(out, ffi::ROUNDING_MODE_NEAR),
            ffi::AGENT_INFO_BASE_PROFILE_DEFAULT_FLOAT_ROUNDING_MODES => put(out, ffi::ROUNDING_MODE_NEAR),
            ffi::AGENT_INFO_FAST_F16_OPERATION => put(out, true),
            ffi::AGENT_INFO_WAVEFRONT_SIZE => put(out, g.wave_size),
            ffi::AGENT_INFO_WORKGROUP_MAX_DIM => put(out, [g.max_workgroup_size as u16; 3]),
            ffi::AGENT_INFO_WORKGROUP_MAX_SIZE => put(out, g.max_workgroup_size),
            ffi::AGENT_INFO_GRID_MAX_DIM => put(out, [u32::MAX; 3]),
            ffi::AGENT_INFO_GRID_MAX_SIZE => put(out, u32::MAX),
            ffi::AGENT_INFO_FBARRIER_MAX_SIZE => put(out, 32u32),
            ffi::AGENT_INFO_QUEUES_MAX => put(out, 128u32),
            ffi::AGENT_INFO_QUEUE_MIN_SIZE => put(out, 64u32),
            ffi::AGENT_INFO_QUEUE_MAX_SIZE => put(out, 1u32 << 17),
            ffi::AGENT_INFO_QUEUE_TYPE => put(out, ffi::QUEUE_TYPE_MULTI),
            ffi::AGENT_INFO_NODE => put(out, index as u32),
            ffi::AGENT_INFO_DEVICE => put(out, ffi::DEVICE_TYPE_GPU),
            ffi::AGENT_INFO_CACHE_SIZE => put(
                out,
                [g.l1_vector_bytes as u32, g.l2_bytes as u32, g.mall_bytes as u32, 0],
            ),
            ffi::AGENT_INFO_ISA => put(out, ISA_TAG + isa),
            ffi::AGENT_INFO_EXTENSIONS => {
                let mut mask = [0u8; 128];
                if image::supported(g) {
                    mask[0] |= 1 << ffi::EXTENSION_IMAGES;
                }
                put(out, mask)
            }
            0x3000..=0x300C => image_limit(g, attribute, out),
            ffi::AGENT_INFO_VERSION_MAJOR => put(out, 1u16),
            ffi::AGENT_INFO_VERSION_MINOR => put(out, 1u16),
            ffi::AMD_AGENT_INFO_CHIP_ID => put(out, chip_id(g)),
            ffi::AMD_AGENT_INFO_CACHELINE_SIZE => put(out, 128u32),
            ffi::AMD_AGENT_INFO_COMPUTE_UNIT_COUNT => put(out, g.compute_units),
            ffi::AMD_AGENT_INFO_MAX_CLOCK_FREQUENCY => put(out, g.engine_clock_mhz),
            ffi::AMD_AGENT_INFO_DRIVER_NODE_ID => put(out, index as u32),
            ffi::AMD_AGENT_INFO_MAX_ADDRESS_WATCH_POINTS => put(out, 4u32),
            // the card's PCI address and unique id as the SMI views (rocm-smi, wavejit smi) show them
            ffi::AMD_AGENT_INFO_BDFID => put(out, identity(rt, index, g).bus << 8),
            ffi::AMD_AGENT_INFO_MEMORY_WIDTH => put(out, g.memory_width_bits),
            ffi::AMD_AGENT_INFO_MEMORY_MAX_FREQUENCY => put(out, g.memory_clock_mhz),
            ffi::AMD_AGENT_INFO_PRODUCT_NAME => put_str::<64>(out, g.name),
            ffi::AMD_AGENT_INFO_MAX_WAVES_PER_CU => put(out, g.simds_per_cu * g.max_waves_per_simd),
            ffi::AMD_AGENT_INFO_NUM_SIMDS_PER_CU => put(out, g.simds_per_cu),
            ffi::AMD_AGENT_INFO_NUM_SHADER_ENGINES => put(out, (g.compute_units / g.cus_per_group.max(1)).max(1)),
            ffi::AMD_AGENT_INFO_NUM_SHADER_ARRAYS_PER_SE => put(out, 1u32),
            ffi::AMD_AGENT_INFO_HDP_FLUSH => put(out, [0u64; 2]),
            ffi::AMD_AGENT_INFO_DOMAIN => put(out, 0u32),
            ffi::AMD_AGENT_INFO_COOPERATIVE_QUEUES => put(out, true),
            ffi::AMD_AGENT_INFO_UUID => {
                put_str::<21>(out, &crate::runtime::gpu_uuid(rt.gpu_card(index).unwrap_or(0), g))
            }
            ffi::AMD_AGENT_INFO_ASIC_REVISION => put(out, 1u32),
            ffi::AMD_AGENT_INFO_SVM_DIRECT_HOST_ACCESS => put(out, false),
            ffi::AMD_AGENT_INFO_COOPERATIVE_COMPUTE_UNIT_COUNT => put(out, g.compute_units),
            _ => Err(ffi::ERROR_INVALID_ARGUMENT),
        }
    }
}

/// Attribute `attribute` of CPU agent `index`, written to `out`.
///
/// # Safety
///
/// `out` is null or points to writable storage for the attribute's value, of the type the HSA headers give
/// it (at any alignment).
unsafe fn cpu_agent(rt: &Runtime, index: usize, attribute: u32, out: *mut c_void) -> Result<(), Status> {
    let name = &rt.agents[index].cpu_name;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as u32;
    // SAFETY: each attribute is written as the type the HSA headers give it, which the caller's `out`
    // has room for.
    unsafe {
        match attribute {
            ffi::AGENT_INFO_NAME => put_str::<64>(out, name),
            ffi::AGENT_INFO_VENDOR_NAME => put_str::<64>(out, "CPU"),
            ffi::AGENT_INFO_FEATURE => put(out, 0u32),
            ffi::AGENT_INFO_MACHINE_MODEL => put(out, ffi::MACHINE_MODEL_LARGE),
            ffi::AGENT_INFO_PROFILE => put(out, 1u32),
            ffi::AGENT_INFO_DEFAULT_FLOAT_ROUNDING_MODE | ffi::AGENT_INFO_BASE_PROFILE_DEFAULT_FLOAT_ROUNDING_MODES => {
                put(out, ffi::ROUNDING_MODE_NEAR)
            }
            ffi::AGENT_INFO_FAST_F16_OPERATION => put(out, false),
            ffi::AGENT_INFO_WAVEFRONT_SIZE
            | ffi::AGENT_INFO_WORKGROUP_MAX_SIZE
            | ffi::AGENT_INFO_GRID_MAX_SIZE
            | ffi::AGENT_INFO_FBARRIER_MAX_SIZE => put(out, 0u32),
            ffi::AGENT_INFO_WORKGROUP_MAX_DIM => put(out, [0u16; 3]),
            ffi::AGENT_INFO_GRID_MAX_DIM => put(out, [0u32; 3]),
            ffi::AGENT_INFO_QUEUES_MAX | ffi::AGENT_INFO_QUEUE_MIN_SIZE | ffi::AGENT_INFO_QUEUE_MAX_SIZE => {
                put(out, 0u32)
            }
            ffi::AGENT_INFO_QUEUE_TYPE => put(out, ffi::QUEUE_TYPE_MULTI),
            ffi::AGENT_INFO_NODE => put(out, index as u32),
            ffi::AGENT_INFO_DEVICE => put(out, ffi::DEVICE_TYPE_CPU),
            ffi::AGENT_INFO_CACHE_SIZE => put(out, [32u32 << 10, 1 << 20, 32 << 20, 0]),
            ffi::AGENT_INFO_ISA => put(out, 0u64),
            ffi::AGENT_INFO_EXTENSIONS => put(out, [0u8; 128]),
            ffi::AGENT_INFO_VERSION_MAJOR => put(out, 1u16),
            ffi::AGENT_INFO_VERSION_MINOR => put(out, 1u16),
            ffi::AMD_AGENT_INFO_CHIP_ID => put(out, 0u32),
            ffi::AMD_AGENT_INFO_CACHELINE_SIZE => put(out, 64u32),
            ffi::AMD_AGENT_INFO_COMPUTE_UNIT_COUNT => put(out, cores),
            ffi::AMD_AGENT_INFO_MAX_CLOCK_FREQUENCY => put(out, 2000u32),
            ffi::AMD_AGENT_INFO_DRIVER_NODE_ID => put(out, index as u32),
            ffi::AMD_AGENT_INFO_MAX_ADDRESS_WATCH_POINTS => put(out, 0u32),
            ffi::AMD_AGENT_INFO_BDFID => put(out, 0u32),
            ffi::AMD_AGENT_INFO_MEMORY_WIDTH | ffi::AMD_AGENT_INFO_MEMORY_MAX_FREQUENCY => put(out, 0u32),
            ffi::AMD_AGENT_INFO_PRODUCT_NAME => put_str::<64>(out, name),
            ffi::AMD_AGENT_INFO_MAX_WAVES_PER_CU
            | ffi::AMD_AGENT_INFO_NUM_SIMDS_PER_CU
            | ffi::AMD_AGENT_INFO_NUM_SHADER_ENGINES
            | ffi::AMD_AGENT_INFO_NUM_SHADER_ARRAYS_PER_SE => put(out, 0u32),
            ffi::AMD_AGENT_INFO_DOMAIN => put(out, 0u32),
            ffi::AMD_AGENT_INFO_COOPERATIVE_QUEUES => put(out, false),
            ffi::AMD_AGENT_INFO_UUID => put_str::<21>(out, "CPU-XX"),
            ffi::AMD_AGENT_INFO_ASIC_REVISION => put(out, 0u32),
            ffi::AMD_AGENT_INFO_SVM_DIRECT_HOST_ACCESS => put(out, true),
            ffi::AMD_AGENT_INFO_COOPERATIVE_COMPUTE_UNIT_COUNT => put(out, 0u32),
            _ => Err(ffi::ERROR_INVALID_ARGUMENT),
        }
    }
}

/// Attribute `attribute` of ISA `handle`, written to `out`.
///
/// # Safety
///
/// `out` is null or points to writable storage for the attribute's value, of the type the HSA headers give
/// it (at any alignment).
pub unsafe fn isa(rt: &Runtime, handle: u64, attribute: u32, out: *mut c_void) -> Result<(), Status> {
    let Some((dev, name)) = rt.isas.get(handle.wrapping_sub(ISA_TAG) as usize) else {
        return Err(ffi::ERROR_INVALID_ISA);
    };
    // SAFETY: each attribute is written as the type the HSA headers give it, which the caller's `out`
    // has room for.
    unsafe {
        match attribute {
            ffi::ISA_INFO_NAME_LENGTH => put(out, name.len() as u32 + 1),
            ffi::ISA_INFO_NAME => {
                if out.is_null() {
                    return Err(ffi::ERROR_INVALID_ARGUMENT);
                }
                let mut bytes = name.as_bytes().to_vec();
                bytes.push(0);
                // the caller provides ISA_INFO_NAME_LENGTH bytes, which is this length
                std::ptr::copy_nonoverlapping(bytes.as_ptr(), out.cast::<u8>(), bytes.len());
                Ok(())
            }
            ffi::ISA_INFO_CALL_CONVENTION_COUNT => put(out, 1u32),
            ffi::ISA_INFO_CALL_CONVENTION_INFO_WAVEFRONT_SIZE => put(out, dev.wave_size),
            ffi::ISA_INFO_CALL_CONVENTION_INFO_WAVEFRONTS_PER_COMPUTE_UNIT => {
                put(out, dev.simds_per_cu * dev.max_waves_per_simd)
            }
            ffi::ISA_INFO_MACHINE_MODELS => put(out, [false, true]),
            ffi::ISA_INFO_PROFILES => put(out, [true, false]),
            ffi::ISA_INFO_DEFAULT_FLOAT_ROUNDING_MODES | ffi::ISA_INFO_BASE_PROFILE_DEFAULT_FLOAT_ROUNDING_MODES => {
                put(out, [false, false, true])
            }
            ffi::ISA_INFO_FAST_F16_OPERATION => put(out, true),
            ffi::ISA_INFO_WORKGROUP_MAX_DIM => put(out, [dev.max_workgroup_size as u16; 3]),
            ffi::ISA_INFO_WORKGROUP_MAX_SIZE => put(out, dev.max_workgroup_size),
            ffi::ISA_INFO_GRID_MAX_DIM => put(out, [u32::MAX; 3]),
            ffi::ISA_INFO_GRID_MAX_SIZE => put(out, u64::from(u32::MAX)),
            ffi::ISA_INFO_FBARRIER_MAX_SIZE => put(out, 32u32),
            _ => Err(ffi::ERROR_INVALID_ARGUMENT),
        }
    }
}

/// The caches of GPU agent `index` as (level, size): L1 vector, L2, and the MALL where there is one.
pub fn caches(rt: &Runtime, index: usize) -> Vec<(u8, u32)> {
    match rt.agents[index].gpu {
        Some(g) => [(1u8, g.l1_vector_bytes), (2, g.l2_bytes), (3, g.mall_bytes)]
            .into_iter()
            .filter(|(_, s)| *s > 0)
            .map(|(l, s)| (l, s as u32))
            .collect(),
        None => vec![(1, 32 << 10), (2, 1 << 20), (3, 32 << 20)],
    }
}

/// Attribute `attribute` of cache `handle`, written to `out`.
///
/// # Safety
///
/// `out` is null or points to writable storage for the attribute's value, of the type the HSA headers give
/// it (at any alignment).
pub unsafe fn cache(rt: &Runtime, handle: u64, attribute: u32, out: *mut c_void) -> Result<(), Status> {
    let raw = handle.wrapping_sub(CACHE_TAG);
    let (agent, which) = ((raw >> 4) as usize, (raw & 15) as usize);
    let Some((level, size)) = (agent < rt.agents.len())
        .then(|| caches(rt, agent))
        .and_then(|c| c.get(which).copied())
    else {
        return Err(ffi::ERROR_INVALID_CACHE);
    };
    // static names: ROCm's runtime answers CACHE_INFO_NAME with a pointer to the text
    let name: &'static str = match level {
        1 => "L1\0",
        2 => "L2\0",
        _ => "L3\0",
    };
    // SAFETY: each attribute is written as the type the HSA headers give it, which the caller's `out`
    // has room for.
    unsafe {
        match attribute {
            ffi::CACHE_INFO_NAME_LENGTH => put(out, name.len() as u32 - 1),
            ffi::CACHE_INFO_NAME => put(out, name.as_ptr()),
            ffi::CACHE_INFO_LEVEL => put(out, level),
            ffi::CACHE_INFO_SIZE => put(out, size),
            _ => Err(ffi::ERROR_INVALID_ARGUMENT),
        }
    }
}

/// Attribute `attribute` of memory pool `index`, written to `out`.
///
/// # Safety
///
/// `out` is null or points to writable storage for the attribute's value, of the type the HSA headers give
/// it (at any alignment).
pub unsafe fn pool(rt: &Runtime, index: usize, attribute: u32, out: *mut c_void) -> Result<(), Status> {
    let p = &rt.pools[index];
    // SAFETY: each attribute is written as the type the HSA headers give it, which the caller's `out`
    // has room for.
    unsafe {
        match attribute {
            ffi::POOL_INFO_SEGMENT => put(out, p.segment),
            ffi::POOL_INFO_GLOBAL_FLAGS => put(out, p.flags),
            ffi::POOL_INFO_SIZE => put(out, p.size as usize),
            ffi::POOL_INFO_RUNTIME_ALLOC_ALLOWED => put(out, p.alloc_allowed),
            ffi::POOL_INFO_RUNTIME_ALLOC_GRANULE | ffi::POOL_INFO_RUNTIME_ALLOC_ALIGNMENT => {
                put(out, if p.alloc_allowed { 4096usize } else { 0 })
            }
            ffi::POOL_INFO_ACCESSIBLE_BY_ALL => put(out, p.agent == 0 && p.flags & ffi::GLOBAL_FLAG_FINE_GRAINED != 0),
            ffi::POOL_INFO_ALLOC_MAX_SIZE => put(out, if p.alloc_allowed { p.size as usize } else { 0 }),
            _ => Err(ffi::ERROR_INVALID_ARGUMENT),
        }
    }
}

/// A region's attributes are its pool's under other numbers (segment values agree between the two enums).
///
/// # Safety
///
/// `out` is null or points to writable storage for the attribute's value, of the type the HSA headers give
/// it (at any alignment).
pub unsafe fn region(rt: &Runtime, index: usize, attribute: u32, out: *mut c_void) -> Result<(), Status> {
    let same = match attribute {
        ffi::REGION_INFO_SEGMENT => ffi::POOL_INFO_SEGMENT,
        ffi::REGION_INFO_GLOBAL_FLAGS => ffi::POOL_INFO_GLOBAL_FLAGS,
        ffi::REGION_INFO_SIZE => ffi::POOL_INFO_SIZE,
        ffi::REGION_INFO_ALLOC_MAX_SIZE => ffi::POOL_INFO_ALLOC_MAX_SIZE,
        ffi::REGION_INFO_RUNTIME_ALLOC_ALLOWED => ffi::POOL_INFO_RUNTIME_ALLOC_ALLOWED,
        ffi::REGION_INFO_RUNTIME_ALLOC_GRANULE => ffi::POOL_INFO_RUNTIME_ALLOC_GRANULE,
        ffi::REGION_INFO_RUNTIME_ALLOC_ALIGNMENT => ffi::POOL_INFO_RUNTIME_ALLOC_ALIGNMENT,
        // SAFETY: as the caller guarantees; the attribute is a u32.
        ffi::REGION_INFO_ALLOC_MAX_PRIVATE_WORKGROUP_SIZE => return unsafe { put(out, 0u32) },
        _ => return Err(ffi::ERROR_INVALID_ARGUMENT),
    };
    // SAFETY: as the caller guarantees; the pool attribute has the region attribute's type.
    unsafe { pool(rt, index, same, out) }
}

/// `hsa_amd_memory_pool_link_info_t` (link type 2: PCIe).
#[repr(C)]
struct LinkInfo {
    latency_bandwidth: [u32; 4],
    atomic32: bool,
    atomic64: bool,
    coherent: bool,
    link_type: u32,
    numa_distance: u32,
}

/// `hsa_amd_agent_memory_pool_get_info`: how agent `agent` may reach pool `pool`.
///
/// # Safety
///
/// `out` is null or points to writable storage for the attribute's value, of the type the HSA headers give
/// it (at any alignment).
pub unsafe fn agent_pool(
    rt: &Runtime,
    agent: usize,
    pool: usize,
    attribute: u32,
    out: *mut c_void,
) -> Result<(), Status> {
    let p = &rt.pools[pool];
    let access = if p.agent == agent {
        ffi::POOL_ACCESS_ALLOWED_BY_DEFAULT
    } else if p.segment == ffi::SEGMENT_GROUP {
        ffi::POOL_ACCESS_NEVER_ALLOWED
    } else if p.agent == 0 && p.flags & ffi::GLOBAL_FLAG_FINE_GRAINED != 0 {
        ffi::POOL_ACCESS_ALLOWED_BY_DEFAULT
    } else {
        ffi::POOL_ACCESS_DISALLOWED_BY_DEFAULT
    };
    // SAFETY: each attribute is written as the type the HSA headers give it, which the caller's `out`
    // has room for.
    unsafe {
        match attribute {
            ffi::AGENT_POOL_INFO_ACCESS => put(out, access),
            ffi::AGENT_POOL_INFO_NUM_LINK_HOPS => put(out, u32::from(p.agent != agent)),
            2 => put(
                out,
                LinkInfo {
                    latency_bandwidth: [0; 4],
                    atomic32: true,
                    atomic64: true,
                    coherent: true,
                    link_type: 2,
                    numa_distance: 20,
                },
            ),
            _ => Err(ffi::ERROR_INVALID_ARGUMENT),
        }
    }
}

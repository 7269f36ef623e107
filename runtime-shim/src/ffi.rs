//! The HSA ABI as this library exports it: status codes, attribute numbers and packet layouts, with the values
//! of ROCm 5.2's `hsa.h`, `hsa_ext_amd.h`, `amd_hsa_signal.h` and `amd_hsa_queue.h`.
//!
//! Handles (`hsa_agent_t`, `hsa_signal_t`, …) are C structs holding one `uint64_t`; on x86-64 they travel exactly
//! like a `u64`, which is how the exported functions take them.

use std::ffi::c_void;

pub type Status = u32;

pub const SUCCESS: Status = 0x0;
pub const INFO_BREAK: Status = 0x1;
pub const ERROR: Status = 0x1000;
pub const ERROR_INVALID_ARGUMENT: Status = 0x1001;
pub const ERROR_INVALID_QUEUE_CREATION: Status = 0x1002;
pub const ERROR_INVALID_ALLOCATION: Status = 0x1003;
pub const ERROR_INVALID_AGENT: Status = 0x1004;
pub const ERROR_INVALID_REGION: Status = 0x1005;
pub const ERROR_INVALID_SIGNAL: Status = 0x1006;
pub const ERROR_INVALID_QUEUE: Status = 0x1007;
pub const ERROR_OUT_OF_RESOURCES: Status = 0x1008;
pub const ERROR_INVALID_PACKET_FORMAT: Status = 0x1009;
pub const ERROR_NOT_INITIALIZED: Status = 0x100B;
pub const ERROR_INVALID_INDEX: Status = 0x100E;
pub const ERROR_INVALID_ISA: Status = 0x100F;
pub const ERROR_INVALID_CODE_OBJECT: Status = 0x1010;
pub const ERROR_IMAGE_FORMAT_UNSUPPORTED: Status = 0x3000;
pub const ERROR_IMAGE_SIZE_UNSUPPORTED: Status = 0x3001;
pub const ERROR_IMAGE_PITCH_UNSUPPORTED: Status = 0x3002;
pub const ERROR_SAMPLER_DESCRIPTOR_UNSUPPORTED: Status = 0x3003;
pub const ERROR_INVALID_EXECUTABLE: Status = 0x1011;
pub const ERROR_FROZEN_EXECUTABLE: Status = 0x1012;
pub const ERROR_INVALID_SYMBOL_NAME: Status = 0x1013;
pub const ERROR_VARIABLE_ALREADY_DEFINED: Status = 0x1014;
pub const ERROR_EXCEPTION: Status = 0x1016;
pub const ERROR_INVALID_ISA_NAME: Status = 0x1017;
pub const ERROR_INVALID_CODE_SYMBOL: Status = 0x1018;
pub const ERROR_INVALID_EXECUTABLE_SYMBOL: Status = 0x1019;
pub const ERROR_INVALID_FILE: Status = 0x1020;
pub const ERROR_INVALID_CODE_OBJECT_READER: Status = 0x1021;
pub const ERROR_INVALID_CACHE: Status = 0x1022;
pub const ERROR_INVALID_WAVEFRONT: Status = 0x1023;
pub const ERROR_INVALID_SIGNAL_GROUP: Status = 0x1024;
pub const ERROR_INVALID_RUNTIME_STATE: Status = 0x1025;
pub const ERROR_FATAL: Status = 0x1026;
pub const ERROR_INVALID_MEMORY_POOL: Status = 40;
pub const ERROR_MEMORY_APERTURE_VIOLATION: Status = 41;
pub const ERROR_ILLEGAL_INSTRUCTION: Status = 42;
pub const ERROR_MEMORY_FAULT: Status = 43;

/// `hsa_status_string`'s text for each status this library returns (NUL-terminated: the caller keeps the
/// pointer).
pub fn status_text(status: Status) -> Option<&'static std::ffi::CStr> {
    Some(match status {
        SUCCESS => c"HSA_STATUS_SUCCESS: The function has been executed successfully.",
        INFO_BREAK => c"HSA_STATUS_INFO_BREAK: A traversal over a list of elements has been interrupted by the application before completing.",
        ERROR => c"HSA_STATUS_ERROR: A generic error has occurred (wavejit: see the message printed before this call returned).",
        ERROR_INVALID_ARGUMENT => c"HSA_STATUS_ERROR_INVALID_ARGUMENT: One of the actual arguments does not meet a precondition stated in the documentation of the corresponding formal argument.",
        ERROR_INVALID_QUEUE_CREATION => c"HSA_STATUS_ERROR_INVALID_QUEUE_CREATION: The requested queue creation is not valid.",
        ERROR_INVALID_ALLOCATION => c"HSA_STATUS_ERROR_INVALID_ALLOCATION: The requested allocation is not valid.",
        ERROR_INVALID_AGENT => c"HSA_STATUS_ERROR_INVALID_AGENT: The agent is invalid.",
        ERROR_INVALID_REGION => c"HSA_STATUS_ERROR_INVALID_REGION: The memory region is invalid.",
        ERROR_INVALID_SIGNAL => c"HSA_STATUS_ERROR_INVALID_SIGNAL: The signal is invalid.",
        ERROR_INVALID_QUEUE => c"HSA_STATUS_ERROR_INVALID_QUEUE: The queue is invalid.",
        ERROR_OUT_OF_RESOURCES => c"HSA_STATUS_ERROR_OUT_OF_RESOURCES: The runtime failed to allocate the necessary resources.",
        ERROR_INVALID_PACKET_FORMAT => c"HSA_STATUS_ERROR_INVALID_PACKET_FORMAT: The AQL packet is malformed.",
        ERROR_NOT_INITIALIZED => c"HSA_STATUS_ERROR_NOT_INITIALIZED: An API other than hsa_init has been invoked while the reference count of the HSA runtime is zero.",
        ERROR_INVALID_INDEX => c"HSA_STATUS_ERROR_INVALID_INDEX: The index is invalid.",
        ERROR_INVALID_ISA => c"HSA_STATUS_ERROR_INVALID_ISA: The instruction set architecture is invalid.",
        ERROR_EXCEPTION => c"HSA_STATUS_ERROR_EXCEPTION: An HSAIL operation resulted in a hardware exception.",
        ERROR_INVALID_ISA_NAME => c"HSA_STATUS_ERROR_INVALID_ISA_NAME: The instruction set architecture name is invalid.",
        ERROR_INVALID_CODE_OBJECT => c"HSA_STATUS_ERROR_INVALID_CODE_OBJECT: The code object is invalid.",
        ERROR_IMAGE_FORMAT_UNSUPPORTED => c"HSA_EXT_STATUS_ERROR_IMAGE_FORMAT_UNSUPPORTED: Image format is not supported.",
        ERROR_IMAGE_SIZE_UNSUPPORTED => c"HSA_EXT_STATUS_ERROR_IMAGE_SIZE_UNSUPPORTED: Image size is not supported.",
        ERROR_IMAGE_PITCH_UNSUPPORTED => c"HSA_EXT_STATUS_ERROR_IMAGE_PITCH_UNSUPPORTED: Image pitch is not supported or invalid.",
        ERROR_SAMPLER_DESCRIPTOR_UNSUPPORTED => c"HSA_EXT_STATUS_ERROR_SAMPLER_DESCRIPTOR_UNSUPPORTED: Sampler descriptor is not supported or invalid.",
        ERROR_INVALID_EXECUTABLE => c"HSA_STATUS_ERROR_INVALID_EXECUTABLE: The executable is invalid.",
        ERROR_FROZEN_EXECUTABLE => c"HSA_STATUS_ERROR_FROZEN_EXECUTABLE: The executable is frozen.",
        ERROR_INVALID_SYMBOL_NAME => c"HSA_STATUS_ERROR_INVALID_SYMBOL_NAME: There is no symbol with the given name.",
        ERROR_VARIABLE_ALREADY_DEFINED => c"HSA_STATUS_ERROR_VARIABLE_ALREADY_DEFINED: The variable is already defined.",
        ERROR_INVALID_CODE_SYMBOL => c"HSA_STATUS_ERROR_INVALID_CODE_SYMBOL: The code object symbol is invalid.",
        ERROR_INVALID_EXECUTABLE_SYMBOL => c"HSA_STATUS_ERROR_INVALID_EXECUTABLE_SYMBOL: The executable symbol is invalid.",
        ERROR_INVALID_FILE => c"HSA_STATUS_ERROR_INVALID_FILE: The file descriptor is invalid.",
        ERROR_INVALID_CODE_OBJECT_READER => c"HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER: The code object reader is invalid.",
        ERROR_INVALID_CACHE => c"HSA_STATUS_ERROR_INVALID_CACHE: The cache is invalid.",
        ERROR_INVALID_WAVEFRONT => c"HSA_STATUS_ERROR_INVALID_WAVEFRONT: The wavefront is invalid.",
        ERROR_INVALID_SIGNAL_GROUP => c"HSA_STATUS_ERROR_INVALID_SIGNAL_GROUP: The signal group is invalid.",
        ERROR_INVALID_RUNTIME_STATE => c"HSA_STATUS_ERROR_INVALID_RUNTIME_STATE: The HSA runtime is not in the configuration state.",
        ERROR_FATAL => c"HSA_STATUS_ERROR_FATAL: The queue received an error that may require process termination.",
        ERROR_INVALID_MEMORY_POOL => c"HSA_STATUS_ERROR_INVALID_MEMORY_POOL: The memory pool is invalid.",
        ERROR_MEMORY_APERTURE_VIOLATION => c"HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION: The agent attempted to access memory beyond the largest legal address.",
        ERROR_ILLEGAL_INSTRUCTION => c"HSA_STATUS_ERROR_ILLEGAL_INSTRUCTION: The agent attempted to execute an illegal shader instruction.",
        ERROR_MEMORY_FAULT => c"HSA_STATUS_ERROR_MEMORY_FAULT: The agent attempted to access an inaccessible address.",
        _ => return None,
    })
}

// hsa_system_info_t
pub const SYSTEM_INFO_VERSION_MAJOR: u32 = 0;
pub const SYSTEM_INFO_VERSION_MINOR: u32 = 1;
pub const SYSTEM_INFO_TIMESTAMP: u32 = 2;
pub const SYSTEM_INFO_TIMESTAMP_FREQUENCY: u32 = 3;
pub const SYSTEM_INFO_SIGNAL_MAX_WAIT: u32 = 4;
pub const SYSTEM_INFO_ENDIANNESS: u32 = 5;
pub const SYSTEM_INFO_MACHINE_MODEL: u32 = 6;
pub const SYSTEM_INFO_EXTENSIONS: u32 = 7;
pub const AMD_SYSTEM_INFO_BUILD_VERSION: u32 = 0x200;
pub const AMD_SYSTEM_INFO_SVM_SUPPORTED: u32 = 0x201;
pub const AMD_SYSTEM_INFO_SVM_ACCESSIBLE_BY_DEFAULT: u32 = 0x202;

// extensions
pub const EXTENSION_FINALIZER: u16 = 0;
pub const EXTENSION_IMAGES: u16 = 1;
pub const EXTENSION_AMD_LOADER: u16 = 0x201;

// hsa_agent_info_t
pub const AGENT_INFO_NAME: u32 = 0;
pub const AGENT_INFO_VENDOR_NAME: u32 = 1;
pub const AGENT_INFO_FEATURE: u32 = 2;
pub const AGENT_INFO_MACHINE_MODEL: u32 = 3;
pub const AGENT_INFO_PROFILE: u32 = 4;
pub const AGENT_INFO_DEFAULT_FLOAT_ROUNDING_MODE: u32 = 5;
pub const AGENT_INFO_WAVEFRONT_SIZE: u32 = 6;
pub const AGENT_INFO_WORKGROUP_MAX_DIM: u32 = 7;
pub const AGENT_INFO_WORKGROUP_MAX_SIZE: u32 = 8;
pub const AGENT_INFO_GRID_MAX_DIM: u32 = 9;
pub const AGENT_INFO_GRID_MAX_SIZE: u32 = 10;
pub const AGENT_INFO_FBARRIER_MAX_SIZE: u32 = 11;
pub const AGENT_INFO_QUEUES_MAX: u32 = 12;
pub const AGENT_INFO_QUEUE_MIN_SIZE: u32 = 13;
pub const AGENT_INFO_QUEUE_MAX_SIZE: u32 = 14;
pub const AGENT_INFO_QUEUE_TYPE: u32 = 15;
pub const AGENT_INFO_NODE: u32 = 16;
pub const AGENT_INFO_DEVICE: u32 = 17;
pub const AGENT_INFO_CACHE_SIZE: u32 = 18;
pub const AGENT_INFO_ISA: u32 = 19;
pub const AGENT_INFO_EXTENSIONS: u32 = 20;
pub const AGENT_INFO_VERSION_MAJOR: u32 = 21;
pub const AGENT_INFO_VERSION_MINOR: u32 = 22;
pub const AGENT_INFO_BASE_PROFILE_DEFAULT_FLOAT_ROUNDING_MODES: u32 = 23;
pub const AGENT_INFO_FAST_F16_OPERATION: u32 = 24;
pub const AMD_AGENT_INFO_CHIP_ID: u32 = 0xA000;
pub const AMD_AGENT_INFO_CACHELINE_SIZE: u32 = 0xA001;
pub const AMD_AGENT_INFO_COMPUTE_UNIT_COUNT: u32 = 0xA002;
pub const AMD_AGENT_INFO_MAX_CLOCK_FREQUENCY: u32 = 0xA003;
pub const AMD_AGENT_INFO_DRIVER_NODE_ID: u32 = 0xA004;
pub const AMD_AGENT_INFO_MAX_ADDRESS_WATCH_POINTS: u32 = 0xA005;
pub const AMD_AGENT_INFO_BDFID: u32 = 0xA006;
pub const AMD_AGENT_INFO_MEMORY_WIDTH: u32 = 0xA007;
pub const AMD_AGENT_INFO_MEMORY_MAX_FREQUENCY: u32 = 0xA008;
pub const AMD_AGENT_INFO_PRODUCT_NAME: u32 = 0xA009;
pub const AMD_AGENT_INFO_MAX_WAVES_PER_CU: u32 = 0xA00A;
pub const AMD_AGENT_INFO_NUM_SIMDS_PER_CU: u32 = 0xA00B;
pub const AMD_AGENT_INFO_NUM_SHADER_ENGINES: u32 = 0xA00C;
pub const AMD_AGENT_INFO_NUM_SHADER_ARRAYS_PER_SE: u32 = 0xA00D;
pub const AMD_AGENT_INFO_HDP_FLUSH: u32 = 0xA00E;
pub const AMD_AGENT_INFO_DOMAIN: u32 = 0xA00F;
pub const AMD_AGENT_INFO_COOPERATIVE_QUEUES: u32 = 0xA010;
pub const AMD_AGENT_INFO_UUID: u32 = 0xA011;
pub const AMD_AGENT_INFO_ASIC_REVISION: u32 = 0xA012;
pub const AMD_AGENT_INFO_SVM_DIRECT_HOST_ACCESS: u32 = 0xA013;
pub const AMD_AGENT_INFO_COOPERATIVE_COMPUTE_UNIT_COUNT: u32 = 0xA014;

pub const DEVICE_TYPE_CPU: u32 = 0;
pub const DEVICE_TYPE_GPU: u32 = 1;
pub const FEATURE_KERNEL_DISPATCH: u32 = 1;
pub const FEATURE_AGENT_DISPATCH: u32 = 2;
pub const MACHINE_MODEL_LARGE: u32 = 1;
pub const PROFILE_BASE: u32 = 0;
pub const ROUNDING_MODE_NEAR: u32 = 2;
pub const QUEUE_TYPE_MULTI: u32 = 0;
pub const QUEUE_TYPE_SINGLE: u32 = 1;
pub const QUEUE_TYPE_COOPERATIVE: u32 = 2;
/// `HSA_AMD_SIGNAL_IPC`: a signal that may be shared with other processes.
pub const AMD_SIGNAL_IPC: u64 = 2;

// hsa_isa_info_t
pub const ISA_INFO_NAME_LENGTH: u32 = 0;
pub const ISA_INFO_NAME: u32 = 1;
pub const ISA_INFO_CALL_CONVENTION_COUNT: u32 = 2;
pub const ISA_INFO_CALL_CONVENTION_INFO_WAVEFRONT_SIZE: u32 = 3;
pub const ISA_INFO_CALL_CONVENTION_INFO_WAVEFRONTS_PER_COMPUTE_UNIT: u32 = 4;
pub const ISA_INFO_MACHINE_MODELS: u32 = 5;
pub const ISA_INFO_PROFILES: u32 = 6;
pub const ISA_INFO_DEFAULT_FLOAT_ROUNDING_MODES: u32 = 7;
pub const ISA_INFO_BASE_PROFILE_DEFAULT_FLOAT_ROUNDING_MODES: u32 = 8;
pub const ISA_INFO_FAST_F16_OPERATION: u32 = 9;
pub const ISA_INFO_WORKGROUP_MAX_DIM: u32 = 12;
pub const ISA_INFO_WORKGROUP_MAX_SIZE: u32 = 13;
pub const ISA_INFO_GRID_MAX_DIM: u32 = 14;
pub const ISA_INFO_GRID_MAX_SIZE: u32 = 16;
pub const ISA_INFO_FBARRIER_MAX_SIZE: u32 = 17;

// hsa_cache_info_t
pub const CACHE_INFO_NAME_LENGTH: u32 = 0;
pub const CACHE_INFO_NAME: u32 = 1;
pub const CACHE_INFO_LEVEL: u32 = 2;
pub const CACHE_INFO_SIZE: u32 = 3;

// memory pools and regions
pub const SEGMENT_GLOBAL: u32 = 0;
pub const SEGMENT_GROUP: u32 = 3;
pub const GLOBAL_FLAG_KERNARG: u32 = 1;
pub const GLOBAL_FLAG_FINE_GRAINED: u32 = 2;
pub const GLOBAL_FLAG_COARSE_GRAINED: u32 = 4;
pub const POOL_INFO_SEGMENT: u32 = 0;
pub const POOL_INFO_GLOBAL_FLAGS: u32 = 1;
pub const POOL_INFO_SIZE: u32 = 2;
pub const POOL_INFO_RUNTIME_ALLOC_ALLOWED: u32 = 5;
pub const POOL_INFO_RUNTIME_ALLOC_GRANULE: u32 = 6;
pub const POOL_INFO_RUNTIME_ALLOC_ALIGNMENT: u32 = 7;
pub const POOL_INFO_ACCESSIBLE_BY_ALL: u32 = 15;
pub const POOL_INFO_ALLOC_MAX_SIZE: u32 = 16;
pub const REGION_INFO_SEGMENT: u32 = 0;
pub const REGION_INFO_GLOBAL_FLAGS: u32 = 1;
pub const REGION_INFO_SIZE: u32 = 2;
pub const REGION_INFO_ALLOC_MAX_SIZE: u32 = 4;
pub const REGION_INFO_RUNTIME_ALLOC_ALLOWED: u32 = 5;
pub const REGION_INFO_RUNTIME_ALLOC_GRANULE: u32 = 6;
pub const REGION_INFO_RUNTIME_ALLOC_ALIGNMENT: u32 = 7;
pub const REGION_INFO_ALLOC_MAX_PRIVATE_WORKGROUP_SIZE: u32 = 8;
pub const AGENT_POOL_INFO_ACCESS: u32 = 0;
pub const AGENT_POOL_INFO_NUM_LINK_HOPS: u32 = 1;
pub const POOL_ACCESS_NEVER_ALLOWED: u32 = 0;
pub const POOL_ACCESS_ALLOWED_BY_DEFAULT: u32 = 1;
pub const POOL_ACCESS_DISALLOWED_BY_DEFAULT: u32 = 2;

// signals
pub const CONDITION_EQ: u32 = 0;
pub const CONDITION_NE: u32 = 1;
pub const CONDITION_LT: u32 = 2;
pub const CONDITION_GTE: u32 = 3;

// packets
pub const PACKET_TYPE_VENDOR_SPECIFIC: u16 = 0;
pub const PACKET_TYPE_INVALID: u16 = 1;
pub const PACKET_TYPE_KERNEL_DISPATCH: u16 = 2;
pub const PACKET_TYPE_BARRIER_AND: u16 = 3;
pub const PACKET_TYPE_AGENT_DISPATCH: u16 = 4;
pub const PACKET_TYPE_BARRIER_OR: u16 = 5;
pub const PACKET_HEADER_BARRIER: u16 = 8;

/// `hsa_kernel_dispatch_packet_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct DispatchPacket {
    pub header: u16,
    pub setup: u16,
    pub workgroup_size: [u16; 3],
    pub reserved0: u16,
    pub grid_size: [u32; 3],
    pub private_segment_size: u32,
    pub group_segment_size: u32,
    pub kernel_object: u64,
    pub kernarg_address: u64,
    pub reserved2: u64,
    pub completion_signal: u64,
}

/// `hsa_amd_event_t` for `HSA_AMD_GPU_MEMORY_FAULT_EVENT` (the one event type): the type, then
/// `hsa_amd_gpu_memory_fault_info_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct AmdEvent {
    pub event_type: u32,
    pub agent: u64,
    pub virtual_address: u64,
    pub fault_reason_mask: u32,
}

/// `HSA_AMD_GPU_MEMORY_FAULT_EVENT`.
pub const AMD_GPU_MEMORY_FAULT_EVENT: u32 = 0;
/// `HSA_AMD_MEMORY_FAULT_PAGE_NOT_PRESENT`: what an access outside every mapping is.
pub const AMD_MEMORY_FAULT_PAGE_NOT_PRESENT: u32 = 1;

/// `hsa_barrier_and_packet_t` / `hsa_barrier_or_packet_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct BarrierPacket {
    pub header: u16,
    pub reserved0: u16,
    pub reserved1: u32,
    pub dep_signal: [u64; 5],
    pub reserved2: u64,
    pub completion_signal: u64,
}

/// `hsa_queue_t`.
#[repr(C)]
pub struct HsaQueue {
    pub queue_type: u32,
    pub features: u32,
    pub base_address: *mut c_void,
    pub doorbell_signal: u64,
    pub size: u32,
    pub reserved1: u32,
    pub id: u64,
}

/// Offsets in `amd_queue_t` (which starts with an `hsa_queue_t`) of the dispatch indices.
pub const AMD_QUEUE_WRITE_DISPATCH_ID: usize = 56;
pub const AMD_QUEUE_READ_DISPATCH_ID: usize = 128;
/// `sizeof(amd_queue_t)`.
pub const AMD_QUEUE_SIZE: usize = 256;

/// `amd_signal_t`: 64 bytes, the value at offset 8 (device code reads and writes it there).
pub const AMD_SIGNAL_SIZE: usize = 64;
pub const AMD_SIGNAL_KIND_USER: i64 = 1;
/// Offsets of `start_ts` and `end_ts` (dispatch profiling).
pub const AMD_SIGNAL_START_TS: usize = 32;
pub const AMD_SIGNAL_END_TS: usize = 40;

// executables and symbols
pub const SYMBOL_KIND_VARIABLE: u32 = 0;
pub const SYMBOL_KIND_KERNEL: u32 = 1;
pub const EXECUTABLE_STATE_UNFROZEN: u32 = 0;
pub const EXECUTABLE_STATE_FROZEN: u32 = 1;
pub const EXECUTABLE_INFO_PROFILE: u32 = 1;
pub const EXECUTABLE_INFO_STATE: u32 = 2;
pub const EXECUTABLE_INFO_DEFAULT_FLOAT_ROUNDING_MODE: u32 = 3;
pub const SYMBOL_INFO_TYPE: u32 = 0;
pub const SYMBOL_INFO_NAME_LENGTH: u32 = 1;
pub const SYMBOL_INFO_NAME: u32 = 2;
pub const SYMBOL_INFO_MODULE_NAME_LENGTH: u32 = 3;
pub const SYMBOL_INFO_MODULE_NAME: u32 = 4;
pub const SYMBOL_INFO_LINKAGE: u32 = 5;
pub const SYMBOL_INFO_VARIABLE_ALLOCATION: u32 = 6;
pub const SYMBOL_INFO_VARIABLE_SEGMENT: u32 = 7;
pub const SYMBOL_INFO_VARIABLE_ALIGNMENT: u32 = 8;
pub const SYMBOL_INFO_VARIABLE_SIZE: u32 = 9;
pub const SYMBOL_INFO_VARIABLE_IS_CONST: u32 = 10;
pub const SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE: u32 = 11;
pub const SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_ALIGNMENT: u32 = 12;
pub const SYMBOL_INFO_KERNEL_GROUP_SEGMENT_SIZE: u32 = 13;
pub const SYMBOL_INFO_KERNEL_PRIVATE_SEGMENT_SIZE: u32 = 14;
pub const SYMBOL_INFO_KERNEL_DYNAMIC_CALLSTACK: u32 = 15;
pub const SYMBOL_INFO_IS_DEFINITION: u32 = 17;
pub const SYMBOL_INFO_KERNEL_CALL_CONVENTION: u32 = 18;
pub const SYMBOL_INFO_AGENT: u32 = 20;
pub const SYMBOL_INFO_VARIABLE_ADDRESS: u32 = 21;
pub const SYMBOL_INFO_KERNEL_OBJECT: u32 = 22;

/// `hsa_amd_pointer_info_t`.
#[repr(C)]
pub struct PointerInfo {
    pub size: u32,
    pub kind: u32,
    pub agent_base_address: *mut c_void,
    pub host_base_address: *mut c_void,
    pub size_in_bytes: usize,
    pub user_data: *mut c_void,
    pub agent_owner: u64,
    pub global_flags: u32,
}
pub const POINTER_TYPE_UNKNOWN: u32 = 0;
pub const POINTER_TYPE_HSA: u32 = 1;
pub const POINTER_TYPE_LOCKED: u32 = 2;

/// `hsa_amd_profiling_dispatch_time_t` / `hsa_amd_profiling_async_copy_time_t`.
#[repr(C)]
pub struct ProfilingTime {
    pub start: u64,
    pub end: u64,
}

/// `hsa_dim3_t`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Dim3 {
    pub x: u32,
    pub y: u32,
    pub z: u32,
}

/// `hsa_pitched_ptr_t`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct PitchedPtr {
    pub base: *mut c_void,
    pub pitch: usize,
    pub slice: usize,
}

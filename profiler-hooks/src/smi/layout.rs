//! Byte offsets of the registry record (the table in the module doc of [`super`]).

pub const MAGIC: [u8; 8] = *b"WJSMI\0\0\0";
pub const VERSION: u32 = 1;
/// One page per process.
pub const FILE_SIZE: usize = 4096;
pub const MAX_DEVICES: usize = 16;

pub const MAGIC_AT: usize = 0;
pub const VERSION_AT: usize = 8;
pub const DEVICE_COUNT_AT: usize = 12;
pub const PID_AT: usize = 16;
pub const START_TICKS_AT: usize = 24;
pub const STARTED_NS_AT: usize = 32;
pub const NAME_AT: usize = 48;
pub const NAME_LEN: usize = 64;

pub const DEVICES_AT: usize = 128;
pub const DEVICE_SIZE: usize = 224;

// within a device
pub const INDEX: usize = 0;
pub const COMPUTE_UNITS: usize = 4;
pub const PRESET: usize = 8;
pub const PRESET_LEN: usize = 16;
pub const GFX: usize = 24;
pub const GFX_LEN: usize = 16;
pub const NAME: usize = 40;
pub const DEVICE_NAME_LEN: usize = 48;
pub const VRAM_TOTAL: usize = 88;
pub const ENGINE_CLOCK: usize = 96;
pub const MEMORY_CLOCK: usize = 100;
pub const PCI_DEVICE: usize = 104;
pub const VRAM_USED: usize = 112;
pub const DISPATCHES: usize = 120;
pub const BUSY_SEQ: usize = 128;
pub const BUSY_NS: usize = 136;
pub const BUSY_SINCE: usize = 144;
pub const QUEUES: usize = 152;

/// Offset of field `field` of device `i`.
pub const fn device(i: usize, field: usize) -> usize {
    DEVICES_AT + i * DEVICE_SIZE + field
}

const _: () = assert!(DEVICES_AT + MAX_DEVICES * DEVICE_SIZE <= FILE_SIZE);
const _: () = assert!(NAME_AT + NAME_LEN <= DEVICES_AT);
const _: () = assert!(QUEUES + 8 <= DEVICE_SIZE);

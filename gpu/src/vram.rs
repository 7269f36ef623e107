//! How the processes of one program share a GPU's memory under the emulated driver: `wavejit exec` makes one
//! memory file per GPU and hands it to the program ([`VRAM_FDS`]); every process of the program takes a part of
//! it ([`part`]) and allocates buffer objects there. A buffer one process exports, another maps from the same
//! file (`hipIpcGetMemHandle`/`hipIpcOpenMemHandle`).
//!
//! Layout: the first page holds the number of parts taken (a counter every process increments once); the parts
//! follow from [`FIRST_PART`] on, each as large as the GPU's memory ([`part_len`]). The file is sparse: only
//! pages written take memory.

use emu_core::DevicePreset;

/// The environment variable naming the files' descriptors (comma-separated, in `WAVEJIT_DEVICES`' order).
pub const VRAM_FDS: &str = "WAVEJIT_VRAM_FDS";

/// Processes of one program that may use a GPU.
pub const PARTS: u64 = 32;

/// The file offset of the first part.
pub const FIRST_PART: u64 = 2 << 20;

/// The most memory a part holds, whatever the preset says.
const MAX_PART: u64 = 1 << 40;

/// The bytes of one process's part of a GPU's memory: the preset's memory, in whole 2 MiB.
pub fn part_len(preset: &DevicePreset) -> u64 {
    preset.memory_bytes.min(MAX_PART).div_ceil(2 << 20) * (2 << 20)
}

/// The size of a GPU's shared memory file.
pub fn file_len(preset: &DevicePreset) -> u64 {
    FIRST_PART + PARTS * part_len(preset)
}

/// The file offset of part `n`.
pub fn part_offset(preset: &DevicePreset, n: u64) -> u64 {
    FIRST_PART + n * part_len(preset)
}

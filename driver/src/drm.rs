//! What the render node answers: the DRM ioctls libdrm's `amdgpu_device_initialize` issues when ROCm's thunk
//! asks for a GPU's marketing name (libdrm reads the name from its `amdgpu.ids` by device id and revision).
//!
//! | ioctl | answer |
//! |---|---|
//! | `DRM_IOCTL_VERSION` | amdgpu 3.42.0 (major 3, which libdrm requires) |
//! | `DRM_IOCTL_GET_CLIENT` | authenticated (libdrm asks unless `/sys/dev/char/226:N/device/drm` exists, which exec's sysfs view has not) |
//! | `DRM_IOCTL_AMDGPU_INFO` | `ACCEL_WORKING` 1; `DEV_INFO` the preset's device; `READ_MMR_REG` of GB_ADDR_CONFIG |
//!
//! Anything else fails with ENOTTY and one line on stderr: there is no command submission through the render
//! node (the KFD's queues are the GPU's only way in). An ioctl of another type than DRM's `'d'` fails with ENOTTY
//! and a line naming it, as on the kernel's render node.
//!
//! `fstat` of the render node `renderD<N>` says it is the character device (226, N), DRM's numbers
//! ([`crate::files::DRM_MAJOR`]).

use crate::args::{self, Args, Errno};
use crate::Driver;

/// `AMDGPU_FAMILY_AI`: gfx9.
const FAMILY_AI: u32 = 141;
/// `AMDGPU_VRAM_TYPE_HBM`.
const VRAM_TYPE_HBM: u32 = 6;
/// GB_ADDR_CONFIG's register offset (dwords) and its value on gfx90a/gfx942.
const GB_ADDR_CONFIG: (u32, u32) = (0x263e, 0x2a11_4042);

fn say_unsupported(request: u64) {
    static SAID: std::sync::Once = std::sync::Once::new();
    SAID.call_once(|| {
        eprintln!("wavejit: the emulated render node does not support ioctl {request:#x}; it fails with ENOTTY")
    });
}

/// The name of DRM ioctl `nr` on a render node, for profiles.
pub fn name(nr: u32) -> &'static str {
    match nr {
        0x00 => "VERSION",
        0x05 => "GET_CLIENT",
        0x45 => "AMDGPU_INFO",
        _ => "unknown",
    }
}

/// A DRM ioctl on GPU `gpu`'s render node.
pub fn ioctl(d: &Driver, gpu: usize, request: u64, arg: u64) -> Result<(), Errno> {
    if args::request_type(request) != b'd' {
        args::say_foreign("the render node", request);
        return Err(libc::ENOTTY);
    }
    let g = &d.gpus[gpu];
    let mut a = Args::copy_in(arg, request, 64)?;
    match args::request_nr(request) {
        // DRM_IOCTL_VERSION: version_major @0 ... name_len @16, name @24, date_len @32, date @40, desc_len @48,
        // desc @56; strings copied up to the caller's lengths, the lengths set to the strings'
        0x00 => {
            a.set_u32(0, 3);
            a.set_u32(4, 42);
            a.set_u32(8, 0);
            for (len_at, ptr_at, text) in [
                (16, 24, &b"amdgpu"[..]),
                (32, 40, &b"20150101"[..]),
                (48, 56, &b"AMD GPU (emulated by wavejit)"[..]),
            ] {
                let (cap, ptr) = (a.u64(len_at), a.u64(ptr_at));
                if cap > 0 && ptr != 0 {
                    args::write_user(ptr, &text[..text.len().min(cap as usize)])?;
                }
                a.set_u64(len_at, text.len() as u64);
            }
        }
        // DRM_IOCTL_GET_CLIENT: idx @0 (0: this client), auth @4
        0x05 => {
            if a.u32(0) != 0 {
                return Err(libc::EINVAL);
            }
            a.set_u32(4, 1);
        }
        // DRM_IOCTL_AMDGPU_INFO (DRM_COMMAND_BASE + 5): return_pointer @0, return_size @8, query @12, union @16
        0x45 => {
            let (out, size, query) = (a.u64(0), a.u32(8) as usize, a.u32(12));
            let answer = match query {
                0x00 => 1u32.to_le_bytes().to_vec(), // ACCEL_WORKING
                0x16 => dev_info(g),
                0x15 => {
                    // READ_MMR_REG: dword_offset @16, count @20
                    let (reg, count) = (a.u32(16), a.u32(20));
                    if reg != GB_ADDR_CONFIG.0 || count != 1 {
                        return Err(libc::EINVAL);
                    }
                    GB_ADDR_CONFIG.1.to_le_bytes().to_vec()
                }
                _ => return Err(libc::EINVAL),
            };
            args::write_user(out, &answer[..answer.len().min(size)])?;
            return Ok(()); // an _IOW request: nothing copied back
        }
        _ => {
            say_unsupported(request);
            return Err(libc::ENOTTY);
        }
    }
    a.copy_out()
}

/// `struct drm_amdgpu_info_device` (368 bytes in libdrm 2.4.107's header) for the GPU's preset: what libdrm and
/// the thunk read of it, the rest zero.
fn dev_info(g: &crate::Gpu) -> Vec<u8> {
    let p = g.preset;
    let mut b = vec![0u8; 368];
    let mut u32_at = |at: usize, v: u32| b[at..at + 4].copy_from_slice(&v.to_le_bytes());
    u32_at(0, p.pci_device_id);
    u32_at(12, p.pci_revision);
    u32_at(16, FAMILY_AI);
    let engines = (p.compute_units / p.cus_per_group.max(1)).max(1);
    u32_at(20, engines);
    u32_at(24, 1); // shader arrays per engine
    u32_at(28, (crate::clock::GPU_CLOCK_HZ / 1000) as u32); // gpu_counter_freq, kHz
    u32_at(48, p.compute_units);
    u32_at(160, 4096); // virtual_address_alignment
    u32_at(176, VRAM_TYPE_HBM);
    u32_at(180, p.memory_width_bits);
    u32_at(240, p.wave_size);
    u32_at(248, p.cus_per_group);
    let mut u64_at = |at: usize, v: u64| b[at..at + 8].copy_from_slice(&v.to_le_bytes());
    u64_at(32, p.engine_clock_mhz as u64 * 1000); // max_engine_clock, kHz
    u64_at(40, p.memory_clock_mhz as u64 * 1000);
    u64_at(144, 0x20_0000); // virtual_address_offset
    u64_at(152, 0x8000_0000_0000); // virtual_address_max
    u64_at(336, 0xffff_8000_0000_0000); // high_va_offset
    u64_at(344, 0xffff_ffff_ffe0_0000); // high_va_max
    b
}

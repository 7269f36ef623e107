//! The KFD ioctls (interface 1.14), decoded by number: the structures' sizes differ between ROCm 5.2's header and
//! tinygrad's, and the driver copies what the request's size says (see [`crate::args`]).
//!
//! | nr | ioctl | what the driver does |
//! |---|---|---|
//! | 0x01 | GET_VERSION | 1.14 |
//! | 0x02, 0x03, 0x07 | CREATE/DESTROY/UPDATE_QUEUE | [`crate::queues`]: AQL, PM4 and SDMA queues |
//! | 0x04 | SET_MEMORY_POLICY | accepted: the emulated memory is coherent |
//! | 0x05 | GET_CLOCK_COUNTERS | [`crate::clock`], `CLOCK_MONOTONIC_RAW`, `CLOCK_BOOTTIME` (modeled in timing mode), 1 GHz |
//! | 0x08–0x0C | events | [`crate::events`] |
//! | 0x11 | SET_SCRATCH_BACKING_VA | recorded: kernels get private memory from the emulator |
//! | 0x12 | GET_TILE_CONFIG | no tile tables (gfx9) |
//! | 0x13 | SET_TRAP_HANDLER | recorded: traps end the dispatch with the emulator's report |
//! | 0x14 | GET_PROCESS_APERTURES_NEW | gfx9's LDS, scratch and GPUVM apertures |
//! | 0x15 | ACQUIRE_VM | the render node's descriptor is checked |
//! | 0x16–0x19 | ALLOC/FREE, MAP/UNMAP | [`crate::memory`] |
//! | 0x1A | SET_CU_MASK | accepted (every CU runs every queue) |
//! | 0x1E | ALLOC_QUEUE_GWS | the queue's dispatches become cooperative launches |
//! | 0x20 | SVM | [`crate::svm`]: attributes of the program's pages; those a GPU may access are reachable by kernels |
//! | 0x21 | SET_XNACK_MODE | XNACK off (a request to turn it on: EPERM, "not supported") |
//! | 0x25 | RUNTIME_ENABLE | accepted |
//! | 0x80, 0x81 | IPC_IMPORT/EXPORT_HANDLE | [`crate::memory`]: buffers shared by the processes of a program |
//! | 0x82 | DBG_TRAP | EINVAL: ROCr then runs without its debugger interface |
//!
//! Any other number fails with ENOTTY and one line on stderr naming it (DMA-BUF import and export, CRIU, SMI events
//! and the like are not emulated), and so does a request of another type than KFD's `'K'` (a terminal's
//! TCGETS, a DRM ioctl): the kernel's /dev/kfd answers those ENOTTY too.
//!
//! `fstat` of /dev/kfd says it is the character device (235, 0) ([`crate::files::KFD_NUMBER`]; the kernel's major
//! is dynamic).

use crate::args::{Args, Errno};
use crate::Driver;

/// The interface version reported.
pub const VERSION: (u32, u32) = (1, 14);

/// A GPU's identity in the topology `wavejit exec` writes: the KFD gpu id and the render node's minor.
pub struct Identity {
    pub gpu_id: u32,
    pub render_minor: u32,
}

/// The render node minor of the first GPU (`renderD128`); the others follow in order.
pub const RENDER_MINOR_BASE: u32 = 128;

/// The identity of the GPU at place `index` of `WAVEJIT_DEVICES` (the SMI view's card identity).
pub fn identity(index: usize, preset: &emu_core::DevicePreset) -> Identity {
    Identity {
        gpu_id: profiler_hooks::smi::Identity::of(index as u32, preset.id).gpu_id,
        render_minor: RENDER_MINOR_BASE + index as u32,
    }
}

/// gfx9's apertures (Linux `kfd_init_apertures_v9`): LDS and scratch at fixed 64-bit bases whose upper halves
/// the engine decodes flat addresses with, the GPU's virtual range the whole canonical lower half.
pub const LDS_BASE: u64 = (emu_core::sem::SHARED_APERTURE_HI as u64) << 32;
pub const SCRATCH_BASE: u64 = (emu_core::sem::PRIVATE_APERTURE_HI as u64) << 32;
const GPUVM_BASE: u64 = 0x100_0000;
const GPUVM_LIMIT: u64 = 0x7fff_ffff_ffff;

fn say_unsupported(nr: u32, name: &str) {
    static SAID: std::sync::Mutex<Vec<u32>> = std::sync::Mutex::new(Vec::new());
    let mut said = SAID.lock().unwrap_or_else(|e| e.into_inner());
    if !said.contains(&nr) {
        said.push(nr);
        eprintln!("wavejit: the emulated KFD does not support ioctl {nr:#x} ({name}); it fails with ENOTTY");
    }
}

/// The name of KFD ioctl `nr` (kfd_ioctl.h's `AMDKFD_IOC_` names), for messages and profiles.
pub fn name(nr: u32) -> &'static str {
    match nr {
        0x01 => "GET_VERSION",
        0x02 => "CREATE_QUEUE",
        0x03 => "DESTROY_QUEUE",
        0x04 => "SET_MEMORY_POLICY",
        0x05 => "GET_CLOCK_COUNTERS",
        0x06 => "GET_PROCESS_APERTURES",
        0x07 => "UPDATE_QUEUE",
        0x08 => "CREATE_EVENT",
        0x09 => "DESTROY_EVENT",
        0x0a => "SET_EVENT",
        0x0b => "RESET_EVENT",
        0x0c => "WAIT_EVENTS",
        0x0d..=0x10 => "DBG (deprecated)",
        0x11 => "SET_SCRATCH_BACKING_VA",
        0x12 => "GET_TILE_CONFIG",
        0x13 => "SET_TRAP_HANDLER",
        0x14 => "GET_PROCESS_APERTURES_NEW",
        0x15 => "ACQUIRE_VM",
        0x16 => "ALLOC_MEMORY_OF_GPU",
        0x17 => "FREE_MEMORY_OF_GPU",
        0x18 => "MAP_MEMORY_TO_GPU",
        0x19 => "UNMAP_MEMORY_FROM_GPU",
        0x1a => "SET_CU_MASK",
        0x1b => "GET_QUEUE_WAVE_STATE",
        0x1c => "GET_DMABUF_INFO",
        0x1d => "IMPORT_DMABUF",
        0x1e => "ALLOC_QUEUE_GWS",
        0x1f => "SMI_EVENTS",
        0x20 => "SVM",
        0x21 => "SET_XNACK_MODE",
        0x22 => "CRIU_OP",
        0x23 => "AVAILABLE_MEMORY",
        0x24 => "EXPORT_DMABUF",
        0x25 => "RUNTIME_ENABLE",
        0x80 => "IPC_IMPORT_HANDLE",
        0x81 => "IPC_EXPORT_HANDLE",
        0x82 => "DBG_TRAP",
        0x83 => "CROSS_MEMORY_COPY",
        0x84 => "RLC_SPM",
        _ => "unknown",
    }
}

/// A KFD ioctl on the process's driver.
pub fn ioctl(d: &std::sync::Arc<Driver>, request: u64, arg: u64) -> Result<(), Errno> {
    use crate::args::{request_nr, request_type};
    if request_type(request) != b'K' {
        crate::args::say_foreign("/dev/kfd", request);
        return Err(libc::ENOTTY);
    }
    // a runtime calling in may have just submitted work: idle command processors look now
    d.queues.wake();
    let nr = request_nr(request);
    let mut a = Args::copy_in(arg, request, 128)?;
    match nr {
        0x02 => d.create_queue(&mut a)?,
        0x03 => d.destroy_queue(a.u32(0))?,
        0x07 => d.update_queue(&a)?,
        0x01 => {
            a.set_u32(0, VERSION.0);
            a.set_u32(4, VERSION.1);
        }
        0x14 => apertures(d, &mut a)?,
        0x15 => {
            let (fd, gpu_id) = (a.u32(0) as i32, a.u32(4));
            let g = d.gpu(gpu_id).ok_or(libc::EINVAL)?;
            if !g.render.owns(fd) {
                return Err(libc::EINVAL);
            }
        }
        0x04 | 0x11 | 0x13 => {
            // SET_MEMORY_POLICY (gpu_id @16), SET_SCRATCH_BACKING_VA (@8), SET_TRAP_HANDLER (@16)
            let at = if nr == 0x11 { 8 } else { 16 };
            d.gpu(a.u32(at)).ok_or(libc::EINVAL)?;
        }
        0x05 => {
            let gpu_id = a.u32(32);
            if gpu_id != 0 {
                d.gpu(gpu_id).ok_or(libc::EINVAL)?;
            }
            let c = d.clock.counters();
            a.set_u64(0, if gpu_id == 0 { 0 } else { c.gpu });
            a.set_u64(8, c.cpu_ns);
            a.set_u64(16, c.system_ns);
            a.set_u64(24, 1_000_000_000);
        }
        0x12 => {
            d.gpu(a.u32(24)).ok_or(libc::EINVAL)?;
            a.set_u32(16, 0);
            a.set_u32(20, 0);
            a.set_u32(28, 0x2a11_4042); // GB_ADDR_CONFIG of gfx90a/gfx942
            a.set_u32(32, 0);
            a.set_u32(36, 0);
        }
        0x16 => d.alloc(&mut a)?,
        0x17 => d.free(a.u64(0))?,
        0x18 => d.map(&mut a, true)?,
        0x19 => d.map(&mut a, false)?,
        0x08 => {
            let page = match a.u64(0) {
                0 => None,
                handle => {
                    let bo = d.bos.get(handle).ok_or(libc::EINVAL)?;
                    if bo.len < crate::events::SLOTS as u64 * 8 {
                        return Err(libc::EINVAL);
                    }
                    Some(d.host_of(&bo).ok_or(libc::EINVAL)?.cast::<u64>())
                }
            };
            d.events.create(&mut a, page)?;
        }
        0x09 => d.events.destroy(a.u32(0))?,
        0x0a => d.events.set(a.u32(0))?,
        0x0b => d.events.reset(a.u32(0))?,
        0x0c => {
            let r = d.events.wait(a.u64(0), a.u32(8), a.u32(12) != 0, a.u32(16))?;
            a.set_u32(20, r);
        }
        0x21 => {
            let want = a.u32(0) as i32;
            if want > 0 {
                return Err(libc::EPERM);
            }
            a.set_u32(0, 0);
        }
        0x1e => d.alloc_queue_gws(&mut a)?,
        0x20 => d.svm_ioctl(&mut a)?,
        0x1a | 0x25 => {}
        0x80 => d.ipc_import(&mut a)?,
        0x81 => d.ipc_export(&mut a)?,
        0x82 => return Err(libc::EINVAL),
        _ => {
            say_unsupported(nr, name(nr));
            return Err(libc::ENOTTY);
        }
    }
    a.copy_out()
}

/// `GET_PROCESS_APERTURES_NEW`: an array of `kfd_process_device_apertures` (56 bytes) at @0, its capacity at @8
/// (out: the entries filled, one per GPU).
fn apertures(d: &Driver, a: &mut Args) -> Result<(), Errno> {
    let (ptr, cap) = (a.u64(0), a.u32(8));
    if (cap as usize) < d.gpus.len() {
        return Err(libc::ENOSPC);
    }
    let mut out = vec![0u8; d.gpus.len() * 56];
    for (i, g) in d.gpus.iter().enumerate() {
        let e = &mut out[i * 56..(i + 1) * 56];
        for (at, v) in [
            (0, LDS_BASE),
            (8, LDS_BASE | 0xffff_ffff),
            (16, SCRATCH_BASE),
            (24, SCRATCH_BASE | 0xffff_ffff),
            (32, GPUVM_BASE),
            (40, GPUVM_LIMIT),
        ] {
            e[at..at + 8].copy_from_slice(&v.to_le_bytes());
        }
        e[48..52].copy_from_slice(&g.gpu_id.to_le_bytes());
    }
    crate::args::write_user(ptr, &out)?;
    a.set_u32(8, d.gpus.len() as u32);
    Ok(())
}

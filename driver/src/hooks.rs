//! What the interposed libc entry points (src/hooks.c) ask the driver: whether a path is a device of it, and
//! whether an ioctl is on one of its files. Nothing unwinds into C: a panic becomes an error for the call.

use std::ffi::{c_char, c_int, c_void, CStr};

use crate::args::Errno;

/// `WAVEJIT_DRIVER_TRACE=1`: every ioctl of the driver and its outcome on stderr.
pub fn trace() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var("WAVEJIT_DRIVER_TRACE").is_ok_and(|v| v == "1"))
}

/// Returned for what is not the driver's (hooks.c passes it on to libc).
const PASS: c_int = -2;

fn set_errno(e: Errno) {
    // SAFETY: errno is this thread's.
    unsafe { *libc::__errno_location() = e };
}

/// The render node minor of `path` when it is `/dev/dri/renderD<N>`.
fn render_minor(path: &[u8]) -> Option<u32> {
    let n = path.strip_prefix(b"/dev/dri/renderD")?;
    std::str::from_utf8(n).ok()?.parse().ok()
}

/// `open` of `path`: a descriptor of one of the driver's device files, or [`PASS`].
///
/// # Safety
/// `path` is null or a NUL-terminated string, as `open` is given.
#[no_mangle]
pub unsafe extern "C" fn wj_open(path: *const c_char, flags: c_int) -> c_int {
    if path.is_null() {
        return PASS;
    }
    // SAFETY: `open` is given a NUL-terminated path.
    let p = unsafe { CStr::from_ptr(path) }.to_bytes();
    let kfd = p == b"/dev/kfd";
    let minor = render_minor(p);
    if !kfd && minor.is_none() {
        return PASS;
    }
    let opened = std::panic::catch_unwind(|| {
        let d = crate::start()?;
        let cloexec = flags & libc::O_CLOEXEC != 0;
        let file = match minor {
            None => &d.kfd,
            Some(m) => match d.gpus.iter().find(|g| g.render_minor == m) {
                Some(g) => &g.render,
                None => return Err(libc::ENOENT),
            },
        };
        file.open(cloexec).map_err(|e| e.raw_os_error().unwrap_or(libc::EIO))
    });
    match opened {
        Ok(Ok(fd)) => fd,
        Ok(Err(e)) => {
            set_errno(e);
            -1
        }
        Err(_) => {
            eprintln!("wavejit: internal error in the emulated driver opening a device");
            set_errno(libc::EIO);
            -1
        }
    }
}

/// Whether the file (`dev`, `ino`) (a `stat`'s `st_dev` and `st_ino`) is one of the driver's device files: 1 with
/// its device number in `major` and `minor`, else 0. Lock-free, so any `stat` may ask (see [`crate::files`]).
///
/// # Safety
/// `major` and `minor` point to writable u32s.
#[no_mangle]
pub unsafe extern "C" fn wj_device_number(dev: u64, ino: u64, major: *mut u32, minor: *mut u32) -> c_int {
    match crate::files::number_of(dev, ino) {
        Some(n) => {
            // SAFETY: the caller passes two writable u32s.
            unsafe {
                *major = n.major;
                *minor = n.minor;
            }
            1
        }
        None => 0,
    }
}

/// Whether `path` names a device of the driver, for `stat` and `access` of it: 1 with its number in `major` and
/// `minor` when the driver runs (the caller opens the device and answers for the file), 0 with its number when
/// it does not run yet (the caller answers without starting it: a `stat` or `access` of `/dev/kfd` is no use of
/// a GPU), -1 with errno ENOENT for a render node of no emulated GPU (ENODEV when the driver cannot start), or
/// [`PASS`] for any other path.
///
/// # Safety
/// `path` is null or a NUL-terminated string; `major` and `minor` point to writable u32s.
#[no_mangle]
pub unsafe extern "C" fn wj_device_path(path: *const c_char, major: *mut u32, minor: *mut u32) -> c_int {
    if path.is_null() {
        return PASS;
    }
    // SAFETY: the caller passes a NUL-terminated path.
    let p = unsafe { CStr::from_ptr(path) }.to_bytes();
    let number = match render_minor(p) {
        Some(minor) => crate::files::Number {
            major: crate::files::DRM_MAJOR,
            minor,
        },
        None if p == b"/dev/kfd" => crate::files::KFD_NUMBER,
        None => return PASS,
    };
    let known = std::panic::catch_unwind(|| {
        let running = crate::driver();
        let gpus = match &running {
            Some(d) => d.gpus.len(),
            None => gpu::Settings::from_env().map_err(|_| libc::ENODEV)?.devices.len(),
        };
        let render_nodes = crate::kfd::RENDER_MINOR_BASE..crate::kfd::RENDER_MINOR_BASE + gpus as u32;
        if number.major == crate::files::DRM_MAJOR && !render_nodes.contains(&number.minor) {
            return Err(libc::ENOENT);
        }
        Ok(running.is_some())
    });
    match known {
        Ok(Ok(running)) => {
            // SAFETY: the caller passes two writable u32s.
            unsafe {
                *major = number.major;
                *minor = number.minor;
            }
            c_int::from(running)
        }
        Ok(Err(e)) => {
            set_errno(e);
            -1
        }
        Err(_) => {
            set_errno(libc::EIO);
            -1
        }
    }
}

/// `ioctl` on `fd` (`request` is C's `unsigned long`, 64 bits here): the driver's answer when `fd` is one of its device files, else [`PASS`].
#[no_mangle]
pub extern "C" fn wj_ioctl(fd: c_int, request: u64, arg: *mut c_void) -> c_int {
    let Some(d) = crate::driver() else {
        return PASS;
    };
    let (is_kfd, gpu) = if d.kfd.owns(fd) {
        (true, None)
    } else {
        match d.gpus.iter().position(|g| g.render.owns(fd)) {
            Some(g) => (false, Some(g)),
            None => return PASS,
        }
    };
    let start = gpu::profile::api_begin();
    let done = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match gpu {
        None if is_kfd => crate::kfd::ioctl(&d, request, arg as u64),
        Some(g) => crate::drm::ioctl(&d, g, request, arg as u64),
        None => Err(libc::ENOTTY),
    }));
    // a profile lists the program's ioctls as its calls into the GPU's interface
    let nr = crate::args::request_nr(request);
    if is_kfd {
        gpu::profile::api_end(|| format!("AMDKFD_IOC_{}", crate::kfd::name(nr)), start);
    } else {
        gpu::profile::api_end(|| format!("DRM_IOCTL_{}", crate::drm::name(nr)), start);
    }
    if trace() {
        eprintln!(
            "wavejit-driver: ioctl {request:#010x} on {} -> {:?}",
            if is_kfd { "/dev/kfd" } else { "render node" },
            done.as_ref()
                .map(|r| r.map_err(|e| std::io::Error::from_raw_os_error(e).to_string()))
        );
    }
    match done {
        Ok(Ok(())) => 0,
        Ok(Err(e)) => {
            set_errno(e);
            -1
        }
        Err(_) => {
            eprintln!("wavejit: internal error in the emulated driver handling ioctl {request:#x}");
            set_errno(libc::EIO);
            -1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn render_nodes_are_named_by_their_minor() {
        assert_eq!(render_minor(b"/dev/dri/renderD128"), Some(128));
        assert_eq!(render_minor(b"/dev/dri/renderD"), None);
        assert_eq!(render_minor(b"/dev/dri/card0"), None);
        assert_eq!(render_minor(b"/dev/dri/renderD12x"), None);
    }
}

//! Argument structures of ioctls and what they point to, read from and written to the calling program's memory.
//!
//! The program hands the driver pointers, as it hands them to the kernel. The kernel copies through them with
//! `copy_from_user`, which fails with EFAULT rather than crash on a bad pointer; the driver does the same with
//! `process_vm_readv`/`process_vm_writev` on its own process, so a wild pointer is an error, never a crash.
//!
//! An ioctl's request number carries the size of its structure. As the kernel does, the driver copies in that
//! many bytes into a buffer at least as large as its own idea of the structure (zeroed beyond), lets the handler
//! read and write fields by byte offset, and copies the user's size back: older and newer headers whose structure
//! sizes differ (ROCm 5.2's `kfd_ioctl_create_queue_args` is 88 bytes, tinygrad's 96) both work.

/// An errno value the ioctl returns (with -1).
pub type Errno = i32;

/// Copies `buf.len()` bytes from the program's memory at `address`.
pub fn read_user(address: u64, buf: &mut [u8]) -> Result<(), Errno> {
    if buf.is_empty() {
        return Ok(());
    }
    if address == 0 {
        return Err(libc::EFAULT);
    }
    let local = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    let remote = libc::iovec {
        iov_base: address as *mut libc::c_void,
        iov_len: buf.len(),
    };
    // SAFETY: the local iovec covers `buf`, which this function borrows mutably; the kernel checks the remote
    // range and fails with EFAULT rather than touching memory that is not mapped.
    let n = unsafe { libc::process_vm_readv(libc::getpid(), &local, 1, &remote, 1, 0) };
    if n == buf.len() as isize {
        Ok(())
    } else {
        Err(libc::EFAULT)
    }
}

/// Copies `data` into the program's memory at `address`.
pub fn write_user(address: u64, data: &[u8]) -> Result<(), Errno> {
    if data.is_empty() {
        return Ok(());
    }
    if address == 0 {
        return Err(libc::EFAULT);
    }
    let local = libc::iovec {
        iov_base: data.as_ptr() as *mut libc::c_void,
        iov_len: data.len(),
    };
    let remote = libc::iovec {
        iov_base: address as *mut libc::c_void,
        iov_len: data.len(),
    };
    // SAFETY: as in `read_user`; the local iovec only covers `data`, which the kernel reads.
    let n = unsafe { libc::process_vm_writev(libc::getpid(), &local, 1, &remote, 1, 0) };
    if n == data.len() as isize {
        Ok(())
    } else {
        Err(libc::EFAULT)
    }
}

/// The size field of an ioctl request (`_IOC_SIZE`).
pub fn request_size(request: u64) -> usize {
    ((request >> 16) & 0x3fff) as usize
}

/// The number field of an ioctl request (`_IOC_NR`).
pub fn request_nr(request: u64) -> u32 {
    (request & 0xff) as u32
}

/// The type field of an ioctl request (`_IOC_TYPE`: `'K'` for KFD, `'d'` for DRM).
pub fn request_type(request: u64) -> u8 {
    ((request >> 8) & 0xff) as u8
}

/// Says on stderr, once per device and request, that `device` refuses ioctl `request`, whose type is not the
/// device's own (a terminal's TCGETS on /dev/kfd, a KFD ioctl on a render node): it fails with ENOTTY, as the
/// kernel's does.
pub fn say_foreign(device: &'static str, request: u64) {
    static SAID: std::sync::Mutex<Vec<(&'static str, u64)>> = std::sync::Mutex::new(Vec::new());
    let mut said = SAID.lock().unwrap_or_else(|e| e.into_inner());
    if !said.contains(&(device, request)) {
        said.push((device, request));
        let t = request_type(request);
        let t = if t.is_ascii_graphic() {
            format!("'{}'", t as char)
        } else {
            format!("{t:#04x}")
        };
        eprintln!("wavejit: {device} of the emulated driver does not take ioctl {request:#x} (of type {t}, not its own); it fails with ENOTTY");
    }
}

/// An ioctl's argument structure, copied in from the program.
pub struct Args {
    address: u64,
    /// The size the request names: what is copied in and out.
    user: usize,
    buf: Vec<u8>,
}

impl Args {
    /// The structure at `address` whose size `request` names, in a buffer of at least `ours` bytes.
    pub fn copy_in(address: u64, request: u64, ours: usize) -> Result<Args, Errno> {
        let user = request_size(request);
        let mut buf = vec![0u8; user.max(ours)];
        read_user(address, &mut buf[..user])?;
        Ok(Args { address, user, buf })
    }

    /// The size the request names (a structure with a variable tail, as SVM's attributes are, is that long).
    pub fn user_len(&self) -> usize {
        self.user
    }

    /// Copies the structure back to the program.
    pub fn copy_out(&self) -> Result<(), Errno> {
        write_user(self.address, &self.buf[..self.user])
    }

    pub fn u32(&self, offset: usize) -> u32 {
        u32::from_le_bytes(self.buf[offset..offset + 4].try_into().expect("4 bytes"))
    }

    pub fn u64(&self, offset: usize) -> u64 {
        u64::from_le_bytes(self.buf[offset..offset + 8].try_into().expect("8 bytes"))
    }

    pub fn set_u32(&mut self, offset: usize, v: u32) {
        self.buf[offset..offset + 4].copy_from_slice(&v.to_le_bytes());
    }

    pub fn set_u64(&mut self, offset: usize, v: u64) {
        self.buf[offset..offset + 8].copy_from_slice(&v.to_le_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn structures_are_copied_by_the_size_the_request_names() {
        // an 88-byte structure under a request naming 88, handled as 96 bytes
        let mut user = [0u8; 96];
        user[0] = 7;
        user[90] = 9; // beyond the request's size: neither read nor written
        let request = 0xc058_4b02; // _IOWR('K', 2, 88 bytes)
        assert_eq!(request_size(request), 88);
        assert_eq!(request_nr(request), 2);
        assert_eq!(request_type(request), b'K');
        let mut a = Args::copy_in(user.as_ptr() as u64, request, 96).unwrap();
        assert_eq!(a.u32(0), 7);
        assert_eq!(a.u32(88), 0, "zero beyond the user's size");
        a.set_u64(24, 0x1122_3344_5566_7788);
        a.set_u32(88, 5);
        a.copy_out().unwrap();
        assert_eq!(
            u64::from_le_bytes(user[24..32].try_into().unwrap()),
            0x1122_3344_5566_7788
        );
        assert_eq!(user[88], 0);
        assert_eq!(user[90], 9);
    }

    #[test]
    fn a_wild_pointer_is_efault_not_a_crash() {
        let mut buf = [0u8; 8];
        assert_eq!(read_user(0x10, &mut buf), Err(libc::EFAULT));
        assert_eq!(write_user(0x10, &buf), Err(libc::EFAULT));
        assert_eq!(read_user(0, &mut buf), Err(libc::EFAULT));
    }
}

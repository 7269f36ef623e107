//! Snapshots of allocations' contents, to run a dispatch twice from the same state.

use super::{round_up, Access, AllocKind, DeviceMemory, MemoryFault, PAGE};

impl DeviceMemory {
    /// A copy of every live device buffer: (address, contents of its pages, slack included) — to run a dispatch
    /// twice from the same state.
    pub fn snapshot_buffers(&self) -> Result<Vec<(u64, Vec<u8>)>, MemoryFault> {
        self.snapshot(&[AllocKind::Buffer])
    }

    /// [`DeviceMemory::snapshot_buffers`] of every live allocation of `kinds`, kind by kind (buffers with their
    /// pages' slack, the others their bytes).
    pub fn snapshot(&self, kinds: &[AllocKind]) -> Result<Vec<(u64, Vec<u8>)>, MemoryFault> {
        kinds
            .iter()
            .flat_map(|&kind| {
                self.allocations(kind).into_iter().map(move |(a, n)| {
                    (
                        a,
                        if kind == AllocKind::Buffer {
                            round_up(n.max(1), PAGE)
                        } else {
                            n
                        },
                    )
                })
            })
            .map(|(a, n)| {
                let mut b = vec![0u8; n as usize];
                let off = self.check_span(a, b.len() as u64, Access::Read)?;
                // SAFETY: `check_span` proved [off, off+len) lies in a live allocation's page span inside the arena.
                unsafe { std::ptr::copy_nonoverlapping(self.ptr(off), b.as_mut_ptr(), b.len()) };
                Ok((a, b))
            })
            .collect()
    }

    /// Writes the buffers of a [`DeviceMemory::snapshot_buffers`] back.
    pub fn restore_buffers(&self, snapshot: &[(u64, Vec<u8>)]) -> Result<(), MemoryFault> {
        snapshot.iter().try_for_each(|(a, b)| {
            let off = self.check_span(*a, b.len() as u64, Access::Write)?;
            // SAFETY: as in `snapshot_buffers`.
            unsafe { std::ptr::copy_nonoverlapping(b.as_ptr(), self.ptr(off), b.len()) };
            Ok(())
        })
    }

    /// Arena offset of `[address, address + len)` when it lies inside the pages of one live buffer.
    fn check_span(&self, address: u64, len: u64, access: Access) -> Result<u64, MemoryFault> {
        match self.check(address, len, access) {
            Ok(off) => Ok(off),
            Err(fault) => self.in_pages(address, len, access).ok_or(fault),
        }
    }
}

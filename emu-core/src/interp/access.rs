//! The interpreter's memory accesses: lanes' reads, writes and atomics of device memory and LDS, checked and
//! noted for an observer, and images' texels through them.

use super::Interp;
use crate::image::Texels;
use crate::memory::{Access, Within};
use crate::observe::{Dir, LaneAccess, Space};
use crate::sem::{AtomicOp, ExecError};
use crate::wave::{Lanes, SlackAccess, LANES};

impl<'a> Interp<'a> {
    /// One window over every active lane's `bytes` at its address, when they all fall in one allocation.
    pub(super) fn span(
        &self,
        lo: &Lanes,
        hi: &Lanes,
        offset: i64,
        bytes: u32,
        m: u64,
        access: crate::memory::Access,
    ) -> Option<crate::memory::Window<'a>> {
        let (mut min, mut max) = (u64::MAX, 0u64);
        for l in Self::lanes(m) {
            let a = lane_address(lo, hi, l, offset);
            min = min.min(a);
            max = max.max(a.checked_add(bytes as u64)?);
        }
        if min > max {
            return None;
        }
        self.mem.window(min, max - min, access)
    }

    pub(super) fn lanes(m: u64) -> impl Iterator<Item = usize> {
        (0..LANES).filter(move |l| m >> l & 1 == 1)
    }

    pub(super) fn lds_range(
        &mut self,
        lane: usize,
        a: u64,
        dwords: u32,
        access: crate::memory::Access,
    ) -> Result<std::ops::Range<usize>, ExecError> {
        self.lds_bytes(lane, a, dwords * 4, access)
    }

    pub(super) fn lds_bytes(
        &mut self,
        lane: usize,
        a: u64,
        bytes: u32,
        access: crate::memory::Access,
    ) -> Result<std::ops::Range<usize>, ExecError> {
        self.note(lane, Space::Lds, a, bytes, access == crate::memory::Access::Write);
        let len = bytes as u64;
        if a + len > self.lds.len() as u64 {
            return Err(ExecError::Lds {
                mnemonic: self.mnemonic,
                lane: lane as u32,
                access,
                address: a,
                len,
                size: self.lds.len() as u64,
            });
        }
        Ok(a as usize..(a + len) as usize)
    }

    /// Records an access of `lane` when accesses are being recorded. A device-memory access inside the wave's
    /// private segment is a scratch access (whichever instruction made it).
    pub(super) fn note(&mut self, lane: usize, space: Space, address: u64, bytes: u32, write: bool) {
        if let Some(v) = self.accesses.as_deref_mut() {
            let space = crate::observe::space_of(space, address, self.wave);
            v.push(LaneAccess {
                lane: lane as u8,
                space,
                dir: if write { Dir::Write } else { Dir::Read },
                bytes,
                address,
            });
        }
    }

    pub(super) fn fault(&self, lane: Option<u32>, fault: crate::memory::MemoryFault) -> ExecError {
        ExecError::Memory {
            mnemonic: self.mnemonic,
            lane,
            fault,
        }
    }

    /// Counts an access of `lane` (`None`: scalar) that landed in an allocation's slack, describing the wave's
    /// first.
    pub(super) fn landed(&mut self, lane: Option<u32>, access: Access, address: u64, len: u64, within: Within) {
        if within == Within::Pages {
            let seen = &mut self.wave.slack;
            seen.count += 1;
            if seen.first.is_none() {
                let slack = self.mem.slack(access, address, len);
                seen.first = Some(Box::new(SlackAccess {
                    at: None,
                    mnemonic: self.mnemonic,
                    lane,
                    slack,
                }));
            }
        }
    }

    /// A kernel's read of `buf.len()` bytes at `address` by `lane` (`None`: scalar).
    pub(super) fn read(&mut self, lane: Option<u32>, address: u64, buf: &mut [u8]) -> Result<(), ExecError> {
        let within = self.mem.read_guest(address, buf).map_err(|e| self.fault(lane, e))?;
        self.landed(lane, Access::Read, address, buf.len() as u64, within);
        Ok(())
    }

    /// A kernel's write of `data` at `address` by `lane` (`None`: scalar).
    pub(super) fn write(&mut self, lane: Option<u32>, address: u64, data: &[u8]) -> Result<(), ExecError> {
        let within = self.mem.write_guest(address, data).map_err(|e| self.fault(lane, e))?;
        self.landed(lane, Access::Write, address, data.len() as u64, within);
        Ok(())
    }

    /// The outcome of a kernel's atomic of `bytes` at `address` by `lane` (`None`: scalar).
    pub(super) fn atomic<T>(
        &mut self,
        lane: Option<u32>,
        address: u64,
        bytes: u64,
        r: Result<(T, Within), crate::memory::MemoryFault>,
    ) -> Result<T, ExecError> {
        let (old, within) = r.map_err(|e| self.fault(lane, e))?;
        self.landed(lane, Access::Write, address, bytes, within);
        Ok(old)
    }

    /// Whether lane `l`'s atomic of `op` on `bytes` at `addr` is one the device drops
    /// ([`crate::rules::atomic_dropped`]); the access is still checked.
    pub(super) fn dropped(&mut self, op: AtomicOp, addr: u64, bytes: u64, l: usize) -> Result<bool, ExecError> {
        if !crate::rules::atomic_dropped(op, self.wave.fine_grained_float_atomics, self.mem, addr) {
            return Ok(false);
        }
        let (_, within) = self
            .mem
            .check_guest(addr, bytes, Access::Write)
            .map_err(|e| self.fault(Some(l as u32), e))?;
        self.landed(Some(l as u32), Access::Write, addr, bytes, within);
        Ok(true)
    }
}

/// One lane's texel accesses, checked and noted like its other global accesses.
pub(super) struct LaneTexels<'i, 'a> {
    pub(super) interp: &'i mut Interp<'a>,
    pub(super) lane: usize,
}

impl Texels for LaneTexels<'_, '_> {
    type Error = ExecError;
    fn read(&mut self, address: u64, buf: &mut [u8]) -> Result<(), ExecError> {
        let (i, l) = (&mut *self.interp, self.lane);
        i.note(l, Space::Global, address, buf.len() as u32, false);
        i.read(Some(l as u32), address, buf)
    }
    fn write(&mut self, address: u64, data: &[u8]) -> Result<(), ExecError> {
        let (i, l) = (&mut *self.interp, self.lane);
        i.note(l, Space::Global, address, data.len() as u32, true);
        i.write(Some(l as u32), address, data)
    }
    /// A host atomic, as global atomics are, so workgroups on other threads never lose an update.
    fn atomic(&mut self, address: u64, bytes: u32, f: &dyn Fn(u64) -> u64) -> Result<u64, ExecError> {
        let (i, l) = (&mut *self.interp, self.lane);
        i.note(l, Space::Global, address, bytes, true);
        let old = if bytes == 8 {
            i.mem.atomic_u64(address, f)
        } else {
            i.mem
                .atomic_u32(address, |o| f(o as u64) as u32)
                .map(|(o, w)| (o as u64, w))
        };
        i.atomic(Some(l as u32), address, bytes as u64, old)
    }
}

/// The LDS address of a lane: the address register plus the instruction's offset in 32 bits, wrapping as the
/// hardware adds them (compilers fold constant offsets into DS instructions whose base may be negative).
pub(super) fn lds_address(addr: u32, offset: u32) -> u64 {
    addr.wrapping_add(offset) as u64
}

/// Lane `l`'s 64-bit address (lo, hi) plus a signed offset.
pub(super) fn lane_address(lo: &Lanes, hi: &Lanes, l: usize, offset: i64) -> u64 {
    ((hi[l] as u64) << 32 | lo[l] as u64).wrapping_add(offset as u64)
}

/// A one-operand 32-bit atomic ([`crate::rules::atomic`]); the semantics never pass the two-operand ones.
pub(super) fn atomic32(op: AtomicOp, old: u32, data: u32) -> u32 {
    crate::rules::atomic(op, old as u64, data as u64, 32).unwrap_or(old as u64) as u32
}

/// A one-operand 64-bit atomic.
pub(super) fn atomic64(op: AtomicOp, old: u64, data: u64) -> u64 {
    crate::rules::atomic(op, old, data, 64).unwrap_or(old)
}

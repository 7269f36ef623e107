//! Lane accesses: which memory ([`Space`]) and how ([`Dir`]), one lane's record ([`LaneAccess`]), a run of
//! consecutive lanes ([`LaneRange`]), an instruction's accesses ([`Accesses`]), and their classification by
//! instruction and wave.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use isa_amdgpu::encoding::Encoding;
use isa_amdgpu::table::MemDir;
use isa_amdgpu::Inst;

/// Which memory a lane access went to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Space {
    /// Device memory through GLOBAL or buffer (MUBUF/MTBUF) instructions, by device address.
    Global,
    /// Device memory through the scalar data cache (`s_load`, `s_buffer_load`), by device address.
    Scalar,
    /// The workgroup's LDS, by byte offset (DS instructions, and FLAT lanes in the shared aperture).
    Lds,
    /// The lane's private memory (SCRATCH instructions, buffer accesses through the private segment), by
    /// device address.
    Scratch,
    /// Device memory through FLAT instructions, by device address.
    Flat,
}

/// What a lane access does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Dir {
    Read,
    Write,
    /// Read-modify-write.
    Atomic,
}

/// One lane's access to memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LaneAccess {
    /// 0..63; 0 for the wave's scalar accesses ([`Space::Scalar`]).
    pub lane: u8,
    pub space: Space,
    pub dir: Dir,
    pub bytes: u32,
    pub address: u64,
}

/// Accesses of one instruction to consecutive elements of device memory: each lane `l` of `lanes` (lowest first)
/// accesses the `bytes` at `base + l × bytes` (wrapping), in `space` ([`Space::Global`] or [`Space::Flat`]) and
/// direction `dir`. A whole wave reading or writing a contiguous range is one `LaneRange` instead of 64 records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LaneRange {
    pub space: Space,
    pub dir: Dir,
    /// Bytes per lane (the element size), at least 1.
    pub bytes: u32,
    /// The address lane 0's element would have.
    pub base: u64,
    /// The lanes that access memory (not 0).
    pub lanes: u64,
}

impl LaneRange {
    /// The address of lane `lane`'s element.
    pub fn address(&self, lane: u32) -> u64 {
        self.base.wrapping_add(lane as u64 * self.bytes as u64)
    }

    /// The accesses `accesses` stand for when they are one range: one access per lane, lanes ascending, all to
    /// [`Space::Global`] or all to [`Space::Flat`], alike in direction and size (at least 1 byte), each lane at
    /// its element. The engines deliver an instruction's accesses as a range exactly when this holds (compiled
    /// code checks the same in [`LaneRange::of_lanes`]).
    pub fn of(accesses: &[LaneAccess]) -> Option<LaneRange> {
        let first = accesses.first()?;
        let (space, dir, bytes) = (first.space, first.dir, first.bytes);
        if accesses.len() > 64 || !matches!(space, Space::Global | Space::Flat) || bytes == 0 {
            return None;
        }
        let base = first.address.wrapping_sub(first.lane as u64 * bytes as u64);
        let r = LaneRange {
            space,
            dir,
            bytes,
            base,
            lanes: 0,
        };
        let mut lanes = 0u64;
        let mut next = 0u32;
        for a in accesses {
            let lane = a.lane as u32;
            if lane < next
                || lane > 63
                || a.space != space
                || a.dir != dir
                || a.bytes != bytes
                || a.address != r.address(lane)
            {
                return None;
            }
            lanes |= 1 << lane;
            next = lane + 1;
        }
        Some(LaneRange { lanes, ..r })
    }

    /// [`LaneRange::of`] for accesses given lane by lane: `lanes` (not 0) each accessing `bytes` at `address(l)`
    /// in device memory, none in private memory (`private(address)` false) — the range those accesses are, or
    /// `None`. Equal to [`LaneRange::of`] of the records they make.
    pub fn of_lanes(
        dir: Dir,
        bytes: u32,
        lanes: u64,
        address: impl Fn(usize) -> u64,
        private: impl Fn(u64) -> bool,
    ) -> Option<LaneRange> {
        if lanes == 0 || bytes == 0 {
            return None;
        }
        let first = lanes.trailing_zeros();
        let base = address(first as usize).wrapping_sub(first as u64 * bytes as u64);
        // every lane checked without an early exit: a loop the compiler turns into vector compares
        let mut off = false;
        for l in 0..64 {
            let a = address(l);
            let want = base.wrapping_add(l as u64 * bytes as u64);
            off |= (lanes >> l & 1 == 1) & ((a != want) | private(a));
        }
        (!off).then_some(LaneRange {
            space: Space::Global,
            dir,
            bytes,
            base,
            lanes,
        })
    }

    /// `n` when the lanes are lanes 0..n.
    pub fn leading(&self) -> Option<u32> {
        (self.lanes & self.lanes.wrapping_add(1) == 0).then(|| self.lanes.count_ones())
    }

    /// Each lane's access, lowest lane first.
    pub fn iter(&self) -> AccessIter<'static> {
        AccessIter::Range(*self, self.lanes)
    }
}

/// The lane accesses of one instruction, in the order it made them: records, or one [`LaneRange`] when they
/// form one ([`LaneRange::of`]). Either form reads as records ([`Accesses::iter`]); equality compares what
/// they stand for, and they serialize as records.
#[derive(Debug, Clone)]
pub enum Accesses<'a> {
    Lanes(Cow<'a, [LaneAccess]>),
    Range(LaneRange),
}

impl Default for Accesses<'_> {
    fn default() -> Self {
        Accesses::NONE
    }
}

impl<'a> Accesses<'a> {
    /// No access.
    pub const NONE: Accesses<'static> = Accesses::Lanes(Cow::Borrowed(&[]));

    /// `accesses` in their compact form: one range when they are one ([`LaneRange::of`]), else borrowed.
    pub fn of(accesses: &'a [LaneAccess]) -> Accesses<'a> {
        match LaneRange::of(accesses) {
            Some(r) => Accesses::Range(r),
            None => Accesses::Lanes(Cow::Borrowed(accesses)),
        }
    }

    /// The range, when the accesses are one.
    pub fn range(&self) -> Option<&LaneRange> {
        match self {
            Accesses::Range(r) => Some(r),
            Accesses::Lanes(_) => None,
        }
    }

    pub fn len(&self) -> usize {
        match self {
            Accesses::Lanes(l) => l.len(),
            Accesses::Range(r) => r.lanes.count_ones() as usize,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Each access as a record, in order.
    pub fn iter(&self) -> AccessIter<'_> {
        match self {
            Accesses::Lanes(l) => AccessIter::Lanes(l.iter()),
            Accesses::Range(r) => r.iter(),
        }
    }

    pub fn first(&self) -> Option<LaneAccess> {
        self.iter().next()
    }

    pub fn to_vec(&self) -> Vec<LaneAccess> {
        self.iter().collect()
    }

    /// The accesses as records: borrowed, or a range's written into `buf`.
    pub fn lanes_in<'b>(&'b self, buf: &'b mut Vec<LaneAccess>) -> &'b [LaneAccess] {
        match self {
            Accesses::Lanes(l) => l,
            Accesses::Range(r) => {
                buf.clear();
                buf.extend(r.iter());
                buf
            }
        }
    }

    /// The same accesses borrowed (a range copied).
    pub fn borrowed(&self) -> Accesses<'_> {
        match self {
            Accesses::Lanes(l) => Accesses::Lanes(Cow::Borrowed(l)),
            Accesses::Range(r) => Accesses::Range(*r),
        }
    }

    pub fn into_owned(self) -> Accesses<'static> {
        match self {
            Accesses::Lanes(l) => Accesses::Lanes(Cow::Owned(l.into_owned())),
            Accesses::Range(r) => Accesses::Range(r),
        }
    }
}

/// The records of [`Accesses::iter`].
#[derive(Debug, Clone)]
pub enum AccessIter<'b> {
    Lanes(std::slice::Iter<'b, LaneAccess>),
    /// The range and its lanes still to come.
    Range(LaneRange, u64),
}

impl Iterator for AccessIter<'_> {
    type Item = LaneAccess;
    fn next(&mut self) -> Option<LaneAccess> {
        match self {
            AccessIter::Lanes(i) => i.next().copied(),
            AccessIter::Range(r, m) => {
                if *m == 0 {
                    return None;
                }
                let lane = m.trailing_zeros();
                *m &= *m - 1;
                Some(LaneAccess {
                    lane: lane as u8,
                    space: r.space,
                    dir: r.dir,
                    bytes: r.bytes,
                    address: r.address(lane),
                })
            }
        }
    }
}

impl PartialEq for Accesses<'_> {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Accesses::Lanes(a), Accesses::Lanes(b)) => a == b,
            (Accesses::Range(a), Accesses::Range(b)) => a == b,
            _ => self.len() == other.len() && self.iter().eq(other.iter()),
        }
    }
}

impl Serialize for Accesses<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter())
    }
}

impl<'de> Deserialize<'de> for Accesses<'_> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Accesses::Lanes(Cow::Owned(Vec::<LaneAccess>::deserialize(d)?)))
    }
}

/// The space an engine records a lane access of `wave` in: a device-memory access inside the wave's private
/// segment is a scratch access (whichever instruction made it).
#[inline]
pub fn space_of(space: Space, address: u64, wave: &crate::wave::WaveState) -> Space {
    let private = wave.private_bytes();
    match space {
        Space::Global if address.wrapping_sub(wave.scratch_base) < private => Space::Scratch,
        s => s,
    }
}

/// `accesses` of `inst` with FLAT device-memory lanes in [`Space::Flat`] and an atomic's lanes as
/// [`Dir::Atomic`]: a range as such, records borrowed when nothing changes, else rewritten into `buf`.
pub fn classify<'b>(inst: &Inst, accesses: &'b Accesses<'_>, buf: &'b mut Vec<LaneAccess>) -> Accesses<'b> {
    match accesses {
        Accesses::Lanes(l) => Accesses::Lanes(Cow::Borrowed(classify_lanes(inst, l, buf))),
        Accesses::Range(r) => {
            let mut r = *r;
            if inst.info.encoding == Encoding::Flat && r.space == Space::Global {
                r.space = Space::Flat;
            }
            if inst.info.mem.dir == MemDir::Atomic {
                r.dir = Dir::Atomic;
            }
            Accesses::Range(r)
        }
    }
}

/// [`classify`] of records.
fn classify_lanes<'b>(inst: &Inst, accesses: &'b [LaneAccess], buf: &'b mut Vec<LaneAccess>) -> &'b [LaneAccess] {
    let flat = inst.info.encoding == Encoding::Flat;
    let atomic = inst.info.mem.dir == MemDir::Atomic;
    if !(flat || atomic) || accesses.is_empty() {
        return accesses;
    }
    buf.clear();
    buf.extend(accesses.iter().map(|a| {
        let mut a = *a;
        if flat && a.space == Space::Global {
            a.space = Space::Flat;
        }
        if atomic {
            a.dir = Dir::Atomic;
        }
        a
    }));
    buf
}

//! Memory-work preparation: what a memory instruction's lanes ask of the memory pipeline and the LDS, worked out
//! from its lane accesses when its block runs (line requests, one contiguous range, LDS bank cycles), and what
//! that costs when it issues (the scalar cache, the vector memory pipeline, the LDS).

use super::*;

/// What a memory instruction's lanes ask of the memory pipeline and the LDS, worked out from its lane
/// accesses when its block ran (while they are fresh in the host's caches): its line requests and the LDS bank
/// cycles of its LDS lanes. The cycles they cost are decided at issue.
#[derive(Debug, Clone, Copy)]
pub(super) struct Work {
    pub(super) lines: Lines,
    /// Its LDS lanes' bank cycles and conflict cycles (summed over rounds), when it has LDS lanes.
    pub(super) banks: Option<(u64, u64)>,
}

/// A memory instruction's line requests.
#[derive(Debug, Clone, Copy)]
pub(super) enum Lines {
    /// `reqs[start..start + len]` of the wave.
    Listed { start: u32, len: u32 },
    /// The L1 lines of the range `[start, end)`, all of one kind: the lanes of a vector memory instruction
    /// access one contiguous range ([`contiguous_range`]). [`range_lines`] makes them at issue.
    Range { start: u64, end: u64, kind: Kind },
}

impl Work {
    pub(super) const NONE: Work = Work {
        lines: Lines::Listed { start: 0, len: 0 },
        banks: None,
    };

    pub(super) fn listed(start: usize, end: usize, banks: Option<(u64, u64)>) -> Work {
        Work {
            lines: Lines::Listed {
                start: start as u32,
                len: (end - start) as u32,
            },
            banks,
        }
    }
}

/// Where the memory pipeline sees a dispatch's addresses: the code object, the kernel arguments and the
/// dispatch packet, which move from one dispatch to the next, at fixed places; a workgroup's private memory at
/// a place of its own by its index in the grid; everything else counted from the start of device memory (so
/// the cycles depend neither on where the host mapped it nor on where earlier dispatches left their code,
/// arguments and packets).
pub(super) struct Places {
    pub(super) arena: u64,
    /// The code, the kernel arguments and the dispatch packet (address, bytes): each at its place in
    /// [`Places::FIXED`].
    pub(super) moving: [(u64, u64); 3],
    /// Private bytes of a full workgroup.
    pub(super) scratch_group: u64,
}

impl Places {
    pub(super) const FIXED: [u64; 3] = [1 << 46, 1 << 46 | 1 << 40, 1 << 46 | 2 << 40];
    pub(super) const SCRATCH: u64 = 1 << 47;

    /// The place of `addr`; `scratch` is (base, linear index) of the workgroup's private memory when the
    /// access is a private one.
    #[inline]
    pub(super) fn of(&self, addr: u64, scratch: Option<(u64, u64)>) -> u64 {
        if let Some((base, linear)) = scratch {
            return Self::SCRATCH + linear * self.scratch_group + addr.wrapping_sub(base);
        }
        for (k, &(base, bytes)) in self.moving.iter().enumerate() {
            if addr.wrapping_sub(base) < bytes {
                return Self::FIXED[k] + (addr - base);
            }
        }
        addr.wrapping_sub(self.arena)
    }

    /// Whether [`Places::of`] maps the `len` bytes from `addr` (outside private memory) as one piece: each at
    /// the place of `addr` plus its offset from it.
    pub(super) fn one_piece(&self, addr: u64, len: u64) -> bool {
        let Some(end) = addr.checked_add(len) else { return false };
        let within = |&(base, bytes): &(u64, u64)| {
            addr.wrapping_sub(base) < bytes && end - addr <= bytes - addr.wrapping_sub(base)
        };
        let overlaps = |&(base, bytes): &(u64, u64)| end > base && addr < base.saturating_add(bytes);
        match self.moving.iter().filter(|r| overlaps(r)).count() {
            0 => true,
            1 => self.moving.iter().any(within),
            _ => false,
        }
    }
}

impl<'a, R: WaveRunner, O: Observer> Model<'a, R, O> {
    /// A scalar memory instruction's lines for the scalar cache, from its lane accesses.
    pub(super) fn scalar_work(&mut self, w: usize, acc: &Accesses<'_>) -> Work {
        let line = self.m.scalar.line_bytes as u64;
        let reqs = &mut self.waves[w].reqs;
        let start = reqs.len();
        for a in acc.iter() {
            let first = self.places.of(a.address, None);
            let end = first + a.bytes as u64;
            let mut l = first & !(line - 1);
            while l < end {
                let bytes = (end.min(l + line) - first.max(l)) as u32;
                let kind = if a.dir == Dir::Read { Kind::Read } else { Kind::Write };
                reqs.push(LineRequest { addr: l, bytes, kind });
                l += line;
            }
        }
        Work::listed(start, reqs.len(), None)
    }

    /// A vector memory instruction's device-memory lanes coalesced into L1 lines (private lanes at their
    /// workgroup's place: `scratch` is its private memory's base and linear index), and the LDS bank cycles
    /// of its FLAT lanes in the shared aperture.
    pub(super) fn vector_work(&mut self, w: usize, accesses: &Accesses<'_>, scratch: Option<(u64, u64)>) -> Work {
        let line = self.m.l1.line_bytes;
        let places = &self.places;
        let (place, one_piece) = (|a| places.of(a, None), |a, n| places.one_piece(a, n));
        let range = match accesses {
            Accesses::Range(r) => contiguous_places(r, place, one_piece, line as u64),
            Accesses::Lanes(l) => contiguous_range(l, place, one_piece, line as u64),
        };
        if let Some((start, end, kind)) = range {
            return Work {
                lines: Lines::Range { start, end, kind },
                banks: None,
            };
        }
        let mut buf = std::mem::take(&mut self.lanes_buf);
        let lanes = accesses.lanes_in(&mut buf);
        let rounds = &mut self.rounds;
        let places = &self.places;
        rounds.fill(
            lanes,
            |a| places.of(a.address, scratch.filter(|_| a.space == Space::Scratch)),
            |a| a.space != Space::Lds,
        );
        let reqs = &mut self.waves[w].reqs;
        let start = reqs.len();
        rounds.lines(line, &mut self.lines, |r, lines| {
            let kind = kind_of(r.dir);
            reqs.extend(lines.iter().map(|l| LineRequest {
                addr: l.line,
                bytes: l.bytes,
                kind,
            }));
        });
        let end = reqs.len();
        rounds.fill(lanes, |a| a.address, |a| a.space == Space::Lds);
        let banks = (!rounds.is_empty()).then(|| rounds.bank_cycles());
        self.lanes_buf = buf;
        Work::listed(start, end, banks)
    }

    /// A DS instruction's bank cycles (none for lane permutes and swizzles, which touch no bank).
    pub(super) fn lds_work(&mut self, accesses: &Accesses<'_>) -> Work {
        let mut buf = std::mem::take(&mut self.lanes_buf);
        let rounds = &mut self.rounds;
        rounds.fill(accesses.lanes_in(&mut buf), |a| a.address, |_| true);
        self.lanes_buf = buf;
        let banks = (!rounds.is_empty()).then(|| rounds.bank_cycles());
        Work { banks, ..Work::NONE }
    }

    /// A scalar memory instruction's trip through the scalar cache (its work: `work`, its lines listed in wave
    /// `w`'s requests); its completion cycle.
    pub(super) fn scalar_memory(&mut self, t: u64, cu: usize, w: usize, work: Work) -> u64 {
        let lines = work.lines;
        let reqs = requests(
            lines,
            &self.waves[w].reqs,
            &mut self.range_reqs,
            self.m.scalar.line_bytes as u64,
        );
        if reqs.is_empty() {
            // s_memtime, s_memrealtime, cache control: the scalar unit answers like a cache hit
            return t + self.m.scalar.hit_latency;
        }
        self.memsys.access_scalar(t, cu as u32, reqs).complete_at
    }

    /// A vector memory instruction: addresses through the texture address unit, its lines to the memory
    /// pipeline, its FLAT lanes in the shared aperture to the LDS; its completion cycle.
    pub(super) fn vector_memory(&mut self, t: u64, cu: usize, w: usize, work: Work, issue: u64) -> u64 {
        let sent = t + issue;
        self.busy.vmem += issue;
        let mut done = sent;
        let mut accepted = sent;
        let Work { lines, banks } = work;
        let reqs = requests(
            lines,
            &self.waves[w].reqs,
            &mut self.range_reqs,
            self.m.l1.line_bytes as u64,
        );
        if !reqs.is_empty() {
            let r = self.memsys.access(sent, cu as u32, reqs);
            done = done.max(r.complete_at);
            accepted = accepted.max(r.accepted_at);
        }
        if let Some(banks) = banks {
            done = done.max(self.lds_banks(t, cu, banks));
        }
        let unit = &mut self.cus[cu];
        unit.vmem_free = unit.vmem_free.max(accepted).max(t + issue);
        done
    }

    /// A DS instruction: its lanes' bank conflicts on the CU's LDS; its completion cycle.
    pub(super) fn lds(&mut self, t: u64, cu: usize, work: Work) -> u64 {
        match work.banks {
            Some(banks) => self.lds_banks(t, cu, banks),
            None => {
                // lane permutes and swizzles pass through the LDS crossbar without touching banks
                let unit = &mut self.cus[cu];
                let cycles = 2;
                unit.lds_free = unit.lds_free.max(t + cycles);
                self.busy.lds += cycles;
                t + self.m.lds.latency + cycles
            }
        }
    }

    /// The LDS busy for `banks` (bank cycles, conflict cycles) from cycle `t`; the completion cycle.
    pub(super) fn lds_banks(&mut self, t: u64, cu: usize, (cycles, conflicts): (u64, u64)) -> u64 {
        self.lds_conflicts += conflicts;
        let cycles = cycles.max(1);
        let unit = &mut self.cus[cu];
        let start = t.max(unit.lds_free);
        unit.lds_free = start + cycles;
        self.busy.lds += cycles;
        start + self.m.lds.latency + cycles
    }
}

/// The range `[start, end)` (at the places `place` gives addresses) and the kind of access of a vector memory
/// instruction whose lanes 0..n each access the `bytes` after the previous one's, outside private memory and
/// the LDS, one access each, alike in size and direction, at most a `line` each; `None` for any other pattern.
/// [`range_lines`] gives its line requests as coalescing lane by lane would. `one_piece(addr, len)` says
/// whether `place` maps the `len` bytes from `addr` as one piece; lanes contiguous in such a piece are
/// contiguous places without each lane's place worked out.
pub(super) fn contiguous_range(
    lanes: &[LaneAccess],
    place: impl Fn(u64) -> u64,
    one_piece: impl Fn(u64, u64) -> bool,
    line: u64,
) -> Option<(u64, u64, Kind)> {
    let first = lanes.first()?;
    let (space, dir, bytes) = (first.space, first.dir, first.bytes as u64);
    if lanes.len() > 64 || matches!(space, Space::Lds | Space::Scratch) || bytes == 0 || bytes > line {
        return None;
    }
    let alike =
        |i: usize, a: &LaneAccess| a.lane as usize == i && a.space == space && a.dir == dir && a.bytes as u64 == bytes;
    let (raw, len) = (first.address, lanes.len() as u64 * bytes);
    let raw_contiguous = || {
        lanes
            .iter()
            .enumerate()
            .all(|(i, a)| alike(i, a) && a.address == raw.wrapping_add(i as u64 * bytes))
    };
    let start = place(raw);
    if !(one_piece(raw, len) && raw_contiguous()) {
        for (i, a) in lanes.iter().enumerate() {
            if !alike(i, a) || place(a.address) != start.wrapping_add(i as u64 * bytes) {
                return None;
            }
        }
    }
    let end = start.checked_add(len)?;
    Some((start, end, kind_of(dir)))
}

/// [`contiguous_range`] of the lanes of `r` (whose device addresses are contiguous already): lanes 0..n at
/// most a `line` each, contiguous at their places too.
pub(super) fn contiguous_places(
    r: &LaneRange,
    place: impl Fn(u64) -> u64,
    one_piece: impl Fn(u64, u64) -> bool,
    line: u64,
) -> Option<(u64, u64, Kind)> {
    let n = r.leading()?;
    let bytes = r.bytes as u64;
    if bytes > line {
        return None;
    }
    let len = n as u64 * bytes;
    let start = place(r.base);
    if !one_piece(r.base, len) && (0..n).any(|i| place(r.address(i)) != start.wrapping_add(i as u64 * bytes)) {
        return None;
    }
    let end = start.checked_add(len)?;
    Some((start, end, kind_of(r.dir)))
}

/// The line requests' kind of an access's direction.
pub(super) fn kind_of(dir: Dir) -> Kind {
    match dir {
        Dir::Read => Kind::Read,
        Dir::Write => Kind::Write,
        Dir::Atomic => Kind::Atomic,
    }
}

/// The line requests of the range `[start, end)` of `kind`, appended to `out`: the `line`-byte lines it
/// covers, as [`coalesce`] finds them for lanes that cover it one after the other (each line once, in address
/// order, with the bytes of the range inside it).
pub(super) fn range_lines(start: u64, end: u64, kind: Kind, line: u64, out: &mut Vec<LineRequest>) {
    let mut l = start & !(line - 1);
    while l < end {
        let next = l.saturating_add(line);
        out.push(LineRequest {
            addr: l,
            bytes: (next.min(end) - l.max(start)) as u32,
            kind,
        });
        l = next;
    }
}

/// The line requests `lines` stands for: listed in `reqs` (a wave's), or made into `scratch` (`line`-byte lines).
#[inline(always)]
pub(super) fn requests<'a>(
    lines: Lines,
    reqs: &'a [LineRequest],
    scratch: &'a mut Vec<LineRequest>,
    line: u64,
) -> &'a [LineRequest] {
    match lines {
        Lines::Listed { start, len } => &reqs[start as usize..(start + len) as usize],
        Lines::Range { start, end, kind } => {
            scratch.clear();
            range_lines(start, end, kind, line, scratch);
            scratch
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn coalesced(lanes: &[LaneAccess], line: u32) -> Vec<LineRequest> {
        let mut rounds = Rounds::new();
        rounds.fill(lanes, |a| a.address, |a| a.space != Space::Lds);
        let mut out = Vec::new();
        rounds.lines(line, &mut Vec::new(), |r, lines| {
            let kind = kind_of(r.dir);
            out.extend(lines.iter().map(|l| LineRequest {
                addr: l.line,
                bytes: l.bytes,
                kind,
            }));
        });
        out
    }

    #[test]
    fn places_map_a_range_as_one_piece_only_inside_one_region() {
        let places = Places {
            arena: 0x1000,
            moving: [(0x5000, 0x100), (0x6000, 0x40), (0x7000, 0x40)],
            scratch_group: 0,
        };
        let cases = [
            ((0x5000, 0x100), true),
            ((0x5010, 0x10), true),
            ((0x4ff0, 0x20), false),
            ((0x50f0, 0x20), false),
            ((0x2000, 0x100), true),
            ((0x6000, 0x40), true),
            ((0x5f00, 0x200), false),
            ((0x7000, 0x40), true),
            ((0x7020, 0x40), false),
            ((0x6fc0, 0x40), true),
            ((u64::MAX - 4, 8), false),
        ];
        for ((addr, len), one) in cases {
            assert_eq!(places.one_piece(addr, len), one, "{len:#x} bytes from {addr:#x}");
            if one {
                let first = places.of(addr, None);
                assert!(
                    (0..len).all(|k| places.of(addr + k, None) == first + k),
                    "{len:#x} bytes from {addr:#x}"
                );
            }
        }
    }

    #[test]
    fn contiguous_lanes_give_the_lines_coalescing_gives() {
        let mut seen = 0;
        for line in [64u32, 128] {
            for bytes in [1u32, 2, 4, 8, 12, 16] {
                for n in [1usize, 2, 7, 31, 32, 63, 64] {
                    for offset in [0u64, 1, 4, 12, 60, 62, 124] {
                        for dir in [Dir::Read, Dir::Write, Dir::Atomic] {
                            let base = 0x10_0000 + offset;
                            let lanes: Vec<LaneAccess> = (0..n)
                                .map(|i| LaneAccess {
                                    lane: i as u8,
                                    space: Space::Global,
                                    dir,
                                    bytes,
                                    address: base + i as u64 * bytes as u64,
                                })
                                .collect();
                            let range = LaneRange::of(&lanes).expect("one range");
                            for one_piece in [true, false] {
                                let mut fast = Vec::new();
                                let (start, end, kind) =
                                    contiguous_range(&lanes, |a| a, |_, _| one_piece, line as u64).expect("contiguous");
                                range_lines(start, end, kind, line as u64, &mut fast);
                                assert_eq!(
                                    fast,
                                    coalesced(&lanes, line),
                                    "line {line}, {bytes} bytes x {n} lanes from {base:#x}"
                                );
                                // the range the engines deliver for these lanes finds the same
                                assert_eq!(
                                    contiguous_places(&range, |a| a, |_, _| one_piece, line as u64),
                                    Some((start, end, kind))
                                );
                            }
                            // a lane missing, or lanes that are contiguous only in device memory, not at their places
                            if n > 1 {
                                let without_lane_0 = LaneRange {
                                    lanes: range.lanes & !1,
                                    ..range
                                };
                                assert_eq!(
                                    contiguous_places(&without_lane_0, |a| a, |_, _| true, line as u64),
                                    None
                                );
                            }
                            let place = |a: u64| if a >= base + bytes as u64 { a + 4096 } else { a };
                            assert_eq!(
                                contiguous_places(&range, place, |_, _| false, line as u64).is_some(),
                                n == 1
                            );
                            seen += 1;
                        }
                    }
                }
            }
        }
        assert!(seen > 1000);
        // anything else takes the general path
        let lane = |i: u8, address: u64| LaneAccess {
            lane: i,
            space: Space::Global,
            dir: Dir::Read,
            bytes: 4,
            address,
        };
        assert!(
            contiguous_range(&[lane(0, 0x100), lane(1, 0x108)], |a| a, |_, _| true, 64).is_none(),
            "a gap"
        );
        assert!(
            contiguous_range(&[lane(1, 0x100), lane(2, 0x104)], |a| a, |_, _| true, 64).is_none(),
            "lane 0 inactive"
        );
        assert!(
            contiguous_range(&[lane(0, 0x104), lane(1, 0x100)], |a| a, |_, _| true, 64).is_none(),
            "descending"
        );
        let scratch = LaneAccess {
            space: Space::Scratch,
            ..lane(0, 0x100)
        };
        assert!(
            contiguous_range(&[scratch], |a| a, |_, _| true, 64).is_none(),
            "private memory has places of its own"
        );
        assert!(
            contiguous_range(
                &[
                    lane(0, 0x100),
                    LaneAccess {
                        dir: Dir::Write,
                        ..lane(1, 0x104)
                    }
                ],
                |a| a,
                |_, _| true,
                64
            )
            .is_none(),
            "mixed directions"
        );
        // lanes that are contiguous only at their places, across two pieces of the map
        let place = |a: u64| if a >= 0x1000 { a - 0x1000 + 0x104 } else { a };
        let across = [lane(0, 0x100), lane(1, 0x1000)];
        assert_eq!(
            contiguous_range(&across, place, |a, n| a + n <= 0x1000, 64),
            Some((0x100, 0x108, Kind::Read))
        );
        assert!(contiguous_range(&[lane(0, 0x100), lane(1, 0x104)], |a| a, |_, _| true, 64).is_some());
    }
}

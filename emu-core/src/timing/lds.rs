//! LDS bank conflicts of one wave instruction.
//!
//! The LDS has 32 banks of 4 bytes; dword `d` of the LDS lives in bank `d % 32` (ROCm docs, 'Pipeline
//! descriptions': 32 banks, 4 bytes wide, each read or written every cycle, 128 B/clock). The hardware splits a
//! wave64 access into phases and checks each phase for conflicts; which lanes share a phase depends on the
//! access width:
//!
//! - up to 4 bytes per lane: two phases, lanes 0–31 and 32–63 ("Bank conflicts are determined by what
//!   addresses are accessed on each half wavefront boundary": AMD Accelerated Parallel Processing OpenCL
//!   Optimization Guide, LDS optimization section);
//! - 8 bytes: four phases of 16 lanes (the same guide: 64-bit accesses should be conflict-free within a
//!   quarter wavefront);
//! - 12 and 16 bytes: eight phases of 8 lanes; writes in lane order (0–7, 8–15, ...), `ds_read_b128` in
//!   the groups 0–3+20–23, 4–7+16–19, 8–11+28–31, 12–15+24–27 and the same plus 32 (Composable Kernel
//!   docs, 'Understanding AMD GPU LDS and Bank Conflicts').
//!
//! A phase takes as many cycles as the most dwords any one bank must deliver; lanes reading the same dword
//! share it (broadcast), so they cost nothing extra. An ideal phase takes one cycle; the extra cycles are what
//! SQ_LDS_BANK_CONFLICT counts. Phases without active lanes are skipped.
//!
//! Not modeled: atomics to the same address (address conflicts, serialized in hardware), the input port's
//! data+address sharing (rocprofiler-compute: a wave64 4-byte store takes 8 cycles on the port), and
//! contention between the two SIMD pairs.

/// Cycles of one LDS instruction's bank accesses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LdsCycles {
    /// Cycles the banks are busy with this instruction.
    pub cycles: u32,
    /// Cycles beyond one per active phase (SQ_LDS_BANK_CONFLICT).
    pub conflict_cycles: u32,
}

/// `ds_read_b128` phase groups (Composable Kernel docs): lanes `4g..4g+4` with a partner quad.
const READ_B128_PARTNER: [u32; 8] = [20, 16, 28, 24, 52, 48, 60, 56];

/// Bank cycles of an LDS access: `addrs[lane]` is the lane's byte address in LDS, `exec` the active lanes,
/// `bytes` the access size per lane (1, 2, 4, 8, 12 or 16), `read` whether it is a read (only
/// `ds_read_b96/b128` group lanes differently from writes).
pub fn bank_cycles(addrs: &[u32], exec: u64, bytes: u32, read: bool) -> LdsCycles {
    debug_assert!(addrs.len() <= 64);
    let dwords_per_lane = bytes.div_ceil(4).max(1);
    let (phases, lanes_per_phase) = match dwords_per_lane {
        1 => (2, 32),
        2 => (4, 16),
        _ => (8, 8),
    };
    let mut out = LdsCycles::default();
    let exec = if addrs.len() >= 64 {
        exec
    } else {
        exec & ((1u64 << addrs.len()) - 1)
    };
    let group_mask = (1u64 << lanes_per_phase) - 1;
    // Dword addresses of one phase: at most 8 lanes x 4 dwords, 16 x 2 or 32 x 1 = 32.
    let mut dw = [0u32; 32];
    for p in 0..phases {
        let mut lanes = if lanes_per_phase == 8 && read {
            let quad = 0xfu64;
            (exec >> (4 * p) & quad) | (exec >> READ_B128_PARTNER[p as usize] & quad) << 4
        } else {
            exec >> (p * lanes_per_phase) & group_mask
        };
        if lanes == 0 {
            continue;
        }
        let mut n = 0usize;
        let mut banks = 0u32;
        while lanes != 0 {
            let l = lanes.trailing_zeros();
            lanes &= lanes - 1;
            let lane = if lanes_per_phase == 8 && read {
                if l < 4 {
                    4 * p + l
                } else {
                    READ_B128_PARTNER[p as usize] + l - 4
                }
            } else {
                p * lanes_per_phase + l
            };
            let d0 = addrs[lane as usize] / 4;
            for k in 0..dwords_per_lane {
                dw[n] = d0 + k;
                banks |= 1 << ((d0 + k) % 32);
                n += 1;
            }
        }
        // Fastest path: every dword in a bank of its own.
        if banks.count_ones() as usize == n {
            out.cycles += 1;
            continue;
        }
        // Fast path: every bank asked for at most one distinct dword (conflict-free, broadcasts allowed).
        let mut used = 0u32;
        let mut held = [0u32; 32];
        let mut conflict = false;
        for &d in &dw[..n] {
            let b = (d % 32) as usize;
            if used >> b & 1 == 0 {
                used |= 1 << b;
                held[b] = d;
            } else if held[b] != d {
                conflict = true;
                break;
            }
        }
        let c = if !conflict {
            1
        } else {
            let ds = &mut dw[..n];
            ds.sort_unstable();
            let mut per_bank = [0u32; 32];
            let mut prev = u32::MAX;
            for &d in ds.iter() {
                if d != prev {
                    per_bank[(d % 32) as usize] += 1;
                    prev = d;
                }
            }
            per_bank.iter().copied().max().unwrap_or(1).max(1)
        };
        out.cycles += c;
        out.conflict_cycles += c - 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lanes(f: impl Fn(u32) -> u32) -> Vec<u32> {
        (0..64).map(f).collect()
    }

    #[test]
    fn stride_one_dwords_are_conflict_free_in_two_cycles() {
        let c = bank_cycles(&lanes(|i| 4 * i), u64::MAX, 4, true);
        assert_eq!(
            c,
            LdsCycles {
                cycles: 2,
                conflict_cycles: 0
            }
        );
    }

    #[test]
    fn stride_32_dwords_put_every_lane_of_a_half_in_one_bank() {
        // 32-way conflict in each half: 32 cycles per half.
        let c = bank_cycles(&lanes(|i| 128 * i), u64::MAX, 4, true);
        assert_eq!(
            c,
            LdsCycles {
                cycles: 64,
                conflict_cycles: 62
            }
        );
        // Stride 2 dwords: two lanes per bank in each half.
        let c = bank_cycles(&lanes(|i| 8 * i), u64::MAX, 4, false);
        assert_eq!(
            c,
            LdsCycles {
                cycles: 4,
                conflict_cycles: 2
            }
        );
    }

    #[test]
    fn all_lanes_reading_one_address_broadcast_for_free() {
        let c = bank_cycles(&lanes(|_| 256), u64::MAX, 4, true);
        assert_eq!(
            c,
            LdsCycles {
                cycles: 2,
                conflict_cycles: 0
            }
        );
    }

    #[test]
    fn wider_accesses_take_more_phases() {
        // ds_read_b64 at consecutive addresses: 4 phases of 16 lanes x 2 dwords = 32 banks each.
        assert_eq!(
            bank_cycles(&lanes(|i| 8 * i), u64::MAX, 8, true),
            LdsCycles {
                cycles: 4,
                conflict_cycles: 0
            }
        );
        // ds_write_b128 at consecutive addresses: 8 phases of 8 lanes x 4 dwords.
        assert_eq!(
            bank_cycles(&lanes(|i| 16 * i), u64::MAX, 16, false),
            LdsCycles {
                cycles: 8,
                conflict_cycles: 0
            }
        );
        // ds_read_b128 at consecutive addresses is conflict-free in its lane groups too.
        assert_eq!(
            bank_cycles(&lanes(|i| 16 * i), u64::MAX, 16, true),
            LdsCycles {
                cycles: 8,
                conflict_cycles: 0
            }
        );
        // A column read (stride 64 bytes): in a read group, lanes 0-3 hit banks 0-3,16-19,0-3,16-19 -> 2-way.
        let c = bank_cycles(&lanes(|i| 64 * i), u64::MAX, 16, true);
        assert!(c.conflict_cycles > 0, "{c:?}");
    }

    #[test]
    fn inactive_lanes_and_empty_phases_cost_nothing() {
        assert_eq!(bank_cycles(&lanes(|i| 128 * i), 0, 4, true), LdsCycles::default());
        // Only lanes 0 and 1 active, both in bank 0: 2 cycles, one of them a conflict.
        assert_eq!(
            bank_cycles(&lanes(|i| 128 * i), 0b11, 4, true),
            LdsCycles {
                cycles: 2,
                conflict_cycles: 1
            }
        );
    }
}

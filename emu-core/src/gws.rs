//! Global wave sync (GWS) semaphores: the 64 resources a dispatch's waves count on with `ds_gws_init`,
//! `ds_gws_sema_v`, `ds_gws_sema_br`, `ds_gws_sema_p` and `ds_gws_sema_release_all`, across workgroups.
//!
//! The semantics are those of the DS chapter of AMD's CDNA2 and CDNA3 ISA guides (section 11.4, GWS
//! programming restrictions, and the GWS instructions' definitions in 12.12):
//! - every GWS instruction works on one lane, the first active one, and on one resource, whose id is
//!   `rid[5:0] = gds_base[5:0] + offset0[5:0]`, where `gds_base` is M0[21:16] (M0[31:16] holds
//!   `{10'0, gds_base[5:0]}` for GWS, the guide's M0 table for DS instructions). LLVM says the same:
//!   "The resource id offset is computed as (<isa opaque base> + M0[21:16] + offset field) % 64"
//!   (`AMDGPUDAGToDAGISel::SelectDS_GWS`), and it sets M0 to `id << 16` with offset 0 for an id in a
//!   register, M0 = 0 and the offset field for a constant one. The opaque base is 0 here: the dispatch owns
//!   all 64 resources.
//! - `ds_gws_init`: the resource's counter becomes the data VGPR's value (first active lane);
//! - `ds_gws_sema_v`: counter + 1; `ds_gws_sema_br` (bulk release): counter + the data VGPR's value;
//! - `ds_gws_sema_p`: the wave is queued until the counter is non-zero, then takes one (counter − 1);
//! - `ds_gws_sema_release_all`: the counter becomes the number of waves queued at `ds_gws_sema_p` on the
//!   resource, which releases every one of them (and leaves the counter 0 when none is queued, as the guide's
//!   pseudo-code sets it rather than adds to it).
//!
//! A wave reaching one of these stops its turn ([`crate::sem`] gives `Flow::Barrier` with
//! [`WaveState::sema`] set) and the scheduler of the cooperative dispatch ([`crate::engine`]'s `round`)
//! carries the request out at once, in the order waves reach them, so both engines give the same results. A
//! wave waiting at `ds_gws_sema_p` is not run until a `v`, `br`, `release_all` or `init` on its resource
//! lets it go (queued waves go first in arrival order); if every wave waits and none can be released, the
//! dispatch ends with an error naming the resources and their counts ([`Semaphores::deadlock`]).
//! Counters wrap at 32 bits; the barrier (`ds_gws_barrier`) keeps its own count and is not affected by
//! these counters.

use std::collections::VecDeque;

use crate::engine::Group;
use crate::wave::{WaveState, WaveStatus};

/// Resources of a dispatch.
pub const RESOURCES: usize = 64;

/// The resource a GWS instruction works on: (M0[21:16] + offset0[5:0]) mod 64 (see the module doc).
pub fn resource_id(m0: u32, offset0: u32) -> u32 {
    ((m0 >> 16) + (offset0 & 63)) & 63
}

/// What a global wave sync semaphore instruction does to its resource's counter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SemaOp {
    /// `ds_gws_init`: the counter becomes the value.
    Init(u32),
    /// `ds_gws_sema_v`: counter + 1.
    V,
    /// `ds_gws_sema_br`: counter + the value.
    Br(u32),
    /// `ds_gws_sema_p`: wait for a non-zero counter, then counter − 1.
    P,
    /// `ds_gws_sema_release_all`: the counter becomes the number of waves waiting at `P`.
    ReleaseAll,
}

impl SemaOp {
    pub fn mnemonic(self) -> &'static str {
        match self {
            SemaOp::Init(_) => "ds_gws_init",
            SemaOp::V => "ds_gws_sema_v",
            SemaOp::Br(_) => "ds_gws_sema_br",
            SemaOp::P => "ds_gws_sema_p",
            SemaOp::ReleaseAll => "ds_gws_sema_release_all",
        }
    }
}

/// A wave's request to the dispatch's resources ([`WaveState::sema`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SemaRequest {
    pub op: SemaOp,
    /// 0..64.
    pub resource: u32,
}

/// The semaphore state of one dispatch: a counter per resource and the waves queued at `ds_gws_sema_p` on
/// it, as (workgroup index in the scheduler's slice, wave index). Invariant: a resource with waves queued has
/// counter 0.
pub struct Semaphores {
    count: [u32; RESOURCES],
    queued: [VecDeque<(usize, usize)>; RESOURCES],
}

impl Default for Semaphores {
    fn default() -> Self {
        Semaphores {
            count: [0; RESOURCES],
            queued: std::array::from_fn(|_| VecDeque::new()),
        }
    }
}

fn resume(w: &mut WaveState) {
    w.sema = None;
    w.status = WaveStatus::Running;
}

impl Semaphores {
    /// Carries out the request of wave `at` (workgroup, wave) of `groups`, which has just stopped at it:
    /// the wave goes on (`Running`) unless it is a `ds_gws_sema_p` that has to wait; waves the request lets
    /// go are `Running` again. Nothing happens for a wave without a request.
    pub fn serve(&mut self, groups: &mut [Group], at: (usize, usize)) {
        let w = &mut groups[at.0].waves[at.1];
        let Some(SemaRequest { op, resource }) = w.sema else {
            return;
        };
        let r = resource as usize % RESOURCES;
        match op {
            SemaOp::P if self.count[r] > 0 => self.count[r] -= 1,
            SemaOp::P => {
                self.queued[r].push_back(at);
                return;
            }
            SemaOp::Init(v) => self.count[r] = v,
            SemaOp::V => self.count[r] = self.count[r].wrapping_add(1),
            SemaOp::Br(v) => self.count[r] = self.count[r].wrapping_add(v),
            SemaOp::ReleaseAll => self.count[r] = self.queued[r].len() as u32,
        }
        resume(w);
        while self.count[r] > 0 {
            let Some((g, wi)) = self.queued[r].pop_front() else {
                break;
            };
            self.count[r] -= 1;
            resume(&mut groups[g].waves[wi]);
        }
    }

    /// Waves queued at `ds_gws_sema_p`, over all resources.
    pub fn waiting(&self) -> usize {
        self.queued.iter().map(VecDeque::len).sum()
    }

    /// What holds the waves queued at `ds_gws_sema_p` when nothing can release them: per resource, its
    /// counter, how many wait and (the first few of) their workgroups.
    pub fn deadlock(&self, groups: &[Group]) -> String {
        let mut parts = Vec::new();
        for (r, q) in self.queued.iter().enumerate().filter(|(_, q)| !q.is_empty()) {
            let wgs: Vec<String> = q
                .iter()
                .take(4)
                .map(|&(g, w)| format!("{:?} wave {w}", groups[g].wg))
                .collect();
            let more = if q.len() > 4 {
                format!(" and {} more", q.len() - 4)
            } else {
                String::new()
            };
            parts.push(format!(
                "resource {r}: {} wave(s) wait at ds_gws_sema_p with its count at {} (workgroup {}{more})",
                q.len(),
                self.count[r],
                wgs.join(", workgroup ")
            ));
        }
        parts.join("; ")
    }
}

/// Outside a cooperative launch (the workgroups need not all be resident) only `ds_gws_init` can go on: it
/// sets a counter nothing can use, so the wave resumes. Any other request of `waves` is an error naming the
/// instruction. Returns whether a wave resumed.
pub fn outside_cooperative(wg: [u32; 3], waves: &mut [WaveState]) -> Result<bool, String> {
    let mut resumed = false;
    for w in waves.iter_mut() {
        match w.sema {
            Some(SemaRequest { op: SemaOp::Init(_), .. }) => {
                resume(w);
                resumed = true;
            }
            Some(SemaRequest { op, resource }) => {
                return Err(format!(
                    "workgroup {wg:?} reached {} (global wave sync semaphore, resource {resource}) outside a cooperative launch",
                    op.mnemonic()
                ))
            }
            None => {}
        }
    }
    Ok(resumed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn groups(n: usize) -> Vec<Group> {
        (0..n)
            .map(|i| Group {
                wg: [i as u32, 0, 0],
                waves: vec![WaveState::new(0, 1, 0)],
                lds: Vec::new(),
                scratch: None,
            })
            .collect()
    }

    fn ask(groups: &mut [Group], s: &mut Semaphores, g: usize, op: SemaOp, resource: u32) {
        let w = &mut groups[g].waves[0];
        w.sema = Some(SemaRequest { op, resource });
        w.status = WaveStatus::AtBarrier;
        s.serve(groups, (g, 0));
    }

    fn running(groups: &[Group]) -> Vec<bool> {
        groups
            .iter()
            .map(|g| g.waves[0].status == WaveStatus::Running && g.waves[0].sema.is_none())
            .collect()
    }

    #[test]
    fn the_resource_id_is_m0_bits_21_to_16_plus_offset0_bits_5_to_0_modulo_64() {
        assert_eq!(resource_id(0, 63), 63);
        assert_eq!(resource_id(5 << 16, 0), 5);
        assert_eq!(resource_id(60 << 16, 7), 3);
        // M0[15:0] and bits above 21 do not count, nor offset0 above bit 5
        assert_eq!(resource_id(0xffc0_ffff | 2 << 16, 0x41), 3);
    }

    #[test]
    fn sema_p_waits_for_a_count_and_waiters_go_in_arrival_order() {
        let (mut g, mut s) = (groups(4), Semaphores::default());
        ask(&mut g, &mut s, 2, SemaOp::P, 7);
        ask(&mut g, &mut s, 1, SemaOp::P, 7);
        assert_eq!(running(&g), [true, false, false, true]);
        assert_eq!(s.waiting(), 2);
        ask(&mut g, &mut s, 0, SemaOp::V, 7);
        assert_eq!(running(&g), [true, false, true, true], "the first to wait goes first");
        ask(&mut g, &mut s, 3, SemaOp::Br(3), 7);
        assert_eq!(running(&g), [true; 4]);
        // two of the three left: a P goes on at once
        ask(&mut g, &mut s, 0, SemaOp::P, 7);
        assert_eq!(running(&g), [true; 4]);
        assert_eq!(s.count[7], 1);
    }

    #[test]
    fn release_all_sets_the_count_to_the_waves_waiting_and_init_sets_it_to_the_value() {
        let (mut g, mut s) = (groups(4), Semaphores::default());
        ask(&mut g, &mut s, 0, SemaOp::Init(5), 1);
        assert_eq!(s.count[1], 5);
        // with nobody waiting the count becomes 0 (the guide's pseudo-code sets it)
        ask(&mut g, &mut s, 0, SemaOp::ReleaseAll, 1);
        assert_eq!(s.count[1], 0);
        ask(&mut g, &mut s, 1, SemaOp::P, 1);
        ask(&mut g, &mut s, 2, SemaOp::P, 1);
        ask(&mut g, &mut s, 3, SemaOp::P, 2);
        assert_eq!(s.waiting(), 3);
        let text = s.deadlock(&g);
        assert!(text.contains("resource 1: 2 wave(s) wait at ds_gws_sema_p with its count at 0 (workgroup [1, 0, 0] wave 0, workgroup [2, 0, 0] wave 0)"), "{text}");
        assert!(text.contains("resource 2: 1 wave(s)"), "{text}");
        ask(&mut g, &mut s, 0, SemaOp::ReleaseAll, 1);
        assert_eq!(running(&g), [true, true, true, false], "only resource 1's waves");
        assert_eq!(s.count[1], 0);
        ask(&mut g, &mut s, 0, SemaOp::Init(1), 2);
        assert_eq!(running(&g), [true; 4]);
        assert_eq!(s.count[2], 0);
    }

    #[test]
    fn outside_a_cooperative_launch_init_goes_on_and_a_semaphore_is_an_error_naming_it() {
        let mut g = groups(2);
        g[0].waves[0].sema = Some(SemaRequest {
            op: SemaOp::Init(3),
            resource: 4,
        });
        g[0].waves[0].status = WaveStatus::AtBarrier;
        assert_eq!(outside_cooperative([0, 0, 0], &mut g[0].waves), Ok(true));
        assert_eq!(running(&g), [true, true]);
        g[1].waves[0].sema = Some(SemaRequest {
            op: SemaOp::Br(2),
            resource: 9,
        });
        assert_eq!(
            outside_cooperative([1, 0, 0], &mut g[1].waves).unwrap_err(),
            "workgroup [1, 0, 0] reached ds_gws_sema_br (global wave sync semaphore, resource 9) outside a cooperative launch"
        );
    }
}

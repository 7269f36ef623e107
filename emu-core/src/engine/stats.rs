//! What a dispatch did ([`RunStats`]), and where its first slack access happened ([`SlackReport`]).

use super::Group;

/// What a dispatch did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunStats {
    pub workgroups: u64,
    pub waves: u64,
    pub wave_instructions: u64,
    /// Modeled shader-clock cycles of the dispatch (timing mode).
    pub cycles: Option<u64>,
    /// Lane accesses outside their allocation's bytes but inside its pages, which a GPU lets through
    /// ([`crate::memory::DeviceMemory::check_guest`]; none in memcheck mode).
    pub slack: u64,
    /// The first of them in dispatch order: lowest workgroup, then wave, then the wave's first.
    pub first_slack: Option<Box<SlackReport>>,
}

impl RunStats {
    /// Adds `other`'s counts (a later part of the same dispatch) to these.
    pub fn add(&mut self, other: RunStats) {
        self.workgroups += other.workgroups;
        self.waves += other.waves;
        self.wave_instructions += other.wave_instructions;
        self.slack += other.slack;
        self.first_slack = self.first_slack.take().or(other.first_slack);
    }

    /// Whether `other` equals these statistics but for the PC of the first slack access (a dispatch that loads
    /// its code anew has it at another address).
    pub fn same_but_code_address(&self, other: &RunStats) -> bool {
        let placed = |s: &RunStats| {
            let mut s = s.clone();
            if let Some(f) = s.first_slack.as_mut() {
                f.pc = 0;
            }
            s
        };
        placed(self) == placed(other)
    }

    /// The warning a dispatch with slack accesses gets: how many, and the first.
    pub fn slack_warning(&self) -> Option<String> {
        let first = self.first_slack.as_ref()?;
        let n = self.slack;
        Some(format!(
            "{n} access{} past the end of {}, inside {} last page{}; the first: {first}",
            if n == 1 { "" } else { "es" },
            if n == 1 { "an allocation" } else { "allocations" },
            if n == 1 { "its" } else { "their" },
            if n == 1 { "" } else { "s" },
        ))
    }
}

/// Where a dispatch's first slack access happened, and what it did: a fault report's fields, for a warning.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlackReport {
    pub kernel: String,
    pub workgroup: [u32; 3],
    pub wave: u32,
    pub pc: u64,
    /// The instruction's text.
    pub text: String,
    pub mnemonic: &'static str,
    /// The lane (`None`: a scalar access).
    pub lane: Option<u32>,
    pub slack: crate::memory::Slack,
}

impl std::fmt::Display for SlackReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let SlackReport {
            kernel,
            workgroup,
            wave,
            pc,
            text,
            mnemonic,
            lane,
            slack,
        } = self;
        let lane = lane.map(|l| format!("lane {l}: ")).unwrap_or_default();
        let verb = if slack.access == crate::memory::Access::Read {
            "reads"
        } else {
            "writes"
        };
        write!(
            f,
            "kernel {kernel}, workgroup {workgroup:?}, wave {wave}, pc {pc:#x} (`{text}`): {mnemonic}: {lane}{slack}; the GPU {verb} the allocation's last page, so the dispatch went on; --memcheck stops at such accesses"
        )
    }
}

/// What workgroup `g`'s waves did, once they have all ended (a functional dispatch: no cycles).
pub(super) fn group_stats(kernel: &str, g: &Group) -> RunStats {
    let (slack, first_slack) = group_slack(kernel, g);
    RunStats {
        workgroups: 1,
        waves: g.waves.len() as u64,
        wave_instructions: g.waves.iter().map(|w| w.executed).sum(),
        cycles: None,
        slack,
        first_slack,
    }
}

/// The slack accesses of workgroup `g`'s waves: how many, and the first in wave order.
pub(super) fn group_slack(kernel: &str, g: &Group) -> (u64, Option<Box<SlackReport>>) {
    let count = g.waves.iter().map(|w| w.slack.count).sum();
    let first = g.waves.iter().enumerate().find_map(|(i, w)| {
        let f = w.slack.first.as_deref()?;
        let (pc, text) = f.at.clone().unwrap_or_default();
        Some(Box::new(SlackReport {
            kernel: kernel.to_string(),
            workgroup: g.wg,
            wave: i as u32,
            pc,
            text,
            mnemonic: f.mnemonic,
            lane: f.lane,
            slack: f.slack.clone(),
        }))
    });
    (count, first)
}

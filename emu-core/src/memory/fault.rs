//! Fault diagnosis: where an address that missed lies relative to the allocations around it.

use super::table::{Allocation, State};
use super::{Access, DeviceMemory, Slack};

impl DeviceMemory {
    /// What a [`Within::Pages`](super::Within::Pages) access did: how far past its allocation's end it reaches.
    pub fn slack(&self, access: Access, address: u64, len: u64) -> Slack {
        let off = address.wrapping_sub(self.base);
        let st = self.state.read().unwrap_or_else(|e| e.into_inner());
        let location = match st.allocs.range(..=off).next_back() {
            Some((&start, a)) => {
                let past = (off + len).saturating_sub(start + a.size);
                format!(
                    "{} past the end of the {}-byte {} at {:#x} ({})",
                    if past == 1 {
                        "1 byte".to_string()
                    } else {
                        format!("{past} bytes")
                    },
                    a.size,
                    a.kind,
                    self.base + start,
                    a.label
                )
            }
            None => "outside every allocation".to_string(),
        };
        Slack {
            access,
            address,
            len,
            location,
        }
    }

    /// Where an offset outside every allocation lies: relative to the nearest allocation on either side.
    pub(super) fn describe_gap(&self, st: &State, off: u64) -> String {
        let before = st.allocs.range(..=off).next_back();
        let after = st.allocs.range(off + 1..).next();
        let dist_before = before.map(|(&s, a)| off - (s + a.size));
        let dist_after = after.map(|(&s, _)| s - off);
        let state = |a: &Allocation| if a.live { "" } else { " (freed)" };
        match (before, after) {
            (Some((&s, a)), _) if dist_after.is_none_or(|d| dist_before.unwrap_or(u64::MAX) < d) => format!(
                "{} past the end of the {}-byte {} at {:#x} ({}){}",
                match dist_before.unwrap_or(0) {
                    0 => "just".to_string(),
                    1 => "1 byte".to_string(),
                    d => format!("{d} bytes"),
                },
                a.size,
                a.kind,
                self.base + s,
                a.label,
                state(a)
            ),
            (_, Some((&s, a))) => format!(
                "{} bytes before the {}-byte {} at {:#x} ({}){}",
                dist_after.unwrap_or(0),
                a.size,
                a.kind,
                self.base + s,
                a.label,
                state(a)
            ),
            _ => "not inside any allocation (nothing is allocated)".to_string(),
        }
    }

    /// Where an address outside the arena and every mapped host range lies: near a mapped range (within 1 MiB
    /// of it: an overrun of a buffer an emulated driver mapped), relative to it; otherwise outside device
    /// memory.
    pub(super) fn describe_host_gap(&self, st: &State, address: u64) -> String {
        const NEAR: u64 = 1 << 20;
        let before = st
            .host
            .range(..=address)
            .next_back()
            .map(|(&s, h)| (address - (s + h.len), s, h))
            .filter(|(d, _, _)| *d < NEAR);
        let after = st
            .host
            .range(address.saturating_add(1)..)
            .next()
            .map(|(&s, h)| (s - address, s, h))
            .filter(|(d, _, _)| *d < NEAR);
        let bytes = |d: u64| match d {
            0 => "just".to_string(),
            1 => "1 byte".to_string(),
            d => format!("{d} bytes"),
        };
        let past = before.map(|(d, s, h)| {
            format!(
                "{} past the end of the {}-byte {} mapped at {s:#x}",
                bytes(d),
                h.len,
                h.label
            )
        });
        let ahead =
            after.map(|(d, s, h)| format!("{} before the {}-byte {} mapped at {s:#x}", bytes(d), h.len, h.label));
        match (past, ahead) {
            (Some(p), Some(a)) => format!("outside device memory: {p} and {a}"),
            (Some(one), None) | (None, Some(one)) => format!("outside device memory: {one}"),
            (None, None) => "outside device memory".to_string(),
        }
    }
}

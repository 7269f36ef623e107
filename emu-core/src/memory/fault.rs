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
                format!("{} past the end of the {}", bytes(past), self.name(start, a))
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

    /// Where an offset outside every allocation lies: relative to the nearest allocation on each side, the
    /// nearer first ("12 bytes past the end of the 400-byte allocation at 0x… (a) and 7780 bytes before the
    /// 64-byte kernarg segment at 0x… (kernarg)"). Freed allocations count, marked "(freed)".
    pub(super) fn describe_gap(&self, st: &State, off: u64) -> String {
        let below = st.allocs.range(..=off).next_back().map(|(&s, a)| {
            let d = off - (s + a.size);
            let distance = match d {
                0 => "just".to_string(),
                d => bytes(d),
            };
            (
                d,
                format!("{distance} past the end of the {}{}", self.name(s, a), freed(a)),
            )
        });
        let above = st.allocs.range(off + 1..).next().map(|(&s, a)| {
            (
                s - off,
                format!("{} before the {}{}", bytes(s - off), self.name(s, a), freed(a)),
            )
        });
        match (below, above) {
            (Some((db, b)), Some((da, a))) if db < da => format!("{b} and {a}"),
            (Some((_, b)), Some((_, a))) => format!("{a} and {b}"),
            (Some((_, one)), None) | (None, Some((_, one))) => one,
            (None, None) => "not inside any allocation (nothing is allocated)".to_string(),
        }
    }

    /// Where an access outside the arena and every mapped host range lies, by its first byte `address`: near a
    /// mapped range (within 1 MiB of it: an overrun of a buffer an emulated driver mapped), relative to it, or
    /// running past its end when it starts inside it; otherwise outside device memory.
    pub(super) fn describe_host_gap(&self, st: &State, address: u64) -> String {
        const NEAR: u64 = 1 << 20;
        let bytes = |d: u64| if d == 0 { "just".to_string() } else { bytes(d) };
        let past = st
            .host
            .range(..=address)
            .next_back()
            .and_then(|(&s, h)| match address.checked_sub(s + h.len) {
                // an access that starts inside the range and ends past it
                None => Some(format!(
                    "runs past the end of the {}-byte {} mapped at {s:#x}",
                    h.len, h.label
                )),
                Some(d) if d < NEAR => Some(format!(
                    "{} past the end of the {}-byte {} mapped at {s:#x}",
                    bytes(d),
                    h.len,
                    h.label
                )),
                Some(_) => None,
            });
        let after = st
            .host
            .range(address.saturating_add(1)..)
            .next()
            .map(|(&s, h)| (s - address, s, h))
            .filter(|(d, _, _)| *d < NEAR);
        let ahead =
            after.map(|(d, s, h)| format!("{} before the {}-byte {} mapped at {s:#x}", bytes(d), h.len, h.label));
        match (past, ahead) {
            (Some(p), Some(a)) => format!("outside device memory: {p} and {a}"),
            (Some(one), None) | (None, Some(one)) => format!("outside device memory: {one}"),
            (None, None) => "outside device memory".to_string(),
        }
    }

    /// The allocation at arena offset `start` as reports name it: "400-byte allocation at 0x… (label)".
    pub(super) fn name(&self, start: u64, a: &Allocation) -> String {
        format!("{}-byte {} at {:#x} ({})", a.size, a.kind, self.base + start, a.label)
    }
}

/// "1 byte", "12 bytes".
pub(super) fn bytes(n: u64) -> String {
    if n == 1 {
        "1 byte".to_string()
    } else {
        format!("{n} bytes")
    }
}

/// " (freed)" after an allocation freed earlier, nothing after a live one.
fn freed(a: &Allocation) -> &'static str {
    if a.live {
        ""
    } else {
        " (freed)"
    }
}

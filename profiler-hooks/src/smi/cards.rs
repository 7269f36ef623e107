//! Machine-wide cards: device index N of preset P in any process is one card, its use summed over processes;
//! the identities the SMI views give it (PCI address, KFD gpu id, unique id) follow from (N, P) alone, so they
//! are the same in every view and every run.

use std::collections::HashMap;

use super::read::{DeviceRecord, ProcessRecord};

/// Where each preset's cards go: (preset id, slot, order). The slot distinguishes presets in the identities
/// of one device index ([`Identity::of`]: four slots per index, the last, [`OTHER_PLACE`], for presets this
/// build does not know); the order places the preset's cards in card numbers ([`card_number`]): the default
/// preset of programs (MI210) first. A test checks that every preset has a row.
const PLACES: &[(&str, u32, u32)] = &[("mi300x", 0, 2), ("mi210", 1, 0), ("mi250x-gcd", 2, 1)];

/// (slot, order) of a card whose preset this build does not know: one another wavejit put in the registry.
const OTHER_PLACE: (u32, u32) = (3, 3);

/// (slot, order) of preset id `preset` ([`PLACES`]); [`OTHER_PLACE`] for an id no preset of this build has.
fn place(preset: &str) -> (u32, u32) {
    PLACES
        .iter()
        .find(|(id, ..)| *id == preset)
        .map_or(OTHER_PLACE, |&(_, slot, order)| (slot, order))
}

/// One process's share of a card.
#[derive(Debug, Clone, PartialEq)]
pub struct CardUser {
    pub pid: u32,
    pub start_ticks: u64,
    pub started_ns: u64,
    pub name: String,
    pub vram_used: u64,
    pub busy_ns: u64,
    pub busy_now: bool,
    pub dispatches: u64,
    pub queues: u64,
}

/// One emulated card of the machine.
#[derive(Debug, Clone, PartialEq)]
pub struct Card {
    /// The card's number, `cardN` and GPU N: from (index, preset) alone ([`card_number`]), so a card keeps its
    /// number whichever other cards are in use.
    pub number: usize,
    pub index: u32,
    pub preset: String,
    pub gfx: String,
    pub name: String,
    pub compute_units: u32,
    pub vram_total: u64,
    pub engine_clock_mhz: u32,
    pub memory_clock_mhz: u32,
    pub pci_device_id: u32,
    /// The processes using it (possibly none: a card `wavejit exec` emulates before its program starts).
    pub users: Vec<CardUser>,
}

fn fnv64(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// How the card of device `index` of preset `preset` identifies itself, wherever it is shown (SMI views,
/// sysfs, the runtime's agent attributes): a slot from (index, preset) gives the PCI bus and the KFD gpu id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Identity {
    /// PCI bus number (domain 0, device 0, function 0).
    pub bus: u32,
    /// KFD gpu id (non-zero; 0 is a CPU node).
    pub gpu_id: u32,
    /// A stable 64-bit unique id (`unique_id` in sysfs, the serial): a hash of (preset, index).
    pub unique_id: u64,
}

impl Identity {
    pub fn of(index: u32, preset: &str) -> Identity {
        let slot = (index % 48) * 4 + place(preset).0;
        Identity {
            bus: 0x10 + slot,
            gpu_id: 0xA000 + slot,
            unique_id: fnv64(&format!("wavejit:{preset}:{index}")),
        }
    }
}

impl Card {
    pub fn identity(&self) -> Identity {
        Identity::of(self.index, &self.preset)
    }

    /// VRAM used by all its processes, bytes.
    pub fn vram_used(&self) -> u64 {
        self.users.iter().map(|u| u.vram_used).sum()
    }

    /// Busy nanoseconds summed over its processes.
    pub fn busy_ns(&self) -> u64 {
        self.users.iter().map(|u| u.busy_ns).sum()
    }

    pub fn dispatches(&self) -> u64 {
        self.users.iter().map(|u| u.dispatches).sum()
    }

    /// PCI bus number ([`Identity`]).
    pub fn bus(&self) -> u32 {
        self.identity().bus
    }

    /// PCI address `0000:BB:00.0`.
    pub fn bdf(&self) -> String {
        format!("0000:{:02x}:00.0", self.bus())
    }

    /// The KFD gpu id ([`Identity`]).
    pub fn gpu_id(&self) -> u32 {
        self.identity().gpu_id
    }

    /// The unique id ([`Identity`]).
    pub fn unique_id(&self) -> u64 {
        self.identity().unique_id
    }

    /// A UUID in amd-smi's form, from the unique id and the device id.
    pub fn uuid(&self) -> String {
        let u = self.unique_id();
        format!(
            "{:08x}-{:04x}-1000-80{:02x}-{:012x}",
            u >> 32,
            self.pci_device_id,
            (u >> 24) & 0xff,
            u & 0xffff_ffff_ffff
        )
    }

    /// Share of time with a dispatch running, in percent, since the oldest of its processes started (capped at
    /// 100: processes run dispatches at the same time), and that window in ns.
    pub fn utilization_since_start(&self, now_ns: u64) -> (f64, u64) {
        let Some(first) = self.users.iter().map(|u| u.started_ns).min() else {
            return (0.0, 0);
        };
        let window = now_ns.saturating_sub(first);
        (percent(self.busy_ns(), window), window)
    }

    /// The same over the interval since `earlier` was taken: busy time its processes added since (all of it
    /// for processes started since).
    pub fn utilization_since(&self, earlier: &Sample, now_ns: u64) -> (f64, u64) {
        let window = now_ns.saturating_sub(earlier.at_ns);
        let busy: u64 = self
            .users
            .iter()
            .map(|u| {
                let before = earlier
                    .busy
                    .get(&(u.pid, u.start_ticks, self.index, self.preset.clone()))
                    .copied()
                    .unwrap_or(0);
                u.busy_ns.saturating_sub(before)
            })
            .sum();
        (percent(busy, window), window)
    }
}

fn percent(busy: u64, window: u64) -> f64 {
    if window == 0 {
        0.0
    } else {
        (busy as f64 * 100.0 / window as f64).min(100.0)
    }
}

/// Busy times at one moment, for utilization over an interval.
#[derive(Debug, Clone, Default)]
pub struct Sample {
    pub at_ns: u64,
    /// (pid, start ticks, device index, preset) → busy ns.
    busy: HashMap<(u32, u64, u32, String), u64>,
}

impl Sample {
    pub fn take(cards: &[Card], at_ns: u64) -> Sample {
        let busy = cards
            .iter()
            .flat_map(|c| {
                c.users
                    .iter()
                    .map(move |u| ((u.pid, u.start_ticks, c.index, c.preset.clone()), u.busy_ns))
            })
            .collect();
        Sample { at_ns, busy }
    }
}

/// The number of the card of device `index` of preset `preset`: 16 numbers per preset (a process has at most
/// [`super::layout::MAX_DEVICES`] devices), MI210 0–15, MI250X GCD 16–31, MI300X 32–47, others from 48.
pub fn card_number(index: u32, preset: &str) -> usize {
    place(preset).1 as usize * super::layout::MAX_DEVICES + index as usize
}

/// The machine's cards: every (index, preset) in `processes`, plus `own` (the devices of a process not in the
/// registry yet, e.g. those `wavejit exec` is about to emulate), in order of their numbers ([`card_number`]).
pub fn cards(processes: &[ProcessRecord], own: &[DeviceRecord]) -> Vec<Card> {
    let mut cards: Vec<Card> = Vec::new();
    let card_for = |d: &DeviceRecord, cards: &mut Vec<Card>| -> usize {
        if let Some(i) = cards.iter().position(|c| c.index == d.index && c.preset == d.preset) {
            return i;
        }
        cards.push(Card {
            number: 0,
            index: d.index,
            preset: d.preset.clone(),
            gfx: d.gfx.clone(),
            name: d.name.clone(),
            compute_units: d.compute_units,
            vram_total: d.vram_total,
            engine_clock_mhz: d.engine_clock_mhz,
            memory_clock_mhz: d.memory_clock_mhz,
            pci_device_id: d.pci_device_id,
            users: Vec::new(),
        });
        cards.len() - 1
    };
    for d in own {
        card_for(d, &mut cards);
    }
    for p in processes {
        for d in &p.devices {
            let i = card_for(d, &mut cards);
            cards[i].users.push(CardUser {
                pid: p.pid,
                start_ticks: p.start_ticks,
                started_ns: p.started_ns,
                name: p.name.clone(),
                vram_used: d.vram_used,
                busy_ns: d.busy_ns,
                busy_now: d.busy_now,
                dispatches: d.dispatches,
                queues: d.queues,
            });
        }
    }
    for c in &mut cards {
        c.number = card_number(c.index, &c.preset);
    }
    cards.sort_by(|a, b| (a.number, &a.preset).cmp(&(b.number, &b.preset)));
    cards
}

#[cfg(test)]
mod place_tests {
    use super::*;

    #[test]
    fn every_preset_has_a_place_of_its_own() {
        let ids: Vec<&str> = emu_core::PRESETS.iter().map(|p| p.id).collect();
        let mut rows: Vec<&str> = PLACES.iter().map(|&(id, ..)| id).collect();
        rows.sort();
        let mut sorted = ids.clone();
        sorted.sort();
        assert_eq!(rows, sorted, "PLACES has one row per preset");
        let mut slots: Vec<u32> = PLACES.iter().map(|&(_, slot, _)| slot).collect();
        let mut orders: Vec<u32> = PLACES.iter().map(|&(.., order)| order).collect();
        slots.sort();
        orders.sort();
        slots.dedup();
        orders.dedup();
        assert_eq!(
            (slots.len(), orders.len()),
            (PLACES.len(), PLACES.len()),
            "slots and orders distinct"
        );
        assert!(
            slots.iter().all(|&s| s < OTHER_PLACE.0),
            "four slots per index, the last for others"
        );
        assert!(orders.iter().all(|&o| o < OTHER_PLACE.1));
        let default = emu_core::DevicePreset::program_default().id;
        assert_eq!(
            place(default).1,
            0,
            "the programs' default preset numbers the first cards"
        );
        assert_eq!(place("mi999"), OTHER_PLACE);
    }
}

//! Breakpoints and watches: `break`, `watch` on registers or memory, `delete`, and their lists in words.

use serde_json::json;

use emu_core::engine::WaveRunner;
use emu_core::wave::LANES;

use crate::regs;
use crate::session::{MemWatch, RegWatch};

use super::{hex, Answer, Debugger, Point};

impl<R: WaveRunner> Debugger<'_, R> {
    pub(super) fn set_break(&mut self, rest: &str) -> Answer {
        if rest.is_empty() {
            return self.info("break");
        }
        let a = match self.address(rest) {
            Ok(a) => a,
            Err(e) => return Answer::err(e),
        };
        let id = self.next_id;
        self.next_id += 1;
        self.points.push((id, Point::Break(a)));
        let text = format!("breakpoint {id} at {}: {}", self.code_place(a), self.inst_text(a));
        Answer::ok(
            text,
            json!({"breakpoint": id, "pc": hex(a), "where": self.symbolize(a), "offset": a.wrapping_sub(self.code_base()), "instruction": self.inst_text(a)}),
        )
    }

    pub(super) fn watch(&mut self, rest: &str) -> Answer {
        if rest.is_empty() {
            return Answer::err("watch REGISTER[LANE] (v3[5], v3, s4, exec, $v3) or watch ADDRESS[:BYTES]");
        }
        let id = self.next_id;
        let first = rest.chars().next().unwrap_or(' ');
        let point = if first.is_ascii_digit() {
            let (a, n) = rest.split_once(':').unwrap_or((rest, "4"));
            let address = match self.address_any(a) {
                Ok(a) => a,
                Err(e) => return Answer::err(e),
            };
            let n: usize = match n.trim().parse() {
                Ok(n) if (1..=256).contains(&n) => n,
                _ => return Answer::err(format!("`{n}`: a watch covers 1 to 256 bytes")),
            };
            let mut bytes = vec![0u8; n];
            if let Err(e) = self.session.memory().read(address, &mut bytes) {
                return Answer::err(format!("cannot watch {address:#x}: {e}"));
            }
            Point::Mem(MemWatch { address, bytes })
        } else {
            match self.reg_point(rest) {
                Ok(p) => p,
                Err(e) => return Answer::err(e),
            }
        };
        self.next_id += 1;
        let text = format!("watch {id}: {}", self.describe(&point));
        self.points.push((id, point));
        Answer::ok(text, json!({"watch": id}))
    }

    /// A register watch of the focused wave: `v3[5]` (one lane), `v3` (every lane), `s4`, `exec` (both
    /// halves), as the disassembler or rocgdb (`$v3`) writes them.
    fn reg_point(&self, text: &str) -> Result<Point, String> {
        let (name, lane) = match text.split_once('[') {
            // `v3[5]` a lane; `v[2:3]` a range
            Some((n, l)) if regs::plain(n).len() > 1 => match l.trim_end_matches(']').trim().parse::<usize>() {
                Ok(l) if l < LANES => (n.trim(), Some(l)),
                _ => return Err(format!("`{text}`: the lane is 0..63")),
            },
            _ => (text.trim(), None),
        };
        if let Some(why) = regs::not_shown(name) {
            return Err(format!("`{name}`: {why}"));
        }
        if regs::plain(name) == "pc" {
            return Err("the pc changes with every instruction: use step, or break at an address".into());
        }
        let regs = regs::parse(name).ok_or_else(|| {
            format!("`{name}` is not a register (v3[5], v3, s4, exec, vcc_lo, m0, scc, or as rocgdb writes them: $v3, $exec)")
        })?;
        if lane.is_some() && !regs.iter().all(|r| r.is_vector()) {
            return Err(format!("`{text}`: only vector registers have lanes"));
        }
        let w = self.focus_state()?;
        let files = self.files(w);
        for r in &regs {
            files.check(*r)?;
        }
        let mut watches = Vec::new();
        for r in &regs {
            let lanes = match (r.is_vector(), lane) {
                (true, Some(l)) => l..l + 1,
                (true, None) => 0..LANES,
                (false, _) => 0..1,
            };
            for l in lanes {
                watches.push(RegWatch {
                    wave: self.focus,
                    reg: *r,
                    lane: l,
                    value: r.read(w, l),
                });
            }
        }
        let mut name = regs::plain(name);
        if let Some(l) = lane {
            name += &format!("[{l}]");
        }
        Ok(Point::Reg {
            name,
            wave: self.focus,
            every_lane: lane.is_none() && regs.iter().any(|r| r.is_vector()),
            regs: watches,
        })
    }

    pub(super) fn address_any(&self, t: &str) -> Result<u64, String> {
        let t = t.trim();
        match t.strip_prefix("0x") {
            Some(h) => u64::from_str_radix(h, 16),
            None => t.parse(),
        }
        .map_err(|_| format!("`{t}` is not an address"))
    }

    pub(super) fn delete(&mut self, rest: &str) -> Answer {
        if rest.is_empty() {
            self.points.clear();
            return Answer::ok("deleted every breakpoint and watch".into(), json!({}));
        }
        let Ok(id) = rest.parse::<u32>() else {
            return Answer::err(format!("`{rest}` is not a breakpoint or watch number"));
        };
        let before = self.points.len();
        self.points.retain(|p| p.0 != id);
        if self.points.len() == before {
            return Answer::err(format!("no breakpoint or watch {id}"));
        }
        Answer::ok(format!("deleted {id}"), json!({"deleted": id}))
    }

    /// The breakpoint addresses (for a code view).
    pub fn breakpoints(&self) -> Vec<u64> {
        self.points
            .iter()
            .filter_map(|p| if let Point::Break(a) = p.1 { Some(a) } else { None })
            .collect()
    }

    /// Breakpoints and watches as text lines (for a watch list), each register watch with its value now.
    pub fn points_text(&self) -> Vec<String> {
        self.points
            .iter()
            .map(|(id, p)| match p {
                Point::Reg {
                    wave,
                    regs,
                    every_lane: false,
                    ..
                } if regs.len() <= 2 => {
                    let state = self.session.wave(*wave);
                    let value = regs
                        .iter()
                        .enumerate()
                        .map(|(i, r)| (state.map_or(r.value, |w| r.reg.read(w, r.lane)) as u64) << (32 * i))
                        .fold(0, |v, x| v | x);
                    format!("{id}: {} = {value:#x}", self.describe(p))
                }
                _ => format!("{id}: {}", self.describe(p)),
            })
            .collect()
    }

    /// A breakpoint (as SYMBOL+OFFSET) or a watch, in words.
    pub(super) fn describe(&self, p: &Point) -> String {
        match p {
            Point::Break(a) => format!("breakpoint at {}", self.code_place(*a)),
            Point::Reg {
                name,
                wave,
                every_lane: true,
                ..
            } => format!("{name} (every lane) of wave {wave}"),
            Point::Reg { name, wave, .. } => format!("{name} of wave {wave}"),
            Point::Mem(m) => format!("{} bytes at {:#x}", m.bytes.len(), m.address),
        }
    }
}

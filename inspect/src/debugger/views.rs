//! Views of the program and the dispatch: disassembly around the PC, `wave` and `waves`, `info`, `help`,
//! `history`.

use serde_json::json;

use emu_core::engine::WaveRunner;
use isa_amdgpu::disasm;

use crate::help;
use crate::session::{Status, WaveKey};

use super::{hex, Answer, Debugger, Point};

impl<R: WaveRunner> Debugger<'_, R> {
    /// `around` instructions either side of the focused wave's PC, in its function.
    pub fn disasm_view(&self, around: usize) -> Answer {
        let pc = match self.focus_state() {
            Ok(w) => w.pc,
            Err(e) => return Answer::err(e),
        };
        let code = self.session.launch().code;
        let rel = pc.wrapping_sub(code.base);
        let Some((fname, faddr, fsize)) = self
            .info
            .functions
            .iter()
            .find(|(_, a, s)| rel >= *a && rel < a + s)
            .cloned()
        else {
            return Answer::err(format!("{pc:#x} is in no function of the code object"));
        };
        let mut bytes = vec![0u8; fsize as usize];
        if let Err(e) = self.session.memory().read(code.base + faddr, &mut bytes) {
            return Answer::err(e.to_string());
        }
        let insts = isa_amdgpu::decode_all(&bytes, code.base + faddr, code.target);
        let at = insts.iter().position(|(a, _)| *a == pc).unwrap_or(0);
        let lo = at.saturating_sub(around);
        let hi = (at + around + 1).min(insts.len());
        let breaks: Vec<u64> = self
            .points
            .iter()
            .filter_map(|p| if let Point::Break(a) = p.1 { Some(a) } else { None })
            .collect();
        let mut text = format!("{fname}:\n");
        let mut lines = Vec::new();
        for (a, r) in &insts[lo..hi] {
            let t = match r {
                Ok(i) => disasm::text(i),
                Err(e) => format!("(cannot decode: {e})"),
            };
            let mark = if *a == pc { "=>" } else { "  " };
            let b = if breaks.contains(a) { '*' } else { ' ' };
            text += &format!(
                "{mark}{b} {:#08x} <+{:#x}>  {t}\n",
                a - code.base,
                a - code.base - faddr
            );
            lines.push(json!({"pc": hex(*a), "offset": a - code.base, "text": t, "current": *a == pc, "breakpoint": breaks.contains(a)}));
        }
        Answer::ok(text.trim_end().to_string(), json!({"function": fname, "lines": lines}))
    }

    pub(super) fn wave(&mut self, rest: &str) -> Answer {
        if !rest.is_empty() {
            match rest.parse::<WaveKey>() {
                Ok(k) if self.session.has_wave(k) => self.focus = k,
                Ok(k) => return Answer::err(format!("the dispatch has no wave {k}")),
                Err(e) => return Answer::err(e),
            }
        }
        let status = self.status_of(self.focus);
        let (pc, executed) = self.session.wave(self.focus).map_or((0, 0), |w| (w.pc, w.executed));
        let text = format!(
            "wave {} ({}), at {:#x} <{}>, {} instructions executed",
            self.focus,
            status.name(),
            pc,
            self.symbolize(pc),
            executed
        );
        Answer::ok(
            text,
            json!({"wave": self.focus.to_string(), "status": status.name(), "pc": hex(pc), "executed": executed}),
        )
    }

    pub(super) fn waves(&self) -> Answer {
        let mut text = String::new();
        let mut j = Vec::new();
        for (k, st, n) in self.session.waves() {
            let pc = self.session.wave(k).map(|w| w.pc);
            let mark = if k == self.focus { '*' } else { ' ' };
            let at = match (st, pc) {
                (Status::Running | Status::AtBarrier, Some(pc)) => format!(" at {pc:#x} <{}>", self.symbolize(pc)),
                _ => String::new(),
            };
            text += &format!(
                "{mark} {:<12} {:<11} {n:>8} instructions{at}\n",
                k.to_string(),
                st.name()
            );
            j.push(json!({"wave": k.to_string(), "status": st.name(), "executed": n, "pc": pc.map(hex), "focus": k == self.focus}));
        }
        Answer::ok(text.trim_end().to_string(), json!({"waves": j}))
    }

    pub(super) fn info(&self, what: &str) -> Answer {
        match what {
            "kernel" => {
                let l = self.session.launch();
                let mut text = format!(
                    "kernel {} at {:#x} (code object loaded at {:#x}), grid {:?}, block {:?}, {} workgroups\n",
                    self.info.kernel,
                    l.entry,
                    l.code.base,
                    l.shape.grid,
                    l.shape.block,
                    l.shape.workgroup_count()
                );
                for d in &self.info.descriptor {
                    text += &format!("  {d}\n");
                }
                text += "arguments:\n";
                let mut args = Vec::new();
                for a in self.info.args.iter() {
                    let bytes = l
                        .kernarg
                        .get(a.offset as usize..(a.offset + a.size) as usize)
                        .unwrap_or(&[]);
                    let mut v = 0u64;
                    for (i, b) in bytes.iter().take(8).enumerate() {
                        v |= (*b as u64) << (8 * i);
                    }
                    let shown = if a.kind.contains("buffer") || a.size == 8 {
                        format!("{v:#x}")
                    } else {
                        format!("{v}")
                    };
                    let name = if a.name.is_empty() {
                        format!("({})", a.kind)
                    } else {
                        a.name.clone()
                    };
                    text += &format!("  +{:<3} {:<24} {:<16} = {shown}\n", a.offset, name, a.type_name);
                    args.push(json!({"name": a.name, "type": a.type_name, "kind": a.kind, "offset": a.offset, "size": a.size, "value": v}));
                }
                Answer::ok(
                    text.trim_end().to_string(),
                    json!({"kernel": self.info.kernel, "entry": hex(l.entry), "grid": l.shape.grid, "block": l.shape.block, "args": args}),
                )
            }
            "break" | "breakpoints" | "watch" | "watches" => {
                let mut text = String::new();
                let mut j = Vec::new();
                for (id, p) in &self.points {
                    text += &format!("{id}: {}\n", self.describe(p));
                    let mut e = json!({"id": id, "what": self.describe(p)});
                    if let Point::Break(a) = p {
                        e["pc"] = json!(hex(*a));
                        e["where"] = json!(self.symbolize(*a));
                        e["offset"] = json!(a.wrapping_sub(self.code_base()));
                    }
                    j.push(e);
                }
                if text.is_empty() {
                    text = "no breakpoints or watches".into();
                }
                Answer::ok(text.trim_end().to_string(), json!({"points": j}))
            }
            "registers" | "regs" => self.print("regs", ""),
            "waves" => self.waves(),
            _ => Answer::err("info kernel | break | registers | waves"),
        }
    }

    pub(super) fn help(&self, rest: &str) -> Answer {
        if rest.is_empty() {
            let text = help::summary();
            let names: Vec<&str> = help::COMMANDS.iter().map(|c| c.names[0]).collect();
            return Answer::ok(text.clone(), json!({"help": text, "commands": names}));
        }
        match help::about(rest) {
            Ok(text) => Answer::ok(text.clone(), json!({"help": text})),
            Err(e) => Answer::err(e),
        }
    }

    pub(super) fn history(&self) -> Answer {
        let mut text = String::new();
        let mut j = Vec::new();
        for (i, s) in self.history.iter().enumerate() {
            text += &format!(
                "{i:>4}  time {:>8}  wave {:<12} {:#x} <{}>  {}\n",
                s.position.time,
                s.focus.to_string(),
                s.pc,
                self.symbolize(s.pc),
                s.reason
            );
            j.push(json!({"time": s.position.time, "wave": s.focus.to_string(), "pc": hex(s.pc), "reason": s.reason, "hit": s.hit}));
        }
        Answer::ok(text.trim_end().to_string(), json!({"history": j}))
    }
}

//! Running the dispatch until a point and reporting the stop: where, why (a breakpoint, a watch with its old
//! and new values, a wave or the dispatch ending), and the instruction about to run.

use serde_json::{json, Value};

use emu_core::engine::WaveRunner;
use emu_core::wave::WaveState;

use crate::regs;
use crate::session::{Reason, RegWatch, Status, Until, WaveKey};

use super::{hex, wave_words, Answer, Debugger, Point, Stop};

impl<R: WaveRunner> Debugger<'_, R> {
    /// The report of a stop: where, why, and the instruction about to run. A breakpoint or watch hit moves the
    /// focus to the wave that hit it; a focus other than `prev` (the focus when the command began) is
    /// announced, as gdb announces the thread it switches to.
    pub(super) fn stopped(&mut self, reason: Reason, command: &str, prev: WaveKey) -> Answer {
        let mut hit_by = None;
        let mut j = json!({});
        let why = match &reason {
            Reason::Position => "reached".to_string(),
            Reason::Turn => format!("wave {} is about to run its first instruction", self.focus),
            Reason::Count if command.starts_with("reverse") => "stepped back".into(),
            Reason::Count => "stepped".into(),
            Reason::Pc => "returned".into(),
            Reason::Breakpoint { pc } => {
                let by = self.session.at.wave;
                hit_by = Some(by);
                let id = self
                    .points
                    .iter()
                    .find(|(_, p)| matches!(p, Point::Break(a) if a == pc))
                    .map_or(0, |p| p.0);
                j["breakpoint"] = json!(id);
                format!("breakpoint {id} at {}, hit by {}", self.symbolize(*pc), wave_words(by))
            }
            Reason::Register { watch, old, new, pc } => {
                let (id, r) = self.reg_watch(*watch);
                hit_by = Some(r.wave);
                j["watch"] = json!(id);
                j["old"] = json!(old);
                j["new"] = json!(new);
                j["changed_at"] = json!(hex(*pc));
                j["register"] = json!(r.reg.name());
                let name = if r.reg.is_vector() {
                    j["lane"] = json!(r.lane);
                    format!("{}[{}]", r.reg.name(), r.lane)
                } else {
                    r.reg.name()
                };
                format!(
                    "watch {id} ({name} of wave {}) changed: {old:#x} -> {new:#x}, by the instruction at {} ({}) of {}",
                    r.wave,
                    self.symbolize(*pc),
                    self.inst_text(*pc),
                    wave_words(r.wave)
                )
            }
            Reason::Memory {
                watch,
                old,
                new,
                by,
                pc,
            } => {
                hit_by = Some(*by);
                let id = self.mem_watch_id(*watch);
                j["watch"] = json!(id);
                j["old"] = json!(old);
                j["new"] = json!(new);
                j["changed_at"] = json!(hex(*pc));
                j["changed_by"] = json!(by.to_string());
                format!(
                    "watch {id} changed: {} -> {}, written by {} at {} ({})",
                    bytes_hex(old),
                    bytes_hex(new),
                    wave_words(*by),
                    self.symbolize(*pc),
                    self.inst_text(*pc)
                )
            }
            Reason::WaveEnded { wave } => format!("wave {wave} ended"),
            Reason::DispatchEnded => "every wave of the dispatch has ended".into(),
            Reason::Hook => "reached".into(),
        };
        let hit = hit_by.is_some();
        if let Some(by) = hit_by {
            self.focus = by;
        }
        let switched = self.focus != prev;
        // the watches watch for changes from the values they have here
        for (_, p) in self.points.iter_mut() {
            match p {
                Point::Reg { wave, regs, .. } => {
                    if let Some(w) = self.session.wave(*wave) {
                        for r in regs.iter_mut() {
                            r.value = r.reg.read(w, r.lane);
                        }
                    }
                }
                Point::Mem(m) => {
                    let _ = self.session.memory().read(m.address, &mut m.bytes);
                }
                Point::Break(_) => {}
            }
        }
        let at = self.session.at;
        let ended = self.session.finished();
        let state = self.session.wave(self.focus).map(|w| (w.pc, w.executed));
        let status = self.status_of(self.focus);
        let (pc, executed) = state.unwrap_or((0, 0));
        let mut text = String::new();
        if switched {
            text += &format!("[switching to {}]\n", wave_words(self.focus));
        }
        text += &format!("{why}\n");
        if !ended && status != Status::Ended && state.is_some() {
            text += &format!(
                "wave {} ({}) at {:#x} <{}>, {} instructions executed; dispatch time {}\n=> {}",
                self.focus,
                status.name(),
                pc,
                self.symbolize(pc),
                executed,
                at.time,
                self.inst_text(pc)
            );
        } else {
            text += &format!("dispatch time {}", self.session.time());
        }
        self.history.push(Stop {
            position: at,
            focus: self.focus,
            reason: why.clone(),
            pc,
            hit,
        });
        let j2 = json!({
            "command": command,
            "stop": {
                "reason": reason_name(&reason),
                "message": why,
                "wave": self.focus.to_string(),
                "status": status.name(),
                "pc": hex(pc),
                "where": self.symbolize(pc),
                "instruction": if state.is_some() && status != Status::Ended { self.inst_text(pc) } else { String::new() },
                "executed": executed,
                "time": self.session.time(),
                "dispatch_ended": ended,
                "hit_by": hit_by.map(|k| json!({"wave": k.to_string(), "workgroup": k.workgroup, "index": k.wave})),
                "focus_switched": switched,
                "previous_focus": prev.to_string(),
            }
        });
        let mut a = Answer::ok(text, j2);
        if let (Value::Object(stop), Value::Object(extra)) = (&mut a.json["stop"], j) {
            stop.extend(extra);
        }
        a
    }

    /// The number of the watch that holds the session's register watch `index` ([`Debugger::until`]'s order),
    /// and that register watch.
    fn reg_watch(&self, index: usize) -> (u32, RegWatch) {
        self.points
            .iter()
            .flat_map(|(id, p)| match p {
                Point::Reg { regs, .. } => regs.iter().map(|r| (*id, r.clone())).collect(),
                _ => Vec::new(),
            })
            .nth(index)
            .unwrap_or((
                0,
                RegWatch {
                    wave: self.focus,
                    reg: regs::Reg::Scc,
                    lane: 0,
                    value: 0,
                },
            ))
    }

    fn mem_watch_id(&self, index: usize) -> u32 {
        self.points
            .iter()
            .filter(|p| matches!(p.1, Point::Mem(_)))
            .nth(index)
            .map_or(0, |p| p.0)
    }

    /// The breakpoints and watches as the session takes them.
    pub(super) fn until(&self) -> Until {
        let mut u = Until::default();
        for (_, p) in &self.points {
            match p {
                Point::Break(a) => u.breakpoints.push(*a),
                Point::Reg { regs, .. } => u.registers.extend(regs.iter().cloned()),
                Point::Mem(m) => u.memory.push(m.clone()),
            }
        }
        u
    }

    pub(super) fn run(&mut self, until: &Until, command: &str) -> Answer {
        let prev = self.focus;
        match self.session.run(until) {
            Ok(r) => self.stopped(r, command, prev),
            Err(e) => Answer::err(e.to_string()),
        }
    }

    pub(super) fn running_focus(&self) -> Result<&WaveState, String> {
        let w = self.focus_state()?;
        if self.session.finished() || self.status_of(self.focus) == Status::Ended {
            return Err(format!(
                "wave {} has ended (use `wave` to choose another, or reverse-step)",
                self.focus
            ));
        }
        Ok(w)
    }
}

fn reason_name(r: &Reason) -> &'static str {
    match r {
        Reason::Position => "position",
        Reason::Turn => "start",
        Reason::Count => "step",
        Reason::Pc => "return",
        Reason::Breakpoint { .. } => "breakpoint",
        Reason::Register { .. } => "watch",
        Reason::Memory { .. } => "watch",
        Reason::WaveEnded { .. } => "wave_ended",
        Reason::DispatchEnded => "dispatch_ended",
        Reason::Hook => "position",
    }
}

fn bytes_hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect::<Vec<_>>().join(" ")
}

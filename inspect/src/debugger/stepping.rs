//! Moving through the dispatch: `step`, `next`, `finish` and `continue` forwards; `reverse-step` and
//! `reverse-continue` backwards, by replaying the dispatch from its start to the point asked for.

use emu_core::engine::WaveRunner;
use isa_amdgpu::decode;
use isa_amdgpu::table::FlowControl;

use crate::session::{Position, Reason, Until};

use super::{Answer, Debugger};

impl<R: WaveRunner> Debugger<'_, R> {
    pub(super) fn step(&mut self, n: u64) -> Answer {
        let executed = match self.running_focus() {
            Ok(w) => w.executed,
            Err(e) => return Answer::err(e),
        };
        let until = Until {
            count: Some((self.focus, executed + n)),
            ..self.until()
        };
        self.run(&until, "step")
    }

    pub(super) fn next(&mut self) -> Answer {
        let (pc, executed) = match self.running_focus() {
            Ok(w) => (w.pc, w.executed),
            Err(e) => return Answer::err(e),
        };
        let code = self.session.launch().code;
        let mut buf = [0u8; 12];
        let avail = (code.base + code.size).saturating_sub(pc).min(12) as usize;
        let inst = if avail >= 4 && self.session.memory().read(pc, &mut buf[..avail]).is_ok() {
            decode(&buf[..avail], pc, code.target).ok()
        } else {
            None
        };
        match inst {
            Some(i) if i.info.flow == FlowControl::Call => {
                let depth = self.session.call_stack(self.focus).len();
                let until = Until {
                    pc: Some((self.focus, pc + i.size() as u64, depth)),
                    ..self.until()
                };
                self.run(&until, "next")
            }
            _ => {
                let until = Until {
                    count: Some((self.focus, executed + 1)),
                    ..self.until()
                };
                self.run(&until, "next")
            }
        }
    }

    pub(super) fn finish(&mut self) -> Answer {
        if let Err(e) = self.running_focus() {
            return Answer::err(e);
        }
        let stack = self.session.call_stack(self.focus);
        let Some(&ret) = stack.last() else {
            return Answer::err(format!(
                "wave {} is not inside a device function (its call stack is empty)",
                self.focus
            ));
        };
        let until = Until {
            pc: Some((self.focus, ret, stack.len() - 1)),
            ..self.until()
        };
        self.run(&until, "finish")
    }

    pub(super) fn cont(&mut self) -> Answer {
        if self.session.finished() {
            return Answer::err("the dispatch has ended (reverse-step or reverse-continue to go back)");
        }
        let until = self.until();
        self.run(&until, "continue")
    }

    pub(super) fn reverse_step(&mut self, n: u64) -> Answer {
        let executed = match self.focus_state() {
            Ok(w) => w.executed,
            Err(e) => return Answer::err(e),
        };
        let target = executed.saturating_sub(n);
        let focus = self.focus;
        let mark = if target == 0 {
            Until {
                turn_of: Some(focus),
                ..Until::default()
            }
        } else {
            Until {
                count: Some((focus, target)),
                ..Until::default()
            }
        };
        self.go_back(Some(mark), "reverse-step")
    }

    pub(super) fn reverse_continue(&mut self) -> Answer {
        self.go_back(None, "reverse-continue")
    }

    /// Goes back by replay. The dispatch runs again from its start up to the present point with the
    /// breakpoints and watches, noting where each hits and where `mark` (a count or the turn of the focused
    /// wave) holds; the session then stops at the last hit after the mark, or else at the mark. Without a
    /// mark, at the last hit before the present point, or else at the start.
    fn go_back(&mut self, mark: Option<Until>, command: &str) -> Answer {
        let prev = self.focus;
        let now = self.session.at;
        let ended = self.session.finished();
        if let Err(e) = self.session.rewind() {
            return Answer::err(e.to_string());
        }
        // replay with the breakpoints and watches (watched memory as it was at the start), noting each hit
        let mut until = self.until();
        for m in until.memory.iter_mut() {
            let _ = self.session.memory().read(m.address, &mut m.bytes);
        }
        if let Some(m) = &mark {
            until.count = m.count;
            until.turn_of = m.turn_of;
        }
        let mut marked: Option<(Position, Reason)> = None;
        let mut last: Option<(Position, Reason)> = None;
        loop {
            let r = match self.session.run(&until) {
                Ok(r) => r,
                Err(e) => return Answer::err(e.to_string()),
            };
            let at = self.session.at;
            if r == Reason::DispatchEnded || (!ended && at.order() >= now.order()) {
                break;
            }
            // a hit can stop the replay where the count is reached (a breakpoint comes first)
            let counted = until.count.is_some_and(|(w, n)| {
                at.before && at.wave == w && self.session.wave(w).is_some_and(|s| s.executed >= n)
            });
            if marked.is_none() && (matches!(r, Reason::Count | Reason::Turn) || counted) {
                until.count = None;
                until.turn_of = None;
                last = None;
                marked = Some((at, r));
            } else if matches!(
                r,
                Reason::Breakpoint { .. } | Reason::Register { .. } | Reason::Memory { .. }
            ) {
                last = Some((at, r));
            }
            let (regs, mems) = self.session.watches();
            until.registers = regs.to_vec();
            until.memory = mems.to_vec();
        }
        if let Err(e) = self.session.rewind() {
            return Answer::err(e.to_string());
        }
        let early = last.is_some() && mark.is_some();
        let (position, reason) = match (last.or(marked), mark.is_some()) {
            (Some(stop), _) => stop,
            (None, false) => (self.origin, Reason::Turn),
            // the mark is the present point (a wave at its start, or a count of 0)
            (None, true) => (now, Reason::Position),
        };
        if let Err(e) = self.session.run(&Until {
            position: Some(position),
            turn_of: (position == self.origin).then_some(self.origin_wave),
            ..Until::default()
        }) {
            return Answer::err(e.to_string());
        }
        self.focus = if matches!(reason, Reason::Turn) && mark.is_none() {
            self.origin_wave
        } else {
            prev
        };
        let hit = matches!(
            reason,
            Reason::Breakpoint { .. } | Reason::Register { .. } | Reason::Memory { .. }
        );
        let mut a = self.stopped(reason, command, prev);
        let head = match (mark.is_some(), hit) {
            (false, true) => "back at the previous breakpoint or watch hit:\n".to_string(),
            (false, false) => "no earlier breakpoint or watch hit: back at the start\n".to_string(),
            (true, true) if early => {
                "stopped on the way back, at the last breakpoint or watch hit before the present point:\n".to_string()
            }
            (true, _) => String::new(),
        };
        a.text = head + &a.text;
        a
    }
}

//! The step debugger's commands over a [`Session`]: stepping (also backwards), breakpoints, watches, printing
//! a wave's state, disassembly, waves. Each command gives an [`Answer`]: text for people, and the same as a
//! JSON object for tools (`--json`).
//!
//! Reverse execution replays the dispatch from its start ([`Session::rewind`]) to the point asked for:
//! `reverse-step N` to where the focused wave had executed N instructions fewer, `reverse-continue` to the last
//! breakpoint or watch hit before the present point. What a replay reaches is what a forward run stopped at
//! the same point has, since every run executes the same instructions in the same order.

use serde_json::{json, Value};

use emu_core::engine::{EngineError, WaveRunner};
use emu_core::wave::{WaveState, LANES};
use isa_amdgpu::codeobj::{CodeObject, Kernel};
use isa_amdgpu::table::FlowControl;
use isa_amdgpu::{decode, disasm};

use crate::regs;
use crate::session::{MemWatch, Position, Reason, RegWatch, Session, Status, Until, WaveKey};

mod print;
pub use print::{format_value, lane_strip};

/// What the debugger knows of the program beside the dispatch: function symbols, the kernel's arguments and
/// descriptor.
#[derive(Debug, Clone, Default)]
pub struct DebugInfo {
    pub kernel: String,
    /// Functions (kernels and device functions): name, address in the code object, size.
    pub functions: Vec<(String, u64, u64)>,
    pub args: Vec<ArgInfo>,
    /// Lines describing the kernel descriptor.
    pub descriptor: Vec<String>,
}

/// One kernel argument as the metadata names it.
#[derive(Debug, Clone)]
pub struct ArgInfo {
    pub name: String,
    pub type_name: String,
    pub kind: String,
    pub offset: u64,
    pub size: u64,
}

impl DebugInfo {
    pub fn of(co: &CodeObject, kernel: &Kernel) -> DebugInfo {
        let functions = co
            .functions
            .iter()
            .map(|f| (f.name.clone(), f.address, f.size))
            .collect();
        let args = co
            .kernel_metadata(kernel)
            .map(|m| {
                m.args
                    .iter()
                    .map(|a| ArgInfo {
                        name: a.name.clone().unwrap_or_default(),
                        type_name: a.type_name.clone().unwrap_or_default(),
                        kind: a.value_kind.clone(),
                        offset: a.offset,
                        size: a.size,
                    })
                    .collect()
            })
            .unwrap_or_default();
        let d = &kernel.descriptor;
        let descriptor = vec![
            format!(
                "VGPRs {} (AGPRs {}), SGPRs {}",
                d.vgpr_alloc_count(),
                d.agpr_alloc_count().unwrap_or(0),
                d.sgpr_alloc_count().unwrap_or(0)
            ),
            format!(
                "LDS {} bytes per workgroup, private {} bytes per lane, kernarg {} bytes",
                d.group_segment_fixed_size, d.private_segment_fixed_size, d.kernarg_size
            ),
            format!(
                "float mode: round f32 {}, round f16/f64 {}, denormals f32 {:?}, f16/f64 {:?}",
                d.rsrc1.float_round_mode_32,
                d.rsrc1.float_round_mode_16_64,
                d.rsrc1.float_denorm_mode_32,
                d.rsrc1.float_denorm_mode_16_64
            ),
        ];
        DebugInfo {
            kernel: kernel.name.clone(),
            functions,
            args,
            descriptor,
        }
    }
}

/// The answer to one command.
#[derive(Debug, Clone)]
pub struct Answer {
    pub text: String,
    pub json: Value,
    /// The session is over (`quit`).
    pub quit: bool,
}

impl Answer {
    fn ok(text: String, json: Value) -> Answer {
        let mut j = json!({"ok": true});
        if let (Value::Object(m), Value::Object(extra)) = (&mut j, json) {
            m.extend(extra);
        }
        Answer {
            text,
            json: j,
            quit: false,
        }
    }

    fn err(text: impl Into<String>) -> Answer {
        let text = text.into();
        Answer {
            json: json!({"ok": false, "error": text}),
            text: format!("error: {text}"),
            quit: false,
        }
    }
}

/// A breakpoint or a watch.
#[derive(Debug, Clone)]
enum Point {
    Break(u64),
    Reg(RegWatch),
    Mem(MemWatch),
}

/// A point the debugger stopped at.
#[derive(Debug, Clone)]
pub struct Stop {
    pub position: Position,
    pub focus: WaveKey,
    pub reason: String,
    pub pc: u64,
    /// Whether a breakpoint or watch stopped it (what `reverse-continue` goes back to).
    pub hit: bool,
}

/// The debugger over one dispatch.
pub struct Debugger<'a, R: WaveRunner> {
    pub session: Session<'a, R>,
    info: DebugInfo,
    /// The wave commands apply to.
    pub focus: WaveKey,
    /// Breakpoints and watches by number (from 1).
    points: Vec<(u32, Point)>,
    next_id: u32,
    /// Every stop, in the order reached.
    pub history: Vec<Stop>,
    /// Where the session started (the chosen wave's first instruction).
    origin: Position,
    origin_wave: WaveKey,
}

fn hex(v: u64) -> String {
    format!("{v:#x}")
}

impl<'a, R: WaveRunner> Debugger<'a, R> {
    /// Starts the dispatch and stops before the first instruction of `wave`.
    pub fn start(mut session: Session<'a, R>, info: DebugInfo, wave: WaveKey) -> Result<(Self, Answer), EngineError> {
        if !session.has_wave(wave) {
            let what = format!(
                "the dispatch has no wave {wave} (workgroups {:?}, block {:?})",
                session.launch().shape.workgroups(),
                session.launch().shape.block
            );
            return Err(EngineError::Inspect {
                kernel: info.kernel.clone(),
                what,
            });
        }
        let reason = session.run(&Until {
            turn_of: Some(wave),
            ..Until::default()
        })?;
        let origin = session.at;
        let mut d = Debugger {
            session,
            info,
            focus: wave,
            points: Vec::new(),
            next_id: 1,
            history: Vec::new(),
            origin,
            origin_wave: wave,
        };
        let a = d.stopped(reason, "start");
        Ok((d, a))
    }

    /// Runs one command line.
    pub fn execute(&mut self, line: &str) -> Answer {
        let line = line.trim();
        let (cmd, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        let rest = rest.trim();
        let (cmd, fmt) = cmd.split_once('/').unwrap_or((cmd, ""));
        let count = |default: u64| -> Result<u64, String> {
            if rest.is_empty() {
                Ok(default)
            } else {
                rest.parse().map_err(|_| format!("`{rest}` is not a count"))
            }
        };
        let r = match cmd {
            "" => return Answer::ok(String::new(), json!({})),
            "step" | "s" | "stepi" | "si" => count(1).map(|n| self.step(n)),
            "next" | "n" | "nexti" | "ni" => Ok(self.next()),
            "finish" | "fin" => Ok(self.finish()),
            "continue" | "c" | "cont" => Ok(self.cont()),
            "break" | "b" => Ok(self.set_break(rest)),
            "watch" => Ok(self.watch(rest)),
            "delete" | "d" => Ok(self.delete(rest)),
            "print" | "p" => Ok(self.print(rest, fmt)),
            "x" => Ok(self.print(&format!("mem {rest}"), fmt)),
            "disasm" | "disassemble" | "list" | "l" => count(7).map(|n| self.disasm_view(n as usize)),
            "wave" => Ok(self.wave(rest)),
            "waves" | "info-waves" => Ok(self.waves()),
            "info" => Ok(self.info(rest)),
            "reverse-step" | "rs" | "reverse-stepi" | "rsi" => count(1).map(|n| self.reverse_step(n)),
            "reverse-continue" | "rc" => Ok(self.reverse_continue()),
            "history" => Ok(self.history()),
            "help" | "h" | "?" => Ok(Answer::ok(HELP.to_string(), json!({"help": HELP}))),
            "quit" | "q" | "exit" => {
                let mut a = Answer::ok("bye".into(), json!({"quit": true}));
                a.quit = true;
                Ok(a)
            }
            other => Err(format!("unknown command `{other}` (try `help`)")),
        };
        r.unwrap_or_else(Answer::err)
    }

    // ---- where things are ----

    fn code_base(&self) -> u64 {
        self.session.launch().code.base
    }

    /// `name+0xOFF` for a device address inside a function of the code object.
    pub fn symbolize(&self, pc: u64) -> String {
        let rel = pc.wrapping_sub(self.code_base());
        match self
            .info
            .functions
            .iter()
            .find(|(_, a, s)| rel >= *a && rel < a + s.max(&4))
        {
            Some((n, a, _)) => format!("{n}+{:#x}", rel - a),
            None => format!("{rel:#x}"),
        }
    }

    /// A code address: `SYMBOL[+OFF]`, an address in the code object (as `wavejit disasm` prints them) or a
    /// device address.
    fn address(&self, text: &str) -> Result<u64, String> {
        let num = |t: &str| -> Option<u64> {
            let t = t.trim();
            match t.strip_prefix("0x") {
                Some(h) => u64::from_str_radix(h, 16).ok(),
                None => t.parse().ok(),
            }
        };
        let code = self.session.launch().code;
        if let Some(v) = num(text) {
            return Ok(if v < code.size { code.base + v } else { v });
        }
        let (name, off) = match text.split_once('+') {
            Some((n, o)) => (n.trim(), num(o).ok_or_else(|| format!("`{o}` is not an offset"))?),
            None => (text.trim(), 0),
        };
        let f = self.info.functions.iter().find(|(n, _, _)| n == name).ok_or_else(|| {
            format!(
                "no function `{name}` (functions: {})",
                self.info
                    .functions
                    .iter()
                    .map(|f| f.0.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })?;
        Ok(code.base + f.1 + off)
    }

    fn focus_state(&self) -> Result<&WaveState, String> {
        self.session.wave(self.focus).ok_or_else(|| {
            let status = self
                .session
                .waves()
                .into_iter()
                .find(|w| w.0 == self.focus)
                .map_or("unknown", |w| w.1.name());
            format!("wave {} has no state to show ({status})", self.focus)
        })
    }

    fn inst_text(&self, pc: u64) -> String {
        let mut buf = [0u8; 12];
        let code = self.session.launch().code;
        let avail = (code.base + code.size).saturating_sub(pc).min(12) as usize;
        if avail < 4 || self.session.memory().read(pc, &mut buf[..avail]).is_err() {
            return "(outside the code)".into();
        }
        match decode(&buf[..avail], pc, code.target) {
            Ok(i) => disasm::text(&i),
            Err(e) => format!("(cannot decode: {e})"),
        }
    }

    fn status_of(&self, w: WaveKey) -> Status {
        self.session
            .waves()
            .into_iter()
            .find(|x| x.0 == w)
            .map_or(Status::NotStarted, |x| x.1)
    }

    /// The report of a stop: where, why, and the instruction about to run.
    fn stopped(&mut self, reason: Reason, command: &str) -> Answer {
        let mut hit = false;
        let mut j = json!({});
        let why = match &reason {
            Reason::Position => "reached".to_string(),
            Reason::Turn => format!("wave {} is about to run its first instruction", self.focus),
            Reason::Count if command.starts_with("reverse") => "stepped back".into(),
            Reason::Count => "stepped".into(),
            Reason::Pc => "returned".into(),
            Reason::Breakpoint { pc } => {
                hit = true;
                let id = self
                    .points
                    .iter()
                    .find(|(_, p)| matches!(p, Point::Break(a) if a == pc))
                    .map_or(0, |p| p.0);
                j["breakpoint"] = json!(id);
                self.focus = self.session.at.wave;
                format!("breakpoint {id} at {}", self.symbolize(*pc))
            }
            Reason::Register { watch, old, new, pc } => {
                hit = true;
                let id = self.reg_watch_id(*watch);
                j["watch"] = json!(id);
                j["old"] = json!(old);
                j["new"] = json!(new);
                j["changed_at"] = json!(hex(*pc));
                let name = self
                    .points
                    .iter()
                    .find(|p| p.0 == id)
                    .map_or(String::new(), |p| point_name(&p.1));
                format!(
                    "watch {id} ({name}) changed: {old:#x} -> {new:#x}, by the instruction at {} ({})",
                    self.symbolize(*pc),
                    self.inst_text(*pc)
                )
            }
            Reason::Memory {
                watch,
                old,
                new,
                by,
                pc,
            } => {
                hit = true;
                let id = self.mem_watch_id(*watch);
                j["watch"] = json!(id);
                j["old"] = json!(old);
                j["new"] = json!(new);
                j["changed_at"] = json!(hex(*pc));
                j["changed_by"] = json!(by.to_string());
                self.focus = *by;
                format!(
                    "watch {id} changed: {} -> {}, written by wave {by} at {} ({})",
                    bytes_hex(old),
                    bytes_hex(new),
                    self.symbolize(*pc),
                    self.inst_text(*pc)
                )
            }
            Reason::WaveEnded { wave } => format!("wave {wave} ended"),
            Reason::DispatchEnded => "every wave of the dispatch has ended".into(),
            Reason::Hook => "reached".into(),
        };
        // the watches watch for changes from the values they have here
        for (_, p) in self.points.iter_mut() {
            match p {
                Point::Reg(r) => {
                    if let Some(w) = self.session.wave(r.wave) {
                        r.value = r.reg.read(w, r.lane);
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
        let mut text = format!("{why}\n");
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
            }
        });
        let mut a = Answer::ok(text, j2);
        if let (Value::Object(stop), Value::Object(extra)) = (&mut a.json["stop"], j) {
            stop.extend(extra);
        }
        a
    }

    fn reg_watch_id(&self, index: usize) -> u32 {
        self.points
            .iter()
            .filter(|p| matches!(p.1, Point::Reg(_)))
            .nth(index)
            .map_or(0, |p| p.0)
    }

    fn mem_watch_id(&self, index: usize) -> u32 {
        self.points
            .iter()
            .filter(|p| matches!(p.1, Point::Mem(_)))
            .nth(index)
            .map_or(0, |p| p.0)
    }

    /// The breakpoints and watches as the session takes them.
    fn until(&self) -> Until {
        let mut u = Until::default();
        for (_, p) in &self.points {
            match p {
                Point::Break(a) => u.breakpoints.push(*a),
                Point::Reg(r) => u.registers.push(r.clone()),
                Point::Mem(m) => u.memory.push(m.clone()),
            }
        }
        u
    }

    fn run(&mut self, until: &Until, command: &str) -> Answer {
        match self.session.run(until) {
            Ok(r) => self.stopped(r, command),
            Err(e) => Answer::err(e.to_string()),
        }
    }

    fn running_focus(&self) -> Result<&WaveState, String> {
        let w = self.focus_state()?;
        if self.session.finished() || self.status_of(self.focus) == Status::Ended {
            return Err(format!(
                "wave {} has ended (use `wave` to choose another, or reverse-step)",
                self.focus
            ));
        }
        Ok(w)
    }

    // ---- commands ----

    fn step(&mut self, n: u64) -> Answer {
        let executed = match self.running_focus() {
            Ok(w) => w.executed,
            Err(e) => return Answer::err(e),
        };
        let until = Until {
            count: Some((self.focus, executed + n)),
            ..Until::default()
        };
        self.run(&until, "step")
    }

    fn next(&mut self) -> Answer {
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
                    ..Until::default()
                };
                self.run(&until, "next")
            }
        }
    }

    fn finish(&mut self) -> Answer {
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

    fn cont(&mut self) -> Answer {
        if self.session.finished() {
            return Answer::err("the dispatch has ended (reverse-step or reverse-continue to go back)");
        }
        let until = self.until();
        self.run(&until, "continue")
    }

    fn set_break(&mut self, rest: &str) -> Answer {
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
        let text = format!(
            "breakpoint {id} at {:#x} <{}>: {}",
            a,
            self.symbolize(a),
            self.inst_text(a)
        );
        Answer::ok(
            text,
            json!({"breakpoint": id, "pc": hex(a), "where": self.symbolize(a), "instruction": self.inst_text(a)}),
        )
    }

    fn watch(&mut self, rest: &str) -> Answer {
        if rest.is_empty() {
            return Answer::err("watch REGISTER[LANE] (v3[5], s4, vcc_lo) or watch ADDRESS[:BYTES]");
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
            let (name, lane) = match rest.split_once('[') {
                Some((n, l)) => match l.trim_end_matches(']').trim().parse::<usize>() {
                    Ok(l) if l < LANES => (n, l),
                    _ => return Answer::err(format!("`{rest}`: the lane is 0..63")),
                },
                None => (rest, 0),
            };
            let reg = match regs::parse(name).as_deref() {
                Some([r]) => *r,
                _ => {
                    return Answer::err(format!(
                        "`{name}` is not one 32-bit register (s4, v3, a0, vcc_lo, exec_hi, m0, scc)"
                    ))
                }
            };
            let w = match self.focus_state() {
                Ok(w) => w,
                Err(e) => return Answer::err(e),
            };
            Point::Reg(RegWatch {
                wave: self.focus,
                reg,
                lane,
                value: reg.read(w, lane),
            })
        };
        self.next_id += 1;
        let text = format!("watch {id}: {}", point_name(&point));
        self.points.push((id, point));
        Answer::ok(text, json!({"watch": id}))
    }

    fn address_any(&self, t: &str) -> Result<u64, String> {
        let t = t.trim();
        match t.strip_prefix("0x") {
            Some(h) => u64::from_str_radix(h, 16),
            None => t.parse(),
        }
        .map_err(|_| format!("`{t}` is not an address"))
    }

    fn delete(&mut self, rest: &str) -> Answer {
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

    fn wave(&mut self, rest: &str) -> Answer {
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

    fn waves(&self) -> Answer {
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

    fn info(&self, what: &str) -> Answer {
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
                    text += &format!("{id}: {}\n", point_name(p));
                    j.push(json!({"id": id, "what": point_name(p)}));
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

    fn reverse_step(&mut self, n: u64) -> Answer {
        let executed = match self.focus_state() {
            Ok(w) => w.executed,
            Err(e) => return Answer::err(e),
        };
        let target = executed.saturating_sub(n);
        let focus = self.focus;
        if let Err(e) = self.session.rewind() {
            return Answer::err(e.to_string());
        }
        let until = if target == 0 {
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
        let a = self.run(&until, "reverse-step");
        self.focus = focus;
        a
    }

    fn reverse_continue(&mut self) -> Answer {
        let now = self.session.at;
        let now_time = self.session.time();
        let ended = self.session.finished();
        let focus = self.focus;
        if let Err(e) = self.session.rewind() {
            return Answer::err(e.to_string());
        }
        // replay with the breakpoints and watches (watched memory as it was at the start), noting each hit
        let mut until = self.until();
        for m in until.memory.iter_mut() {
            let _ = self.session.memory().read(m.address, &mut m.bytes);
        }
        let mut last: Option<(Position, WaveKey, Reason)> = None;
        loop {
            let r = match self.session.run(&until) {
                Ok(r) => r,
                Err(e) => return Answer::err(e.to_string()),
            };
            let at = self.session.at;
            if r == Reason::DispatchEnded
                || (!ended && (at == now || at.time > now_time || (at.time == now.time && at.before == now.before)))
            {
                break;
            }
            let wave = match r {
                Reason::Memory { by, .. } => by,
                _ => at.wave,
            };
            last = Some((at, wave, r));
            let (regs, mems) = self.session.watches();
            until.registers = regs.to_vec();
            until.memory = mems.to_vec();
        }
        if let Err(e) = self.session.rewind() {
            return Answer::err(e.to_string());
        }
        match last {
            Some((p, wave, reason)) => {
                if let Err(e) = self.session.run(&Until {
                    position: Some(p),
                    ..Until::default()
                }) {
                    return Answer::err(e.to_string());
                }
                self.focus = wave;
                let mut a = self.stopped(reason, "reverse-continue");
                a.text = format!("back at the previous breakpoint or watch hit:\n{}", a.text);
                a
            }
            None => {
                let r = self.session.run(&Until {
                    position: Some(self.origin),
                    turn_of: Some(self.origin_wave),
                    ..Until::default()
                });
                self.focus = if self.origin_wave == focus {
                    focus
                } else {
                    self.origin_wave
                };
                match r {
                    Ok(_) => {
                        let mut a = self.stopped(Reason::Turn, "reverse-continue");
                        a.text = format!("no earlier breakpoint or watch hit: back at the start\n{}", a.text);
                        a
                    }
                    Err(e) => Answer::err(e.to_string()),
                }
            }
        }
    }

    fn history(&self) -> Answer {
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

    /// Runs the rest of the dispatch (what a program needs before it goes on).
    pub fn finish_dispatch(&mut self) -> Result<(), EngineError> {
        while !self.session.finished() {
            self.session.run(&Until::default())?;
        }
        Ok(())
    }

    /// The breakpoint addresses (for a code view).
    pub fn breakpoints(&self) -> Vec<u64> {
        self.points
            .iter()
            .filter_map(|p| if let Point::Break(a) = p.1 { Some(a) } else { None })
            .collect()
    }

    /// Breakpoints and watches as text lines (for a watch list).
    pub fn points_text(&self) -> Vec<String> {
        self.points
            .iter()
            .map(|(id, p)| match p {
                Point::Reg(r) => format!(
                    "{id}: {} = {:#x}",
                    point_name(p),
                    self.session.wave(r.wave).map_or(r.value, |w| r.reg.read(w, r.lane))
                ),
                _ => format!("{id}: {}", point_name(p)),
            })
            .collect()
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

fn point_name(p: &Point) -> String {
    match p {
        Point::Break(a) => format!("breakpoint at {a:#x}"),
        Point::Reg(r) if r.reg.is_vector() => format!("{}[{}] of wave {}", r.reg.name(), r.lane, r.wave),
        Point::Reg(r) => format!("{} of wave {}", r.reg.name(), r.wave),
        Point::Mem(m) => format!("{} bytes at {:#x}", m.bytes.len(), m.address),
    }
}

fn bytes_hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect::<Vec<_>>().join(" ")
}

/// Help text of the commands.
pub const HELP: &str = "\
step [N]            run the focused wave N instructions (s)
next                like step, but over a device-function call (n)
finish              run until the focused wave returns from its device function
continue            run until a breakpoint or watch hits, or the dispatch ends (c)
break PC|SYM+OFF    stop before any wave runs the instruction there (b); PC as `wavejit disasm` prints it
watch REG[LANE]     stop when the focused wave's register changes (v3[5], s4, vcc_lo, m0)
watch ADDR[:BYTES]  stop when device memory there changes
delete [N]          delete breakpoint or watch N (all without N)
print WHAT          s5, s[4:5], v3 (every lane), v3[5], a0, exec, vcc, scc, m0, pc, mode, waitcnt, regs,
                    lds ADDR [N], mem ADDR [N]; print/f (f32), /i (signed), /u, /h (f16 pair), /x (hex)
disasm [N]          N instructions either side of the PC
wave [WG:W]         show or choose the focused wave (e.g. wave 0,0,0:1)
waves               every wave: running, at barrier, ended
info kernel         the descriptor and the arguments by name; info break: breakpoints and watches
reverse-step [N]    back N instructions of the focused wave (rs)
reverse-continue    back to the previous breakpoint or watch hit (rc)
history             the stops so far
quit";

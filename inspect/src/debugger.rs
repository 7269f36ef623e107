//! The step debugger's commands over a [`Session`]: stepping (also backwards), breakpoints, watches, printing
//! a wave's state, disassembly, waves. Each command gives an [`Answer`]: text for people, and the same as a
//! JSON object for tools (`--json`).
//!
//! Every command that runs the dispatch forwards (`step`, `next`, `finish`, `continue`) stops where any wave
//! hits a breakpoint or a watch fires on the way, whichever wave the command was for; the focus then moves to
//! the wave that hit it, as gdb switches to the thread that hit a breakpoint, and the answer says so.
//!
//! Reverse execution replays the dispatch from its start ([`Session::rewind`]) to the point asked for:
//! `reverse-step N` to where the focused wave had executed N instructions fewer, or to the last breakpoint or
//! watch hit after that point (as `step N` stops at the first one going forwards); `reverse-continue` to the
//! last breakpoint or watch hit before the present point. What a replay reaches is what a forward run stopped
//! at the same point has, since every run executes the same instructions in the same order.

use serde_json::{json, Value};

use emu_core::engine::{EngineError, WaveRunner};
use emu_core::wave::{WaveState, LANES};
use isa_amdgpu::codeobj::{CodeObject, Kernel, KernelArg, KernelDescriptor};
use isa_amdgpu::table::FlowControl;
use isa_amdgpu::{decode, disasm};

use crate::help;
use crate::regs::{self, Files};
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
        let args = co.kernel_metadata(kernel).map(|m| &m.args[..]).unwrap_or_default();
        DebugInfo::new(&kernel.name, functions, args, &kernel.descriptor)
    }

    /// A kernel's information from its parts: its `functions` (name, address in the code object, size), its
    /// arguments as the metadata lists them, and its descriptor.
    pub fn new(
        kernel: &str,
        functions: Vec<(String, u64, u64)>,
        args: &[KernelArg],
        d: &KernelDescriptor,
    ) -> DebugInfo {
        let args = args
            .iter()
            .map(|a| ArgInfo {
                name: a.name.clone().unwrap_or_default(),
                type_name: a.type_name.clone().unwrap_or_default(),
                kind: a.value_kind.clone(),
                offset: a.offset,
                size: a.size,
            })
            .collect();
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
            kernel: kernel.to_string(),
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
    /// Registers of one wave, by the name the watch was set with (`v3`, `v3[5]`, `exec`): one [`RegWatch`]
    /// for each 32-bit register and lane it covers.
    Reg {
        name: String,
        wave: WaveKey,
        regs: Vec<RegWatch>,
        /// Vector registers watched in every lane (no lane given).
        every_lane: bool,
    },
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

/// A wave with its workgroup and its index in it spelled out: `wave 1,0,0:0 (workgroup 1,0,0, wave 0)`.
pub fn wave_words(k: WaveKey) -> String {
    let [x, y, z] = k.workgroup;
    format!("wave {k} (workgroup {x},{y},{z}, wave {})", k.wave)
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
        let a = d.stopped(reason, "start", wave);
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
            "help" | "h" | "?" => Ok(self.help(rest)),
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

    /// Where a code address is, as the code pane shows code: the function and offset, then the address in the
    /// code object as `wavejit disasm` prints it (`divergence+0x3c (0x1a3c)`).
    pub fn code_place(&self, a: u64) -> String {
        let code = self.session.launch().code;
        if a < code.base || a >= code.base + code.size {
            return format!("{a:#x} (outside the code object)");
        }
        let rel = a - code.base;
        match self.symbolize(a) {
            s if s == format!("{rel:#x}") => s,
            s => format!("{s} ({rel:#x})"),
        }
    }

    /// How many registers of each file the wave has.
    pub fn files(&self, w: &WaveState) -> Files {
        Files::of(self.session.launch().descriptor, w)
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

    /// The report of a stop: where, why, and the instruction about to run. A breakpoint or watch hit moves the
    /// focus to the wave that hit it; a focus other than `prev` (the focus when the command began) is
    /// announced, as gdb announces the thread it switches to.
    fn stopped(&mut self, reason: Reason, command: &str, prev: WaveKey) -> Answer {
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
    fn until(&self) -> Until {
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

    fn run(&mut self, until: &Until, command: &str) -> Answer {
        let prev = self.focus;
        match self.session.run(until) {
            Ok(r) => self.stopped(r, command, prev),
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
            ..self.until()
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
                    ..self.until()
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
        let text = format!("breakpoint {id} at {}: {}", self.code_place(a), self.inst_text(a));
        Answer::ok(
            text,
            json!({"breakpoint": id, "pc": hex(a), "where": self.symbolize(a), "offset": a.wrapping_sub(self.code_base()), "instruction": self.inst_text(a)}),
        )
    }

    fn watch(&mut self, rest: &str) -> Answer {
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

    fn reverse_step(&mut self, n: u64) -> Answer {
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

    fn reverse_continue(&mut self) -> Answer {
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

    fn help(&self, rest: &str) -> Answer {
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
    fn describe(&self, p: &Point) -> String {
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

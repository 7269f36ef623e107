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
//!
//! This module holds the debugger's state and reads command lines; `stepping` moves through the dispatch,
//! `stops` runs it to a point and reports the stop, `points` keeps breakpoints and watches, `places` finds
//! addresses, symbols and wave state, `print` prints registers and memory, `views` shows disassembly, waves,
//! `info`, `help` and the history.

use serde_json::{json, Value};

use emu_core::engine::{EngineError, WaveRunner};
use isa_amdgpu::codeobj::{CodeObject, Kernel, KernelArg, KernelDescriptor};

use crate::session::{MemWatch, Position, RegWatch, Session, Until, WaveKey};

mod places;
mod points;
mod print;
mod stepping;
mod stops;
mod views;

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

    /// Runs the rest of the dispatch (what a program needs before it goes on).
    pub fn finish_dispatch(&mut self) -> Result<(), EngineError> {
        while !self.session.finished() {
            self.session.run(&Until::default())?;
        }
        Ok(())
    }
}

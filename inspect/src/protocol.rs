//! How the debugger talks ([`talk`], the one front end of `wavejit debug` and `wavejit exec --debug`): a line
//! protocol (one command per line in, each answer out as text followed by an empty line, or as one JSON object
//! per line with `--json`) when its input or output is not a terminal, and a full-screen terminal view (code
//! around the PC, registers, the EXEC strip, lanes of the vector registers, breakpoints and watches, the last
//! answer) redrawn after every command when both are. The terminal view is plain ANSI escape sequences over a
//! line-edited prompt: an empty line repeats the last command.

use std::io::{self, BufRead, Write};

use emu_core::engine::WaveRunner;
use emu_core::wave::sreg;

use crate::debugger::{Answer, Debugger};

/// How the debugger talks to its user.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrontEnd {
    /// The full-screen terminal view.
    Terminal,
    /// The line protocol, answers as text.
    Lines,
    /// The line protocol, answers as JSON objects.
    Json,
}

/// The front end for the options and the streams: JSON when asked for; the terminal view when input and
/// output are both terminals; the line protocol otherwise.
pub fn front_end(json: bool, stdin_terminal: bool, stdout_terminal: bool) -> FrontEnd {
    if json {
        FrontEnd::Json
    } else if stdin_terminal && stdout_terminal {
        FrontEnd::Terminal
    } else {
        FrontEnd::Lines
    }
}

/// Talks to the user over the process's stdin and stdout ([`front_end`]) until input ends or `quit`.
pub fn talk<R: WaveRunner>(dbg: &mut Debugger<'_, R>, first: &Answer, json: bool) -> io::Result<()> {
    match front_end(json, is_terminal(0), is_terminal(1)) {
        FrontEnd::Terminal => terminal(dbg, first),
        f => {
            let stdin = io::stdin();
            let mut input = stdin.lock();
            serve(dbg, first, &mut input, &mut io::stdout(), f == FrontEnd::Json)
        }
    }
}

/// The line protocol: answers commands from `input` until it ends or `quit`.
pub fn serve<R: WaveRunner>(
    dbg: &mut Debugger<'_, R>,
    first: &Answer,
    input: &mut dyn BufRead,
    out: &mut dyn Write,
    json: bool,
) -> io::Result<()> {
    let emit = |out: &mut dyn Write, a: &Answer| -> io::Result<()> {
        if json {
            writeln!(out, "{}", a.json)?;
        } else {
            writeln!(out, "{}\n", a.text)?;
        }
        out.flush()
    };
    emit(out, first)?;
    let mut line = String::new();
    loop {
        line.clear();
        if input.read_line(&mut line)? == 0 {
            return Ok(());
        }
        let l = line.trim();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        let a = dbg.execute(l);
        emit(out, &a)?;
        if a.quit {
            return Ok(());
        }
    }
}

/// Whether file descriptor `fd` is a terminal.
pub fn is_terminal(fd: i32) -> bool {
    // SAFETY: isatty only inspects the descriptor.
    unsafe { libc::isatty(fd) == 1 }
}

fn terminal_size() -> (usize, usize) {
    let mut ws = libc::winsize {
        ws_row: 0,
        ws_col: 0,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: TIOCGWINSZ writes a winsize into the struct we pass.
    let ok = unsafe { libc::ioctl(1, libc::TIOCGWINSZ, &mut ws) } == 0;
    if ok && ws.ws_col > 20 && ws.ws_row > 10 {
        (ws.ws_col as usize, ws.ws_row as usize)
    } else {
        (120, 40)
    }
}

const BOLD: &str = "\x1b[1m";
const INVERSE: &str = "\x1b[7m";
const GREEN: &str = "\x1b[32m";
const DIM: &str = "\x1b[2m";
const RED: &str = "\x1b[31m";
const RESET: &str = "\x1b[0m";

fn clip(s: &str, width: usize) -> String {
    s.chars().take(width).collect()
}

/// The terminal view: redraws the screen after every command.
pub fn terminal<R: WaveRunner>(dbg: &mut Debugger<'_, R>, first: &Answer) -> io::Result<()> {
    let stdin = io::stdin();
    let mut out = io::stdout();
    let mut last = first.text.clone();
    let mut previous = String::from("step");
    let mut line = String::new();
    loop {
        draw(dbg, &last, &mut out)?;
        write!(out, "{BOLD}(wavejit){RESET} ")?;
        out.flush()?;
        line.clear();
        if stdin.lock().read_line(&mut line)? == 0 {
            writeln!(out)?;
            return Ok(());
        }
        let cmd = if line.trim().is_empty() {
            previous.clone()
        } else {
            line.trim().to_string()
        };
        let a = dbg.execute(&cmd);
        previous = cmd;
        if a.quit {
            return Ok(());
        }
        last = a.text;
    }
}

fn draw<R: WaveRunner>(dbg: &Debugger<'_, R>, last: &str, out: &mut dyn Write) -> io::Result<()> {
    let (cols, rows) = terminal_size();
    let mut s = String::from("\x1b[H\x1b[2J");
    let focus = dbg.focus;
    let state = dbg.session.wave(focus);
    let title = format!(
        " wavejit debug: {} | wave {focus} | dispatch time {} | {} ",
        dbg.session.launch().name,
        dbg.session.time(),
        state.map_or("no state".to_string(), |w| format!(
            "{} instructions executed",
            w.executed
        ))
    );
    s += &format!("{INVERSE}{}{RESET}\n", clip(&format!("{title:<cols$}"), cols));
    // code pane (left) and scalar registers (right)
    let code = dbg.disasm_view(8);
    let half = cols.saturating_sub(2) * 3 / 5;
    let mut left: Vec<String> = code.text.lines().map(|l| clip(l, half)).collect();
    left.truncate(18);
    let mut right = Vec::new();
    if let Some(w) = state {
        right.push(format!("{BOLD}scalar registers{RESET}"));
        for r in 0..6 {
            let mut l = format!("s{:<3}", r * 4);
            for i in 0..4 {
                l += &format!(" {:08x}", w.sgprs[r * 4 + i]);
            }
            right.push(l);
        }
        right.push(format!("vcc  {:016x}  scc {}", w.vcc(), w.scc as u8));
        right.push(format!("exec {:016x}  m0 {:08x}", w.exec(), w.sgprs[sreg::M0 as usize]));
        right.push(format!("{BOLD}breakpoints and watches{RESET}"));
        let pts = dbg.points_text();
        if pts.is_empty() {
            right.push(format!("{DIM}(none: break PC, watch v3[5]){RESET}"));
        }
        right.extend(pts.into_iter().take(8));
    }
    for i in 0..left.len().max(right.len()) {
        let l = left.get(i).cloned().unwrap_or_default();
        let l = if l.starts_with("=>") {
            format!("{GREEN}{BOLD}{l:<half$}{RESET}")
        } else if l.starts_with("  *") {
            format!("{RED}{l:<half$}{RESET}")
        } else {
            format!("{l:<half$}")
        };
        s += &format!("{l}  {}\n", right.get(i).cloned().unwrap_or_default());
    }
    if let Some(w) = state {
        let m = w.exec();
        s += &format!("{BOLD}EXEC{RESET} ({} of 64 lanes active)\n", m.count_ones());
        for lo in [0u32, 32] {
            s += &format!(" lanes {lo:2}-{:2} ", lo + 31);
            for l in lo..lo + 32 {
                s += if m >> l & 1 == 1 {
                    "\x1b[42m \x1b[0m"
                } else {
                    "\x1b[100m \x1b[0m"
                };
            }
            s += "\n";
        }
        let nv = w.vgprs.len().min(8);
        s += &format!("{BOLD}vector registers, lanes 0-7{RESET}\n");
        for r in 0..nv {
            let mut l = format!(" v{r:<3}");
            for lane in 0..8 {
                let mark = if m >> lane & 1 == 1 { ' ' } else { '*' };
                l += &format!(" {:08x}{mark}", w.vgprs[r][lane]);
            }
            s += &clip(&l, cols);
            s += "\n";
        }
    }
    let used = s.lines().count();
    s += &format!(
        "{INVERSE}{}{RESET}\n",
        clip(
            &format!(
                "{:<cols$}",
                " last answer (help: commands; empty line repeats the last one)"
            ),
            cols
        )
    );
    let room = rows.saturating_sub(used + 3).max(3);
    for l in last.lines().take(room) {
        s += &clip(l, cols);
        s += "\n";
    }
    out.write_all(s.as_bytes())
}

//! How the debugger talks ([`talk`], the one front end of `wavejit debug` and `wavejit exec --debug`): a line
//! protocol (one command per line in, each answer out as text followed by an empty line, or as one JSON object
//! per line with `--json`) when its input or output is not a terminal, and a full-screen terminal view (code
//! around the PC, registers, the EXEC strip, lanes of the vector registers, breakpoints and watches, the last
//! answer) redrawn after every command when both are. The terminal view is plain ANSI escape sequences over a
//! line-edited prompt: an empty line repeats the last command, and `more` shows the next page of an answer
//! longer than the room left for it. Its EXEC strip shows active and inactive lanes as different characters
//! (`#` and `.`), coloured unless `NO_COLOR` is set (<https://no-color.org>), so a screen capture or a plain
//! text log of it still shows the mask.

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

/// Whether the terminal view may colour its output, given the value of `NO_COLOR`: not when it is set to
/// anything but the empty string (<https://no-color.org>).
pub fn color_allowed(no_color: Option<&std::ffi::OsStr>) -> bool {
    no_color.is_none_or(|v| v.is_empty())
}

/// Talks to the user over the process's stdin and stdout ([`front_end`]) until input ends or `quit`.
pub fn talk<R: WaveRunner>(dbg: &mut Debugger<'_, R>, first: &Answer, json: bool) -> io::Result<()> {
    let stdin = io::stdin();
    let mut input = stdin.lock();
    let mut out = io::stdout();
    match front_end(json, is_terminal(0), is_terminal(1)) {
        FrontEnd::Terminal => {
            let color = color_allowed(std::env::var_os("NO_COLOR").as_deref());
            terminal(dbg, first, &mut input, &mut out, &terminal_size, color)
        }
        f => serve(dbg, first, &mut input, &mut out, f == FrontEnd::Json),
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

/// The size of the terminal on stdout (columns, rows); 120 by 40 when it does not say.
pub fn terminal_size() -> (usize, usize) {
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

/// The terminal view: redraws the screen after every command read from `input`, at the size `size` gives
/// then, coloured if `color`.
pub fn terminal<R: WaveRunner>(
    dbg: &mut Debugger<'_, R>,
    first: &Answer,
    input: &mut dyn BufRead,
    out: &mut dyn Write,
    size: &dyn Fn() -> (usize, usize),
    color: bool,
) -> io::Result<()> {
    let mut last = first.text.clone();
    // the first line of `last` on screen
    let mut from = 0;
    let mut previous = String::from("step");
    let mut line = String::new();
    loop {
        let (cols, rows) = size();
        let s = screen(dbg, &last, from, &View { cols, rows, color });
        let shown = s.shown;
        out.write_all(s.text.as_bytes())?;
        write!(out, "{BOLD}(wavejit){RESET} ")?;
        out.flush()?;
        line.clear();
        if input.read_line(&mut line)? == 0 {
            writeln!(out)?;
            return Ok(());
        }
        let cmd = if line.trim().is_empty() {
            previous.clone()
        } else {
            line.trim().to_string()
        };
        previous = cmd.clone();
        if cmd == "more" {
            if from + shown < last.lines().count() {
                from += shown;
            } else {
                last = "(the whole answer has been shown)".into();
                from = 0;
            }
            continue;
        }
        let a = dbg.execute(&cmd);
        if a.quit {
            return Ok(());
        }
        last = a.text;
        from = 0;
    }
}

/// The size of the terminal view and whether it is coloured.
#[derive(Debug, Clone, Copy)]
pub struct View {
    pub cols: usize,
    pub rows: usize,
    pub color: bool,
}

/// One drawing of the terminal view: the text with its escape sequences, and how many lines of the last
/// answer it shows.
pub struct Screen {
    pub text: String,
    pub shown: usize,
}

const BOLD: &str = "\x1b[1m";
const INVERSE: &str = "\x1b[7m";
const DIM: &str = "\x1b[2m";
const RESET: &str = "\x1b[0m";
// colours, only when the view is coloured
const GREEN: &str = "\x1b[32m";
const RED: &str = "\x1b[31m";
const ACTIVE: &str = "\x1b[30;42m";
const INACTIVE: &str = "\x1b[90m";

fn clip(s: &str, width: usize) -> String {
    s.chars().take(width).collect()
}

/// The terminal view of the debugger's state with the last answer from its line `from` on (as many lines as
/// fit; a last line says how to see more when they do not all fit).
pub fn screen<R: WaveRunner>(dbg: &Debugger<'_, R>, last: &str, from: usize, view: &View) -> Screen {
    let View { cols, rows, color } = *view;
    let paint = |c: &'static str| if color { c } else { "" };
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
        let sgprs = (dbg.files(w).sgprs as usize).min(24);
        right.push(format!("{BOLD}scalar registers{RESET}"));
        for first in (0..sgprs).step_by(4) {
            let mut l = format!("s{first:<3}");
            for v in &w.sgprs[first..(first + 4).min(sgprs)] {
                l += &format!(" {v:08x}");
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
            format!("{}{BOLD}{l:<half$}{RESET}", paint(GREEN))
        } else if l.starts_with("  *") {
            format!("{}{l:<half$}{RESET}", paint(RED))
        } else {
            format!("{l:<half$}")
        };
        s += &format!("{l}  {}\n", right.get(i).cloned().unwrap_or_default());
    }
    if let Some(w) = state {
        let m = w.exec();
        s += &format!(
            "{BOLD}EXEC{RESET} ({} of 64 lanes active: # active, . inactive)\n",
            m.count_ones()
        );
        for lo in [0u32, 32] {
            s += &format!(" lanes {lo:2}-{:2} ", lo + 31);
            for l in lo..lo + 32 {
                let (c, ch) = if m >> l & 1 == 1 {
                    (ACTIVE, '#')
                } else {
                    (INACTIVE, '.')
                };
                if color {
                    s += &format!("{c}{ch}{RESET}");
                } else {
                    s.push(ch);
                }
            }
            s += "\n";
        }
        let nv = w.vgprs.len().min(8);
        s += &format!("{BOLD}vector registers, lanes 0-7{RESET} (* inactive)\n");
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
    let lines: Vec<&str> = last.lines().collect();
    let rest = lines.len().saturating_sub(from);
    let shown = if rest > room { room - 1 } else { rest };
    for l in lines.iter().skip(from).take(shown) {
        s += &clip(l, cols);
        s += "\n";
    }
    if shown < rest {
        s += &clip(
            &format!(
                "{DIM}-- lines {}-{} of {}: `more` shows the next ones --{RESET}",
                from + 1,
                from + shown,
                lines.len()
            ),
            cols + DIM.len() + RESET.len(),
        );
        s += "\n";
    }
    Screen { text: s, shown }
}

//! The debugger's commands as `help` describes them: a short list that fits a small terminal (`help`), and
//! each command on its own (`help CMD`).

/// One command: the names it answers to (the first is its name), how it is written, what it does.
pub struct Command {
    pub names: &'static [&'static str],
    pub usage: &'static str,
    pub about: &'static str,
}

/// Every command, in the order `help` lists them.
pub const COMMANDS: &[Command] = &[
    Command {
        names: &["step", "s", "stepi", "si"],
        usage: "step [N]",
        about: "Runs the focused wave N instructions (1 without N). Stops early where any wave hits a breakpoint \
                or a watch fires on the way; the focus then moves to that wave, and the answer says so.",
    },
    Command {
        names: &["next", "n", "nexti", "ni"],
        usage: "next",
        about: "Like step 1, but runs a device-function call to its return. Stops early at breakpoints and \
                watches, as step does.",
    },
    Command {
        names: &["finish", "fin"],
        usage: "finish",
        about: "Runs until the focused wave returns from the device function it is in. Stops early at \
                breakpoints and watches, as step does.",
    },
    Command {
        names: &["continue", "c", "cont"],
        usage: "continue",
        about: "Runs until any wave hits a breakpoint or a watch fires, or the dispatch ends. The focus moves to \
                the wave that hit it (workgroup and wave are named).",
    },
    Command {
        names: &["break", "b"],
        usage: "break WHERE",
        about: "Stops before any wave runs the instruction at WHERE: SYMBOL, SYMBOL+OFFSET (divergence+0x3c) or \
                an address as `wavejit disasm` prints it (0x1a3c). Breakpoints show as SYMBOL+OFFSET. Without \
                WHERE: the breakpoints and watches.",
    },
    Command {
        names: &["watch"],
        usage: "watch REG|ADDR",
        about: "watch REG[LANE]: stops when the focused wave's register changes: v3[5] (one lane), v3 (any \
                lane), s4, exec, vcc, vcc_lo, m0, scc, or as rocgdb writes them ($v3, $exec). watch ADDR[:BYTES]: \
                stops when those bytes of device memory change (4 without BYTES, up to 256). The stop names \
                the instruction that changed them and the wave that ran it.",
    },
    Command {
        names: &["delete", "d"],
        usage: "delete [N]",
        about: "Deletes breakpoint or watch N; every one without N.",
    },
    Command {
        names: &["print", "p"],
        usage: "print[/F] WHAT",
        about: "WHAT: s5, s[4:5], v3 (every lane), v3[5], a0, exec, vcc, scc, m0, pc, flat_scratch, xnack_mask, \
                each also as rocgdb writes it ($v3, $exec, $s5, $a2); mode, waitcnt, regs; lds ADDR [N], mem \
                ADDR [N] (N dwords). /F: x (hex), f (f32), i or d (signed), u (unsigned), h (two f16). A register \
                the wave does not have is an error that says how many of that kind it has.",
    },
    Command {
        names: &["x"],
        usage: "x[/F] ADDR [N]",
        about: "print mem ADDR N: N dwords (8 without N) of device memory.",
    },
    Command {
        names: &["disasm", "disassemble", "list", "l"],
        usage: "disasm [N]",
        about: "N instructions (7 without N) either side of the focused wave's PC; => marks the PC, * a \
                breakpoint.",
    },
    Command {
        names: &["wave"],
        usage: "wave [WAVE]",
        about: "Shows the focused wave, or chooses it: wave 0,0,0:1 (workgroup 0,0,0, wave 1), wave 1:0 \
                (workgroup 1), wave 2 (workgroup 0).",
    },
    Command {
        names: &["waves", "info-waves"],
        usage: "waves",
        about: "Every wave of the dispatch: not started, running, at barrier or ended; * marks the focused one.",
    },
    Command {
        names: &["info"],
        usage: "info WHAT",
        about: "info kernel: the descriptor and the arguments by name. info break: the breakpoints (as \
                SYMBOL+OFFSET) and watches. info registers: print regs. info waves: waves.",
    },
    Command {
        names: &["reverse-step", "rs", "reverse-stepi", "rsi"],
        usage: "reverse-step [N]",
        about: "Goes back N instructions of the focused wave (1 without N), stopping early, as step does going \
                forwards, at the last breakpoint or watch hit on the way.",
    },
    Command {
        names: &["reverse-continue", "rc"],
        usage: "reverse-continue",
        about: "Goes back to the previous breakpoint or watch hit, or to the start.",
    },
    Command {
        names: &["history"],
        usage: "history",
        about: "The stops so far, with the dispatch time and the wave of each.",
    },
    Command {
        names: &["help", "h", "?"],
        usage: "help [CMD]",
        about: "The commands; help CMD: one of them.",
    },
    Command {
        names: &["quit", "q", "exit"],
        usage: "quit",
        about: "Ends the session; the dispatch then runs to its end.",
    },
];

/// Columns of the short list, and the width of each.
const COLUMNS: usize = 3;
const WIDTH: usize = 25;

/// The short list: every command on a few lines (at most 78 columns).
pub fn summary() -> String {
    let mut text = String::from("commands (help CMD tells more of one; short names in brackets):\n");
    for row in COMMANDS.chunks(COLUMNS) {
        let mut line = String::from(" ");
        for c in row {
            let short = c.names[1..].iter().filter(|n| !n.contains('-')).min_by_key(|n| n.len());
            let entry = match short {
                Some(short) => format!("{} ({short})", c.usage),
                None => c.usage.to_string(),
            };
            line += &format!(" {entry:<w$}", w = WIDTH - 1);
        }
        text += line.trim_end();
        text += "\n";
    }
    text += "registers: s5 v3 v3[5] a0 exec vcc m0 scc pc, also as rocgdb names them: $v3\n";
    text += "terminal view: an empty line repeats a command; `more` pages a long answer";
    text
}

/// `help CMD`: the command's usage, its other names, and what it does (wrapped at 78 columns).
pub fn about(name: &str) -> Result<String, String> {
    let c = COMMANDS.iter().find(|c| c.names.contains(&name)).ok_or_else(|| {
        format!(
            "no command `{name}` (commands: {})",
            COMMANDS.iter().map(|c| c.names[0]).collect::<Vec<_>>().join(", ")
        )
    })?;
    let mut text = c.usage.to_string();
    if c.names.len() > 1 {
        text += &format!("  (also {})", c.names[1..].join(", "));
    }
    text += "\n";
    let mut line = String::from(" ");
    for word in c.about.split_whitespace() {
        if line.len() + 1 + word.len() > 78 {
            text += &line;
            text += "\n";
            line = String::from(" ");
        }
        line += " ";
        line += word;
    }
    text += &line;
    Ok(text)
}

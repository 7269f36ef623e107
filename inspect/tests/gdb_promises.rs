//! gdb's promises, in scripted sessions on the bundled kernels on the interpreter and on the JIT: no wave runs
//! past a breakpoint unnoticed (stepping or continuing, forwards or backwards), rocgdb's register names,
//! breakpoints shown as kernel offsets, registers a wave does not have refused, and a terminal view that reads
//! without colour, fits a 50-row terminal and pages long answers.

mod common;

use serde_json::Value;

use common::{listing, on_both_engines, same, setup, upload, Snapshot};
use emu_core::dispatch::DispatchShape;
use emu_core::engine::{KernelDispatch, Limits};
use emu_core::kernarg::ArgValue;
use emu_core::memory::DeviceMemory;
use inspect::protocol::{self, FrontEnd, View};
use inspect::WaveKey;
use isa_amdgpu::codeobj::CodeObject;

/// The instructions of one function of the code object: (offset in the code object, text).
fn function_listing(co: &CodeObject, name: &str) -> Vec<(u64, String)> {
    let f = co.functions.iter().find(|f| f.name == name).unwrap();
    listing(co)
        .into_iter()
        .filter(|(a, _)| *a >= f.address && *a < f.address + f.size)
        .collect()
}

/// The divergent kernel over `n` work-items in workgroups of `block`.
fn divergence(n: usize, block: u32, f: &mut dyn FnMut(&KernelDispatch<'_>, &CodeObject)) {
    let (dev, co) = setup("divergence", "gfx90a");
    let mem = DeviceMemory::new(dev.memory_bytes).unwrap();
    let seeds: Vec<u8> = (0..n as u32)
        .flat_map(|i| (i.wrapping_mul(2_654_435_761) % 5000).to_le_bytes())
        .collect();
    let out = upload(&mem, &vec![0u8; n * 8], "out");
    let ds = upload(&mem, &seeds, "seed");
    let shape = DispatchShape::new([n as u32, 1, 1], [block, 1, 1], dev).unwrap();
    let args = [ArgValue::Pointer(out), ArgValue::Pointer(ds), ArgValue::U32(n as u32)];
    let d = KernelDispatch {
        mem: &mem,
        device: dev,
        co: &co,
        kernel: &co.kernels[0],
        shape,
        args: &args,
        limits: Limits::default(),
    };
    f(&d, &co);
}

fn wave(text: &str) -> WaveKey {
    text.parse().unwrap()
}

fn hex_value(v: &Value) -> u64 {
    u64::from_str_radix(v.as_str().unwrap().trim_start_matches("0x"), 16).unwrap()
}

#[test]
fn step_next_and_continue_stop_where_any_wave_hits_a_breakpoint_and_reverse_steps_stop_there_too() {
    // 200 work-items in workgroups of 128: two waves in each of two workgroups
    divergence(200, 128, &mut |d, co| {
        let code = function_listing(co, "divergence");
        let test = code
            .iter()
            .find(|(_, t)| t.starts_with("s_and_saveexec_b64"))
            .expect("the kernel tests i < n")
            .0;
        let stores: Vec<u64> = code
            .iter()
            .filter(|(_, t)| t.starts_with("global_store_dwordx2"))
            .map(|c| c.0)
            .collect();
        let mut pictures: Vec<Vec<Snapshot>> = Vec::new();
        on_both_engines(d, co, wave("0,0,0:0"), &mut |engine, dbg| {
            let mut seen = Vec::new();
            // the focus on a wave that has not run yet: the wave before it in the workgroup runs first, into
            // the breakpoint
            dbg.cmd("wave 0,0,0:1");
            dbg.cmd(&format!("break {test:#x}"));
            let a = dbg.answer("step 3");
            let s = &a.json["stop"];
            assert_eq!(s["reason"], "breakpoint", "{engine}: {}", a.text);
            assert_eq!(s["hit_by"]["wave"], "0,0,0:0", "{engine}");
            assert_eq!(s["hit_by"]["workgroup"], serde_json::json!([0, 0, 0]), "{engine}");
            assert_eq!(s["hit_by"]["index"], 0, "{engine}");
            assert_eq!(
                s["wave"], "0,0,0:0",
                "{engine}: the focus moves to the wave that hit it"
            );
            assert_eq!(s["focus_switched"], true, "{engine}");
            assert_eq!(s["previous_focus"], "0,0,0:1", "{engine}");
            assert!(
                a.text
                    .starts_with("[switching to wave 0,0,0:0 (workgroup 0,0,0, wave 0)]\nbreakpoint 1 at divergence+"),
                "{engine}: {}",
                a.text
            );
            assert!(
                a.text.contains(", hit by wave 0,0,0:0 (workgroup 0,0,0, wave 0)"),
                "{engine}: {}",
                a.text
            );
            assert_eq!(dbg.state().pc, test, "{engine}");
            // wave 0 goes on to its end (it tests i < n once)
            let s = dbg.cmd("step 100000");
            assert_eq!(s["stop"]["reason"], "wave_ended", "{engine}: {s}");
            // the focused wave stops at its own breakpoint, however many instructions step asks for
            dbg.cmd("wave 0,0,0:1");
            let s = dbg.cmd("step 100000");
            assert_eq!(s["stop"]["reason"], "breakpoint", "{engine}: {s}");
            assert_eq!(s["stop"]["wave"], "0,0,0:1", "{engine}");
            assert_eq!(s["stop"]["focus_switched"], false, "{engine}");
            assert_eq!(dbg.state().pc, test, "{engine}");
            // continue: the first wave of the next workgroup is the next to reach it
            let s = dbg.cmd("continue");
            assert_eq!(s["stop"]["reason"], "breakpoint", "{engine}: {s}");
            assert_eq!(s["stop"]["wave"], "1,0,0:0", "{engine}");
            assert_eq!(
                s["stop"]["hit_by"]["workgroup"],
                serde_json::json!([1, 0, 0]),
                "{engine}"
            );
            assert_eq!(s["stop"]["previous_focus"], "0,0,0:1", "{engine}");
            let at_test = dbg.state();
            seen.push(at_test.clone());
            // next for a wave whose turn has not come: the wave before it hits a store's breakpoint first
            for pc in &stores {
                dbg.cmd(&format!("break {pc:#x}"));
            }
            dbg.cmd("wave 1,0,0:1");
            let s = dbg.cmd("next");
            assert_eq!(s["stop"]["reason"], "breakpoint", "{engine}: {s}");
            assert_eq!(s["stop"]["hit_by"]["wave"], "1,0,0:0", "{engine}");
            assert!(stores.contains(&dbg.state().pc), "{engine}: {s}");
            seen.push(dbg.state());
            // going back: the hit before, in the state the forward run had there
            let s = dbg.cmd("reverse-continue");
            assert_eq!(s["stop"]["reason"], "breakpoint", "{engine}: {s}");
            same(&dbg.state(), &at_test, &format!("{engine}: reverse-continue"));
            // reverse-step N stops at a hit on the way back, as step N does going forwards
            dbg.cmd("step 3");
            let a = dbg.answer("reverse-step 5");
            assert_eq!(a.json["stop"]["reason"], "breakpoint", "{engine}: {}", a.text);
            assert!(a.text.starts_with("stopped on the way back"), "{engine}: {}", a.text);
            same(
                &dbg.state(),
                &at_test,
                &format!("{engine}: reverse-step 5 stops at the breakpoint 3 instructions back"),
            );
            let s = dbg.cmd("reverse-step 2");
            assert_eq!(s["stop"]["reason"], "step", "{engine}: no hit between: {s}");
            assert_eq!(dbg.state().executed, at_test.executed - 2, "{engine}");
            seen.push(dbg.state());
            let s = dbg.cmd("step 5");
            assert_eq!(s["stop"]["reason"], "breakpoint", "{engine}: {s}");
            same(
                &dbg.state(),
                &at_test,
                &format!("{engine}: stepping forwards again stops at the breakpoint, in the same state"),
            );
            pictures.push(seen);
        });
        for (k, (a, b)) in pictures[0].iter().zip(&pictures[1]).enumerate() {
            same(&a.contents(), &b.contents(), &format!("stop {k}: interpreter and JIT"));
        }
    });
}

#[test]
fn rocgdbs_register_names_print_and_watch_the_registers_the_disassembler_names() {
    divergence(100, 64, &mut |d, co| {
        on_both_engines(d, co, wave("0,0,0:0"), &mut |engine, dbg| {
            dbg.cmd("step 20");
            for (rocgdb, plain) in [
                ("$v3", "v3"),
                ("$v3[5]", "v3[5]"),
                ("$exec", "exec"),
                ("$exec_hi", "exec_hi"),
                ("$s5", "s5"),
                ("$s[4:5]", "s[4:5]"),
                ("$vcc", "vcc"),
                ("$vcc_lo", "vcc_lo"),
                ("$pc", "pc"),
                ("$m0", "m0"),
                ("$scc", "scc"),
                ("$flat_scratch", "flat_scratch"),
                ("$mode", "mode"),
                ("$a2", "a2"),
            ] {
                let (r, p) = (
                    dbg.answer(&format!("print {rocgdb}")),
                    dbg.answer(&format!("print/u {plain}")),
                );
                let r2 = dbg.answer(&format!("print/u {rocgdb}"));
                assert_eq!(r2.text, p.text, "{engine}: print/u {rocgdb} is print/u {plain}");
                assert_eq!(r2.json, p.json, "{engine}: {rocgdb}");
                if rocgdb != "$a2" {
                    assert_eq!(r.json["ok"], true, "{engine}: print {rocgdb}: {}", r.text);
                }
            }
            let s = dbg.answer("print $status");
            assert_eq!(s.json["ok"], false, "{engine}");
            assert!(s.text.contains("print scc"), "{engine}: {}", s.text);
            // a watch by rocgdb's name: EXEC (both halves) changes where the wave's lanes part ways
            dbg.cmd("watch $exec");
            let i = dbg.cmd("info breakpoints");
            assert_eq!(i["points"][0]["what"], "exec of wave 0,0,0:0", "{engine}: {i}");
            let s = dbg.cmd("continue");
            assert_eq!(s["stop"]["reason"], "watch", "{engine}: {s}");
            let changed_at = hex_value(&s["stop"]["changed_at"]) - dbg.state_code_base();
            let text = &listing(co).into_iter().find(|(a, _)| *a == changed_at).unwrap().1;
            assert!(text.contains("exec"), "{engine}: `{text}` writes EXEC");
            let exec = hex_value(&dbg.cmd("print $exec")["value"]);
            let half = if s["stop"]["register"] == "exec_lo" {
                exec as u32
            } else {
                (exec >> 32) as u32
            };
            assert_eq!(s["stop"]["new"], half, "{engine}: {s}");
            // a vector register in one lane and in every lane
            dbg.cmd("delete");
            dbg.cmd("watch $v2[7]");
            dbg.cmd("watch $v2");
            let i = dbg.cmd("info breakpoints");
            assert_eq!(i["points"][0]["what"], "v2[7] of wave 0,0,0:0", "{engine}: {i}");
            assert_eq!(
                i["points"][1]["what"], "v2 (every lane) of wave 0,0,0:0",
                "{engine}: {i}"
            );
        });
    });
}

#[test]
fn registers_beyond_what_the_wave_has_are_errors_that_say_how_many_it_has() {
    let (dev, co) = setup("mfma", "gfx90a");
    let mem = DeviceMemory::new(dev.memory_bytes).unwrap();
    let kernel = co.kernels.iter().find(|k| k.name == "mfma_f16").unwrap();
    let kd = &kernel.descriptor;
    let (vgprs, agprs, sgprs) = (
        kd.vgpr_alloc_count(),
        kd.agpr_alloc_count().unwrap(),
        kd.sgpr_alloc_count().unwrap(),
    );
    assert!(agprs > 2, "the MFMA kernel has AGPRs");
    let a = upload(&mem, &[0x3c; 64 * 8], "a");
    let b = upload(&mem, &[0x3c; 64 * 8], "b");
    let c = upload(&mem, &[0; 64 * 64], "c");
    let args = [ArgValue::Pointer(a), ArgValue::Pointer(b), ArgValue::Pointer(c)];
    let d = KernelDispatch {
        mem: &mem,
        device: dev,
        co: &co,
        kernel,
        shape: DispatchShape::new([64, 1, 1], [64, 1, 1], dev).unwrap(),
        args: &args,
        limits: Limits::default(),
    };
    on_both_engines(&d, &co, wave("0"), &mut |engine, dbg| {
        dbg.cmd("step 40");
        // the last of each file is there; rocgdb's $a2 is a2
        for r in [
            format!("v{}", vgprs - 1),
            format!("a{}", agprs - 1),
            format!("s{}", sgprs - 1),
        ] {
            dbg.cmd(&format!("print {r}"));
        }
        assert_eq!(dbg.cmd("print $a2"), dbg.cmd("print a2"), "{engine}");
        for (what, want) in [
            (
                format!("print v{vgprs}"),
                format!("the wave has {vgprs} VGPRs (v0-v{},", vgprs - 1),
            ),
            (
                format!("print $v{vgprs}[3]"),
                format!("the wave has {vgprs} VGPRs (v0-v{},", vgprs - 1),
            ),
            (
                format!("print v[{}:{}]", vgprs - 1, vgprs),
                format!("the wave has {vgprs} VGPRs"),
            ),
            (
                format!("print a{agprs}"),
                format!("the wave has {agprs} AGPRs (a0-a{},", agprs - 1),
            ),
            (
                format!("print s{sgprs}"),
                format!("the wave has {sgprs} SGPRs (s0-s{},", sgprs - 1),
            ),
            (format!("watch v{vgprs}[0]"), format!("the wave has {vgprs} VGPRs")),
            (format!("watch $a{agprs}"), format!("the wave has {agprs} AGPRs")),
        ] {
            let a = dbg.answer(&what);
            assert_eq!(a.json["ok"], false, "{engine}: `{what}` is refused: {}", a.text);
            assert!(a.text.contains(&want), "{engine}: `{what}`: {}", a.text);
        }
    });
    // a kernel without AGPRs has none to print
    divergence(64, 64, &mut |d, co| {
        on_both_engines(d, co, wave("0"), &mut |engine, dbg| {
            let a = dbg.answer("print a0");
            assert!(a.text.contains("the wave has no AGPRs"), "{engine}: {}", a.text);
        });
    });
}

#[test]
fn breakpoints_show_as_kernel_offsets_in_the_confirmation_the_list_and_the_terminal_view() {
    divergence(100, 64, &mut |d, co| {
        let f = co.functions.iter().find(|f| f.name == "divergence").unwrap();
        let (pc, text) = function_listing(co, "divergence")
            .into_iter()
            .find(|(_, t)| t.starts_with("s_and_saveexec_b64"))
            .unwrap();
        let place = format!("divergence+{:#x} ({pc:#x})", pc - f.address);
        on_both_engines(d, co, wave("0"), &mut |engine, dbg| {
            let device = format!("{:#x}", dbg.state_code_base() + pc);
            let a = dbg.answer(&format!("break {pc:#x}"));
            assert_eq!(a.text, format!("breakpoint 1 at {place}: {text}"), "{engine}");
            assert_eq!(a.json["offset"], pc, "{engine}");
            let i = dbg.answer("info breakpoints");
            assert_eq!(i.text, format!("1: breakpoint at {place}"), "{engine}");
            assert_eq!(
                i.json["points"][0]["where"],
                format!("divergence+{:#x}", pc - f.address)
            );
            let view = View {
                cols: 120,
                rows: 50,
                color: false,
            };
            let screen = dbg.screen("", 0, &view).text;
            assert!(
                screen.contains(&format!("1: breakpoint at {place}")),
                "{engine}: {screen}"
            );
            assert!(!screen.contains(&device), "{engine}: {screen}");
        });
    });
}

/// The SGR parameters of every `ESC [ ... m` sequence in `s`.
fn sgr_codes(s: &str) -> Vec<String> {
    s.split("\x1b[")
        .skip(1)
        .filter_map(|p| {
            let end = p.find(|c: char| c.is_ascii_alphabetic())?;
            (p.as_bytes()[end] == b'm').then(|| p[..end].to_string())
        })
        .collect()
}

/// `s` without its escape sequences.
fn plain_text(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find("\x1b[") {
        out += &rest[..i];
        let after = &rest[i + 2..];
        let end = after
            .find(|c: char| c.is_ascii_alphabetic())
            .map_or(after.len(), |e| e + 1);
        rest = &after[end..];
    }
    out + rest
}

#[test]
fn the_exec_strip_shows_lanes_as_characters_with_colour_or_without_and_no_color_turns_colour_off() {
    use std::ffi::OsStr;
    assert!(protocol::color_allowed(None));
    assert!(
        protocol::color_allowed(Some(OsStr::new(""))),
        "an empty NO_COLOR is not set"
    );
    for v in ["1", "0", "yes"] {
        assert!(!protocol::color_allowed(Some(OsStr::new(v))), "NO_COLOR={v}");
    }
    // workgroup 1 of 100 work-items in blocks of 64: 36 lanes
    divergence(100, 64, &mut |d, co| {
        on_both_engines(d, co, wave("1,0,0:0"), &mut |engine, dbg| {
            let exec = hex_value(&dbg.cmd("print exec")["value"]);
            assert_eq!(exec, (1 << 36) - 1, "{engine}");
            let row = |lo: u32| -> String {
                (lo..lo + 32)
                    .map(|l| if exec >> l & 1 == 1 { '#' } else { '.' })
                    .collect()
            };
            let strip = [format!(" lanes  0-31 {}", row(0)), format!(" lanes 32-63 {}", row(32))];
            let mut view = View {
                cols: 120,
                rows: 50,
                color: false,
            };
            let plain = dbg.screen("", 0, &view).text;
            for l in &strip {
                assert!(plain.lines().any(|x| x == l), "{engine}: `{l}` in\n{plain}");
            }
            for code in sgr_codes(&plain) {
                assert!(
                    code.split(';').all(|p| ["0", "1", "2", "7"].contains(&p)),
                    "{engine}: a colour ({code}) without colour"
                );
            }
            view.color = true;
            let coloured = dbg.screen("", 0, &view).text;
            assert!(
                sgr_codes(&coloured).iter().any(|c| c.contains("42")),
                "{engine}: active lanes are green"
            );
            let text = plain_text(&coloured);
            for l in &strip {
                assert!(text.lines().any(|x| x == l), "{engine}: `{l}` in the coloured view too");
            }
        });
    });
}

#[test]
fn help_fits_a_50_row_terminal_help_cmd_tells_each_command_and_long_answers_page() {
    divergence(100, 64, &mut |d, co| {
        on_both_engines(d, co, wave("0"), &mut |engine, dbg| {
            let view = View {
                cols: 80,
                rows: 50,
                color: false,
            };
            let help = dbg.cmd("help")["help"].as_str().unwrap().to_string();
            let s = dbg.screen(&help, 0, &view);
            assert_eq!(
                s.shown,
                help.lines().count(),
                "{engine}: the whole list is on screen:\n{}",
                s.text
            );
            assert!(
                s.text.lines().count() < 50,
                "{engine}: and the screen leaves a row for the prompt"
            );
            assert!(help.lines().all(|l| l.chars().count() <= 80), "{engine}: {help}");
            for c in inspect::help::COMMANDS {
                for name in c.names {
                    let h = dbg.cmd(&format!("help {name}"));
                    assert!(
                        h["help"].as_str().unwrap().starts_with(c.usage),
                        "{engine}: help {name}"
                    );
                    assert!(help.contains(c.usage), "{engine}: `{}` in the list", c.usage);
                }
                if c.names[0] != "quit" {
                    let a = dbg.answer(c.names[0]);
                    assert!(!a.text.contains("unknown command"), "{engine}: {}", c.names[0]);
                }
            }
            let a = dbg.answer("help bogus");
            assert!(a.text.contains("no command `bogus`"), "{engine}: {}", a.text);
            // a long answer pages in the terminal view: `more` shows the next lines
            let out = dbg.terminal("disasm 40\nmore\nquit\n", (80, 50), false);
            let pages: Vec<&str> = out.split("\x1b[H\x1b[2J").filter(|p| !p.is_empty()).collect();
            assert_eq!(pages.len(), 3, "{engine}: the first answer, disasm, its second page");
            let footer = |p: &str| {
                p.lines()
                    .find(|l| l.contains("`more` shows the next ones"))
                    .map(plain_text)
            };
            let first = footer(pages[1]).expect("disasm 40 is longer than the room");
            assert!(first.starts_with("-- lines 1-"), "{engine}: {first}");
            let n: usize = first["-- lines 1-".len()..].split(' ').next().unwrap().parse().unwrap();
            let disasm: Vec<String> = dbg.answer("disasm 40").text.lines().map(String::from).collect();
            assert!(
                pages[1].contains(&disasm[n - 1]) && !pages[1].contains(&disasm[n]),
                "{engine}"
            );
            assert!(
                pages[2].contains(&disasm[n]),
                "{engine}: `more` goes on from line {}",
                n + 1
            );
        });
    });
}

#[test]
fn the_front_end_is_json_when_asked_the_terminal_view_on_terminals_and_lines_otherwise() {
    assert_eq!(protocol::front_end(true, true, true), FrontEnd::Json);
    assert_eq!(protocol::front_end(true, false, false), FrontEnd::Json);
    assert_eq!(protocol::front_end(false, true, true), FrontEnd::Terminal);
    assert_eq!(protocol::front_end(false, false, true), FrontEnd::Lines);
    assert_eq!(protocol::front_end(false, true, false), FrontEnd::Lines);
}

//! `print` and `x`: registers of the focused wave by the disassembler's or rocgdb's names (refused past what
//! the wave has), the EXEC and VCC masks lane by lane, MODE, the wait counters, LDS and device memory, in the
//! formats of `print/FMT`.

use serde_json::json;

use emu_core::engine::WaveRunner;
use emu_core::wave::{sreg, LANES};

use super::{hex, Answer, Debugger};
use crate::regs;

impl<R: WaveRunner> Debugger<'_, R> {
    pub(super) fn print(&self, what: &str, fmt: &str) -> Answer {
        let what = what.trim();
        // rocgdb's names are the same registers after a `$`
        let what = what.strip_prefix('$').unwrap_or(what);
        let (target, arg) = what
            .split_once(char::is_whitespace)
            .map_or((what, ""), |(a, b)| (a, b.trim()));
        let r = match target.to_ascii_lowercase().as_str() {
            "" | "regs" | "registers" => self.print_regs(),
            "lds" | "mem" | "memory" => self.print_memory(target == "lds", arg, fmt),
            "pc" => self.focus_state().map(|w| Answer::ok(format!("pc = {:#x} <{}>", w.pc, self.symbolize(w.pc)), json!({"pc": hex(w.pc), "where": self.symbolize(w.pc)}))),
            "mode" => self.print_mode(),
            "waitcnt" | "wait" => Ok(Answer::ok(
                "vmcnt 0, lgkmcnt 0, expcnt 0: in the functional model every memory operation completes when it issues, so no wait counter has \
                 anything outstanding (the timing model, `--timing`, keeps them)"
                    .into(),
                json!({"vmcnt": 0, "lgkmcnt": 0, "expcnt": 0}),
            )),
            "exec" | "vcc" => self.focus_state().map(|w| {
                let m = if target.eq_ignore_ascii_case("exec") { w.exec() } else { w.vcc() };
                let name = target.to_ascii_lowercase();
                Answer::ok(format!("{name} = {m:#018x} ({} of 64 lanes)\n{}", m.count_ones(), lane_strip(m)), json!({"register": name, "value": hex(m), "lanes": m.count_ones()}))
            }),
            _ => self.print_reg(what, fmt),
        };
        r.unwrap_or_else(Answer::err)
    }

    fn print_regs(&self) -> Result<Answer, String> {
        let w = self.focus_state()?;
        let n = self.files(w).sgprs as usize;
        let mut text = String::new();
        for (i, chunk) in w.sgprs[..n].chunks(8).enumerate() {
            text += &format!("s{:<3}", i * 8);
            for v in chunk {
                text += &format!(" {v:08x}");
            }
            text += "\n";
        }
        text += &format!(
            "vcc {:016x}  exec {:016x}  m0 {:08x}  scc {}  pc {:#x} <{}>\nexec {}",
            w.vcc(),
            w.exec(),
            w.sgprs[sreg::M0 as usize],
            w.scc as u8,
            w.pc,
            self.symbolize(w.pc),
            lane_strip(w.exec())
        );
        let j = json!({"sgprs": w.sgprs[..n], "vcc": hex(w.vcc()), "exec": hex(w.exec()), "m0": w.sgprs[sreg::M0 as usize], "scc": w.scc, "pc": hex(w.pc), "vgprs": w.vgprs.len(), "agprs": w.agprs.len()});
        Ok(Answer::ok(text, j))
    }

    fn print_mode(&self) -> Result<Answer, String> {
        let d = &self.session.launch().descriptor.rsrc1;
        // MODE: FP_ROUND 3:0, FP_DENORM 7:4, DX10_CLAMP 8, IEEE 9 (the descriptor's initial values)
        let mode = d.float_round_mode_32 as u32
            | (d.float_round_mode_16_64 as u32) << 2
            | (d.float_denorm_mode_32 as u32) << 4
            | (d.float_denorm_mode_16_64 as u32) << 6
            | (d.enable_dx10_clamp as u32) << 8
            | (d.enable_ieee_mode as u32) << 9;
        let text = format!(
            "mode = {mode:#x}: round f32 {}, round f16/f64 {}, denormals f32 {:?}, f16/f64 {:?}, dx10_clamp {}, ieee {} (from the kernel descriptor; the engine computes with round-to-nearest-even and denormals kept)",
            d.float_round_mode_32, d.float_round_mode_16_64, d.float_denorm_mode_32, d.float_denorm_mode_16_64, d.enable_dx10_clamp as u8, d.enable_ieee_mode as u8
        );
        Ok(Answer::ok(text, json!({"mode": mode})))
    }

    fn print_reg(&self, what: &str, fmt: &str) -> Result<Answer, String> {
        let (name, lane) = match what.split_once('[') {
            // `v3[5]` a lane; `v[2:3]` a range
            Some((n, l)) if n.len() > 1 => {
                let l: usize = l
                    .trim_end_matches(']')
                    .trim()
                    .parse()
                    .map_err(|_| format!("`{what}`: the lane is 0..63"))?;
                if l >= LANES {
                    return Err(format!("`{what}`: the lane is 0..63"));
                }
                (n, Some(l))
            }
            _ => (what, None),
        };
        if let Some(why) = regs::not_shown(name) {
            return Err(format!("`{name}`: {why}"));
        }
        let regs = regs::parse(name).ok_or_else(|| {
            format!("`{what}`: not a register, `lds ADDR [N]`, `mem ADDR [N]`, exec, vcc, scc, m0, pc, mode or waitcnt")
        })?;
        let w = self.focus_state()?;
        let files = self.files(w);
        for r in &regs {
            files.check(*r)?;
        }
        let exec = w.exec();
        let mut text = String::new();
        let mut j = Vec::new();
        for r in &regs {
            if r.is_vector() {
                let values: Vec<u32> = (0..LANES).map(|l| r.read(w, l)).collect();
                match lane {
                    Some(l) => {
                        text += &format!("{}[{l}] = {}\n", r.name(), all_formats(values[l]));
                        j.push(
                            json!({"register": r.name(), "lane": l, "value": values[l], "active": exec >> l & 1 == 1}),
                        );
                    }
                    None => {
                        text += &format!(
                            "{} ({} format; lanes marked * are inactive in EXEC):\n",
                            r.name(),
                            fmt_name(fmt)
                        );
                        for (row, chunk) in values.chunks(8).enumerate() {
                            text += &format!("  [{:2}]", row * 8);
                            for (i, v) in chunk.iter().enumerate() {
                                let l = row * 8 + i;
                                let mark = if exec >> l & 1 == 1 { ' ' } else { '*' };
                                text += &format!(" {:>12}{mark}", format_value(*v, fmt));
                            }
                            text += "\n";
                        }
                        j.push(json!({"register": r.name(), "lanes": values, "exec": hex(exec)}));
                    }
                }
            } else {
                let v = r.read(w, 0);
                text += &format!("{} = {}\n", r.name(), all_formats(v));
                j.push(json!({"register": r.name(), "value": v}));
            }
        }
        if regs.len() == 2 && !regs[0].is_vector() {
            let v = regs[0].read(w, 0) as u64 | (regs[1].read(w, 0) as u64) << 32;
            text += &format!("{name} = {v:#018x} ({v}; as f64 {})\n", f64::from_bits(v));
        }
        Ok(Answer::ok(text.trim_end().to_string(), json!({"values": j})))
    }

    fn print_memory(&self, lds: bool, arg: &str, fmt: &str) -> Result<Answer, String> {
        let mut it = arg.split_whitespace();
        let a = it.next().ok_or("print lds|mem ADDRESS [DWORDS]")?;
        let address = self.address_any(a)?;
        let n: usize = it
            .next()
            .map_or(Ok(8), |n| n.parse().map_err(|_| format!("`{n}` is not a count")))?;
        let n = n.clamp(1, 1024);
        let mut bytes = vec![0u8; n * 4];
        if lds {
            let l = self.session.lds();
            let end = address as usize + bytes.len();
            if end > l.len() {
                return Err(format!(
                    "LDS holds {} bytes; {address:#x}..{end:#x} is outside it",
                    l.len()
                ));
            }
            bytes.copy_from_slice(&l[address as usize..end]);
        } else {
            self.session
                .memory()
                .read(address, &mut bytes)
                .map_err(|e| e.to_string())?;
        }
        let words: Vec<u32> = bytes
            .chunks(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        let mut text = String::new();
        for (row, chunk) in words.chunks(4).enumerate() {
            text += &format!("{:#014x}:", address + row as u64 * 16);
            for v in chunk {
                text += &format!(" {:>12}", format_value(*v, fmt));
            }
            text += "\n";
        }
        Ok(Answer::ok(
            text.trim_end().to_string(),
            json!({"space": if lds { "lds" } else { "memory" }, "address": hex(address), "dwords": words}),
        ))
    }
}

/// EXEC (or any lane mask) as two rows of 32 lanes: `#` active, `.` inactive.
pub fn lane_strip(m: u64) -> String {
    let row = |lo: u32| {
        (lo..lo + 32)
            .map(|l| if m >> l & 1 == 1 { '#' } else { '.' })
            .collect::<String>()
    };
    format!("lanes  0-31 {}\nlanes 32-63 {}", row(0), row(32))
}

fn fmt_name(f: &str) -> &'static str {
    match f {
        "f" => "f32",
        "d" | "i" => "signed",
        "u" => "unsigned",
        "h" => "f16 pair",
        _ => "hex",
    }
}

/// A 32-bit value in a `print/FMT` format: x (hex), f (f32), i/d (signed), u (unsigned), h (two f16).
pub fn format_value(v: u32, f: &str) -> String {
    match f {
        "f" => format!("{}", f32::from_bits(v)),
        "d" | "i" => format!("{}", v as i32),
        "u" => format!("{v}"),
        "h" => format!(
            "{}|{}",
            half::f16::from_bits(v as u16),
            half::f16::from_bits((v >> 16) as u16)
        ),
        _ => format!("{v:#010x}"),
    }
}

fn all_formats(v: u32) -> String {
    format!(
        "{v:#010x}  int {}  uint {v}  f32 {}  f16 {}",
        v as i32,
        f32::from_bits(v),
        format_value(v, "h")
    )
}

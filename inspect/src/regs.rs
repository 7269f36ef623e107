//! Register names as the disassembler writes them (`s5`, `v[2:3]`, `a0`, `vcc_lo`, `exec_hi`, `m0`, `scc`) and as
//! rocgdb writes them (the same names after a `$`: `$v3`, `$exec`, `$s5`, `$a2`; ROCdbgapi's AMDGPU register
//! names), parsed into [`Reg`]s that read a [`WaveState`]; and how many registers of each file a wave has
//! ([`Files`]).

use emu_core::wave::{sreg, WaveState};
use isa_amdgpu::codeobj::KernelDescriptor;

/// The plain SGPRs there are (s0..s101); the slots after them are the special registers.
pub const SGPR_SLOTS: u32 = 102;

/// One 32-bit register (one lane of it for vector registers).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Reg {
    /// An SGPR slot (0..127: s0..s101, then the specials at their operand encodings).
    S(u32),
    V(u32),
    A(u32),
    Scc,
}

impl Reg {
    /// The value of the register (lane `lane` of a vector register); 0 for a register the wave does not have
    /// (see [`Files::check`]).
    pub fn read(self, w: &WaveState, lane: usize) -> u32 {
        match self {
            Reg::S(i) => w.sgprs[i as usize & 127],
            Reg::V(i) => w.vgprs.get(i as usize).map_or(0, |r| r[lane & 63]),
            Reg::A(i) => w.agprs.get(i as usize).map_or(0, |r| r[lane & 63]),
            Reg::Scc => w.scc as u32,
        }
    }

    pub fn is_vector(self) -> bool {
        matches!(self, Reg::V(_) | Reg::A(_))
    }

    /// The name the disassembler gives the register.
    pub fn name(self) -> String {
        match self {
            Reg::S(i) => sgpr_name(i),
            Reg::V(i) => format!("v{i}"),
            Reg::A(i) => format!("a{i}"),
            Reg::Scc => "scc".into(),
        }
    }
}

/// The name of SGPR slot `i`.
pub fn sgpr_name(i: u32) -> String {
    match i {
        102 => "flat_scratch_lo".into(),
        103 => "flat_scratch_hi".into(),
        104 => "xnack_mask_lo".into(),
        105 => "xnack_mask_hi".into(),
        106 => "vcc_lo".into(),
        107 => "vcc_hi".into(),
        124 => "m0".into(),
        126 => "exec_lo".into(),
        127 => "exec_hi".into(),
        i => format!("s{i}"),
    }
}

/// A name without rocgdb's `$`, in lower case.
pub fn plain(text: &str) -> String {
    let t = text.trim();
    t.strip_prefix('$').unwrap_or(t).to_ascii_lowercase()
}

/// A run of registers: `s4`, `s[4:5]`, `v[0:3]`, `vcc` (vcc_lo, vcc_hi), `exec`, `flat_scratch`, `xnack_mask`;
/// each also with rocgdb's `$` (`$v3`, `$exec`).
pub fn parse(text: &str) -> Option<Vec<Reg>> {
    let t = plain(text);
    let pair = |lo: u32| Some(vec![Reg::S(lo), Reg::S(lo + 1)]);
    match t.as_str() {
        "vcc" => return pair(sreg::VCC_LO),
        "exec" => return pair(sreg::EXEC_LO),
        "flat_scratch" => return pair(sreg::FLAT_SCRATCH_LO),
        "xnack_mask" => return pair(sreg::FLAT_SCRATCH_LO + 2),
        "scc" => return Some(vec![Reg::Scc]),
        _ => {}
    }
    for i in [102, 103, 104, 105, 106, 107, 124, 126, 127] {
        if sgpr_name(i) == t {
            return Some(vec![Reg::S(i)]);
        }
    }
    let mut chars = t.chars();
    let file = chars.next()?;
    let rest = chars.as_str();
    let make: fn(u32) -> Reg = match file {
        's' => Reg::S,
        'v' => Reg::V,
        'a' => Reg::A,
        _ => return None,
    };
    let limit = if file == 's' { SGPR_SLOTS } else { 512 };
    let (lo, hi) = if let Some(r) = rest.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
        let (a, b) = r.split_once(':')?;
        (a.parse().ok()?, b.parse().ok()?)
    } else {
        let n: u32 = rest.parse().ok()?;
        (n, n)
    };
    (lo <= hi && hi < limit && hi - lo < 32).then(|| (lo..=hi).map(make).collect())
}

/// Why a register rocgdb names is not one wavejit's debugger shows, for the names rocgdb has and it does not.
pub fn not_shown(text: &str) -> Option<&'static str> {
    let t = plain(text);
    let numbered = |prefix: &str| t.strip_prefix(prefix).is_some_and(|n| n.parse::<u32>().is_ok());
    Some(match t.as_str() {
        "status" => "STATUS is not kept as a register here: its SCC bit is `print scc`, EXECZ and VCCZ are whether `print exec` and `print vcc` are 0",
        "trapsts" => "TRAPSTS belongs to the trap handler, and wavejit runs none",
        "wave_id" => "wave_id is the hardware slot of a wave; waves here are named WG_X,WG_Y,WG_Z:WAVE (`waves`)",
        "csp" | "null" => "that register is not kept by the emulator",
        _ if numbered("ttmp") => "the trap temporaries (ttmp) belong to the trap handler, and wavejit runs none",
        _ if numbered("hwreg") => "hardware registers are read with s_getreg_b32; `print mode` shows MODE",
        _ => return None,
    })
}

/// How many registers of each file a wave has: its plain SGPRs as the kernel descriptor allocates them (s0..,
/// at most s101; the allocation counts VCC, FLAT_SCRATCH and XNACK_MASK among them), its VGPRs and AGPRs as
/// the wave holds them (the descriptor's allocation). The special registers (vcc, exec, m0, flat_scratch,
/// xnack_mask, scc) every wave has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Files {
    pub sgprs: u32,
    pub vgprs: u32,
    pub agprs: u32,
}

impl Files {
    pub fn of(descriptor: &KernelDescriptor, w: &WaveState) -> Files {
        Files {
            sgprs: descriptor.sgpr_alloc_count().map_or(SGPR_SLOTS, |n| n.min(SGPR_SLOTS)),
            vgprs: w.vgprs.len() as u32,
            agprs: w.agprs.len() as u32,
        }
    }

    /// Whether the wave has `r`; if not, an error naming how many registers of that file it has.
    pub fn check(&self, r: Reg) -> Result<(), String> {
        let (i, have, file, what) = match r {
            Reg::S(i) if i < SGPR_SLOTS => (i, self.sgprs, "s", "SGPRs"),
            Reg::V(i) => (i, self.vgprs, "v", "VGPRs"),
            Reg::A(i) => (i, self.agprs, "a", "AGPRs"),
            Reg::S(_) | Reg::Scc => return Ok(()),
        };
        if i < have {
            return Ok(());
        }
        Err(match have {
            0 => format!(
                "`{}`: the wave has no {what} (the kernel descriptor allocates none)",
                r.name()
            ),
            n => format!(
                "`{}`: the wave has {n} {what} ({file}0-{file}{}, as the kernel descriptor allocates)",
                r.name(),
                n - 1
            ),
        })
    }
}

/// Registers named in an instruction's disassembly text, in order, each once.
pub fn in_text(text: &str) -> Vec<Reg> {
    let mut out: Vec<Reg> = Vec::new();
    let ops = text.split_once(' ').map_or("", |(_, o)| o);
    for tok in ops.split([',', ' ']).filter(|t| !t.is_empty()) {
        let tok = tok
            .trim_start_matches('-')
            .trim_start_matches('|')
            .trim_end_matches('|');
        let tok = tok
            .strip_prefix("abs(")
            .and_then(|t| t.strip_suffix(')'))
            .unwrap_or(tok);
        if let Some(rs) = parse(tok) {
            for r in rs {
                if !out.contains(&r) {
                    out.push(r);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn register_names_parse_as_the_disassembler_writes_them() {
        assert_eq!(parse("s5"), Some(vec![Reg::S(5)]));
        assert_eq!(parse("v[2:3]"), Some(vec![Reg::V(2), Reg::V(3)]));
        assert_eq!(parse("vcc"), Some(vec![Reg::S(106), Reg::S(107)]));
        assert_eq!(parse("exec_hi"), Some(vec![Reg::S(127)]));
        assert_eq!(parse("m0"), Some(vec![Reg::S(124)]));
        assert_eq!(parse("a7"), Some(vec![Reg::A(7)]));
        assert_eq!(parse("s102"), None, "s102 is flat_scratch_lo");
        assert_eq!(parse("x1"), None);
        assert_eq!(
            in_text("global_store_dword v[0:1], v2, off"),
            vec![Reg::V(0), Reg::V(1), Reg::V(2)]
        );
        assert_eq!(
            in_text("v_cndmask_b32_e64 v3, v4, -v5, s[6:7]"),
            vec![Reg::V(3), Reg::V(4), Reg::V(5), Reg::S(6), Reg::S(7)]
        );
        assert_eq!(in_text("s_endpgm"), vec![]);
    }

    #[test]
    fn rocgdb_register_names_are_the_same_registers_after_a_dollar() {
        for (rocgdb, plain) in [
            ("$v3", "v3"),
            ("$exec", "exec"),
            ("$s5", "s5"),
            ("$vcc", "vcc"),
            ("$m0", "m0"),
            ("$scc", "scc"),
            ("$a2", "a2"),
            ("$exec_lo", "exec_lo"),
            ("$vcc_hi", "vcc_hi"),
            ("$flat_scratch", "flat_scratch"),
            ("$V[4:5]", "v[4:5]"),
        ] {
            assert_eq!(parse(rocgdb), parse(plain), "{rocgdb}");
            assert!(parse(rocgdb).is_some(), "{rocgdb}");
        }
        assert_eq!(parse("$xnack_mask"), Some(vec![Reg::S(104), Reg::S(105)]));
        assert_eq!(parse("$"), None);
        assert!(not_shown("$status").unwrap().contains("scc"));
        assert!(not_shown("$ttmp4").is_some() && not_shown("$v3").is_none());
    }

    #[test]
    fn empty_and_non_ascii_register_names_are_no_register_and_no_panic() {
        for bad in ["", "ü", "$ü", "vü", "v[ü:1]", "s[1:ü]"] {
            assert_eq!(parse(bad), None, "{bad}");
            assert_eq!(in_text(&format!("v_mov_b32 {bad}, v1")), vec![Reg::V(1)], "{bad}");
        }
    }
}

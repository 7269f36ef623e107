//! Register names as the disassembler writes them (`s5`, `v[2:3]`, `a0`, `vcc_lo`, `exec_hi`, `m0`, `scc`),
//! parsed into [`Reg`]s that read a [`WaveState`].

use emu_core::wave::{sreg, WaveState};

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
    /// The value of the register (lane `lane` of a vector register).
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

/// A run of registers: `s4`, `s[4:5]`, `v[0:3]`, `vcc` (vcc_lo, vcc_hi), `exec`, `flat_scratch`.
pub fn parse(text: &str) -> Option<Vec<Reg>> {
    let t = text.trim().to_ascii_lowercase();
    let pair = |lo: u32| Some(vec![Reg::S(lo), Reg::S(lo + 1)]);
    match t.as_str() {
        "vcc" => return pair(sreg::VCC_LO),
        "exec" => return pair(sreg::EXEC_LO),
        "flat_scratch" => return pair(sreg::FLAT_SCRATCH_LO),
        "scc" => return Some(vec![Reg::Scc]),
        _ => {}
    }
    for i in [102, 103, 104, 105, 106, 107, 124, 126, 127] {
        if sgpr_name(i) == t {
            return Some(vec![Reg::S(i)]);
        }
    }
    let (file, rest) = t.split_at(1);
    let make: fn(u32) -> Reg = match file {
        "s" => Reg::S,
        "v" => Reg::V,
        "a" => Reg::A,
        _ => return None,
    };
    let limit = if file == "s" { 102 } else { 512 };
    let (lo, hi) = if let Some(r) = rest.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
        let (a, b) = r.split_once(':')?;
        (a.parse().ok()?, b.parse().ok()?)
    } else {
        let n: u32 = rest.parse().ok()?;
        (n, n)
    };
    (lo <= hi && hi < limit && hi - lo < 32).then(|| (lo..=hi).map(make).collect())
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
}

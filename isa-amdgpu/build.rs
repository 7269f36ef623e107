//! Turns `data/gfx9.tsv` (the checked-in instruction table) into Rust: the `Opcode` enum (one variant per
//! operation) and the static row array the decoder, disassembler, engine and JIT read.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::PathBuf;

fn camel(name: &str) -> String {
    let mut s = String::new();
    for part in name.split('_') {
        let mut cs = part.chars();
        if let Some(c) = cs.next() {
            s.extend(c.to_uppercase());
            s.push_str(cs.as_str());
        }
    }
    s
}

fn base_mnemonic(name: &str) -> &str {
    name.strip_suffix("_e32")
        .or_else(|| name.strip_suffix("_e64"))
        .unwrap_or(name)
}

fn field(name: &str) -> &'static str {
    match name {
        "sdst" => "Sdst",
        "ssrc0" => "Ssrc0",
        "ssrc1" => "Ssrc1",
        "simm16" => "Simm16",
        "sdata" => "Sdata",
        "sbase" => "Sbase",
        "soffset" => "Soffset",
        "vdst" => "Vdst",
        "src0" => "Src0",
        "src1" => "Src1",
        "src2" => "Src2",
        "vsrc1" => "Vsrc1",
        "addr" => "Addr",
        "data" => "Data",
        "data0" => "Data0",
        "data1" => "Data1",
        "vaddr" => "Vaddr",
        "vdata" => "Vdata",
        "srsrc" => "Srsrc",
        "ssamp" => "Ssamp",
        "literal" => "Literal",
        other => panic!("gfx9.tsv: unknown field {other}"),
    }
}

fn operand(spec: &str) -> String {
    if let Some(fixed) = spec.strip_prefix('=') {
        return format!("Operand {{ field: Field::Reserved1, kind: OperandKind::Fixed({fixed:?}) }}");
    }
    let (f, kind) = spec
        .split_once(':')
        .unwrap_or_else(|| panic!("gfx9.tsv: bad operand {spec}"));
    let fld = field(f);
    let kind = match kind {
        "label" => "OperandKind::Label".to_string(),
        "waitcnt" => "OperandKind::Waitcnt".to_string(),
        "sendmsg" => "OperandKind::Sendmsg".to_string(),
        "gpr_idx" => "OperandKind::GprIdx".to_string(),
        "hwreg" => "OperandKind::Hwreg".to_string(),
        "imm" => "OperandKind::Imm".to_string(),
        "hex" => "OperandKind::Hex".to_string(),
        k => {
            let (ty, count) = match k.split_once('x') {
                Some((t, n)) if !t.is_empty() && n.chars().all(|c| c.is_ascii_digit()) => (t, n.parse::<u8>().unwrap()),
                _ => (k, 0),
            };
            let ty = if ty == "v216" { "pk16" } else { ty };
            let reg = |file: &str, n: &str| format!("OperandKind::Reg {{ file: RegFile::{file}, count: {n} }}");
            if let Some(n) = ty
                .strip_prefix('v')
                .filter(|n| n.chars().all(|c| c.is_ascii_digit()) && !n.is_empty())
            {
                reg("V", n)
            } else if let Some(n) = ty
                .strip_prefix('s')
                .filter(|n| n.chars().all(|c| c.is_ascii_digit()) && !n.is_empty())
            {
                reg("S", n)
            } else if let Some(n) = ty
                .strip_prefix('a')
                .filter(|n| n.chars().all(|c| c.is_ascii_digit()) && !n.is_empty())
            {
                reg("A", n)
            } else {
                let (t, def) = match ty {
                    "b32" => ("B32", 1),
                    "b64" => ("B64", 2),
                    "f64" => ("F64", 2),
                    "i16" => ("I16", 1),
                    "f16" => ("F16", 1),
                    "pk16" => ("V216", 1),
                    "r" => ("RegOnly", 1),
                    other => panic!("gfx9.tsv: unknown operand kind {other} in {spec}"),
                };
                let n = if count == 0 { def } else { count };
                format!("OperandKind::Src {{ ty: SrcType::{t}, count: {n} }}")
            }
        }
    };
    format!("Operand {{ field: Field::{fld}, kind: {kind} }}")
}

fn encoding(name: &str) -> &'static str {
    match name {
        "SOP2" => "Sop2",
        "SOPK" => "Sopk",
        "SOP1" => "Sop1",
        "SOPC" => "Sopc",
        "SOPP" => "Sopp",
        "SMEM" => "Smem",
        "VOP2" => "Vop2",
        "VOP1" => "Vop1",
        "VOPC" => "Vopc",
        "VOP3" => "Vop3",
        "VOP3P" => "Vop3p",
        "DS" => "Ds",
        "FLAT" => "Flat",
        "GLOBAL" => "Global",
        "SCRATCH" => "Scratch",
        "MUBUF" => "Mubuf",
        "MTBUF" => "Mtbuf",
        "MIMG" => "Mimg",
        other => panic!("gfx9.tsv: unknown encoding {other}"),
    }
}

fn data_type(t: &str) -> &'static str {
    match t {
        "f16" => "DataType::F16",
        "bf16" => "DataType::Bf16",
        "f32" => "DataType::F32",
        "xf32" => "DataType::Xf32",
        "f64" => "DataType::F64",
        "i8" => "DataType::I8",
        "u8" => "DataType::U8",
        "b16" => "DataType::B16",
        "b32" => "DataType::B32",
        "b64" => "DataType::B64",
        "i16" => "DataType::I16",
        "u16" => "DataType::U16",
        "i32" => "DataType::I32",
        "u32" => "DataType::U32",
        "i64" => "DataType::I64",
        "u64" => "DataType::U64",
        "fp8_fp8" => "DataType::Fp8Fp8",
        "fp8_bf8" => "DataType::Fp8Bf8",
        "bf8_fp8" => "DataType::Bf8Fp8",
        "bf8_bf8" => "DataType::Bf8Bf8",
        "f8f6f4" => "DataType::F8f6f4",
        other => panic!("gfx9.tsv: unknown data type {other}"),
    }
}

/// The flow, mem, atomic, arith, compare, mfma and types columns as `OpInfo` field initialisers.
fn operation_columns(c: &[&str]) -> String {
    let flow = match c[0] {
        "-" => "Next",
        "branch" => "Branch",
        "cbranch" => "CondBranch",
        "jump" => "Jump",
        "call" => "Call",
        "end" => "End",
        "barrier" => "Barrier",
        "trap" => "Trap",
        "halt" => "Halt",
        other => panic!("gfx9.tsv: unknown flow {other}"),
    };
    let mem = if c[1] == "-" {
        "MemAccess::NONE".to_string()
    } else {
        let mut parts = c[1].split(':');
        let dir = match parts.next().unwrap() {
            "ld" => "Load",
            "st" => "Store",
            "at" => "Atomic",
            other => panic!("gfx9.tsv: unknown memory direction {other}"),
        };
        let bytes: u8 = parts.next().expect("mem bytes").parse().expect("mem bytes");
        let mut flags = 0u16;
        for f in parts.next().unwrap_or("").split('+').filter(|f| !f.is_empty()) {
            flags |= match f {
                "s" => 1,
                "lo" => 2,
                "hi" => 4,
                "2a" => 8,
                "st64" => 16,
                "tid" => 32,
                "rtn" => 64,
                "lds" => 128,
                "fmt" => 256,
                "img" => 512,
                "buf" => 1024,
                "scr" => 2048,
                "tr" => 4096,
                other => panic!("gfx9.tsv: unknown memory flag {other}"),
            };
        }
        format!("MemAccess {{ dir: MemDir::{dir}, bytes: {bytes}, flags: MemFlags::from_bits({flags}) }}")
    };
    let atomic = match c[2] {
        "-" => "None".to_string(),
        a => format!(
            "Some(AtomicOp::{})",
            match a {
                "smin" => "SMin".to_string(),
                "smax" => "SMax".to_string(),
                "umin" => "UMin".to_string(),
                "umax" => "UMax".to_string(),
                "cmpswap" => "CmpSwap".to_string(),
                "mskor" => "MskOr".to_string(),
                "condxchg" => "CondXchg".to_string(),
                other => camel(other),
            }
        ),
    };
    let arith = match c[3] {
        "-" => "None".to_string(),
        a => {
            let (kind, ty) = a.split_once('.').expect("arith kind.type");
            format!(
                "Some(Arith {{ kind: ArithKind::{}, ty: {} }})",
                camel(kind),
                data_type(ty)
            )
        }
    };
    let compare = match c[4] {
        "-" => "None".to_string(),
        a => {
            let (pred, ty) = a.split_once(':').expect("compare pred:type");
            format!(
                "Some(Compare {{ pred: CmpPred::{}, ty: {} }})",
                camel(pred),
                data_type(ty)
            )
        }
    };
    let mfma = match c[5] {
        "-" => "None".to_string(),
        a => {
            let p: Vec<&str> = a.split(':').collect();
            let dims: Vec<u8> = p[0].split('x').map(|d| d.parse().expect("MFMA dimension")).collect();
            let sparse = p.get(3) == Some(&"sparse");
            format!(
                "Some(MfmaShape {{ m: {}, n: {}, k: {}, blocks: {}, input: {}, sparse: {sparse} }})",
                dims[0],
                dims[1],
                dims[2],
                p[1],
                data_type(p[2])
            )
        }
    };
    let (dst_type, src_type) = match c[6] {
        "-" => ("None".to_string(), "None".to_string()),
        t => {
            let (d, s) = t.split_once(':').expect("types dst:src");
            (format!("Some({})", data_type(d)), format!("Some({})", data_type(s)))
        }
    };
    format!("flow: FlowControl::{flow}, mem: {mem}, atomic: {atomic}, arith: {arith}, compare: {compare}, mfma: {mfma}, dst_type: {dst_type}, src_type: {src_type}")
}

fn main() {
    let dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let path = dir.join("data/gfx9.tsv");
    println!("cargo:rerun-if-changed={}", path.display());
    let text = std::fs::read_to_string(&path).expect("read data/gfx9.tsv");
    let rows: Vec<Vec<&str>> = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| l.split('\t').collect())
        .collect();
    let mut names = BTreeSet::new();
    for r in &rows {
        assert!(r.len() >= 23, "gfx9.tsv: short row {r:?}");
        names.insert(base_mnemonic(r[3]).to_string());
    }
    let mut out = String::new();
    out.push_str("// @generated by isa-amdgpu/build.rs from data/gfx9.tsv. Do not edit.\n\n");
    out.push_str("/// Every operation of the gfx9 family (gfx90a, gfx942, gfx950), one variant per mnemonic.\n");
    out.push_str("#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]\n#[allow(clippy::enum_variant_names)]\npub enum Opcode {\n");
    for n in &names {
        writeln!(out, "    /// `{n}`\n    {},", camel(n)).unwrap();
    }
    out.push_str(
        "}\n\nimpl Opcode {\n    /// All opcodes, in mnemonic order.\n    pub const ALL: &'static [Opcode] = &[\n",
    );
    for n in &names {
        writeln!(out, "        Opcode::{},", camel(n)).unwrap();
    }
    out.push_str("    ];\n\n    /// The mnemonic without encoding suffix.\n    pub const fn mnemonic(self) -> &'static str {\n        match self {\n");
    for n in &names {
        writeln!(out, "            Opcode::{} => {n:?},", camel(n)).unwrap();
    }
    out.push_str("        }\n    }\n}\n\n");
    out.push_str(
        "/// The gfx9 table: one row per (encoding, opcode number, target set).\npub static GFX9: &[OpInfo] = &[\n",
    );
    for r in &rows {
        let targets: u8 = r[2]
            .split('|')
            .map(|t| match t {
                "gfx90a" => 1u8,
                "gfx942" => 2u8,
                "gfx950" => 4u8,
                other => panic!("gfx9.tsv: unknown target {other}"),
            })
            .fold(0, |a, b| a | b);
        let ops: Vec<String> = if r[4] == "-" {
            vec![]
        } else {
            r[4].split(',').map(operand).collect()
        };
        let mut flags = Vec::new();
        for fl in r[7].split(',') {
            match fl {
                "sdwa" => flags.push("OpFlags::SDWA"),
                "dpp" => flags.push("OpFlags::DPP"),
                "optional_operands" => flags.push("OpFlags::OPTIONAL_OPERANDS"),
                "literal" => flags.push("OpFlags::LITERAL"),
                "int_src0" => flags.push("OpFlags::INT_SRC0"),
                "int_src1" => flags.push("OpFlags::INT_SRC1"),
                "int_src2" => flags.push("OpFlags::INT_SRC2"),
                "-" | "" => {}
                other => panic!("gfx9.tsv: unknown flag {other}"),
            }
        }
        let flags = if flags.is_empty() {
            "OpFlags::NONE".to_string()
        } else {
            flags.join(".union(") + &")".repeat(flags.len() - 1)
        };
        let mask_value = |c: &str| -> (String, String) {
            let (m, v) = c.split_once(':').expect("mask:value column");
            (format!("0x{m}"), format!("0x{v}"))
        };
        let (f0m, f0v) = mask_value(r[5]);
        let (f1m, f1v) = mask_value(r[6]);
        let (l0, l1) = mask_value(r[9]);
        let (ls, ld) = mask_value(r[10]);
        let (sfm, sfv) = mask_value(r[11]);
        let (dfm, dfv) = mask_value(r[12]);
        let mods = if r[8] == "-" { String::new() } else { r[8].to_string() };
        let unit = camel(r[13]);
        let wait = match r[14] {
            "-" => "WaitClass::None",
            "lgkm" => "WaitClass::Lgkm",
            "vm" => "WaitClass::Vm",
            "vm+lgkm" => "WaitClass::VmLgkm",
            "exp" => "WaitClass::Exp",
            other => panic!("gfx9.tsv: unknown wait class {other}"),
        };
        let (mut rd, mut wr) = (Vec::new(), Vec::new());
        for i in r[15].split(',').filter(|s| *s != "-") {
            let (rw, reg) = i.split_once(':').expect("implicit r:/w:");
            let bit = match reg {
                "scc" => "Implicit::SCC",
                "vcc" => "Implicit::VCC",
                "exec" => "Implicit::EXEC",
                "m0" => "Implicit::M0",
                other => panic!("gfx9.tsv: unknown implicit register {other}"),
            };
            if rw == "r" {
                rd.push(bit)
            } else {
                wr.push(bit)
            }
        }
        let ops_cols = operation_columns(&r[16..23]);
        let bits = |v: &Vec<&str>| {
            if v.is_empty() {
                "0".to_string()
            } else {
                v.iter().map(|b| format!("{b}.bits()")).collect::<Vec<_>>().join(" | ")
            }
        };
        writeln!(
            out,
            "    OpInfo {{ encoding: Encoding::{}, op: {}, targets: {}, opcode: Opcode::{}, name: {:?}, operands: &[{}], fixed: [({f0m}, {f0v}), ({f1m}, {f1v})], flags: {}, mods: {mods:?}, live: [{l0}, {l1}], ext_live: [{ls}, {ld}], ext_fixed: [({sfm}, {sfv}), ({dfm}, {dfv})], unit: Unit::{}, wait: {}, reads: Implicit::from_bits({}), writes: Implicit::from_bits({}), {ops_cols} }},",
            encoding(r[0]),
            r[1],
            targets,
            camel(base_mnemonic(r[3])),
            r[3],
            ops.join(", "),
            flags,
            unit,
            wait,
            bits(&rd),
            bits(&wr),
        )
        .unwrap();
    }
    out.push_str("];\n");
    let dest = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("gfx9_table.rs");
    std::fs::write(dest, out).unwrap();
}

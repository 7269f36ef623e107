//! Operands with their own syntax: the SMEM offset, `s_waitcnt` counters, `s_sendmsg` messages,
//! `s_set_gpr_idx_on` modes and `s_getreg`/`s_setreg` hardware registers.

use std::fmt::Write as _;

use crate::encoding::Field;

use super::values::{bit, scalar_reg};
use super::Printer;

impl Printer<'_> {
    /// The offset operand of SMEM (listed in the table as `soffset`): immediate, SGPR, or SGPR plus immediate.
    pub(super) fn smem_offset(&mut self) {
        let inst = self.inst;
        let imm = inst.field(Field::Imm);
        let soe = inst.field(Field::Soe);
        let offset = inst.field(Field::Offset);
        let signed = ((offset << 11) as i32) >> 11;
        let hex = |out: &mut String, x: i32| {
            let _ = if x < 0 {
                write!(out, "-0x{:x}", -(x as i64))
            } else {
                write!(out, "0x{x:x}")
            };
        };
        match (imm, soe) {
            (1, 0) => hex(&mut self.out, signed),
            (0, 0) => scalar_reg(&mut self.out, offset & 0x7f, 1),
            (1, _) => {
                scalar_reg(&mut self.out, inst.field(Field::Soffset), 1);
                self.out.push_str(" offset:");
                hex(&mut self.out, signed);
            }
            _ => scalar_reg(&mut self.out, inst.field(Field::Soffset), 1),
        }
    }

    pub(super) fn waitcnt(&mut self, v: u32) {
        let vm = (v & 0xf) | ((v >> 14) & 3) << 4;
        let exp = (v >> 4) & 7;
        let lgkm = (v >> 8) & 0xf;
        let all = vm == 63 && exp == 7 && lgkm == 15;
        let mut parts = Vec::new();
        if vm != 63 || all {
            parts.push(format!("vmcnt({vm})"));
        }
        if exp != 7 || all {
            parts.push(format!("expcnt({exp})"));
        }
        if lgkm != 15 || all {
            parts.push(format!("lgkmcnt({lgkm})"));
        }
        self.out.push_str(&parts.join(" "));
    }

    pub(super) fn sendmsg(&mut self, v: u32) {
        let id = v & 0xf;
        let op = (v >> 4) & 7;
        let stream = (v >> 8) & 3;
        let name = match id {
            1 => Some("MSG_INTERRUPT"),
            2 => Some("MSG_GS"),
            3 => Some("MSG_GS_DONE"),
            4 => Some("MSG_SAVEWAVE"),
            5 => Some("MSG_STALL_WAVE_GEN"),
            6 => Some("MSG_HALT_WAVES"),
            7 => Some("MSG_ORDERED_PS_DONE"),
            8 => Some("MSG_EARLY_PRIM_DEALLOC"),
            9 => Some("MSG_GS_ALLOC_REQ"),
            10 => Some("MSG_GET_DOORBELL"),
            15 => Some("MSG_SYSMSG"),
            _ => None,
        };
        let gs_ops = ["GS_OP_NOP", "GS_OP_CUT", "GS_OP_EMIT", "GS_OP_EMIT_CUT"];
        let sys_ops = [
            "",
            "SYSMSG_OP_ECC_ERR_INTERRUPT",
            "SYSMSG_OP_REG_RD",
            "SYSMSG_OP_HOST_TRAP_ACK",
            "SYSMSG_OP_TTRACE_PC",
        ];
        let symbolic = match name {
            Some(_) if id == 2 || id == 3 => matches!((op, stream), (1..=3, _)) || (id == 3 && op == 0 && stream == 0),
            // LLVM 19 names no SYSMSG_OP_HOST_TRAP_ACK (3) on gfx9
            Some(_) if id == 15 => matches!((op, stream), (1 | 2 | 4, 0)),
            Some(_) => op == 0 && stream == 0,
            None => false,
        };
        let text = match name {
            _ if !symbolic && v & !0x37f != 0 => None,
            Some(n) if id == 2 || id == 3 => match (op, stream) {
                (0, 0) if id == 3 => Some(format!("sendmsg({n}, {})", gs_ops[0])),
                (1..=3, s) => Some(format!("sendmsg({n}, {}, {s})", gs_ops[op as usize])),
                _ => Some(format!("sendmsg({id}, {op}, {stream})")),
            },
            Some(n) if id == 15 => match (op, stream) {
                (1 | 2 | 4, 0) => Some(format!("sendmsg({n}, {})", sys_ops[op as usize])),
                _ => Some(format!("sendmsg({id}, {op}, {stream})")),
            },
            Some(n) if op == 0 && stream == 0 => Some(format!("sendmsg({n})")),
            _ => Some(format!("sendmsg({id}, {op}, {stream})")),
        };
        match text {
            Some(t) => self.out.push_str(&t),
            None => {
                let _ = write!(self.out, "{v}");
            }
        }
    }

    pub(super) fn gpr_idx(&mut self, v: u32) {
        if v > 15 {
            let _ = write!(self.out, "0x{v:x}");
            return;
        }
        let names = ["SRC0", "SRC1", "SRC2", "DST"];
        let on: Vec<&str> = (0..4).filter(|i| bit(v, *i) == 1).map(|i| names[i as usize]).collect();
        let _ = write!(self.out, "gpr_idx({})", on.join(","));
    }

    pub(super) fn hwreg(&mut self, v: u32) {
        let id = v & 0x3f;
        let offset = (v >> 6) & 0x1f;
        let size = ((v >> 11) & 0x1f) + 1;
        let name = match id {
            1 => Some("HW_REG_MODE"),
            2 => Some("HW_REG_STATUS"),
            3 => Some("HW_REG_TRAPSTS"),
            4 => Some("HW_REG_HW_ID"),
            5 => Some("HW_REG_GPR_ALLOC"),
            6 => Some("HW_REG_LDS_ALLOC"),
            7 => Some("HW_REG_IB_STS"),
            15 => Some("HW_REG_SH_MEM_BASES"),
            16 => Some("HW_REG_TBA_LO"),
            17 => Some("HW_REG_TBA_HI"),
            18 => Some("HW_REG_TMA_LO"),
            19 => Some("HW_REG_TMA_HI"),
            20 if self.inst.target.is_gfx940() => Some("HW_REG_XCC_ID"),
            21 if self.inst.target.is_gfx940() => Some("HW_REG_SQ_PERF_SNAPSHOT_DATA"),
            22 if self.inst.target.is_gfx940() => Some("HW_REG_SQ_PERF_SNAPSHOT_DATA1"),
            23 if self.inst.target.is_gfx940() => Some("HW_REG_SQ_PERF_SNAPSHOT_PC_LO"),
            24 if self.inst.target.is_gfx940() => Some("HW_REG_SQ_PERF_SNAPSHOT_PC_HI"),
            _ => None,
        };
        let idtext = name.map_or_else(|| id.to_string(), str::to_string);
        if offset == 0 && size == 32 {
            let _ = write!(self.out, "hwreg({idtext})");
        } else {
            let _ = write!(self.out, "hwreg({idtext}, {offset}, {size})");
        }
    }
}

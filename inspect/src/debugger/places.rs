//! Where things are: the code base, addresses as symbol+offset and back, the focused wave's state and
//! registers, the text of the instruction at an address, a wave's status.

use emu_core::engine::WaveRunner;
use emu_core::wave::WaveState;
use isa_amdgpu::{decode, disasm};

use crate::regs::Files;
use crate::session::{Status, WaveKey};

use super::Debugger;

impl<R: WaveRunner> Debugger<'_, R> {
    pub(super) fn code_base(&self) -> u64 {
        self.session.launch().code.base
    }

    /// `name+0xOFF` for a device address inside a function of the code object.
    pub fn symbolize(&self, pc: u64) -> String {
        let rel = pc.wrapping_sub(self.code_base());
        match self
            .info
            .functions
            .iter()
            .find(|(_, a, s)| rel >= *a && rel < a + s.max(&4))
        {
            Some((n, a, _)) => format!("{n}+{:#x}", rel - a),
            None => format!("{rel:#x}"),
        }
    }

    /// Where a code address is, as the code pane shows code: the function and offset, then the address in the
    /// code object as `wavejit disasm` prints it (`divergence+0x3c (0x1a3c)`).
    pub fn code_place(&self, a: u64) -> String {
        let code = self.session.launch().code;
        if a < code.base || a >= code.base + code.size {
            return format!("{a:#x} (outside the code object)");
        }
        let rel = a - code.base;
        match self.symbolize(a) {
            s if s == format!("{rel:#x}") => s,
            s => format!("{s} ({rel:#x})"),
        }
    }

    /// How many registers of each file the wave has.
    pub fn files(&self, w: &WaveState) -> Files {
        Files::of(self.session.launch().descriptor, w)
    }

    /// A code address: `SYMBOL[+OFF]`, an address in the code object (as `wavejit disasm` prints them) or a
    /// device address.
    pub(super) fn address(&self, text: &str) -> Result<u64, String> {
        let num = |t: &str| -> Option<u64> {
            let t = t.trim();
            match t.strip_prefix("0x") {
                Some(h) => u64::from_str_radix(h, 16).ok(),
                None => t.parse().ok(),
            }
        };
        let code = self.session.launch().code;
        if let Some(v) = num(text) {
            return Ok(if v < code.size { code.base + v } else { v });
        }
        let (name, off) = match text.split_once('+') {
            Some((n, o)) => (n.trim(), num(o).ok_or_else(|| format!("`{o}` is not an offset"))?),
            None => (text.trim(), 0),
        };
        let f = self.info.functions.iter().find(|(n, _, _)| n == name).ok_or_else(|| {
            format!(
                "no function `{name}` (functions: {})",
                self.info
                    .functions
                    .iter()
                    .map(|f| f.0.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })?;
        Ok(code.base + f.1 + off)
    }

    pub(super) fn focus_state(&self) -> Result<&WaveState, String> {
        self.session.wave(self.focus).ok_or_else(|| {
            let status = self
                .session
                .waves()
                .into_iter()
                .find(|w| w.0 == self.focus)
                .map_or("unknown", |w| w.1.name());
            format!("wave {} has no state to show ({status})", self.focus)
        })
    }

    pub(super) fn inst_text(&self, pc: u64) -> String {
        let mut buf = [0u8; 12];
        let code = self.session.launch().code;
        let avail = (code.base + code.size).saturating_sub(pc).min(12) as usize;
        if avail < 4 || self.session.memory().read(pc, &mut buf[..avail]).is_err() {
            return "(outside the code)".into();
        }
        match decode(&buf[..avail], pc, code.target) {
            Ok(i) => disasm::text(&i),
            Err(e) => format!("(cannot decode: {e})"),
        }
    }

    pub(super) fn status_of(&self, w: WaveKey) -> Status {
        self.session
            .waves()
            .into_iter()
            .find(|x| x.0 == w)
            .map_or(Status::NotStarted, |x| x.1)
    }
}

//! The JIT against the interpreter: the crosscheck's lockstep run of each block on both engines and the diff
//! of their registers, LDS and memory, and [`Jit::run_block_once`] for the differential tests.

use std::sync::atomic::Ordering;

use emu_core::engine::WaveRun;
use emu_core::interp::Interp;
use emu_core::memory::DeviceMemory;
use emu_core::sem::{execute, ExecError};
use emu_core::wave::WaveState;
use isa_amdgpu::{disasm, Inst};

use crate::compile::{self, BARRIER, CONTINUE, END, FAULT};
use crate::ctx::{Ctx, Env};
use crate::JitError;

use super::callbacks::interpret_one;
use super::Jit;

/// How a block run by [`Jit::run_block_once`] ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BlockExit {
    /// Continue at this PC (after this many instructions).
    Continue {
        next_pc: u64,
        executed: u64,
    },
    Barrier {
        executed: u64,
    },
    End {
        executed: u64,
    },
    /// An instruction faulted: its PC and the report.
    Fault {
        pc: u64,
        error: String,
    },
}

impl Jit {
    /// Translates `insts` (consecutive, from `pc`) as one block, without caching it, and runs it once on `wave`
    /// with `mem` and `lds` — what the differential tests compare with the interpreter instruction by
    /// instruction.
    pub fn run_block_once(
        &self,
        insts: Vec<Inst>,
        pc: u64,
        wave: &mut WaveState,
        mem: &DeviceMemory,
        lds: &mut [u8],
    ) -> Result<BlockExit, JitError> {
        let block = {
            let mut module = self.shared.module.lock().unwrap_or_else(|e| e.into_inner());
            let n = self.shared.blocks_n.fetch_add(1, Ordering::Relaxed);
            compile::compile(&mut module.0, insts, pc, pc, interpret_one, None, &format!("once_{n}"))?
        };
        if wave.vgprs.len() < block.vgprs as usize {
            wave.vgprs.resize(block.vgprs as usize, [0; 64]);
        }
        if wave.agprs.len() < block.agprs as usize {
            wave.agprs.resize(block.agprs as usize, [0; 64]);
        }
        let wave_ptr: *mut WaveState = wave;
        let lds_ptr: *mut [u8] = lds;
        let mut env = Env {
            mem,
            wave: wave_ptr,
            lds: lds_ptr,
            error: None,
            fallbacks: 0,
            checked_accesses: 0,
            observer: None,
            wants_accesses: false,
            workgroup: [0; 3],
            wave_index: 0,
            accesses: Vec::new(),
        };
        // SAFETY: the wave is reached only through `wave_ptr` until the block returns.
        let w = unsafe { &mut *wave_ptr };
        let mut ctx = Ctx::new(w, (&mut env as *mut Env<'_>).cast(), u64::MAX);
        ctx.next_pc = pc;
        ctx.code_base = pc;
        // SAFETY: the LDS outlives the call; the block accesses it only within lds_len.
        let l = unsafe { &mut *lds_ptr };
        (ctx.lds_ptr, ctx.lds_len) = (l.as_mut_ptr(), l.len() as u64);
        let status = (block.func)(&mut *ctx);
        // SAFETY: the block has returned.
        let w = unsafe { &mut *wave_ptr };
        w.scc = ctx.scc != 0;
        let executed = ctx.executed;
        Ok(match status {
            CONTINUE => BlockExit::Continue {
                next_pc: ctx.next_pc,
                executed,
            },
            BARRIER => BlockExit::Barrier { executed },
            END => BlockExit::End { executed },
            FAULT => {
                let (pc, text, e) = env.error.take().unwrap_or((0, String::new(), ExecError::Trap(0)));
                BlockExit::Fault {
                    pc,
                    error: format!("{text}: {e}"),
                }
            }
            status => return Err(JitError::Status { pc, status }),
        })
    }
}

/// Runs `n` instructions of `interp` (a copy of the wave from before a block) on the interpreter and compares
/// the registers with `jit` (the wave after the block); the first difference, readably.
pub(super) fn lockstep(
    interp: &mut WaveState,
    jit: &WaveState,
    run: &WaveRun<'_>,
    lds: &mut [u8],
    n: u64,
    status: u32,
) -> Result<(), JitError> {
    let (mem, start) = (run.mem, interp.pc);
    let mut text = Vec::new();
    for _ in 0..n {
        let pc = interp.pc;
        let inst = run
            .cache
            .get(mem, run.code, pc)
            .map_err(|error| JitError::Decode { pc, error })?;
        text.push(disasm::text(&inst));
        let mut b = Interp {
            wave: interp,
            mem,
            lds,
            mnemonic: inst.info.name,
            accesses: None,
        };
        match execute(&mut b, &inst, pc) {
            Ok(flow) => {
                interp.slack.locate(pc, || disasm::text(&inst));
                interp.pc = flow.next_pc(pc, inst.size() as u64).0
            }
            // both engines stop at the same fault (the JIT's report is the interpreter's own)
            Err(_) if status == crate::compile::FAULT => return Ok(()),
            Err(error) => return Err(JitError::InterpreterFaults { pc, error }),
        }
        interp.executed += 1;
    }
    // the last instructions before the fault or the difference are the interesting ones
    let last = || text[text.len().saturating_sub(8)..].to_vec();
    if status == crate::compile::FAULT {
        return Err(JitError::JitFaults {
            start,
            executed: n,
            last: last(),
        });
    }
    match diff_waves(interp, jit) {
        Some(diff) => Err(JitError::Differ {
            start,
            executed: n,
            diff,
            last: last(),
        }),
        None => Ok(()),
    }
}

/// What the crosscheck compares of device memory after a block that writes it: the buffers and the private
/// memory of the workgroups (a block may read a private word it then writes, so the interpreter's run of it
/// must start from the private memory the JIT's started from).
pub(super) const CHECKED: &[emu_core::memory::AllocKind] = &[
    emu_core::memory::AllocKind::Buffer,
    emu_core::memory::AllocKind::Scratch,
];

/// [`lockstep`] for a block that writes device memory or LDS: `buffers` and `lds_before` are their contents
/// before the JIT ran it. The JIT's results are set aside, memory and LDS put back, the interpreter runs the
/// same instructions, and registers, LDS and every buffer byte must agree (memory is left as the interpreter
/// wrote it).
#[allow(clippy::too_many_arguments)]
pub(super) fn lockstep_with_memory(
    interp: &mut WaveState,
    jit: &WaveState,
    run: &WaveRun<'_>,
    lds: &mut [u8],
    n: u64,
    status: u32,
    buffers: &[(u64, Vec<u8>)],
    lds_before: &[u8],
) -> Result<(), JitError> {
    let fail = |error| JitError::Snapshot { error };
    let by_jit = run.mem.snapshot(CHECKED).map_err(fail)?;
    let lds_by_jit = lds.to_vec();
    run.mem.restore_buffers(buffers).map_err(fail)?;
    lds.copy_from_slice(lds_before);
    let start = interp.pc;
    lockstep(interp, jit, run, lds, n, status)?;
    let by_interp = run.mem.snapshot(CHECKED).map_err(fail)?;
    if let Some(diff) = diff_memory(&by_interp, &by_jit, lds, &lds_by_jit) {
        return Err(JitError::Differ {
            start,
            executed: n,
            diff,
            last: Vec::new(),
        });
    }
    Ok(())
}

/// The first byte where the interpreter's buffers or LDS differ from the JIT's, in words.
pub(crate) fn diff_memory(
    interp: &[(u64, Vec<u8>)],
    jit: &[(u64, Vec<u8>)],
    interp_lds: &[u8],
    jit_lds: &[u8],
) -> Option<String> {
    if let Some(i) = (0..interp_lds.len()).find(|&i| interp_lds[i] != jit_lds[i]) {
        return Some(format!(
            "LDS byte {i:#x}: interpreter {:#04x}, JIT {:#04x}",
            interp_lds[i], jit_lds[i]
        ));
    }
    for ((a, x), (_, y)) in interp.iter().zip(jit) {
        if x != y {
            let i = (0..x.len()).find(|&i| x[i] != y[i]).unwrap_or(0);
            // the aligned dword around the byte reads better than the byte alone
            let w = i & !3;
            let word = |b: &[u8]| {
                b.get(w..w + 4)
                    .map(|d| format!("{:#010x}", u32::from_le_bytes(d.try_into().unwrap())))
                    .unwrap_or_else(|| format!("{:#04x}", b[i]))
            };
            return Some(format!(
                "memory at {:#x} (byte {i:#x} of the buffer at {a:#x}): interpreter {}, JIT {}",
                a + w as u64,
                word(x),
                word(y)
            ));
        }
    }
    None
}

/// The first difference between the interpreter's and the JIT's wave state (next PC, SCC, SGPRs, VGPRs,
/// AGPRs, slack accesses), in words.
pub(crate) fn diff_waves(interp: &WaveState, jit: &WaveState) -> Option<String> {
    if interp.pc != jit.pc {
        return Some(format!("next pc: interpreter {:#x}, JIT {:#x}", interp.pc, jit.pc));
    }
    if interp.slack != jit.slack {
        let first = |w: &WaveState| {
            w.slack.first.as_ref().map_or("none".to_string(), |f| {
                format!("{:?} lane {:?}: {}", f.at, f.lane, f.slack)
            })
        };
        return Some(format!(
            "slack accesses: interpreter {} (first {}), JIT {} (first {})",
            interp.slack.count,
            first(interp),
            jit.slack.count,
            first(jit)
        ));
    }
    if interp.scc != jit.scc {
        return Some(format!("SCC: interpreter {}, JIT {}", interp.scc, jit.scc));
    }
    if let Some(r) = (0..128).find(|&r| interp.sgprs[r] != jit.sgprs[r]) {
        return Some(format!(
            "s{r}: interpreter {:#x}, JIT {:#x}",
            interp.sgprs[r], jit.sgprs[r]
        ));
    }
    for (file, x, y) in [("v", &interp.vgprs, &jit.vgprs), ("a", &interp.agprs, &jit.agprs)] {
        for r in 0..x.len().max(y.len()) {
            let (p, q) = (
                x.get(r).copied().unwrap_or([0; 64]),
                y.get(r).copied().unwrap_or([0; 64]),
            );
            if let Some(l) = (0..64).find(|&l| p[l] != q[l]) {
                return Some(format!("{file}{r} lane {l}: interpreter {:#x}, JIT {:#x}", p[l], q[l]));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_crosscheck_diff_names_the_first_differing_register_and_lane() {
        let a = WaveState::new(0x100, 4, 0);
        let mut b = a.clone();
        assert_eq!(diff_waves(&a, &b), None);
        b.vgprs[2][17] = 0x3f80_0000;
        assert_eq!(
            diff_waves(&a, &b).unwrap(),
            "v2 lane 17: interpreter 0x0, JIT 0x3f800000"
        );
        b.sgprs[106] = 1;
        assert_eq!(diff_waves(&a, &b).unwrap(), "s106: interpreter 0x0, JIT 0x1");
        b.scc = true;
        assert!(diff_waves(&a, &b).unwrap().starts_with("SCC"));
        b.pc = 0x104;
        assert!(diff_waves(&a, &b).unwrap().starts_with("next pc"));
    }

    #[test]
    fn the_memory_diff_names_the_first_differing_dword_or_lds_byte() {
        let a = vec![(0x1000u64, vec![0u8; 16]), (0x2000, vec![0u8; 8])];
        let mut b = a.clone();
        let lds = vec![0u8; 32];
        assert_eq!(diff_memory(&a, &b, &lds, &lds), None);
        b[1].1[5] = 0x80;
        assert_eq!(
            diff_memory(&a, &b, &lds, &lds).unwrap(),
            "memory at 0x2004 (byte 0x5 of the buffer at 0x2000): interpreter 0x00000000, JIT 0x00008000"
        );
        let mut l2 = lds.clone();
        l2[31] = 7;
        assert_eq!(
            diff_memory(&a, &b, &lds, &l2).unwrap(),
            "LDS byte 0x1f: interpreter 0x00, JIT 0x07"
        );
    }
}

//! Code in device memory: a code object's sections loaded at an address ([`LoadedCode`], [`load_code`]) and its
//! instructions decoded once for every dispatch of it ([`DecodeCache`]).

use std::sync::OnceLock;

use isa_amdgpu::codeobj::CodeObject;
use isa_amdgpu::{decode, Inst, Target};

use super::EngineError;
use crate::memory::{AllocKind, DeviceMemory};

/// Decoded instructions of a loaded code object, filled on first execution and shared by all waves and
/// workgroups of a dispatch (one slot per dword of code, in chunks of [`DECODE_CHUNK`] dwords made when an
/// instruction in them is first decoded: code mapped in megabytes by a runtime costs only what runs).
pub struct DecodeCache {
    base: u64,
    dwords: u64,
    chunks: Vec<OnceLock<Box<[DecodeSlot]>>>,
}

type DecodeSlot = OnceLock<Result<Inst, isa_amdgpu::DecodeError>>;

/// Dwords of code per chunk of a [`DecodeCache`].
const DECODE_CHUNK: u64 = 1024;

impl DecodeCache {
    /// An empty cache for `code`. Keep it with the loaded code when the code is dispatched many times: decoding
    /// fills it once.
    pub fn new(code: &LoadedCode) -> DecodeCache {
        let dwords = code.size.div_ceil(4);
        DecodeCache {
            base: code.base,
            dwords,
            chunks: (0..dwords.div_ceil(DECODE_CHUNK)).map(|_| OnceLock::new()).collect(),
        }
    }

    /// The instruction at `pc`, decoded once.
    pub fn get(&self, mem: &DeviceMemory, code: &LoadedCode, pc: u64) -> Result<Inst, isa_amdgpu::DecodeError> {
        let truncated = |have| isa_amdgpu::DecodeError::Truncated {
            address: pc,
            need: 4,
            have,
        };
        if !pc.is_multiple_of(4) || pc < self.base {
            return Err(isa_amdgpu::DecodeError::Invalid {
                address: pc,
                words: vec![],
                reason: "PC outside the code or not dword-aligned",
            });
        }
        let dword = (pc - self.base) / 4;
        if dword >= self.dwords {
            return Err(truncated(0));
        }
        let chunk = self.chunks[(dword / DECODE_CHUNK) as usize]
            .get_or_init(|| (0..DECODE_CHUNK).map(|_| OnceLock::new()).collect());
        let slot = &chunk[(dword % DECODE_CHUNK) as usize];
        slot.get_or_init(|| {
            let mut buf = [0u8; 12];
            let avail = (code.base + code.size).saturating_sub(pc).min(12) as usize;
            if avail < 4 || mem.read(pc, &mut buf[..avail]).is_err() {
                return Err(truncated(avail));
            }
            decode(&buf[..avail], pc, code.target)
        })
        .clone()
    }
}

/// A code object placed in device memory.
pub struct LoadedCode {
    pub base: u64,
    pub size: u64,
    pub target: Target,
    /// A hash of the loaded bytes: the same code object loaded again (at another address) has the same key,
    /// so translations keyed by (key, offset from base) are shared across dispatches.
    pub key: u64,
    /// The code may hold `ds_gws_barrier` or a GWS semaphore instruction (grid-wide sync): its dispatches
    /// need a cooperative launch.
    pub grid_sync: bool,
}

/// Whether machine code `bytes` may hold `ds_gws_barrier` or a global wave sync semaphore instruction
/// (`ds_gws_sema_v`, `_br`, `_p`, `_release_all`): some dword has one of their DS opcodes. A literal that
/// happens to look like one only makes a cooperative dispatch interleave its workgroups, which changes no
/// result. (`ds_gws_init` alone syncs nothing.)
pub fn may_grid_sync(bytes: &[u8]) -> bool {
    const MASK: u32 = 0xfdfe_0000; // encoding and opcode, not the ACC and GDS bits
    const OPCODES: [u32; 5] = [0x98, 0x9a, 0x9b, 0x9c, 0x9d];
    bytes.chunks_exact(4).any(|w| {
        let w = u32::from_le_bytes([w[0], w[1], w[2], w[3]]) & MASK;
        w & 0xfc00_0000 == 0xd800_0000 && OPCODES.contains(&(w >> 17 & 0xff))
    })
}

/// Copies the code object's allocated sections to device memory at their addresses (relative to `base`).
pub fn load_code(mem: &DeviceMemory, co: &CodeObject) -> Result<LoadedCode, EngineError> {
    // gfx950 code decodes and disassembles, but no device runs it
    let target = Target::from_name(&co.target.processor)
        .filter(|t| t.is_executed())
        .ok_or_else(|| EngineError::WrongTarget {
            kernel: co.name.clone(),
            found: co.target.canonical(),
            device: "gfx90a/gfx942",
        })?;
    let end = co
        .sections
        .iter()
        .filter(|s| s.is_alloc())
        .map(|s| s.address + s.size)
        .max()
        .unwrap_or(0);
    let base = mem.allocate(end.max(4), AllocKind::Code, &co.name)?;
    let mut key = 0xcbf2_9ce4_8422_2325u64 ^ target as u64;
    let mut grid_sync = false;
    const SHF_EXECINSTR: u64 = 4;
    for s in co.sections.iter().filter(|s| s.is_alloc() && s.has_file_data()) {
        let bytes = co.section_bytes(s);
        grid_sync |= s.flags & SHF_EXECINSTR != 0 && may_grid_sync(bytes);
        if !bytes.is_empty() {
            mem.load_code_bytes(base + s.address, bytes)
                .expect("sections lie inside the code allocation");
        }
        // FNV-1a over placement and contents
        for b in s.address.to_le_bytes().iter().chain(bytes) {
            key = (key ^ *b as u64).wrapping_mul(0x100_0000_01b3);
        }
    }
    // kernels write their data sections (`__device__` variables), never the code
    const SHF_WRITE: u64 = 1;
    let data: Vec<(u64, u64)> = co
        .sections
        .iter()
        .filter(|s| s.is_alloc() && s.flags & SHF_WRITE != 0)
        .map(|s| (s.address, s.size))
        .collect();
    mem.set_code_writable(base, &data)
        .expect("the code allocation was just made");
    Ok(LoadedCode {
        base,
        size: end,
        target,
        key,
        grid_sync,
    })
}

//! Dispatch geometry and the state a wave starts with, as the hardware sets it from the kernel descriptor.
//!
//! The layout follows LLVM's AMDGPUUsage ("Initial Kernel Execution State"): user SGPRs in the order private
//! segment buffer (4), dispatch ptr (2), queue ptr (2), kernarg segment ptr (2), dispatch id (2), flat scratch
//! init (2), private segment size (1), preloaded kernarg dwords; then system SGPRs: workgroup id x/y/z,
//! workgroup info, private segment wave offset. Work-item ids arrive in VGPRs, packed into v0 (x in bits
//! 9:0, y in 19:10, z in 29:20) on gfx90a and gfx942.

use isa_amdgpu::codeobj::KernelDescriptor;

use crate::device::DevicePreset;

/// Dword 3 of the private segment buffer resource: ADD_TID_ENABLE (bit 23) marks per-lane private memory, with
/// the swizzle of ROCr's scratch resource on gfx9 (ELEMENT_SIZE 4 bytes, bits 20:19 = 1; INDEX_STRIDE 64, bits
/// 22:21 = 3), the layout the semantics give private memory.
pub const PRIVATE_RESOURCE_DWORD3: u32 = 0x0002_7000 | 1 << 19 | 3 << 21 | 1 << 23;

/// SWIZZLE_ENABLE, bit 31 of the private segment buffer resource's dword 1.
const SWIZZLE_ENABLE: u32 = 1 << 31;

/// Why a dispatch cannot start.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DispatchError {
    #[error("grid {grid:?} and workgroup {block:?} must be at least 1 in every dimension")]
    Empty { grid: [u32; 3], block: [u32; 3] },
    #[error("workgroup {block:?} has {threads} work-items; {device} allows at most {max}")]
    WorkgroupTooLarge {
        block: [u32; 3],
        threads: u64,
        device: &'static str,
        max: u32,
    },
    #[error("kernel {kernel}: descriptor says {declared} user SGPRs but enables {enabled}")]
    UserSgprMismatch {
        kernel: String,
        declared: u32,
        enabled: u32,
    },
    #[error("kernel {kernel}: {what}")]
    Unsupported { kernel: String, what: String },
}

/// The shape of a dispatch: work-items per dimension (as HSA and OpenCL count them) and the workgroup size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DispatchShape {
    pub grid: [u32; 3],
    pub block: [u32; 3],
}

impl DispatchShape {
    /// Validates a shape against a device.
    pub fn new(grid: [u32; 3], block: [u32; 3], device: &DevicePreset) -> Result<DispatchShape, DispatchError> {
        if grid.contains(&0) || block.contains(&0) {
            return Err(DispatchError::Empty { grid, block });
        }
        let threads = block.iter().map(|&b| b as u64).product::<u64>();
        if threads > device.max_workgroup_size as u64 {
            return Err(DispatchError::WorkgroupTooLarge {
                block,
                threads,
                device: device.id,
                max: device.max_workgroup_size,
            });
        }
        Ok(DispatchShape { grid, block })
    }

    /// Workgroups per dimension (the last one may be partial).
    pub fn workgroups(&self) -> [u32; 3] {
        [0, 1, 2].map(|i| self.grid[i].div_ceil(self.block[i]))
    }

    /// Total workgroups.
    pub fn workgroup_count(&self) -> u64 {
        self.workgroups().iter().map(|&n| n as u64).product()
    }

    /// The workgroup id of linear index `i` (x fastest).
    pub fn workgroup_id(&self, i: u64) -> [u32; 3] {
        let [nx, ny, _] = self.workgroups().map(|n| n as u64);
        [(i % nx) as u32, ((i / nx) % ny) as u32, (i / (nx * ny)) as u32]
    }

    /// Work-items in workgroup `wg` per dimension: the block size, or the remainder at the grid's edge.
    pub fn workgroup_size(&self, wg: [u32; 3]) -> [u32; 3] {
        [0, 1, 2].map(|i| {
            let start = wg[i] as u64 * self.block[i] as u64;
            (self.grid[i] as u64 - start).min(self.block[i] as u64) as u32
        })
    }

    /// Size of the partial last workgroup per dimension (0 when the grid divides evenly): `hidden_remainder_*`.
    pub fn remainder(&self) -> [u32; 3] {
        [0, 1, 2].map(|i| self.grid[i] % self.block[i])
    }

    /// Waves of `wave_size` lanes in the whole dispatch.
    pub fn total_waves(&self, wave_size: u32) -> u64 {
        // workgroups come in at most eight sizes: full or the partial remainder in each dimension
        let sizes = [0, 1, 2].map(|i| {
            let (full, rest) = (self.grid[i] / self.block[i], self.grid[i] % self.block[i]);
            [(full as u64, self.block[i] as u64), ((rest > 0) as u64, rest as u64)]
        });
        let mut total = 0;
        for x in sizes[0] {
            for y in sizes[1] {
                for z in sizes[2] {
                    let items = x.1 * y.1 * z.1;
                    total += x.0 * y.0 * z.0 * items.div_ceil(wave_size as u64);
                }
            }
        }
        total
    }

    /// Waves of `wave_size` lanes needed by workgroup `wg`.
    pub fn waves_in(&self, wg: [u32; 3], wave_size: u32) -> u32 {
        let s = self.workgroup_size(wg);
        (s[0] * s[1] * s[2]).div_ceil(wave_size)
    }
}

/// Addresses the runtime (or `wavejit run`) placed for this dispatch.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DispatchAddresses {
    pub kernarg: u64,
    pub dispatch_packet: u64,
    pub queue: u64,
    pub dispatch_id: u64,
    /// Start of this wave's scratch (private) memory.
    pub wave_scratch: u64,
    /// Offset of this wave's scratch from the scratch base in the private segment buffer.
    pub wave_scratch_offset: u32,
    /// Scratch base described by the private segment buffer resource.
    pub scratch_base: u64,
}

/// What a wave holds when it starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InitialWaveState {
    /// Initialised SGPRs s0, s1, ... in order.
    pub sgprs: Vec<u32>,
    /// Name of each initialised SGPR group and its first SGPR, for reports and tests.
    pub sgpr_map: Vec<(&'static str, u32)>,
    /// Per lane, the initial VGPRs (v0, and v1/v2 when ids are not packed).
    pub vgprs: Vec<[u32; 64]>,
    /// Lanes that hold work-items.
    pub exec: u64,
}

/// Whether a target packs the work-item ids into v0.
pub fn packed_workitem_ids(device: &DevicePreset) -> bool {
    matches!(device.target, isa_amdgpu::Target::Gfx90a | isa_amdgpu::Target::Gfx942)
}

/// Everything a dispatch fixes for all its waves.
#[derive(Debug, Clone, Copy)]
pub struct DispatchContext<'a> {
    pub kernel: &'a str,
    /// The dispatch's progress, when it is watched ([`crate::watch`]): runners note what waves executed and
    /// stop between blocks once it says so.
    pub progress: Option<&'a crate::watch::Progress>,
    /// The user SGPRs as given ([`crate::engine::Launch::user_sgprs`]), instead of those the descriptor asks for.
    pub user_sgprs: Option<&'a [u32]>,
    pub kd: &'a KernelDescriptor,
    pub device: &'a DevicePreset,
    pub shape: DispatchShape,
    pub kernarg: &'a [u8],
    pub addrs: DispatchAddresses,
}

impl DispatchContext<'_> {
    /// The state wave `wave` of workgroup `wg` starts with.
    pub fn initial_wave_state(&self, wg: [u32; 3], wave: u32) -> Result<InitialWaveState, DispatchError> {
        let t = WaveTemplate::new(self)?;
        let mut sgprs = t.sgprs.clone();
        t.patch(&mut sgprs, wg, self.addrs.scratch_base, self.addrs.wave_scratch);
        let (vgprs, exec) = t.lanes(self.shape.workgroup_size(wg), wave).into_owned();
        Ok(InitialWaveState {
            sgprs,
            sgpr_map: t.map,
            vgprs,
            exec,
        })
    }
}

/// What differs from one wave's initial SGPRs to the next.
#[derive(Debug, Clone, Copy)]
enum Varying {
    /// `workgroup_id_x`, `_y`, `_z`.
    WorkgroupId(usize),
    /// The private segment buffer's base address: its low dword; its high 16 bits with SWIZZLE_ENABLE.
    ScratchBaseLo,
    ScratchBaseHi,
    /// `flat_scratch_init`: the wave's scratch address.
    WaveScratchLo,
    WaveScratchHi,
}

/// The initial state of a dispatch's waves, worked out once per dispatch: the SGPRs in order with the places of
/// those that differ per workgroup or wave, and the work-item ids and EXEC of each wave of a full workgroup.
#[derive(Debug, Clone)]
pub struct WaveTemplate {
    sgprs: Vec<u32>,
    map: Vec<(&'static str, u32)>,
    varying: Vec<(u32, Varying)>,
    /// VGPRs holding work-item ids (1 to 3), and whether they are packed into v0.
    ids: u32,
    packed: bool,
    wave_size: u32,
    block: [u32; 3],
    /// Per wave of a workgroup of the full block size: its initial VGPRs and EXEC.
    full: Vec<(Vec<[u32; 64]>, u64)>,
}

impl WaveTemplate {
    pub fn new(cx: &DispatchContext<'_>) -> Result<WaveTemplate, DispatchError> {
        let DispatchContext {
            kernel,
            kd,
            device,
            shape,
            kernarg,
            addrs,
            user_sgprs,
            ..
        } = *cx;
        // registers a command processor was given: loaded as they are, the descriptor's properties ignored
        let user = if user_sgprs.is_some() {
            Vec::new()
        } else {
            kd.user_sgprs()
        };
        let enabled: u32 = match user_sgprs {
            Some(raw) => raw.len() as u32,
            None => user.iter().map(|s| s.count as u32).sum(),
        };
        if enabled != kd.rsrc2.user_sgpr_count as u32 {
            return Err(DispatchError::UserSgprMismatch {
                kernel: kernel.into(),
                declared: kd.rsrc2.user_sgpr_count as u32,
                enabled,
            });
        }
        let (mut sgprs, mut map, mut varying) = (Vec::new(), Vec::new(), Vec::new());
        if let Some(raw) = user_sgprs {
            map.push(("user_data", 0));
            sgprs.extend_from_slice(raw);
        }
        let lo = |x: u64| x as u32;
        let hi = |x: u64| (x >> 32) as u32;
        for s in &user {
            let at = sgprs.len() as u32;
            map.push((s.name, at));
            match s.name {
                // a buffer resource over this wave's scratch, swizzled and marked ADD_TID (bit 23 of dword 3) like
                // the hardware's private resource; wavejit's MUBUF maps offsets through it to per-lane private memory
                "private_segment_buffer" => {
                    sgprs.extend([0, 0, u32::MAX, PRIVATE_RESOURCE_DWORD3]);
                    varying.extend([(at, Varying::ScratchBaseLo), (at + 1, Varying::ScratchBaseHi)]);
                }
                "dispatch_ptr" => sgprs.extend([lo(addrs.dispatch_packet), hi(addrs.dispatch_packet)]),
                "queue_ptr" => sgprs.extend([lo(addrs.queue), hi(addrs.queue)]),
                "kernarg_segment_ptr" => sgprs.extend([lo(addrs.kernarg), hi(addrs.kernarg)]),
                "dispatch_id" => sgprs.extend([lo(addrs.dispatch_id), hi(addrs.dispatch_id)]),
                "flat_scratch_init" => {
                    sgprs.extend([0, 0]);
                    varying.extend([(at, Varying::WaveScratchLo), (at + 1, Varying::WaveScratchHi)]);
                }
                "private_segment_size" => sgprs.push(kd.private_segment_fixed_size),
                "kernarg_preload" => {
                    let off = kd.preload.offset as usize * 4;
                    for i in 0..s.count as usize {
                        let b = |k: usize| kernarg.get(off + 4 * i + k).copied().unwrap_or(0);
                        sgprs.push(u32::from_le_bytes([b(0), b(1), b(2), b(3)]));
                    }
                }
                other => {
                    return Err(DispatchError::Unsupported {
                        kernel: kernel.into(),
                        what: format!("user SGPR {other}"),
                    })
                }
            }
        }
        for s in kd.system_sgprs() {
            let at = sgprs.len() as u32;
            map.push((s.name, at));
            let id = match s.name {
                "workgroup_id_x" => Some(0),
                "workgroup_id_y" => Some(1),
                "workgroup_id_z" => Some(2),
                _ => None,
            };
            if let Some(d) = id {
                varying.push((at, Varying::WorkgroupId(d)));
            }
            sgprs.push(match s.name {
                _ if id.is_some() => 0,
                // not modelled: no compiler-generated kernel we know of enables it
                "workgroup_info" => 0,
                "private_segment_wavefront_offset" => addrs.wave_scratch_offset,
                other => {
                    return Err(DispatchError::Unsupported {
                        kernel: kernel.into(),
                        what: format!("system SGPR {other}"),
                    })
                }
            });
        }
        let ids = kd.workitem_id_vgprs().ok_or_else(|| DispatchError::Unsupported {
            kernel: kernel.into(),
            what: "enable_vgpr_workitem_id = 3 is undefined".into(),
        })?;
        let mut t = WaveTemplate {
            sgprs,
            map,
            varying,
            ids,
            packed: packed_workitem_ids(device),
            wave_size: device.wave_size,
            block: shape.block,
            full: Vec::new(),
        };
        let threads = shape.block.iter().product::<u32>();
        t.full = (0..threads.div_ceil(device.wave_size))
            .map(|w| t.lane_ids(shape.block, w))
            .collect();
        Ok(t)
    }

    /// The SGPRs s0, s1, ... every wave starts with, before [`WaveTemplate::patch`].
    pub fn sgprs(&self) -> &[u32] {
        &self.sgprs
    }

    /// Sets the SGPRs of `sgprs` (a copy of [`WaveTemplate::sgprs`]) that depend on the wave: its workgroup id
    /// and its scratch.
    pub fn patch(&self, sgprs: &mut [u32], wg: [u32; 3], scratch_base: u64, wave_scratch: u64) {
        for &(at, v) in &self.varying {
            sgprs[at as usize] = match v {
                Varying::WorkgroupId(d) => wg[d],
                Varying::ScratchBaseLo => scratch_base as u32,
                Varying::ScratchBaseHi => (scratch_base >> 32) as u32 & 0xffff | SWIZZLE_ENABLE,
                Varying::WaveScratchLo => wave_scratch as u32,
                Varying::WaveScratchHi => (wave_scratch >> 32) as u32,
            };
        }
    }

    /// The initial VGPRs (v0, and v1/v2 when ids are not packed) and EXEC of wave `wave` of a workgroup of
    /// `size` work-items per dimension.
    pub fn lanes(&self, size: [u32; 3], wave: u32) -> std::borrow::Cow<'_, (Vec<[u32; 64]>, u64)> {
        match self.full.get(wave as usize) {
            Some(l) if size == self.block => std::borrow::Cow::Borrowed(l),
            _ => std::borrow::Cow::Owned(self.lane_ids(size, wave)),
        }
    }

    /// Work-item ids of the lanes of wave `wave` (x fastest, like the hardware's wave packing) of a workgroup of
    /// `size`, and the lanes that hold work-items.
    fn lane_ids(&self, size: [u32; 3], wave: u32) -> (Vec<[u32; 64]>, u64) {
        let (ids, packed) = (self.ids, self.packed);
        let threads = size[0] * size[1] * size[2];
        let mut vgprs = vec![[0u32; 64]; if packed { 1 } else { ids as usize }];
        let mut exec = 0u64;
        for lane in 0..self.wave_size {
            let t = wave * self.wave_size + lane;
            if t >= threads {
                break;
            }
            exec |= 1 << lane;
            let x = t % size[0];
            let y = (t / size[0]) % size[1];
            let z = t / (size[0] * size[1]);
            if packed {
                let mut v = x;
                if ids >= 2 {
                    v |= y << 10;
                }
                if ids >= 3 {
                    v |= z << 20;
                }
                vgprs[0][lane as usize] = v;
            } else {
                for (i, id) in [x, y, z].into_iter().take(ids as usize).enumerate() {
                    vgprs[i][lane as usize] = id;
                }
            }
        }
        (vgprs, exec)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partial_workgroups_and_wave_counts() {
        let dev = DevicePreset::by_name("mi300x").unwrap();
        let s = DispatchShape::new([1000, 3, 1], [256, 2, 1], dev).unwrap();
        assert_eq!(s.workgroups(), [4, 2, 1]);
        assert_eq!(s.workgroup_count(), 8);
        assert_eq!(s.workgroup_size([3, 1, 0]), [1000 - 768, 1, 1]);
        assert_eq!(s.remainder(), [1000 % 256, 1, 0]);
        assert_eq!(s.waves_in([0, 0, 0], 64), 8);
        assert_eq!(s.waves_in([3, 1, 0], 64), 4, "232 work-items need 4 waves");
        assert_eq!(s.workgroup_id(5), [1, 1, 0]);
        let by_group: u64 = (0..s.workgroup_count())
            .map(|i| s.waves_in(s.workgroup_id(i), 64) as u64)
            .sum();
        assert_eq!(s.total_waves(64), by_group);
        let s = DispatchShape::new([1000, 7, 3], [64, 4, 2], dev).unwrap();
        let by_group: u64 = (0..s.workgroup_count())
            .map(|i| s.waves_in(s.workgroup_id(i), 64) as u64)
            .sum();
        assert_eq!(s.total_waves(64), by_group);
        assert!(matches!(
            DispatchShape::new([64, 1, 1], [2048, 1, 1], dev),
            Err(DispatchError::WorkgroupTooLarge { .. })
        ));
        assert!(matches!(
            DispatchShape::new([0, 1, 1], [64, 1, 1], dev),
            Err(DispatchError::Empty { .. })
        ));
    }
}

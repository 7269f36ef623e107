//! Building a workgroup ([`Group`]): its waves with the state the hardware starts them with, its LDS and private
//! memory, and the wave states and LDS a host thread keeps from one workgroup for the next.

use super::{EngineError, Launch};
use crate::device::DevicePreset;
use crate::dispatch::WaveTemplate;
use crate::memory::{AllocKind, DeviceMemory};
use crate::wave::{WaveClock, WaveState};

/// The waves of workgroup `i` (linear index) of `launch`, its LDS and private memory (freed by the caller),
/// the waves' clocks reading `clock`.
pub fn build_group(
    mem: &DeviceMemory,
    device: &DevicePreset,
    launch: &Launch<'_>,
    template: &WaveTemplate,
    i: u64,
    clock: WaveClock,
) -> Result<Group, EngineError> {
    build_group_in(mem, device, launch, template, i, clock, None, true)
}

/// Bytes of private memory workgroup `i` of `launch` needs (0: none).
pub fn group_private_bytes(device: &DevicePreset, launch: &Launch<'_>, i: u64) -> u64 {
    let wg = launch.shape.workgroup_id(i);
    let lane_bytes = launch.private_segment_size.div_ceil(16) * 16;
    lane_bytes as u64 * device.wave_size as u64 * launch.shape.waves_in(wg, device.wave_size) as u64
}

/// A wave's VGPRs and AGPRs by its kernel descriptor.
pub(super) fn register_counts(launch: &Launch<'_>) -> (usize, usize) {
    (
        launch.descriptor.vgpr_alloc_count() as usize,
        launch.descriptor.agpr_alloc_count().unwrap_or(0) as usize,
    )
}

/// Loads the work-item ids ([`WaveTemplate::lanes`]) into a wave's first VGPRs.
pub(super) fn load_ids(wave: &mut WaveState, ids: &[[u32; 64]]) {
    wave.vgprs[..ids.len()].copy_from_slice(ids);
}

/// [`build_group`] with the workgroup's private memory at `private` when given ([`group_private_bytes`] bytes the
/// caller allocated and keeps: a replayed workgroup then sees the same addresses every time; `Group::scratch` is then
/// `None`), and the waves' register files made now or, without `registers`, left for
/// [`Dispatch::give_registers`](super::Dispatch::give_registers)
/// ([`Dispatch::group_registers_later`](super::Dispatch::group_registers_later)).
#[allow(clippy::too_many_arguments)]
pub fn build_group_in(
    mem: &DeviceMemory,
    device: &DevicePreset,
    launch: &Launch<'_>,
    template: &WaveTemplate,
    i: u64,
    clock: WaveClock,
    private: Option<u64>,
    registers: bool,
) -> Result<Group, EngineError> {
    let (shape, descriptor) = (launch.shape, launch.descriptor);
    let (vgprs, agprs) = register_counts(launch);
    let wg = shape.workgroup_id(i);
    let size = shape.workgroup_size(wg);
    let n = shape.waves_in(wg, device.wave_size);
    // private memory: every lane of every wave of this workgroup gets its own segment
    let lane_bytes = launch.private_segment_size.div_ceil(16) * 16;
    let wave_bytes = lane_bytes as u64 * device.wave_size as u64;
    let scratch = if lane_bytes > 0 && private.is_none() {
        Some(mem.allocate(
            wave_bytes * n as u64,
            AllocKind::Scratch,
            &format!("{} workgroup {wg:?}", launch.name),
        )?)
    } else {
        None
    };
    let base = if lane_bytes > 0 { scratch.or(private) } else { None };
    let layout = crate::hwreg::Layout::of(device);
    let (mut waves, lds) = if registers {
        spare_parts(
            n as usize,
            launch.entry,
            vgprs,
            agprs,
            launch.group_segment_size as usize,
        )
    } else {
        (
            (0..n).map(|_| WaveState::without_registers(launch.entry)).collect(),
            vec![0; launch.group_segment_size as usize],
        )
    };
    for (w, wave) in waves.iter_mut().enumerate() {
        let w = w as u32;
        let wave_scratch = base.map_or(0, |s| s + w as u64 * wave_bytes);
        let init = template.sgprs().len();
        wave.sgprs[..init].copy_from_slice(template.sgprs());
        template.patch(&mut wave.sgprs[..init], wg, wave_scratch, wave_scratch);
        // (for a full workgroup the template's lanes, borrowed; a partial one's made here, and again by
        // `Dispatch::give_registers` when its registers come later)
        let lanes = template.lanes(size, w);
        if registers {
            load_ids(wave, &lanes.0);
        }
        wave.set_exec(lanes.1);
        // architected flat scratch (gfx942) and the value gfx90a prologues build from flat_scratch_init
        wave.sgprs[102] = wave_scratch as u32;
        wave.sgprs[103] = (wave_scratch >> 32) as u32;
        wave.scratch_base = wave_scratch;
        wave.scratch_lane_bytes = lane_bytes;
        wave.clock = clock;
        wave.fine_grained_float_atomics = device.fine_grained_float_atomics;
        // the fixed placement of a functional dispatch; the timing model places the wave again
        let at = crate::hwreg::placement(&layout, i, w);
        wave.hw = crate::hwreg::HwRegs::for_wave(device.target, descriptor, launch.group_segment_size, n, at);
    }
    Ok(Group {
        wg,
        waves,
        lds,
        scratch,
    })
}

thread_local! {
    /// The wave states and the LDS of the last workgroup this thread finished ([`recycle`]), for its next one.
    static SPARE: std::cell::RefCell<(Vec<WaveState>, Vec<u8>)> = const { std::cell::RefCell::new((Vec::new(), Vec::new())) };
}

/// `n` fresh wave states starting at `entry` and a zeroed LDS of `lds` bytes, made in place of what this thread's
/// last finished workgroup left where there is some ([`WaveState::reset`]: their windows stay).
fn spare_parts(n: usize, entry: u64, vgprs: usize, agprs: usize, lds: usize) -> (Vec<WaveState>, Vec<u8>) {
    let (mut waves, mut bytes) = SPARE.with_borrow_mut(|(w, l)| (std::mem::take(w), std::mem::take(l)));
    waves.truncate(n);
    for w in waves.iter_mut() {
        w.reset(entry, vgprs, agprs);
    }
    while waves.len() < n {
        waves.push(WaveState::new(entry, vgprs, agprs));
    }
    bytes.clear();
    bytes.resize(lds, 0);
    (waves, bytes)
}

/// Keeps a finished workgroup's wave states and LDS for this thread's next workgroup (whose private memory
/// the caller has freed): making them anew costs more than many a short kernel's instructions.
pub fn recycle(g: Group) {
    SPARE.with_borrow_mut(|(waves, lds)| {
        if g.waves.len() >= waves.len() {
            *waves = g.waves;
        }
        if g.lds.capacity() >= lds.capacity() {
            *lds = g.lds;
        }
    });
}

/// One workgroup being run: its waves, LDS and private memory.
pub struct Group {
    pub wg: [u32; 3],
    pub waves: Vec<WaveState>,
    pub lds: Vec<u8>,
    /// The private-memory allocation to free when the workgroup is done (`None`: none, or the caller's).
    pub scratch: Option<u64>,
}

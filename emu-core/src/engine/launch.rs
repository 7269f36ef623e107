//! A launch: a kernel dispatch over code in device memory ([`Launch`]), the checks it passes first, what its
//! waves share, the event that opens it; and [`KernelDispatch`], which loads a code object, builds its
//! kernel arguments and dispatch packet, and runs the launch.

use isa_amdgpu::codeobj::kd::KernelDescriptor;
use isa_amdgpu::codeobj::{CodeObject, Kernel};

use super::{load_code, run_launch, DecodeCache, EngineError, Interpreter, Limits, LoadedCode, RunStats, WaveRunner};
use crate::device::DevicePreset;
use crate::dispatch::{DispatchAddresses, DispatchContext, DispatchShape};
use crate::kernarg::{build_kernarg, ArgValue, HiddenValues};
use crate::memory::{AllocKind, DeviceMemory};
use crate::observe::{Event, NoObserver, Observer, Resources};

/// A kernel dispatch over code already in device memory, with its kernel-argument segment already built — what
/// an AQL kernel-dispatch packet describes.
pub struct Launch<'a> {
    pub code: &'a LoadedCode,
    /// Decoded instructions of `code` (shared by every dispatch of it).
    pub cache: &'a DecodeCache,
    pub name: &'a str,
    pub descriptor: &'a KernelDescriptor,
    /// Device address of the first instruction.
    pub entry: u64,
    pub shape: DispatchShape,
    /// The kernel-argument segment's bytes, and where they are in device memory.
    pub kernarg: &'a [u8],
    pub kernarg_addr: u64,
    /// LDS bytes per workgroup (static and dynamic) and private bytes per lane.
    pub group_segment_size: u32,
    pub private_segment_size: u32,
    /// Addresses of the dispatch packet and its queue (0 when there is none).
    pub dispatch_packet: u64,
    pub queue: u64,
    /// A cooperative launch: every workgroup is resident at once, so waves of different workgroups can meet at
    /// a global wave sync barrier (grid-wide sync). When its code may sync the grid, its workgroups run
    /// interleaved on one host thread; otherwise as any launch.
    pub cooperative: bool,
    /// The user SGPRs' values as a command processor's registers give them (PM4's `COMPUTE_USER_DATA_*`),
    /// instead of the values the descriptor's code properties ask for (what an AQL packet processor loads).
    pub user_sgprs: Option<&'a [u32]>,
}

/// The target and float-mode checks every launch passes first.
pub fn check_launch(device: &DevicePreset, launch: &Launch<'_>) -> Result<(), EngineError> {
    if launch.code.target != device.target {
        return Err(EngineError::WrongTarget {
            kernel: launch.name.to_string(),
            found: format!("{:?}", launch.code.target),
            device: device.gfx,
        });
    }
    check_float_mode(launch.name, launch.descriptor)
}

/// What every wave of a launch shares.
pub fn dispatch_context<'a>(device: &'a DevicePreset, launch: &Launch<'a>) -> DispatchContext<'a> {
    DispatchContext {
        progress: None,
        user_sgprs: launch.user_sgprs,
        kernel: launch.name,
        kd: launch.descriptor,
        device,
        shape: launch.shape,
        kernarg: launch.kernarg,
        addrs: DispatchAddresses {
            kernarg: launch.kernarg_addr,
            dispatch_packet: launch.dispatch_packet,
            queue: launch.queue,
            ..Default::default()
        },
    }
}

/// What one workgroup of `launch` needs.
pub fn resources(device: &DevicePreset, launch: &Launch<'_>) -> Resources {
    let kd = launch.descriptor;
    let threads: u32 = launch.shape.block.iter().product();
    Resources {
        vgprs: kd.vgpr_alloc_count(),
        agprs: kd.agpr_alloc_count().unwrap_or(0),
        sgprs: kd.sgpr_alloc_count().unwrap_or(0),
        lds_bytes: launch.group_segment_size,
        private_bytes: launch.private_segment_size,
        waves_per_workgroup: threads.div_ceil(device.wave_size),
    }
}

/// The event that opens a dispatch.
pub(super) fn dispatch_begin<'a>(
    dispatch: u64,
    device: &'a DevicePreset,
    launch: &Launch<'a>,
    timing: bool,
) -> Event<'a> {
    Event::DispatchBegin {
        dispatch,
        kernel: std::borrow::Cow::Borrowed(launch.name),
        device: std::borrow::Cow::Borrowed(device.id),
        grid: launch.shape.grid,
        block: launch.shape.block,
        workgroups: launch.shape.workgroup_count(),
        resources: resources(device, launch),
        code_base: launch.code.base,
        entry: launch.entry,
        timing,
    }
}

/// Refuses kernels whose descriptor sets a rounding or denormal mode the engine does not model.
fn check_float_mode(name: &str, descriptor: &KernelDescriptor) -> Result<(), EngineError> {
    use isa_amdgpu::codeobj::kd::{FloatDenormMode, FloatRoundMode};
    let kd = &descriptor.rsrc1;
    // (the names are only written for a refusal: this runs at every dispatch)
    let modes: [(&str, bool, &dyn Fn() -> String); 4] = [
        ("round_32", kd.float_round_mode_32 != FloatRoundMode::NearEven, &|| {
            kd.float_round_mode_32.to_string()
        }),
        (
            "round_16_64",
            kd.float_round_mode_16_64 != FloatRoundMode::NearEven,
            &|| kd.float_round_mode_16_64.to_string(),
        ),
        (
            "denorm_32",
            kd.float_denorm_mode_32 != FloatDenormMode::FlushNone,
            &|| format!("{:?}", kd.float_denorm_mode_32),
        ),
        (
            "denorm_16_64",
            kd.float_denorm_mode_16_64 != FloatDenormMode::FlushNone,
            &|| format!("{:?}", kd.float_denorm_mode_16_64),
        ),
    ];
    match modes.iter().find(|m| m.1) {
        Some((field, _, value)) => Err(EngineError::FloatMode {
            kernel: name.to_string(),
            what: format!("{field} = {}", value()),
        }),
        None => Ok(()),
    }
}

/// A dispatch of one kernel of a code object that is not in device memory yet: what `wavejit run`, the demo
/// and the tests describe. Running it loads the code object, builds the kernel-argument segment (hidden
/// arguments included), runs the [`Launch`] and frees both again.
#[derive(Clone, Copy)]
pub struct KernelDispatch<'a> {
    pub mem: &'a DeviceMemory,
    pub device: &'a DevicePreset,
    pub co: &'a CodeObject,
    pub kernel: &'a Kernel,
    pub shape: DispatchShape,
    /// The kernel's arguments without the hidden ones, in order.
    pub args: &'a [ArgValue],
    pub limits: Limits,
}

impl KernelDispatch<'_> {
    /// Runs the dispatch on the interpreter.
    pub fn run(&self) -> Result<RunStats, EngineError> {
        self.run_with(&Interpreter, &NoObserver)
    }

    /// Runs the dispatch on the interpreter with an observer that sees every executed instruction.
    pub fn run_observed<O: Observer>(&self, observer: &O) -> Result<RunStats, EngineError> {
        self.run_with(&Interpreter, observer)
    }

    /// Runs the dispatch on a chosen [`WaveRunner`] (the interpreter, the JIT), observed by `observer` (in the
    /// timing model when `limits.timing`, as [`run_launch`] does).
    pub fn run_with<R: WaveRunner, O: Observer>(&self, runner: &R, observer: &O) -> Result<RunStats, EngineError> {
        self.launch(|mem, device, launch, limits| run_launch(mem, device, launch, limits, runner, observer))
    }

    /// Loads the code and the kernel arguments, runs `f` on the [`Launch`], frees both.
    pub fn launch<T>(
        &self,
        f: impl FnOnce(&DeviceMemory, &DevicePreset, &Launch<'_>, Limits) -> Result<T, EngineError>,
    ) -> Result<T, EngineError> {
        let KernelDispatch {
            mem,
            device,
            co,
            kernel,
            shape,
            args,
            limits,
        } = *self;
        let code = load_code(mem, co)?;
        let result = (|| {
            if code.target != device.target {
                return Err(EngineError::WrongTarget {
                    kernel: kernel.name.clone(),
                    found: co.target.canonical(),
                    device: device.gfx,
                });
            }
            let meta = co.kernel_metadata(kernel).ok_or_else(|| EngineError::NoMetadata {
                kernel: kernel.name.clone(),
            })?;
            let kernarg = build_kernarg(meta, args, &shape, &HiddenValues::default())?;
            let kernarg_addr = mem.allocate(kernarg.len().max(1) as u64, AllocKind::Kernarg, &kernel.name)?;
            mem.write(kernarg_addr, &kernarg).expect("fits its allocation");
            // the AQL packet a runtime would have put in its queue: kernels of HIP's code object v4 read their
            // workgroup size from it
            let packet = dispatch_packet(&shape, kernel, code.base + kernel.descriptor_address, kernarg_addr);
            let packet_addr = match mem.allocate(
                packet.len() as u64,
                AllocKind::Kernarg,
                &format!("{} dispatch packet", kernel.name),
            ) {
                Ok(a) => a,
                Err(e) => {
                    let _ = mem.free(kernarg_addr);
                    return Err(e.into());
                }
            };
            mem.write(packet_addr, &packet).expect("fits its allocation");
            let cache = DecodeCache::new(&code);
            let launch = Launch {
                code: &code,
                cache: &cache,
                name: &kernel.name,
                descriptor: &kernel.descriptor,
                entry: code.base + kernel.entry_address,
                shape,
                kernarg: &kernarg,
                kernarg_addr,
                group_segment_size: kernel.descriptor.group_segment_fixed_size,
                private_segment_size: kernel.descriptor.private_segment_fixed_size,
                dispatch_packet: packet_addr,
                queue: 0,
                // without a queue to say so, a kernel that syncs the grid is launched cooperatively
                cooperative: code.grid_sync,
                user_sgprs: None,
            };
            let result = f(mem, device, &launch, limits);
            let _ = mem.free(kernarg_addr);
            let _ = mem.free(packet_addr);
            result
        })();
        let _ = mem.free(code.base);
        result
    }
}

/// Bytes of an AQL kernel-dispatch packet (HSA's `hsa_kernel_dispatch_packet_t`).
pub const DISPATCH_PACKET_BYTES: usize = 64;

/// The 64 bytes of the AQL kernel-dispatch packet (HSA's `hsa_kernel_dispatch_packet_t`, little-endian) of a
/// dispatch of `kernel` (its descriptor at `descriptor`) over `shape` with its arguments at `kernarg`: header
/// (kernel dispatch, system-scope acquire and release fences), dimensions, workgroup and grid sizes, segment
/// sizes, kernel object, kernel arguments; no completion signal.
pub fn dispatch_packet(
    shape: &DispatchShape,
    kernel: &isa_amdgpu::codeobj::Kernel,
    descriptor: u64,
    kernarg: u64,
) -> [u8; DISPATCH_PACKET_BYTES] {
    const KERNEL_DISPATCH: u16 = 2;
    const SYSTEM_SCOPE: u16 = 2;
    let header = KERNEL_DISPATCH | SYSTEM_SCOPE << 9 | SYSTEM_SCOPE << 11;
    let dims: u16 = if shape.grid[2] > 1 || shape.block[2] > 1 {
        3
    } else if shape.grid[1] > 1 || shape.block[1] > 1 {
        2
    } else {
        1
    };
    let mut p = [0u8; DISPATCH_PACKET_BYTES];
    p[0..2].copy_from_slice(&header.to_le_bytes());
    p[2..4].copy_from_slice(&dims.to_le_bytes());
    for d in 0..3 {
        p[4 + 2 * d..6 + 2 * d].copy_from_slice(&(shape.block[d] as u16).to_le_bytes());
        p[12 + 4 * d..16 + 4 * d].copy_from_slice(&shape.grid[d].to_le_bytes());
    }
    p[24..28].copy_from_slice(&kernel.descriptor.private_segment_fixed_size.to_le_bytes());
    p[28..32].copy_from_slice(&kernel.descriptor.group_segment_fixed_size.to_le_bytes());
    p[32..40].copy_from_slice(&descriptor.to_le_bytes());
    p[40..48].copy_from_slice(&kernarg.to_le_bytes());
    p
}

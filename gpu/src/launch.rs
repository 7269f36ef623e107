//! A kernel dispatch of a code object not yet in device memory (what `wavejit run` and the Python package
//! launch), with dynamic LDS: bytes per workgroup beyond the descriptor's static group segment, as HIP's
//! `hipModuleLaunchKernel` takes them (`sharedMemBytes`) and Triton's kernels ask for all their LDS.

use emu_core::device::DevicePreset;
use emu_core::engine::{
    dispatch_packet, run_launch, EngineError, Interpreter, KernelDispatch, Launch, Limits, RunStats, WaveRunner,
};
use emu_core::kernarg::{build_kernarg, HiddenValues};
use emu_core::memory::DeviceMemory;
use emu_core::observe::Observer;
use emu_core::timing::TimingStats;
use isa_amdgpu::codeobj::Kernel;

/// A kernel dispatch with dynamic LDS: `dynamic_lds` bytes per workgroup beyond the kernel descriptor's static
/// group segment, as HIP's `hipModuleLaunchKernel` takes them (`sharedMemBytes`). The launch's group segment is
/// their sum ([`group_segment`]); the AQL packet says so and the hidden argument `hidden_dynamic_lds_size` holds
/// `dynamic_lds`, as a runtime fills them.
#[derive(Clone, Copy)]
pub struct Dispatch<'a> {
    pub kernel: KernelDispatch<'a>,
    pub dynamic_lds: u32,
}

/// The LDS bytes per workgroup of a dispatch of `kernel` with `dynamic` bytes asked for at launch: the
/// descriptor's static size plus `dynamic`, an error when that is more than `device` has.
pub fn group_segment(device: &DevicePreset, kernel: &Kernel, dynamic: u32) -> Result<u32, String> {
    let fixed = kernel.descriptor.group_segment_fixed_size;
    let total = fixed as u64 + dynamic as u64;
    if total > device.lds_bytes {
        return Err(format!(
            "kernel {}: {fixed} bytes of static LDS and {dynamic} of dynamic LDS (--lds) make {total} bytes per \
             workgroup, more than the {} bytes of LDS of an {}",
            kernel.name, device.lds_bytes, device.id
        ));
    }
    Ok(total as u32)
}

impl<'a> Dispatch<'a> {
    /// `kernel` with `dynamic_lds` bytes of LDS per workgroup asked for at launch; an error when the group
    /// segment does not fit the device ([`group_segment`]).
    pub fn new(kernel: KernelDispatch<'a>, dynamic_lds: u32) -> Result<Dispatch<'a>, String> {
        group_segment(kernel.device, kernel.kernel, dynamic_lds)?;
        Ok(Dispatch { kernel, dynamic_lds })
    }
}

impl<'a> From<&KernelDispatch<'a>> for Dispatch<'a> {
    fn from(kernel: &KernelDispatch<'a>) -> Dispatch<'a> {
        Dispatch {
            kernel: *kernel,
            dynamic_lds: 0,
        }
    }
}

impl<'a> From<&Dispatch<'a>> for Dispatch<'a> {
    fn from(d: &Dispatch<'a>) -> Dispatch<'a> {
        *d
    }
}

impl Dispatch<'_> {
    /// [`KernelDispatch::launch`] with the dynamic LDS added to the launch.
    pub fn launch<T>(
        &self,
        f: impl FnOnce(&DeviceMemory, &DevicePreset, &Launch<'_>, Limits) -> Result<T, EngineError>,
    ) -> Result<T, EngineError> {
        let (d, extra) = (self.kernel, self.dynamic_lds);
        d.launch(|mem, device, launch, limits| {
            if extra == 0 {
                return f(mem, device, launch, limits);
            }
            // (`Dispatch::new` checked that it fits the device)
            let total = launch.group_segment_size + extra;
            let meta = d.co.kernel_metadata(d.kernel).ok_or_else(|| EngineError::NoMetadata {
                kernel: d.kernel.name.clone(),
            })?;
            let hidden = HiddenValues {
                dynamic_lds_size: extra,
                ..HiddenValues::default()
            };
            let kernarg = build_kernarg(meta, d.args, &launch.shape, &hidden)?;
            mem.write(launch.kernarg_addr, &kernarg)
                .expect("the same size as the segment the launch wrote");
            let mut sized = d.kernel.clone();
            sized.descriptor.group_segment_fixed_size = total;
            let descriptor = launch.code.base + d.kernel.descriptor_address;
            let packet = dispatch_packet(&launch.shape, &sized, descriptor, launch.kernarg_addr);
            mem.write(launch.dispatch_packet, &packet)
                .expect("the packet the launch wrote");
            let launch = Launch {
                kernarg: &kernarg,
                group_segment_size: total,
                ..*launch
            };
            f(mem, device, &launch, limits)
        })
    }

    /// [`KernelDispatch::run_with`] with the dynamic LDS.
    pub fn run_with<R: WaveRunner, O: Observer>(&self, runner: &R, observer: &O) -> Result<RunStats, EngineError> {
        self.launch(|mem, device, launch, limits| run_launch(mem, device, launch, limits, runner, observer))
    }

    /// [`KernelDispatch::run_timed`] with the dynamic LDS.
    pub fn run_timed<R: WaveRunner, O: Observer>(
        &self,
        runner: &R,
        observer: &O,
    ) -> Result<(RunStats, TimingStats), EngineError> {
        self.launch(|mem, device, launch, limits| {
            emu_core::timing::sched::run_timed(mem, device, launch, Limits { timing: true, ..limits }, runner, observer)
        })
    }

    /// On the interpreter, seen by `observer`.
    pub fn run_observed<O: Observer>(&self, observer: &O) -> Result<RunStats, EngineError> {
        self.run_with(&Interpreter, observer)
    }
}

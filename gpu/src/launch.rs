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

    /// On `jit` (`None`: the interpreter), seen by `observer`; in the timing model when the dispatch's limits
    /// say so, then with the model's statistics ([`crate::dispatch::run_on`]).
    pub fn run_on<O: Observer>(
        &self,
        jit: Option<&jit::Jit>,
        observer: &O,
    ) -> Result<(RunStats, Option<TimingStats>), EngineError> {
        self.launch(|mem, device, launch, limits| crate::dispatch::run_on(mem, device, launch, limits, jit, observer))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use emu_core::dispatch::DispatchShape;
    use emu_core::kernarg::ArgValue;
    use emu_core::memory::AllocKind;
    use isa_amdgpu::codeobj::{CodeObject, KernelArg};

    #[test]
    fn dynamic_lds_sizes_the_launch_the_packet_and_the_hidden_argument_within_the_devices_lds() {
        let dev = DevicePreset::by_name("mi210").unwrap();
        let mem = DeviceMemory::new(1 << 30).unwrap();
        let mut co = CodeObject::parse(test_kernels::by_name("divide-gfx90a.co").unwrap(), "divide").unwrap();
        let kernel = co.kernels[0].clone();
        assert_eq!(
            (kernel.name.as_str(), kernel.descriptor.group_segment_fixed_size),
            ("divide", 0)
        );
        // the hidden argument of a HIP kernel that uses dynamic shared memory, in the segment's free space
        let meta = &mut co.metadata.as_mut().unwrap().kernels[kernel.metadata_index.unwrap()];
        let hidden = KernelArg {
            value_kind: "hidden_dynamic_lds_size".into(),
            offset: 128,
            size: 4,
            ..meta.args.last().unwrap().clone()
        };
        meta.args.push(hidden);
        let buffers: Vec<ArgValue> = (0..6)
            .map(|_| ArgValue::Pointer(mem.allocate(256, AllocKind::Buffer, "b").unwrap()))
            .chain([ArgValue::U32(64)])
            .collect();
        let d = KernelDispatch {
            mem: &mem,
            device: dev,
            co: &co,
            kernel: &kernel,
            shape: DispatchShape::new([64, 1, 1], [64, 1, 1], dev).unwrap(),
            args: &buffers,
            limits: Limits::default(),
        };
        let seen = |d: Dispatch<'_>| {
            d.launch(|mem, _, launch, _| {
                let mut packet = [0u8; 4];
                mem.read(launch.dispatch_packet + 28, &mut packet).unwrap();
                let mut arg = [0u8; 4];
                mem.read(launch.kernarg_addr + 128, &mut arg).unwrap();
                Ok((
                    launch.group_segment_size,
                    u32::from_le_bytes(packet),
                    u32::from_le_bytes(arg),
                    u32::from_le_bytes(launch.kernarg[128..132].try_into().unwrap()),
                ))
            })
            .unwrap()
        };
        assert_eq!(seen(Dispatch::from(&d)), (0, 0, 0, 0));
        assert_eq!(seen(Dispatch::new(d, 4096).unwrap()), (4096, 4096, 4096, 4096));
        assert_eq!(
            seen(Dispatch::new(d, 65536).unwrap()).0,
            65536,
            "all of the device's LDS"
        );
        let e = Dispatch::new(d, 65537).err().unwrap();
        assert!(
            e.contains("make 65537 bytes per workgroup, more than the 65536 bytes of LDS of an mi210"),
            "{e}"
        );
        assert!(Dispatch::new(d, u32::MAX).is_err(), "no overflow");
    }

    #[test]
    fn run_on_runs_the_engine_asked_for_observed_and_timed_when_the_limits_say_so() {
        let dev = DevicePreset::by_name("mi210").unwrap();
        let mem = DeviceMemory::new(1 << 30).unwrap();
        let co = CodeObject::parse(test_kernels::by_name("vadd-gfx90a.co").unwrap(), "vadd").unwrap();
        let n = 1000u32;
        let buf = |v: f32| {
            let a = mem.allocate(4 * n as u64, AllocKind::Buffer, "b").unwrap();
            mem.write(a, &v.to_le_bytes().repeat(n as usize)).unwrap();
            a
        };
        let (a, b, c) = (buf(1.5), buf(2.0), buf(0.0));
        let args = [
            ArgValue::Pointer(a),
            ArgValue::Pointer(b),
            ArgValue::Pointer(c),
            ArgValue::U32(n),
        ];
        let jit = jit::Jit::new().unwrap();
        let mut seen = Vec::new();
        for (engine, timing) in [(None, false), (Some(&jit), false), (None, true), (Some(&jit), true)] {
            mem.write(c, &[0u8; 4000]).unwrap();
            let d = Dispatch::from(&KernelDispatch {
                mem: &mem,
                device: dev,
                co: &co,
                kernel: &co.kernels[0],
                shape: DispatchShape::new([n, 1, 1], [256, 1, 1], dev).unwrap(),
                args: &args,
                limits: Limits {
                    timing,
                    ..Limits::default()
                },
            });
            let counter = profiler_hooks::ClassCounter::default();
            let (stats, t) = d.run_on(engine, &counter).unwrap();
            assert_eq!(mem.read_u32(c + 4 * 999).unwrap(), 3.5f32.to_bits());
            assert_eq!(t.is_some(), timing, "timing statistics exactly when timed");
            assert_eq!(stats.cycles.is_some(), timing);
            let counted: u64 = counter.counts().iter().map(|(_, k)| k).sum();
            assert_eq!(counted, stats.wave_instructions, "the observer saw every instruction");
            seen.push(stats.wave_instructions);
        }
        assert!(seen.iter().all(|&k| k == seen[0] && k > 0), "{seen:?}");
    }
}

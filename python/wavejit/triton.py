"""wavejit as Triton's driver: ``@triton.jit`` kernels compiled by Triton's own AMD backend run on an emulated GPU.

>>> import triton, triton.language as tl, numpy as np, wavejit, wavejit.triton
>>> dev = wavejit.Device("mi300x")
>>> wavejit.triton.activate(dev)                      # doctest: +SKIP
>>> add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK_SIZE=1024)   # x, y, out: dev.array(...)

`activate(dev)` makes a `WavejitDriver` Triton's active driver (``triton.runtime.driver.set_active``). Triton then
compiles for the device's target (``GPUTarget("hip", "gfx942", 64)`` for an MI300X, ``gfx90a`` for an MI210 or an
MI250X GCD) and launches through this driver: the code object Triton built (the compiled kernel's ``asm["hsaco"]``)
is loaded on the device, the grid of programs becomes a grid of ``num_warps`` wave-sized workgroups, the LDS Triton
asks for (``metadata.shared``) is given at launch, scalars are laid out by Triton's types, and the two scratch
pointers Triton appends (global and profile scratch) are filled. Triton's cache, autotuning and ``num_stages``
work as on a GPU; no PyTorch is needed.

Timing: on a device made with ``timing=True`` the driver's clock is the device's modeled time, so
``triton.testing.do_bench`` (which `activate` replaces by this module's `do_bench`: the same statistics, with the
number of runs chosen from wall-clock time, since a modeled microsecond takes milliseconds to emulate) and the
autotuner report and compare modeled kernel time. Without timing the clock is the host's.
"""

from __future__ import annotations

import functools
import itertools
import time
from typing import Any, Callable, Dict, List, Optional, Sequence

import numpy as np

try:
    import triton
    import triton.testing
    from triton.backends.compiler import GPUTarget
    from triton.backends.driver import DriverBase, decompose_descriptor, expand_signature
    from triton.runtime import _allocation
except ImportError as e:  # pragma: no cover - exercised only without Triton
    raise ImportError(
        "wavejit.triton needs Triton (pip install triton; wavejit is tested with Triton 3.9): " + str(e)
    ) from e

from . import Device, DeviceArray, WavejitError

__all__ = ["WavejitDriver", "activate", "deactivate", "do_bench"]

# Triton's scalar types by how a launch passes them: integers as Python ints (laid out in the kernel's slot,
# two's complement), fp16/fp32/fp64 as Python floats (rounded to the slot's format), bf16 as its bits.
_INT_TYPES = {"i1", "i8", "i16", "i32", "i64", "u1", "u8", "u16", "u32", "u64"}
_FLOAT_TYPES = {"fp16", "fp32", "f32", "fp64"}


def _bf16_bits(x: float) -> np.uint16:
    # Triton's own HIP launcher keeps the top 16 bits of the float32
    return np.uint16(np.array([x], dtype=np.float32).view(np.uint32)[0] >> 16)


def _flatten(signature: Sequence[Any], values: Sequence[Any], out_types: List[str], out_values: List[Any]) -> None:
    """The kernel's arguments in order, as Triton's launchers pass them: tuples flattened, constexprs left out, and a
    host-side tensor descriptor as its base pointer, shape, strides and flags (what kernels for targets without
    tensor-descriptor hardware take)."""
    for ty, v in zip(signature, values):
        if isinstance(ty, tuple):
            _flatten(ty, v, out_types, out_values)
        elif ty == "constexpr":
            continue
        elif ty.startswith("tensordesc"):
            out_types.extend(expand_signature([ty], None, "tensordesc"))
            out_values.extend(decompose_descriptor(v))
        else:
            out_types.append(ty)
            out_values.append(v)


def _convert(ty: str, v: Any) -> Any:
    if ty.startswith("*"):
        return v
    if ty in _INT_TYPES:
        return int(v)
    if ty in _FLOAT_TYPES:
        return float(v)
    if ty == "bf16":
        return _bf16_bits(float(v))
    raise NotImplementedError(f"wavejit's Triton driver cannot pass arguments of Triton type {ty!r}")


class _Launcher:
    """What Triton calls to launch a compiled kernel (its ``launcher_cls(src, metadata)``)."""

    def __init__(self, driver: "WavejitDriver", src: Any, metadata: Any):
        self.driver = driver
        if getattr(metadata, "tensordesc_meta", None):
            raise NotImplementedError(
                "wavejit's Triton driver does not support tensor descriptors in the descriptor format of "
                f"{metadata.target.arch} (tensordesc_meta)"
            )
        self.signature = list(dict(src.signature).values())
        self.warp_size = metadata.warp_size
        self.global_scratch = (metadata.global_scratch_size, metadata.global_scratch_align)
        self.profile_scratch = (metadata.profile_scratch_size, metadata.profile_scratch_align)

    def __call__(self, grid_x, grid_y, grid_z, stream, function, kernel_metadata, launch_metadata,
                 launch_enter_hook, launch_exit_hook, *args):
        num_warps, num_ctas, shared = kernel_metadata
        if num_ctas != 1:
            raise NotImplementedError(f"num_ctas={num_ctas}: wavejit's devices launch one workgroup per program")
        if grid_x * grid_y * grid_z == 0:
            return
        kernel = self.driver._function(function)
        programs = grid_x * grid_y * grid_z

        def scratch(size_align, allocator):
            size, align = size_align
            if size <= 0:
                return None
            return allocator(programs * size, align, stream)

        global_scratch = scratch(self.global_scratch, _allocation._allocator.get())
        if _allocation.has_profile_allocator():
            profile_scratch = scratch(self.profile_scratch, _allocation._profile_allocator.get())
        else:
            profile_scratch = scratch(self.profile_scratch, self.driver.allocate_default_profile_scratch)
        types: List[str] = []
        values: List[Any] = []
        _flatten(self.signature, args, types, values)
        kernel_args = [_convert(t, v) for t, v in zip(types, values)] + [global_scratch, profile_scratch]
        if launch_enter_hook is not None and launch_metadata is not None:
            launch_enter_hook(launch_metadata)
        block = num_warps * self.warp_size
        kernel.launch(*kernel_args, grid=(grid_x * block, grid_y, grid_z), block=(block, 1, 1), lds=shared)
        if launch_exit_hook is not None and launch_metadata is not None:
            launch_exit_hook(launch_metadata)


# The kernels Triton loaded, by the handle `load_binary` gave it (one numbering for every device: Triton unloads a
# kernel through whichever driver is active when it drops it).
_functions: Dict[int, Any] = {}
_handles = itertools.count(1)


class _Utils:
    """The driver's ``utils``: loading code objects and the device's properties."""

    def __init__(self, driver: "WavejitDriver"):
        self.driver = driver

    def load_binary(self, name: str, kernel: bytes, shared: int, device: int):
        d = self.driver
        d._check_device(device)
        module = d.device.load(bytes(kernel))
        k = module[name]
        handle = next(_handles)
        _functions[handle] = k
        meta = d._metadata(k)
        spills = int(meta.get("vgpr_spill_count") or 0)
        max_threads = int(meta.get("max_flat_workgroup_size") or 1024)
        regs = k.descriptor["vgprs"] + k.descriptor["agprs"]
        return handle, handle, regs, spills, max_threads

    def unload_module(self, module: int) -> None:
        _functions.pop(module, None)

    def get_device_properties(self, device: int) -> Dict[str, Any]:
        d = self.driver
        d._check_device(device)
        p = d.device.properties
        # a bus width and clock that give the preset's bandwidth by Triton's formula (clock x 2 x width / 8)
        bus_width = 8192 if p["memory_bandwidth_gbs"] > 4000 else 4096
        mem_clock_khz = int(p["memory_bandwidth_gbs"] * 1e9 * 8 / (2 * bus_width) / 1e3)
        return {
            "max_shared_mem": p["lds_bytes"],
            "max_num_regs": p["vgprs_per_lane"] * p["wave_size"],
            "multiprocessor_count": p["compute_units"],
            "sm_clock_rate": p["engine_clock_mhz"] * 1000,
            "mem_clock_rate": mem_clock_khz,
            "mem_bus_width": bus_width,
            "arch": d.device.gfx,
            "warpSize": p["wave_size"],
            "max_threads_per_sm": p["max_waves_per_simd"] * p["simds_per_cu"] * p["wave_size"],
            "cooperativeLaunch": True,
        }

    def set_printf_fifo_size(self, size: int) -> None:
        raise NotImplementedError("device printf is not available through wavejit's Triton driver")


class _Event:
    """An event of the driver's clock (modeled time with timing, host time without)."""

    def __init__(self, driver: "WavejitDriver", enable_timing: bool = False, **_: Any):
        self._driver = driver
        self._t: Optional[int] = None

    def record(self, stream: Any = None) -> None:
        self._t = self._driver._ticks()

    def synchronize(self) -> None:
        pass

    def query(self) -> bool:
        return True

    def elapsed_time(self, end: "_Event") -> float:
        """Milliseconds from this event to `end`."""
        if self._t is None or end._t is None:
            raise RuntimeError("elapsed_time of an event that was not recorded")
        return self._driver._ms_between(self._t, end._t)


class _DeviceInterface:
    """The little of ``torch.cuda`` Triton's benchmarking uses: events, synchronize, the current device."""

    def __init__(self, driver: "WavejitDriver"):
        self._driver = driver

    def Event(self, enable_timing: bool = False, **kwargs: Any) -> _Event:  # noqa: N802 (torch's name)
        return _Event(self._driver, enable_timing)

    def synchronize(self, device: Any = None) -> None:
        pass

    def current_device(self) -> int:
        return self._driver.get_current_device()

    def device_count(self) -> int:
        return 1


class WavejitDriver(DriverBase):
    """Triton's driver for one wavejit `Device` (see the module's documentation)."""

    def __init__(self, device: Device):
        super().__init__()
        if not isinstance(device, Device):
            raise TypeError(f"WavejitDriver takes a wavejit.Device, got {type(device).__name__}")
        self.device = device
        self.utils = _Utils(self)
        self.launcher_cls = functools.partial(_Launcher, self)

    # --- what Triton asks a driver

    @classmethod
    def is_active(cls) -> bool:
        # never chosen by Triton on its own: `activate` makes it the active driver
        return False

    def map_python_to_cpp_type(self, ty: str) -> str:
        if ty.startswith("*"):
            return "hipDeviceptr_t"
        return {
            "i1": "int8_t", "i8": "int8_t", "i16": "int16_t", "i32": "int32_t", "i64": "int64_t",
            "u1": "uint8_t", "u8": "uint8_t", "u16": "uint16_t", "u32": "uint32_t", "u64": "uint64_t",
            "fp16": "double", "bf16": "double", "fp32": "double", "f32": "double", "fp64": "double",
        }[ty]

    def get_current_target(self) -> GPUTarget:
        return GPUTarget("hip", self.device.gfx, self.device.properties["wave_size"])

    def get_current_device(self) -> int:
        # Triton keys its compiled kernels by device: every wavejit device has its own number
        return self.device._core.serial

    def set_current_device(self, device: int) -> None:
        self._check_device(device)

    def get_current_stream(self, device: Any = None) -> int:
        return 0

    def get_active_torch_device(self) -> Any:
        raise NotImplementedError("wavejit's devices are not PyTorch devices; use wavejit device arrays")

    def get_device_interface(self) -> _DeviceInterface:
        return _DeviceInterface(self)

    def get_benchmarker(self) -> Callable[..., Any]:
        return do_bench

    def get_empty_cache_for_benchmark(self) -> DeviceArray:
        # each modeled launch starts with cold caches (the timing model keeps no cache state between launches),
        # so there is nothing to flush; Triton still gets something to clear
        return self.device.empty(1, np.int32)

    def clear_cache(self, cache: DeviceArray) -> None:
        cache.zero_()

    def allocate_default_profile_scratch(self, size: int, alignment: int, stream: Any) -> DeviceArray:
        return self.device.zeros(size, np.int8)

    # --- this driver's own

    def clock_ns(self) -> float:
        """The driver's clock: the device's modeled nanoseconds with timing, the host's without."""
        if self.device.timing:
            return self.device.modeled_ns
        return float(time.perf_counter_ns())

    def _ticks(self) -> int:
        # the clock as a whole number (modeled shader cycles with timing, host nanoseconds without), so that
        # the time between two readings does not depend on how much time came before them
        if self.device.timing:
            return self.device.modeled_cycles
        return time.perf_counter_ns()

    def _ms_between(self, t0: int, t1: int) -> float:
        if self.device.timing:
            return (t1 - t0) * (self.device.modeled_ns_per_cycle or 0.0) / 1e6
        return (t1 - t0) / 1e6

    def _check_device(self, device: Any) -> None:
        if device is not None and device != self.get_current_device():
            raise ValueError(f"device {device}: this driver runs wavejit device {self.get_current_device()}")

    def _function(self, handle: int) -> Any:
        try:
            return _functions[handle]
        except KeyError:
            raise WavejitError(f"kernel handle {handle} is not loaded on {self.device.id}") from None

    def _metadata(self, kernel: Any) -> Dict[str, Any]:
        import json

        return json.loads(kernel.metadata_json)


_saved: Dict[str, Any] = {}


def _allocator_for(device: Device) -> Callable[[int, int, Any], DeviceArray]:
    def allocate(size: int, alignment: int, stream: Any) -> DeviceArray:
        return device.zeros(size, np.int8)

    return allocate


def activate(device: Device) -> WavejitDriver:
    """Makes `device` where Triton compiles for and launches kernels; returns the driver. Also sets Triton's
    allocator (scratch memory of kernels that ask for it) to one on `device`, and replaces
    ``triton.testing.do_bench`` by this module's `do_bench`. `deactivate` undoes all three."""
    driver = WavejitDriver(device)
    if not _saved:
        _saved["do_bench"] = triton.testing.do_bench
        _saved["allocator"] = _allocation._allocator.get()
    triton.runtime.driver.set_active(driver)
    triton.set_allocator(_allocator_for(device))
    triton.testing.do_bench = do_bench
    return driver


def deactivate() -> None:
    """Gives Triton back its own driver, allocator and ``do_bench``."""
    if not _saved:
        return
    triton.testing.do_bench = _saved.pop("do_bench")
    triton.set_allocator(_saved.pop("allocator"))
    try:
        triton.runtime.driver.reset_active()
    except RuntimeError:
        # Triton finds no driver of its own (a machine without a GPU)
        triton.runtime.driver.set_active(_Inactive())


class _Inactive(DriverBase):
    """The active driver after `deactivate` where Triton has none of its own: it launches nothing, and lets Triton
    drop the kernels it compiled for wavejit devices."""

    def __init__(self):
        super().__init__()
        self.utils = self

    @classmethod
    def is_active(cls) -> bool:
        return False

    def unload_module(self, module: int) -> None:
        _functions.pop(module, None)

    def _none(self, *args: Any, **kwargs: Any) -> Any:
        raise WavejitError("Triton has no driver: wavejit.triton.deactivate() was called and this machine has no GPU "
                           "Triton could use; call wavejit.triton.activate(dev)")

    map_python_to_cpp_type = get_current_target = get_active_torch_device = get_benchmarker = _none
    get_current_device = get_current_stream = get_device_properties = load_binary = _none


def _active() -> WavejitDriver:
    d = triton.runtime.driver.active
    if not isinstance(d, WavejitDriver):
        raise WavejitError("no wavejit device is Triton's driver: call wavejit.triton.activate(dev) first")
    return d


def do_bench(fn: Callable[[], Any], warmup: float = 25, rep: float = 100, grad_to_none: Any = None,
             quantiles: Optional[Sequence[float]] = None, return_mode: str = "mean"):
    """``triton.testing.do_bench`` for wavejit: the time of each run of `fn` in milliseconds by the active
    driver's clock (the device's modeled time when it has timing), summarized as Triton's does (`quantiles`,
    or `return_mode` "mean", "median", "min", "max" or "all"). `warmup` and `rep` are wall-clock milliseconds of
    warm-up and of measured runs, as on a GPU; at least one of each runs."""
    if return_mode not in ("min", "max", "mean", "median", "all"):
        raise ValueError(f"return_mode={return_mode!r}: expected min, max, mean, median or all")
    driver = _active()
    fn()
    start = time.perf_counter()
    for _ in range(3):
        fn()
    wall_ms = max((time.perf_counter() - start) * 1e3 / 3, 1e-6)
    n_warmup = max(1, int(warmup / wall_ms))
    n_repeat = max(1, int(rep / wall_ms))
    for _ in range(n_warmup):
        fn()
    times = []
    for _ in range(n_repeat):
        if grad_to_none is not None:
            for x in grad_to_none:
                x.grad = None
        t0 = driver._ticks()
        fn()
        times.append(driver._ms_between(t0, driver._ticks()))
    return triton.testing._summarize_statistics(times, quantiles, return_mode)

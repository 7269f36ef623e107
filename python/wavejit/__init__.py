"""wavejit from Python: emulated AMD GPUs (MI300X, MI210, MI250X GCD) that run real code objects.

>>> import numpy as np, wavejit
>>> dev = wavejit.Device("mi300x", timing=True)
>>> vadd = dev.load(wavejit.bundled("vadd-gfx942.co"))["vadd"]
>>> a, b = dev.array(np.arange(1000, dtype=np.float32)), dev.array(np.ones(1000, np.float32))
>>> c = dev.empty(1000, np.float32)
>>> vadd(a, b, c, 1000, grid=1000, block=256)      # doctest: +ELLIPSIS
<wavejit.Launch vadd on mi300x (jit): ...>
>>> bool((c.numpy() == np.arange(1000) + 1).all())
True

A launch runs on the device's engine with the GIL released; `dev.last` holds its statistics, counters and (when
launched with ``trace=True``) its wavefront explorer page. Triton kernels run through `wavejit.triton`.
"""

from __future__ import annotations

import os
from collections import namedtuple
from typing import Any, Iterable, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import _wavejit
from ._wavejit import GpuFault, Kernel, Launch, Module, WavejitError

__all__ = [
    "Device",
    "DeviceArray",
    "GpuFault",
    "Kernel",
    "Launch",
    "Module",
    "Preset",
    "WavejitError",
    "bundled",
    "bundled_names",
    "devices",
]

Preset = namedtuple("Preset", "id name gfx compute_units memory_bytes lds_bytes")
Preset.__doc__ = "A device preset: its id (what Device takes), marketing name, processor and figures."

Shape = Union[int, Sequence[int]]


def devices() -> List[Preset]:
    """The device presets, e.g. ``[Preset(id='mi300x', name='AMD Instinct MI300X', gfx='gfx942', ...), ...]``."""
    return [Preset(*p) for p in _wavejit.presets()]


def bundled(name: str) -> bytes:
    """The bytes of a code object bundled with wavejit (``"vadd-gfx942.co"``; see `bundled_names`)."""
    return _wavejit.bundled(name)


def bundled_names() -> List[str]:
    """The file names of the bundled code objects (their sources are in wavejit's test-kernels/)."""
    return _wavejit.bundled_names()


def _shape(shape: Shape) -> Tuple[int, ...]:
    if isinstance(shape, (int, np.integer)):
        shape = (int(shape),)
    if isinstance(shape, (str, bytes)):
        raise TypeError(f"shape: expected an int or a sequence of ints, got {type(shape).__name__}")
    try:
        dims = tuple(int(d) for d in shape)
    except TypeError:
        raise TypeError(f"shape: expected an int or a sequence of ints, got {type(shape).__name__}") from None
    if any(d < 0 for d in dims):
        raise ValueError(f"shape {dims}: sizes cannot be negative")
    return dims


def _dtype(dtype: Any) -> np.dtype:
    try:
        dt = np.dtype(dtype)
    except TypeError as e:
        raise TypeError(f"dtype {dtype!r}: {e}") from None
    if dt.hasobject or dt.kind in "OUSVMm":
        raise TypeError(f"dtype {dt}: device arrays hold numbers (bool, integers, floats, complex)")
    return dt


class DeviceArray:
    """An n-dimensional array in an emulated GPU's memory (C order), made by `Device.array`, `Device.empty` or
    `Device.zeros`. Its memory is freed when the array is collected. Kernels take it as a buffer argument;
    ``data_ptr()`` gives its device address (what Triton asks for)."""

    __slots__ = ("_buffer", "_shape", "_dtype", "_device", "__weakref__")

    def __init__(self, device: "Device", buffer: "_wavejit.Buffer", shape: Tuple[int, ...], dtype: np.dtype):
        self._device = device
        self._buffer = buffer
        self._shape = shape
        self._dtype = dtype

    @property
    def shape(self) -> Tuple[int, ...]:
        return self._shape

    @property
    def dtype(self) -> np.dtype:
        """The element type, as numpy's dtype."""
        return self._dtype

    @property
    def device(self) -> "Device":
        return self._device

    @property
    def ndim(self) -> int:
        return len(self._shape)

    @property
    def size(self) -> int:
        """Elements."""
        return int(np.prod(self._shape, dtype=np.int64))

    @property
    def nbytes(self) -> int:
        return self.size * self._dtype.itemsize

    def data_ptr(self) -> int:
        """The device address of the first element."""
        return self._buffer.address

    def ptr_range(self) -> int:
        """Bytes reachable from `data_ptr` (Triton uses 32-bit buffer offsets when this is under 2 GiB)."""
        return self.nbytes

    def element_size(self) -> int:
        return self._dtype.itemsize

    def numel(self) -> int:
        return self.size

    def stride(self) -> Tuple[int, ...]:
        """Strides in elements (C order)."""
        out, step = [], 1
        for d in reversed(self._shape):
            out.append(step)
            step *= max(d, 1)
        return tuple(reversed(out))

    def numpy(self) -> np.ndarray:
        """A copy of the array on the host."""
        raw = self._buffer.read()
        return np.frombuffer(raw, dtype=self._dtype, count=self.size).reshape(self._shape)

    def __array__(self, dtype=None, copy=None):
        a = self.numpy()
        return a if dtype is None else a.astype(dtype)

    def __len__(self) -> int:
        if not self._shape:
            raise TypeError("len() of a 0-d device array")
        return self._shape[0]

    def copy_(self, source: Union["DeviceArray", np.ndarray]) -> "DeviceArray":
        """Copies `source` (a device array of the same size, or anything numpy makes an array of this shape from)
        into this array; returns it."""
        if isinstance(source, DeviceArray):
            self._buffer.copy_from(source._buffer)
        else:
            host = np.broadcast_to(np.asarray(source, dtype=self._dtype), self._shape)
            self._buffer.write(host.tobytes())
        return self

    def zero_(self) -> "DeviceArray":
        """Sets every element to 0; returns the array."""
        self._buffer.zero()
        return self

    def fill_(self, value: Any) -> "DeviceArray":
        """Sets every element to `value`; returns the array."""
        return self.copy_(np.full(self._shape, value, dtype=self._dtype))

    def clone(self) -> "DeviceArray":
        """A new array on the same device with the same contents."""
        out = self._device.empty(self._shape, self._dtype)
        out._buffer.copy_from(self._buffer)
        return out

    def __repr__(self) -> str:
        return (
            f"DeviceArray(shape={self._shape}, dtype={self._dtype}, device={self._device.id}, "
            f"address={self.data_ptr():#x})"
        )


class Device:
    """An emulated GPU.

    ``Device(name="mi300x", engine="jit", timing=False, threads=None)``: `name` is a preset (`devices()`);
    `engine` ``"jit"`` (kernels compiled to host code) or ``"interp"`` (the interpreter; both compute the same
    bits); `timing` runs every launch in the timing model (modeled cycles, occupancy, per-unit and memory-level
    figures); `threads` is the number of host threads running workgroups (None: all cores).

    Keyword-only: `counters` (default True) collects the hardware-named counters of each launch; `memcheck`
    makes every byte outside an allocation fault; `max_instructions` limits each wave (None: the
    ``WAVEJIT_MAX_INSTRUCTIONS`` environment variable or ten billion; 0: no limit); `timeout` stops a launch after
    so many seconds (None: ``WAVEJIT_TIMEOUT`` or never); `trace_max` is how many instructions a recorded launch
    keeps for the explorer.
    """

    def __init__(
        self,
        name: str = "mi300x",
        engine: str = "jit",
        timing: bool = False,
        threads: Optional[int] = None,
        *,
        counters: bool = True,
        memcheck: bool = False,
        max_instructions: Optional[int] = None,
        timeout: Optional[float] = None,
        trace_max: int = 50_000,
    ):
        self._core = _wavejit.Device(
            name,
            engine,
            bool(timing),
            threads,
            bool(counters),
            bool(memcheck),
            max_instructions,
            timeout,
            trace_max,
        )

    # --- what the device is

    @property
    def id(self) -> str:
        """The preset's id (``"mi300x"``)."""
        return self._core.id

    @property
    def name(self) -> str:
        """The marketing name (``"AMD Instinct MI300X"``)."""
        return self._core.name

    @property
    def gfx(self) -> str:
        """The processor (``"gfx942"``)."""
        return self._core.gfx

    @property
    def engine(self) -> str:
        return self._core.engine

    @property
    def timing(self) -> bool:
        return self._core.timing

    @property
    def threads(self) -> Optional[int]:
        return self._core.threads

    @property
    def properties(self) -> dict:
        """The preset's figures: compute units, wave size, LDS and memory bytes, clocks and caches."""
        return self._core.properties

    @property
    def used_bytes(self) -> int:
        """Bytes of device memory allocated now."""
        return self._core.used_bytes

    @property
    def modeled_ns(self) -> float:
        """Modeled nanoseconds of every timed launch so far (0.0 without timing)."""
        return self._core.modeled_ns

    @property
    def modeled_cycles(self) -> int:
        """Modeled shader cycles of every timed launch so far (0 without timing). The count is exact, so the
        time between two readings, `(b - a) * modeled_ns_per_cycle`, is the same for the same launches."""
        return self._core.modeled_cycles

    @property
    def modeled_ns_per_cycle(self) -> Optional[float]:
        """Nanoseconds per modeled shader cycle (None before the first timed launch)."""
        return self._core.modeled_ns_per_cycle

    @property
    def last(self) -> Optional[Launch]:
        """The last launch: its `stats`, `counters`, `trace_html()` (None before the first)."""
        return self._core.last

    # --- memory

    def empty(self, shape: Shape, dtype: Any = np.float32) -> DeviceArray:
        """A new array of `shape` and `dtype` (its contents are zero, as fresh device memory is)."""
        shape, dt = _shape(shape), _dtype(dtype)
        nbytes = int(np.prod(shape, dtype=np.int64)) * dt.itemsize
        return DeviceArray(self, self._core.allocate(nbytes, f"array {shape} {dt}"), shape, dt)

    def zeros(self, shape: Shape, dtype: Any = np.float32) -> DeviceArray:
        """A new array of zeros."""
        return self.empty(shape, dtype).zero_()

    def full(self, shape: Shape, value: Any, dtype: Any = np.float32) -> DeviceArray:
        """A new array with every element `value`."""
        return self.empty(shape, dtype).fill_(value)

    def array(self, data: Any, dtype: Any = None) -> DeviceArray:
        """A copy of `data` (a numpy array, or anything numpy makes one from) in device memory."""
        if isinstance(data, DeviceArray):
            raise TypeError("data is already a device array: use .clone() to copy it")
        host = np.asarray(data, dtype=dtype)
        out = self.empty(host.shape, host.dtype)
        out._buffer.write(host.tobytes())  # (C order, whatever the array's layout)
        return out

    # --- code

    def load(self, code: Union[str, os.PathLike, bytes, bytearray, memoryview]) -> Module:
        """The code object for this device in `code`: a path, or the bytes of a code object (``.co``, ``.hsaco``),
        a HIP executable or library with device code, or an offload bundle. ``module["name"]`` is a kernel."""
        if isinstance(code, (bytes, bytearray, memoryview)):
            return self._core.load_bytes(bytes(code), "<bytes>")
        if isinstance(code, (str, os.PathLike)):
            return self._core.load_file(os.fspath(code))
        raise TypeError(f"load: expected a path or bytes, got {type(code).__name__}")

    def synchronize(self) -> None:
        """Waits for launches to finish: they finish before they return, so this returns at once."""

    def __repr__(self) -> str:
        return repr(self._core)

"""Shared fixtures of the wavejit package's tests: devices of both targets on both engines, and the bundled
kernels for a device."""

import os

import pytest

import wavejit

# both targets wavejit emulates, and both engines
DEVICES = ["mi300x", "mi210"]
ENGINES = ["jit", "interp"]


def bundled_kernel(dev: wavejit.Device, stem: str, name: str = None) -> wavejit.Kernel:
    """The kernel `name` (default `stem`) of the bundled code object `stem` built for `dev`'s target."""
    module = dev.load(wavejit.bundled(f"{stem}-{dev.gfx}.co"))
    return module[name or stem]


@pytest.fixture(params=[(d, e) for d in DEVICES for e in ENGINES], ids=lambda p: f"{p[0]}-{p[1]}")
def device(request) -> wavejit.Device:
    """An emulated device of each target on each engine."""
    name, engine = request.param
    return wavejit.Device(name, engine=engine)


@pytest.fixture(params=DEVICES)
def timed_device(request) -> wavejit.Device:
    """A device of each target in the timing model (on the JIT)."""
    return wavejit.Device(request.param, timing=True)


def wavejit_binary():
    """The wavejit command built in this tree (release or test build), or None."""
    root = os.path.join(os.path.dirname(__file__), "..", "..", "target")
    for p in [os.environ.get("WAVEJIT_BIN"), os.path.join(root, "release", "wavejit"), os.path.join(root, "debug", "wavejit")]:
        if p and os.path.isfile(p) and os.access(p, os.X_OK):
            return p
    return None

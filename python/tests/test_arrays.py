"""Devices and device arrays: presets, copies to and from device memory, shapes and dtypes, freeing."""

import gc

import numpy as np
import pytest

import wavejit


def test_devices_lists_every_preset_with_its_target():
    presets = {p.id: p for p in wavejit.devices()}
    assert set(presets) == {"mi300x", "mi210", "mi250x-gcd"}
    assert presets["mi300x"].gfx == "gfx942" and presets["mi300x"].compute_units == 304
    assert presets["mi210"].gfx == "gfx90a"
    assert presets["mi300x"].lds_bytes == 65536


def test_a_device_is_made_from_a_preset_engine_and_options():
    dev = wavejit.Device("mi210", engine="interp", timing=True, threads=2)
    assert (dev.id, dev.gfx, dev.engine, dev.timing, dev.threads) == ("mi210", "gfx90a", "interp", True, 2)
    assert dev.name == "AMD Instinct MI210"
    assert dev.properties["wave_size"] == 64
    assert dev.last is None
    assert "mi210" in repr(dev)


@pytest.mark.parametrize(
    "kwargs, error, says",
    [
        (dict(name="mi999"), ValueError, "presets: mi300x, mi210, mi250x-gcd"),
        (dict(engine="fast"), ValueError, 'expected "jit"'),
        (dict(threads=0), ValueError, "threads=0"),
        (dict(timeout=-1.0), ValueError, "timeout=-1"),
    ],
)
def test_bad_device_options_are_errors_saying_what_is_expected(kwargs, error, says):
    with pytest.raises(error, match=None) as e:
        wavejit.Device(**kwargs)
    assert says in str(e.value)


@pytest.mark.parametrize(
    "dtype", [np.float32, np.float16, np.float64, np.int8, np.uint16, np.int32, np.uint64, np.complex64, np.bool_]
)
def test_arrays_copy_to_the_device_and_back_bit_for_bit(dtype):
    dev = wavejit.Device("mi300x")
    rng = np.random.default_rng(7)
    host = (rng.standard_normal((3, 5, 7)) * 100).astype(dtype)
    d = dev.array(host)
    assert d.shape == (3, 5, 7) and d.dtype == np.dtype(dtype) and d.ndim == 3
    assert d.nbytes == host.nbytes and len(d) == 3 and d.size == host.size
    back = d.numpy()
    assert back.dtype == host.dtype and back.shape == host.shape
    assert back.tobytes() == host.tobytes()
    assert np.asarray(d).tobytes() == host.tobytes()


def test_arrays_have_distinct_aligned_addresses_and_numpy_gives_copies():
    dev = wavejit.Device("mi210")
    a, b = dev.array(np.arange(10, dtype=np.int32)), dev.zeros(10, np.int32)
    assert a.data_ptr() != b.data_ptr() and a.data_ptr() % 256 == 0 and b.data_ptr() % 256 == 0
    copy = a.numpy()
    copy[:] = -1
    assert (a.numpy() == np.arange(10)).all(), "changing the copy leaves the device array as it was"
    assert (b.numpy() == 0).all()


def test_empty_zeros_full_and_the_copy_methods():
    dev = wavejit.Device("mi300x")
    e = dev.empty((4, 4), np.float64)
    assert e.shape == (4, 4) and e.dtype == np.float64 and e.stride() == (4, 1)
    f = dev.full(8, 2.5, np.float32)
    assert (f.numpy() == 2.5).all()
    g = f.clone()
    assert g.data_ptr() != f.data_ptr() and (g.numpy() == 2.5).all()
    f.zero_()
    assert (f.numpy() == 0).all() and (g.numpy() == 2.5).all()
    f.copy_(g)
    assert (f.numpy() == 2.5).all()
    f.copy_(np.arange(8))
    assert (f.numpy() == np.arange(8, dtype=np.float32)).all()
    with pytest.raises(ValueError, match="copying a 16-byte array into a 32-byte one"):
        f.copy_(dev.zeros(4, np.float32))


def test_zero_size_and_zero_dimensional_arrays():
    dev = wavejit.Device("mi300x")
    z = dev.array(np.zeros((0, 3), np.float32))
    assert z.shape == (0, 3) and z.nbytes == 0 and len(z) == 0 and z.numpy().shape == (0, 3)
    s = dev.array(np.float64(3.25))
    assert s.shape == () and s.numpy() == 3.25
    with pytest.raises(TypeError, match="0-d"):
        len(s)


def test_bad_shapes_and_dtypes_are_errors():
    dev = wavejit.Device("mi300x")
    with pytest.raises(ValueError, match="negative"):
        dev.empty((2, -1))
    with pytest.raises(TypeError, match="shape"):
        dev.empty("big")
    with pytest.raises(TypeError, match="device arrays hold numbers"):
        dev.empty(3, object)
    with pytest.raises(TypeError, match="already a device array"):
        dev.array(dev.zeros(2))


def test_device_memory_is_freed_when_an_array_is_collected():
    dev = wavejit.Device("mi300x")
    before = dev.used_bytes
    a = dev.empty(1 << 20, np.float32)
    assert dev.used_bytes == before + (4 << 20)
    del a
    gc.collect()
    assert dev.used_bytes == before


def test_an_allocation_larger_than_the_device_is_a_memory_error():
    dev = wavejit.Device("mi210")
    with pytest.raises(MemoryError, match="out of device memory"):
        dev.empty(dev.properties["memory_bytes"] + 1, np.uint8)


def test_the_packages_own_example_runs_as_written():
    import doctest

    result = doctest.testmod(wavejit, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0

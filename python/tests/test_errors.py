"""Faults and bad arguments: a kernel's fault raises GpuFault with the engine's report (the text `wavejit run`
prints) and its parts; arguments of the wrong kind, number or size raise TypeError or ValueError saying what was
expected; the interpreter survives all of it."""

import re
import subprocess
import warnings

import numpy as np
import pytest

import wavejit
from conftest import bundled_kernel, wavejit_binary


def test_a_write_past_device_memory_raises_gpu_fault_with_its_parts(device):
    vadd = bundled_kernel(device, "vadd")
    a = device.zeros(64, np.float32)
    with pytest.raises(wavejit.GpuFault) as e:
        vadd(a, a, 5, 64, grid=64, block=64)
    f = e.value
    assert isinstance(f, wavejit.WavejitError) and isinstance(f, RuntimeError)
    assert f.kernel == "vadd" and f.wave == 0 and f.workgroup == (0, 0, 0)
    assert f.instruction.startswith("global_store_dword") and f.lane is not None
    assert f.address == 5 + 4 * f.lane
    assert str(f) == f.report
    assert re.fullmatch(
        r"kernel vadd, workgroup \[0, 0, 0\], wave 0, pc 0x[0-9a-f]+ \(`global_store_dword [^`]+`\): "
        r"global_store_dword: lane \d+: write of 4 bytes at 0x[0-9a-f]+: .+",
        str(f),
    ), str(f)
    # the device goes on working
    c = device.empty(64, np.float32)
    vadd(device.array(np.ones(64, np.float32)), device.array(np.ones(64, np.float32)), c, 64, grid=64, block=64)
    assert (c.numpy() == 2).all()


def test_the_fault_report_is_the_one_wavejit_run_prints(tmp_path):
    exe = wavejit_binary()
    assert exe is not None, "no wavejit binary built in target/ (cargo build -p wavejit-tools) nor WAVEJIT_BIN"
    path = tmp_path / "vadd.co"
    path.write_bytes(wavejit.bundled("vadd-gfx942.co"))
    run = subprocess.run(
        [exe, "run", str(path), "--kernel", "vadd", "--device", "mi300x", "--grid", "64", "--block", "64",
         "--threads", "1", "--arg", "u64=0", "--arg", "u64=0", "--arg", "u64=5", "--arg", "u32=64"],
        capture_output=True, text=True,
    )
    assert run.returncode != 0
    cli = run.stderr.strip().removeprefix("wavejit: ")
    dev = wavejit.Device("mi300x", threads=1)
    with pytest.raises(wavejit.GpuFault) as e:
        dev.load(path)["vadd"](0, 0, 5, 64, grid=64, block=64)
    # the code lands at another address in each process: the reports are the same but for it
    pc = re.compile(r"pc 0x[0-9a-f]+")
    assert pc.sub("pc", str(e.value)) == pc.sub("pc", cli)


def test_memcheck_turns_an_access_past_an_arrays_end_into_a_fault_which_otherwise_warns():
    for memcheck in [False, True]:
        dev = wavejit.Device("mi300x", memcheck=memcheck)
        vadd = bundled_kernel(dev, "vadd")
        a = dev.zeros(1024, np.float32)
        short = dev.zeros(1000, np.float32)  # its page holds 1024 floats
        if memcheck:
            with pytest.raises(wavejit.GpuFault, match=r"past the end of the 4000-byte allocation"):
                vadd(a, a, short, 1024, grid=1024, block=256)
        else:
            with pytest.warns(RuntimeWarning, match="past the end of"):
                vadd(a, a, short, 1024, grid=1024, block=256)


def test_a_runaway_wave_stops_at_the_instruction_limit():
    dev = wavejit.Device("mi210", max_instructions=50)
    alu = bundled_kernel(dev, "alu_loop")
    out = dev.zeros(64, np.float32)
    with pytest.raises(wavejit.GpuFault, match="ran 50 instructions without ending") as e:
        alu(out, 1000, grid=64, block=64)
    assert e.value.kernel == "alu_loop" and e.value.pc is None


@pytest.mark.parametrize(
    "args, error, says",
    [
        ("few", TypeError, r"vadd takes 4 arguments \(#0, #1, #2, #3\), 3 given"),
        ("float for uint", TypeError, r"argument 3 \(#3: uint\) of vadd: an integer, got float"),
        ("negative too big", ValueError, r"argument 3 \(#3: uint\) of vadd: -3000000000 does not fit a 4-byte slot"),
        ("host array", TypeError, r"argument 2 \(#2: float\*\) of vadd is a buffer: expected a device array, got a host ndarray"),
        ("string", TypeError, r"argument 0 \(#0: float\*\) of vadd is a buffer: expected a device array .* got str"),
        ("wide numpy", TypeError, r"a 4-byte value, got int64 \(8 bytes\)"),
        ("array for value", TypeError, r"a 4-byte value, got an array"),
    ],
)
def test_bad_arguments_say_what_was_expected(args, error, says):
    dev = wavejit.Device("mi300x")
    vadd = bundled_kernel(dev, "vadd")
    a = dev.zeros(64, np.float32)
    given = {
        "few": (a, a, a),
        "float for uint": (a, a, a, 64.0),
        "negative too big": (a, a, a, -3_000_000_000),
        "host array": (a, a, np.zeros(64, np.float32), 64),
        "string": ("a", a, a, 64),
        "wide numpy": (a, a, a, np.int64(64)),
        "array for value": (a, a, a, np.zeros(1, np.uint32)),
    }[args]
    with pytest.raises(error, match=says):
        vadd(*given, grid=64, block=64)


@pytest.mark.parametrize(
    "kwargs, error, says",
    [
        (dict(grid=0, block=64), ValueError, "grid: 0 is not a positive 32-bit integer"),
        (dict(grid=(64, 1, 1, 1), block=64), ValueError, "grid: expected one to three sizes"),
        (dict(grid="64", block=64), TypeError, None),
        (dict(grid=2048, block=2048), ValueError, "2048"),
        (dict(grid=64, block=64, lds=65537), ValueError, "more than the 65536 bytes of LDS of an mi300x"),
        (dict(grid=64), TypeError, "block= .* is required"),
    ],
)
def test_bad_launch_shapes_say_what_was_expected(kwargs, error, says):
    dev = wavejit.Device("mi300x")
    vadd = bundled_kernel(dev, "vadd")
    a = dev.zeros(64, np.float32)
    with pytest.raises(error, match=says):
        vadd(a, a, a, 64, **kwargs)
    # and the device still runs kernels
    vadd(a, a, a, 64, grid=64, block=64)


def test_a_launch_that_was_not_recorded_says_how_to_record_one():
    dev = wavejit.Device("mi300x")
    vadd = bundled_kernel(dev, "vadd")
    a = dev.zeros(64, np.float32)
    launch = vadd(a, a, a, 64, grid=64, block=64)
    assert not launch.recorded
    with pytest.raises(wavejit.WavejitError, match="trace=True"):
        launch.trace_html()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert "<table>" in launch._repr_html_()

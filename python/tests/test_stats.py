"""What a launch leaves behind: statistics (modeled figures with timing, instruction counts without), the
hardware-named counters, the wavefront explorer page; and the GIL released while a kernel runs."""

import threading
import time

import numpy as np
import pytest

import wavejit
from conftest import bundled_kernel


def run_reduce(dev, trace=False):
    reduce_sum = bundled_kernel(dev, "reduce", "reduce_sum")
    n = 256 * 64
    x = dev.array(np.ones(n, np.float32))
    out = dev.zeros(64, np.float32)
    launch = reduce_sum(x, out, n, grid=n, block=256, trace=trace)
    assert (out.numpy() == 256).all()
    return launch


def test_timing_gives_modeled_cycles_occupancy_units_and_memory_levels(timed_device):
    launch = run_reduce(timed_device)
    s = timed_device.last.stats
    assert s["device"] == timed_device.id and s["kernel"] == "reduce_sum"
    assert s["workgroups"] == 64 and s["waves"] == 64 * 4
    assert s["cycles"] > 0 and s["ns"] > 0 and launch.cycles == s["cycles"]
    assert launch.modeled_ns == pytest.approx(s["ns"])
    t = s["timing"]
    assert 0 < t["occupancy"]["achieved"] <= 1
    assert t["issued"]["lds"] > 0 and t["issued"]["valu"] > 0 and t["busy"]["lds"] > 0
    for level in ["l1", "l2", "hbm"]:
        assert "hit_rate" in t["memory"][level] and "bytes_moved" in t["memory"][level]
    assert t["memory"]["hbm"]["bytes_read"] >= 256 * 64 * 4
    assert timed_device.modeled_ns == pytest.approx(s["ns"])
    assert timed_device.modeled_cycles == s["cycles"]
    assert timed_device.modeled_ns_per_cycle == pytest.approx(1000 / timed_device.properties["engine_clock_mhz"])
    c = launch.counters
    assert c["SQ_WAVES"] == 256 and c["SQ_INSTS_LDS"] > 0
    assert c["GRBM_GUI_ACTIVE"] == s["cycles"], "the modeled counters come with timing"


def test_without_timing_the_stats_count_instructions(device):
    launch = run_reduce(device)
    s = device.last.stats
    assert s["wave_instructions"] > 0 and s["engine"] == device.engine
    assert "cycles" not in s and launch.cycles is None and launch.modeled_ns is None
    c = launch.counters
    assert c["SQ_WAVES"] == 256
    assert c["SQ_INSTS"] == s["wave_instructions"]
    assert "GRBM_GUI_ACTIVE" not in c
    assert device.modeled_ns == 0.0 and device.modeled_cycles == 0 and device.modeled_ns_per_cycle is None


def test_without_counters_the_interpreter_counts_instructions_by_unit():
    dev = wavejit.Device("mi210", engine="interp", counters=False)
    launch = run_reduce(dev)
    s = launch.stats
    assert launch.counters is None
    assert sum(s["instructions_by_unit"].values()) == s["wave_instructions"]
    assert s["instructions_by_unit"]["lds"] > 0 and s["vector_lane_ops"] > 0


@pytest.mark.parametrize("timing", [False, True])
def test_a_recorded_launch_gives_the_explorer_page_and_still_computes_right(timing):
    dev = wavejit.Device("mi300x", timing=timing)
    launch = run_reduce(dev, trace=True)
    assert launch.recorded and dev.last.recorded
    page = launch.trace_html()
    assert page.lstrip().lower().startswith("<!doctype html") and "reduce_sum" in page
    recorded, total = launch.recorded_instructions
    assert 0 < recorded <= total == launch.stats["wave_instructions"]
    html = launch._repr_html_()
    assert html.startswith("<iframe srcdoc=") and "&lt;" in html
    if timing:
        assert '"cycles":' in page and launch.cycles > 0


def test_the_gil_is_released_while_a_kernel_runs():
    dev = wavejit.Device("mi300x", threads=1, counters=False)
    alu = bundled_kernel(dev, "alu_loop")
    out = dev.zeros(1024, np.float32)
    alu(out, 10, grid=1024, block=256)  # translated once
    done = threading.Event()
    seconds = []

    def kernel():
        t0 = time.perf_counter()
        alu(out, 200_000, grid=1024, block=256)
        seconds.append(time.perf_counter() - t0)
        done.set()

    ticks = 0
    t = threading.Thread(target=kernel)
    t.start()
    while not done.is_set():
        ticks += 1
        time.sleep(0.001)
    t.join()
    assert seconds[0] > 0.05, "the kernel ran long enough to tell"
    # with the GIL held the loop could not have run while the kernel did
    assert ticks > seconds[0] * 1000 / 4, (ticks, seconds)

"""Triton kernels, written here in the style of Triton's tutorials, compiled by Triton's own AMD backend for the
device's target and run on wavejit through `wavejit.triton`, against numpy, on an MI300X (gfx942) and an MI210
(gfx90a): vector add, fused softmax, an fp16 matmul whose tl.dot becomes MFMA, layer norm, a flash-attention
forward, atomics, tl.num_programs, tensor descriptors; num_warps, num_stages, autotuning, Triton's cache and
do_bench."""

import os

import numpy as np
import pytest

# Triton is a dependency of these tests (scripts/setup.sh installs it into the test venv): without it they fail
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

import wavejit  # noqa: E402
import wavejit.triton  # noqa: E402
from conftest import DEVICES, ENGINES  # noqa: E402

TARGETS = [(d, e) for d in DEVICES for e in ENGINES]


@pytest.fixture(params=TARGETS, ids=lambda p: f"{p[0]}-{p[1]}")
def dev(request):
    """A device of each target on each engine as Triton's active driver."""
    name, engine = request.param
    d = wavejit.Device(name, engine=engine)
    wavejit.triton.activate(d)
    yield d
    wavejit.triton.deactivate()


@pytest.fixture(params=TARGETS, ids=lambda p: f"{p[0]}-{p[1]}")
def timed_dev(request):
    """The same in the timing model."""
    name, engine = request.param
    d = wavejit.Device(name, engine=engine, timing=True)
    wavejit.triton.activate(d)
    yield d
    wavejit.triton.deactivate()


def compiled_for(kernel, dev):
    """The kernels Triton compiled of `kernel` for `dev` (its cache for the device)."""
    return list(kernel.device_caches[dev._core.serial][0].values())


# --- vector add


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


def test_vector_add_compiles_for_the_devices_target_and_adds_exactly(dev):
    n = 98_432
    rng = np.random.default_rng(0)
    x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    out = dev.empty(n, np.float32)
    k = add_kernel[(triton.cdiv(n, 1024),)](dev.array(x), dev.array(y), out, n, BLOCK_SIZE=1024)
    assert np.array_equal(out.numpy(), x + y)
    assert k.metadata.target.arch == dev.gfx and k.metadata.target.warp_size == 64
    # device arrays tell their size (ptr_range), so Triton addresses them with 32-bit buffer offsets
    assert "buffer_load_dword" in k.asm["amdgcn"]
    launch = dev.last
    assert launch.kernel == "add_kernel" and launch.block == (k.metadata.num_warps * 64, 1, 1)
    assert launch.grid == (triton.cdiv(n, 1024) * k.metadata.num_warps * 64, 1, 1)
    # the same kernel again comes from Triton's in-memory cache: no second compilation
    add_kernel[(triton.cdiv(n, 1024),)](dev.array(x), dev.array(y), out, n, BLOCK_SIZE=1024)
    assert compiled_for(add_kernel, dev) == [k]


def test_scratch_memory_a_kernel_asks_for_is_allocated_per_program_and_passed_last(dev, monkeypatch):
    # a kernel whose metadata asks for global and profile scratch (Triton's device-made TMA descriptors and its
    # instrumentation do) gets, as its two trailing arguments, programs x size bytes from Triton's allocator and
    # from the driver's default profile allocator, as Triton's own HIP launcher gives them
    n, programs = 4096, 4
    x = dev.array(np.arange(n, dtype=np.float32))
    out = dev.empty(n, np.float32)
    k = add_kernel[(programs,)](x, x, out, n, BLOCK_SIZE=1024)
    assert (k.metadata.global_scratch_size, k.metadata.profile_scratch_size) == (0, 0)
    meta = k.metadata._replace(global_scratch_size=256, global_scratch_align=128, profile_scratch_size=64,
                               profile_scratch_align=8)
    allocated = []

    def allocator(size, align, stream):
        a = dev.zeros(size, np.int8)
        allocated.append((size, align, a))
        return a

    triton.set_allocator(allocator)
    real = wavejit.triton._functions[k.function]
    given = []

    class Spy:
        def launch(self, *args, **kwargs):
            given.append(args)
            return real.launch(*args, **kwargs)

    monkeypatch.setitem(wavejit.triton._functions, k.function, Spy())
    launcher = wavejit.triton._Launcher(wavejit.triton._active(), k.src, meta)
    out.zero_()
    launcher(programs, 1, 1, 0, k.function, k.packed_metadata, None, None, None, x, x, out, n, 1024)
    assert np.array_equal(out.numpy(), 2 * np.arange(n, dtype=np.float32))
    [(size, align, scratch)] = allocated
    assert (size, align) == (programs * 256, 128)
    (args,) = given
    assert args[:4] == (x, x, out, n) and len(args) == 6
    assert args[4] is scratch
    assert args[5].nbytes == programs * 64 and args[5].data_ptr() not in (0, scratch.data_ptr())


# --- fused softmax


@triton.jit
def softmax_kernel(out_ptr, in_ptr, in_row_stride, out_row_stride, n_rows, n_cols, BLOCK_SIZE: tl.constexpr,
                   num_stages: tl.constexpr):
    row_start = tl.program_id(0)
    row_step = tl.num_programs(0)
    for row in tl.range(row_start, n_rows, row_step, num_stages=num_stages):
        cols = tl.arange(0, BLOCK_SIZE)
        mask = cols < n_cols
        x = tl.load(in_ptr + row * in_row_stride + cols, mask=mask, other=-float("inf"))
        x = x - tl.max(x, axis=0)
        num = tl.exp(x)
        tl.store(out_ptr + row * out_row_stride + cols, num / tl.sum(num, axis=0), mask=mask)


def softmax_reference(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("num_stages", [1, 2])
def test_fused_softmax_with_a_row_loop_over_the_programs(dev, num_stages):
    rows, cols = 37, 781
    x = np.random.default_rng(1).standard_normal((rows, cols)).astype(np.float32)
    dx, dy = dev.array(x), dev.empty((rows, cols), np.float32)
    block = triton.next_power_of_2(cols)
    k = softmax_kernel[(8,)](dy, dx, cols, cols, rows, cols, BLOCK_SIZE=block, num_stages=num_stages, num_warps=8)
    np.testing.assert_allclose(dy.numpy(), softmax_reference(x), rtol=1e-5, atol=1e-7)
    # the reductions go through LDS Triton asks for at launch; the descriptor says none
    assert k.metadata.shared > 0 and dev.last.lds == k.metadata.shared


# --- matmul with tl.dot in fp16


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    # programs in groups of GROUP_M rows of tiles, so neighbouring programs share tiles of A and B
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c = acc.to(tl.float16)
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    tl.store(c_ptrs, c, mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


def matmul(dev, a, b, num_stages=2, num_warps=4, BLOCK=(64, 64, 32)):
    (M, K), (_, N) = a.shape, b.shape
    da, db, dc = dev.array(a), dev.array(b), dev.empty((M, N), np.float16)
    bm, bn, bk = BLOCK
    grid = (triton.cdiv(M, bm) * triton.cdiv(N, bn),)
    k = matmul_kernel[grid](da, db, dc, M, N, K, K, 1, N, 1, N, 1, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=4,
                            num_stages=num_stages, num_warps=num_warps)
    return dc.numpy(), k


@pytest.mark.parametrize("num_stages", [1, 2])
def test_fp16_matmul_runs_its_dot_on_mfma(dev, num_stages):
    rng = np.random.default_rng(2)
    M, N, K = 192, 160, 96
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    c, k = matmul(dev, a, b, num_stages=num_stages)
    expected = (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16)
    np.testing.assert_allclose(c.astype(np.float32), expected.astype(np.float32), rtol=2e-3, atol=2e-2)
    assert "v_mfma_f32" in k.asm["amdgcn"]
    # and wavejit's own disassembly of the loaded code object lists them too
    assert "v_mfma_f32" in dev.load(k.asm["hsaco"])[k.name].disasm()


# --- layer norm


@triton.jit
def layer_norm_kernel(X, Y, W, B, Mean, Rstd, stride, N, eps, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    X += row * stride
    Y += row * stride
    acc = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        acc += tl.load(X + cols, mask=cols < N, other=0.0).to(tl.float32)
    mean = tl.sum(acc, axis=0) / N
    acc = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        x = tl.load(X + cols, mask=cols < N, other=0.0).to(tl.float32)
        x = tl.where(cols < N, x - mean, 0.0)
        acc += x * x
    rstd = 1 / tl.sqrt(tl.sum(acc, axis=0) / N + eps)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        mask = cols < N
        w = tl.load(W + cols, mask=mask)
        b = tl.load(B + cols, mask=mask)
        x = tl.load(X + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(Y + cols, (x - mean) * rstd * w + b, mask=mask)


def test_layer_norm_with_float_scalars_and_three_loops(dev):
    rows, n = 24, 1000
    rng = np.random.default_rng(3)
    x = rng.standard_normal((rows, n)).astype(np.float32)
    w, b = rng.random(n, dtype=np.float32), rng.standard_normal(n).astype(np.float32)
    dy, dmean, drstd = dev.empty((rows, n), np.float32), dev.empty(rows, np.float32), dev.empty(rows, np.float32)
    eps = 1e-5
    layer_norm_kernel[(rows,)](dev.array(x), dy, dev.array(w), dev.array(b), dmean, drstd, n, n, eps,
                               BLOCK_SIZE=256, num_warps=4)
    mean = x.mean(axis=1, dtype=np.float64)
    rstd = 1 / np.sqrt(x.var(axis=1, dtype=np.float64) + eps)
    np.testing.assert_allclose(dmean.numpy(), mean, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(drstd.numpy(), rstd, rtol=1e-4)
    np.testing.assert_allclose(dy.numpy(), (x - mean[:, None]) * rstd[:, None] * w + b, rtol=1e-4, atol=1e-4)


# --- flash attention forward


@triton.jit
def attention_fwd_kernel(Q, K, V, Out, sm_scale, stride_bh, stride_m, N_CTX, HEAD_DIM: tl.constexpr,
                         BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0)
    bh = tl.program_id(1)
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    base = bh * stride_bh
    q = tl.load(Q + base + offs_m[:, None] * stride_m + offs_d[None, :])
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504  # log2(e): exp2 below
    for start_n in range(0, N_CTX, BLOCK_N):
        k = tl.load(K + base + (start_n + offs_n)[None, :] * stride_m + offs_d[:, None])
        qk = tl.dot(q, k) * qk_scale
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = tl.load(V + base + (start_n + offs_n)[:, None] * stride_m + offs_d[None, :])
        acc = tl.dot(p.to(tl.float16), v, acc)
        m_i = m_new
    acc = acc / l_i[:, None]
    tl.store(Out + base + offs_m[:, None] * stride_m + offs_d[None, :], acc.to(tl.float16))


def test_flash_attention_forward_against_softmax_attention(dev):
    bh, n_ctx, d = 2, 128, 64
    rng = np.random.default_rng(4)
    q, k, v = (rng.standard_normal((bh, n_ctx, d)).astype(np.float16) for _ in range(3))
    out = dev.empty((bh, n_ctx, d), np.float16)
    scale = 1 / np.sqrt(d)
    attention_fwd_kernel[(n_ctx // 64, bh)](dev.array(q), dev.array(k), dev.array(v), out, scale, n_ctx * d, d,
                                            n_ctx, HEAD_DIM=d, BLOCK_M=64, BLOCK_N=32, num_warps=4)
    q32, k32, v32 = (t.astype(np.float32) for t in (q, k, v))
    p = softmax_reference((q32 @ k32.transpose(0, 2, 1) * scale).reshape(-1, n_ctx)).reshape(bh, n_ctx, n_ctx)
    np.testing.assert_allclose(out.numpy().astype(np.float32), p @ v32, rtol=1e-2, atol=1e-2)


# --- atomics


@triton.jit
def histogram_kernel(x_ptr, bins_ptr, total_ptr, n, n_bins, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    tl.atomic_add(bins_ptr + x % n_bins, 1, mask=mask)
    tl.atomic_add(total_ptr, tl.sum(tl.where(mask, x, 0), axis=0))


def test_atomics_build_a_histogram_and_a_total(dev):
    n, n_bins = 20_000, 37
    x = np.random.default_rng(5).integers(0, 1000, n).astype(np.int32)
    bins, total = dev.zeros(n_bins, np.int32), dev.zeros(1, np.int32)
    histogram_kernel[(triton.cdiv(n, 512),)](dev.array(x), bins, total, n, n_bins, BLOCK=512)
    assert np.array_equal(bins.numpy(), np.bincount(x % n_bins, minlength=n_bins))
    assert total.numpy()[0] == x.sum()


# --- tl.num_programs


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, factor, BLOCK: tl.constexpr):
    # a grid-stride loop: however many programs run, every block is done once
    for start in range(tl.program_id(0) * BLOCK, n, tl.num_programs(0) * BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * factor, mask=mask)


@pytest.mark.parametrize("programs", [1, 3, 40])
def test_num_programs_gives_a_grid_stride_loop_any_grid(dev, programs):
    n = 10_007
    x = np.arange(n, dtype=np.float64)
    out = dev.zeros(n, np.float64)
    scale_kernel[(programs,)](dev.array(x), out, n, 0.5, BLOCK=256)
    assert np.array_equal(out.numpy(), x * 0.5)


# --- tensor descriptors


@triton.jit
def scale_tiles_kernel(in_desc, out_desc, factor, BM: tl.constexpr, BN: tl.constexpr):
    pm, pn = tl.program_id(0), tl.program_id(1)
    tile = in_desc.load([pm * BM, pn * BN])
    out_desc.store([pm * BM, pn * BN], tile * factor)


@triton.jit
def transpose_tiles_kernel(src, dst, M, N, BM: tl.constexpr, BN: tl.constexpr):
    src_desc = tl.make_tensor_descriptor(src, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    dst_desc = tl.make_tensor_descriptor(dst, shape=[N, M], strides=[M, 1], block_shape=[BN, BM])
    pm, pn = tl.program_id(0), tl.program_id(1)
    dst_desc.store([pn * BN, pm * BM], tl.trans(src_desc.load([pm * BM, pn * BN])))


def test_tensor_descriptors_made_on_the_host_and_in_the_kernel(dev):
    from triton.tools.tensor_descriptor import TensorDescriptor

    M, N = 96, 80  # not whole tiles: loads past the edge read zeros, stores past it are dropped
    x = np.random.default_rng(6).standard_normal((M, N)).astype(np.float32)
    dx, dy = dev.array(x), dev.zeros((M, N), np.float32)
    grid = (triton.cdiv(M, 32), triton.cdiv(N, 32))
    scale_tiles_kernel[grid](TensorDescriptor.from_tensor(dx, [32, 32]), TensorDescriptor.from_tensor(dy, [32, 32]),
                             3.0, BM=32, BN=32)
    assert np.array_equal(dy.numpy(), x * 3)
    dt = dev.zeros((N, M), np.float32)
    transpose_tiles_kernel[grid](dx, dt, M, N, BM=32, BN=32)
    assert np.array_equal(dt.numpy(), x.T)


# --- autotuning, Triton's disk cache, do_bench


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_SIZE": 256}, num_warps=2, num_stages=1),
        triton.Config({"BLOCK_SIZE": 1024}, num_warps=8, num_stages=2),
    ],
    key=["n_elements"],
)
@triton.jit
def tuned_add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)


def test_autotuning_picks_a_config_by_modeled_time_and_the_result_is_right(timed_dev):
    n = 50_000
    x, y = timed_dev.array(np.ones(n, np.float32)), timed_dev.array(np.full(n, 2, np.float32))
    out = timed_dev.empty(n, np.float32)
    grid = lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)  # noqa: E731
    # Triton's autotuner keys its choice by the arguments, not the device: the other device's choice goes
    tuned_add_kernel.cache.clear()
    tuned_add_kernel[grid](x, y, out, n)
    assert (out.numpy() == 3).all()
    timings = tuned_add_kernel.configs_timings
    assert len(timings) == 2 and all(t[0] > 0 for t in timings.values())
    best = min(timings, key=lambda c: timings[c])
    assert tuned_add_kernel.best_config == best
    # each measured time is a modeled one: the tuned kernel, launched again, takes what the benchmark reported
    out.zero_()
    tuned_add_kernel[grid](x, y, out, n)
    assert (out.numpy() == 3).all()
    assert timed_dev.last.block == (best.num_warps * 64, 1, 1)
    assert timings[best][0] == pytest.approx(timed_dev.last.modeled_ns / 1e6, rel=1e-9)


def test_do_bench_reports_the_modeled_time_with_timing_on(timed_dev):
    n = 65_536
    x = timed_dev.array(np.ones(n, np.float32))
    out = timed_dev.empty(n, np.float32)

    def run():
        add_kernel[(n // 1024,)](x, x, out, n, BLOCK_SIZE=1024)

    ms = triton.testing.do_bench(run, warmup=1, rep=5)
    assert triton.testing.do_bench is wavejit.triton.do_bench
    assert ms == pytest.approx(timed_dev.last.modeled_ns / 1e6, rel=1e-9)
    assert 0 < ms < 1, "a modeled time of microseconds, not the milliseconds the emulation takes"
    times = triton.testing.do_bench(run, warmup=1, rep=5, return_mode="all")
    assert times == [ms] * len(times), "every run of the same launch takes the same modeled time"
    # Triton interpolates its quantiles as (1 - t) * a + t * b, which need not give back a when b == a
    lo, mid, hi = triton.testing.do_bench(run, warmup=1, rep=5, quantiles=[0.2, 0.5, 0.8])
    assert [lo, mid, hi] == pytest.approx([ms] * 3, rel=1e-12)


def test_the_modeled_time_of_a_launch_does_not_depend_on_the_time_before_it(timed_dev):
    # the driver's clock counts whole modeled cycles: a difference of two readings of a running sum of
    # nanoseconds in floating point would change in its last bits with the sum it was taken from
    n = 4096
    x = timed_dev.array(np.ones(n, np.float32))
    out = timed_dev.empty(n, np.float32)
    iface = wavejit.triton._active().get_device_interface()

    def timed():
        start, end = iface.Event(enable_timing=True), iface.Event(enable_timing=True)
        start.record()
        add_kernel[(n // 1024,)](x, x, out, n, BLOCK_SIZE=1024)
        end.record()
        return start.elapsed_time(end)

    first = timed()
    assert first == pytest.approx(timed_dev.last.modeled_ns / 1e6, rel=1e-12)
    for _ in range(37):
        add_kernel[(n // 1024,)](x, x, out, n, BLOCK_SIZE=1024)
    assert [timed() for _ in range(5)] == [first] * 5
    assert isinstance(timed_dev.modeled_cycles, int)
    assert timed_dev.modeled_ns == pytest.approx(timed_dev.modeled_cycles * timed_dev.modeled_ns_per_cycle)


def test_triton_loads_compiled_kernels_from_its_disk_cache(dev, tmp_path, monkeypatch):
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path))
    hits = []
    triton.knobs.compilation.listener = lambda **kw: hits.append(kw["cache_hit"])
    try:
        source = "\n".join([
            "import triton, triton.language as tl",
            "@triton.jit",
            "def negate(x_ptr, n, BLOCK: tl.constexpr):",
            "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)",
            "    tl.store(x_ptr + offs, -tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)",
        ])
        path = tmp_path / "negate_kernel.py"
        path.write_text(source)
        results = []
        for _ in range(2):
            # a fresh JIT function each time (as in a new process): the second compile finds the first on disk
            namespace = {}
            exec(compile(source, str(path), "exec"), namespace)
            x = dev.array(np.arange(100, dtype=np.float32))
            namespace["negate"][(1,)](x, 100, BLOCK=128)
            results.append(x.numpy())
    finally:
        triton.knobs.compilation.listener = None
    assert hits == [False, True]
    assert all(np.array_equal(r, -np.arange(100, dtype=np.float32)) for r in results)


def test_without_activation_wavejits_do_bench_says_so():
    wavejit.triton.deactivate()
    with pytest.raises(wavejit.WavejitError, match=r"activate\(dev\)"):
        wavejit.triton.do_bench(lambda: None)

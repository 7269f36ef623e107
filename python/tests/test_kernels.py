"""Bundled kernels of test-kernels/ against numpy, on both targets and both engines: buffers, float and integer
scalars, f32 and f64 division, LDS with barriers; loading and naming kernels; the disassembly; scalars of one and
two bytes (half, bfloat16, char, short) in a kernel compiled here."""

import os
import subprocess

import numpy as np
import pytest

import wavejit
from conftest import DEVICES, bundled_kernel


def test_vadd_adds_exactly(device):
    vadd = bundled_kernel(device, "vadd")
    rng = np.random.default_rng(1)
    n = 10_000
    a, b = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    c = device.empty(n, np.float32)
    launch = vadd(device.array(a), device.array(b), c, n, grid=n, block=256)
    assert np.array_equal(c.numpy(), a + b)
    assert launch.kernel == "vadd" and launch.grid == (n, 1, 1) and launch.block == (256, 1, 1)
    assert device.last.stats["workgroups"] == (n + 255) // 256
    # launch(...) is the same call
    c.zero_()
    assert vadd.launch(device.array(a), device.array(b), c, n, grid=n, block=256).kernel == "vadd"
    assert np.array_equal(c.numpy(), a + b) and device.last.grid == (n, 1, 1)


def test_saxpy_takes_a_float_scalar_before_its_buffers(device):
    saxpy = bundled_kernel(device, "saxpy")
    n = 3000
    x = np.linspace(-1, 1, n, dtype=np.float32)
    y = np.linspace(5, 2, n, dtype=np.float32)
    dy = device.array(y)
    saxpy(2.5, device.array(x), dy, n, grid=n, block=128)
    # the kernel fuses the multiply-add; numpy rounds twice, so the two differ in the last place at most
    np.testing.assert_allclose(dy.numpy(), np.float32(2.5) * x + y, rtol=2e-7, atol=1e-7)
    # a numpy float32 scalar is the same argument
    dy2 = device.array(y)
    saxpy(np.float32(2.5), device.array(x), dy2, np.uint32(n), grid=n, block=128)
    assert np.array_equal(dy.numpy(), dy2.numpy())


def test_divide_gives_ieee_quotients_in_f32_and_f64(device):
    # a HIP kernel (extern "C"), whose metadata names argument types
    divide = bundled_kernel(device, "divide")
    rng = np.random.default_rng(3)
    n = 1000
    a, b = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    c, d = rng.standard_normal(n), rng.standard_normal(n)
    q, r = device.empty(n, np.float32), device.empty(n, np.float64)
    divide(device.array(a), device.array(b), q, device.array(c), device.array(d), r, n, grid=n, block=64)
    assert np.array_equal(q.numpy(), a / b)
    assert np.array_equal(r.numpy(), c / d)


def reduce_reference(x: np.ndarray) -> np.ndarray:
    """The kernel's tree over each block of 256 in float32, in its order of additions."""
    blocks = -(-len(x) // 256)
    tmp = np.zeros((blocks, 256), np.float32)
    tmp.flat[: len(x)] = x
    s = 128
    while s:
        tmp[:, :s] += tmp[:, s : 2 * s]
        s //= 2
    return tmp[:, 0]


def test_reduce_sums_blocks_in_lds_with_barriers_and_its_required_workgroup_size(device):
    reduce_sum = bundled_kernel(device, "reduce", "reduce_sum")
    n = 256 * 40 + 17
    x = np.random.default_rng(5).standard_normal(n).astype(np.float32)
    out = device.zeros(41, np.float32)
    # block= left out: the kernel requires 256
    launch = reduce_sum(device.array(x), out, n, grid=256 * 41)
    assert launch.block == (256, 1, 1)
    assert np.array_equal(out.numpy(), reduce_reference(x))


@pytest.mark.parametrize("name", DEVICES)
def test_both_engines_compute_the_same_bits(name):
    results = []
    for engine in ["jit", "interp"]:
        dev = wavejit.Device(name, engine=engine)
        divide = bundled_kernel(dev, "divide")
        n = 500
        a = np.linspace(0.1, 7, n, dtype=np.float32)
        c = np.linspace(-3, 3, n)
        q, r = dev.empty(n, np.float32), dev.empty(n, np.float64)
        divide(dev.array(a), dev.array(a[::-1].copy()), q, dev.array(c), dev.array(c[::-1] + 0.5), r, n, grid=n, block=64)
        results.append((q.numpy().tobytes(), r.numpy().tobytes()))
    assert results[0] == results[1]


def test_a_module_loads_from_a_path_and_names_its_kernels(tmp_path):
    dev = wavejit.Device("mi300x")
    path = tmp_path / "mfma.co"
    path.write_bytes(wavejit.bundled("mfma-gfx942.co"))
    m = dev.load(path)
    assert len(m) == 6 and len(m.kernels) == 6 and "gfx942" in m.target
    k = m[m.kernels[0]]
    assert k.name == m.kernels[0] and k.name in m
    with pytest.raises(KeyError, match="no kernel `nope`"):
        m["nope"]
    assert dev.load(str(path)).kernels == m.kernels


def test_hip_kernel_names_may_be_demangled_or_plain():
    dev = wavejit.Device("mi210")
    # the bundled HIP kernels are extern "C"; the mangled name of a C++ kernel is matched as wavejit run does
    half = dev.load(wavejit.bundled("half-gfx90a.co"))
    for symbol in half.kernels:
        k = half[symbol]
        assert k.name == symbol
        assert half[k.demangled].name == symbol


def test_loading_the_wrong_target_or_junk_is_a_value_error_naming_what_was_found(tmp_path):
    dev = wavejit.Device("mi210")
    with pytest.raises(ValueError, match=r"no code object for the mi210 \(gfx90a\) in it; it holds gfx942"):
        dev.load(wavejit.bundled("vadd-gfx942.co"))
    with pytest.raises(ValueError, match="neither an ELF file nor a clang offload bundle"):
        dev.load(b"not a code object")
    with pytest.raises(FileNotFoundError):
        dev.load(tmp_path / "missing.co")
    with pytest.raises(TypeError, match="expected a path or bytes"):
        dev.load(42)


def test_kernel_metadata_lists_explicit_and_hidden_arguments():
    dev = wavejit.Device("mi300x")
    vadd = bundled_kernel(dev, "vadd")
    explicit = [a for a in vadd.args if not a["hidden"]]
    assert [a["kind"] for a in explicit] == ["global_buffer"] * 3 + ["by_value"]
    assert explicit[3]["type_name"] == "uint" and explicit[3]["size"] == 4
    assert any(a["kind"] == "hidden_block_count_x" for a in vadd.args)
    assert vadd.descriptor["group_segment_fixed_size"] == 0 and vadd.descriptor["vgprs"] > 0


@pytest.mark.parametrize("stem, kernel", [("reduce", "reduce_sum"), ("divergence", None), ("mfma_gemm", None)])
def test_disasm_lists_the_kernel_as_llvm_objdump_does(tmp_path, stem, kernel):
    dev = wavejit.Device("mi300x")
    path = tmp_path / f"{stem}.co"
    path.write_bytes(wavejit.bundled(f"{stem}-gfx942.co"))
    module = dev.load(path)
    k = module[kernel or module.kernels[0]]
    ours = k.disasm().splitlines()
    assert ours[0] == f"{k.name}:"
    listing = subprocess.run(
        ["llvm-objdump-19", "-d", "--mcpu=gfx942", str(path)], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    start = next(i for i, l in enumerate(listing) if l.endswith(f"<{k.name}>:"))
    theirs = []
    for line in listing[start + 1 :]:
        if not line.strip():
            break
        theirs.append(line)
    assert ours[1:] == theirs


def test_loading_a_directory_is_an_os_error_naming_it(tmp_path):
    dev = wavejit.Device("mi300x")
    with pytest.raises(OSError, match=str(tmp_path)) as e:
        dev.load(tmp_path)
    assert not isinstance(e.value, FileNotFoundError)


SCALARS_CL = """
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
__kernel void scalars(__global float *out, half h, __bf16 b, char c, unsigned char uc, short s, ushort us) {
    out[0] = (float)h; out[1] = (float)b; out[2] = (float)c; out[3] = (float)uc; out[4] = (float)s;
    out[5] = (float)us;
}
"""


@pytest.mark.parametrize("name", DEVICES)
def test_scalars_of_one_and_two_bytes_are_laid_out_by_their_c_type(tmp_path, name):
    dev = wavejit.Device(name)
    src = tmp_path / "scalars.cl"
    src.write_text(SCALARS_CL)
    co = tmp_path / "scalars.co"
    subprocess.run(["clang-19", "-x", "cl", "-cl-std=CL2.0", "-target", "amdgcn-amd-amdhsa", f"-mcpu={dev.gfx}",
                    "-nogpulib", "-O3", str(src), "-o", str(co)], check=True)
    k = dev.load(co)["scalars"]
    assert [a["type_name"] for a in k.args if not a["hidden"]][1:3] == ["half", "__bf16"]
    out = dev.zeros(6, np.float32)
    # a float goes into a half slot as IEEE half and into a __bf16 slot as bfloat16; ints in two's complement
    k(out, 1.5, -2.75, -3, 250, -300, 65000, grid=1, block=1)
    assert out.numpy().tolist() == [1.5, -2.75, -3.0, 250.0, -300.0, 65000.0]
    # 1/3 rounds to nearest in both formats
    k(out, 1 / 3, 1 / 3, 0, 0, 0, 0, grid=1, block=1)
    assert out.numpy()[0] == np.float32(np.float16(1 / 3))
    assert out.numpy()[1] == np.float32(0.333984375), "1/3 as bfloat16 (0x3eab)"
    # numpy scalars of exactly the slot's size go as their bits
    k(out, np.float16(0.5), np.uint16(0x4049), np.int8(-128), np.uint8(255), np.int16(-32768), np.uint16(1),
      grid=1, block=1)
    assert out.numpy().tolist() == [0.5, 3.140625, -128.0, 255.0, -32768.0, 1.0]
    with pytest.raises(ValueError, match=r"argument 3 \(#3: char\) of scalars: 256 does not fit a 1-byte slot"):
        k(out, 0.0, 0.0, 256, 0, 0, 0, grid=1, block=1)
    with pytest.raises(TypeError, match=r"argument 2 \(#2: __bf16\) of scalars: a bfloat16 \(.*\), got float16"):
        k(out, 0.0, np.float16(1), 0, 0, 0, 0, grid=1, block=1)
    with pytest.raises(TypeError, match=r"argument 1 \(#1: half\) of scalars: a 2-byte value, got float32"):
        k(out, np.float32(1), 0.0, 0, 0, 0, 0, grid=1, block=1)

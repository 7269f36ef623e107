// Per-lane trip counts, nested branches, a non-inlined helper, 64-bit math and integer division.
__attribute__((noinline)) ulong collatz_steps(ulong x) {
    ulong steps = 0;
    while (x != 1 && steps < 1000) {
        x = (x & 1) ? 3 * x + 1 : x / 2;
        steps++;
    }
    return steps;
}
__kernel void divergence(__global ulong *out, __global const uint *seed, uint n) {
    uint i = __builtin_amdgcn_workgroup_id_x() * __builtin_amdgcn_workgroup_size_x() + __builtin_amdgcn_workitem_id_x();
    if (i >= n) return;
    ulong v = seed[i] + 1;
    if (v % 3 == 0) {
        out[i] = collatz_steps(v) / (v % 7 + 1);
    } else if (v % 3 == 1) {
        double d = (double)v;
        out[i] = (ulong)(d * 1.5 + (double)(v / 5));
    } else {
        out[i] = v * 0x9E3779B97F4A7C15UL;
    }
}

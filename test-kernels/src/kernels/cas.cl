// Compare-and-swap loops: a float add into 4 bins (32-bit CAS, the way atomicAdd(float) is done without
// float atomics) and an add of (i << 33) + 1 into 2 ulong counters (64-bit CAS, carries across the halves).
__kernel void cas(__global const float *in, __global float *bins, __global ulong *wide, uint n) {
    uint i = __builtin_amdgcn_workgroup_id_x() * 64 + __builtin_amdgcn_workitem_id_x();
    if (i >= n)
        return;
    float v = in[i];
    __global uint *bin = (__global uint *)&bins[i % 4];
    uint old = __atomic_load_n(bin, __ATOMIC_RELAXED);
    while (!__atomic_compare_exchange_n(bin, &old, as_uint(as_float(old) + v), false, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        ;
    __global ulong *w = &wide[i % 2];
    ulong seen = __atomic_load_n(w, __ATOMIC_RELAXED);
    while (!__atomic_compare_exchange_n(w, &seen, seen + ((ulong)i << 33) + 1, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        ;
}

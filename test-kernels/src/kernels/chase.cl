// Pointer chases for memory latency, the way public GPU microbenchmarks measure it: one work-item follows a
// chain of indices (next[i] is the index of the next element, `stride` bytes on, wrapping at the footprint), a
// warm-up pass first, then `steps` dependent loads timed with s_memtime; out[0] = cycles, out[1] = the index
// reached (so the chain cannot be optimized away).

// Vector memory: global loads through the vector L1, L2 and HBM.
__kernel void chase_vector(__global const uint *next, uint steps, __global ulong *out) {
    // the work-item id (0) as the start keeps the chain in vector registers
    uint p = __builtin_amdgcn_workitem_id_x();
    #pragma unroll 16
    for (uint i = 0; i < steps; i++) p = next[p];
    ulong t0 = __builtin_amdgcn_s_memtime();
    #pragma unroll 16
    for (uint i = 0; i < steps; i++) p = next[p];
    ulong t1 = __builtin_amdgcn_s_memtime();
    out[0] = t1 - t0;
    out[1] = p;
}

// Scalar memory: a uniform chain through the scalar data cache.
__kernel void chase_scalar(__constant uint *next, uint steps, __global ulong *out) {
    uint p = 0;
    #pragma unroll 16
    for (uint i = 0; i < steps; i++) p = next[p];
    ulong t0 = __builtin_amdgcn_s_memtime();
    #pragma unroll 16
    for (uint i = 0; i < steps; i++) p = next[p];
    ulong t1 = __builtin_amdgcn_s_memtime();
    out[0] = t1 - t0;
    out[1] = p;
}

// LDS: the chain copied into the workgroup's LDS (4096 entries), then chased there.
__kernel void chase_lds(__global const uint *next, uint steps, __global ulong *out) {
    __local uint buf[4096];
    for (uint i = 0; i < 4096; i++) buf[i] = next[i];
    __builtin_amdgcn_s_barrier();
    uint p = 0;
    #pragma unroll 16
    for (uint i = 0; i < steps; i++) p = buf[p];
    ulong t0 = __builtin_amdgcn_s_memtime();
    #pragma unroll 16
    for (uint i = 0; i < steps; i++) p = buf[p];
    ulong t1 = __builtin_amdgcn_s_memtime();
    out[0] = t1 - t0;
    out[1] = p;
}

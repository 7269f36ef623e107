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

// Latency under load: work-item 0 of workgroup 0 chases as chase_vector does while the work-items of the other
// workgroups (`block` each, `loaders` in all) read `load` (float4, grid-stride over `n` elements, `passes` times),
// so that the chase's requests meet theirs in the L2 and memory channels. out[2] keeps the loads' sum alive.
__kernel void chase_loaded(__global const uint *next, uint steps, __global ulong *out, __global const float4 *load,
                           uint n, uint passes, uint block, uint loaders) {
    uint group = __builtin_amdgcn_workgroup_id_x();
    uint lane = __builtin_amdgcn_workitem_id_x();
    if (group == 0) {
        if (lane != 0) return;
        uint p = 0;
        #pragma unroll 16
        for (uint i = 0; i < steps; i++) p = next[p];
        ulong t0 = __builtin_amdgcn_s_memtime();
        #pragma unroll 16
        for (uint i = 0; i < steps; i++) p = next[p];
        ulong t1 = __builtin_amdgcn_s_memtime();
        out[0] = t1 - t0;
        out[1] = p;
        return;
    }
    float4 acc = 0;
    for (uint k = 0; k < passes; k++)
        for (uint i = (group - 1) * block + lane; i < n; i += loaders) acc += load[i];
    if (acc.x + acc.y + acc.z + acc.w == -1.0f) out[2] = 1;
}

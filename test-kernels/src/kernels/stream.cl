// Streaming bandwidth, STREAM-style: every work-item moves float4s in a grid-stride loop (`threads` is the
// grid's work-item count). Bandwidth is bytes moved over the dispatch's time.

static uint gid(void) {
    return __builtin_amdgcn_workgroup_id_x() * __builtin_amdgcn_workgroup_size_x() + __builtin_amdgcn_workitem_id_x();
}

// Reads `n` float4s (a power of two) `passes` times; out[gid] = their sum (so the loads cannot be dropped). Each
// pass starts one grid further on, so a work-item reads other data in every pass: a buffer smaller than the L2
// but larger than the L1s, read for several passes, measures the L2.
__kernel void stream_read(__global const float4 *in, uint n, uint passes, uint threads, __global float *out) {
    float4 acc = 0.0f;
    for (uint p = 0; p < passes; p++)
        for (uint i = gid(); i < n; i += threads) acc += in[(i + p * threads) & (n - 1)];
    out[gid()] = acc.x + acc.y + acc.z + acc.w;
}

// Writes `v` to `n` float4s.
__kernel void stream_write(__global float4 *out, uint n, uint threads, float v) {
    for (uint i = gid(); i < n; i += threads) out[i] = (float4)(v);
}

// a[i] = b[i] + s * c[i] over `n` float4s.
__kernel void stream_triad(__global float4 *a, __global const float4 *b, __global const float4 *c, float s, uint n, uint threads) {
    for (uint i = gid(); i < n; i += threads) a[i] = b[i] + s * c[i];
}

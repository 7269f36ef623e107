// 64-bin histogram of bytes: per-workgroup bins in LDS with LDS atomics, merged into global bins with global
// atomics. Each work-item visits data[gid], data[gid + stride], ... (stride = the grid size).
__kernel __attribute__((reqd_work_group_size(256, 1, 1)))
void histogram(__global const uchar *data, uint n, uint stride, __global uint *bins) {
    __local uint local_bins[64];
    uint lid = __builtin_amdgcn_workitem_id_x();
    uint gid = __builtin_amdgcn_workgroup_id_x() * 256 + lid;
    if (lid < 64) local_bins[lid] = 0;
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
    __builtin_amdgcn_s_barrier();
    __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
    for (uint i = gid; i < n; i += stride)
        __atomic_fetch_add(&local_bins[data[i] & 63], 1u, __ATOMIC_RELAXED);
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
    __builtin_amdgcn_s_barrier();
    __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
    if (lid < 64)
        __atomic_fetch_add(&bins[lid], local_bins[lid], __ATOMIC_RELAXED);
}

// Inclusive prefix sum of 256 uints per workgroup (Hillis-Steele in LDS, barriers between steps).
__kernel __attribute__((reqd_work_group_size(256, 1, 1)))
void scan(__global const uint *in, __global uint *out) {
    __local uint buf[2][256];
    uint lid = __builtin_amdgcn_workitem_id_x();
    uint gid = __builtin_amdgcn_workgroup_id_x() * 256 + lid;
    int cur = 0;
    buf[0][lid] = in[gid];
    for (uint d = 1; d < 256; d <<= 1) {
        __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
        __builtin_amdgcn_s_barrier();
        __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
        uint v = buf[cur][lid];
        if (lid >= d) v += buf[cur][lid - d];
        buf[1 - cur][lid] = v;
        cur = 1 - cur;
    }
    out[gid] = buf[cur][lid];
}

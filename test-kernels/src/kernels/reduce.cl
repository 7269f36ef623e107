// Sum of a block of 256 floats per workgroup, in LDS with barriers.
__kernel __attribute__((reqd_work_group_size(256, 1, 1)))
void reduce_sum(__global const float *in, __global float *out, uint n) {
    __local float tmp[256];
    uint lid = __builtin_amdgcn_workitem_id_x();
    uint gid = __builtin_amdgcn_workgroup_id_x() * 256 + lid;
    tmp[lid] = gid < n ? in[gid] : 0.0f;
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup"); __builtin_amdgcn_s_barrier(); __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
    for (uint s = 128; s > 0; s >>= 1) {
        if (lid < s) tmp[lid] += tmp[lid + s];
        __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup"); __builtin_amdgcn_s_barrier(); __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
    }
    if (lid == 0) out[__builtin_amdgcn_workgroup_id_x()] = tmp[0];
}

// 64- and 128-bit LDS accesses: float4 and double tiles exchanged between the lanes of a workgroup.
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void lds_wide(__global const float4 *in, __global float4 *out, __global const double *din, __global double *dout) {
    __local float4 t[64];
    __local double d[128];
    uint l = __builtin_amdgcn_workitem_id_x();
    uint g = __builtin_amdgcn_workgroup_id_x() * 64 + l;
    t[l] = in[g];
    d[l] = din[g];
    d[l + 64] = din[g] + 1.0;
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
    __builtin_amdgcn_s_barrier();
    __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
    out[g] = t[63 - l];
    dout[g] = d[(l + 5) & 63] + d[64 + l];
}

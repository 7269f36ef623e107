// Tiled SGEMM, C = A * B (row-major, n x n, n a multiple of 16), 16x16 tiles staged in LDS.
__kernel __attribute__((reqd_work_group_size(16, 16, 1)))
void sgemm(__global const float *a, __global const float *b, __global float *c, uint n) {
    __local float ta[16][16];
    __local float tb[16][16];
    uint tx = __builtin_amdgcn_workitem_id_x(), ty = __builtin_amdgcn_workitem_id_y();
    uint col = __builtin_amdgcn_workgroup_id_x() * 16 + tx;
    uint row = __builtin_amdgcn_workgroup_id_y() * 16 + ty;
    float acc = 0.0f;
    for (uint t = 0; t < n; t += 16) {
        ta[ty][tx] = a[row * n + t + tx];
        tb[ty][tx] = b[(t + ty) * n + col];
        __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
        __builtin_amdgcn_s_barrier();
        __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
        for (uint k = 0; k < 16; k++) acc = fma(ta[ty][k], tb[k][tx], acc);
        __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
        __builtin_amdgcn_s_barrier();
        __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
    }
    c[row * n + col] = acc;
}

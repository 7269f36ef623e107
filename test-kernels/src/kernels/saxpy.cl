#define GID() (__builtin_amdgcn_workgroup_id_x() * __builtin_amdgcn_workgroup_size_x() + __builtin_amdgcn_workitem_id_x())
__kernel void saxpy(float alpha, __global const float *x, __global float *y, uint n) {
    uint i = GID();
    if (i < n) y[i] = fma(alpha, x[i], y[i]);
}

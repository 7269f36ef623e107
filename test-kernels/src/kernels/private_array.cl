// A private array indexed with run-time values: the compiler keeps it in scratch memory (MUBUF on gfx90a,
// scratch_* with architected flat scratch on gfx942).
__kernel void private_array(__global float *out, __global const int *idx, uint n) {
    uint i = __builtin_amdgcn_workgroup_id_x() * 64 + __builtin_amdgcn_workitem_id_x();
    float a[64];
    for (int k = 0; k < 64; k++) a[k] = (float)(i * k);
    float s = 0;
    for (int k = 0; k < 16; k++) s += a[idx[(i + k) % n] & 63];
    out[i] = s;
}

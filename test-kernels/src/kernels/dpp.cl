// DPP lane moves (__builtin_amdgcn_update_dpp): row shift with and without bound_ctrl, quad permute,
// half-row mirror, and a row mask that leaves rows 1 and 3 untouched.
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void dpp(__global const int *in, __global int *out) {
    uint l = __builtin_amdgcn_workitem_id_x();
    uint g = __builtin_amdgcn_workgroup_id_x() * 64 + l;
    int v = in[g];
    int a = __builtin_amdgcn_update_dpp(-1, v, 0x111, 0xf, 0xf, false);  // row_shr:1
    int b = __builtin_amdgcn_update_dpp(0, v, 0x1B, 0xf, 0xf, false);    // quad_perm:[3,2,1,0]
    int c = __builtin_amdgcn_update_dpp(0, v, 0x141, 0xf, 0xf, true);    // row_half_mirror
    int d = __builtin_amdgcn_update_dpp(7, v, 0x101, 0x5, 0xf, true);    // row_shl:1, rows 0 and 2
    out[g] = a * 3 + b * 5 + c * 7 + d * 11;
}

// 3-D index math: every work-item writes its linearised global id and a mix of its coordinates, over a grid
// that is not a multiple of the workgroup in any dimension (partial workgroups in x, y and z).
__kernel void index3d(__global uint *out, uint nx, uint ny, uint nz) {
    uint x = __builtin_amdgcn_workgroup_id_x() * __builtin_amdgcn_workgroup_size_x() + __builtin_amdgcn_workitem_id_x();
    uint y = __builtin_amdgcn_workgroup_id_y() * __builtin_amdgcn_workgroup_size_y() + __builtin_amdgcn_workitem_id_y();
    uint z = __builtin_amdgcn_workgroup_id_z() * __builtin_amdgcn_workgroup_size_z() + __builtin_amdgcn_workitem_id_z();
    if (x >= nx || y >= ny || z >= nz) return;
    uint i = (z * ny + y) * nx + x;
    out[i] = (x * 7u) ^ (y << 10) ^ (z << 20) ^ __builtin_amdgcn_workitem_id_x();
}

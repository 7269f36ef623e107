// Dynamic element access in a 32-element vector kept in VGPRs: with a uniform index, LLVM reads and writes the
// element in VGPR index mode (s_set_gpr_idx_on, v_mov_b32, s_set_gpr_idx_off); with a per-lane index it selects
// with compares. out[2i] = v[k & 31], out[2i + 1] = v[idx[i] & 31]; then v[(k + 3) & 31] = 42 and
// v[(idx[i] + 5) & 31] = -1, and io[i] = v.
typedef float float32v __attribute__((ext_vector_type(32)));
__kernel void gpr_index(__global const float32v *in, __global const int *idx, __global float *out, __global float32v *io, int k) {
    int i = __builtin_amdgcn_workitem_id_x() + __builtin_amdgcn_workgroup_id_x() * 64;
    float32v v = in[i];
    int d = idx[i] & 31;
    out[2 * i] = v[k & 31];
    out[2 * i + 1] = v[d];
    v[(k + 3) & 31] = 42.0f;
    v[(d + 5) & 31] = -1.0f;
    io[i] = v;
}

// Cross-lane operations within a wave of 64: ds_bpermute rotation, readfirstlane, readlane, a ballot and its
// population count, and ds_swizzle (swap neighbours).
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void shuffle(__global int *out, __global const int *in) {
    uint lid = __builtin_amdgcn_workitem_id_x();
    uint gid = __builtin_amdgcn_workgroup_id_x() * 64 + lid;
    int v = in[gid];
    int rot = __builtin_amdgcn_ds_bpermute((int)(((lid + 1) & 63) << 2), v);
    int first = __builtin_amdgcn_readfirstlane(v);
    int l5 = __builtin_amdgcn_readlane(v, 5);
    ulong ball = __builtin_amdgcn_ballot_w64(v > 0);
    int cnt = __builtin_popcountl(ball);
    int swz = __builtin_amdgcn_ds_swizzle(v, 0x041F);
    out[gid] = rot * 3 + first - l5 + cnt * 1000 + swz * 7;
}

// Where each wave runs and what it was given, as its hardware registers say (s_getreg_b32): for wave w of the
// grid (64 work-items each), out[8 w ..] = HW_ID, XCC_ID (gfx942; 0 on gfx90a), MODE, STATUS, GPR_ALLOC,
// LDS_ALLOC, and the LDS word the wave's first work-item reads back (so the kernel keeps its LDS).
// hwreg(ID, OFFSET, SIZE) is ID | OFFSET << 6 | (SIZE - 1) << 11.
#define HWREG(id) ((id) | 31 << 11)
__kernel void hwid(__global uint *out) {
    __local uint tile[256];
    uint l = __builtin_amdgcn_workitem_id_x();
    uint g = __builtin_amdgcn_workgroup_id_x() * __builtin_amdgcn_workgroup_size_x() + l;
    tile[l] = g;
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup"); __builtin_amdgcn_s_barrier(); __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
    if ((l & 63) == 0) {
        __global uint *o = out + 8 * (g / 64);
        o[0] = __builtin_amdgcn_s_getreg(HWREG(4));
#if defined(__gfx942__)
        o[1] = __builtin_amdgcn_s_getreg(HWREG(20));
#else
        o[1] = 0;
#endif
        o[2] = __builtin_amdgcn_s_getreg(HWREG(1));
        o[3] = __builtin_amdgcn_s_getreg(HWREG(2));
        o[4] = __builtin_amdgcn_s_getreg(HWREG(5));
        o[5] = __builtin_amdgcn_s_getreg(HWREG(6));
        o[6] = tile[255 - l];
    }
}

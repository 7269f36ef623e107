// LDS bank conflicts: every lane of one wave reads the dword at lane * stride (mod 2048) in a dependent chain
// (each slot holds its own index), timed with s_memtime. Stride 1 touches 32 banks per half-wave (no
// conflict), stride 2^k makes a 2^k-way conflict (up to 32-way), stride 0 is a broadcast.
// out[0] = cycles of `steps` reads, out[1] = lane 0's index (keeps the chain).
__kernel __attribute__((reqd_work_group_size(64, 1, 1))) void lds_banks(__global ulong *out, uint stride, uint steps) {
    __local uint buf[2048];
    uint lane = __builtin_amdgcn_workitem_id_x();
    uint idx = (lane * stride) & 2047;
    buf[idx] = idx;
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
    __builtin_amdgcn_s_barrier();
    __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
    uint p = idx;
    p = buf[p];
    ulong t0 = __builtin_amdgcn_s_memtime();
    #pragma unroll 16
    for (uint i = 0; i < steps; i++) p = buf[p];
    ulong t1 = __builtin_amdgcn_s_memtime();
    if (lane == 0) {
        out[0] = t1 - t0;
        out[1] = p;
    }
}

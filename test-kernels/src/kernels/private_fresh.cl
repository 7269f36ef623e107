// Each work-item reads a word of its private memory before writing any, then fills its array with its own
// id + 1 (volatile, so the compiler keeps every access): out[i] is what the word held when the work-item began.
// Two sizes of array: 64 words (a wave's private memory 16 KiB) and 1,100 words (275 KiB).
__kernel void private_fresh_small(__global uint *out, uint k) {
    uint i = __builtin_amdgcn_workgroup_id_x() * __builtin_amdgcn_workgroup_size_x() + __builtin_amdgcn_workitem_id_x();
    volatile uint a[64];
    out[i] = a[k % 64];
    for (int j = 0; j < 64; j++) a[j] = i + 1;
}

__kernel void private_fresh_large(__global uint *out, uint k) {
    uint i = __builtin_amdgcn_workgroup_id_x() * __builtin_amdgcn_workgroup_size_x() + __builtin_amdgcn_workitem_id_x();
    volatile uint a[1100];
    out[i] = a[k % 1100];
    for (int j = 0; j < 1100; j += 7) a[j] = i + 1;
    a[k % 1100] = i + 1;
}

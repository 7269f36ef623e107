// Workgroup 0's first lane publishes `rounds` 64-bit values whose two halves are equal, one relaxed atomic store
// each (global_store_dwordx2); every lane of the other workgroups reads the value `rounds` times (relaxed atomic
// loads: global_load_dwordx2 glc) and counts the reads whose halves differ. A GPU's naturally aligned 64-bit
// accesses are single-copy atomic, so every count is 0 however the workgroups overlap; decoupled look-back scans
// (rocPRIM's select and partition) rely on it, publishing a flag and a value in one such store.
__kernel void wide_publish(__global ulong *cell, __global uint *torn, uint rounds) {
    uint g = __builtin_amdgcn_workgroup_id_x();
    uint l = __builtin_amdgcn_workitem_id_x();
    if (g == 0) {
        if (l == 0)
            for (uint k = 1; k <= rounds; k++)
                __atomic_store_n(cell, (ulong)k << 32 | k, __ATOMIC_RELAXED);
        return;
    }
    uint bad = 0;
    for (uint k = 0; k < rounds; k++) {
        ulong v = __atomic_load_n(cell, __ATOMIC_RELAXED);
        bad += (uint)(v >> 32) != (uint)v;
    }
    torn[(g - 1) * 64 + l] = bad;
}

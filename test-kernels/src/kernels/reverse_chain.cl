// Workgroups that wait on later ones: workgroup g's first lane spins until workgroup g + 1 has set its flag (a
// relaxed atomic load in a loop: global_load_dword glc, sc1 on gfx942), then sets its own to one more; the last
// workgroup sets 1 at once. On a GPU every workgroup of so small a grid is resident at once, so the chain
// completes, each flag ending as the number of workgroups from its own to the last.
__kernel void reverse_chain(__global uint *flags, uint n) {
    uint g = __builtin_amdgcn_workgroup_id_x();
    if (__builtin_amdgcn_workitem_id_x() != 0)
        return;
    uint v = 0;
    if (g + 1 < n)
        while ((v = __atomic_load_n(&flags[g + 1], __ATOMIC_RELAXED)) == 0) {
        }
    __atomic_store_n(&flags[g], v + 1, __ATOMIC_RELAXED);
}

// Waves that wait on each other through the LDS while one of them waits on a later workgroup: workgroup g's
// first wave spins (a relaxed atomic load in a loop: global_load_dword glc, sc1 on gfx942) until workgroup g + 1
// has set its flag, then writes one more into the LDS; its second wave spins on that LDS word (ds_read_b32 in a
// loop) and then publishes it as workgroup g's flag. The last workgroup writes 1 at once. On a GPU every
// workgroup of so small a grid is resident at once, so the chain completes, each flag ending as the number of
// workgroups from its own to the last. Blocks of 128 work-items: two waves.
__kernel void lds_handoff(__global uint *flags, uint n) {
    __local volatile uint ready;
    uint g = __builtin_amdgcn_workgroup_id_x();
    uint lid = __builtin_amdgcn_workitem_id_x();
    if (lid == 0)
        ready = 0;
    __builtin_amdgcn_s_barrier();
    if (lid == 0) {
        uint v = 0;
        if (g + 1 < n)
            while ((v = __atomic_load_n(&flags[g + 1], __ATOMIC_RELAXED)) == 0) {
            }
        ready = v + 1;
    } else if (lid == 64) {
        uint v;
        while ((v = ready) == 0) {
        }
        __atomic_store_n(&flags[g], v, __ATOMIC_RELAXED);
    }
}

// Producers and consumers in different workgroups, synchronized by global wave sync (GWS) semaphores; a
// cooperative launch of `groups` one-wave workgroups. Workgroups 0 .. pairs-1 consume, pairs .. 2*pairs-1
// produce, and workgroup 2*pairs (when the grid has it) releases the consumers at the end:
// - consumer c takes `per` items of producer c, one ds_gws_sema_p on resource c per item (the resource id in
//   M0[21:16]), then waits on resource 63 (ds_gws_sema_p, the id in the offset field) and counts itself in
//   woke[0] once released;
// - producer p writes its items items[p*per + j] = p * 1000 + j * 7 + base: the first per/2 one by one, each
//   followed by ds_gws_sema_v on resource p, the rest at once, followed by ds_gws_sema_br of their count;
// - the releaser repeats ds_gws_sema_release_all on resource 63 until every consumer has counted itself.
// Each consumer writes out[k] = items[k] * 2 + 1 for the items it took. Workgroup 0 first sets the count of
// every resource used to 0 (ds_gws_init) and all waves meet at ds_gws_barrier, so no semaphore is used before
// it is set up. Without the releaser the consumers wait on resource 63 forever: a deadlock the engine reports.

#define RELEASE 63
#define SETUP 62

__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void gws_sema(__global uint *items, __global uint *out, __global uint *woke, uint pairs, uint per, uint groups, uint base) {
    uint wg = __builtin_amdgcn_workgroup_id_x();
    bool lead = __builtin_amdgcn_workitem_id_x() == 0;
    if (wg == 0) {
        for (uint r = 0; r < pairs; r++)
            __builtin_amdgcn_ds_gws_init(0, r);
        __builtin_amdgcn_ds_gws_init(0, RELEASE);
    }
    __builtin_amdgcn_ds_gws_barrier(groups - 1, SETUP);
    if (wg < pairs) {
        for (uint j = 0; j < per; j++) {
            __builtin_amdgcn_ds_gws_sema_p(wg);
            __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "agent");
            if (lead) {
                uint k = wg * per + j;
                out[k] = __atomic_load_n(&items[k], __ATOMIC_RELAXED) * 2 + 1;
            }
        }
        __builtin_amdgcn_ds_gws_sema_p(RELEASE);
        if (lead)
            __atomic_fetch_add(&woke[0], 1, __ATOMIC_RELAXED);
    } else if (wg < 2 * pairs) {
        uint p = wg - pairs;
        uint first = per / 2;
        for (uint j = 0; j < first; j++) {
            if (lead)
                __atomic_store_n(&items[p * per + j], p * 1000 + j * 7 + base, __ATOMIC_RELAXED);
            __builtin_amdgcn_fence(__ATOMIC_RELEASE, "agent");
            __builtin_amdgcn_ds_gws_sema_v(p);
        }
        for (uint j = first; j < per; j++) {
            if (lead)
                __atomic_store_n(&items[p * per + j], p * 1000 + j * 7 + base, __ATOMIC_RELAXED);
        }
        __builtin_amdgcn_fence(__ATOMIC_RELEASE, "agent");
        __builtin_amdgcn_ds_gws_sema_br(per - first, p);
    } else {
        while (__atomic_load_n(&woke[0], __ATOMIC_ACQUIRE) < pairs)
            __builtin_amdgcn_ds_gws_sema_release_all(RELEASE);
    }
}

// Reads its workgroup size from the dispatch packet, as kernels of HIP's code object v4 do, beside its kernel
// arguments: scalar loads from two allocations (out[i] = in[i] * workgroup size + grid size).
__kernel void packet(__global const uint *in, __global uint *out, uint n) {
    __constant ushort *p16 = (__constant ushort *)__builtin_amdgcn_dispatch_ptr();
    __constant uint *p32 = (__constant uint *)__builtin_amdgcn_dispatch_ptr();
    uint size = p16[2];
    uint i = __builtin_amdgcn_workgroup_id_x() * size + __builtin_amdgcn_workitem_id_x();
    if (i < n) out[i] = in[i] * size + p32[3];
}

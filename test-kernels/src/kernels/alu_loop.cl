// ALU-bound loop: per work-item, `iters` rounds of dependent FMAs (the interpreter/JIT throughput benchmark).
__kernel void alu_loop(__global float *out, uint iters) {
    uint i = __builtin_amdgcn_workgroup_id_x() * __builtin_amdgcn_workgroup_size_x() + __builtin_amdgcn_workitem_id_x();
    float x = (float)i * 0.001f, y = 1.0f;
    for (uint k = 0; k < iters; k++) {
        x = fma(x, 0.999f, y);
        y = fma(y, 1.0001f, -0.5f * x);
    }
    out[i] = x + y;
}

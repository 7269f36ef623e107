// ALU-bound loop mixing integer and float work: per work-item, `iters` rounds of a 32-bit integer
// multiply-add (a linear congruential step) beside two dependent FMAs (the benchmark's mixed loop).
__kernel void alu_mixed(__global float *out, uint iters) {
    uint i = __builtin_amdgcn_workgroup_id_x() * __builtin_amdgcn_workgroup_size_x() + __builtin_amdgcn_workitem_id_x();
    float x = (float)i * 0.001f, y = 1.0f;
    uint h = i;
    for (uint k = 0; k < iters; k++) {
        x = fma(x, 0.999f, y);
        h = h * 1664525u + 1013904223u;
        y = fma(y, 1.0001f, -0.5f * x);
    }
    out[i] = x + y + (float)(h >> 16);
}

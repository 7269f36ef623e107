// One 32x32x8 f16 MFMA step per wave (gfx90a/gfx942 matrix cores).
typedef half half4 __attribute__((ext_vector_type(4)));
typedef float float16 __attribute__((ext_vector_type(16)));
__kernel void mfma_f16(__global const half4 *a, __global const half4 *b, __global float16 *c) {
    uint lane = __builtin_amdgcn_workitem_id_x();
    float16 acc = c[lane];
    acc = __builtin_amdgcn_mfma_f32_32x32x8f16(a[lane], b[lane], acc, 0, 0, 0);
    c[lane] = acc;
}

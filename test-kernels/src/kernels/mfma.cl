// One MFMA step per wave (gfx90a/gfx942 matrix cores), one kernel per single-block shape.
typedef half half4 __attribute__((ext_vector_type(4)));
typedef float float16 __attribute__((ext_vector_type(16)));
__kernel void mfma_f16(__global const half4 *a, __global const half4 *b, __global float16 *c) {
    uint lane = __builtin_amdgcn_workitem_id_x();
    float16 acc = c[lane];
    acc = __builtin_amdgcn_mfma_f32_32x32x8f16(a[lane], b[lane], acc, 0, 0, 0);
    c[lane] = acc;
}

// 16x16x16 bf16 (the gfx90a "_1k" form) and 32x32x2 f32.
typedef short short4_ __attribute__((ext_vector_type(4)));
__kernel void mfma_bf16(__global const short4_ *a, __global const short4_ *b, __global float4 *c) {
    uint lane = __builtin_amdgcn_workitem_id_x();
    float4 acc = c[lane];
    acc = __builtin_amdgcn_mfma_f32_16x16x16bf16_1k(a[lane], b[lane], acc, 0, 0, 0);
    c[lane] = acc;
}

__kernel void mfma_f32(__global const float *a, __global const float *b, __global float16 *c) {
    uint lane = __builtin_amdgcn_workitem_id_x();
    float16 acc = c[lane];
    acc = __builtin_amdgcn_mfma_f32_32x32x2f32(a[lane], b[lane], acc, 0, 0, 0);
    c[lane] = acc;
}

// The other single-block shapes: 16x16x16 f16, 32x32x8 bf16, 16x16x4 f32.
__kernel void mfma_f16_16(__global const half4 *a, __global const half4 *b, __global float4 *c) {
    uint lane = __builtin_amdgcn_workitem_id_x();
    c[lane] = __builtin_amdgcn_mfma_f32_16x16x16f16(a[lane], b[lane], c[lane], 0, 0, 0);
}

__kernel void mfma_bf16_32(__global const short4_ *a, __global const short4_ *b, __global float16 *c) {
    uint lane = __builtin_amdgcn_workitem_id_x();
    c[lane] = __builtin_amdgcn_mfma_f32_32x32x8bf16_1k(a[lane], b[lane], c[lane], 0, 0, 0);
}

__kernel void mfma_f32_16(__global const float *a, __global const float *b, __global float4 *c) {
    uint lane = __builtin_amdgcn_workitem_id_x();
    c[lane] = __builtin_amdgcn_mfma_f32_16x16x4f32(a[lane], b[lane], c[lane], 0, 0, 0);
}

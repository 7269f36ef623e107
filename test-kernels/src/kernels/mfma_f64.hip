// f64 matrix cores: a 16x16 by 16x16 GEMM with v_mfma_f64_16x16x4f64, K stepped 4 at a time. One wave.
#include <hip/hip_runtime.h>

typedef double double4_ __attribute__((ext_vector_type(4)));

// a, b, c: 16x16 row-major. Lane l holds A[l%16][k0 + l/16] and B[k0 + l/16][l%16] for each K step k0.
extern "C" __global__ void dgemm16(const double *a, const double *b, double *c) {
    int lane = threadIdx.x;
    int row = lane % 16, kk = lane / 16;
    double4_ acc = {0, 0, 0, 0};
    for (int k0 = 0; k0 < 16; k0 += 4)
        acc = __builtin_amdgcn_mfma_f64_16x16x4f64(a[row * 16 + k0 + kk], b[(k0 + kk) * 16 + row], acc, 0, 0, 0);
    // D layout (unlike the f32 shapes): lane l, element j holds D[l / 16 + 4 * j][l % 16]
    for (int j = 0; j < 4; j++) c[(kk + 4 * j) * 16 + row] = acc[j];
}

// GEMM on the matrix cores: C (M x N, f32) = A (M x K) * B (K x N), row-major, f16 or bf16 inputs. Each wave
// (a 64-wide workgroup) computes one 32x32 tile of C with v_mfma_f32_32x32x8 steps along K. M, N multiples of
// 32, K a multiple of 8.
#include <hip/hip_runtime.h>

typedef _Float16 half4_ __attribute__((ext_vector_type(4)));
typedef short short4_ __attribute__((ext_vector_type(4)));
typedef float float16_ __attribute__((ext_vector_type(16)));

// lane l holds A[row0 + l % 32][k + 4 (l / 32) + 0..3] and B[k + 4 (l / 32) + 0..3][col0 + l % 32]; D element r
// of lane l is C[row0 + 8 (r / 4) + 4 (l / 32) + r % 4][col0 + l % 32]
extern "C" __global__ void hgemm(const _Float16 *a, const _Float16 *b, float *c, int n, int k) {
    int lane = threadIdx.x, tiles_n = n / 32;
    int row0 = 32 * (blockIdx.x / tiles_n), col0 = 32 * (blockIdx.x % tiles_n);
    int i = lane % 32, kk = 4 * (lane / 32);
    float16_ acc = {};
    for (int k0 = 0; k0 < k; k0 += 8) {
        half4_ x, y;
        for (int e = 0; e < 4; e++) {
            x[e] = a[(row0 + i) * k + k0 + kk + e];
            y[e] = b[(k0 + kk + e) * n + col0 + i];
        }
        acc = __builtin_amdgcn_mfma_f32_32x32x8f16(x, y, acc, 0, 0, 0);
    }
    for (int r = 0; r < 16; r++) c[(row0 + 8 * (r / 4) + kk + r % 4) * n + col0 + i] = acc[r];
}

// bf16 given as its 16-bit patterns.
extern "C" __global__ void bgemm(const short *a, const short *b, float *c, int n, int k) {
    int lane = threadIdx.x, tiles_n = n / 32;
    int row0 = 32 * (blockIdx.x / tiles_n), col0 = 32 * (blockIdx.x % tiles_n);
    int i = lane % 32, kk = 4 * (lane / 32);
    float16_ acc = {};
    for (int k0 = 0; k0 < k; k0 += 8) {
        short4_ x, y;
        for (int e = 0; e < 4; e++) {
            x[e] = a[(row0 + i) * k + k0 + kk + e];
            y[e] = b[(k0 + kk + e) * n + col0 + i];
        }
        acc = __builtin_amdgcn_mfma_f32_32x32x8bf16_1k(x, y, acc, 0, 0, 0);
    }
    for (int r = 0; r < 16; r++) c[(row0 + 8 * (r / 4) + kk + r % 4) * n + col0 + i] = acc[r];
}

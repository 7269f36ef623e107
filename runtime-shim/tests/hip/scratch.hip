// Private memory through the private segment buffer: a dynamically indexed local array, and a recursive device
// function whose stack frames move the wave-level stack pointer (s32) by 64 bytes per lane byte.
#include "check.h"
__global__ void local_array(const int* idx, int* out) {
  int a[64];
  int t = threadIdx.x;
  for (int i = 0; i < 64; i++) a[i] = i * t;
  out[t] = a[idx[t] & 63];
}
__device__ int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
__global__ void recursive(int* out) { out[threadIdx.x] = fib(threadIdx.x % 12); }
int main() {
  int h[64], *idx, *out;
  for (int i = 0; i < 64; i++) h[i] = (i * 37) % 64;
  CHECK(hipMalloc(&idx, 256)); CHECK(hipMalloc(&out, 256));
  CHECK(hipMemcpy(idx, h, 256, hipMemcpyHostToDevice));
  hipLaunchKernelGGL(local_array, dim3(1), dim3(64), 0, 0, idx, out);
  int r[64]; CHECK(hipMemcpy(r, out, 256, hipMemcpyDeviceToHost));
  for (int t = 0; t < 64; t++) EXPECT(r[t] == h[t] * t);
  hipLaunchKernelGGL(recursive, dim3(1), dim3(64), 0, 0, out);
  CHECK(hipMemcpy(r, out, 256, hipMemcpyDeviceToHost));
  int f[12] = {0, 1, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89};
  for (int t = 0; t < 64; t++) EXPECT(r[t] == f[t % 12]);
  std::printf("scratch: private arrays and a recursive device function correct\n");
  return 0;
}

// Features HIP test suites use every day: dynamic shared memory, __constant__ and __device__ symbols copied
// to and from the host (a kernel atomically updating a __device__ variable), warp shuffles and ballots,
// hipMemGetInfo, function attributes and occupancy queries.
#include "check.h"
#include <vector>
__constant__ float coeffs[4];
__device__ int counter;
__global__ void dyn_shared(const float* in, float* out, int n) {
  extern __shared__ float tile[];
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  tile[t] = i < n ? in[i] : 0.0f;
  __syncthreads();
  float v = tile[blockDim.x - 1 - t];
  if (i < n) out[i] = v * coeffs[0] + coeffs[1];
  if (t == 0) atomicAdd(&counter, 1);
}
__global__ void warp_ops(int* out) {
  int lane = threadIdx.x % warpSize;
  int v = __shfl_down(lane, 1);
  unsigned long long b = __ballot(lane % 3 == 0);
  out[threadIdx.x] = v + (int)__popcll(b) * 1000;
}
int main() {
  const int n = 1000, block = 128;
  std::vector<float> h(n), o(n);
  for (int i = 0; i < n; i++) h[i] = i;
  float hc[4] = {2.0f, 0.5f, 0, 0};
  CHECK(hipMemcpyToSymbol(HIP_SYMBOL(coeffs), hc, sizeof hc));
  int zero = 0;
  CHECK(hipMemcpyToSymbol(HIP_SYMBOL(counter), &zero, 4));
  float *in, *out;
  CHECK(hipMalloc(&in, n * 4)); CHECK(hipMalloc(&out, n * 4));
  CHECK(hipMemcpy(in, h.data(), n * 4, hipMemcpyHostToDevice));
  hipLaunchKernelGGL(dyn_shared, dim3((n + block - 1) / block), dim3(block), block * sizeof(float), 0, in, out, n);
  CHECK(hipGetLastError());
  CHECK(hipMemcpy(o.data(), out, n * 4, hipMemcpyDeviceToHost));
  for (int i = 0; i < n; i++) {
    int b = i / block, t = i % block, src = b * block + (block - 1 - t);
    float want = (src < n ? (float)src : 0.0f) * 2.0f + 0.5f;
    EXPECT(o[i] == want);
  }
  int blocks = 0;
  CHECK(hipMemcpyFromSymbol(&blocks, HIP_SYMBOL(counter), 4));
  EXPECT(blocks == (n + block - 1) / block);
  int* w; CHECK(hipMalloc(&w, 64 * 4));
  hipLaunchKernelGGL(warp_ops, dim3(1), dim3(64), 0, 0, w);
  int hw[64]; CHECK(hipMemcpy(hw, w, sizeof hw, hipMemcpyDeviceToHost));
  for (int l = 0; l < 64; l++) EXPECT(hw[l] == (l < 63 ? l + 1 : 63) + 22 * 1000);
  size_t free_b = 0, total_b = 0;
  CHECK(hipMemGetInfo(&free_b, &total_b));
  EXPECT(total_b > (size_t(32) << 30) && free_b <= total_b);
  hipFuncAttributes attr;
  CHECK(hipFuncGetAttributes(&attr, reinterpret_cast<const void*>(dyn_shared)));
  int min_grid = 0, best_block = 0;
  CHECK(hipOccupancyMaxPotentialBlockSize(&min_grid, &best_block, dyn_shared, 0, 0));
  EXPECT(best_block > 0 && best_block <= 1024);
  int dev = -1; CHECK(hipGetDevice(&dev)); EXPECT(dev == 0);
  int v = 0; CHECK(hipDriverGetVersion(&v)); CHECK(hipRuntimeGetVersion(&v));
  std::printf("misc: dynamic shared memory, constant and device symbols, shuffles and ballots, memory info %zu of %zu MiB free, occupancy block %d\n", free_b >> 20, total_b >> 20, best_block);
  return 0;
}

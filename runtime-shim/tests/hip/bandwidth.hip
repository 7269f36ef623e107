// Device read bandwidth measured the way HIP programs measure it: hipEventRecord around a kernel that reads a
// buffer once (float4 per work-item, grid-stride loop, a sum per work-item so the loads stay), the elapsed
// time from hipEventElapsedTime. Under `wavejit exec --timing` (WAVEJIT_TIMING=1) the events carry modeled
// time, so this prints the modeled device's bandwidth. Also: clock64() and wall_clock64() around a loop in a
// kernel (s_memtime, s_memrealtime) count forward, with or without the timing model. With `--blocking-sync`
// the host thread sleeps while it waits for the GPU (hipDeviceScheduleBlockingSync) instead of HIP's default spin.
#include "check.h"
#include <cstring>
#include <vector>

__global__ void read_sum(const float4* in, size_t n, float* out) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  size_t stride = (size_t)gridDim.x * blockDim.x;
  float4 acc = make_float4(0, 0, 0, 0);
  for (; i < n; i += stride) {
    float4 v = in[i];
    acc.x += v.x;
    acc.y += v.y;
    acc.z += v.z;
    acc.w += v.w;
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = acc.x + acc.y + acc.z + acc.w;
}

__global__ void clocked(unsigned long long* out, int n) {
#ifdef __HIP_DEVICE_COMPILE__  // HIP 5.2 declares wall_clock64() for device code only
  long long t0 = clock64(), w0 = wall_clock64();
  float x = threadIdx.x;
  for (int i = 0; i < n; i++) x = x * 0.5f + 1.0f;
  long long t1 = clock64(), w1 = wall_clock64();
  out[0] = t1 - t0;
  out[1] = w1 - w0;
  out[2] = (unsigned long long)x;
#endif
}

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--blocking-sync") == 0) CHECK(hipSetDeviceFlags(hipDeviceScheduleBlockingSync));
  const size_t bytes = 64u << 20, n = bytes / sizeof(float4);
  int cus = 0;
  CHECK(hipDeviceGetAttribute(&cus, hipDeviceAttributeMultiprocessorCount, 0));
  // every wave slot of the device busy: 8 waves on each of 4 SIMDs per CU
  const int block = 256, grid = cus * 8;
  std::vector<float> host(bytes / sizeof(float), 1.0f);
  float4* in;
  float* out;
  CHECK(hipMalloc(&in, bytes));
  CHECK(hipMalloc(&out, (size_t)grid * block * sizeof(float)));
  CHECK(hipMemcpy(in, host.data(), bytes, hipMemcpyHostToDevice));
  hipEvent_t start, stop;
  CHECK(hipEventCreate(&start));
  CHECK(hipEventCreate(&stop));
  hipLaunchKernelGGL(read_sum, dim3(grid), dim3(block), 0, 0, in, n, out);  // warm-up
  CHECK(hipEventRecord(start, 0));
  hipLaunchKernelGGL(read_sum, dim3(grid), dim3(block), 0, 0, in, n, out);
  CHECK(hipEventRecord(stop, 0));
  CHECK(hipEventSynchronize(stop));
  float ms = 0;
  CHECK(hipEventElapsedTime(&ms, start, stop));
  std::vector<float> sums((size_t)grid * block);
  CHECK(hipMemcpy(sums.data(), out, sums.size() * sizeof(float), hipMemcpyDeviceToHost));
  double total = 0;
  for (float s : sums) total += s;
  EXPECT(total == (double)(bytes / sizeof(float)));
  EXPECT(ms > 0.0f);
  std::printf("bandwidth: read %zu MiB in %.4f ms: %.1f GB/s\n", bytes >> 20, ms, bytes / (ms * 1e-3) / 1e9);
  // the same dispatch again, from another queue slot with its arguments at another place
  CHECK(hipEventRecord(start, 0));
  hipLaunchKernelGGL(read_sum, dim3(grid), dim3(block), 0, 0, in, n, out);
  CHECK(hipEventRecord(stop, 0));
  CHECK(hipEventSynchronize(stop));
  float again = 0;
  CHECK(hipEventElapsedTime(&again, start, stop));
  std::printf("again: %.6f ms, first %.6f ms\n", again, ms);
  unsigned long long* clocks;
  CHECK(hipMalloc(&clocks, 3 * sizeof(unsigned long long)));
  hipLaunchKernelGGL(clocked, dim3(1), dim3(64), 0, 0, clocks, 1000);
  unsigned long long c[3];
  CHECK(hipMemcpy(c, clocks, sizeof c, hipMemcpyDeviceToHost));
  EXPECT(c[0] > 1000 && c[1] > 0);
  std::printf("clock64: %llu cycles, wall_clock64: %llu ticks for 1000 iterations\n", c[0], c[1]);
  CHECK(hipFree(clocks));
  CHECK(hipFree(in));
  CHECK(hipFree(out));
  return 0;
}

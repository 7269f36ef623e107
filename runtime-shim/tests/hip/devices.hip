// Two emulated GPUs: properties of each, memory on each with hipSetDevice, kernels on each, peer copies.
#include "check.h"
#include <cstring>
#include <vector>

__global__ void fill(int* p, int n, int v) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = v + i;
}

int main() {
  int count = 0;
  CHECK(hipGetDeviceCount(&count));
  EXPECT(count == 2);
  for (int d = 0; d < count; d++) {
    hipDeviceProp_t p;
    CHECK(hipGetDeviceProperties(&p, d));
    std::printf("device %d: %s, %s, %d CUs, %zu MiB, wave %d, max threads/block %d, shared/block %zu\n", d, p.name,
                p.gcnArchName, p.multiProcessorCount, p.totalGlobalMem >> 20, p.warpSize, p.maxThreadsPerBlock,
                p.sharedMemPerBlock);
    EXPECT(p.warpSize == 64);
    EXPECT(p.maxThreadsPerBlock == 1024);
    EXPECT(p.sharedMemPerBlock == 65536);
    EXPECT(std::strncmp(p.gcnArchName, "gfx90a", 6) == 0);
  }
  const int n = 4096;
  int *a, *b;
  CHECK(hipSetDevice(0));
  CHECK(hipMalloc(&a, n * 4));
  hipLaunchKernelGGL(fill, dim3(n / 256), dim3(256), 0, 0, a, n, 100);
  CHECK(hipDeviceSynchronize());
  CHECK(hipSetDevice(1));
  CHECK(hipMalloc(&b, n * 4));
  hipLaunchKernelGGL(fill, dim3(n / 256), dim3(256), 0, 0, b, n, -7);
  CHECK(hipDeviceSynchronize());
  int can = 0;
  CHECK(hipDeviceCanAccessPeer(&can, 1, 0));
  std::vector<int> h(n);
  // device 0's data over device 1's, then read back through device 1
  CHECK(hipMemcpyPeer(b, 1, a, 0, n * 4));
  CHECK(hipMemcpy(h.data(), b, n * 4, hipMemcpyDeviceToHost));
  for (int i = 0; i < n; i++) EXPECT(h[i] == 100 + i);
  CHECK(hipSetDevice(0));
  CHECK(hipMemcpy(h.data(), a, n * 4, hipMemcpyDeviceToHost));
  for (int i = 0; i < n; i++) EXPECT(h[i] == 100 + i);
  std::printf("devices: 2 GPUs, kernels on each, peer copy correct (peer access reported %d)\n", can);
  return 0;
}

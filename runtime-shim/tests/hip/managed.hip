// Managed memory: hipMallocManaged memory written by the host, changed by kernels and read back by the host
// without copies, advice (preferred location, read mostly, accessed by), prefetches to the device and back,
// hipMemRangeGetAttribute, __managed__ variables, and a kernel and the host taking turns on the same pages.
#include "check.h"
#include <vector>

__managed__ int managed_counter;

__global__ void scale_add(float* x, int n, float a, float b) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * a + b;
}

__global__ void count(int n) {
  if (blockIdx.x * blockDim.x + threadIdx.x < n) atomicAdd(&managed_counter, 1);
}

int main() {
  int dev = 0;
  int managed = 0, concurrent = 0;
  CHECK(hipDeviceGetAttribute(&managed, hipDeviceAttributeManagedMemory, dev));
  CHECK(hipDeviceGetAttribute(&concurrent, hipDeviceAttributeConcurrentManagedAccess, dev));
  EXPECT(managed == 1);
  const int n = 1 << 16;
  float* x = nullptr;
  CHECK(hipMallocManaged(&x, n * sizeof(float), hipMemAttachGlobal));
  EXPECT(x != nullptr);
  for (int i = 0; i < n; i++) x[i] = (float)i;
  hipLaunchKernelGGL(scale_add, dim3(n / 256), dim3(256), 0, 0, x, n, 2.0f, 1.0f);
  CHECK(hipDeviceSynchronize());
  for (int i = 0; i < n; i++) EXPECT(x[i] == 2.0f * i + 1.0f);
  // host and device take turns on the same pages
  for (int round = 0; round < 3; round++) {
    for (int i = 0; i < n; i += 7) x[i] += 1.0f;
    hipLaunchKernelGGL(scale_add, dim3(n / 256), dim3(256), 0, 0, x, n, 1.0f, 0.5f);
    CHECK(hipDeviceSynchronize());
  }
  for (int i = 0; i < n; i++) EXPECT(x[i] == 2.0f * i + 1.0f + (i % 7 == 0 ? 3.0f : 0.0f) + 1.5f);
  // advice and prefetches
  CHECK(hipMemAdvise(x, n * sizeof(float), hipMemAdviseSetPreferredLocation, dev));
  CHECK(hipMemAdvise(x, n * sizeof(float), hipMemAdviseSetReadMostly, dev));
  CHECK(hipMemAdvise(x, n * sizeof(float), hipMemAdviseSetAccessedBy, dev));
  int location = -5;
  CHECK(hipMemRangeGetAttribute(&location, sizeof location, hipMemRangeAttributePreferredLocation, x, n * sizeof(float)));
  EXPECT(location == dev);
  int read_mostly = -1;
  CHECK(hipMemRangeGetAttribute(&read_mostly, sizeof read_mostly, hipMemRangeAttributeReadMostly, x, n * sizeof(float)));
  EXPECT(read_mostly == 1);
  CHECK(hipMemAdvise(x, n * sizeof(float), hipMemAdviseUnsetReadMostly, dev));
  // pinned host memory from hipHostMalloc is not managed: its attributes cannot be queried
  void* pinned = nullptr;
  CHECK(hipHostMalloc(&pinned, 4096, 0));
  EXPECT(hipMemRangeGetAttribute(&read_mostly, sizeof read_mostly, hipMemRangeAttributeReadMostly, pinned, 4096) != hipSuccess);
  CHECK(hipHostFree(pinned));
  hipStream_t s;
  CHECK(hipStreamCreate(&s));
  CHECK(hipMemPrefetchAsync(x, n * sizeof(float), dev, s));
  hipLaunchKernelGGL(scale_add, dim3(n / 256), dim3(256), 0, s, x, n, 0.5f, 0.0f);
  CHECK(hipMemPrefetchAsync(x, n * sizeof(float), hipCpuDeviceId, s));
  CHECK(hipStreamSynchronize(s));
  for (int i = 0; i < n; i++) EXPECT(x[i] == (2.0f * i + 1.0f + (i % 7 == 0 ? 3.0f : 0.0f) + 1.5f) * 0.5f);
  // a __managed__ variable
  managed_counter = 5;
  hipLaunchKernelGGL(count, dim3(4), dim3(256), 0, 0, 1000);
  CHECK(hipDeviceSynchronize());
  EXPECT(managed_counter == 1005);
  // hipMemcpy from and to managed memory, and a second allocation freed before the first
  float* y = nullptr;
  CHECK(hipMallocManaged(&y, 4096));
  CHECK(hipMemcpy(y, x, 4096, hipMemcpyDefault));
  EXPECT(y[10] == x[10]);
  CHECK(hipFree(y));
  CHECK(hipStreamDestroy(s));
  CHECK(hipFree(x));
  std::printf("managed: host and kernels share %d floats without copies, advice, prefetches and __managed__ correct (concurrent access %d)\n", n, concurrent);
  return 0;
}

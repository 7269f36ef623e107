// A shared-memory tree reduction per block and device atomics (int and float add, max, CAS loop), checked
// against the CPU.
#include "check.h"
#include <vector>

__global__ void block_sum(const int* in, long long* out, int n) {
  __shared__ int part[256];
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  part[t] = i < n ? in[i] : 0;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (t < s) part[t] += part[t + s];
    __syncthreads();
  }
  if (t == 0) atomicAdd(reinterpret_cast<unsigned long long*>(out), (unsigned long long)(long long)part[0]);
}

__global__ void atomics(const int* in, int n, int* count, int* maxv, float* fsum, unsigned* cas_sum) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  atomicAdd(count, 1);
  atomicMax(maxv, in[i]);
  atomicAdd(fsum, 0.5f);
  unsigned old = *cas_sum, assumed;
  do {
    assumed = old;
    old = atomicCAS(cas_sum, assumed, assumed + (unsigned)(in[i] & 0xff));
  } while (old != assumed);
}

int main() {
  const int n = 50000;
  std::vector<int> h(n);
  long long want = 0;
  int want_max = -1;
  unsigned want_cas = 0;
  for (int i = 0; i < n; i++) {
    h[i] = (i * 2654435761u) % 100003 - 50000;
    want += h[i];
    want_max = h[i] > want_max ? h[i] : want_max;
    want_cas += h[i] & 0xff;
  }
  int* d;
  long long* sum;
  int *count, *maxv;
  float* fsum;
  unsigned* cas_sum;
  CHECK(hipMalloc(&d, n * 4));
  CHECK(hipMalloc(&sum, 8));
  CHECK(hipMalloc(&count, 4));
  CHECK(hipMalloc(&maxv, 4));
  CHECK(hipMalloc(&fsum, 4));
  CHECK(hipMalloc(&cas_sum, 4));
  CHECK(hipMemcpy(d, h.data(), n * 4, hipMemcpyHostToDevice));
  CHECK(hipMemset(sum, 0, 8));
  CHECK(hipMemset(count, 0, 4));
  int minus = -2000000000;
  CHECK(hipMemcpy(maxv, &minus, 4, hipMemcpyHostToDevice));
  CHECK(hipMemset(fsum, 0, 4));
  CHECK(hipMemset(cas_sum, 0, 4));
  hipLaunchKernelGGL(block_sum, dim3((n + 255) / 256), dim3(256), 0, 0, d, sum, n);
  hipLaunchKernelGGL(atomics, dim3((n + 127) / 128), dim3(128), 0, 0, d, n, count, maxv, fsum, cas_sum);
  CHECK(hipDeviceSynchronize());
  long long got;
  int got_count, got_max;
  float got_f;
  unsigned got_cas;
  CHECK(hipMemcpy(&got, sum, 8, hipMemcpyDeviceToHost));
  CHECK(hipMemcpy(&got_count, count, 4, hipMemcpyDeviceToHost));
  CHECK(hipMemcpy(&got_max, maxv, 4, hipMemcpyDeviceToHost));
  CHECK(hipMemcpy(&got_f, fsum, 4, hipMemcpyDeviceToHost));
  CHECK(hipMemcpy(&got_cas, cas_sum, 4, hipMemcpyDeviceToHost));
  EXPECT(got == want);
  EXPECT(got_count == n);
  EXPECT(got_max == want_max);
  EXPECT(got_f == 0.5f * n);  // exact: every partial sum is a multiple of 0.5 below 2^24
  EXPECT(got_cas == want_cas);
  std::printf("reduce: sum %lld, count %d, max %d, float sum %.1f, CAS sum %u all equal to the CPU's\n", got, got_count, got_max, got_f, got_cas);
  return 0;
}

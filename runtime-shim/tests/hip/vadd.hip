// The first HIP program: c = a + b over 100,000 floats, checked on the host, plus the device properties.
#include <hip/hip_runtime.h>
#include <cstdio>
#include <vector>
__global__ void vadd(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
int main() {
  const int n = 100000;
  std::vector<float> a(n), b(n), c(n);
  for (int i = 0; i < n; i++) { a[i] = i * 0.5f; b[i] = 1000.0f - i; }
  float *da, *db, *dc;
  if (hipMalloc(&da, n * 4) != hipSuccess) { printf("hipMalloc failed\n"); return 1; }
  hipMalloc(&db, n * 4); hipMalloc(&dc, n * 4);
  hipMemcpy(da, a.data(), n * 4, hipMemcpyHostToDevice);
  hipMemcpy(db, b.data(), n * 4, hipMemcpyHostToDevice);
  hipLaunchKernelGGL(vadd, dim3((n + 255) / 256), dim3(256), 0, 0, da, db, dc, n);
  hipError_t e = hipMemcpy(c.data(), dc, n * 4, hipMemcpyDeviceToHost);
  if (e != hipSuccess) { printf("error %s\n", hipGetErrorString(e)); return 1; }
  int bad = 0;
  for (int i = 0; i < n; i++) if (c[i] != a[i] + b[i]) bad++;
  hipDeviceProp_t p; hipGetDeviceProperties(&p, 0);
  printf("device %s (%s), %d CUs: %d of %d wrong\n", p.name, p.gcnArchName, p.multiProcessorCount, bad, n);
  return bad != 0;
}

// Device-side printf: the kernel writes through HIP's hostcall buffer, which the host runtime services.
#include "check.h"
__global__ void hello(int base) {
  if (threadIdx.x % 32 == 0) printf("hello from thread %d of block %d: %d\n", (int)threadIdx.x, (int)blockIdx.x, base + (int)threadIdx.x);
}
int main() {
  hipLaunchKernelGGL(hello, dim3(2), dim3(64), 0, 0, 1000);
  CHECK(hipDeviceSynchronize());
  return 0;
}

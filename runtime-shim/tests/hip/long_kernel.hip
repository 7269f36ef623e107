// A long kernel: one wave steps a linear congruential generator N times (argument 1), hundreds of millions of
// instructions when N is in the tens of millions; the result must equal the host's.
#include "check.h"
#include <cstdint>
#include <cstdlib>

__global__ void lcg(uint32_t* out, uint32_t n) {
  uint32_t x = threadIdx.x;
  for (uint32_t i = 0; i < n; i++) x = x * 1664525u + 1013904223u;
  out[threadIdx.x] = x;
}

int main(int argc, char** argv) {
  const uint32_t n = argc > 1 ? (uint32_t)std::strtoul(argv[1], nullptr, 10) : 1000;
  uint32_t* d;
  CHECK(hipMalloc(&d, 64 * 4));
  hipLaunchKernelGGL(lcg, dim3(1), dim3(64), 0, 0, d, n);
  CHECK(hipGetLastError());
  uint32_t h[64];
  CHECK(hipMemcpy(h, d, sizeof h, hipMemcpyDeviceToHost));
  for (uint32_t t = 0; t < 64; t++) {
    uint32_t x = t;
    for (uint32_t i = 0; i < n; i++) x = x * 1664525u + 1013904223u;
    EXPECT(h[t] == x);
  }
  std::printf("long kernel: %u steps in each of 64 lanes correct\n", n);
  return 0;
}

// For the SMI tests: holds device memory while a test watches it with `wavejit smi` and rocm-smi.
// Usage: smi_hold MIB. Allocates MIB MiB on device 0, fills it with a kernel (so the process has a queue and
// busy time), prints "ready <pid>", waits for a line on stdin, frees the memory, prints "freed", waits for
// another line and exits.
#include "check.h"
#include <string>
#include <iostream>
#include <unistd.h>

__global__ void fill(unsigned* p, size_t n, unsigned v) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) p[i] = v + (unsigned)i;
}

int main(int argc, char** argv) {
  size_t mib = argc > 1 ? std::stoul(argv[1]) : 64;
  size_t n = mib << 18;  // 4-byte words in MIB MiB
  unsigned* p = nullptr;
  CHECK(hipMalloc(&p, n * 4));
  hipLaunchKernelGGL(fill, dim3(64), dim3(256), 0, 0, p, n, 7u);
  CHECK(hipGetLastError());
  CHECK(hipDeviceSynchronize());
  unsigned last = 0;
  CHECK(hipMemcpy(&last, p + n - 1, 4, hipMemcpyDeviceToHost));
  EXPECT(last == 7u + (unsigned)(n - 1));
  std::cout << "ready " << getpid() << std::endl;
  std::string line;
  std::getline(std::cin, line);
  CHECK(hipFree(p));
  std::cout << "freed" << std::endl;
  std::getline(std::cin, line);
  return 0;
}

// Which GPUs HIP sees (ROCR_VISIBLE_DEVICES, HIP_VISIBLE_DEVICES): hipGetDeviceCount's answer, each device's
// name and architecture, and whether device 0 can be chosen and the current device read.
#include <hip/hip_runtime.h>
#include <cstdio>

int main() {
  int count = -1;
  hipError_t e = hipGetDeviceCount(&count);
  std::printf("count: %s %d\n", hipGetErrorName(e), e == hipSuccess ? count : 0);
  for (int d = 0; e == hipSuccess && d < count; d++) {
    hipDeviceProp_t p;
    if (hipGetDeviceProperties(&p, d) != hipSuccess) return 1;
    std::printf("device %d: %s, %s\n", d, p.name, p.gcnArchName);
  }
  std::printf("hipSetDevice(0): %s\n", hipGetErrorName(hipSetDevice(0)));
  int device = -1;
  std::printf("hipGetDevice: %s\n", hipGetErrorName(hipGetDevice(&device)));
  return 0;
}

// A kernel that writes through a wild pointer: the emulated GPU reports a memory fault, and the runtime aborts
// the process, as ROCm does on hardware; the host must not crash inside the emulator.
#include "check.h"
__global__ void wild(int* p) { p[threadIdx.x * 1024] = 1; }
int main() {
  hipLaunchKernelGGL(wild, dim3(1), dim3(64), 0, 0, reinterpret_cast<int*>(0x1000));
  hipError_t e = hipDeviceSynchronize();
  std::printf("after the fault: %s\n", hipGetErrorString(e));
  return 0;
}

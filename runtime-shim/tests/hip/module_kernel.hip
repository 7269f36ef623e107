// Compiled alone into a code object (--genco) that module.hip loads at run time.
#include <hip/hip_runtime.h>
__device__ int bias = 5;
extern "C" __global__ void axpb(const int* x, int* y, int a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + bias;
}

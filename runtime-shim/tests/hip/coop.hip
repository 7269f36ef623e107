// Cooperative launches: grid-wide sync (cooperative groups' this_grid().sync(), a global wave sync barrier)
// between the steps of a 1-D diffusion whose blocks read each other's cells, compared with the CPU; blocks
// spinning on flags other blocks set; a grid too large to be resident is refused. With the argument "plain" the same kernel is launched without the
// cooperative launch, which the emulator reports as a fault (grid sync needs every workgroup resident).
#include "check.h"
#include <hip/hip_cooperative_groups.h>
#include <cstring>
#include <vector>

namespace cg = cooperative_groups;

// `steps` Jacobi steps of u' = (u[i-1] + 2u[i] + u[i+1]) / 4 with fixed ends, ping-ponging between a and b
__global__ void diffuse(float* a, float* b, int n, int steps) {
  cg::grid_group grid = cg::this_grid();
  for (int s = 0; s < steps; s++) {
    const float* from = s % 2 ? b : a;
    float* to = s % 2 ? a : b;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
      to[i] = (i == 0 || i == n - 1) ? from[i] : 0.25f * (from[i - 1] + 2.0f * from[i] + from[i + 1]);
    }
    grid.sync();
  }
}

// A hand-off from the last block to the first: block b waits (spinning on a flag, no grid sync) until block
// b + 1 has published its running sum, adds its own values and publishes. Block 0 spins first; only
// workgroups that take turns let the later blocks run.
__global__ void handoff(const int* in, int* sums, int* ready, int per_block) {
  int b = blockIdx.x, last = gridDim.x - 1;
  __shared__ int carry;
  if (threadIdx.x == 0) {
    carry = 0;
    if (b < last) {
      while (atomicAdd(&ready[b + 1], 0) == 0) {
      }
      __threadfence();
      carry = sums[b + 1];
    }
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    int s = carry;
    for (int k = 0; k < per_block; k++) s += in[b * per_block + k];
    sums[b] = s;
    __threadfence();
    atomicExch(&ready[b], 1);
  }
}

int main(int argc, char** argv) {
  const int blocks = 12, threads = 128, n = 5000, steps = 25;
  std::vector<float> u(n);
  for (int i = 0; i < n; i++) u[i] = (i % 97 == 0) ? 100.0f : float(i % 13);
  float *a, *b;
  CHECK(hipMalloc(&a, n * sizeof(float)));
  CHECK(hipMalloc(&b, n * sizeof(float)));
  CHECK(hipMemcpy(a, u.data(), n * sizeof(float), hipMemcpyHostToDevice));
  int nn = n, ss = steps;
  void* args[] = {&a, &b, &nn, &ss};
  if (argc > 1 && std::strcmp(argv[1], "plain") == 0) {
    hipLaunchKernelGGL(diffuse, dim3(blocks), dim3(threads), 0, 0, a, b, n, steps);
    CHECK(hipDeviceSynchronize());
    std::printf("coop: a plain launch of a grid-sync kernel completed\n");
    return 0;
  }
  int coop = 0;
  CHECK(hipDeviceGetAttribute(&coop, hipDeviceAttributeCooperativeLaunch, 0));
  EXPECT(coop == 1);
  CHECK(hipLaunchCooperativeKernel((void*)diffuse, dim3(blocks), dim3(threads), args, 0, 0));
  CHECK(hipDeviceSynchronize());
  std::vector<float> got(n);
  CHECK(hipMemcpy(got.data(), steps % 2 ? b : a, n * sizeof(float), hipMemcpyDeviceToHost));
  std::vector<float> x(u), y(n);
  for (int s = 0; s < steps; s++) {
    for (int i = 0; i < n; i++) y[i] = (i == 0 || i == n - 1) ? x[i] : 0.25f * (x[i - 1] + 2.0f * x[i] + x[i + 1]);
    x.swap(y);
  }
  int wrong = 0;
  for (int i = 0; i < n; i++) wrong += got[i] != x[i];
  EXPECT(wrong == 0);
  // flags set by other workgroups: the waiting ones take turns with the rest
  const int hb = 16, per = 64;
  std::vector<int> in(hb * per);
  for (int i = 0; i < hb * per; i++) in[i] = (i * 31) % 17 - 5;
  int *din, *dsums, *dready;
  CHECK(hipMalloc(&din, in.size() * sizeof(int)));
  CHECK(hipMalloc(&dsums, hb * sizeof(int)));
  CHECK(hipMalloc(&dready, hb * sizeof(int)));
  CHECK(hipMemcpy(din, in.data(), in.size() * sizeof(int), hipMemcpyHostToDevice));
  CHECK(hipMemset(dready, 0, hb * sizeof(int)));
  int pb = per;
  void* hargs[] = {&din, &dsums, &dready, &pb};
  CHECK(hipLaunchCooperativeKernel((void*)handoff, dim3(hb), dim3(64), hargs, 0, 0));
  CHECK(hipDeviceSynchronize());
  std::vector<int> sums(hb);
  CHECK(hipMemcpy(sums.data(), dsums, hb * sizeof(int), hipMemcpyDeviceToHost));
  int run = 0;
  for (int b = hb - 1; b >= 0; b--) {
    for (int k = 0; k < per; k++) run += in[b * per + k];
    EXPECT(sums[b] == run);
  }
  CHECK(hipFree(din));
  CHECK(hipFree(dsums));
  CHECK(hipFree(dready));
  std::printf("coop: a flag hand-off through %d spinning blocks matches the CPU\n", hb);
  // more blocks than can be resident at once: refused before anything runs
  int per_cu = 0, cus = 0;
  CHECK(hipOccupancyMaxActiveBlocksPerMultiprocessor(&per_cu, diffuse, threads, 0));
  CHECK(hipDeviceGetAttribute(&cus, hipDeviceAttributeMultiprocessorCount, 0));
  EXPECT(per_cu > 0);
  hipError_t e = hipLaunchCooperativeKernel((void*)diffuse, dim3(per_cu * cus + 1), dim3(threads), args, 0, 0);
  EXPECT(e == hipErrorCooperativeLaunchTooLarge);
  (void)hipGetLastError();
  CHECK(hipFree(a));
  CHECK(hipFree(b));
  std::printf("coop: %d grid-wide syncs across %d blocks match the CPU; %d blocks refused\n", steps, blocks, per_cu * cus + 1);
  return 0;
}

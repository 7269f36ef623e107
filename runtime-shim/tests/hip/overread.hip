// Accesses past the end of an allocation that stay inside its last page, as GPU libraries make them
// (rocSPARSE's bsrilu0 reads whole 8x8 tiles of a matrix of 3x3 blocks and drops the rest): a GPU maps memory
// by the page, so they do not fault; reads see what is there and writes land there. Under wavejit's memcheck
// mode the first of them is a fault.
#include "check.h"
#include <vector>

// every lane loads two doubles at once and keeps the second only when it belongs to the matrix
__global__ void scale_pairs(const double* in, double* out, int n) {
  int t = threadIdx.x;
  double2 v = reinterpret_cast<const double2*>(in)[t];
  out[2 * t] = 2 * v.x;
  if (2 * t + 1 < n) out[2 * t + 1] = 2 * v.y;
}

// the last pair written whole: for an odd n its second double lies past the end
__global__ void write_last_pair(double* p, int n) { reinterpret_cast<double2*>(p)[n / 2] = make_double2(1.5, 42.0); }

__global__ void read_past_end(const double* p, double* r, int n) { r[0] = p[n]; }

int main() {
  const int n = 35, pairs = (n + 1) / 2;
  std::vector<double> in(n), out(n);
  for (int i = 0; i < n; i++) in[i] = i + 0.25;
  double *din, *dout, *dr;
  CHECK(hipMalloc(&din, n * sizeof(double)));
  CHECK(hipMalloc(&dout, n * sizeof(double)));
  CHECK(hipMalloc(&dr, sizeof(double)));
  CHECK(hipMemcpy(din, in.data(), n * sizeof(double), hipMemcpyHostToDevice));
  hipLaunchKernelGGL(scale_pairs, dim3(1), dim3(pairs), 0, 0, din, dout, n);
  CHECK(hipMemcpy(out.data(), dout, n * sizeof(double), hipMemcpyDeviceToHost));
  for (int i = 0; i < n; i++) EXPECT(out[i] == 2 * in[i]);
  hipLaunchKernelGGL(write_last_pair, dim3(1), dim3(1), 0, 0, din, n);
  hipLaunchKernelGGL(read_past_end, dim3(1), dim3(1), 0, 0, din, dr, n);
  double r = 0;
  CHECK(hipMemcpy(&r, dr, sizeof(double), hipMemcpyDeviceToHost));
  CHECK(hipMemcpy(in.data(), din, n * sizeof(double), hipMemcpyDeviceToHost));
  EXPECT(in[n - 1] == 1.5 && r == 42.0);
  std::printf("overread: %d doubles scaled from %d pairs; the double written past the end reads back %g\n", n, pairs, r);
  return 0;
}

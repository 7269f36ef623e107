// hipMemset/hipMemcpy in every direction (H2D, D2H, D2D, H2H through the runtime), 2-D copies, async copies
// on a stream, pinned host memory a kernel reads and writes directly.
#include "check.h"
#include <vector>

__global__ void scale(const int* in, int* out, int n, int k) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] * k;
}

int main() {
  const int n = 1 << 16;
  std::vector<int> h(n), back(n);
  for (int i = 0; i < n; i++) h[i] = i * 7 - 3;
  int *a, *b;
  CHECK(hipMalloc(&a, n * 4));
  CHECK(hipMalloc(&b, n * 4));
  CHECK(hipMemset(a, 0x5a, n * 4));
  CHECK(hipMemcpy(back.data(), a, n * 4, hipMemcpyDeviceToHost));
  for (int i = 0; i < n; i++) EXPECT(back[i] == 0x5a5a5a5a);
  CHECK(hipMemcpy(a, h.data(), n * 4, hipMemcpyHostToDevice));
  CHECK(hipMemcpy(b, a, n * 4, hipMemcpyDeviceToDevice));
  CHECK(hipMemcpy(back.data(), b, n * 4, hipMemcpyDeviceToHost));
  for (int i = 0; i < n; i++) EXPECT(back[i] == h[i]);
  std::vector<int> h2(n);
  CHECK(hipMemcpy(h2.data(), h.data(), n * 4, hipMemcpyHostToHost));
  for (int i = 0; i < n; i++) EXPECT(h2[i] == h[i]);
  // partial memset in the middle
  CHECK(hipMemsetD32(reinterpret_cast<hipDeviceptr_t>(b + 100), -1, 50));
  CHECK(hipMemcpy(back.data(), b, n * 4, hipMemcpyDeviceToHost));
  for (int i = 0; i < n; i++) EXPECT(back[i] == ((i >= 100 && i < 150) ? -1 : h[i]));

  // 2-D: a 37 x 23 window of a 128-wide host matrix into a pitched device allocation and back
  const int W = 128, H = 64, w = 37, hh = 23;
  std::vector<float> m(W * H), out(W * H, -1.0f);
  for (int i = 0; i < W * H; i++) m[i] = i * 0.25f;
  // (hipMallocPitch asks for image pitch alignment, and images are not emulated: pitch by hand)
  float *d2, *d3;
  const size_t pitch = 256;
  CHECK(hipMalloc(&d2, pitch * hh));
  CHECK(hipMalloc(&d3, pitch * hh));
  CHECK(hipMemcpy2D(d2, pitch, &m[5 * W + 3], W * 4, w * 4, hh, hipMemcpyHostToDevice));
  CHECK(hipMemcpy2D(d3, pitch, d2, pitch, w * 4, hh, hipMemcpyDeviceToDevice));
  CHECK(hipMemcpy2D(&out[2 * W + 1], W * 4, d3, pitch, w * 4, hh, hipMemcpyDeviceToHost));
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) {
      bool in = y >= 2 && y < 2 + hh && x >= 1 && x < 1 + w;
      EXPECT(out[y * W + x] == (in ? m[(y - 2 + 5) * W + (x - 1 + 3)] : -1.0f));
    }

  // async copies and a kernel on one stream, pinned host memory
  hipStream_t s;
  CHECK(hipStreamCreate(&s));
  int *pin_in, *pin_out;
  CHECK(hipHostMalloc(&pin_in, n * 4));
  CHECK(hipHostMalloc(&pin_out, n * 4));
  for (int i = 0; i < n; i++) pin_in[i] = i;
  CHECK(hipMemcpyAsync(a, pin_in, n * 4, hipMemcpyHostToDevice, s));
  hipLaunchKernelGGL(scale, dim3(n / 256), dim3(256), 0, s, a, b, n, 3);
  CHECK(hipMemcpyAsync(pin_out, b, n * 4, hipMemcpyDeviceToHost, s));
  CHECK(hipStreamSynchronize(s));
  for (int i = 0; i < n; i++) EXPECT(pin_out[i] == 3 * i);
  // the kernel reads and writes pinned host memory directly
  hipLaunchKernelGGL(scale, dim3(n / 256), dim3(256), 0, s, pin_in, pin_out, n, -2);
  CHECK(hipStreamSynchronize(s));
  for (int i = 0; i < n; i++) EXPECT(pin_out[i] == -2 * i);
  CHECK(hipHostFree(pin_in));
  CHECK(hipHostFree(pin_out));
  CHECK(hipStreamDestroy(s));
  CHECK(hipFree(d2));
  CHECK(hipFree(d3));
  CHECK(hipFree(a));
  CHECK(hipFree(b));
  std::printf("memcpy: all directions, 2-D, async and pinned copies correct\n");
  return 0;
}

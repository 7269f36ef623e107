// Streams and events: kernels on two streams, an event recorded on one and waited for by the other, and
// hipEventElapsedTime between two events around a kernel (positive, and no longer than the host measured),
// between two events recorded on an idle stream, and around a kernel when the first event is waited for alone
// (HIP stamps some events on the host, with CLOCK_MONOTONIC, and others with the runtime's timestamps).
#include "check.h"
#include <chrono>
#include <vector>

__global__ void spin_add(float* x, int n, int rounds, float v) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float a = x[i];
  for (int r = 0; r < rounds; r++) {
#pragma clang fp contract(off)
    a = a * 0.999f + v;  // two roundings, as on the host
  }
  x[i] = a;
}

__global__ void copy_plus(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] + 1.0f;
}

int main() {
  const int n = 8192;
  float *x, *y;
  CHECK(hipMalloc(&x, n * 4));
  CHECK(hipMalloc(&y, n * 4));
  CHECK(hipMemset(x, 0, n * 4));
  hipStream_t s1, s2;
  CHECK(hipStreamCreate(&s1));
  CHECK(hipStreamCreate(&s2));
  hipEvent_t start, stop, ready;
  CHECK(hipEventCreate(&start));
  CHECK(hipEventCreate(&stop));
  CHECK(hipEventCreate(&ready));
  {
    // two events on an idle null stream, each waited for
    auto h0 = std::chrono::steady_clock::now();
    CHECK(hipEventRecord(start, nullptr));
    CHECK(hipEventSynchronize(start));
    CHECK(hipEventRecord(stop, nullptr));
    CHECK(hipEventSynchronize(stop));
    double idle_host_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - h0).count();
    float idle_ms = -1;
    CHECK(hipEventElapsedTime(&idle_ms, start, stop));
    if (!(idle_ms >= 0.0f && idle_ms <= idle_host_ms + 1.0)) {
      std::fprintf(stderr, "events on an idle stream: %f ms apart, host measured %f ms\n", idle_ms, idle_host_ms);
      return 1;
    }
    // around a kernel, waiting for the first event before the stream (HIP then stamps that one on the host)
    hipEvent_t untimed;
    CHECK(hipEventCreateWithFlags(&untimed, hipEventDisableTiming));
    // a round left running, then one timed
    for (int round = 0; round < 2; round++) {
      CHECK(hipEventRecord(untimed, nullptr));
      CHECK(hipEventRecord(start, nullptr));
      hipLaunchKernelGGL(spin_add, dim3(n / 256), dim3(256), 0, 0, x, n, 200, 0.0f);
      CHECK(hipEventRecord(stop, nullptr));
    }
    CHECK(hipEventSynchronize(start));
    CHECK(hipStreamSynchronize(nullptr));
    float around_ms = -1, back_ms = 1;
    CHECK(hipEventElapsedTime(&around_ms, start, stop));
    CHECK(hipEventElapsedTime(&back_ms, stop, start));
    if (!(around_ms > 0.0f && back_ms == -around_ms)) {
      std::fprintf(stderr, "events around a kernel: %f ms from start to stop, %f ms back\n", around_ms, back_ms);
      return 1;
    }
    CHECK(hipEventDestroy(untimed));
    CHECK(hipMemset(x, 0, n * 4));
  }
  auto t0 = std::chrono::steady_clock::now();
  CHECK(hipEventRecord(start, s1));
  hipLaunchKernelGGL(spin_add, dim3(n / 256), dim3(256), 0, s1, x, n, 200, 1.0f);
  CHECK(hipEventRecord(stop, s1));
  CHECK(hipEventRecord(ready, s1));
  // s2 must see s1's result
  CHECK(hipStreamWaitEvent(s2, ready, 0));
  hipLaunchKernelGGL(copy_plus, dim3(n / 256), dim3(256), 0, s2, x, y, n);
  CHECK(hipStreamSynchronize(s2));
  CHECK(hipEventSynchronize(stop));
  double host_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  float ms = -1;
  CHECK(hipEventElapsedTime(&ms, start, stop));
  EXPECT(hipEventQuery(stop) == hipSuccess);
  std::vector<float> hx(n), hy(n);
  CHECK(hipMemcpy(hx.data(), x, n * 4, hipMemcpyDeviceToHost));
  CHECK(hipMemcpy(hy.data(), y, n * 4, hipMemcpyDeviceToHost));
  float want = 0;
  for (int r = 0; r < 200; r++) {
    volatile float p = want * 0.999f;
    want = p + 1.0f;
  }
  for (int i = 0; i < n; i++) {
    EXPECT(hx[i] == want);
    EXPECT(hy[i] == want + 1.0f);
  }
  EXPECT(ms > 0.0f);
  EXPECT(ms <= host_ms + 1.0);
  std::printf("events: kernel took %.3f ms of %.3f ms host time; cross-stream wait respected\n", ms, host_ms);
  CHECK(hipStreamDestroy(s1));
  CHECK(hipStreamDestroy(s2));
  return 0;
}

// Dispatch overhead: an empty kernel launched and synchronized (the round trip through HIP, the queue and the
// completion signal), and back-to-back asynchronous launches with one synchronize at the end. Prints the mean
// microseconds of each (for `wavejit bench --hip-launch` and the README) and checks that the launches ran, in
// order: a kernel that appends its launch number to a log after the empty launches.
//
//   launch [ROUND_TRIPS [ASYNC_LAUNCHES]]   (default 2000 and 20000)
#include "check.h"
#include <chrono>
#include <cstdlib>

__global__ void empty() {}

// one work-item: log[count] = n, count += 1
__global__ void append(unsigned* log, unsigned* count, unsigned n) {
  unsigned c = *count;
  log[c] = n;
  *count = c + 1;
}

static double now_us() {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

int main(int argc, char** argv) {
  const int trips = argc > 1 ? std::atoi(argv[1]) : 2000;
  const int launches = argc > 2 ? std::atoi(argv[2]) : 20000;
  EXPECT(trips > 0 && launches > 0);
  // warm up: the first launch loads the code object and starts the queue
  for (int i = 0; i < 20; i++) {
    hipLaunchKernelGGL(empty, dim3(1), dim3(1), 0, 0);
    CHECK(hipDeviceSynchronize());
  }
  double t = now_us();
  for (int i = 0; i < trips; i++) {
    hipLaunchKernelGGL(empty, dim3(1), dim3(1), 0, 0);
    CHECK(hipDeviceSynchronize());
  }
  double round_trip = (now_us() - t) / trips;
  t = now_us();
  for (int i = 0; i < launches; i++) hipLaunchKernelGGL(empty, dim3(1), dim3(1), 0, 0);
  CHECK(hipDeviceSynchronize());
  double async = (now_us() - t) / launches;
  CHECK(hipGetLastError());

  // order: 1000 dependent launches, each appending its number
  const unsigned n = 1000;
  unsigned *log, *count;
  CHECK(hipMalloc(&log, n * sizeof(unsigned)));
  CHECK(hipMalloc(&count, sizeof(unsigned)));
  CHECK(hipMemset(count, 0, sizeof(unsigned)));
  for (unsigned i = 0; i < n; i++) hipLaunchKernelGGL(append, dim3(1), dim3(1), 0, 0, log, count, i);
  CHECK(hipDeviceSynchronize());
  unsigned hcount = 0, hlog[n];
  CHECK(hipMemcpy(&hcount, count, sizeof(unsigned), hipMemcpyDeviceToHost));
  CHECK(hipMemcpy(hlog, log, sizeof(hlog), hipMemcpyDeviceToHost));
  EXPECT(hcount == n);
  for (unsigned i = 0; i < n; i++) EXPECT(hlog[i] == i);
  std::printf("launch: %d round trips of launch + synchronize: %.2f us each\n", trips, round_trip);
  std::printf("launch: %d asynchronous launches: %.2f us each\n", launches, async);
  std::printf("launch: %u dependent launches ran in order\n", n);
  CHECK(hipFree(log));
  CHECK(hipFree(count));
  return 0;
}

// Device memory shared between processes with hipIpcGetMemHandle / hipIpcOpenMemHandle: the parent fills a
// buffer and starts a second process (this program with the handle as its argument), whose kernel adds to every
// element of the parent's buffer; the parent then reads the sums. A handle to memory freed since is refused.
#include "check.h"
#include <cstring>
#include <string>
#include <vector>

constexpr int N = 1 << 16;

__global__ void add(int* p, int v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] += v;
}

static std::string hex(const void* p, size_t n) {
  std::string s;
  char b[3];
  for (size_t i = 0; i < n; i++) {
    std::snprintf(b, sizeof b, "%02x", ((const unsigned char*)p)[i]);
    s += b;
  }
  return s;
}

static hipIpcMemHandle_t unhex(const char* text) {
  hipIpcMemHandle_t h;
  EXPECT(std::strlen(text) == 2 * sizeof h);
  for (size_t i = 0; i < sizeof h; i++) std::sscanf(text + 2 * i, "%2hhx", (unsigned char*)&h + i);
  return h;
}

static int child(const char* text, const char* freed) {
  // a handle to memory the parent has freed since: refused, not mapped (by wavejit's runtime; under ROCm's own,
  // HSA_TEST_ROCR=1, the freed buffer's pages stay with HIP's allocator, which ROCm lets a handle reach)
  int* gone = nullptr;
  if (!std::getenv("HSA_TEST_ROCR"))
    EXPECT(hipIpcOpenMemHandle((void**)&gone, unhex(freed), hipIpcMemLazyEnablePeerAccess) != hipSuccess);
  hipIpcMemHandle_t h = unhex(text);
  int* p;
  CHECK(hipIpcOpenMemHandle((void**)&p, h, hipIpcMemLazyEnablePeerAccess));
  // the parent's values are visible here...
  std::vector<int> seen(4);
  CHECK(hipMemcpy(seen.data(), p + N - 4, 4 * sizeof(int), hipMemcpyDeviceToHost));
  for (int i = 0; i < 4; i++) EXPECT(seen[i] == 3 * (N - 4 + i));
  // ...and a kernel here changes them there
  hipLaunchKernelGGL(add, dim3(N / 256), dim3(256), 0, 0, p, 1000, N);
  CHECK(hipDeviceSynchronize());
  CHECK(hipIpcCloseMemHandle(p));
  std::printf("ipc child: opened the parent's buffer, read it and added 1000 to %d elements\n", N);
  return 0;
}

int main(int argc, char** argv) {
  if (argc == 4 && std::string(argv[1]) == "child") return child(argv[2], argv[3]);
  int* d;
  CHECK(hipMalloc(&d, N * sizeof(int)));
  std::vector<int> host(N);
  for (int i = 0; i < N; i++) host[i] = 3 * i;
  CHECK(hipMemcpy(d, host.data(), N * sizeof(int), hipMemcpyHostToDevice));
  hipIpcMemHandle_t h, h2;
  CHECK(hipIpcGetMemHandle(&h, d));
  int* d2;
  CHECK(hipMalloc(&d2, 4096));
  CHECK(hipIpcGetMemHandle(&h2, d2));
  CHECK(hipFree(d2));
  std::string cmd = std::string(argv[0]) + " child " + hex(&h, sizeof h) + " " + hex(&h2, sizeof h2);
  std::fflush(stdout);
  int rc = std::system(cmd.c_str());
  EXPECT(rc == 0);
  CHECK(hipMemcpy(host.data(), d, N * sizeof(int), hipMemcpyDeviceToHost));
  int wrong = 0;
  for (int i = 0; i < N; i++) wrong += host[i] != 3 * i + 1000;
  EXPECT(wrong == 0);
  // the buffer stays usable here after the other process let go of it
  hipLaunchKernelGGL(add, dim3(N / 256), dim3(256), 0, 0, d, 1, N);
  CHECK(hipMemcpy(host.data(), d, N * sizeof(int), hipMemcpyDeviceToHost));
  EXPECT(host[N - 1] == 3 * (N - 1) + 1001);
  CHECK(hipFree(d));
  std::printf("ipc: another process's kernel changed all %d elements of this process's buffer\n", N);
  return 0;
}

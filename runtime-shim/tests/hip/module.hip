// hipModuleLoad of a code object file, hipModuleGetFunction, hipModuleGetGlobal (a __device__ variable
// changed from the host), hipModuleLaunchKernel with packed arguments.
#include "check.h"
#include <vector>

int main(int argc, char** argv) {
  EXPECT(argc == 2);
  hipModule_t m;
  CHECK(hipModuleLoad(&m, argv[1]));
  hipFunction_t f;
  CHECK(hipModuleGetFunction(&f, m, "axpb"));
  hipDeviceptr_t bias;
  size_t bytes;
  CHECK(hipModuleGetGlobal(&bias, &bytes, m, "bias"));
  EXPECT(bytes == 4);
  int b = 0;
  CHECK(hipMemcpyDtoH(&b, bias, 4));
  EXPECT(b == 5);
  b = -9;
  CHECK(hipMemcpyHtoD(bias, &b, 4));
  const int n = 3000;
  std::vector<int> h(n), out(n);
  for (int i = 0; i < n; i++) h[i] = i - 1000;
  int *x, *y;
  CHECK(hipMalloc(&x, n * 4));
  CHECK(hipMalloc(&y, n * 4));
  CHECK(hipMemcpy(x, h.data(), n * 4, hipMemcpyHostToDevice));
  struct {
    const int* x;
    int* y;
    int a;
    int n;
  } args{x, y, 3, n};
  size_t size = sizeof(args);
  void* config[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, &args, HIP_LAUNCH_PARAM_BUFFER_SIZE, &size, HIP_LAUNCH_PARAM_END};
  CHECK(hipModuleLaunchKernel(f, (n + 127) / 128, 1, 1, 128, 1, 1, 0, 0, nullptr, config));
  CHECK(hipMemcpy(out.data(), y, n * 4, hipMemcpyDeviceToHost));
  for (int i = 0; i < n; i++) EXPECT(out[i] == 3 * h[i] - 9);
  CHECK(hipModuleUnload(m));
  std::printf("module: loaded, global updated, kernel launched: %d results correct\n", n);
  return 0;
}

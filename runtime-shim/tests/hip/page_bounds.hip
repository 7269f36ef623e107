// Writes past the end of a small device buffer, as rocPRIM 5.3's merge does to its temporary storage (one
// index per thread of its partition kernel, into an array sized for the partitions): a GPU maps the rest of the
// buffer's last page, so such stores do not fault there. Under `wavejit exec` they run (with a warning), and
// fault with `--memcheck`; a store past the last page faults either way. Argument: `near` (within the page,
// 64 threads into a 2-element array) or `far` (one page further); or `neighbour`: one thread writes 400,000
// bytes past a 400-byte buffer, with a 1 MiB buffer allocated after it (where, without --memcheck, the store may
// land unnoticed, as on a GPU; --memcheck's redzones make it a fault).
#include "check.h"
#include <cstring>
__global__ void partition(unsigned* index, unsigned spacing, unsigned far) {
  unsigned id = blockIdx.x * blockDim.x + threadIdx.x;
  index[id + far] = id * spacing;  // no bound: only the first two entries are wanted
}
int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "neighbour") == 0) {
    unsigned *small = nullptr, *big = nullptr;
    CHECK(hipMalloc(&small, 400));
    CHECK(hipMalloc(&big, 1 << 20));
    hipLaunchKernelGGL(partition, dim3(1), dim3(1), 0, 0, small, 1u, 100000u);
    CHECK(hipDeviceSynchronize());
    std::printf("page bounds: the store 400,000 bytes past a 400-byte buffer ran\n");
    return 0;
  }
  bool far = argc > 1 && std::strcmp(argv[1], "far") == 0;
  unsigned* index = nullptr;
  CHECK(hipMalloc(&index, 2 * sizeof(unsigned)));
  hipLaunchKernelGGL(partition, dim3(1), dim3(64), 0, 0, index, 1024u, far ? 1024u : 0u);
  CHECK(hipDeviceSynchronize());
  unsigned h[2] = {7, 7};
  CHECK(hipMemcpy(h, index, sizeof h, hipMemcpyDeviceToHost));
  EXPECT(h[0] == 0 && h[1] == 1024);
  std::printf("page bounds: %s stores ran, the two wanted entries are %u and %u\n", far ? "far" : "near", h[0], h[1]);
  return 0;
}

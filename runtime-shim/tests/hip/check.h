// Shared by the HIP test programs: fail loudly with the call, its error and the line.
#pragma once
#include <hip/hip_runtime.h>
#include <cstdio>
#include <cstdlib>
#define CHECK(call)                                                                            \
  do {                                                                                         \
    hipError_t e_ = (call);                                                                    \
    if (e_ != hipSuccess) {                                                                    \
      std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, hipGetErrorString(e_)); \
      std::exit(2);                                                                            \
    }                                                                                          \
  } while (0)
#define EXPECT(cond)                                                                           \
  do {                                                                                         \
    if (!(cond)) {                                                                             \
      std::fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond);                 \
      std::exit(1);                                                                            \
    }                                                                                          \
  } while (0)

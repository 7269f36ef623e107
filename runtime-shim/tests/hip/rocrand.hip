// librocrand's real gfx90a kernels through the emulator: 2^20 uniform floats from the default (XORWOW) and the
// Philox generator must lie in (0, 1] with the moments of U(0,1); normal floats must have mean 0, variance 1;
// the same seed must give the same numbers again, a different seed different ones.
#include "check.h"
#include <rocrand/rocrand.h>
#include <cmath>
#include <vector>

#define RCHECK(call)                                                                   \
  do {                                                                                 \
    rocrand_status s_ = (call);                                                        \
    if (s_ != ROCRAND_STATUS_SUCCESS) {                                                \
      std::fprintf(stderr, "%s:%d: %s failed: %d\n", __FILE__, __LINE__, #call, (int)s_); \
      std::exit(2);                                                                    \
    }                                                                                  \
  } while (0)

static std::vector<float> draw(rocrand_rng_type type, unsigned long long seed, bool normal, size_t n) {
  rocrand_generator g;
  RCHECK(rocrand_create_generator(&g, type));
  RCHECK(rocrand_set_seed(g, seed));
  float* d;
  CHECK(hipMalloc(&d, n * 4));
  if (normal) RCHECK(rocrand_generate_normal(g, d, n, 0.0f, 1.0f));
  else RCHECK(rocrand_generate_uniform(g, d, n));
  std::vector<float> h(n);
  CHECK(hipMemcpy(h.data(), d, n * 4, hipMemcpyDeviceToHost));
  CHECK(hipFree(d));
  RCHECK(rocrand_destroy_generator(g));
  return h;
}

static void moments(const std::vector<float>& v, double& mean, double& var) {
  double s = 0, s2 = 0;
  for (float x : v) { s += x; s2 += double(x) * x; }
  mean = s / v.size();
  var = s2 / v.size() - mean * mean;
}

int main() {
  const size_t n = 1 << 20;
  for (auto type : {ROCRAND_RNG_PSEUDO_XORWOW, ROCRAND_RNG_PSEUDO_PHILOX4_32_10}) {
    auto u = draw(type, 1234, false, n);
    for (float x : u) EXPECT(x > 0.0f && x <= 1.0f);
    double mean, var;
    moments(u, mean, var);
    // 2^20 samples: the standard error of the mean is 0.00028, of the variance about 0.00008
    EXPECT(std::fabs(mean - 0.5) < 0.002);
    EXPECT(std::fabs(var - 1.0 / 12) < 0.001);
    auto again = draw(type, 1234, false, n);
    EXPECT(again == u);
    auto other = draw(type, 99, false, n);
    EXPECT(other != u);
    auto z = draw(type, 1234, true, n);
    double zmean, zvar;
    moments(z, zmean, zvar);
    EXPECT(std::fabs(zmean) < 0.006);
    EXPECT(std::fabs(zvar - 1.0) < 0.006);
    std::printf("rocrand %s: uniform mean %.5f var %.5f; normal mean %.5f var %.5f\n",
                type == ROCRAND_RNG_PSEUDO_XORWOW ? "xorwow" : "philox", mean, var, zmean, zvar);
  }
  return 0;
}

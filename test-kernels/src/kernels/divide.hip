// IEEE division (the compiler's v_div_scale / v_rcp / v_div_fmas / v_div_fixup sequence) and f64 math through
// the device libraries, in HIP.
#include <hip/hip_runtime.h>

extern "C" __global__ void divide(const float *a, const float *b, float *q, const double *c, const double *d,
                                  double *r, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        q[i] = a[i] / b[i];
        r[i] = c[i] / d[i];
    }
}

// Eight results per input: sqrt, 1/sqrt, exp, log, sin, floor, fmin/fmax with 1.5, and x*2^k via ldexp.
extern "C" __global__ void f64_math(const double *x, double *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    double v = x[i];
    double *o = out + 8 * i;
    o[0] = sqrt(fabs(v));
    o[1] = rsqrt(fabs(v));
    o[2] = exp(v);
    o[3] = log(fabs(v));
    o[4] = sin(v);
    o[5] = floor(v);
    o[6] = fmin(v, 1.5) + fmax(v, 1.5);
    o[7] = ldexp(v, i % 20 - 10);
}

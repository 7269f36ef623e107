// 16-bit and 8-bit arithmetic: f16 (_Float16) math, i16/u16 integers and bytes, which the compiler turns into
// 16-bit VALU instructions, SDWA operand selects (gfx90a/gfx942) and byte/short memory accesses.
#include <hip/hip_runtime.h>

extern "C" __global__ void half_math(const _Float16 *a, const _Float16 *b, _Float16 *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    _Float16 x = a[i], y = b[i];
    _Float16 *o = out + 6 * i;
    o[0] = x + y;
    o[1] = x * y;
    o[2] = x - y * (_Float16)0.5f;
    o[3] = __builtin_fmaf16(x, y, (_Float16)1.0f);
    o[4] = x > y ? x : y;
    o[5] = (_Float16)((float)x * 0.25f);
}

extern "C" __global__ void short_math(const short *a, const unsigned char *b, short *s, unsigned char *c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    short x = a[i];
    unsigned char y = b[i];
    s[2 * i] = (short)(x * (short)y + (short)7);
    s[2 * i + 1] = (short)((x >> 3) ^ (short)(y << 4));
    unsigned char m = (unsigned char)(y * 3u);
    c[i] = m > 200 ? (unsigned char)(m - 200) : (unsigned char)(m + (unsigned char)x);
}

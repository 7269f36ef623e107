/* The ALU-loop kernel (test-kernels/src/kernels/alu_loop.cl) as native C, for the JIT's comparison with the
 * host: per item, `iters` rounds of x = fma(x, 0.999, y); y = fma(y, 1.0001, -0.5 x) — three lane operations
 * per round, as the GPU code has (v_fmamk, v_mul, v_fmac). Two schedules: "wave" runs 64 items in lockstep
 * (the compiler vectorizes across them, like a wavefront), "item" runs each item's rounds one after another (a
 * dependent chain the compiler cannot vectorize). Build: gcc -O3 -mavx2 -mfma native_alu_loop.c -lm
 * A third run does the mixed loop of alu_mixed.cl (a 32-bit integer multiply-add beside the FMAs), wave schedule.
 * Prints M lane-ops/s on one core for each. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv) {
    unsigned items = 64 * 1024, iters = argc > 1 ? (unsigned)atoi(argv[1]) : 1000;
    float *out = malloc(items * sizeof(float));
    struct timespec t0, t1;
    /* wave schedule */
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (unsigned base = 0; base < items; base += 64) {
        float x[64], y[64];
        for (unsigned l = 0; l < 64; l++) {
            x[l] = (float)(base + l) * 0.001f;
            y[l] = 1.0f;
        }
        for (unsigned k = 0; k < iters; k++)
            for (unsigned l = 0; l < 64; l++) {
                x[l] = fmaf(x[l], 0.999f, y[l]);
                y[l] = fmaf(y[l], 1.0001f, -0.5f * x[l]);
            }
        for (unsigned l = 0; l < 64; l++) out[base + l] = x[l] + y[l];
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
    double ops = 3.0 * items * (double)iters;
    float check = 0;
    for (unsigned i = 0; i < items; i++) check += out[i];
    printf("native C, wave schedule (AVX2):  %u items x %u rounds in %.3f s: %6.0f M lane-ops/s (checksum %g)\n", items, iters, secs, ops / secs / 1e6, check);
    /* item schedule */
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (unsigned i = 0; i < items; i++) {
        float x = (float)i * 0.001f, y = 1.0f;
        for (unsigned k = 0; k < iters; k++) {
            x = fmaf(x, 0.999f, y);
            y = fmaf(y, 1.0001f, -0.5f * x);
        }
        out[i] = x + y;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    secs = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
    float check2 = 0;
    for (unsigned i = 0; i < items; i++) check2 += out[i];
    printf("native C, item schedule (scalar): %u items x %u rounds in %.3f s: %6.0f M lane-ops/s (checksum %g)\n", items, iters, secs, ops / secs / 1e6, check2);
    /* the mixed loop (alu_mixed.cl), wave schedule: five lane operations per round (two FMAs, a multiply, a
     * 32-bit integer multiply and add) */
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (unsigned base = 0; base < items; base += 64) {
        float x[64], y[64];
        unsigned h[64];
        for (unsigned l = 0; l < 64; l++) {
            x[l] = (float)(base + l) * 0.001f;
            y[l] = 1.0f;
            h[l] = base + l;
        }
        for (unsigned k = 0; k < iters; k++)
            for (unsigned l = 0; l < 64; l++) {
                x[l] = fmaf(x[l], 0.999f, y[l]);
                h[l] = h[l] * 1664525u + 1013904223u;
                y[l] = fmaf(y[l], 1.0001f, -0.5f * x[l]);
            }
        for (unsigned l = 0; l < 64; l++) out[base + l] = x[l] + y[l] + (float)(h[l] >> 16);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    secs = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
    float check3 = 0;
    for (unsigned i = 0; i < items; i++) check3 += out[i];
    printf("native C, mixed loop, wave schedule (AVX2): %u items x %u rounds in %.3f s: %6.0f M lane-ops/s (checksum %g)\n", items, iters, secs,
           5.0 * items * (double)iters / secs / 1e6, check3);
    return check != check2;
}

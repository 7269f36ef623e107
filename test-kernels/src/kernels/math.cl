// needs: device-libs
// f32 math through the ROCm device libraries (OCML): sin, exp, log, sqrt, pow, one work-item per input.
__kernel void math(__global const float *x, __global float *out) {
    size_t i = get_global_id(0);
    float v = x[i];
    out[5 * i + 0] = sin(v);
    out[5 * i + 1] = exp(v);
    out[5 * i + 2] = log(fabs(v) + 1.0f);
    out[5 * i + 3] = sqrt(fabs(v));
    out[5 * i + 4] = pow(fabs(v) + 0.5f, 1.7f);
}

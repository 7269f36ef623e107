// Buffer instructions through resources the kernel builds (raw and structured), with the hardware's
// out-of-range rules: loads past num_records give 0, stores there are dropped.
#include <hip/hip_runtime.h>

// out[i] = 2 * in[i] for i < n_in (0 beyond), stored only where i < n_out; bytes[i] = low byte of in[i] + 1
// through a byte load and store.
extern "C" __global__ void buffer_ops(const float *in, float *out, unsigned char *bytes, int n_in, int n_out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    __amdgpu_buffer_rsrc_t src = __builtin_amdgcn_make_buffer_rsrc((void *)in, 0, n_in * 4, 0x00027000);
    __amdgpu_buffer_rsrc_t dst = __builtin_amdgcn_make_buffer_rsrc((void *)out, 0, n_out * 4, 0x00027000);
    __amdgpu_buffer_rsrc_t byt = __builtin_amdgcn_make_buffer_rsrc((void *)bytes, 0, n_out, 0x00027000);
    float v = __builtin_bit_cast(float, __builtin_amdgcn_raw_buffer_load_b32(src, i * 4, 0, 0));
    __builtin_amdgcn_raw_buffer_store_b32(__builtin_bit_cast(unsigned, v * 2.0f), dst, i * 4, 0, 0);
    unsigned char c = __builtin_amdgcn_raw_buffer_load_b8(src, i * 4, 0, 0);
    __builtin_amdgcn_raw_buffer_store_b8((unsigned char)(c + 1), byt, i, 0, 0);
}

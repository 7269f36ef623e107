// Kernels for hsa_test.c (OpenCL C without device libraries: no hidden arguments needed; blocks of 64).
__kernel void add_one(__global int* p) {
  int i = __builtin_amdgcn_workgroup_id_x() * 64 + __builtin_amdgcn_workitem_id_x();
  p[i] += 1;
}
__kernel void wild(__global int* p) { p[__builtin_amdgcn_workitem_id_x() * 4096] = 7; }
__kernel void empty(void) {}
// 0xbfa00000 is no instruction on gfx90a or gfx942
__kernel void illegal(__global int* p) { __asm__ volatile(".long 0xbfa00000"); p[0] = 1; }
__kernel void trap(__global int* p) { __builtin_trap(); }
// Image instructions through inline assembly (no device library here): each of 64 lanes takes texel
// (lane % 8, lane / 8) of an 8x4 image; lanes past the image load zeros and their stores are dropped.
typedef uint uint2v __attribute__((ext_vector_type(2)));
typedef uint uint4v __attribute__((ext_vector_type(4)));
typedef uint uint8v __attribute__((ext_vector_type(8)));
typedef float float2v __attribute__((ext_vector_type(2)));
typedef float float4v __attribute__((ext_vector_type(4)));
// handles[0], [1]: source and destination image objects; handles[2]: a sampler; handles[3]: float4 results
__kernel void image_half(__global const ulong* handles) {
  uint lane = __builtin_amdgcn_workitem_id_x();
  uint2v at = (uint2v)(lane % 8, lane / 8);
  uint8v src = *(__constant uint8v*)handles[0], dst = *(__constant uint8v*)handles[1];
  float4v v;
  __asm__ volatile("image_load %0, %1, %2 dmask:0xf unorm\n s_waitcnt vmcnt(0)" : "=v"(v) : "v"(at), "s"(src));
  __global float4v* out = (__global float4v*)handles[3];
  out[lane] = v;
  v = v * 0.5f;
  __asm__ volatile("image_store %0, %1, %2 dmask:0xf unorm\n s_waitcnt vmcnt(0)" : : "v"(v), "v"(at), "s"(dst) : "memory");
}
// samples the source halfway between texel (x, y) and (x + 1, y), normalized coordinates
__kernel void image_sample_between(__global const ulong* handles) {
  uint lane = __builtin_amdgcn_workitem_id_x();
  float2v uv = (float2v)(((lane % 8) + 1.0f) / 8.0f, ((lane / 8) + 0.5f) / 4.0f);
  uint8v src = *(__constant uint8v*)handles[0];
  uint4v s = *(__constant uint4v*)handles[2];
  float4v v;
  __asm__ volatile("image_sample %0, %1, %2, %3 dmask:0xf\n s_waitcnt vmcnt(0)" : "=v"(v) : "v"(uv), "s"(src), "s"(s));
  ((__global float4v*)handles[3])[lane] = v;
}

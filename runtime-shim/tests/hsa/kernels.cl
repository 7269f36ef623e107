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

// Kernels that fail: for fault.c.
// A store 4 KiB past the start of the buffer it is given (a 4-byte one): a page past its end.
kernel void past_end(global int* p) { p[1024 + __builtin_amdgcn_workitem_id_x()] = 1; }
// s_trap: a queue error that is not a memory fault.
kernel void trap(global int* p) {
  (void)p;
  __builtin_trap();
}

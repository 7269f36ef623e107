// A kernel reading a variable its code object does not define (linked with -z undefs: the GOT entry gets an
// R_AMDGPU_ABS64 relocation against the undefined symbol); the application defines it with
// hsa_executable_agent_global_variable_define before loading.
extern global int ext_value __attribute__((visibility("default")));
__kernel void read_ext(__global int* out) { out[__builtin_amdgcn_workitem_id_x()] = ext_value + 1; }

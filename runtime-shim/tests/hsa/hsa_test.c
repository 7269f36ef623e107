// Our own HSA tests against Debian's hsa.h, run through `wavejit exec`: agents, pools, signals, code objects,
// kernel dispatch, barrier-AND/OR packets, async copies, a kernel fault reaching the queue's error callback,
// many host threads on many queues, API misuse, the loader extension, images and samplers, SVM attributes,
// interop buffers, the pre-1.1 code object API, and the dispatch round-trip latency.
// Usage: hsa_test KERNELS.co EXTERNAL.co
#define _GNU_SOURCE
#include <dlfcn.h>
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <hsa/hsa_ext_image.h>
#include <math.h>
#include <hsa/hsa_ven_amd_loader.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static int failures;
// HSA_TEST_ROCR=1: the program runs on ROCm's own runtime (`wavejit exec --driver kfd`), which dereferences
// invalid handles rather than reject them: the checks of API misuse with such handles are left out.
static int rocr;
#define EXPECT(c) do { if (!(c)) { fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #c); failures++; } } while (0)
#define OK(call) do { hsa_status_t s_ = (call); if (s_ != HSA_STATUS_SUCCESS) { const char* t_ = ""; hsa_status_string(s_, &t_); \
  fprintf(stderr, "%s:%d: %s -> 0x%x %s\n", __FILE__, __LINE__, #call, s_, t_); exit(2); } } while (0)

static hsa_agent_t cpu, gpu;
static int n_cpu, n_gpu;
static hsa_amd_memory_pool_t kernarg_pool, device_pool, host_pool;
static int have_kernarg, have_device, have_host;

static uint64_t mono_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static hsa_status_t find_pool(hsa_amd_memory_pool_t pool, void* is_gpu) {
  hsa_amd_segment_t seg;
  uint32_t flags;
  OK(hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_SEGMENT, &seg));
  if (seg != HSA_AMD_SEGMENT_GLOBAL) return HSA_STATUS_SUCCESS;
  OK(hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS, &flags));
  if (is_gpu && (flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED)) { device_pool = pool; have_device = 1; }
  if (!is_gpu && (flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT)) { kernarg_pool = pool; have_kernarg = 1; }
  if (!is_gpu && (flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED) && !(flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT)) { host_pool = pool; have_host = 1; }
  return HSA_STATUS_SUCCESS;
}

static hsa_status_t find_agent(hsa_agent_t a, void* data) {
  (void)data;
  hsa_device_type_t t;
  OK(hsa_agent_get_info(a, HSA_AGENT_INFO_DEVICE, &t));
  if (t == HSA_DEVICE_TYPE_CPU) { if (!n_cpu++) cpu = a; OK(hsa_amd_agent_iterate_memory_pools(a, find_pool, NULL)); }
  if (t == HSA_DEVICE_TYPE_GPU) { if (!n_gpu++) { gpu = a; OK(hsa_amd_agent_iterate_memory_pools(a, find_pool, (void*)1)); } }
  return HSA_STATUS_SUCCESS;
}

typedef struct { uint64_t object; uint32_t kernarg_size, group, private_size; } kernel_t;
static hsa_executable_t exe;

static hsa_status_t alloc_serialized(size_t size, hsa_callback_data_t data, void** address) {
  (void)data;
  *address = malloc(size);
  return *address ? HSA_STATUS_SUCCESS : HSA_STATUS_ERROR_OUT_OF_RESOURCES;
}

static hsa_status_t count_code_symbol(hsa_code_object_t co, hsa_code_symbol_t sym, void* data) {
  (void)co;
  hsa_symbol_kind_t kind;
  if (hsa_code_symbol_get_info(sym, HSA_CODE_SYMBOL_INFO_TYPE, &kind) == HSA_STATUS_SUCCESS && kind == HSA_SYMBOL_KIND_KERNEL) ++*(int*)data;
  return HSA_STATUS_SUCCESS;
}

static kernel_t kernel(const char* name) {
  hsa_executable_symbol_t sym;
  OK(hsa_executable_get_symbol_by_name(exe, name, &gpu, &sym));
  kernel_t k;
  OK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT, &k.object));
  OK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE, &k.kernarg_size));
  OK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_GROUP_SEGMENT_SIZE, &k.group));
  OK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_PRIVATE_SEGMENT_SIZE, &k.private_size));
  return k;
}

// Writes a packet's body, then publishes it by storing the header, and rings the doorbell.
static uint64_t submit(hsa_queue_t* q, const void* body, uint16_t header, uint16_t setup) {
  uint64_t index = hsa_queue_add_write_index_screlease(q, 1);
  while (index - hsa_queue_load_read_index_scacquire(q) >= q->size) {}
  uint8_t* slot = (uint8_t*)q->base_address + (index % q->size) * 64;
  memcpy(slot + 4, (const uint8_t*)body + 4, 60);
  __atomic_store_n((uint32_t*)slot, header | ((uint32_t)setup << 16), __ATOMIC_RELEASE);
  hsa_signal_store_screlease(q->doorbell_signal, index);
  return index;
}

static const uint16_t DISPATCH_HEADER = (HSA_PACKET_TYPE_KERNEL_DISPATCH << HSA_PACKET_HEADER_TYPE) | (1 << HSA_PACKET_HEADER_BARRIER) |
    (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_ACQUIRE_FENCE_SCOPE) | (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_RELEASE_FENCE_SCOPE);

static void dispatch(hsa_queue_t* q, kernel_t k, void* arg, uint32_t items, hsa_signal_t done) {
  void* kernarg = NULL;
  if (k.kernarg_size) {
    OK(hsa_amd_memory_pool_allocate(kernarg_pool, k.kernarg_size, 0, &kernarg));
    // system memory from a pool is the CPU's until the program lets a GPU reach it (ROCm's rule)
    OK(hsa_amd_agents_allow_access(1, &gpu, NULL, kernarg));
    memset(kernarg, 0, k.kernarg_size);
    if (arg) memcpy(kernarg, &arg, sizeof arg);
  }
  hsa_kernel_dispatch_packet_t p = {0};
  p.workgroup_size_x = 64; p.workgroup_size_y = 1; p.workgroup_size_z = 1;
  p.grid_size_x = items; p.grid_size_y = 1; p.grid_size_z = 1;
  p.kernel_object = k.object;
  p.kernarg_address = kernarg;
  p.group_segment_size = k.group;
  p.private_segment_size = k.private_size;
  p.completion_signal = done;
  submit(q, &p, DISPATCH_HEADER, 1);
}

// Dispatches `k` once over `items` work-items on a queue of its own and waits for it.
static void run_once(kernel_t k, void* arg, uint32_t items) {
  hsa_queue_t* q;
  OK(hsa_queue_create(gpu, 64, HSA_QUEUE_TYPE_MULTI, NULL, NULL, 0, 0, &q));
  hsa_signal_t done;
  OK(hsa_signal_create(1, 0, NULL, &done));
  dispatch(q, k, arg, items, done);
  EXPECT(hsa_signal_wait_scacquire(done, HSA_SIGNAL_CONDITION_EQ, 0, UINT64_MAX, HSA_WAIT_STATE_BLOCKED) == 0);
  OK(hsa_queue_destroy(q));
  OK(hsa_signal_destroy(done));
}

static void barrier(hsa_queue_t* q, int and_kind, hsa_signal_t* deps, int n, hsa_signal_t done) {
  hsa_barrier_and_packet_t p = {0};
  for (int i = 0; i < n; i++) p.dep_signal[i] = deps[i];
  p.completion_signal = done;
  uint16_t type = and_kind ? HSA_PACKET_TYPE_BARRIER_AND : HSA_PACKET_TYPE_BARRIER_OR;
  submit(q, &p, (type << HSA_PACKET_HEADER_TYPE) | (1 << HSA_PACKET_HEADER_BARRIER), 0);
}

static atomic_int handler_calls;
static bool on_signal(hsa_signal_value_t v, void* arg) {
  (void)arg;
  if (v == 42) atomic_fetch_add(&handler_calls, 1);
  return false;
}

static atomic_int freed_calls;
static void on_free(void* ptr, void* data) {
  if (ptr == data) atomic_fetch_add(&freed_calls, 1);
}

static hsa_status_t first_region(hsa_region_t r, void* out) {
  *(hsa_region_t*)out = r;
  return HSA_STATUS_INFO_BREAK;
}

static atomic_uint error_status;
static atomic_uint_fast64_t fault_address;
// A GPU memory fault is fatal unless a system event handler takes it (as on ROCm).
static hsa_status_t on_memory_fault(const hsa_amd_event_t* e, void* data) {
  (void)data;
  if (e->event_type != HSA_AMD_GPU_MEMORY_FAULT_EVENT || e->memory_fault.agent.handle != gpu.handle) return HSA_STATUS_ERROR;
  atomic_store(&fault_address, e->memory_fault.virtual_address);
  return HSA_STATUS_SUCCESS;
}

static void on_queue_error(hsa_status_t s, hsa_queue_t* q, void* data) {
  (void)q; (void)data;
  atomic_store(&error_status, s);
}

typedef struct { kernel_t k; int* buf; int rounds; int ok; } worker_t;
static void* worker(void* arg) {
  worker_t* w = arg;
  hsa_queue_t* q;
  OK(hsa_queue_create(gpu, 256, HSA_QUEUE_TYPE_MULTI, NULL, NULL, 0, 0, &q));
  for (int r = 0; r < w->rounds; r++) {
    hsa_signal_t done;
    OK(hsa_signal_create(1, 0, NULL, &done));
    dispatch(q, w->k, w->buf, 64 * 4, done);
    if (hsa_signal_wait_scacquire(done, HSA_SIGNAL_CONDITION_EQ, 0, UINT64_MAX, HSA_WAIT_STATE_BLOCKED) != 0) return NULL;
    OK(hsa_signal_destroy(done));
  }
  OK(hsa_queue_destroy(q));
  w->ok = 1;
  return NULL;
}

// The second process of the signal IPC test: attaches the parent's signal, checks the value the parent set
// and sets it to 0, which the parent is waiting for.
static int ipc_signal_child(const char* text) {
  hsa_amd_ipc_signal_t h;
  if (strlen(text) != 2 * sizeof h) return 3;
  for (size_t i = 0; i < sizeof h; i++) sscanf(text + 2 * i, "%2hhx", (unsigned char*)&h + i);
  OK(hsa_init());
  hsa_signal_t s;
  OK(hsa_amd_ipc_signal_attach(&h, &s));
  // the parent waits for 0: a wrong value seen here leaves it waiting (and failing) instead
  hsa_signal_value_t seen = hsa_signal_load_scacquire(s);
  hsa_signal_store_screlease(s, seen == 5 ? 0 : -1);
  OK(hsa_signal_destroy(s));
  OK(hsa_shut_down());
  return failures ? 1 : 0;
}

int main(int argc, char** argv) {
  if (argc == 3 && strcmp(argv[1], "ipc-signal-child") == 0) return ipc_signal_child(argv[2]);
  if (argc != 3) { fprintf(stderr, "usage: hsa_test KERNELS.co EXTERNAL.co\n"); return 2; }
  rocr = getenv("HSA_TEST_ROCR") && strcmp(getenv("HSA_TEST_ROCR"), "1") == 0;
  // misuse before init
  if (!rocr) EXPECT(hsa_iterate_agents(find_agent, NULL) == HSA_STATUS_ERROR_NOT_INITIALIZED);
  OK(hsa_init());
  // which library is the HSA runtime: the one whose hsa_init the dynamic linker binds
  Dl_info where;
  void* init = dlsym(RTLD_DEFAULT, "hsa_init");
  printf("runtime: %s\n", init && dladdr(init, &where) ? where.dli_fname : "unknown");
  OK(hsa_iterate_agents(find_agent, NULL));
  EXPECT(n_cpu == 1 && n_gpu >= 1);
  EXPECT(have_kernarg && have_device && have_host);
  char name[64];
  uint32_t wave, cus;
  OK(hsa_agent_get_info(gpu, HSA_AGENT_INFO_NAME, name));
  OK(hsa_agent_get_info(gpu, HSA_AGENT_INFO_WAVEFRONT_SIZE, &wave));
  OK(hsa_agent_get_info(gpu, (hsa_agent_info_t)HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT, &cus));
  EXPECT(wave == 64 && cus > 0 && strncmp(name, "gfx9", 4) == 0);
  printf("agents: 1 CPU, %d GPU(s); first GPU %s with %u CUs\n", n_gpu, name, cus);

  // API misuse gets error statuses, not crashes
  hsa_agent_t bogus = {12345};
  if (!rocr) {
  EXPECT(hsa_agent_get_info(bogus, HSA_AGENT_INFO_NAME, name) == HSA_STATUS_ERROR_INVALID_AGENT);
  hsa_signal_t bad_signal = {8};
  EXPECT(hsa_signal_destroy(bad_signal) == HSA_STATUS_ERROR_INVALID_SIGNAL);
  EXPECT(hsa_agent_get_info(gpu, HSA_AGENT_INFO_NAME, NULL) == HSA_STATUS_ERROR_INVALID_ARGUMENT);
  hsa_queue_t* badq;
  EXPECT(hsa_queue_create(gpu, 3, HSA_QUEUE_TYPE_MULTI, NULL, NULL, 0, 0, &badq) != HSA_STATUS_SUCCESS);
  EXPECT(hsa_queue_create(cpu, 64, HSA_QUEUE_TYPE_MULTI, NULL, NULL, 0, 0, &badq) == HSA_STATUS_ERROR_INVALID_AGENT);
  EXPECT(hsa_amd_memory_pool_free((void*)0x1234) == HSA_STATUS_ERROR_INVALID_ALLOCATION);
  EXPECT(hsa_ext_image_create(gpu, NULL, NULL, 0, NULL) != HSA_STATUS_SUCCESS);
  hsa_signal_group_t bogus_group = {99};
  EXPECT(hsa_signal_group_destroy(bogus_group) == HSA_STATUS_ERROR_INVALID_SIGNAL_GROUP);
  EXPECT(hsa_queue_load_read_index_scacquire((hsa_queue_t*)&bogus) == 0);
  EXPECT(hsa_executable_freeze((hsa_executable_t){77}, NULL) == HSA_STATUS_ERROR_INVALID_EXECUTABLE);
  }
  hsa_code_object_reader_t junk_reader;
  OK(hsa_code_object_reader_create_from_memory("not an ELF file", 15, &junk_reader));
  hsa_executable_t junk_exe;
  OK(hsa_executable_create_alt(HSA_PROFILE_FULL, HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT, NULL, &junk_exe));
  EXPECT(hsa_executable_load_agent_code_object(junk_exe, gpu, junk_reader, NULL, NULL) == HSA_STATUS_ERROR_INVALID_CODE_OBJECT);
  OK(hsa_executable_destroy(junk_exe));
  OK(hsa_code_object_reader_destroy(junk_reader));
  const char* text = NULL;
  OK(hsa_status_string(HSA_STATUS_ERROR_INVALID_SIGNAL, &text));
  EXPECT(text && strstr(text, "signal"));

  // signals
  hsa_signal_t s;
  OK(hsa_signal_create(10, 0, NULL, &s));
  hsa_signal_add_relaxed(s, 5);
  EXPECT(hsa_signal_load_relaxed(s) == 15);
  hsa_signal_subtract_screlease(s, 3);
  hsa_signal_and_acq_rel(s, 0xE);
  hsa_signal_or_release(s, 0x100);
  hsa_signal_xor_scacquire(s, 0x3);
  EXPECT(hsa_signal_load_scacquire(s) == ((((12 & 0xE) | 0x100)) ^ 0x3));
  EXPECT(hsa_signal_exchange_relaxed(s, 7) == ((((12 & 0xE) | 0x100)) ^ 0x3));
  EXPECT(hsa_signal_cas_scacq_screl(s, 7, 9) == 7 && hsa_signal_load_relaxed(s) == 9);
  EXPECT(hsa_signal_cas_relaxed(s, 1, 2) == 9 && hsa_signal_load_relaxed(s) == 9);
  EXPECT(hsa_signal_wait_scacquire(s, HSA_SIGNAL_CONDITION_GTE, 9, UINT64_MAX, HSA_WAIT_STATE_BLOCKED) == 9);
  double t0 = now_ms();
  EXPECT(hsa_signal_wait_relaxed(s, HSA_SIGNAL_CONDITION_EQ, 0, 20 * 1000000ull, HSA_WAIT_STATE_BLOCKED) == 9);
  double waited = now_ms() - t0;
  EXPECT(waited >= 19.0 && waited < 2000.0);
  OK(hsa_amd_signal_async_handler(s, HSA_SIGNAL_CONDITION_EQ, 42, on_signal, NULL));
  hsa_signal_store_screlease(s, 42);
  for (int i = 0; i < 2000 && atomic_load(&handler_calls) == 0; i++) { struct timespec d = {0, 1000000}; nanosleep(&d, NULL); }
  EXPECT(atomic_load(&handler_calls) == 1);
  hsa_signal_t group_members[2];
  OK(hsa_signal_create(1, 0, NULL, &group_members[0]));
  OK(hsa_signal_create(0, 0, NULL, &group_members[1]));
  hsa_signal_group_t group;
  OK(hsa_signal_group_create(2, group_members, 0, NULL, &group));
  hsa_signal_condition_t conds[2] = {HSA_SIGNAL_CONDITION_EQ, HSA_SIGNAL_CONDITION_EQ};
  hsa_signal_value_t zeros[2] = {0, 0}, got_value = -1;
  hsa_signal_t got_signal;
  OK(hsa_signal_group_wait_any_scacquire(group, conds, zeros, HSA_WAIT_STATE_BLOCKED, &got_signal, &got_value));
  EXPECT(got_signal.handle == group_members[1].handle && got_value == 0);
  OK(hsa_signal_group_destroy(group));
  printf("signals: every operation, timed wait (%.1f ms for 20), async handler, group wait\n", waited);

  // code object and executable
  FILE* f = fopen(argv[1], "rb");
  if (!f) { perror(argv[1]); return 2; }
  static char image[1 << 20];
  size_t bytes = fread(image, 1, sizeof image, f);
  fclose(f);
  hsa_code_object_reader_t reader;
  OK(hsa_code_object_reader_create_from_memory(image, bytes, &reader));
  OK(hsa_executable_create_alt(HSA_PROFILE_FULL, HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT, NULL, &exe));
  OK(hsa_executable_load_agent_code_object(exe, gpu, reader, NULL, NULL));
  OK(hsa_executable_freeze(exe, NULL));
  hsa_executable_symbol_t missing;
  EXPECT(hsa_executable_get_symbol_by_name(exe, "no_such_kernel.kd", &gpu, &missing) == HSA_STATUS_ERROR_INVALID_SYMBOL_NAME);
  kernel_t add_one = kernel("add_one.kd"), wild = kernel("wild.kd"), empty = kernel("empty.kd");
  // the same code object through a file descriptor, into a second executable
  FILE* again = fopen(argv[1], "rb");
  hsa_code_object_reader_t file_reader;
  OK(hsa_code_object_reader_create_from_file(fileno(again), &file_reader));
  hsa_executable_t exe2;
  OK(hsa_executable_create_alt(HSA_PROFILE_FULL, HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT, NULL, &exe2));
  OK(hsa_executable_load_agent_code_object(exe2, gpu, file_reader, NULL, NULL));
  OK(hsa_executable_freeze(exe2, NULL));
  hsa_executable_symbol_t sym2;
  OK(hsa_executable_get_symbol_by_name(exe2, "add_one.kd", &gpu, &sym2));
  uint64_t object2;
  OK(hsa_executable_symbol_get_info(sym2, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT, &object2));
  EXPECT(object2 != add_one.object);
  OK(hsa_executable_destroy(exe2));
  OK(hsa_code_object_reader_destroy(file_reader));
  fclose(again);

  // the AMD loader extension: the kernel object's host address
  hsa_ven_amd_loader_1_00_pfn_t loader;
  OK(hsa_system_get_major_extension_table(HSA_EXTENSION_AMD_LOADER, 1, sizeof loader, &loader));
  const void* host_addr = NULL;
  OK(loader.hsa_ven_amd_loader_query_host_address((const void*)add_one.object, &host_addr));
  EXPECT(host_addr != NULL);
  hsa_executable_t owner;
  OK(loader.hsa_ven_amd_loader_query_executable((const void*)add_one.object, &owner));
  EXPECT(owner.handle == exe.handle);

  // dispatch, with a completion signal and profiling timestamps
  hsa_queue_t* q;
  OK(hsa_queue_create(gpu, 1024, HSA_QUEUE_TYPE_MULTI, NULL, NULL, 0, 0, &q));
  OK(hsa_amd_profiling_set_profiler_enabled(q, 1));
  const int n = 64 * 500;
  int* dev;
  OK(hsa_amd_memory_pool_allocate(device_pool, n * 4, 0, (void**)&dev));
  int* host;
  OK(hsa_amd_memory_pool_allocate(host_pool, n * 4, 0, (void**)&host));
  OK(hsa_amd_agents_allow_access(1, &gpu, NULL, host));
  for (int i = 0; i < n; i++) host[i] = i * 3;
  OK(hsa_memory_copy(dev, host, n * 4));
  hsa_signal_t done;
  OK(hsa_signal_create(1, 0, NULL, &done));
  // the timestamps count CLOCK_MONOTONIC nanoseconds, as HIP assumes when it mixes them with its own
  uint64_t freq = 0, sys0 = 0, sys1 = 0;
  OK(hsa_system_get_info(HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY, &freq));
  EXPECT(freq == 1000000000ull);
  uint64_t mono0 = mono_ns();
  OK(hsa_system_get_info(HSA_SYSTEM_INFO_TIMESTAMP, &sys0));
  dispatch(q, add_one, dev, n, done);
  EXPECT(hsa_signal_wait_scacquire(done, HSA_SIGNAL_CONDITION_EQ, 0, UINT64_MAX, HSA_WAIT_STATE_BLOCKED) == 0);
  OK(hsa_system_get_info(HSA_SYSTEM_INFO_TIMESTAMP, &sys1));
  uint64_t mono1 = mono_ns();
  hsa_amd_profiling_dispatch_time_t when;
  OK(hsa_amd_profiling_get_dispatch_time(gpu, done, &when));
  EXPECT(when.end > when.start);
  EXPECT(mono0 <= sys0 && sys0 <= when.start && when.end <= sys1 && sys1 <= mono1);
  OK(hsa_memory_copy(host, dev, n * 4));
  int wrong = 0;
  for (int i = 0; i < n; i++) wrong += host[i] != i * 3 + 1;
  EXPECT(wrong == 0);
  EXPECT(hsa_queue_load_read_index_scacquire(q) == hsa_queue_load_write_index_scacquire(q));
  printf("dispatch: %d work-items correct, %.3f ms on the emulated GPU\n", n, (when.end - when.start) / 1e6);

  // barrier-AND: the dispatch behind it waits for the host to release both dependencies
  hsa_signal_t dep[2], after;
  OK(hsa_signal_create(1, 0, NULL, &dep[0]));
  OK(hsa_signal_create(1, 0, NULL, &dep[1]));
  OK(hsa_signal_create(1, 0, NULL, &after));
  barrier(q, 1, dep, 2, (hsa_signal_t){0});
  dispatch(q, add_one, dev, n, after);
  hsa_signal_store_screlease(dep[0], 0);
  EXPECT(hsa_signal_wait_scacquire(after, HSA_SIGNAL_CONDITION_EQ, 0, 50 * 1000000ull, HSA_WAIT_STATE_BLOCKED) == 1);
  hsa_signal_store_screlease(dep[1], 0);
  EXPECT(hsa_signal_wait_scacquire(after, HSA_SIGNAL_CONDITION_EQ, 0, UINT64_MAX, HSA_WAIT_STATE_BLOCKED) == 0);
  // a barrier's completion signal carries its times too (HIP's events are barrier packets)
  hsa_signal_t marker;
  OK(hsa_signal_create(1, 0, NULL, &marker));
  barrier(q, 1, dep, 0, marker);
  EXPECT(hsa_signal_wait_scacquire(marker, HSA_SIGNAL_CONDITION_EQ, 0, UINT64_MAX, HSA_WAIT_STATE_BLOCKED) == 0);
  hsa_amd_profiling_dispatch_time_t marker_time;
  OK(hsa_amd_profiling_get_dispatch_time(gpu, marker, &marker_time));
  EXPECT(marker_time.start > when.end && marker_time.end >= marker_time.start);
  // barrier-OR: one released dependency of two is enough
  hsa_signal_store_relaxed(dep[0], 1);
  hsa_signal_store_relaxed(dep[1], 1);
  hsa_signal_store_relaxed(after, 1);
  barrier(q, 0, dep, 2, (hsa_signal_t){0});
  dispatch(q, add_one, dev, n, after);
  EXPECT(hsa_signal_wait_scacquire(after, HSA_SIGNAL_CONDITION_EQ, 0, 50 * 1000000ull, HSA_WAIT_STATE_BLOCKED) == 1);
  hsa_signal_store_screlease(dep[1], 0);
  EXPECT(hsa_signal_wait_scacquire(after, HSA_SIGNAL_CONDITION_EQ, 0, UINT64_MAX, HSA_WAIT_STATE_BLOCKED) == 0);
  OK(hsa_memory_copy(host, dev, n * 4));
  wrong = 0;
  for (int i = 0; i < n; i++) wrong += host[i] != i * 3 + 3;
  EXPECT(wrong == 0);
  printf("barriers: AND waited for both dependencies, OR for one\n");

  // async copies: device -> host, held back by a dependency, then timed
  hsa_signal_t copied, gate;
  OK(hsa_signal_create(1, 0, NULL, &copied));
  OK(hsa_signal_create(1, 0, NULL, &gate));
  OK(hsa_amd_profiling_async_copy_enable(true));
  memset(host, 0, n * 4);
  OK(hsa_amd_memory_async_copy(host, cpu, dev, gpu, n * 4, 1, &gate, copied));
  EXPECT(hsa_signal_wait_scacquire(copied, HSA_SIGNAL_CONDITION_EQ, 0, 30 * 1000000ull, HSA_WAIT_STATE_BLOCKED) == 1);
  EXPECT(host[5] == 0);
  // a later copy without dependencies is not held up behind the waiting one (wavejit's copy engine; ROCm queues
  // both on one SDMA engine, in order, and the destination here is memory no GPU may reach)
  if (!rocr) {
    int small[4] = {0}, small_back[4] = {0};
    hsa_signal_t copied2;
    OK(hsa_signal_create(1, 0, NULL, &copied2));
    OK(hsa_amd_memory_async_copy(small_back, cpu, dev, gpu, sizeof small, 0, NULL, copied2));
    EXPECT(hsa_signal_wait_scacquire(copied2, HSA_SIGNAL_CONDITION_EQ, 0, 2000 * 1000000ull, HSA_WAIT_STATE_BLOCKED) == 0);
    EXPECT(small_back[1] == 1 * 3 + 3);
    (void)small;
  }
  hsa_signal_store_screlease(gate, 0);
  EXPECT(hsa_signal_wait_scacquire(copied, HSA_SIGNAL_CONDITION_EQ, 0, UINT64_MAX, HSA_WAIT_STATE_BLOCKED) == 0);
  wrong = 0;
  for (int i = 0; i < n; i++) wrong += host[i] != i * 3 + 3;
  EXPECT(wrong == 0);
  hsa_amd_profiling_async_copy_time_t ct;
  OK(hsa_amd_profiling_get_async_copy_time(copied, &ct));
  EXPECT(ct.end >= ct.start && ct.start > 0);
  // a copy past the end of an allocation is refused (by wavejit's runtime; ROCm's lets the engine fault)
  if (!rocr) EXPECT(hsa_amd_memory_async_copy(host, cpu, (void*)((char*)dev + n * 4 - 8), gpu, 64, 0, NULL, copied) == HSA_STATUS_ERROR_INVALID_ALLOCATION);
  // a rectangle: 5 rows of 12 bytes from (x 8, y 2) of a 64-byte-pitch source to (x 4, y 1) of a 32-byte pitch
  uint8_t* src_rect;
  uint8_t* dst_rect;
  OK(hsa_amd_memory_pool_allocate(host_pool, 64 * 16, 0, (void**)&src_rect));
  OK(hsa_amd_agents_allow_access(1, &gpu, NULL, src_rect));
  OK(hsa_amd_memory_pool_allocate(device_pool, 32 * 16, 0, (void**)&dst_rect));
  for (int i = 0; i < 64 * 16; i++) src_rect[i] = (uint8_t)(i * 13);
  uint8_t zero_rect[32 * 16] = {0}, got_rect[32 * 16];
  OK(hsa_memory_copy(dst_rect, zero_rect, sizeof zero_rect));
  hsa_pitched_ptr_t sp = {src_rect, 64, 64 * 16}, dp = {dst_rect, 32, 32 * 16};
  hsa_dim3_t so = {8, 2, 0}, dof = {4, 1, 0}, range = {12, 5, 1};
  hsa_signal_store_relaxed(copied, 1);
  OK(hsa_amd_memory_async_copy_rect(&dp, &dof, &sp, &so, &range, gpu, hsaHostToDevice, 0, NULL, copied));
  hsa_signal_t any[2] = {copied, gate};
  hsa_signal_condition_t any_cond[2] = {HSA_SIGNAL_CONDITION_EQ, HSA_SIGNAL_CONDITION_EQ};
  hsa_signal_value_t any_val[2] = {0, 5}, satisfied = -1;
  EXPECT(hsa_amd_signal_wait_any(2, any, any_cond, any_val, UINT64_MAX, HSA_WAIT_STATE_BLOCKED, &satisfied) == 0 && satisfied == 0);
  OK(hsa_memory_copy(got_rect, dst_rect, sizeof got_rect));
  wrong = 0;
  for (int y = 0; y < 16; y++)
    for (int x = 0; x < 32; x++) {
      int in = y >= 1 && y < 6 && x >= 4 && x < 16;
      wrong += got_rect[y * 32 + x] != (in ? src_rect[(y - 1 + 2) * 64 + (x - 4 + 8)] : 0);
    }
  EXPECT(wrong == 0);
  printf("async copy: waited for its dependency, %d bytes correct; a 12x5 rectangle correct\n", n * 4);

  // many host threads, each with its own queue, none losing a completion
  enum { THREADS = 6, ROUNDS = 40 };
  pthread_t th[THREADS];
  worker_t w[THREADS];
  int* bufs;
  OK(hsa_amd_memory_pool_allocate(device_pool, THREADS * 256 * 4, 0, (void**)&bufs));
  int zeros_buf[THREADS * 256] = {0};
  OK(hsa_memory_copy(bufs, zeros_buf, sizeof zeros_buf));
  for (int t = 0; t < THREADS; t++) {
    w[t] = (worker_t){add_one, bufs + t * 256, ROUNDS, 0};
    pthread_create(&th[t], NULL, worker, &w[t]);
  }
  for (int t = 0; t < THREADS; t++) pthread_join(th[t], NULL);
  int back[THREADS * 256];
  OK(hsa_memory_copy(back, bufs, sizeof back));
  wrong = 0;
  for (int t = 0; t < THREADS; t++) {
    EXPECT(w[t].ok);
    for (int i = 0; i < 256; i++) wrong += back[t * 256 + i] != ROUNDS;
  }
  EXPECT(wrong == 0);
  printf("threads: %d threads x %d dispatches on %d queues, every completion seen\n", THREADS, ROUNDS, THREADS);

  // dispatch round-trip latency of an empty kernel
  hsa_signal_t ping;
  OK(hsa_signal_create(1, 0, NULL, &ping));
  const int reps = 200;
  double t1 = now_ms();
  for (int r = 0; r < reps; r++) {
    hsa_signal_store_relaxed(ping, 1);
    dispatch(q, empty, NULL, 64, ping);
    hsa_signal_wait_scacquire(ping, HSA_SIGNAL_CONDITION_EQ, 0, UINT64_MAX, HSA_WAIT_STATE_BLOCKED);
  }
  printf("latency: empty kernel dispatch round trip %.1f us (mean of %d)\n", (now_ms() - t1) * 1000.0 / reps, reps);

  // plain host memory, registered, is reachable by kernels at its own address (wavejit's runtime: one address
  // space; ROCm's gives registered memory another GPU address, which hsa_memory_register does not return)
  static int plain[64 * 4];
  if (!rocr) {
    for (int i = 0; i < 64 * 4; i++) plain[i] = i;
    OK(hsa_memory_register(plain, sizeof plain));
    hsa_signal_store_relaxed(ping, 1);
    dispatch(q, add_one, plain, 64 * 4, ping);
    hsa_signal_wait_scacquire(ping, HSA_SIGNAL_CONDITION_EQ, 0, UINT64_MAX, HSA_WAIT_STATE_BLOCKED);
    wrong = 0;
    for (int i = 0; i < 64 * 4; i++) wrong += plain[i] != i + 1;
    EXPECT(wrong == 0);
    OK(hsa_memory_deregister(plain, sizeof plain));
  }

  // locked host memory: its own agent address, which kernels and copies use to reach the host bytes
  int* pageable = malloc(64 * 4 * sizeof(int));
  for (int i = 0; i < 64 * 4; i++) pageable[i] = 100 + i;
  int* agent_view = NULL;
  OK(hsa_amd_memory_lock(pageable, 64 * 4 * sizeof(int), &gpu, 1, (void**)&agent_view));
  EXPECT(agent_view != NULL && agent_view != pageable);
  hsa_amd_pointer_info_t pinfo = {.size = sizeof pinfo};
  OK(hsa_amd_pointer_info(agent_view + 3, &pinfo, NULL, NULL, NULL));
  EXPECT(pinfo.type == HSA_EXT_POINTER_TYPE_LOCKED && pinfo.hostBaseAddress == pageable && pinfo.agentBaseAddress == agent_view);
  hsa_signal_store_relaxed(ping, 1);
  dispatch(q, add_one, agent_view, 64 * 4, ping);
  hsa_signal_wait_scacquire(ping, HSA_SIGNAL_CONDITION_EQ, 0, UINT64_MAX, HSA_WAIT_STATE_BLOCKED);
  // a copy from the agent address reaches the host bytes too (wavejit's runtime; ROCm's copies between host
  // pointers with the CPU, and the agent address is no CPU address)
  int via_agent[4] = {111};
  if (!rocr) OK(hsa_memory_copy(via_agent, agent_view + 10, sizeof via_agent));
  wrong = 0;
  for (int i = 0; i < 64 * 4; i++) wrong += pageable[i] != 101 + i;
  EXPECT(wrong == 0 && via_agent[0] == 111);
  OK(hsa_amd_memory_unlock(pageable));
  free(pageable);

  // IPC handles within the process: memory and a signal
  hsa_amd_ipc_memory_t ipc;
  // the allocation's size: ROCm's runtime keeps it in whole pages and wants it whole
  size_t ipc_len = rocr ? ((size_t)n * 4 + 4095) & ~(size_t)4095 : (size_t)n * 4;
  OK(hsa_amd_ipc_memory_create(dev, ipc_len, &ipc));
  void* opened = NULL;
  OK(hsa_amd_ipc_memory_attach(&ipc, ipc_len, 1, &gpu, &opened));
  EXPECT(rocr || opened == dev);  // ROCm maps an import at an address of its own, also in the same process
  OK(hsa_amd_ipc_memory_detach(opened));
  EXPECT(hsa_amd_ipc_memory_create((char*)dev + 4, 16, &ipc) == HSA_STATUS_ERROR_INVALID_ARGUMENT);
  hsa_amd_ipc_signal_t ipc_signal;
  // only signals made for IPC can be shared
  EXPECT(hsa_amd_ipc_signal_create(ping, &ipc_signal) == HSA_STATUS_ERROR_INVALID_ARGUMENT);
  hsa_signal_t ipc_ping, ping2;
  OK(hsa_amd_signal_create(3, 0, NULL, HSA_AMD_SIGNAL_IPC, &ipc_ping));
  OK(hsa_amd_ipc_signal_create(ipc_ping, &ipc_signal));
  OK(hsa_amd_ipc_signal_attach(&ipc_signal, &ping2));
  // the same signal (wavejit's runtime hands back the handle; ROCm's another handle of the same signal)
  EXPECT((rocr || ping2.handle == ipc_ping.handle) && hsa_signal_load_scacquire(ping2) == 3);
  OK(hsa_signal_destroy(ipc_ping));
  // ...and a signal another process sets: this process waits, that one (this program again) stores 0
  {
    hsa_signal_t shared;
    OK(hsa_amd_signal_create(5, 0, NULL, HSA_AMD_SIGNAL_IPC, &shared));
    hsa_amd_ipc_signal_t sh;
    OK(hsa_amd_ipc_signal_create(shared, &sh));
    char cmd[4096];
    int at = snprintf(cmd, sizeof cmd, "%s ipc-signal-child ", argv[0]);
    for (size_t i = 0; i < sizeof sh; i++) at += snprintf(cmd + at, sizeof cmd - at, "%02x", ((unsigned char*)&sh)[i]);
    snprintf(cmd + at, sizeof cmd - at, " &");
    EXPECT(system(cmd) == 0);
    hsa_signal_value_t v = hsa_signal_wait_scacquire(shared, HSA_SIGNAL_CONDITION_EQ, 0, 30ull * 1000 * 1000 * 1000, HSA_WAIT_STATE_BLOCKED);
    EXPECT(v == 0);
    OK(hsa_signal_destroy(shared));
    if (v == 0) printf("ipc: a signal set to 0 by another process woke this one\n");
  }

  // a code object with an undefined variable: refused until the application defines it
  FILE* ef = fopen(argv[2], "rb");
  if (!ef) { perror(argv[2]); return 2; }
  static char ext_image[1 << 16];
  size_t ext_bytes = fread(ext_image, 1, sizeof ext_image, ef);
  fclose(ef);
  hsa_code_object_reader_t ext_reader;
  OK(hsa_code_object_reader_create_from_memory(ext_image, ext_bytes, &ext_reader));
  hsa_executable_t undefined_exe, ext_exe;
  OK(hsa_executable_create_alt(HSA_PROFILE_FULL, HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT, NULL, &undefined_exe));
  // an undefined external variable: refused when loaded (wavejit's loader; ROCm's loader defers it)
  if (!rocr) EXPECT(hsa_executable_load_agent_code_object(undefined_exe, gpu, ext_reader, NULL, NULL) == HSA_STATUS_ERROR_INVALID_CODE_OBJECT);
  OK(hsa_executable_destroy(undefined_exe));
  int* ext_var;
  OK(hsa_amd_memory_pool_allocate(device_pool, 4, 0, (void**)&ext_var));
  int forty_one = 41;
  OK(hsa_memory_copy(ext_var, &forty_one, 4));
  OK(hsa_executable_create_alt(HSA_PROFILE_FULL, HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT, NULL, &ext_exe));
  OK(hsa_executable_agent_global_variable_define(ext_exe, gpu, "ext_value", ext_var));
  EXPECT(hsa_executable_agent_global_variable_define(ext_exe, gpu, "ext_value", ext_var) == HSA_STATUS_ERROR_VARIABLE_ALREADY_DEFINED);
  OK(hsa_executable_load_agent_code_object(ext_exe, gpu, ext_reader, NULL, NULL));
  OK(hsa_executable_freeze(ext_exe, NULL));
  hsa_executable_t saved = exe;
  exe = ext_exe;
  kernel_t read_ext = kernel("read_ext.kd");
  exe = saved;
  int* ext_dev;
  OK(hsa_amd_memory_pool_allocate(device_pool, 64 * 4, 0, (void**)&ext_dev));
  hsa_signal_store_relaxed(ping, 1);
  dispatch(q, read_ext, ext_dev, 64, ping);
  hsa_signal_wait_scacquire(ping, HSA_SIGNAL_CONDITION_EQ, 0, UINT64_MAX, HSA_WAIT_STATE_BLOCKED);
  int ext_out[64];
  OK(hsa_memory_copy(ext_out, ext_dev, sizeof ext_out));
  OK(hsa_amd_memory_pool_free(ext_dev));
  wrong = 0;
  for (int i = 0; i < 64; i++) wrong += ext_out[i] != 42;
  EXPECT(wrong == 0);
  OK(hsa_executable_destroy(ext_exe));
  OK(hsa_code_object_reader_destroy(ext_reader));
  OK(hsa_amd_memory_pool_free(ext_var));
  printf("external variable: defined by the application, read by the kernel\n");

  // a soft queue: the application processes its packets; the runtime keeps its indices
  hsa_region_t region;
  EXPECT(hsa_agent_iterate_regions(cpu, first_region, &region) == HSA_STATUS_INFO_BREAK);
  hsa_signal_t soft_bell;
  OK(hsa_signal_create(0, 0, NULL, &soft_bell));
  hsa_queue_t* soft;
  OK(hsa_soft_queue_create(region, 64, HSA_QUEUE_TYPE_SINGLE, HSA_QUEUE_FEATURE_AGENT_DISPATCH, soft_bell, &soft));
  EXPECT(soft->size == 64 && soft->doorbell_signal.handle == soft_bell.handle);
  EXPECT(hsa_queue_add_write_index_relaxed(soft, 3) == 0 && hsa_queue_load_write_index_relaxed(soft) == 3);
  hsa_queue_store_read_index_screlease(soft, 2);
  EXPECT(hsa_queue_load_read_index_acquire(soft) == 2);
  OK(hsa_queue_destroy(soft));
  EXPECT(hsa_signal_load_relaxed(soft_bell) == 0);  // the creator's doorbell outlives the queue
  OK(hsa_signal_destroy(soft_bell));

  // deallocation callbacks run when the allocation holding their pointer is freed
  char* watched;
  OK(hsa_amd_memory_pool_allocate(device_pool, 4096, 0, (void**)&watched));
  OK(hsa_amd_register_deallocation_callback(watched + 100, on_free, watched + 100));
  OK(hsa_amd_register_deallocation_callback(watched, on_free, watched));
  OK(hsa_amd_deregister_deallocation_callback(watched, on_free));
  EXPECT(hsa_amd_deregister_deallocation_callback(watched, on_free) == HSA_STATUS_ERROR_INVALID_ARGUMENT);
  EXPECT(hsa_amd_register_deallocation_callback((void*)0x10, on_free, NULL) == HSA_STATUS_ERROR_INVALID_ALLOCATION);
  OK(hsa_amd_memory_pool_free(watched));
  EXPECT(atomic_load(&freed_calls) == 1);

  // a kernel's memory fault reaches the system event handler (which takes it, so the process goes on), not the
  // error callback of its queue (which ROCm does not call for a memory fault); the process and its data survive
  // a missing callback is refused (wavejit's runtime; ROCm's registers it and calls it)
  if (!rocr) EXPECT(hsa_amd_register_system_event_handler(NULL, NULL) == HSA_STATUS_ERROR_INVALID_ARGUMENT);
  OK(hsa_amd_register_system_event_handler(on_memory_fault, NULL));
  hsa_queue_t* fq;
  OK(hsa_queue_create(gpu, 64, HSA_QUEUE_TYPE_MULTI, on_queue_error, NULL, 0, 0, &fq));
  hsa_signal_t never;
  OK(hsa_signal_create(1, 0, NULL, &never));
  dispatch(fq, wild, (void*)0x1000, 64, never);
  for (int i = 0; i < 5000 && atomic_load(&fault_address) == 0; i++) { struct timespec d = {0, 1000000}; nanosleep(&d, NULL); }
  EXPECT(atomic_load(&fault_address) == 0x1000);
  EXPECT(atomic_load(&error_status) == 0);
  EXPECT(hsa_signal_load_relaxed(never) == 1);
  OK(hsa_memory_copy(host, dev, n * 4));
  EXPECT(host[7] == 7 * 3 + 3);
  printf("fault: the system event handler got address 0x%lx; host data intact\n", (unsigned long)atomic_load(&fault_address));

  // an illegal instruction and a trap: each breaks its own queue with its own status
  const char* names[2] = {"illegal.kd", "trap.kd"};
  hsa_status_t want[2] = {HSA_STATUS_ERROR_ILLEGAL_INSTRUCTION, HSA_STATUS_ERROR_EXCEPTION};
  for (int k = 0; k < 2; k++) {
    atomic_store(&error_status, 0);
    hsa_queue_t* bq;
    OK(hsa_queue_create(gpu, 64, HSA_QUEUE_TYPE_MULTI, on_queue_error, NULL, 0, 0, &bq));
    dispatch(bq, kernel(names[k]), dev, 64, never);
    for (int i = 0; i < 5000 && atomic_load(&error_status) == 0; i++) { struct timespec d = {0, 1000000}; nanosleep(&d, NULL); }
    EXPECT(atomic_load(&error_status) == want[k]);
    OK(hsa_queue_destroy(bq));
  }
  printf("faults: illegal instruction 0x%x, trap 0x%x\n", want[0], want[1]);

  OK(hsa_queue_destroy(fq));
  OK(hsa_queue_destroy(q));
  OK(hsa_amd_memory_pool_free(dev));
  OK(hsa_amd_memory_pool_free(host));
  // ---- images: import, clear, copy and export from the host; image_load/image_store and a filtered
  // image_sample in a kernel; the descriptors kernels read are the handles' memory
  // (not under ROCm's own runtime: its image kernels flush f32 denormals, a float mode the engines do not compute in)
  if (!rocr) {
    bool has_images = false;
    OK(hsa_agent_extension_supported(HSA_EXTENSION_IMAGES, gpu, 1, 0, &has_images));
    EXPECT(has_images);
    hsa_ext_images_1_pfn_t table;
    OK(hsa_system_get_major_extension_table(HSA_EXTENSION_IMAGES, 1, sizeof table, &table));
    EXPECT(table.hsa_ext_image_create_with_layout == hsa_ext_image_create_with_layout);
    hsa_ext_image_descriptor_t d = {HSA_EXT_IMAGE_GEOMETRY_2D, 8, 4, 0, 0, {HSA_EXT_IMAGE_CHANNEL_TYPE_UNORM_INT8, HSA_EXT_IMAGE_CHANNEL_ORDER_RGBA}};
    uint32_t cap = 0;
    OK(hsa_ext_image_get_capability(gpu, HSA_EXT_IMAGE_GEOMETRY_2D, &d.format, &cap));
    EXPECT(cap & HSA_EXT_IMAGE_CAPABILITY_READ_WRITE);
    hsa_ext_image_format_t packed = {HSA_EXT_IMAGE_CHANNEL_TYPE_UNORM_SHORT_565, HSA_EXT_IMAGE_CHANNEL_ORDER_RGB};
    OK(hsa_ext_image_get_capability(gpu, HSA_EXT_IMAGE_GEOMETRY_2D, &packed, &cap));
    EXPECT(cap == 0);
    hsa_ext_image_data_info_t info;
    OK(hsa_ext_image_data_get_info(gpu, &d, HSA_ACCESS_PERMISSION_RW, &info));
    EXPECT(info.size >= 8 * 4 * 4 && info.alignment >= 1);
    void *a, *b, *res;
    OK(hsa_amd_memory_pool_allocate(device_pool, info.size, 0, &a));
    OK(hsa_amd_memory_pool_allocate(device_pool, info.size, 0, &b));
    OK(hsa_amd_memory_pool_allocate(device_pool, 64 * 16, 0, &res));
    hsa_ext_image_t ia, ib;
    OK(hsa_ext_image_create(gpu, &d, a, HSA_ACCESS_PERMISSION_RW, &ia));
    OK(hsa_ext_image_create(gpu, &d, b, HSA_ACCESS_PERMISSION_RW, &ib));
    hsa_ext_image_descriptor_t bad = d;
    bad.format = packed;
    EXPECT((int)hsa_ext_image_create(gpu, &bad, a, HSA_ACCESS_PERMISSION_RW, &ib) == (int)HSA_EXT_STATUS_ERROR_IMAGE_FORMAT_UNSUPPORTED);
    static uint8_t px[4][8][4], back[4][8][4];
    for (int y = 0; y < 4; y++)
      for (int x = 0; x < 8; x++)
        for (int c = 0; c < 4; c++) px[y][x][c] = (uint8_t)(x * 29 + y * 61 + c * 7);
    hsa_ext_image_region_t all = {{0, 0, 0}, {8, 4, 1}}, left = {{0, 0, 0}, {4, 4, 1}}, outside = {{6, 0, 0}, {4, 1, 1}};
    OK(hsa_ext_image_import(gpu, px, 0, 0, ia, &all));
    float colour[4] = {1.0f, 0.0f, 0.5f, 2.0f};
    OK(hsa_ext_image_clear(gpu, ib, colour, &left));
    hsa_dim3_t from = {4, 0, 0}, to = {4, 0, 0}, range = {4, 4, 1};
    OK(hsa_ext_image_copy(gpu, ia, &from, ib, &to, &range));
    OK(hsa_ext_image_export(gpu, ib, back, 0, 0, &all));
    EXPECT(hsa_ext_image_export(gpu, ib, back, 0, 0, &outside) == HSA_STATUS_ERROR_INVALID_ARGUMENT);
    int wrong = 0;
    for (int y = 0; y < 4; y++)
      for (int x = 0; x < 8; x++)
        for (int c = 0; c < 4; c++) {
          // the clear colour saturates and rounds: 1, 0, 0.5 -> 128, 2 -> 255
          uint8_t want = x < 4 ? (uint8_t[]){255, 0, 128, 255}[c] : px[y][x][c];
          wrong += back[y][x][c] != want;
        }
    EXPECT(wrong == 0);
    hsa_ext_sampler_descriptor_t sd = {HSA_EXT_SAMPLER_COORDINATE_MODE_NORMALIZED, HSA_EXT_SAMPLER_FILTER_MODE_LINEAR, HSA_EXT_SAMPLER_ADDRESSING_MODE_CLAMP_TO_EDGE};
    hsa_ext_sampler_t smp;
    OK(hsa_ext_sampler_create(gpu, &sd, &smp));
    hsa_ext_sampler_descriptor_t badsd = {7, 0, 0};
    EXPECT((int)hsa_ext_sampler_create(gpu, &badsd, &smp) == (int)HSA_EXT_STATUS_ERROR_SAMPLER_DESCRIPTOR_UNSUPPORTED);
    uint64_t* handles;
    OK(hsa_amd_memory_pool_allocate(kernarg_pool, 32, 0, (void**)&handles));
    OK(hsa_amd_agents_allow_access(1, &gpu, NULL, handles));
    handles[0] = ia.handle; handles[1] = ib.handle; handles[2] = smp.handle; handles[3] = (uint64_t)res;
    run_once(kernel("image_half.kd"), handles, 64);
    float (*got)[4] = res;
    wrong = 0;
    for (int lane = 0; lane < 64; lane++)
      for (int c = 0; c < 4; c++) {
        // lanes past the image read zeros
        float want = lane < 32 ? px[lane / 8][lane % 8][c] / 255.0f : 0.0f;
        wrong += got[lane][c] != want;
      }
    EXPECT(wrong == 0);
    OK(hsa_ext_image_export(gpu, ib, back, 0, 0, &all));
    wrong = 0;
    for (int y = 0; y < 4; y++)
      for (int x = 0; x < 8; x++)
        for (int c = 0; c < 4; c++) {
          // the stored float times 255, exactly, rounded to nearest even
          float v = px[y][x][c] / 255.0f * 0.5f;
          wrong += back[y][x][c] != (uint8_t)lrint((double)v * 255.0);
        }
    EXPECT(wrong == 0);
    run_once(kernel("image_sample_between.kd"), handles, 64);
    wrong = 0;
    for (int lane = 0; lane < 32; lane++) {
      int x = lane % 8, y = lane / 8, x1 = x < 7 ? x + 1 : 7;
      for (int c = 0; c < 4; c++) {
        float want = (px[y][x][c] + px[y][x1][c]) / 2.0f / 255.0f;
        wrong += fabsf(got[lane][c] - want) > 1e-6f;
      }
    }
    EXPECT(wrong == 0);
    if (!failures) printf("images: import, clear, copy, export, load, store and a filtered sample correct\n");
    OK(hsa_ext_sampler_destroy(gpu, smp));
    EXPECT(hsa_ext_sampler_destroy(gpu, smp) == HSA_STATUS_ERROR_INVALID_ARGUMENT);
    OK(hsa_ext_image_destroy(gpu, ia));
    OK(hsa_ext_image_destroy(gpu, ib));
    EXPECT(hsa_ext_image_destroy(gpu, ib) == HSA_STATUS_ERROR_INVALID_ARGUMENT);
  }

  // ---- shared virtual memory attributes: plain host memory given to the GPU is reachable by kernels;
  // attributes read back per range; a prefetch waits for its dependency and completes (ROCm's own runtime
  // answers some queries in its own terms: a flag's bit for read-mostly, the host's default access as
  // ACCESSIBLE, and a failed call of the driver as HSA_STATUS_ERROR)
  {
    static int svm[3 * 1024] __attribute__((aligned(4096)));
    for (int i = 0; i < 3 * 1024; i++) svm[i] = i;
    hsa_amd_svm_attribute_pair_t set[] = {
        {HSA_AMD_SVM_ATTRIB_AGENT_ACCESSIBLE_IN_PLACE, gpu.handle},
        {HSA_AMD_SVM_ATTRIB_PREFERRED_LOCATION, cpu.handle},
        {HSA_AMD_SVM_ATTRIB_READ_MOSTLY, 1},
    };
    OK(hsa_amd_svm_attributes_set(svm, sizeof svm, set, 3));
    hsa_amd_svm_attribute_pair_t coarse = {HSA_AMD_SVM_ATTRIB_GLOBAL_FLAG, HSA_AMD_SVM_GLOBAL_FLAG_COARSE_GRAINED};
    OK(hsa_amd_svm_attributes_set(svm + 1024, 4096, &coarse, 1));
    hsa_amd_svm_attribute_pair_t get[] = {
        {HSA_AMD_SVM_ATTRIB_GLOBAL_FLAG, 0},
        {HSA_AMD_SVM_ATTRIB_PREFERRED_LOCATION, 0},
        {HSA_AMD_SVM_ATTRIB_READ_MOSTLY, 0},
        {HSA_AMD_SVM_ATTRIB_ACCESS_QUERY, gpu.handle},
        {HSA_AMD_SVM_ATTRIB_ACCESS_QUERY, cpu.handle},
    };
    OK(hsa_amd_svm_attributes_get(svm, sizeof svm, get, 5));
    EXPECT(get[0].value == HSA_AMD_SVM_GLOBAL_FLAG_INDETERMINATE);
    EXPECT(get[1].value == cpu.handle && get[2].value == (rocr ? 0x20 : 1));
    EXPECT(get[3].attribute == HSA_AMD_SVM_ATTRIB_AGENT_ACCESSIBLE_IN_PLACE && get[3].value == gpu.handle);
    EXPECT(get[4].attribute == (rocr ? HSA_AMD_SVM_ATTRIB_AGENT_ACCESSIBLE : HSA_AMD_SVM_ATTRIB_AGENT_ACCESSIBLE_IN_PLACE));
    hsa_amd_svm_attribute_pair_t flag = {HSA_AMD_SVM_ATTRIB_GLOBAL_FLAG, 0};
    OK(hsa_amd_svm_attributes_get(svm + 1024, 4096, &flag, 1));
    EXPECT(flag.value == HSA_AMD_SVM_GLOBAL_FLAG_COARSE_GRAINED);
    OK(hsa_amd_svm_attributes_get(svm, 4096, &flag, 1));
    EXPECT(flag.value == HSA_AMD_SVM_GLOBAL_FLAG_FINE_GRAINED);
    hsa_amd_svm_attribute_pair_t bogus = {0x999, 0};
    EXPECT(hsa_amd_svm_attributes_set(svm, 4096, &bogus, 1) == HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT(hsa_amd_svm_attributes_set(NULL, 4096, set, 1) == (rocr ? HSA_STATUS_ERROR : HSA_STATUS_ERROR_INVALID_ARGUMENT));
    // a kernel adds one to every element of the host array, through its own address
    run_once(add_one, svm, 3 * 1024);
    int wrong = 0;
    for (int i = 0; i < 3 * 1024; i++) wrong += svm[i] != i + 1;
    EXPECT(wrong == 0);
    // the prefetch completes only after its dependency is released
    hsa_signal_t sdone, dep;
    OK(hsa_signal_create(1, 0, NULL, &sdone));
    OK(hsa_signal_create(1, 0, NULL, &dep));
    OK(hsa_amd_svm_prefetch_async(svm, sizeof svm, gpu, 1, &dep, sdone));
    EXPECT(hsa_signal_wait_scacquire(sdone, HSA_SIGNAL_CONDITION_EQ, 0, 20 * 1000 * 1000, HSA_WAIT_STATE_BLOCKED) == 1);
    hsa_signal_store_screlease(dep, 0);
    EXPECT(hsa_signal_wait_scacquire(sdone, HSA_SIGNAL_CONDITION_EQ, 0, UINT64_MAX, HSA_WAIT_STATE_BLOCKED) == 0);
    hsa_amd_svm_attribute_pair_t where = {HSA_AMD_SVM_ATTRIB_PREFETCH_LOCATION, 0};
    OK(hsa_amd_svm_attributes_get(svm, sizeof svm, &where, 1));
    EXPECT(where.value == gpu.handle);
    // taking the GPU's access away
    hsa_amd_svm_attribute_pair_t none = {HSA_AMD_SVM_ATTRIB_AGENT_NO_ACCESS, gpu.handle};
    OK(hsa_amd_svm_attributes_set(svm, sizeof svm, &none, 1));
    hsa_amd_svm_attribute_pair_t q = {HSA_AMD_SVM_ATTRIB_ACCESS_QUERY, gpu.handle};
    OK(hsa_amd_svm_attributes_get(svm, sizeof svm, &q, 1));
    EXPECT(q.attribute == HSA_AMD_SVM_ATTRIB_AGENT_NO_ACCESS);
    OK(hsa_signal_destroy(sdone));
    OK(hsa_signal_destroy(dep));
    if (!failures) printf("svm: attributes per range, host memory reached by a kernel, prefetch after its dependency\n");
  }

  // ---- interop: a memfd stands for a graphics driver's DMA-BUF; mapped, a kernel changes it in place
  // (not under ROCm's own runtime: the emulated driver imports no DMA-BUF)
  if (!rocr) {
    int fd = memfd_create("interop", 0);
    EXPECT(fd >= 0 && ftruncate(fd, 8192) == 0);
    int* host = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    EXPECT(host != MAP_FAILED);
    for (int i = 0; i < 2048; i++) host[i] = 5 * i;
    size_t size = 0, meta_size = 1;
    void* ptr = NULL;
    const void* meta = &size;
    EXPECT(hsa_amd_interop_map_buffer(1, &gpu, fd, 1, &size, &ptr, NULL, NULL) == HSA_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT(hsa_amd_interop_map_buffer(1, &gpu, -1, 0, &size, &ptr, NULL, NULL) == HSA_STATUS_ERROR_INVALID_ARGUMENT);
    OK(hsa_amd_interop_map_buffer(1, &gpu, fd, 0, &size, &ptr, &meta_size, &meta));
    EXPECT(size == 8192 && ptr != NULL && ptr != host && meta_size == 0 && meta == NULL);
    run_once(add_one, ptr, 2048);
    int wrong = 0;
    for (int i = 0; i < 2048; i++) wrong += host[i] != 5 * i + 1;
    EXPECT(wrong == 0);
    OK(hsa_amd_interop_unmap_buffer(ptr));
    EXPECT(hsa_amd_interop_unmap_buffer(ptr) == HSA_STATUS_ERROR_INVALID_ARGUMENT);
    // the buffer outlives its mapping
    EXPECT(host[2047] == 5 * 2047 + 1);
    munmap(host, 8192);
    close(fd);
    if (!failures) printf("interop: a mapped buffer changed in place by a kernel, then unmapped\n");
  }

  // ---- the pre-1.1 code object API: deserialize, query, serialize back, load into an executable and run
  // (not under ROCm's own runtime: ROCm 5.2's pre-1.1 code object API does not read code object v5)
  if (!rocr) {
    hsa_code_object_t co;
    OK(hsa_code_object_deserialize(image, bytes, NULL, &co));
    hsa_isa_t isa, agent_isa;
    OK(hsa_code_object_get_info(co, HSA_CODE_OBJECT_INFO_ISA, &isa));
    OK(hsa_agent_get_info(gpu, HSA_AGENT_INFO_ISA, &agent_isa));
    EXPECT(isa.handle == agent_isa.handle);
    int kernels = 0;
    OK(hsa_code_object_iterate_symbols(co, count_code_symbol, &kernels));
    EXPECT(kernels >= 5);
    hsa_code_symbol_t sym;
    OK(hsa_code_object_get_symbol(co, "add_one", &sym));
    uint32_t len = 0, kernarg = 0;
    char name[64] = {0};
    OK(hsa_code_symbol_get_info(sym, HSA_CODE_SYMBOL_INFO_NAME_LENGTH, &len));
    OK(hsa_code_symbol_get_info(sym, HSA_CODE_SYMBOL_INFO_NAME, name));
    OK(hsa_code_symbol_get_info(sym, HSA_CODE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE, &kernarg));
    EXPECT(len == strlen("add_one.kd") && strcmp(name, "add_one.kd") == 0 && kernarg == 8);
    EXPECT(hsa_code_object_get_symbol(co, "nope", &sym) == HSA_STATUS_ERROR_INVALID_SYMBOL_NAME);
    void* ser = NULL;
    size_t ser_size = 0;
    hsa_callback_data_t cbd = {0};
    OK(hsa_code_object_serialize(co, alloc_serialized, cbd, NULL, &ser, &ser_size));
    EXPECT(ser_size == bytes && memcmp(ser, image, bytes) == 0);
    free(ser);
    hsa_executable_t old_exe;
    OK(hsa_executable_create_alt(HSA_PROFILE_FULL, HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT, NULL, &old_exe));
    OK(hsa_executable_load_code_object(old_exe, gpu, co, NULL));
    OK(hsa_executable_freeze(old_exe, NULL));
    hsa_executable_symbol_t ks;
    OK(hsa_executable_get_symbol_by_name(old_exe, "add_one.kd", &gpu, &ks));
    kernel_t k = {0};
    OK(hsa_executable_symbol_get_info(ks, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT, &k.object));
    OK(hsa_executable_symbol_get_info(ks, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE, &k.kernarg_size));
    int* buf;
    OK(hsa_amd_memory_pool_allocate(device_pool, 128 * sizeof(int), 0, (void**)&buf));
    for (int i = 0; i < 128; i++) buf[i] = 10 * i;
    run_once(k, buf, 128);
    int wrong = 0;
    for (int i = 0; i < 128; i++) wrong += buf[i] != 10 * i + 1;
    EXPECT(wrong == 0);
    OK(hsa_code_object_destroy(co));
    EXPECT(hsa_code_object_destroy(co) == HSA_STATUS_ERROR_INVALID_CODE_OBJECT);
    EXPECT(hsa_code_object_deserialize("junk", 4, NULL, &co) == HSA_STATUS_ERROR_INVALID_CODE_OBJECT);
    OK(hsa_executable_destroy(old_exe));
    if (!failures) printf("code objects (pre-1.1): deserialized, queried, serialized back, loaded and run\n");
  }

  OK(hsa_executable_destroy(exe));
  OK(hsa_code_object_reader_destroy(reader));
  OK(hsa_shut_down());
  EXPECT(hsa_shut_down() == HSA_STATUS_ERROR_NOT_INITIALIZED);
  if (failures) { fprintf(stderr, "%d check(s) failed\n", failures); return 1; }
  printf("hsa_test: all checks passed\n");
  return 0;
}

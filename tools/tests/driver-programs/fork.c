// Processes of one HSA program that fork: `fork KERNELS.co MODE`, KERNELS.co holding add_one (kernels.cl).
//   before  forks before hsa_init; parent and child each initialise HSA, run add_one and check its result
//   after   initialises HSA and runs add_one, then forks; the child execs this program in mode `fresh` (a process
//           that initialises HSA anew), while the parent runs add_one again; the parent checks the child's status
//   fresh   initialises HSA and runs add_one
//   thunk   initialises HSA and runs add_one, then forks; the child opens the KFD through the thunk (libhsakmt),
//           which sees it is a forked child, forgets its parent's connection and opens /dev/kfd anew, and asks for
//           the interface version and the topology's nodes
// ROCr does not support a forked child using the runtime its parent initialised (its queues and memory are the
// parent's), on hardware either: a child that uses the GPU execs first, or forks before hsa_init; the thunk
// under it does reconnect a forked child.
// Each process prints "<who>: add_one correct" and exits 0, or says what failed and exits non-zero.
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char* who = "parent";

// the thunk's own entry points (libhsakmt.so.1, under ROCr; its header is not installed)
typedef struct {
  uint32_t major, minor;
} kfd_version_t;
typedef struct {
  uint32_t nodes, oem, id, rev;
} kfd_system_t;
int hsaKmtOpenKFD(void);
int hsaKmtCloseKFD(void);
int hsaKmtGetVersion(kfd_version_t* version);
int hsaKmtAcquireSystemProperties(kfd_system_t* properties);
int hsaKmtReleaseSystemProperties(void);

#define OK(x) do { hsa_status_t s_ = (x); if (s_ != HSA_STATUS_SUCCESS) { printf("%s: %s failed: 0x%x\n", who, #x, s_); exit(3); } } while (0)

static hsa_agent_t gpu;
static hsa_amd_memory_pool_t system_pool;

static hsa_status_t find_pool(hsa_amd_memory_pool_t pool, void* data) {
  (void)data;
  hsa_amd_segment_t seg;
  uint32_t flags = 0;
  OK(hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_SEGMENT, &seg));
  if (seg != HSA_AMD_SEGMENT_GLOBAL) return HSA_STATUS_SUCCESS;
  OK(hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS, &flags));
  if (flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT) system_pool = pool;
  return HSA_STATUS_SUCCESS;
}

static hsa_status_t find_agents(hsa_agent_t a, void* data) {
  (void)data;
  hsa_device_type_t t;
  OK(hsa_agent_get_info(a, HSA_AGENT_INFO_DEVICE, &t));
  if (t == HSA_DEVICE_TYPE_GPU && gpu.handle == 0) gpu = a;
  if (t == HSA_DEVICE_TYPE_CPU) OK(hsa_amd_agent_iterate_memory_pools(a, find_pool, NULL));
  return HSA_STATUS_SUCCESS;
}

static uint64_t kernel_object;

static void init(const char* path) {
  OK(hsa_init());
  OK(hsa_iterate_agents(find_agents, NULL));
  if (gpu.handle == 0) {
    printf("%s: no GPU\n", who);
    exit(3);
  }
  FILE* f = fopen(path, "rb");
  if (!f) {
    printf("%s: cannot open %s\n", who, path);
    exit(2);
  }
  static char image[1 << 20];
  size_t n = fread(image, 1, sizeof image, f);
  fclose(f);
  hsa_code_object_reader_t reader;
  OK(hsa_code_object_reader_create_from_memory(image, n, &reader));
  hsa_executable_t exe;
  OK(hsa_executable_create_alt(HSA_PROFILE_FULL, HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT, NULL, &exe));
  OK(hsa_executable_load_agent_code_object(exe, gpu, reader, NULL, NULL));
  OK(hsa_executable_freeze(exe, NULL));
  hsa_executable_symbol_t sym;
  OK(hsa_executable_get_symbol_by_name(exe, "add_one.kd", &gpu, &sym));
  OK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT, &kernel_object));
}

// add_one over n ints (blocks of 64) in system memory the GPU may reach; checks each became start + 1
static void run(int start) {
  enum { N = 64 * 16 };
  int* data;
  void* kernarg;
  OK(hsa_amd_memory_pool_allocate(system_pool, N * sizeof(int), 0, (void**)&data));
  OK(hsa_amd_memory_pool_allocate(system_pool, 64, 0, &kernarg));
  OK(hsa_amd_agents_allow_access(1, &gpu, NULL, data));
  OK(hsa_amd_agents_allow_access(1, &gpu, NULL, kernarg));
  for (int i = 0; i < N; i++) data[i] = start + i;
  memcpy(kernarg, &data, sizeof data);
  hsa_queue_t* q;
  OK(hsa_queue_create(gpu, 64, HSA_QUEUE_TYPE_SINGLE, NULL, NULL, 0, 0, &q));
  hsa_signal_t done;
  OK(hsa_signal_create(1, 0, NULL, &done));
  hsa_kernel_dispatch_packet_t p = {0};
  p.setup = 1;
  p.workgroup_size_x = 64; p.workgroup_size_y = 1; p.workgroup_size_z = 1;
  p.grid_size_x = N; p.grid_size_y = 1; p.grid_size_z = 1;
  p.kernel_object = kernel_object;
  p.kernarg_address = kernarg;
  p.completion_signal = done;
  uint64_t index = hsa_queue_add_write_index_screlease(q, 1);
  uint8_t* slot = (uint8_t*)q->base_address + (index % q->size) * 64;
  memcpy(slot + 4, (const uint8_t*)&p + 4, 60);
  uint16_t header = (HSA_PACKET_TYPE_KERNEL_DISPATCH << HSA_PACKET_HEADER_TYPE) |
                    (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_ACQUIRE_FENCE_SCOPE) |
                    (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_RELEASE_FENCE_SCOPE);
  __atomic_store_n((uint32_t*)slot, header | (1u << 16), __ATOMIC_RELEASE);
  hsa_signal_store_screlease(q->doorbell_signal, index);
  hsa_signal_wait_scacquire(done, HSA_SIGNAL_CONDITION_EQ, 0, UINT64_MAX, HSA_WAIT_STATE_BLOCKED);
  for (int i = 0; i < N; i++) {
    if (data[i] != start + i + 1) {
      printf("%s: add_one wrong at %d: %d, not %d\n", who, i, data[i], start + i + 1);
      exit(1);
    }
  }
  OK(hsa_signal_destroy(done));
  OK(hsa_queue_destroy(q));
  OK(hsa_amd_memory_pool_free(data));
  OK(hsa_amd_memory_pool_free(kernarg));
  printf("%s: add_one correct\n", who);
  fflush(stdout);
}

// waits for `child`; its exit status, or -1 when it did not exit normally
static int wait_for(pid_t child) {
  int status;
  if (waitpid(child, &status, 0) != child) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: fork KERNELS.co before|after|thunk|fresh\n");
    return 2;
  }
  const char* co = argv[1];
  const char* mode = argv[2];
  fflush(stdout);
  if (strcmp(mode, "before") == 0) {
    pid_t child = fork();
    if (child < 0) return 4;
    if (child == 0) who = "child";
    init(co);
    run(child == 0 ? 1000 : 2000);
    if (child == 0) return 0;
    int status = wait_for(child);
    printf("parent: child exited %d\n", status);
    return status == 0 ? 0 : 1;
  }
  if (strcmp(mode, "after") == 0) {
    init(co);
    run(3000);
    fflush(stdout);
    pid_t child = fork();
    if (child < 0) return 4;
    if (child == 0) {
      execl("/proc/self/exe", argv[0], co, "fresh", (char*)NULL);
      printf("child: exec failed\n");
      _exit(5);
    }
    run(4000);
    int status = wait_for(child);
    printf("parent: child exited %d\n", status);
    return status == 0 ? 0 : 1;
  }
  if (strcmp(mode, "thunk") == 0) {
    init(co);
    run(6000);
    fflush(stdout);
    pid_t child = fork();
    if (child < 0) return 4;
    if (child == 0) {
      who = "child";
      kfd_version_t v;
      kfd_system_t sys;
      int opened = hsaKmtOpenKFD(), version = hsaKmtGetVersion(&v), props = hsaKmtAcquireSystemProperties(&sys);
      if (opened != 0 || version != 0 || props != 0) {
        printf("child: the thunk failed: open %d, version %d, properties %d\n", opened, version, props);
        _exit(1);
      }
      printf("child: KFD %u.%u, %u nodes\n", v.major, v.minor, sys.nodes);
      hsaKmtReleaseSystemProperties();
      hsaKmtCloseKFD();
      fflush(stdout);
      _exit(0);
    }
    run(7000);
    int status = wait_for(child);
    printf("parent: child exited %d\n", status);
    return status == 0 ? 0 : 1;
  }
  if (strcmp(mode, "fresh") == 0) {
    who = "exec'd child";
    init(co);
    run(5000);
    return 0;
  }
  fprintf(stderr, "fork: unknown mode %s\n", mode);
  return 2;
}

// How a GPU fault ends an HSA program, as on ROCm: `fault KERNELS.co MODE`.
//   plain    a kernel writes 4 KiB past a 4-byte buffer on a queue without an error callback, and the program
//            waits for it without a timeout: the runtime prints its memory-fault line and aborts (SIGABRT)
//   handled  as wild, with a system event handler that returns success: the handler gets the agent and the
//            address (the queue's callback is not called: ROCm's queues hear nothing of a memory fault), and the
//            program goes on and exits 0
//   wild     as plain, the kernel given address 0x1000 instead of the buffer: under ROCm's own runtime a 4-byte
//            buffer is a piece of a larger block of device memory, whose rest a GPU reaches without a fault
//   trap     a kernel traps on a queue without an error callback: never a hang, never an exit 0
// Each mode prints what it saw; "waited past" would mean the dispatch completed.
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define OK(x) do { hsa_status_t s_ = (x); if (s_ != HSA_STATUS_SUCCESS) { fprintf(stderr, "%s:%d: %s failed: 0x%x\n", __FILE__, __LINE__, #x, s_); exit(3); } } while (0)

static hsa_agent_t gpu;
static hsa_amd_memory_pool_t kernarg_pool, device_pool;

// the GPU's coarse-grained pool (data 1) or the CPU's kernel-argument pool (data 0)
static hsa_status_t find_pool(hsa_amd_memory_pool_t pool, void* data) {
  int is_gpu = data != NULL;
  hsa_amd_segment_t seg;
  uint32_t flags = 0;
  OK(hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_SEGMENT, &seg));
  if (seg != HSA_AMD_SEGMENT_GLOBAL) return HSA_STATUS_SUCCESS;
  OK(hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS, &flags));
  if (!is_gpu && (flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT)) kernarg_pool = pool;
  if (is_gpu && (flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED)) device_pool = pool;
  return HSA_STATUS_SUCCESS;
}

static hsa_status_t find_gpu(hsa_agent_t a, void* data) {
  (void)data;
  hsa_device_type_t t;
  OK(hsa_agent_get_info(a, HSA_AGENT_INFO_DEVICE, &t));
  if (t == HSA_DEVICE_TYPE_GPU && gpu.handle == 0) {
    gpu = a;
    OK(hsa_amd_agent_iterate_memory_pools(a, find_pool, (void*)1));
  }
  return HSA_STATUS_SUCCESS;
}

static hsa_status_t find_kernarg_pool(hsa_agent_t a, void* data) {
  (void)data;
  hsa_device_type_t t;
  OK(hsa_agent_get_info(a, HSA_AGENT_INFO_DEVICE, &t));
  if (t == HSA_DEVICE_TYPE_CPU) OK(hsa_amd_agent_iterate_memory_pools(a, find_pool, NULL));
  return HSA_STATUS_SUCCESS;
}

static atomic_uint_fast64_t fault_address, fault_agent;
static atomic_int queue_status;

static hsa_status_t on_system_event(const hsa_amd_event_t* e, void* data) {
  (void)data;
  if (e->event_type != HSA_AMD_GPU_MEMORY_FAULT_EVENT) return HSA_STATUS_ERROR;
  atomic_store(&fault_agent, e->memory_fault.agent.handle);
  atomic_store(&fault_address, e->memory_fault.virtual_address);
  return HSA_STATUS_SUCCESS;
}

static void on_queue_error(hsa_status_t s, hsa_queue_t* q, void* data) {
  (void)q; (void)data;
  atomic_store(&queue_status, s);
}

int main(int argc, char** argv) {
  if (argc != 3) { fprintf(stderr, "usage: fault KERNELS.co plain|wild|handled|trap\n"); return 2; }
  const char* mode = argv[2];
  int handled = strcmp(mode, "handled") == 0, trap = strcmp(mode, "trap") == 0, wild = strcmp(mode, "wild") == 0;
  OK(hsa_init());
  OK(hsa_iterate_agents(find_gpu, NULL));
  OK(hsa_iterate_agents(find_kernarg_pool, NULL));
  if (handled) OK(hsa_amd_register_system_event_handler(on_system_event, NULL));

  FILE* f = fopen(argv[1], "rb");
  if (!f) { perror(argv[1]); return 2; }
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
  OK(hsa_executable_get_symbol_by_name(exe, trap ? "trap.kd" : "past_end.kd", &gpu, &sym));
  uint64_t object;
  uint32_t kernarg_size;
  OK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT, &object));
  OK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE, &kernarg_size));

  int* buffer;
  OK(hsa_amd_memory_pool_allocate(device_pool, 4, 0, (void**)&buffer));
  void* kernarg;
  OK(hsa_amd_memory_pool_allocate(kernarg_pool, kernarg_size < 8 ? 8 : kernarg_size, 0, &kernarg));
  OK(hsa_amd_agents_allow_access(1, &gpu, NULL, kernarg));  // system memory is the CPU's until allowed
  memset(kernarg, 0, kernarg_size);
  int* target = wild || handled ? (int*)0x1000 : buffer;
  memcpy(kernarg, &target, sizeof target);

  hsa_queue_t* q;
  OK(hsa_queue_create(gpu, 64, HSA_QUEUE_TYPE_MULTI, handled ? on_queue_error : NULL, NULL, 0, 0, &q));
  hsa_signal_t done;
  OK(hsa_signal_create(1, 0, NULL, &done));
  hsa_kernel_dispatch_packet_t p = {0};
  p.workgroup_size_x = 64; p.workgroup_size_y = 1; p.workgroup_size_z = 1;
  p.grid_size_x = 64; p.grid_size_y = 1; p.grid_size_z = 1;
  p.kernel_object = object;
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
  printf("fault: dispatched %s, buffer at %p\n", trap ? "trap" : "past_end", (void*)buffer);
  fflush(stdout);

  if (handled) {
    for (int i = 0; i < 10000 && atomic_load(&fault_address) == 0; i++) {
      struct timespec d = {0, 1000000};
      nanosleep(&d, NULL);
    }
    uint64_t want = (uint64_t)(uintptr_t)target + 4096;
    printf("fault: handler saw address %s target+4096, agent %s, queue status 0x%x, signal %ld\n",
           atomic_load(&fault_address) == want ? "==" : "!=",
           atomic_load(&fault_agent) == gpu.handle ? "==" : "!=", atomic_load(&queue_status),
           (long)hsa_signal_load_relaxed(done));
    return 0;
  }
  hsa_signal_wait_scacquire(done, HSA_SIGNAL_CONDITION_EQ, 0, UINT64_MAX, HSA_WAIT_STATE_BLOCKED);
  printf("fault: waited past the faulting dispatch\n");
  return 0;
}

// Async signal handlers under concurrent registration and signal destruction, as HIP's streams on several
// devices do: threads register handlers on signals they then set, while destroying other signals that carry
// handlers of their own (some at once, some after a while, so handlers come and go in the middle of the
// handler list). Every handler whose signal was set must run exactly once; none of a destroyed signal may run.
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define THREADS 4
#define ROUNDS 1500
#define LATER 50

static atomic_int fired[THREADS * ROUNDS];
static atomic_int doomed_calls;

static bool on_set(hsa_signal_value_t v, void* arg) {
  (void)v;
  atomic_fetch_add(&fired[(size_t)arg], 1);
  return false;
}

static bool on_doomed(hsa_signal_value_t v, void* arg) {
  (void)v, (void)arg;
  atomic_fetch_add(&doomed_calls, 1);
  return false;
}

static hsa_signal_t kept[THREADS * ROUNDS];

static hsa_signal_t with_handler(hsa_signal_value_t initial, bool (*f)(hsa_signal_value_t, void*), void* arg) {
  hsa_signal_t s;
  if (hsa_signal_create(initial, 0, NULL, &s) != HSA_STATUS_SUCCESS) {
    fprintf(stderr, "signal create failed\n");
    exit(2);
  }
  if (hsa_amd_signal_async_handler(s, HSA_SIGNAL_CONDITION_EQ, 0, f, arg) != HSA_STATUS_SUCCESS) {
    fprintf(stderr, "async handler registration failed\n");
    exit(2);
  }
  return s;
}

static void* worker(void* p) {
  size_t t = (size_t)p;
  hsa_signal_t later[LATER];
  for (size_t r = 0; r < ROUNDS; r++) {
    size_t i = t * ROUNDS + r;
    // a signal that is never set, destroyed LATER rounds on
    if (r >= LATER) hsa_signal_destroy(later[r % LATER]);
    later[r % LATER] = with_handler(1, on_doomed, NULL);
    hsa_signal_t s = with_handler(1, on_set, (void*)i);
    hsa_signal_t d = with_handler(1, on_doomed, NULL);
    hsa_signal_store_screlease(s, 0);
    hsa_signal_destroy(d);
    kept[i] = s;
  }
  for (size_t k = 0; k < LATER; k++) hsa_signal_destroy(later[k]);
  return NULL;
}

int main(void) {
  if (hsa_init() != HSA_STATUS_SUCCESS) {
    fprintf(stderr, "hsa_init failed\n");
    return 2;
  }
  pthread_t th[THREADS];
  for (size_t t = 0; t < THREADS; t++) pthread_create(&th[t], NULL, worker, (void*)t);
  for (size_t t = 0; t < THREADS; t++) pthread_join(th[t], NULL);
  // every set signal's handler runs (within 30 s)
  int missing = 0;
  for (int wait_ms = 0; wait_ms < 30000; wait_ms++) {
    missing = 0;
    for (size_t i = 0; i < THREADS * ROUNDS; i++) missing += atomic_load(&fired[i]) == 0;
    if (missing == 0) break;
    struct timespec d = {0, 1000000};
    nanosleep(&d, NULL);
  }
  int twice = 0;
  for (size_t i = 0; i < THREADS * ROUNDS; i++) twice += atomic_load(&fired[i]) > 1;
  for (size_t i = 0; i < THREADS * ROUNDS; i++) hsa_signal_destroy(kept[i]);
  if (missing || twice || atomic_load(&doomed_calls)) {
    fprintf(stderr, "async handlers: %d never ran, %d ran twice, %d of destroyed signals ran\n", missing, twice, atomic_load(&doomed_calls));
    return 1;
  }
  printf("async handlers: %d ran once each while %d signals with handlers were destroyed\n", THREADS * ROUNDS, THREADS * ROUNDS);
  hsa_shut_down();
  return 0;
}

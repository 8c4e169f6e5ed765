// The limit for scripts/bench-threads (issue #38): memcpy of SIZE bytes split over THREADS threads,
// each copying its own contiguous slice (as the CPU backend splits an in-memory run), the buffers
// touched once beforehand so that no page fault is timed. Prints the median over REPEAT runs as
// milliseconds and GB/s counting the bytes read and written (2 x SIZE), as dmlbits' --time does:
//
//   bench_memcpy SIZE_BYTES THREADS REPEAT     ->  "ms 12.345 gbps 43.21"
//
// The threads are started for each run, as the backend starts its own per run.
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct slice {
  char* dst;
  const char* src;
  size_t n;
};

static void* copy(void* arg) {
  struct slice* s = arg;
  memcpy(s->dst, s->src, s->n);
  return NULL;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int by_value(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: bench_memcpy SIZE_BYTES THREADS REPEAT\n");
    return 2;
  }
  const size_t size = strtoull(argv[1], NULL, 10);
  const int threads = atoi(argv[2]), repeat = atoi(argv[3]);
  if (size == 0 || threads < 1 || repeat < 1) return 2;
  char* src = aligned_alloc(4096, (size + 4095) / 4096 * 4096);
  char* dst = aligned_alloc(4096, (size + 4095) / 4096 * 4096);
  if (!src || !dst) return 1;
  memset(src, 0x5a, size);
  memset(dst, 0, size);
  struct slice* slices = calloc((size_t)threads, sizeof *slices);
  pthread_t* ids = calloc((size_t)threads, sizeof *ids);
  double* ms = calloc((size_t)repeat, sizeof *ms);
  for (int t = 0; t < threads; ++t) {
    // Slices on 64-byte boundaries, as the backend's (no cache line written by two threads).
    const size_t begin = size / (size_t)threads * (size_t)t / 64 * 64;
    const size_t end = t + 1 == threads ? size : size / (size_t)threads * (size_t)(t + 1) / 64 * 64;
    slices[t] = (struct slice){dst + begin, src + begin, end - begin};
  }
  for (int r = 0; r < repeat; ++r) {
    const double t0 = now();
    for (int t = 1; t < threads; ++t) pthread_create(&ids[t], NULL, copy, &slices[t]);
    copy(&slices[0]);
    for (int t = 1; t < threads; ++t) pthread_join(ids[t], NULL);
    ms[r] = (now() - t0) * 1e3;
  }
  qsort(ms, (size_t)repeat, sizeof *ms, by_value);
  const double median = repeat % 2 ? ms[repeat / 2] : (ms[repeat / 2 - 1] + ms[repeat / 2]) / 2;
  if (dst[size - 1] != 0x5a) return 1;  // the copy happened (and is not optimised away)
  printf("ms %.3f gbps %.2f\n", median, 2.0 * (double)size / (median * 1e-3) / 1e9);
  return 0;
}

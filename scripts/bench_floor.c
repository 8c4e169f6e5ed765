// The floor for issue #29: the least a whole `dmlbits and A B -o OUT` (or `not A -o OUT`) must
// do, in plain C, to compare dmlbits and cp with (bench_process_sweep.py --floor compiles it
// with cc -O3 -march=native -pthread and runs it in the same rounds). With the same file
// replacement as dmlbits: an unnamed file beside OUT (O_TMPFILE), the 128-byte .npy header of A,
// then per chunk pread the inputs, compute, write; then link under a temporary name and rename
// over OUT. No validation, no options, no error messages beyond perror: only the data's way.
//
//   bench_floor MODE OP CHUNK_KIB A [B] OUT      (OP: and | not; uint32 .npy with a 128-byte header)
//
// MODE 1: one thread, each chunk read, computed and written through the same buffers (one
//         2 MiB huge-page arena, as dmlbits' streamed runs).
// MODE 2: two threads, as dmlbits' pipeline: a second thread reads and computes into two slots,
//         the first writes them in order (mutex + condition variable).
// MODE s: two threads, each reading, computing and writing (pwrite) its own half of the chunks:
//         no hand-over per chunk.
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

enum { kHeader = 128, kSlots = 2 };
static int op_and, fa, fb, fo;
static size_t chunk, total, chunks;  // total: payload bytes after the header

static void die(const char* what) {
  perror(what);
  exit(1);
}

static void compute(uint64_t* restrict o, const uint64_t* restrict a, const uint64_t* restrict b, size_t n) {
  n /= 8;  // the payload is whole uint32 pairs at the sizes of the sweep
  if (op_and)
    for (size_t i = 0; i < n; ++i) o[i] = a[i] & b[i];
  else
    for (size_t i = 0; i < n; ++i) o[i] = ~a[i];
}

static void full_pread(int fd, void* p, size_t n, off_t off) {
  while (n) {
    ssize_t r = pread(fd, p, n, off);
    if (r <= 0) die("pread");
    p = (char*)p + r, n -= (size_t)r, off += r;
  }
}

static void full_pwrite(int fd, const void* p, size_t n, off_t off) {
  while (n) {
    ssize_t r = pwrite(fd, p, n, off);
    if (r <= 0) die("pwrite");
    p = (const char*)p + r, n -= (size_t)r, off += r;
  }
}

// As dmlbits' arena: whole 2 MiB ranges, huge pages asked for, made resident in one call.
static char* alloc(size_t n) {
  const size_t huge = (size_t)2 << 20, len = (n + huge - 1) / huge * huge;
  char* raw = mmap(0, len + huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) die("mmap");
  char* p = (char*)(((uintptr_t)raw + huge - 1) / huge * huge);
  madvise(p, len, MADV_HUGEPAGE);
  madvise(p, n, MADV_POPULATE_WRITE);
  return p;
}

// Reads chunk c into a (and b) and computes it into o; returns its bytes.
static size_t produce(size_t c, char* a, char* b, char* o) {
  const size_t off = c * chunk, n = total - off < chunk ? total - off : chunk;
  full_pread(fa, a, n, kHeader + off);
  if (op_and) full_pread(fb, b, n, kHeader + off);
  compute((uint64_t*)o, (const uint64_t*)a, (const uint64_t*)b, n);
  return n;
}

static struct {
  char *a, *b, *o;
  size_t n;
} slot[kSlots];
static size_t produced, consumed;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;

static void* producer(void* arg) {
  (void)arg;
  for (size_t c = 0; c < chunks; ++c) {
    pthread_mutex_lock(&m);
    while (c - consumed >= kSlots) pthread_cond_wait(&cv, &m);
    pthread_mutex_unlock(&m);
    slot[c % kSlots].n = produce(c, slot[c % kSlots].a, slot[c % kSlots].b, slot[c % kSlots].o);
    pthread_mutex_lock(&m);
    ++produced;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&m);
  }
  return 0;
}

static void* half(void* second) {
  const size_t first = second ? chunks / 2 : 0, last = second ? chunks : chunks / 2;
  char* a = alloc(3 * chunk);
  for (size_t c = first; c < last; ++c) full_pwrite(fo, a + 2 * chunk, produce(c, a, a + chunk, a + 2 * chunk), kHeader + c * chunk);
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 6) {
    fprintf(stderr, "usage: bench_floor 1|2|s and|not CHUNK_KIB A [B] OUT\n");
    return 2;
  }
  const char mode = argv[1][0];
  op_and = strcmp(argv[2], "and") == 0;
  chunk = (size_t)atoi(argv[3]) << 10;
  const char* out = argv[argc - 1];
  if ((fa = open(argv[4], O_RDONLY | O_CLOEXEC)) < 0) die("open A");
  if (op_and && (fb = open(argv[5], O_RDONLY | O_CLOEXEC)) < 0) die("open B");
  struct stat st;
  if (fstat(fa, &st) != 0) die("fstat");
  total = (size_t)st.st_size - kHeader;
  chunks = (total + chunk - 1) / chunk;
  char dir[4096];
  snprintf(dir, sizeof dir, "%s", out);
  char* slash = strrchr(dir, '/');
  if (slash) *slash = 0;
  else strcpy(dir, ".");
  if ((fo = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666)) < 0) die("O_TMPFILE");
  char header[kHeader];
  full_pread(fa, header, kHeader, 0);
  full_pwrite(fo, header, kHeader, 0);
  if (lseek(fo, kHeader, SEEK_SET) != kHeader) die("lseek");
  if (mode == '1') {
    char* a = alloc(3 * chunk);
    for (size_t c = 0; c < chunks; ++c) {
      const size_t n = produce(c, a, a + chunk, a + 2 * chunk);
      if (write(fo, a + 2 * chunk, n) != (ssize_t)n) die("write");
    }
  } else if (mode == '2') {
    char* a = alloc(3 * chunk * kSlots);
    for (int s = 0; s < kSlots; ++s) slot[s].a = a + 3 * chunk * s, slot[s].b = slot[s].a + chunk, slot[s].o = slot[s].b + chunk;
    pthread_t t;
    if (pthread_create(&t, 0, producer, 0) != 0) die("pthread_create");
    for (size_t c = 0; c < chunks; ++c) {
      pthread_mutex_lock(&m);
      while (produced <= c) pthread_cond_wait(&cv, &m);
      pthread_mutex_unlock(&m);
      if (write(fo, slot[c % kSlots].o, slot[c % kSlots].n) != (ssize_t)slot[c % kSlots].n) die("write");
      pthread_mutex_lock(&m);
      ++consumed;
      pthread_cond_broadcast(&cv);
      pthread_mutex_unlock(&m);
    }
    pthread_join(t, 0);
  } else if (mode == 's') {
    pthread_t t;
    if (pthread_create(&t, 0, half, (void*)1) != 0) die("pthread_create");
    half(0);
    pthread_join(t, 0);
  } else {
    return 2;
  }
  char proc[64], tmp[4200];
  snprintf(proc, sizeof proc, "/proc/self/fd/%d", fo);
  snprintf(tmp, sizeof tmp, "%s.floor%d", out, (int)getpid());
  if (linkat(AT_FDCWD, proc, AT_FDCWD, tmp, AT_SYMLINK_FOLLOW) != 0) die("linkat");
  if (rename(tmp, out) != 0) die("rename");
  if (close(fo) != 0) die("close");
  return 0;
}

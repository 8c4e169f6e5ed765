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
// MODE m: the output through a shared file mapping, no write(2): the unnamed file is sized to header
//         + payload (ftruncate), mapped MAP_SHARED at a 2 MiB-aligned address, the header copied in,
//         and each chunk's inputs pread into the arena (as MODE 1) and computed straight into the
//         mapping; munmap, then link + rename as the other modes (the page cache is the file: no
//         msync is needed for the renamed file to read back right).
// MODE M: as m, and the inputs mapped too (read-only, MADV_SEQUENTIAL): no pread, no arena.
// Letters after m / M (any combination):
//   p  MADV_POPULATE_WRITE over the whole output mapping before computing (one call)
//   c  MADV_POPULATE_WRITE per chunk of the output just before computing it (M: and
//      MADV_POPULATE_READ over the chunk of each input)
//   P  MAP_POPULATE on the output mapping (M: on the input mappings too)
//   r  M only: MADV_POPULATE_READ over each whole input mapping before computing
//   f  fallocate instead of ftruncate (blocks allocated, unwritten extents)
//   h  MADV_HUGEPAGE on the output mapping (and M's inputs): PMD-sized page-cache folios where the
//      filesystem has large folios
//   2  two threads, each computing its own half of the chunks (as MODE s)
// After any MODE, x: commit as dmlbits does (lib/src/platform/files.cpp), exchanging the linked
// name with OUT (renameat2 RENAME_EXCHANGE) and unlinking the old file, instead of rename(): a
// rename over an existing file makes ext4 (auto_da_alloc) allocate blocks for the whole new file
// and start its write-back inside the call; the exchange does not. ("1x", "sx", "mhx", ...)
// FLOOR_VERBOSE=1 in the environment prints the madvise/fallocate results to stderr.
#define _GNU_SOURCE
#include <errno.h>
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
  for (size_t c = first; c < last; ++c)
    full_pwrite(fo, a + 2 * chunk, produce(c, a, a + chunk, a + 2 * chunk), kHeader + c * chunk);
  return 0;
}

// Modes m and M.
static const char* opts;
static char* out_map;            // header + payload of the output
static const char *in_a, *in_b;  // M: the inputs, header included
static int verbose;

static int has(char c) { return strchr(opts, c) != 0; }

static void advise(void* p, size_t n, int advice, const char* what) {
  const uintptr_t page = 4096, lo = (uintptr_t)p / page * page, hi = ((uintptr_t)p + n + page - 1) / page * page;
  const int r = madvise((void*)lo, hi - lo, advice);
  if (verbose)
    fprintf(stderr, "bench_floor: %s over %zu bytes: %s\n", what, (size_t)(hi - lo), r == 0 ? "ok" : strerror(errno));
}

// A mapping of len bytes of fd at a 2 MiB-aligned address (so that PMD-sized folios can be mapped whole).
static char* map_aligned(int fd, size_t len, int prot, int flags) {
  const size_t huge = (size_t)2 << 20;
  char* raw = mmap(0, len + huge, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (raw == MAP_FAILED) die("mmap reserve");
  char* p = (char*)(((uintptr_t)raw + huge - 1) / huge * huge);
  if (mmap(p, len, prot, flags | MAP_FIXED, fd, 0) == MAP_FAILED) die("mmap file");
  return p;
}

static void* mapped_chunks(void* second) {
  const int two = has('2');
  const size_t first = two && second ? chunks / 2 : 0, last = two && !second ? chunks / 2 : chunks;
  char* arena = opts[-1] == 'm' ? alloc(2 * chunk) : 0;
  for (size_t c = first; c < last; ++c) {
    const size_t off = c * chunk, n = total - off < chunk ? total - off : chunk;
    char* o = out_map + kHeader + off;
    if (has('c')) advise(o, n, MADV_POPULATE_WRITE, "MADV_POPULATE_WRITE (chunk)");
    const char *a, *b = 0;
    if (arena) {
      full_pread(fa, arena, n, kHeader + off);
      if (op_and) full_pread(fb, arena + chunk, n, kHeader + off);
      a = arena, b = arena + chunk;
    } else {
      a = in_a + kHeader + off;
      if (op_and) b = in_b + kHeader + off;
      if (has('c')) {
        advise((void*)a, n, MADV_POPULATE_READ, "MADV_POPULATE_READ (chunk)");
        if (b) advise((void*)b, n, MADV_POPULATE_READ, "MADV_POPULATE_READ (chunk)");
      }
    }
    compute((uint64_t*)o, (const uint64_t*)a, (const uint64_t*)b, n);
  }
  return 0;
}

static const char* map_input(int fd) {
  const size_t len = kHeader + total;
  char* p = map_aligned(fd, len, PROT_READ, MAP_SHARED | (has('P') ? MAP_POPULATE : 0));
  advise(p, len, MADV_SEQUENTIAL, "MADV_SEQUENTIAL (input)");
  if (has('h')) advise(p, len, MADV_HUGEPAGE, "MADV_HUGEPAGE (input)");
  if (has('r')) advise(p, len, MADV_POPULATE_READ, "MADV_POPULATE_READ (input)");
  return p;
}

static void mapped(const char* header) {
  const size_t len = kHeader + total;
  if (has('f')) {
    const int r = fallocate(fo, 0, 0, (off_t)len);
    if (r != 0) die("fallocate");
  } else if (ftruncate(fo, (off_t)len) != 0) {
    die("ftruncate");
  }
  out_map = map_aligned(fo, len, PROT_READ | PROT_WRITE, MAP_SHARED | (has('P') ? MAP_POPULATE : 0));
  if (has('h')) advise(out_map, len, MADV_HUGEPAGE, "MADV_HUGEPAGE (output)");
  if (has('p')) advise(out_map, len, MADV_POPULATE_WRITE, "MADV_POPULATE_WRITE (output)");
  if (opts[-1] == 'M') {
    in_a = map_input(fa);
    if (op_and) in_b = map_input(fb);
  }
  memcpy(out_map, header, kHeader);
  if (has('2')) {
    pthread_t t;
    if (pthread_create(&t, 0, mapped_chunks, (void*)1) != 0) die("pthread_create");
    mapped_chunks(0);
    pthread_join(t, 0);
  } else {
    mapped_chunks(0);
  }
  if (munmap(out_map, len) != 0) die("munmap");
}

int main(int argc, char** argv) {
  if (argc < 6) {
    fprintf(stderr, "usage: bench_floor 1|2|s|m[pcPfh2]|M[pcPrfh2] (+x) and|not CHUNK_KIB A [B] OUT\n");
    return 2;
  }
  const char mode = argv[1][0];
  opts = argv[1] + 1;
  verbose = getenv("FLOOR_VERBOSE") && strcmp(getenv("FLOOR_VERBOSE"), "1") == 0;
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
  const int map_out = mode == 'm' || mode == 'M';  // a shared writable mapping needs O_RDWR
  if ((fo = open(dir, O_TMPFILE | (map_out ? O_RDWR : O_WRONLY) | O_CLOEXEC, 0666)) < 0) die("O_TMPFILE");
  char header[kHeader];
  full_pread(fa, header, kHeader, 0);
  if (!map_out) {
    full_pwrite(fo, header, kHeader, 0);
    if (lseek(fo, kHeader, SEEK_SET) != kHeader) die("lseek");
  }
  if (map_out) {
    mapped(header);
  } else if (mode == '1') {
    char* a = alloc(3 * chunk);
    for (size_t c = 0; c < chunks; ++c) {
      const size_t n = produce(c, a, a + chunk, a + 2 * chunk);
      if (write(fo, a + 2 * chunk, n) != (ssize_t)n) die("write");
    }
  } else if (mode == '2') {
    char* a = alloc(3 * chunk * kSlots);
    for (int s = 0; s < kSlots; ++s)
      slot[s].a = a + 3 * chunk * s, slot[s].b = slot[s].a + chunk, slot[s].o = slot[s].b + chunk;
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
  if (strchr(opts, 'x')) {
    if (renameat2(AT_FDCWD, tmp, AT_FDCWD, out, RENAME_EXCHANGE) == 0) {
      if (unlink(tmp) != 0) die("unlink");
    } else if (errno != ENOENT || rename(tmp, out) != 0) {  // no OUT yet: rename, as dmlbits
      die("renameat2");
    }
  } else if (rename(tmp, out) != 0) {
    die("rename");
  }
  if (close(fo) != 0) die("close");
  return 0;
}

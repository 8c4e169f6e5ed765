// POSIX (Linux): the affinity mask through sched_getaffinity.
#include <sched.h>

#include <cerrno>
#include <thread>

#include "cpu_set.hpp"

namespace dmlbits {

unsigned affinity_cpu_count() noexcept {
  // A mask as large as the kernel's CPU limit may need: grow until sched_getaffinity fits.
  for (int cpus = 1024; cpus <= (1 << 16); cpus *= 4) {
    cpu_set_t* set = CPU_ALLOC(cpus);
    if (!set) break;
    const std::size_t size = CPU_ALLOC_SIZE(cpus);
    CPU_ZERO_S(size, set);
    const int rc = sched_getaffinity(0, size, set);
    const int n = rc == 0 ? CPU_COUNT_S(size, set) : -1;
    CPU_FREE(set);
    if (n > 0) return static_cast<unsigned>(n);
    if (rc == 0 || errno != EINVAL) break;
  }
  const unsigned n = std::thread::hardware_concurrency();
  return n > 0 ? n : 1;
}

}  // namespace dmlbits

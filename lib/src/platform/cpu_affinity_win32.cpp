// Windows: the process's affinity mask (within its processor group: a process starts in one).
#include <bit>
#include <thread>

#include "cpu_set.hpp"
#include "win32.hpp"

namespace dmlbits {

unsigned affinity_cpu_count() noexcept {
  DWORD_PTR process = 0, system = 0;
  if (GetProcessAffinityMask(GetCurrentProcess(), &process, &system) && process != 0)
    return static_cast<unsigned>(std::popcount(static_cast<unsigned long long>(process)));
  const unsigned n = std::thread::hardware_concurrency();
  return n > 0 ? n : 1;
}

}  // namespace dmlbits

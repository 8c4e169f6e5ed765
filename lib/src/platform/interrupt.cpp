#include "dmlbits/error.hpp"

#include <atomic>

namespace dmlbits {
namespace {
// Lock-free, so that setting it from a signal handler is safe.
std::atomic<bool> g_interrupted{false};
static_assert(std::atomic<bool>::is_always_lock_free);
}  // namespace

void request_interrupt() noexcept { g_interrupted.store(true, std::memory_order_relaxed); }

bool interrupt_requested() noexcept { return g_interrupted.load(std::memory_order_relaxed); }

void throw_if_interrupted() {
  if (interrupt_requested()) throw Error(Errc::interrupted, "interrupted");
}

}  // namespace dmlbits

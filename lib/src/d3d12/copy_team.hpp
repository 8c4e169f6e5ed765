// The CPU threads that copy a D3D12 run's bytes into upload heaps and out of readback heaps.
// One thread's memcpy is the limit of a transfer on a GPU host (its bus carries more than one
// thread copies: testdata/benchmarks.md, issue #36), so a run's large copies are split
// over several threads, taken from the process's thread budget (ThreadLease) as the CPU
// backend's are: calls from several threads at once share the machine instead of each
// starting a full team. The workers live for one run, so each piece's copy costs a wake-up, not
// a thread start.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "thread_rule.hpp"

namespace dmlbits::d3d12 {

// Bytes of a copy from which it is split: the CPU backend's own line (kParallelMinBytes: under
// it a thread costs more than it saves), one thread per half of it (a share of at least 2 MiB).
inline constexpr std::uint64_t kSplitCopyMinBytes = kParallelMinBytes;

// Threads a run whose copies are `piece_bytes` each would use: cpu_thread_rule's count for that
// much work (1 under kSplitCopyMinBytes), on the machine's team or, where not 0, `requested`
// (--threads or DMLBITS_THREADS, as the request resolved it: D3d12BackendOptions::copy_threads).
unsigned copy_threads_for(std::uint64_t piece_bytes, unsigned requested = 0);

class CopyTeam {
 public:
  // A team of `wanted` threads, the caller included; on the default thread count (`requested`
  // 0), only what the process's budget has free (at least the caller). A worker that cannot be
  // started is left out.
  explicit CopyTeam(unsigned wanted, unsigned requested = 0);
  ~CopyTeam();
  CopyTeam(const CopyTeam&) = delete;
  CopyTeam& operator=(const CopyTeam&) = delete;

  unsigned threads() const { return static_cast<unsigned>(workers_.size()) + 1; }

  // Runs fn(offset, length) over [0, bytes): on the calling thread alone under
  // kSplitCopyMinBytes, else cut into one part per thread (each at least half of it, every cut
  // on a multiple of `align` bytes), the caller taking the first. Returns when all parts are
  // done; rethrows the first failure.
  void split(std::uint64_t bytes, std::uint64_t align, const std::function<void(std::uint64_t, std::uint64_t)>& fn);

 private:
  void work(unsigned index);

  std::optional<ThreadLease> lease_;
  std::vector<std::thread> workers_;
  std::mutex m_;
  std::condition_variable wake_, done_;
  std::uint64_t generation_ = 0;  // one per split(); workers run each once
  bool stop_ = false;
  // The current split's parts: worker k runs part k + 1 when k + 1 < parts_.
  const std::function<void(std::uint64_t, std::uint64_t)>* fn_ = nullptr;
  std::vector<std::uint64_t> cuts_;  // parts_ + 1 offsets
  unsigned parts_ = 0;
  unsigned pending_ = 0;  // workers still running the current split
  std::exception_ptr error_;
};

}  // namespace dmlbits::d3d12

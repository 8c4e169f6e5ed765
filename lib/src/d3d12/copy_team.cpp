#include "copy_team.hpp"

#include <algorithm>
#include <system_error>

#include "thread_rule.hpp"
#include "signals.hpp"

namespace dmlbits::d3d12 {

unsigned copy_threads_for(std::uint64_t piece_bytes, unsigned requested) {
  return cpu_thread_rule(this_machine(), piece_bytes, cpu_threads(requested), kSplitCopyMinBytes).threads;
}

CopyTeam::CopyTeam(unsigned wanted, unsigned requested) {
  if (wanted > 1 && cpu_threads_are_default(requested)) {
    lease_.emplace(wanted);
    wanted = lease_->threads();
  }
  for (unsigned k = 0; k + 1 < wanted; ++k) {
    try {
      workers_.emplace_back([this, k] { work(k); });
    } catch (const std::system_error&) {
      break;  // no thread to be had: the others share the work
    }
  }
}

CopyTeam::~CopyTeam() {
  {
    std::lock_guard lock(m_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto& w : workers_) w.join();
}

void CopyTeam::work(unsigned index) {
  keep_signals_off_this_thread();  // signals stay with the calling thread
  std::uint64_t seen = 0;
  for (;;) {
    std::unique_lock lock(m_);
    wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
    if (stop_) return;
    seen = generation_;
    const unsigned part = index + 1;
    if (part >= parts_) continue;  // this split has fewer parts than the team
    const auto* fn = fn_;
    const std::uint64_t at = cuts_[part], n = cuts_[part + 1] - cuts_[part];
    lock.unlock();
    std::exception_ptr failed;
    try {
      (*fn)(at, n);
    } catch (...) {
      failed = std::current_exception();
    }
    lock.lock();
    if (failed && !error_) error_ = failed;
    if (--pending_ == 0) done_.notify_one();
  }
}

void CopyTeam::split(std::uint64_t bytes, std::uint64_t align,
                     const std::function<void(std::uint64_t, std::uint64_t)>& fn) {
  const std::uint64_t least = kSplitCopyMinBytes / 2;
  std::uint64_t parts = std::min<std::uint64_t>(threads(), bytes / least);
  if (bytes < kSplitCopyMinBytes || parts < 2) {
    if (bytes > 0) fn(0, bytes);
    return;
  }
  align = std::max<std::uint64_t>(align, 1);
  std::vector<std::uint64_t> cuts{0};
  for (std::uint64_t p = 1; p < parts; ++p) cuts.push_back(std::max(cuts.back(), bytes / parts * p / align * align));
  cuts.push_back(bytes);
  {
    std::lock_guard lock(m_);
    fn_ = &fn;
    cuts_ = std::move(cuts);
    parts_ = static_cast<unsigned>(parts);
    pending_ = parts_ - 1;
    error_ = nullptr;
    ++generation_;
  }
  wake_.notify_all();
  std::exception_ptr mine;
  try {
    fn(0, cuts_[1]);
  } catch (...) {
    mine = std::current_exception();
  }
  std::unique_lock lock(m_);
  done_.wait(lock, [&] { return pending_ == 0; });
  fn_ = nullptr;
  if (mine) std::rethrow_exception(mine);
  if (error_) std::rethrow_exception(error_);
}

}  // namespace dmlbits::d3d12

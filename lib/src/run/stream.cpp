#include "stream.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <string_view>
#include <system_error>
#include <optional>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "cpu_backend.hpp"
#include "dmlbits/error.hpp"
#include "dmlbits/front_end.hpp"
#include "io.hpp"
#include "npy_stream.hpp"
#include "signals.hpp"
#include "thread_rule.hpp"

namespace dmlbits {
namespace {

// Chunks in flight on two threads: in the pipeline one being read and computed, one being
// written (slices have one per thread). Two spare slots, for a thread the scheduler delays,
// measured no better and cost twice the buffers (testdata/benchmarks.md, "Streamed runs' figures").
constexpr std::size_t kStreamSlots = 2;

// Every chunk buffer of a streamed run (the slots' input scratch and results) is cut from one
// arena, allocated once. What a mid-size run spends on its buffers is mostly the first write to
// each fresh page: a page fault, dear on a virtual machine, and buffers mapped afresh by malloc
// fault per 4 KiB page. One arena of kMappedBufferBytes or more is whole 2 MiB ranges
// (allocate_buffer), made resident in one call with huge pages where the system has them: a few
// faults. At most 1.5 MiB per thread (a slot of three 512 KiB buffers each); a run on one thread
// has one slot: it reads, computes and writes each chunk through the same buffers, still in the
// core's cache from the chunk before (figures: testdata/benchmarks.md, "Streamed runs' figures").
constexpr std::size_t kArenaAlignment = 4096;  // each buffer starts on a page of its own

std::size_t round_up(std::size_t n, std::size_t to) { return (n + to - 1) / to * to; }

// The widest of an element's inputs.
std::size_t widest_input_bytes(const ValidatedGraph& g) {
  std::size_t widest = 1;
  for (const OperandInfo& in : g.inputs()) widest = std::max(widest, dtype_info(in.dtype).size);
  return widest;
}

// The wider of an element's input and output sizes: what chunks and the work are counted in.
std::size_t wider_element_bytes(const ValidatedGraph& g) {
  return std::max(widest_input_bytes(g), dtype_info(g.output_dtype()).size);
}

// Elements per chunk of a streamed run (kStreamChunkBytes of the wider of input and output),
// and the chunks of the run.
std::size_t chunk_elements(const ValidatedGraph& v) {
  return std::max<std::size_t>(1, kStreamChunkBytes / wider_element_bytes(v));
}
std::uint64_t chunk_count(const ValidatedGraph& v) {
  const std::uint64_t chunk = chunk_elements(v);
  return (v.output_shape().element_count() + chunk - 1) / chunk;
}

// could_use_two: false when the backend is not a CPU one (a device backend is kept on the thread
// that created it), it is held to one thread (`threads`, as --threads: 1, DMLBITS_THREADS=1 for 0,
// or by default a machine that gives this process one CPU: cpu_threads), or the run is one chunk.
bool could_use_two(const ValidatedGraph& v, const Backend& backend, unsigned threads) {
  return chunk_count(v) >= 2 && backend.computes_on_cpu() && cpu_threads(threads) >= 2;
}

// The inputs a flat streamed run reads chunk by chunk (materialize_unstreamable reads the rest
// whole), standard input included.
bool is_streamed(const ValidatedGraph& v, const LoadedOperand& in) {
  return in.stream && in.shape() == v.output_shape();
}
std::size_t streamed_inputs(const ValidatedGraph& v, const std::vector<LoadedOperand>& inputs) {
  return static_cast<std::size_t>(
      std::count_if(inputs.begin(), inputs.end(), [&](const LoadedOperand& in) { return is_streamed(v, in); }));
}

// How a streamed run shares its chunks between threads.
enum class Split {
  one,       // one thread reads, computes and writes every chunk in order
  pipeline,  // a second thread reads and computes each chunk, the first writes them in order
  slices,    // each of N threads reads, computes and writes (at their offsets) a slice of the chunks
};

// The split a streamed run uses, and why (for -v): the one place of the rule, for the run and
// for its description.
struct ThreadChoice {
  Split split = Split::one;
  ThreadWhy why;         // for Split::one, plain: the backend's own ("outputs under 4 MiB run on one")
  unsigned threads = 1;  // the threads the run uses (the slices' count)
};

constexpr ThreadWhy kPipelineWhy{ThreadUse::pipeline};
// "each reads, computes and writes half" for two slices, "... 1/4" for four.
ThreadWhy slices_why(unsigned n) { return {ThreadUse::slices, 0, n}; }

// A run with two streamed inputs whose chunks cannot be split by offset (an input or the output
// is a pipe, standard input or output, or a device) stays on one thread: the pipeline's producer
// reads twice what the writer writes, and it was slower than one thread at every size measured,
// as was the same pipeline in a bare C program (testdata/benchmarks.md, "Streamed runs' figures").
constexpr ThreadWhy kTwoStreamsOnOne{ThreadUse::two_streams};

// A run whose output elements are narrower than its input's (popcount into uint8) stays on one
// thread: chunks are cut by the wider element, so each hands the writer a quarter (or less) of
// what `not` does for the same hand-over, and two threads were never clearly ahead of one
// (testdata/benchmarks.md, "Streamed runs' figures").
constexpr ThreadWhy kNarrowerOnOne{ThreadUse::narrower};

// Otherwise one streamed input pipelines from options.pipeline_min_output_bytes of output (64
// MiB): the second thread overlaps the writing, and under that the hand-over per chunk (each
// wakes a halted vCPU) cost more than the overlap saved. A run whose work is under the CPU
// backend's own line (CpuBackendOptions' parallel_min_bytes) is described as in memory
// ("outputs under 4 MiB run on one").
//
// Slices (halves on two threads): when every streamed input is a regular file read at offsets and
// the output a new file (written at offsets, named on commit), runs from
// options.halves_min_output_bytes of output split the chunks in contiguous ranges, each read,
// computed and written by its own thread: no hand-over per chunk, and the threads' reads and
// page-cache writes overlap. As many slices as the backend's threads (cpu_threads: the machine's
// rule, thread_rule.hpp), but each of at least half that threshold of output (8 MiB: a slice
// must outweigh its thread, as in halves) and at least one chunk. Halves gain where the second
// CPU is free and lose where it is busy; only two threads were measured (scripts/bench-threads
// sweeps more where a machine has them). Narrower outputs stay on one thread in slices too.
// Otherwise one streamed input pipelines as above, and two stay on one thread. The figures
// behind both thresholds: testdata/benchmarks.md, "Streamed runs' figures".
// `output_at_offsets`: whether the output is a new file (for -v, from its path before it is
// created; for the run, the OutputFile itself).
ThreadChoice thread_choice(const ValidatedGraph& v, const std::vector<LoadedOperand>& inputs, const Backend& backend,
                           unsigned threads, bool output_at_offsets, const StreamOptions& options) {
  if (!could_use_two(v, backend, threads)) return {};
  const std::uint64_t count = v.output_shape().element_count();
  const std::size_t out_size = dtype_info(v.output_dtype()).size;
  const std::uint64_t out_bytes = count * out_size;
  const bool splittable = output_at_offsets && std::all_of(inputs.begin(), inputs.end(), [&](const LoadedOperand& in) {
                            return !is_streamed(v, in) || in.stream->seekable();
                          });
  const bool two_streams = streamed_inputs(v, inputs) >= 2;
  const bool halves = splittable && out_bytes >= options.halves_min_output_bytes;
  const bool pipeline = !two_streams && out_bytes >= options.pipeline_min_output_bytes;
  if (!halves && !pipeline && count * wider_element_bytes(v) < CpuBackendOptions{}.parallel_min_bytes) return {};
  if (out_size < widest_input_bytes(v)) return {Split::one, kNarrowerOnOne};
  if (halves) {
    const std::uint64_t least = options.halves_min_output_bytes / 2;
    std::uint64_t n = std::min<std::uint64_t>(cpu_threads(threads), chunk_count(v));
    if (least > 0) n = std::min<std::uint64_t>(n, out_bytes / least);
    const auto slices = static_cast<unsigned>(std::max<std::uint64_t>(n, 2));
    return {Split::slices, slices_why(slices), slices};
  }
  if (pipeline) return {Split::pipeline, kPipelineWhy, 2};
  if (two_streams && !splittable) return {Split::one, kTwoStreamsOnOne};
  return {Split::one,
          {ThreadUse::small_stream, splittable ? options.halves_min_output_bytes : options.pipeline_min_output_bytes}};
}

// Runs produce(c) for every chunk c on a second thread while the calling thread runs
// consume(c) in order, at most `slots` chunks apart. Reading and computing a chunk (pread,
// the kernel) then overlap with writing the previous one, whose cost on a new output file is
// mostly the kernel allocating page-cache pages (testdata/benchmarks.md, "Streamed runs'
// second thread"). produce records its failure in the chunk's slot, returns false and stops
// there; consume throws it.

// Returns false, having run nothing, when no second thread could be started.
template <class Produce, class Consume>
bool run_pipelined(std::uint64_t chunks, std::size_t slots, Produce& produce, Consume& consume) {
  std::mutex m;
  std::condition_variable cv;
  std::uint64_t produced = 0;  // chunks whose slot is filled (or holds the producer's error)
  std::uint64_t consumed = 0;  // chunks written
  bool stop = false;           // the consumer failed: the producer must not wait for it
  std::thread worker;
  try {
    worker = std::thread([&] {
      // Signals (SIGINT, SIGTERM, SIGPIPE) stay with the calling thread, as before.
      keep_signals_off_this_thread();
      for (std::uint64_t c = 0; c < chunks; ++c) {
        {
          std::unique_lock lock(m);
          cv.wait(lock, [&] { return stop || c - consumed < slots; });
          if (stop) return;
        }
        const bool ok = produce(c);
        {
          std::lock_guard lock(m);
          ++produced;
        }
        cv.notify_all();
        if (!ok) return;
      }
    });
  } catch (const std::system_error&) {
    return false;
  }
  struct Join {
    std::mutex& m;
    std::condition_variable& cv;
    bool& stop;
    std::thread& worker;
    ~Join() {
      {
        std::lock_guard lock(m);
        stop = true;
      }
      cv.notify_all();
      worker.join();
    }
  } join{m, cv, stop, worker};
  for (std::uint64_t c = 0; c < chunks; ++c) {
    {
      std::unique_lock lock(m);
      cv.wait(lock, [&] { return produced > c; });
    }
    consume(c);
    {
      std::lock_guard lock(m);
      ++consumed;
    }
    cv.notify_all();
  }
  return true;
}

// The seconds of a streamed run's read, execute and write phases from validation on, added
// to as its steps go.
struct PhaseSeconds {
  double read = 0, execute = 0, write = 0;
};

// Inputs that are not full-size runs of the output are read whole: broadcast operands and
// everything when the operation broadcasts along an axis. Returns whether the rest streams.
bool materialize_unstreamable(const ValidatedGraph& v, std::vector<LoadedOperand>& inputs) {
  const bool streamed = v.is_flat_streamable();
  for (auto& in : inputs)
    if (in.stream && (!streamed || !(in.shape() == v.output_shape()))) in.materialize();
  return streamed;
}

// An operation that does not stream (it broadcasts along an axis): computed whole in memory,
// before its output is created, and then written after the header.
Tensor compute_whole(const ValidatedGraph& v, const std::vector<LoadedOperand>& inputs,
                     const std::vector<Tensor>& constants, Backend& backend, PhaseClock& phase, PhaseSeconds& s) {
  Tensor result(v.output_dtype(), v.output_shape());
  GraphBuffers buffers;
  for (const auto& in : inputs) buffers.inputs.push_back(in.view().bytes());
  for (const auto& c : constants) buffers.constants.push_back(c.view().bytes());
  buffers.output = {result.data(), result.byte_size()};
  run_graph_once(backend, v, buffers);
  s.execute += phase.lap();
  return result;
}

// A streamed operation's chunks. A slot is one chunk's input buffers and result. compute(c)
// fills chunk c's slot (reads the streamed inputs, runs the backend); write_in_order(c) appends
// it to the output, write_at_offset(c) writes it at its place. In order (one thread, the
// pipeline) results, errors and progress come exactly as from a plain loop; slices write each
// chunk at its own offset and report progress from the calling thread.
class ChunkWriter {
 public:
  // `slots`: chunks in flight, kStreamSlots when pipelined, one per thread in slices, else 1.
  // `data_offset`: the output's bytes before the data (its .npy header).
  ChunkWriter(const ValidatedGraph& v, std::vector<LoadedOperand>& inputs, const std::vector<Tensor>& constants,
              Backend& backend, OutputFile& out, std::uint64_t data_offset, const ProgressFn& progress,
              std::size_t slots)
      : v_(v),
        inputs_(inputs),
        constants_(constants),
        backend_(backend),
        out_(out),
        progress_(progress),
        data_offset_(data_offset),
        out_size_(dtype_info(v.output_dtype()).size),
        count_(v.output_shape().element_count()),
        chunk_(chunk_elements(v)),
        chunks_(chunk_count(v)),
        full_(v.flat_chunk(chunk_)),
        slots_(std::min<std::uint64_t>(slots, chunks_)) {
    const std::size_t slot_elements = static_cast<std::size_t>(std::min<std::uint64_t>(chunk_, count_));
    // A slot: each streamed input's scratch (none for one held in memory), then the result.
    std::vector<std::size_t> in_bytes;
    for (std::size_t i = 0; i < inputs_.size(); ++i)
      in_bytes.push_back(inputs_[i].chunk_needs_scratch()
                             ? round_up(slot_elements * dtype_info(v.inputs()[i].dtype).size, kArenaAlignment)
                             : 0);
    const std::size_t out_bytes = round_up(slot_elements * out_size_, kArenaAlignment);
    std::size_t slot_bytes = out_bytes;
    for (std::size_t n : in_bytes) slot_bytes += n;
    arena_ = AlignedBuffer(slot_bytes * slots_.size());
    std::byte* p = arena_.data();
    for (Slot& slot : slots_) {
      for (std::size_t n : in_bytes) {
        slot.in.push_back(p);
        p += n;
      }
      slot.out = p;
      p += out_bytes;
    }
  }

  std::uint64_t chunks() const { return chunks_; }
  std::size_t slot_count() const { return slots_.size(); }

  // The pipeline's producer: records a failure in the chunk's slot and returns false.
  bool produce(std::uint64_t c) {
    Slot& slot = slots_[c % slots_.size()];
    try {
      compute(c, slot);
      return true;
    } catch (...) {
      slot.error = std::current_exception();
      return false;
    }
  }

  // Throws the producer's failure on this chunk, if any.
  void consume(std::uint64_t c) {
    Slot& slot = slots_[c % slots_.size()];
    if (slot.error) std::rethrow_exception(slot.error);
    throw_if_interrupted();
    Stopwatch watch;
    out_.write(std::span<const std::byte>(slot.out, slot.n * out_size_));
    slot.write_s += watch.lap();
    if (progress_) progress_(done_after(c), count_);
  }

  // The chunks cut in slot_count() contiguous slices, the first on the calling thread and each
  // other on a thread of its own, each reading, computing and writing its chunks at their
  // offsets in the output. The first failure of any (in time) stops all and is thrown once all
  // have stopped; progress is reported from the calling thread, as elements done by all. A
  // slice whose thread could not be started is run by the calling thread after its own.
  void run_slices() {
    const std::size_t n = slots_.size();
    // Earlier slices take the odd chunks: two slices of five chunks are 0-2 and 3-4.
    const auto slice_start = [&](std::size_t t) { return (chunks_ * t + n - 1) / n; };
    std::atomic<std::uint64_t> others_done{0};  // elements the other threads have written
    std::mutex m;
    std::exception_ptr first_error;
    std::atomic<bool> stop{false};
    const auto fail = [&](std::exception_ptr e) {
      {
        std::lock_guard lock(m);
        if (!first_error) first_error = std::move(e);
      }
      stop = true;
    };
    const auto run_slice = [&](std::size_t t, Slot& slot, std::atomic<std::uint64_t>* done) {
      for (std::uint64_t c = slice_start(t); c < slice_start(t + 1) && !stop; ++c) {
        write_at_offset(c, slot);
        if (done) done->fetch_add(slot.n, std::memory_order_relaxed);
      }
    };
    std::vector<std::thread> others;
    std::vector<std::size_t> left;  // slices no thread could be started for
    for (std::size_t t = 1; t < n; ++t) {
      try {
        others.emplace_back([&, t] {
          keep_signals_off_this_thread();  // signals stay with the calling thread
          try {
            run_slice(t, slots_[t], &others_done);
          } catch (...) {
            fail(std::current_exception());
          }
        });
      } catch (const std::system_error&) {
        left.push_back(t);
      }
    }
    std::uint64_t mine = 0;
    std::uint64_t reported = 0;
    const auto report = [&] {
      const std::uint64_t done = mine + others_done.load(std::memory_order_relaxed);
      if (progress_ && done > reported && !stop) progress_(done, count_);
      reported = done;
    };
    try {
      for (std::uint64_t c = 0; c < slice_start(1) && !stop; ++c) {
        write_at_offset(c, slots_[0]);
        mine += slots_[0].n;
        report();
      }
      for (const std::size_t t : left) {
        for (std::uint64_t c = slice_start(t); c < slice_start(t + 1) && !stop; ++c) {
          write_at_offset(c, slots_[0]);
          mine += slots_[0].n;
          report();
        }
      }
    } catch (...) {
      fail(std::current_exception());
    }
    for (auto& th : others) th.join();
    try {
      report();  // the other threads' last chunks
    } catch (...) {
      fail(std::current_exception());
    }
    if (first_error) std::rethrow_exception(first_error);
  }

  // The seconds each step took, summed over the chunks and the threads.
  double read_s() const { return sum(&Slot::read_s); }
  double execute_s() const { return sum(&Slot::execute_s); }
  double write_s() const { return sum(&Slot::write_s); }

 private:
  struct Slot {
    std::vector<std::byte*> in;  // into arena_ (each input's scratch; unused for one held in memory)
    std::byte* out = nullptr;    // into arena_
    std::size_t n = 0;
    std::exception_ptr error;                       // the producer failed on this chunk (and stopped)
    double read_s = 0, execute_s = 0, write_s = 0;  // by the thread that used the slot
  };

  std::uint64_t done_after(std::uint64_t c) const { return std::min<std::uint64_t>((c + 1) * chunk_, count_); }

  void compute(std::uint64_t c, Slot& slot) {
    Stopwatch watch;
    throw_if_interrupted();
    const std::uint64_t first = c * chunk_;
    slot.n = static_cast<std::size_t>(std::min<std::uint64_t>(chunk_, count_ - first));
    GraphBuffers buffers;
    for (std::size_t i = 0; i < inputs_.size(); ++i) {
      const auto bytes = inputs_[i].chunk(first, slot.n, slot.in[i]);
      buffers.inputs.push_back({bytes.data(), bytes.size()});
    }
    for (const Tensor& constant : constants_)
      buffers.constants.push_back(
          flat_cut(constant.view().bytes(), constant.dtype(), constant.shape(), v_.output_shape(), first, slot.n));
    slot.read_s += watch.lap();
    buffers.output = {slot.out, slot.n * out_size_};
    run_graph_once(backend_, slot.n == chunk_ ? full_ : v_.flat_chunk(slot.n), buffers);
    slot.execute_s += watch.lap();
  }

  void write_at_offset(std::uint64_t c, Slot& slot) {
    compute(c, slot);
    Stopwatch watch;
    out_.write_at(data_offset_ + c * chunk_ * out_size_, std::span<const std::byte>(slot.out, slot.n * out_size_));
    slot.write_s += watch.lap();
  }

  double sum(double Slot::*field) const {
    double t = 0;
    for (const Slot& slot : slots_) t += slot.*field;
    return t;
  }

  const ValidatedGraph& v_;
  std::vector<LoadedOperand>& inputs_;
  const std::vector<Tensor>& constants_;
  Backend& backend_;
  OutputFile& out_;
  const ProgressFn& progress_;
  const std::uint64_t data_offset_;
  const std::size_t out_size_;
  const std::uint64_t count_;
  const std::size_t chunk_;
  const std::uint64_t chunks_;
  const ValidatedGraph full_;  // the graph on one whole chunk
  AlignedBuffer arena_;        // every slot's buffers
  std::vector<Slot> slots_;
};

// A streamed operation whose backend moves the bytes itself (Backend::run_staged, the d3d12
// backend's transfer pieces): each input's elements are read straight into the backend's
// staging memory (chunk() into it: pread for a file) and the output written straight from it,
// at offsets in a new file, in order otherwise; interrupts and progress come between the
// backend's pieces. Returns false, having done nothing, when the backend does not.
bool write_staged(const ValidatedOp& v, std::vector<LoadedOperand>& inputs, Backend& backend, OutputFile& out,
                  std::uint64_t data_offset, const ProgressFn& progress, PhaseClock& phase, PhaseSeconds& s) {
  class Io final : public StagedIo {
   public:
    Io(const ValidatedOp& v, std::vector<LoadedOperand>& inputs, OutputFile& out, std::uint64_t data_offset,
       const ProgressFn& progress)
        : inputs_(inputs),
          out_(out),
          progress_(progress),
          data_offset_(data_offset),
          in_size_(dtype_info(v.input_dtype()).size),
          out_size_(dtype_info(v.output_dtype()).size),
          count_(v.output_shape().element_count()) {}
    bool concurrent_reads() const override {
      return std::all_of(inputs_.begin(), inputs_.end(),
                         [](const LoadedOperand& in) { return in.stream ? in.stream->seekable() : !in.converts(); });
    }
    bool concurrent_writes() const override { return out_.writes_at_offsets(); }
    void read_input(std::size_t i, std::uint64_t first, std::span<std::byte> dst) override {
      throw_if_interrupted();
      const Stopwatch watch;
      const auto bytes = inputs_[i].chunk(first, dst.size() / in_size_, dst.data());
      if (bytes.data() != dst.data()) std::copy_n(bytes.data(), bytes.size(), dst.data());  // held in memory
      read_s.fetch_add(watch.seconds(), std::memory_order_relaxed);
    }
    void write_output(std::uint64_t first, std::span<const std::byte> src) override {
      const Stopwatch watch;
      if (out_.writes_at_offsets()) out_.write_at(data_offset_ + first * out_size_, src);
      else out_.write(src);
      write_s.fetch_add(watch.seconds(), std::memory_order_relaxed);
    }
    void written(std::uint64_t done) override {
      throw_if_interrupted();
      if (progress_) progress_(done, count_);
    }
    std::atomic<double> read_s{0}, write_s{0};  // summed over the threads that read and wrote

   private:
    std::vector<LoadedOperand>& inputs_;
    OutputFile& out_;
    const ProgressFn& progress_;
    const std::uint64_t data_offset_;
    const std::size_t in_size_, out_size_;
    const std::uint64_t count_;
  };
  Io io(v, inputs, out, data_offset, progress);
  s.write += phase.lap();  // creating the output and writing its header
  if (!backend.run_staged(v, io)) return false;
  // The run's wall-clock time: reading and writing as long as they took (shared in their
  // proportion where threads made them longer than the run), the rest computing.
  const double loop = phase.lap();
  const double read = io.read_s.load(), written = io.write_s.load();
  const double scale = read + written > loop ? loop / (read + written) : 1.0;
  s.read += read * scale;
  s.write += written * scale;
  s.execute += loop - (read + written) * scale;
  for (auto& in : inputs)
    if (in.stream) in.stream->finish();
  s.read += phase.lap();
  return true;
}

// A streamed operation written chunk by chunk after the header (`data_offset` bytes), on one
// thread or two (thread_choice).
void write_chunks(const ValidatedGraph& v, std::vector<LoadedOperand>& inputs, const std::vector<Tensor>& constants,
                  Backend& backend, unsigned threads, const StreamOptions& options, OutputFile& out,
                  std::uint64_t data_offset, const ProgressFn& progress, PhaseClock& phase, PhaseSeconds& s) {
  const ThreadChoice choice = thread_choice(v, inputs, backend, threads, out.writes_at_offsets(), options);
  Split split = choice.split;
  // On the default thread count, what the process's other runs leave of the budget (calls from
  // several threads at once: ThreadLease).
  std::optional<ThreadLease> lease;
  if (split == Split::slices && cpu_threads_are_default(threads)) lease.emplace(choice.threads);
  const unsigned slices = lease ? lease->threads() : choice.threads;
  if (split == Split::slices && slices < 2) split = Split::one;
  ChunkWriter writer(v, inputs, constants, backend, out, data_offset, progress,
                     split == Split::one      ? 1
                     : split == Split::slices ? slices
                                              : kStreamSlots);
  auto produce = [&](std::uint64_t c) { return writer.produce(c); };
  auto consume = [&](std::uint64_t c) { writer.consume(c); };
  s.write += phase.lap();  // creating the output and writing its header
  if (split == Split::slices) writer.run_slices();
  const bool ran = split == Split::slices ||
                   (split == Split::pipeline && run_pipelined(writer.chunks(), writer.slot_count(), produce, consume));
  if (!ran) {
    for (std::uint64_t c = 0; c < writer.chunks(); ++c) {
      produce(c);
      consume(c);
    }
  }
  const double loop = phase.lap();
  if (split == Split::slices) {
    // Threads each read, computed and wrote: the loop's wall-clock time is shared in the
    // proportion of their summed steps, so that the phases add up to the total.
    const double all = writer.read_s() + writer.execute_s() + writer.write_s();
    if (all > 0) {
      s.read += loop * writer.read_s() / all;
      s.execute += loop * writer.execute_s() / all;
      s.write += loop * writer.write_s() / all;
    }
  } else {
    // The loop's wall-clock time, less its writing, went to reading and computing: all of it
    // on one thread, or, when they overlap the writing on a second one, the time the writer
    // waited for them. Shared in the proportion the producer spent on each.
    s.write += writer.write_s();
    const double rest = std::max(0.0, loop - writer.write_s());
    const double produced = writer.read_s() + writer.execute_s();
    const double read_share = produced > 0 ? writer.read_s() / produced : 0.0;
    s.read += rest * read_share;
    s.execute += rest * (1 - read_share);
  }
  for (auto& in : inputs)
    if (in.stream) in.stream->finish();
  s.read += phase.lap();
}

// The phases after validation and the bytes one execution reads and writes.
void record_phases(RunTiming& t, const PhaseSeconds& s, const ValidatedGraph& v, const Backend& backend) {
  t.phases[0].seconds += s.read;
  t.phases.push_back({"execute", s.execute});
  t.phases.push_back({"write", s.write});
  t.backend_phases = backend.detail_phases();
  t.execute_bytes = v.output_bytes() + v.input_bytes();
}

}  // namespace

RunResult finish_streamed(const PreparedRequest& p, StartedRun&& run, const std::string& out_path,
                          bool output_at_offsets, const RunHooks& hooks, const StreamOptions& options) {
  const OperationRequest& spec = p.request();
  if (spec.repeat != 1 || spec.warmup != 0 || !run.clock.on())
    throw Error(Errc::internal, "finish_streamed runs once, timed");
  RunResult& r = run.result;
  Backend& backend = *run.backend;
  PhaseClock& phase = run.clock;
  std::vector<LoadedOperand>& inputs = run.inputs;
  const ValidatedGraph& v = *run.graph;
  const unsigned threads = p.threads();
  // The device as this run uses it: a streamed run computes chunk by chunk (ChunkWriter).
  if (v.is_flat_streamable()) {
    const std::uint64_t count = v.output_shape().element_count();
    const ThreadChoice choice = thread_choice(v, inputs, backend, threads, output_at_offsets, options);
    r.timing.device =
        backend.device_description_for(v.flat_chunk(std::min<std::uint64_t>(chunk_elements(v), count)).output_node().op,
                                       choice.threads - 1, choice.why);
  } else {
    r.timing.device = backend.device_description_for(v.output_node().op, false);
  }
  if (hooks.on_validated) hooks.on_validated(r.op, r.timing);

  r.streamed = materialize_unstreamable(v, inputs);
  PhaseSeconds s;
  s.read = phase.lap();
  std::optional<Tensor> whole;
  if (!r.streamed) whole = compute_whole(v, inputs, run.constants, backend, phase, s);
  OutputFile out(out_path);
  const std::string header = npy_header(v.output_dtype(), v.output_shape());
  out.write(header);
  // One operator whose backend moves the bytes itself (staged) streams through it.
  const bool one_operator = v.is_single_operator();
  if (whole) out.write(whole->view().bytes());
  else if (!one_operator ||
           !write_staged(v.output_node().op, inputs, backend, out, header.size(), hooks.progress, phase, s))
    write_chunks(v, inputs, run.constants, backend, threads, options, out, header.size(), hooks.progress, phase, s);
  for (auto& in : inputs)
    if (in.stream) in.stream->close();  // --in-place: A is replaced next
  out.commit();
  s.write += phase.lap();
  record_phases(r.timing, s, v, backend);
  r.timing.total_seconds = phase.total_seconds();
  r.execute_samples = {r.timing.phase("execute")};
  return std::move(r);
}

RunResult stream_operation(const PreparedRequest& p, const std::string& out_path, const RunHooks& hooks,
                           const StreamOptions& options) {
  return finish_streamed(p, start_run(p, LoadMode::streams, nullptr, true), out_path, !writes_in_place(out_path), hooks,
                         options);
}

}  // namespace dmlbits

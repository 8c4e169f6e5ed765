#include "dmlbits/stream.hpp"

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>

#include <fmt/format.h>

#include "cpu_backend.hpp"
#include "dmlbits/error.hpp"
#include "dmlbits/interrupt.hpp"
#include "dmlbits/io.hpp"
#include "npy_stream.hpp"
#include "signals.hpp"

namespace dmlbits {
namespace {

// Chunks in flight: one being read and computed, one being written, and two spare, so that a
// thread the scheduler delays on a busy machine rarely holds up the other.
constexpr std::size_t kStreamSlots = 4;

// Runs produce(c) for every chunk c on a second thread while the calling thread runs
// consume(c) in order, at most `slots` chunks apart. Reading and computing a chunk (pread,
// the kernel: about a third of a streamed `and`) then overlap with writing the previous one,
// whose cost on a new output file is mostly the kernel allocating page-cache pages. (On the
// loaded 2-vCPU test host the gain over the same loop on one thread was within the noise,
// -8% to +8%; see testdata/benchmarks.md.) produce records its failure in the chunk's slot,
// returns false and stops there; consume throws it.
// Returns false, having run nothing, when there is no second core or thread to be had, the
// backend is not a CPU one (a device backend is kept on the thread that created it), or it is
// held to one thread (`threads`, as --threads: 1, or DMLBITS_THREADS=1 for 0).
template <class Produce, class Consume>
bool run_pipelined(std::uint64_t chunks, std::size_t slots, const Backend& backend, unsigned threads, Produce& produce,
                   Consume& consume) {
  if (chunks < 2 || std::thread::hardware_concurrency() < 2 || backend.name().substr(0, 3) != "cpu" ||
      cpu_threads(threads) < 2)
    return false;
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

}  // namespace

StreamResult stream_operation(const OperationSpec& spec, const std::string& out_path, const ProgressFn& progress,
                              const std::function<void(const ValidatedOp&, const RunTiming&)>& on_validated) {
  if (spec.repeat != 1 || spec.warmup != 0) throw Error(Errc::internal, "stream_operation runs once");
  Stopwatch total;
  Stopwatch phase;
  StreamResult r;
  check_backend_options(spec.backend, backend_options(spec));  // a wrong --backend before any reading

  std::vector<LoadedOperand> inputs = load_operands(spec.operands, spec.dtype, LoadMode::streams);
  double read_s = phase.lap();
  auto backend = make_operation_backend(spec, inputs);
  const double backend_s = phase.lap();

  r.op = std::make_unique<ValidatedOp>(validate_operation(spec, inputs, *backend));
  const ValidatedOp& v = *r.op;
  r.timing.backend = std::string(backend->name());
  r.timing.device = backend->device_description();
  r.timing.selection = backend->selection_reason();
  r.timing.phases.push_back({"read", read_s});
  r.timing.phases.push_back({"backend", backend_s});
  r.timing.phases.push_back({"validate", phase.lap()});
  if (on_validated) on_validated(v, r.timing);

  // Inputs that are not full-size runs of the output are read whole: broadcast operands and
  // everything when the operation broadcasts along an axis.
  r.streamed = v.is_flat_streamable();
  for (auto& in : inputs)
    if (in.stream && (!r.streamed || !(in.shape() == v.output_shape()))) in.materialize();
  read_s = phase.lap();

  double execute_s = 0, write_s = 0;
  const std::size_t out_size = dtype_info(v.output_dtype()).size;
  const std::size_t in_size = dtype_info(v.input_dtype()).size;
  const std::uint64_t count = v.output_shape().element_count();
  OutputFile out(out_path);
  out.write(npy_header(v.output_dtype(), v.output_shape()));

  if (!r.streamed) {
    Tensor result(v.output_dtype(), v.output_shape());
    ExecuteBuffers buffers;
    for (const auto& in : inputs) buffers.inputs.push_back({in.tensor.data(), in.tensor.byte_size()});
    buffers.output = {result.data(), result.byte_size()};
    write_s += phase.lap();  // creating the output and writing its header
    backend->run(v, buffers);
    execute_s = phase.lap();
    out.write(result.view().bytes());
    write_s = phase.lap();
  } else {
    const std::size_t chunk = std::max<std::size_t>(1, kStreamChunkBytes / std::max(in_size, out_size));
    const std::uint64_t chunks = (count + chunk - 1) / chunk;
    const std::size_t slot_elements = static_cast<std::size_t>(std::min<std::uint64_t>(chunk, count));
    const ValidatedOp full = v.flat_chunk(chunk);
    // A slot is one chunk's input buffers and result. The producer fills slots in order (reads the
    // streamed inputs, runs the backend); the consumer writes them out in order, so results,
    // errors and progress come exactly as from a plain loop.
    struct Slot {
      std::vector<AlignedBuffer> in;
      AlignedBuffer out;
      std::size_t n = 0;
      std::exception_ptr error;  // the producer failed on this chunk (and stopped)
    };
    const std::size_t slot_count = std::min<std::uint64_t>(kStreamSlots, chunks);
    std::vector<Slot> slots(slot_count);
    for (Slot& slot : slots) {
      for (const auto& in : inputs) slot.in.emplace_back(in.chunk_needs_scratch() ? slot_elements * in_size : 0);
      slot.out = AlignedBuffer(slot_elements * out_size);
    }
    double produce_read_s = 0, produce_execute_s = 0;
    auto produce = [&](std::uint64_t c) {
      Slot& slot = slots[c % slot_count];
      try {
        Stopwatch watch;
        throw_if_interrupted();
        const std::uint64_t first = c * chunk;
        slot.n = static_cast<std::size_t>(std::min<std::uint64_t>(chunk, count - first));
        ExecuteBuffers buffers;
        for (std::size_t i = 0; i < inputs.size(); ++i) {
          const auto bytes = inputs[i].chunk(first, slot.n, slot.in[i].data());
          buffers.inputs.push_back({bytes.data(), bytes.size()});
        }
        produce_read_s += watch.lap();
        buffers.output = {slot.out.data(), slot.n * out_size};
        backend->run(slot.n == chunk ? full : v.flat_chunk(slot.n), buffers);
        produce_execute_s += watch.lap();
        return true;
      } catch (...) {
        slot.error = std::current_exception();
        return false;
      }
    };
    auto consume = [&](std::uint64_t c) {
      Slot& slot = slots[c % slot_count];
      if (slot.error) std::rethrow_exception(slot.error);
      throw_if_interrupted();
      Stopwatch watch;
      out.write(std::span<const std::byte>(slot.out.data(), slot.n * out_size));
      write_s += watch.lap();
      if (progress) progress(std::min<std::uint64_t>((c + 1) * chunk, count), count);
    };
    write_s += phase.lap();  // creating the output and writing its header
    const double write_before = write_s;
    if (!run_pipelined(chunks, slot_count, *backend, spec.threads, produce, consume)) {
      for (std::uint64_t c = 0; c < chunks; ++c) {
        produce(c);
        consume(c);
      }
    }
    // The loop's wall-clock time, less its writing, went to reading and computing: all of it
    // on one thread, or, when they overlap the writing on a second one, the time the writer
    // waited for them. Shared in the proportion the producer spent on each, so that the
    // phases add up to the total.
    const double rest = std::max(0.0, phase.lap() - (write_s - write_before));
    const double produced = produce_read_s + produce_execute_s;
    const double read_share = produced > 0 ? produce_read_s / produced : 0.0;
    read_s += rest * read_share;
    execute_s += rest * (1 - read_share);
    for (auto& in : inputs)
      if (in.stream) in.stream->finish();
    read_s += phase.lap();
  }
  out.commit();
  write_s += phase.lap();
  r.timing.phases[0].seconds += read_s;
  r.timing.phases.push_back({"execute", execute_s});
  r.timing.phases.push_back({"write", write_s});
  r.timing.backend_phases = backend->detail_phases();
  r.timing.execute_bytes = count * out_size;
  for (const auto& in : inputs) r.timing.execute_bytes += in.shape().byte_size(in_size);
  r.timing.total_seconds = total.seconds();
  return r;
}

}  // namespace dmlbits

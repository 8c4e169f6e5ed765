#include "dmlbits/stream.hpp"

#include <fmt/format.h>

#include "dmlbits/error.hpp"
#include "dmlbits/interrupt.hpp"
#include "dmlbits/io.hpp"

namespace dmlbits {

StreamResult stream_operation(const OperationSpec& spec, const std::string& out_path, const ProgressFn& progress,
                              const std::function<void(const ValidatedOp&, const RunTiming&)>& on_validated) {
  if (spec.repeat != 1 || spec.warmup != 0) throw Error(Errc::internal, "stream_operation runs once");
  Stopwatch total;
  Stopwatch phase;
  StreamResult r;
  auto backend = make_backend(spec.backend, BackendOptions{spec.isa});

  std::vector<LoadedOperand> inputs = load_operands(spec.operands, spec.dtype, LoadMode::streams);
  double read_s = phase.lap();

  r.op = std::make_unique<ValidatedOp>(validate_operation(spec, inputs, *backend));
  const ValidatedOp& v = *r.op;
  r.timing.backend = std::string(backend->name());
  r.timing.device = backend->device_description();
  r.timing.phases.push_back({"read", read_s});
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
    phase.lap();
    backend->run(v, buffers);
    execute_s = phase.lap();
    out.write(result.view().bytes());
    write_s = phase.lap();
  } else {
    const std::size_t chunk = std::max<std::size_t>(1, kStreamChunkBytes / std::max(in_size, out_size));
    std::vector<AlignedBuffer> in_buffers;
    ExecuteBuffers buffers;
    for (const auto& in : inputs) {
      if (in.stream) {
        in_buffers.emplace_back(std::min<std::uint64_t>(chunk, count) * in_size);
        buffers.inputs.push_back({in_buffers.back().data(), in_buffers.back().size()});
      } else {
        buffers.inputs.push_back({in.tensor.data(), in.tensor.byte_size()});  // one element, broadcast
      }
    }
    AlignedBuffer out_buffer(std::min<std::uint64_t>(chunk, count) * out_size);
    const ValidatedOp full = v.flat_chunk(chunk);
    for (std::uint64_t done = 0; done < count;) {
      throw_if_interrupted();
      const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(chunk, count - done));
      phase.lap();
      for (std::size_t i = 0, b = 0; i < inputs.size(); ++i)
        if (inputs[i].stream) inputs[i].stream->read(done, n, in_buffers[b++].data());
      read_s += phase.lap();
      buffers.output = {out_buffer.data(), n * out_size};
      backend->run(n == chunk ? full : v.flat_chunk(n), buffers);
      execute_s += phase.lap();
      out.write(std::span<const std::byte>(out_buffer.data(), n * out_size));
      write_s += phase.lap();
      done += n;
      if (progress) progress(done, count);
    }
    for (auto& in : inputs)
      if (in.stream) in.stream->finish();
    read_s += phase.lap();
  }
  out.commit();
  write_s += phase.lap();
  r.timing.phases[0].seconds += read_s;
  r.timing.phases.push_back({"execute", execute_s});
  r.timing.phases.push_back({"write", write_s});
  r.timing.execute_bytes = count * out_size;
  for (const auto& in : inputs) r.timing.execute_bytes += in.shape().byte_size(in_size);
  r.timing.total_seconds = total.seconds();
  return r;
}

}  // namespace dmlbits

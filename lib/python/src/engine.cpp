#include "engine.hpp"

#include <atomic>
#include <map>
#include <memory>
#include <utility>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "dmlbits/compare.hpp"
#include "dmlbits/dml_desc.hpp"
#include "dmlbits/error.hpp"
#include "dmlbits/io.hpp"
#include "dmlbits/stats.hpp"

namespace dmlbits::python {

RunOptions make_run_options(const std::string& backend, const std::string& feature_level,
                            const std::string& shift_overflow, const std::string& out_dtype, unsigned threads,
                            const std::string& isa, const std::string& adapter) {
  static std::atomic<std::uint64_t> next_id{1};
  RunOptions o;
  if (!backend.empty()) {
    const auto kind = parse_backend(backend);
    if (!kind) throw Error(Errc::usage, fmt::format("unknown backend '{}' (available: {})", backend, backend_names_help()));
    o.backend = *kind;
  }
  o.isa = isa;
  o.adapter = adapter;
  o.threads = threads;
  if (!feature_level.empty()) {
    const auto level = parse_feature_level(feature_level);
    if (!level)
      throw Error(Errc::usage, fmt::format("feature_level: unknown level '{}' (1_0 to {}, also written 4.1 or "
                                           "DML_FEATURE_LEVEL_4_1)", feature_level,
                                           newest_feature_level().short_name()));
    o.level = *level;
  }
  if (!shift_overflow.empty()) {
    const auto mode = parse_shift_overflow(shift_overflow);
    if (!mode)
      throw Error(Errc::usage, fmt::format("shift_overflow: unknown mode '{}' ({})", shift_overflow,
                                           shift_overflow_names_help("'")));
    o.shift_overflow = *mode;
  }
  if (!out_dtype.empty()) {
    const auto d = parse_dtype_name(out_dtype);
    if (!d) throw Error(Errc::usage, fmt::format("out_dtype: unknown data type '{}' (known: {})", out_dtype, dtype_names_help()));
    o.out_dtype = *d;
  }
  BackendOptions b{.isa = o.isa, .threads = o.threads, .adapter = o.adapter};
  check_backend_options(o.backend, b);
  o.id = next_id++;
  return o;
}

Backend& backend_for(const RunOptions& options, const std::vector<OperandInfo>& operands) {
  BackendOptions b{.isa = options.isa, .threads = options.threads, .adapter = options.adapter};
  b.size_hint = output_size_hint(operands);
  // auto decides by the output's size: small and large outputs may get different backends.
  const bool large = options.backend == BackendKind::automatic && b.size_hint >= kAutoGpuMinBytes;
  thread_local std::map<std::pair<std::uint64_t, bool>, std::unique_ptr<Backend>> cache;
  auto& slot = cache[{options.id, large}];
  if (!slot) {
    if (cache.size() > 64) {  // options made and dropped by the thousand: start again
      cache.clear();
      return backend_for(options, operands);
    }
    slot = make_backend(options.backend, b);
  }
  return *slot;
}

ValidatedOp validate_call(OpKind op, const RunOptions& options, const std::vector<OperandInfo>& operands,
                          bool in_place, const Backend& backend) {
  OpRequest request;
  request.op = op;
  request.level = options.level;
  request.inputs = operands;
  request.out_dtype = options.out_dtype;
  request.shift_overflow = options.shift_overflow;
  request.in_place = in_place;
  ValidatedOp v = validate(request);
  if (auto why = backend.unsupported_reason(v))
    throw Error(Errc::unsupported,
                fmt::format("{}: the {} backend cannot run this: {}", v.op().verb, backend.name(), *why));
  return v;
}

std::vector<Tensor> read_literals(const std::vector<std::string>& texts, std::optional<DType> dtype,
                                  std::optional<DType> anchor) {
  // load_operands names each operand by its position (A, B): an array operand stands in as
  // the literal 0 in the anchor's dtype, read and dropped.
  std::vector<std::string> operands;
  for (const auto& t : texts) {
    if (!t.empty() && classify_operand(t) == OperandKind::file)
      throw Error(Errc::usage, fmt::format("operand {}: '{}' is not a literal (literals are integers: 5, -1, 0xff, "
                                           "0b101, or JSON arrays: [1, 2])", static_cast<char>('A' + operands.size()), t));
    operands.push_back(t.empty() ? "0" : t);
  }
  std::vector<LoadedOperand> loaded = load_operands(operands, dtype ? dtype : anchor);
  std::vector<Tensor> out;
  for (std::size_t i = 0; i < texts.size(); ++i)
    if (!texts[i].empty()) out.push_back(std::move(loaded[i].tensor));
  return out;
}

void execute(Backend& backend, const ValidatedOp& op, const ExecuteBuffers& buffers,
             const std::function<void()>& between_chunks) {
  const std::uint64_t n = op.output_shape().element_count();
  const std::size_t out_size = dtype_info(op.output_dtype()).size;
  const std::size_t in_size = dtype_info(op.input_dtype()).size;
  std::uint64_t per_element = out_size;
  for (const auto& s : op.input_shapes())
    if (s.element_count() != 1) per_element += in_size;
  const std::uint64_t count = std::max<std::uint64_t>(1, kChunkBytes / per_element);
  if (op.desc().empty || n <= count || !op.is_flat_streamable()) {
    backend.run(op, buffers);
    return;
  }
  const ValidatedOp full = op.flat_chunk(count);
  std::optional<ValidatedOp> last;
  if (n % count) last = op.flat_chunk(n % count);
  for (std::uint64_t first = 0; first < n; first += count) {
    const std::uint64_t m = std::min(count, n - first);
    ExecuteBuffers part;
    for (std::size_t i = 0; i < buffers.inputs.size(); ++i) {
      const bool whole = op.input_shapes()[i].element_count() != 1;
      part.inputs.push_back(whole ? buffers.inputs[i].subspan(first * in_size, m * in_size) : buffers.inputs[i]);
    }
    part.output = buffers.output.subspan(first * out_size, m * out_size);
    backend.run(m == count ? full : *last, part);
    if (first + m < n) between_chunks();
  }
}

Tensor read_tensor_path(const std::string& path, std::optional<DType> dtype) {
  if (path == "-") throw Error(Errc::usage, "read_tensor: '-' (standard input) is for the command line; give a path");
  ReadOptions options;
  options.default_dtype = dtype;
  return std::move(read_tensor(path, options).tensor);
}

void write_tensor_path(const TensorView& t, const std::string& path, const std::string& format_name, bool hex) {
  if (path == "-") throw Error(Errc::usage, "write_tensor: '-' (standard output) is for the command line; give a path");
  std::optional<TensorFormat> format;
  if (!format_name.empty()) {
    format = parse_format_name(format_name);
    if (!format) throw Error(Errc::usage, fmt::format("format: unknown format '{}' (npy or json)", format_name));
  } else {
    format = format_from_extension(path);
    if (!format)
      throw Error(Errc::usage, fmt::format("cannot tell the output format from '{}': name it .npy or .json, or give format=", path));
  }
  write_tensor(t, path, *format, JsonWriteOptions{hex});
}

std::optional<std::string> compare_bits(const TensorView& actual, const TensorView& expected, std::size_t max_listed,
                                        const std::string& label) {
  const CompareReport r = compare_tensors(expected, actual, max_listed);
  if (r.equal()) return std::nullopt;
  return compare_text(r, label);
}

std::string explain_json_text(const ValidatedOp& op) { return to_json(op.desc()).dump(); }

SampleStatsJson sample_stats_json(const std::vector<double>& samples) {
  const SampleStats s = compute_stats(samples);
  return {to_json(s).dump(), s.median};
}

}  // namespace dmlbits::python

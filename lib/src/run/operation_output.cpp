#include "operation_output.hpp"

#include <optional>
#include <utility>

#include <fmt/format.h>

#include "dmlbits/error.hpp"
#include "dmlbits/front_end.hpp"
#include "io.hpp"
#include "run.hpp"
#include "standard_streams.hpp"
#include "stream.hpp"

namespace dmlbits {
namespace {

// Whether the result goes to a file (or standard output) at all.
bool writes_a_file(const OperationRequest& r) {
  if (r.output != OutputKind::automatic && r.output != OutputKind::file) return false;
  return !r.in_place || std::holds_alternative<std::string>(r.operands.front());
}

// output_streams without the format: whether the target's format is worth learning first.
bool may_stream(const PreparedRequest& p, const RunHooks& hooks) {
  const OperationRequest& r = p.request();
  return writes_a_file(r) && !r.keep_result && !hooks.before_write && !r.explain_only && r.repeat == 1 && r.warmup == 0;
}

}  // namespace

OutputTarget output_target(const OperationRequest& r) {
  std::optional<TensorFormat> format = r.format;
  std::string path = r.in_place ? std::get<std::string>(r.operands.front()) : r.path;
  if (path.empty()) {
    path = std::string("-");  // (a temporary: GCC 12 misreads assign("-") here, -Wrestrict)
    if (!format) format = TensorFormat::json;
  }
  if (!format && path == "-") format = TensorFormat::npy;
  if (!format && r.in_place) format = inspect_input(path).format;  // keep A's format (reads its header only)
  if (!format) format = format_from_extension(path);
  if (!format && is_device_or_pipe(path)) format = TensorFormat::npy;  // /dev/null, a FIFO
  if (!format) throw OptionError(OptionKey::format, OptionRule::cannot_tell, path);
  if (path == "-" && *format == TensorFormat::npy && standard_output_is_terminal())
    throw OptionError(OptionKey::format, OptionRule::binary_terminal);
  OutputTarget target{path, *format};
  target.json.hex = r.hex;
  if (*format == TensorFormat::npy) target.new_file = !writes_in_place(path);
  return target;
}

bool output_streams(const PreparedRequest& p, const RunHooks& hooks, TensorFormat target_format) {
  return may_stream(p, hooks) && target_format == TensorFormat::npy;
}

// The target is learnt before anything is read when the run could stream, so that a target
// refused fails before the work; otherwise after the run (finish_in_memory).
RunResult run(const PreparedRequest& p, const RunHooks& hooks, BackendCache* backends) {
  const OperationRequest& r = p.request();
  std::optional<OutputTarget> target;
  if (may_stream(p, hooks)) target = output_target(r);
  const bool streams = target && output_streams(p, hooks, target->format);
  StartedRun started = start_run(p, streams ? LoadMode::streams : in_memory_load_mode(p, hooks), backends,
                                 streams || run_is_timed(p, hooks));
  if (!streams) {
    if (!writes_a_file(r)) return finish_in_memory(p, std::move(started), hooks);
    return finish_in_memory(p, std::move(started), hooks,
                            [&] { return target ? *std::move(target) : output_target(r); });
  }
  return finish_streamed(p, std::move(started), target->path, target->new_file, hooks);
}

}  // namespace dmlbits

#include "dmlbits/timing.hpp"

#include <fmt/format.h>

#include "dmlbits/dtype.hpp"
#include "byte_size.hpp"
#include "dmlbits/error.hpp"

namespace dmlbits {
namespace {

std::string plural(unsigned n, std::string_view word) { return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s"); }

std::string thread_why_text(const ThreadWhy& why) {
  switch (why.use) {
    case ThreadUse::plain:
      break;
    case ThreadUse::small_output:
      return fmt::format("outputs under {} run on one", format_byte_size(why.bytes));
    case ThreadUse::per_size:
      return fmt::format("one per {} of output", format_byte_size(why.bytes));
    case ThreadUse::pipeline:
      return "one reads and computes, one writes";
    case ThreadUse::slices:
      return why.slices == 2 ? std::string("each reads, computes and writes half")
                             : fmt::format("each reads, computes and writes 1/{}", why.slices);
    case ThreadUse::small_stream:
      return fmt::format("streamed outputs under {} run on one", format_byte_size(why.bytes));
    case ThreadUse::two_streams:
      return "two streamed inputs through a pipe or device run on one";
    case ThreadUse::narrower:
      return "narrower outputs run on one";
  }
  return "";
}

std::string cpu_device_text(const DeviceDescription& d) {
  std::string out =
      fmt::format("CPU, {} kernels{}, ", d.isa, d.narrower_per_operation ? " (some narrower, per operation)" : "");
  if (d.why.use == ThreadUse::plain) return out + plural(d.threads, "thread");
  if (d.used != d.threads) return out + fmt::format("{} of {} threads ({})", d.used, d.threads, thread_why_text(d.why));
  return out + fmt::format("{} threads ({})", d.used, thread_why_text(d.why));
}

}  // namespace

std::string thread_team_reason(const ThreadTeam& team) {
  const std::string cpus = plural(team.cpus, "CPU");
  switch (team.limit) {
    case ThreadLimit::requested:
      return "as asked";
    case ThreadLimit::cpus:
      return fmt::format("{} this process may run on", cpus);
    case ThreadLimit::quota:
      return fmt::format("the cgroup's CPU quota of {:g} of the {} this process may run on", team.quota.value_or(0),
                         cpus);
    case ThreadLimit::knee:
      return fmt::format("{} of the {} this process may run on{}, where more stop paying for {} kernels", team.threads,
                         cpus, team.quota ? fmt::format(" (quota {:g})", *team.quota) : std::string(), team.isa);
    case ThreadLimit::size:
      break;
  }
  return "";
}

std::string thread_team_text(const ThreadTeam& team) {
  if (team.threads == 0) return "";
  return fmt::format("{}: {}", plural(team.threads, "thread"), thread_team_reason(team));
}

std::string device_text(const DeviceDescription& d) {
  switch (d.kind) {
    case DeviceKind::none:
      break;
    case DeviceKind::cpu:
      return cpu_device_text(d);
    case DeviceKind::cpu_reference:
      return "CPU reference (scalar loops)";
    case DeviceKind::d3d12:
      return fmt::format("{}, {} adapter {}, D3D feature level {}, shader model {}", d.adapter,
                         d.software ? "software" : "hardware", d.adapter_index, d.feature_level, d.shader_model);
    case DeviceKind::directml:
      // `devices` names the highest feature level the device reports; a run, the device alone.
      if (!d.feature_level.empty())
        return fmt::format("DirectML {} ({}), highest feature level {}, on {}", d.version, d.path, d.feature_level,
                           d.adapter);
      return fmt::format("DirectML {} ({}) on {}", d.version, d.path, d.adapter);
    case DeviceKind::not_built:
      return d.not_built;
  }
  return "";
}

std::string auto_estimate_text(const AutoEstimate& e) {
  const std::string label = fmt::format("adapter {} ({})", e.adapter_index, e.adapter_name);
  if (e.software)
    return label + " is software, slower than the CPU backend; named as the backend, d3d12 uses it anyway";
  const std::string_view path = e.uma ? "every byte copied into and out of its heaps by one thread"
                                      : "every byte copied into and out of its heaps by one thread, and over the bus";
  return fmt::format(
      "{} is {}: estimated {:.3g} s on d3d12 ({}, the device's creation) against {:.3g} s on the CPU "
      "backend's {}{}",
      label, e.uma ? "UMA" : "discrete", e.gpu_seconds, path, e.cpu_seconds, plural(e.cpu_threads, "thread"),
      e.gpu ? "" : "; named as the backend, d3d12 uses it anyway");
}

std::string selection_text(const Selection& s) {
  std::string why;
  switch (s.rule) {
    case SelectionRule::named:
      return "";
    case SelectionRule::small_output:
      why = fmt::format("the output ({}) is below {}, where the CPU beats starting a GPU device",
                        format_byte_size_below(s.output_bytes, s.min_bytes), format_byte_size(s.min_bytes, false));
      break;
    case SelectionRule::d3d12_not_built:
      why = "the d3d12 backend is " + s.detail;
      break;
    case SelectionRule::no_hardware:
      why = fmt::format("no hardware adapter ({})", s.detail);
      break;
    case SelectionRule::no_runtime:
      why = fmt::format("{} not found: {}", s.runtime, s.detail);
      break;
    case SelectionRule::no_adapter:
      why = "no D3D12 adapter: " + s.detail;
      break;
    case SelectionRule::software_only:
      why = fmt::format("no hardware adapter ({} {} software)", fmt::join(s.adapters, ", "),
                        s.adapters.size() == 1 ? "is" : "are");
      break;
    case SelectionRule::estimate:
      why = auto_estimate_text(s.estimate);
      break;
    case SelectionRule::device_failed:
      why = "the D3D12 device failed: " + s.detail;
      break;
  }
  return fmt::format("auto chose {}: {}", s.backend, why);
}

}  // namespace dmlbits

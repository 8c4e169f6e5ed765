#include "report.hpp"

#include <fmt/format.h>

#include "dmlbits/error.hpp"
#include "dmlbits/ops.hpp"
#include "dmlbits/timing.hpp"

namespace dmlbits::app {
namespace {

std::string dims_text(DimRange d) {
  return d.min == d.max ? fmt::format("{}", d.min) : fmt::format("{}-{}", d.min, d.max);
}

std::string outputs_text(const OpTier& t) { return t.outputs.empty() ? "same as input" : t.outputs.to_string(); }

}  // namespace

std::string info_text(const FileInfo& f) {
  std::string out = fmt::format("{}\n", f.path);
  const auto row = [&](std::string_view k, const std::string& v) { out += fmt::format("  {:<12}{}\n", k, v); };
  row("format", f.format == TensorFormat::npy ? fmt::format("npy {}", f.version) : "json");
  if (f.dtype) {
    const DTypeInfo& d = dtype_info(*f.dtype);
    std::string t = fmt::format("{} ({})", d.numpy_name, d.dml_enum_name());
    if (f.is_bool) t += ", read from NumPy bool";
    if (!f.descr.empty()) t += fmt::format(", descr '{}'", f.descr);
    row("dtype", t);
  } else {
    row("dtype", "not given (use --dtype)");
  }
  row("shape", f.shape.to_string());
  row("elements", fmt::format("{}", f.shape.element_count()));
  if (f.dtype) row("bytes", fmt::format("{}", f.shape.byte_size(dtype_info(*f.dtype).size)));
  row("byte order", f.byte_order);
  row("layout", f.fortran_order ? "Fortran (column-major)" : "C (row-major)");
  return out;
}

nlohmann::json info_json(const FileInfo& f) {
  nlohmann::json j = {{"path", f.path}, {"format", format_name(f.format)}};
  if (f.format == TensorFormat::npy) {
    j["version"] = f.version;
    j["descr"] = f.descr;
    j["header_bytes"] = f.header_bytes;
  }
  if (f.dtype) {
    j["dtype"] = dtype_info(*f.dtype).numpy_name;
    j["dml_dtype"] = dtype_info(*f.dtype).dml_name;
    j["bytes"] = f.shape.byte_size(dtype_info(*f.dtype).size);
  } else {
    j["dtype"] = nullptr;
  }
  j["numpy_bool"] = f.is_bool;
  j["shape"] = f.shape.dims();
  j["elements"] = f.shape.element_count();
  j["byte_order"] = f.byte_order;
  j["fortran_order"] = f.fortran_order;
  return j;
}

std::string ops_text(std::optional<FeatureLevel> level) {
  // The input-types column is as wide as its longest entry, so columns never run together.
  std::size_t types_width = std::string_view("INPUT TYPES").size();
  for (const auto& op : op_table())
    for (const auto& t : op.tiers) types_width = std::max(types_width, t.inputs.to_string().size());
  types_width += 2;
  std::string out;
  if (!level) {
    out += fmt::format("{:<9}{:<6}{:<6}{:<{}}{}\n", "OP", "FROM", "DIMS", "INPUT TYPES", types_width, "OUTPUT TYPES");
    for (const auto& op : op_table())
      for (const auto& t : op.tiers)
        out += fmt::format("{:<9}{:<6}{:<6}{:<{}}{}\n", op.verb, t.level.short_name(), dims_text(t.dims),
                           t.inputs.to_string(), types_width, outputs_text(t));
    out += "Each row holds from its level up to the next row's; nothing changes after 4_1.\n";
    return out;
  }
  // At one level the columns fit the rows in force there (3_0's types are shorter than 4_1's),
  // and the header is shown only over a row of them (at 1_0 no operator is available).
  types_width = std::string_view("INPUT TYPES").size();
  bool any = false;
  for (const auto& op : op_table())
    if (const OpTier* t = op.tier_at(*level)) {
      types_width = std::max(types_width, t->inputs.to_string().size());
      any = true;
    }
  types_width += 2;
  out += fmt::format("At {}:\n", level->enum_name());
  if (any) out += fmt::format("{:<9}{:<6}{:<{}}{}\n", "OP", "DIMS", "INPUT TYPES", types_width, "OUTPUT TYPES");
  for (const auto& op : op_table()) {
    const OpTier* t = op.tier_at(*level);
    if (!t) out += fmt::format("{:<9}not available (needs {})\n", op.verb, op.introduced().enum_name());
    else
      out += fmt::format("{:<9}{:<6}{:<{}}{}\n", op.verb, dims_text(t->dims), t->inputs.to_string(), types_width,
                         outputs_text(*t));
  }
  return out;
}

std::string ops_roff() {
  std::string out;
  for (const auto& op : op_table())
    for (const auto& t : op.tiers)
      // tbl text blocks (T{ T}) let the long type lists fold to the terminal's width.
      out += fmt::format("{}\t{}\t{}\tT{{\n{}\nT}}\tT{{\n{}\nT}}\n", op.verb, t.level.short_name(), dims_text(t.dims),
                         t.inputs.to_string(), outputs_text(t));
  return out;
}

std::string timing_text(const RunTiming& t, const RunDescription& what) {
  std::string out = fmt::format("timing: {} {} {} at {}, {} backend ({})\n", what.op, dtype_info(what.dtype).dml_name,
                                what.shape.to_string(), what.level.short_name(), t.backend, device_text(t.device));
  for (const auto& p : t.phases) {
    out += fmt::format("  {:<10}{:>12.3f} ms", p.name, p.seconds * 1e3);
    if (p.name == "execute" && t.execute_runs > 1)  // the phase is every measured run: say so
      out += fmt::format("  sum of {} runs of {} bytes, {:.2f} GB/s over them", t.execute_runs, t.execute_bytes,
                         t.execute_gbps());
    else if (p.name == "execute") out += fmt::format("  {} bytes, {:.2f} GB/s", t.execute_bytes, t.execute_gbps());
    out += "\n";
  }
  out += fmt::format("  {:<10}{:>12.3f} ms\n", "total", t.total_seconds * 1e3);
  if (!t.backend_phases.empty()) {
    // Summed over every run of the backend (warm-up included) and its device creation.
    out += fmt::format("  {} backend phases, all runs:\n", t.backend);
    for (const auto& p : t.backend_phases) out += fmt::format("    {:<10}{:>10.3f} ms\n", p.name, p.seconds * 1e3);
  }
  if (what.execute_samples.size() > 1) {
    const SampleStats s = compute_stats(what.execute_samples);
    const auto ms = [](double v) { return v * 1e3; };
    out += fmt::format(
        "  execute over {} runs after {} warm-up: min {:.3f}, median {:.3f}, mean {:.3f}, p90 {:.3f}, "
        "max {:.3f}, stddev {:.3f} ms; {:.2f} GB/s at the median\n",
        s.count, what.warmup, ms(s.min), ms(s.median), ms(s.mean), ms(s.p90), ms(s.max), ms(s.stddev),
        s.median > 0 ? static_cast<double>(t.execute_bytes) / s.median / 1e9 : 0.0);
  }
  return out;
}

std::string exit_status_summary() {
  std::string out = "Exit status: 0 success";
  for (const auto& e : errc_table()) out += fmt::format(", {} {}", e.exit_status, e.name);
  return out + ".";
}

}  // namespace dmlbits::app

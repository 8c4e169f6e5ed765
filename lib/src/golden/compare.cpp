#include "compare.hpp"

#include "dmlbits/check.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "dmlbits/error.hpp"
#include "io.hpp"
#include "json_tensor.hpp"
#include "files.hpp"

namespace dmlbits {
namespace {

std::vector<std::uint64_t> unflatten(std::uint64_t i, const Shape& s) {
  std::vector<std::uint64_t> idx(s.rank());
  for (std::size_t k = s.rank(); k-- > 0;) {
    idx[k] = i % s[k];
    i /= s[k];
  }
  return idx;
}

std::string index_text(const std::vector<std::uint64_t>& idx) { return fmt::format("[{}]", fmt::join(idx, ", ")); }

std::string hex(std::uint64_t bits, std::size_t size) { return fmt::format("0x{:0{}x}", bits, size * 2); }

// A golden tensor. It must carry its data type: --dtype gives literals and inputs theirs, never
// the expected result's, so a JSON golden without "dtype" is refused with that said.
LoadedTensor read_golden(const std::string& path) {
  // .npy straight into its tensor (read_input), not read whole and then copied.
  InputContent in = with_context(fmt::format("reading {}", quote_path(path)), [&] { return read_input(path); });
  if (in.format == TensorFormat::npy) return LoadedTensor{std::move(in.tensor), TensorFormat::npy, in.npy};
  with_context(fmt::format("reading {}", quote_path(path)), [&] {
    const std::string_view text(reinterpret_cast<const char*>(in.json->bytes().data()), in.json->bytes().size());
    if (!JsonTensorDocument::parse(text).declared_dtype())
      throw OptionError(OptionKey::dtype, OptionRule::not_for_golden, {}, {}, {}, Errc::invalid_input);
  });
  return read_tensor_bytes(in.json->bytes(), path);
}

}  // namespace

Tensor read_golden_file(const std::string& path) { return std::move(read_golden(path).tensor); }

CompareReport compare_tensors(const TensorView& expected, const TensorView& actual, std::size_t max_listed) {
  CompareReport r;
  r.expected_dtype = expected.dtype;
  r.actual_dtype = actual.dtype;
  r.expected_shape = expected.shape;
  r.actual_shape = actual.shape;
  r.dtype_differs = expected.dtype != actual.dtype;
  r.shape_differs = !(expected.shape == actual.shape);
  if (r.dtype_differs || r.shape_differs) return r;
  r.elements = expected.element_count();
  const std::size_t size = dtype_info(expected.dtype).size;
  const std::size_t bytes = expected.byte_size();
  // Whole blocks first: equal data (the common case) costs one memcmp per block.
  constexpr std::size_t kBlock = 1 << 16;
  for (std::size_t off = 0; off < bytes; off += kBlock) {
    const std::size_t len = std::min(kBlock, bytes - off);
    if (std::memcmp(expected.data + off, actual.data + off, len) == 0) continue;
    for (std::size_t i = off / size; i < (off + len) / size; ++i) {
      const std::uint64_t e = load_bits(expected.data, size, i), a = load_bits(actual.data, size, i);
      if (e == a) continue;
      ++r.differing;
      if (r.listed.size() < max_listed) r.listed.push_back({i, unflatten(i, expected.shape), e, a});
    }
  }
  return r;
}

std::string compare_text(const CompareReport& r, const std::string& label, std::size_t max_shown) {
  if (r.dtype_differs)
    return fmt::format("mismatch with {}: dtype differs: expected {}, got {}\n", label,
                       dtype_info(r.expected_dtype).dml_name, dtype_info(r.actual_dtype).dml_name);
  if (r.shape_differs)
    return fmt::format("mismatch with {}: shape differs: expected {}, got {}\n", label, r.expected_shape.to_string(),
                       r.actual_shape.to_string());
  if (r.differing == 0)
    return fmt::format("match with {}: {} element{} identical\n", label, r.elements, r.elements == 1 ? "" : "s");
  const std::size_t size = dtype_info(r.expected_dtype).size;
  std::string out =
      fmt::format("mismatch with {}: {} of {} element{} differ{} ({})\n", label, r.differing, r.elements,
                  r.elements == 1 ? "" : "s", r.elements == 1 ? "s" : "", dtype_info(r.expected_dtype).dml_name);
  // A value and its bits: "300 (0x012c)"; a NaN or infinity, which JSON writes as its bit
  // pattern, is shown once.
  const auto value = [&](std::uint64_t bits) {
    const std::string v = format_json_value(r.expected_dtype, bits, false);
    return v.starts_with('"') ? hex(bits, size) : fmt::format("{} ({})", v, hex(bits, size));
  };
  const std::size_t shown = std::min(max_shown, r.listed.size());
  // Columns as wide as their widest cell (a UINT64 value with its bits is 41 characters).
  std::size_t index_w = 20, value_w = 24;
  for (std::size_t i = 0; i < shown; ++i) {
    const auto& m = r.listed[i];
    index_w = std::max(index_w, index_text(m.index).size());
    value_w = std::max({value_w, value(m.expected).size(), value(m.actual).size()});
  }
  // No header over no rows (--show 0): the first line has said how many differ.
  if (shown == 0) return out;
  out += fmt::format("  {:<{}} {:>{}} {:>{}}  {}\n", "index", index_w, "expected", value_w, "actual", value_w,
                     "differing bits (xor)");
  for (std::size_t i = 0; i < shown; ++i) {
    const auto& m = r.listed[i];
    const int bits = std::popcount(m.expected ^ m.actual);
    out += fmt::format("  {:<{}} {:>{}} {:>{}}  {} ({} bit{})\n", index_text(m.index), index_w, value(m.expected),
                       value_w, value(m.actual), value_w, hex(m.expected ^ m.actual, size), bits, bits == 1 ? "" : "s");
  }
  if (r.differing > shown) out += fmt::format("  ... {} more\n", r.differing - shown);
  return out;
}

nlohmann::json compare_json(const CompareReport& r) {
  nlohmann::json j = {
      {"equal", r.equal()},
      {"expected", {{"dtype", dtype_info(r.expected_dtype).numpy_name}, {"shape", r.expected_shape.dims()}}},
      {"actual", {{"dtype", dtype_info(r.actual_dtype).numpy_name}, {"shape", r.actual_shape.dims()}}},
      {"dtype_differs", r.dtype_differs},
      {"shape_differs", r.shape_differs},
      {"elements", r.elements},
      {"differing", r.differing},
  };
  const std::size_t size = dtype_info(r.expected_dtype).size;
  nlohmann::json list = nlohmann::json::array();
  for (const auto& m : r.listed)
    list.push_back({{"index", m.index},
                    {"expected", nlohmann::json::parse(format_json_value(r.expected_dtype, m.expected, false))},
                    {"actual", nlohmann::json::parse(format_json_value(r.expected_dtype, m.actual, false))},
                    {"expected_hex", hex(m.expected, size)},
                    {"actual_hex", hex(m.actual, size)},
                    {"xor_hex", hex(m.expected ^ m.actual, size)}});
  j["mismatches"] = list;
  return j;
}

namespace {

// check_golden, preparing the new golden in `*pending` when given, else writing it.
GoldenCheck check_golden(const TensorView& actual, const std::string& path, std::size_t max_listed, bool update,
                         std::unique_ptr<OutputFile>* pending) {
  std::optional<LoadedTensor> golden;
  try {
    golden = read_golden(path);
  } catch (const Error&) {
    if (!update) throw;  // a missing or unreadable golden is (re)created by --update
  }
  GoldenCheck out;
  if (golden) {
    out.report = compare_tensors(golden->tensor.view(), actual, max_listed);
    if (out.report.equal()) return out;
    out.outcome = GoldenCheck::Outcome::differed;
  }
  if (update) {
    const auto format = golden ? golden->format : format_from_extension(path).value_or(TensorFormat::npy);
    out.created = !link_info(path).has_value();
    if (pending) *pending = prepare_tensor_file(actual, path, format);
    else write_tensor(actual, path, format);
    out.outcome = GoldenCheck::Outcome::updated;
  }
  return out;
}

}  // namespace

GoldenCheck check_golden(const TensorView& actual, const std::string& path, std::size_t max_listed, bool update) {
  return check_golden(actual, path, max_listed, update, nullptr);
}

GoldenCheck check_golden_deferred(const TensorView& actual, const std::string& path, std::size_t max_listed,
                                  bool update, std::unique_ptr<OutputFile>& pending) {
  return check_golden(actual, path, max_listed, update, &pending);
}

std::string compare_report_json(const CompareReport& r) { return compare_json(r).dump(2) + "\n"; }

std::string case_report(const CaseResult& c) {
  // Every listed element: the run listed as many as the options show (CheckOptions::max_listed).
  return c.comparison ? compare_text(*c.comparison, fmt::format("'{}'", c.golden)) : std::string();
}

std::string case_detail(const CaseResult& c) {
  if (!c.detail.empty() || !c.comparison) return c.detail;
  const std::string report = case_report(c);
  return report.substr(0, report.find('\n'));
}

}  // namespace dmlbits

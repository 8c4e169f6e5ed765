#include "dmlbits/compare.hpp"

#include <bit>
#include <cstring>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "dmlbits/error.hpp"
#include "dmlbits/io.hpp"
#include "dmlbits/json_tensor.hpp"

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

}  // namespace

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

std::string compare_text(const CompareReport& r, const std::string& label) {
  if (r.dtype_differs)
    return fmt::format("mismatch with {}: dtype differs: expected {}, got {}\n", label,
                       dtype_info(r.expected_dtype).dml_name, dtype_info(r.actual_dtype).dml_name);
  if (r.shape_differs)
    return fmt::format("mismatch with {}: shape differs: expected {}, got {}\n", label, r.expected_shape.to_string(),
                       r.actual_shape.to_string());
  if (r.differing == 0) return fmt::format("match with {}: {} elements identical\n", label, r.elements);
  const std::size_t size = dtype_info(r.expected_dtype).size;
  std::string out = fmt::format("mismatch with {}: {} of {} elements differ ({})\n", label, r.differing, r.elements,
                                dtype_info(r.expected_dtype).dml_name);
  out += fmt::format("  {:<20} {:>24} {:>24}  {}\n", "index", "expected", "actual", "differing bits (xor)");
  for (const auto& m : r.listed) {
    const auto value = [&](std::uint64_t bits) {
      return fmt::format("{} ({})", format_json_value(r.expected_dtype, bits, false), hex(bits, size));
    };
    out += fmt::format("  {:<20} {:>24} {:>24}  {} ({} bits)\n", index_text(m.index), value(m.expected),
                       value(m.actual), hex(m.expected ^ m.actual, size), std::popcount(m.expected ^ m.actual));
  }
  if (r.differing > r.listed.size()) out += fmt::format("  ... {} more\n", r.differing - r.listed.size());
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

GoldenCheck check_golden(const TensorView& actual, const std::string& path, std::size_t max_listed, bool update) {
  std::optional<LoadedTensor> golden;
  try {
    golden = read_tensor(path);
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
    write_tensor(actual, path, format);
    out.outcome = GoldenCheck::Outcome::updated;
  }
  return out;
}

}  // namespace dmlbits

// The bodies of dmlbits' fuzz targets as plain functions, shared by the libFuzzer entry points
// (tests/fuzz/fuzz_*.cpp, clang only) and the regression test (tests/unit/fuzz_regression_test.cpp,
// any compiler), so a saved crash input replays through exactly the logic that found it.
//
// Contract of every target: dmlbits::Error (with the documented Errc) is the expected outcome
// for bad input. A broken invariant throws Finding; any other exception escaping a target is a
// finding too. The libFuzzer entry points turn both into abort() (see run_guarded), the unit
// test into a failed expectation. Crashes and sanitizer reports need no help from here.
#pragma once

#include <algorithm>
#include <array>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdlib.h>  // mkdtemp
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <regex>
#include <set>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <typeinfo>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "backend.hpp"
#include "make_backend.hpp"
#include "cpu_backend.hpp"
#include "cpu_isa.hpp"
#include "cpu_reference.hpp"
#include "dml_desc.hpp"
#include "expression.hpp"
#include "dmlbits/dtype.hpp"
#include "dmlbits/error.hpp"
#include "dmlbits/ops.hpp"
#include "io.hpp"
#include "json_tensor.hpp"
#include "npy.hpp"
#include "operand.hpp"
#include "run.hpp"
#include "stream.hpp"
#include "validate.hpp"

namespace dmlbits::fuzz {

using Input = std::span<const std::uint8_t>;

// A broken invariant (as opposed to an input dmlbits rightly refuses).
class Finding : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

inline void check(bool ok, std::string_view what) {
  if (!ok) throw Finding(std::string(what));
}

// An Error from a parser must carry the code its header documents; anything else (internal
// above all) is a bug.
inline void expect_code(const Error& e, Errc expected, std::string_view where) {
  if (e.code() != expected)
    throw Finding(fmt::format("{}: Error with code {} (expected {}): {}", where, errc_info(e.code()).name,
                              errc_info(expected).name, e.what()));
}

inline std::string_view as_text(Input in) { return {reinterpret_cast<const char*>(in.data()), in.size()}; }
inline std::span<const std::byte> as_byte_span(Input in) { return std::as_bytes(in); }

inline bool same_tensor(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() && a.byte_size() == b.byte_size() &&
         (a.byte_size() == 0 || std::memcmp(a.data(), b.data(), a.byte_size()) == 0);
}

inline std::string describe(const Tensor& t) {
  return fmt::format("{} {}", dtype_info(t.dtype()).numpy_name, t.shape().to_string());
}

// Row-major strides in elements of `shape`.
inline std::vector<std::uint64_t> packed_strides(const Shape& shape) {
  std::vector<std::uint64_t> s(shape.rank());
  std::uint64_t acc = 1;
  for (std::size_t k = shape.rank(); k-- > 0;) {
    s[k] = acc;
    acc *= shape[k];
  }
  return s;
}

// ---- fuzz_npy ---------------------------------------------------------------------------

// read_npy's result, checked element by element against an independent reading of the
// header: C order or Fortran order, byte-swapped when big-endian.
inline void check_npy_data(const NpyHeader& h, std::span<const std::byte> file, const Tensor& t) {
  const std::size_t size = dtype_info(h.dtype).size;
  const std::uint64_t n = h.shape.element_count();
  const std::size_t rank = h.shape.rank();
  std::vector<std::uint64_t> idx(rank, 0);
  std::vector<std::uint64_t> fstride(rank);  // column-major strides
  std::uint64_t acc = 1;
  for (std::size_t k = 0; k < rank; ++k) {
    fstride[k] = acc;
    acc *= h.shape[k];
  }
  const std::byte* src = file.data() + h.data_offset;
  for (std::uint64_t i = 0; i < n; ++i) {
    std::uint64_t off = i;
    if (h.fortran_order) {
      off = 0;
      for (std::size_t k = 0; k < rank; ++k) off += idx[k] * fstride[k];
    }
    std::byte expect[8];
    std::memcpy(expect, src + off * size, size);
    if (h.byte_order == '>') std::reverse(expect, expect + size);
    check(std::memcmp(expect, t.data() + i * size, size) == 0,
          fmt::format("read_npy: element {} differs from the file's (descr '{}', fortran_order {}, shape {})", i,
                      h.descr, h.fortran_order, h.shape.to_string()));
    for (std::size_t k = rank; k-- > 0;) {
      if (++idx[k] < h.shape[k]) break;
      idx[k] = 0;
    }
  }
}

inline void npy_target(Input in) {
  const auto file = as_byte_span(in);
  std::optional<NpyHeader> header, inspected;
  std::optional<Tensor> tensor;
  try {
    header = parse_npy_header(file);
  } catch (const Error& e) {
    expect_code(e, Errc::invalid_input, "parse_npy_header");
  }
  try {
    inspected = inspect_npy(file);
  } catch (const Error& e) {
    expect_code(e, Errc::invalid_input, "inspect_npy");
  }
  try {
    tensor = read_npy(file);
  } catch (const Error& e) {
    expect_code(e, Errc::invalid_input, "read_npy");
  }
  check(!inspected || header, "inspect_npy accepted a file whose header parse_npy_header refuses");
  check(tensor.has_value() == inspected.has_value(), "read_npy and inspect_npy disagree about the file");

  // The format detection and context wrapping that the CLI uses on the same bytes.
  try {
    const LoadedTensor loaded = read_tensor_bytes(file, "fuzz.npy");
    if (is_npy(file)) {
      check(tensor.has_value() && loaded.format == TensorFormat::npy && same_tensor(loaded.tensor, *tensor),
            "read_tensor_bytes accepted a .npy file differently from read_npy");
    }
  } catch (const Error& e) {
    expect_code(e, Errc::invalid_input, "read_tensor_bytes");
    check(!(is_npy(file) && tensor), "read_tensor_bytes refused a .npy file read_npy accepts");
  }

  if (!tensor) return;
  const NpyHeader& h = *inspected;
  check(tensor->dtype() == h.dtype && tensor->shape() == h.shape, "read_npy: tensor differs from its header");
  check(tensor->byte_size() == h.data_bytes && h.data_offset + h.data_bytes == file.size(),
        "read_npy: data size differs from the header's promise");
  check(h.data_offset <= kMaxNpyHeaderBytes + 12, "data offset beyond the header limit");
  check_npy_data(h, file, *tensor);

  // Writing the tensor back must give a file that reads back to the same tensor.
  const std::string head = npy_header(tensor->dtype(), tensor->shape());
  check(head.size() % 64 == 0, "npy_header: length not a multiple of 64");
  std::string again = head;
  again.append(reinterpret_cast<const char*>(tensor->data()), tensor->byte_size());
  try {
    const Tensor back = read_npy(std::as_bytes(std::span(again.data(), again.size())));
    check(same_tensor(back, *tensor), "npy round trip changed the tensor " + describe(*tensor));
  } catch (const Error& e) {
    throw Finding(fmt::format("npy written for {} does not read back: {}", describe(*tensor), e.what()));
  }
}

// ---- fuzz_json_tensor ---------------------------------------------------------------------

inline void json_round_trip(const Tensor& t) {
  for (bool hex : {false, true}) {
    const std::string text = write_json_tensor(t.view(), JsonWriteOptions{hex});
    Tensor back;
    try {
      back = read_json_tensor(text);
    } catch (const Error& e) {
      throw Finding(
          fmt::format("JSON written for {} (hex {}) does not read back: {}\n{}", describe(t), hex, e.what(), text));
    }
    check(same_tensor(back, t),
          fmt::format("JSON round trip (hex {}) changed the bits of {}:\n{}", hex, describe(t), text));
  }
}

// Input: one byte choosing the fallback dtype (modulo 11, dtype table order), then the JSON text.
inline void json_tensor_target(Input in) {
  if (in.empty()) return;
  const DType fallback = dtype_table()[in[0] % kDTypeCount].dtype;
  const std::string_view text = as_text(in.subspan(1));

  std::optional<JsonTensorDocument> doc;
  try {
    doc = JsonTensorDocument::parse(text);
  } catch (const Error& e) {
    expect_code(e, Errc::invalid_input, "JsonTensorDocument::parse");
  }
  std::optional<Tensor> via_read;
  try {
    via_read = read_json_tensor(text, JsonReadOptions{fallback});
  } catch (const Error& e) {
    expect_code(e, Errc::invalid_input, "read_json_tensor");
  }
  if (!doc) {
    check(!via_read, "read_json_tensor accepted text JsonTensorDocument::parse refuses");
    return;
  }

  std::optional<DType> declared;
  bool declared_ok = true;
  try {
    declared = doc->declared_dtype();
  } catch (const Error& e) {
    expect_code(e, Errc::invalid_input, "declared_dtype");
    declared_ok = false;
  }
  std::optional<Tensor> without, with;
  try {
    without = doc->to_tensor(std::nullopt);
  } catch (const Error& e) {
    expect_code(e, Errc::invalid_input, "to_tensor(nullopt)");
  }
  try {
    with = doc->to_tensor(fallback);
  } catch (const Error& e) {
    expect_code(e, Errc::invalid_input, "to_tensor(fallback)");
  }

  check(with.has_value() == via_read.has_value() && (!with || same_tensor(*with, *via_read)),
        "read_json_tensor differs from parse + to_tensor");
  if (!declared_ok) check(!without && !with, "to_tensor accepted a document with an unknown dtype");
  if (declared_ok && !declared) check(!without, "to_tensor(nullopt) invented a dtype");
  if (declared) {
    // A declared dtype wins over the fallback: both calls see the same tensor.
    check(without.has_value() == with.has_value() && (!with || same_tensor(*with, *without)),
          "to_tensor depends on the fallback although the document declares its dtype");
    if (with) check(with->dtype() == *declared, "to_tensor ignored the declared dtype");
  } else if (with) {
    check(with->dtype() == fallback, "to_tensor ignored the fallback dtype");
  }

  if (without) json_round_trip(*without);
  if (with) json_round_trip(*with);
}

// ---- fuzz_literal -------------------------------------------------------------------------

inline std::uint64_t width_mask(std::size_t size) {
  return size == 8 ? ~std::uint64_t{0} : (std::uint64_t{1} << (8 * size)) - 1;
}

inline std::string unquote(std::string s) {
  if (s.size() >= 2 && s.front() == '"' && s.back() == '"') return s.substr(1, s.size() - 2);
  return s;
}

// Input: the literal text, as it would come from the command line.
inline void literal_target(Input in) {
  const std::string text(as_text(in));
  const OperandKind kind = classify_operand(text);
  if (text == "-") check(kind == OperandKind::standard_input, "\"-\" is not standard input");
  if (kind == OperandKind::array_literal) check(!text.empty() && text.front() == '[', "array literal without '['");
  // The grammar of an integer operand, as documented; std::regex only for short texts (it
  // recurses per character, which is why classify_operand no longer uses it).
  if (text.size() <= 256) {
    static const std::regex kInteger(R"(-?(0[xX][0-9a-fA-F]+|0[bB][01]+|[0-9]+))");
    const bool integer = text != "-" && std::regex_match(text, kInteger);
    check(integer == (kind == OperandKind::scalar_literal),
          fmt::format("classify_operand('{}') disagrees with the integer grammar", text));
  }

  for (const DTypeInfo& info : dtype_table()) {
    std::uint64_t bits = 0;
    try {
      bits = parse_scalar_literal(text, info.dtype);
    } catch (const Error& e) {
      expect_code(e, Errc::invalid_input, fmt::format("parse_scalar_literal({})", info.numpy_name));
      continue;
    }
    check((bits & ~width_mask(info.size)) == 0,
          fmt::format("parse_scalar_literal({}) returned 0x{:x}, wider than the type", info.numpy_name, bits));
    // What dmlbits prints for the value must read back as the same bits.
    for (bool hex : {false, true}) {
      const std::string printed = unquote(format_json_value(info.dtype, bits, hex));
      std::uint64_t back = 0;
      try {
        back = parse_scalar_literal(printed, info.dtype);
      } catch (const Error& e) {
        throw Finding(fmt::format("{} 0x{:x} prints as '{}', which does not read back: {}", info.numpy_name, bits,
                                  printed, e.what()));
      }
      check(back == bits,
            fmt::format("{} 0x{:x} prints as '{}', which reads back as 0x{:x}", info.numpy_name, bits, printed, back));
    }
    // "the way a JSON data value is parsed": where both accept the text, they agree.
    try {
      const Tensor t = read_json_tensor(text, JsonReadOptions{info.dtype});
      if (t.shape().rank() == 0 && t.dtype() == info.dtype)
        check(t.bits_at(0) == bits,
              fmt::format("{}: literal gives 0x{:x}, JSON gives 0x{:x}", info.numpy_name, bits, t.bits_at(0)));
    } catch (const Error&) {
      // JSON's grammar differs (no "-0x1", no unquoted "nan", leading zeros): no comparison.
    }
  }
}

// ---- fuzz_names ---------------------------------------------------------------------------

// Input: a name as a user would type it (--level, --dtype, a verb, --isa, --format).
inline void names_target(Input in) {
  const std::string_view text = as_text(in);

  // Feature levels: exactly "M_m", "M.m" and "DML_FEATURE_LEVEL_M_m" of a defined level.
  std::optional<FeatureLevel> expected_level;
  for (FeatureLevel l : feature_levels()) {
    const std::string dotted = fmt::format("{}.{}", l.major(), l.minor());
    if (text == l.short_name() || text == dotted || text == l.enum_name()) expected_level = l;
  }
  const auto level = parse_feature_level(text);
  check(level == expected_level, fmt::format("parse_feature_level('{}') disagrees with the level table", text));
  if (level) {
    check(parse_feature_level(level->short_name()) == level, "short_name() does not parse back");
    check(parse_feature_level(level->enum_name()) == level, "enum_name() does not parse back");
    check(level->major() >= 1 && level->major() <= 15 && level->minor() <= 15, "level out of encoding range");
  }

  // Data types: NumPy names and codes (with an optional byte-order mark), DirectML names.
  std::optional<DType> expected_dtype;
  for (const DTypeInfo& info : dtype_table()) {
    const std::string code = info.numpy_code();
    std::set<std::string> spellings{std::string(info.numpy_name), std::string(info.dml_name), info.dml_enum_name(),
                                    code};
    for (char mark : {'<', '>', '=', '|'}) spellings.insert(mark + code);
    if (spellings.count(std::string(text))) expected_dtype = info.dtype;
  }
  const auto dtype = parse_dtype_name(text);
  check(dtype == expected_dtype, fmt::format("parse_dtype_name('{}') disagrees with the dtype table", text));
  if (dtype) {
    const DTypeInfo& info = dtype_info(*dtype);
    for (const std::string& s : {std::string(info.numpy_name), std::string(info.dml_name), info.dml_enum_name(),
                                 info.numpy_code(), info.numpy_descr()})
      check(parse_dtype_name(s) == dtype, fmt::format("dtype spelling '{}' does not parse back", s));
  }

  // Operators: the verb or one of its aliases.
  const OpInfo* expected_op = nullptr;
  for (const OpInfo& op : op_table()) {
    if (text == op.verb) expected_op = &op;
    for (const std::string& a : op.aliases())
      if (text == a) expected_op = &op;
  }
  const OpInfo* op = find_op(text);
  check(op == expected_op, fmt::format("find_op('{}') disagrees with the operator table", text));
  if (op) {
    check(find_op(op->verb) == op, "an operator's verb does not find it");
    for (const std::string& a : op->aliases())
      check(find_op(a) == op, fmt::format("alias '{}' does not find its operator", a));
  }

  if (const auto isa = parse_isa(text)) check(isa_name(*isa) == text, "parse_isa accepted a name it does not print");
  if (const auto format = parse_format_name(text))
    check(format_name(*format) == text, "parse_format_name accepted a name it does not print");
}

// ---- fuzz_expression ----------------------------------------------------------------------

inline std::size_t expression_depth(const expr::Expression& e) {
  std::vector<std::size_t> depth(e.nodes.size(), 0);
  std::size_t deepest = 0;
  for (std::size_t i = 0; i < e.nodes.size(); ++i) {
    const expr::Node& n = e.nodes[i];
    if (n.kind != expr::NodeKind::op) continue;
    for (int a = 0; a < op_info(n.op).arity; ++a)
      depth[i] = std::max(depth[i], depth[static_cast<std::size_t>(n.args[static_cast<std::size_t>(a)])] + 1);
    deepest = std::max(deepest, depth[i]);
  }
  return deepest;
}

// The graph's promises (expression.hpp): topological, arguments in range and as many as the
// operator's arity, out_dtype only where the operator has output types of its own, names and
// literals as written, no two nodes alike, the names listed once in order, within the limits.
inline void check_expression(const expr::Expression& e, std::string_view text) {
  using expr::NodeKind;
  check(e.text == text, "Expression::text differs from the text parsed");
  check(!e.nodes.empty() && e.nodes.size() <= expr::kMaxExpressionNodes,
        fmt::format("{} nodes, outside 1 to {}", e.nodes.size(), expr::kMaxExpressionNodes));
  // The root is the last node: every other is an argument of a later one.
  check(e.root == static_cast<std::int32_t>(e.nodes.size()) - 1, fmt::format("root {} is not the last node", e.root));
  std::vector<bool> used(e.nodes.size(), false);
  used.back() = true;
  std::vector<std::string> names;
  std::set<std::string> keys;
  for (std::size_t i = 0; i < e.nodes.size(); ++i) {
    const expr::Node& n = e.nodes[i];
    const std::string where = fmt::format("node {} ('{}')", i, e.node_text(static_cast<std::int32_t>(i)));
    check(std::size_t{n.span.offset} + n.span.length <= text.size() && n.span.length > 0,
          where + ": span outside the text");
    std::string key;
    switch (n.kind) {
      case NodeKind::name:
        check(!n.name.empty() && (std::isalpha(static_cast<unsigned char>(n.name[0])) || n.name[0] == '_') &&
                  std::all_of(n.name.begin(), n.name.end(),
                              [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }),
              where + ": not an identifier");
        check(e.node_text(static_cast<std::int32_t>(i)) == n.name, where + ": a name unlike its text");
        names.push_back(n.name);
        key = "n" + n.name;
        break;
      case NodeKind::literal:
        check(!n.literal.empty() && e.node_text(static_cast<std::int32_t>(i)) == n.literal,
              where + ": a literal unlike its text");
        key = "l" + n.literal;
        break;
      case NodeKind::op: {
        const OpInfo& op = op_info(n.op);
        for (int a = 0; a < 2; ++a) {
          const std::int32_t arg = n.args[static_cast<std::size_t>(a)];
          if (a < op.arity) {
            check(arg >= 0 && static_cast<std::size_t>(arg) < i, where + ": an argument that is not an earlier node");
            used[static_cast<std::size_t>(arg)] = true;
          } else {
            check(arg == -1, where + ": more arguments than the operator's arity");
          }
        }
        if (n.out_dtype) {
          bool allowed = false;
          for (const auto& tier : op.tiers) allowed = allowed || tier.outputs.contains(*n.out_dtype);
          check(allowed, where + ": an out_dtype the operator cannot give");
        }
        key = fmt::format("o{} {} {} {}", static_cast<int>(n.op), n.args[0], n.args[1],
                          n.out_dtype ? static_cast<int>(*n.out_dtype) : -1);
        break;
      }
    }
    check(keys.insert(key).second, where + ": equal to an earlier node (shared subexpressions are one node)");
  }
  check(std::all_of(used.begin(), used.end(), [](bool u) { return u; }), "a node that nothing uses");
  check(names == e.names, "Expression::names is not the name nodes in order");
  check(expression_depth(e) <= expr::kMaxExpressionDepth, "operators nested past kMaxExpressionDepth");
}

// A refusal is one problem with the text and a caret under it: three lines, nothing unprintable.
inline void check_expression_refusal(const Error& err) {
  expect_code(err, Errc::usage, "parse_expression");
  const std::string_view m = err.what();
  check(m.starts_with("expression: ") && std::count(m.begin(), m.end(), '\n') == 2,
        fmt::format("a refusal not in caret_message's form: {}", m));
  const std::string_view first = m.substr(0, m.find('\n'));
  check(first.ends_with(")") && first.find(" (column ") != std::string_view::npos,
        fmt::format("a refusal without its column: {}", m));
  check(m.substr(m.rfind('\n') + 1).find('^') != std::string_view::npos,
        fmt::format("a refusal without a caret: {}", m));
  check(std::none_of(m.begin(), m.end(), [](char c) { return (c >= 0 && c < 0x20 && c != '\n') || c == 0x7f; }),
        fmt::format("a control character in a refusal: {}", m));
}

// Input: an expression's text. On success the graph keeps its promises and its canonical text
// parses back to the same graph; a refusal is Errc::usage in the caret form.
inline void expression_target(Input in) {
  const std::string_view text = as_text(in);
  std::optional<expr::Expression> e;
  try {
    e = expr::parse_expression(text);
  } catch (const Error& err) {
    check_expression_refusal(err);
    return;
  }
  check(text.size() <= expr::kMaxExpressionBytes, "an expression past kMaxExpressionBytes accepted");
  check_expression(*e, text);
  for (std::size_t i = 0; i < e->nodes.size(); ++i)
    (void)expr::caret_message(text, e->nodes[i].span, "p");  // any node's span can be shown
  const std::string canonical = expr::to_canonical_text(*e);
  if (canonical.size() > expr::kMaxExpressionBytes) return;  // the one case the round trip is not promised
  expr::Expression back;
  try {
    back = expr::parse_expression(canonical);
  } catch (const Error& err) {
    throw Finding(fmt::format("the canonical text '{}' does not parse: {}", canonical, err.what()));
  }
  check(back.nodes.size() == e->nodes.size() && back.root == e->root && back.names == e->names,
        fmt::format("the canonical text '{}' parses to another graph", canonical));
  for (std::size_t i = 0; i < back.nodes.size(); ++i) {
    const expr::Node &a = e->nodes[i], &b = back.nodes[i];
    check(a.kind == b.kind && a.op == b.op && a.args == b.args && a.out_dtype == b.out_dtype && a.name == b.name &&
              a.literal == b.literal,
          fmt::format("the canonical text '{}' parses to another node {}", canonical, i));
  }
  check(expr::to_canonical_text(back) == canonical, "the canonical text is not canonical");
}

// ---- fuzz_op ------------------------------------------------------------------------------

// Reads option bytes; past the end every byte is 0.
class ByteReader {
 public:
  explicit ByteReader(Input in) : in_(in) {}
  std::uint8_t take() { return pos_ < in_.size() ? in_[pos_++] : 0; }
  Input rest() const { return in_.subspan(std::min(pos_, in_.size())); }

 private:
  Input in_;
  std::size_t pos_ = 0;
};

// Exactly-sized heap memory (the sanitizers see one byte past the end), optionally starting
// `misalign` bytes into the allocation so that kernels meet unaligned pointers.
class ExactBuffer {
 public:
  ExactBuffer(std::size_t size, std::size_t misalign)
      : storage_(new std::byte[size + misalign]), data_(storage_.get() + misalign), size_(size) {}
  ExactBuffer(std::span<const std::byte> from, std::size_t misalign) : ExactBuffer(from.size(), misalign) {
    if (!from.empty()) std::memcpy(data_, from.data(), from.size());
  }
  std::byte* data() { return data_; }
  std::span<std::byte> span() { return {data_, size_}; }
  std::span<const std::byte> cspan() const { return {data_, size_}; }

 private:
  std::unique_ptr<std::byte[]> storage_;
  std::byte* data_;
  std::size_t size_;
};

// One element of the result, computed from the shapes directly (not from the descriptors) with
// the reference semantics: the oracle for the descriptors and the reference backend's loop.
inline std::uint64_t expected_element(const ValidatedOp& v, const std::vector<std::vector<std::byte>>& inputs,
                                      const std::vector<std::vector<std::uint64_t>>& input_strides,
                                      std::uint64_t out_index) {
  const Shape& out_shape = v.output_shape();
  const std::size_t rank = out_shape.rank();
  std::array<std::uint64_t, kMaxRank> idx{};
  std::uint64_t rest = out_index;
  for (std::size_t k = rank; k-- > 0;) {
    idx[k] = rest % out_shape[k];
    rest /= out_shape[k];
  }
  const std::size_t size = dtype_info(v.input_dtype()).size;
  std::uint64_t operand[2] = {0, 0};
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const Shape& s = v.input_shapes()[i];
    const auto& strides = input_strides[i];
    std::uint64_t at = 0;
    for (std::size_t k = 0; k < s.rank(); ++k) {
      const std::uint64_t ix = s[k] == 1 ? 0 : idx[k + rank - s.rank()];
      at += ix * strides[k];
    }
    operand[i] = load_bits(inputs[i].data(), size, static_cast<std::size_t>(at));
  }
  const OpKind op = v.op().kind;
  const ShiftOverflow mode = v.shift_overflow();
  const auto compute = [&]<class T>(T) -> std::uint64_t {
    const T a = static_cast<T>(operand[0]);
    const T b = static_cast<T>(operand[1]);
    switch (op) {
      case OpKind::bit_not:
        return reference_not(a);
      case OpKind::popcount:
        return reference_popcount(a);
      default:
        return reference_binary<T>(op, a, b, mode);
    }
  };
  switch (size) {
    case 1:
      return compute(std::uint8_t{});
    case 2:
      return compute(std::uint16_t{});
    case 4:
      return compute(std::uint32_t{});
    default:
      return compute(std::uint64_t{});
  }
}

// validate(req), or nothing when it refuses the request as it should (Errc::invalid_input).
inline std::optional<ValidatedOp> validate_or_refuse(const OpRequest& req) {
  try {
    return validate(req);
  } catch (const Error& e) {
    expect_code(e, Errc::invalid_input, "validate");
    return std::nullopt;
  }
}

// Dimension sizes the option bytes pick from: mostly small (1 so that broadcasting happens),
// 0 for empty tensors, and a few longer runs for the SIMD loops and their tails.
inline constexpr std::uint64_t kFuzzDims[16] = {1, 1, 1, 2, 2, 3, 3, 4, 5, 0, 7, 8, 16, 17, 33, 65};
inline constexpr std::uint64_t kFuzzMaxElements = 1 << 15;

// Input: 14 option bytes, then data bytes for the inputs (A's bytes, then B's, repeated as needed).
//   0 op  1 dtype  2 feature level  3 flags  4 out dtype  5 ranks (A low nibble, B high)
//   6..9 A's dims  10..13 B's dims
// flags: bit 0 shift overflow wrap (else zero if byte 4's top bit is set, else the default,
// directml); bits 1-2 out dtype (none, uint8, uint32, byte 4); bit 3 in place; bit 4 shift
// counts reduced to 0..width+1; bit 5 threads; bits 6-7 misalignment.
// Returns whether the operation was valid and ran (for the regression test's sweep).
inline bool op_target(Input in) {
  ByteReader r(in);
  OpRequest req;
  req.op = op_table()[r.take() % op_table().size()].kind;
  const DType dtype = dtype_table()[r.take() % kDTypeCount].dtype;
  req.level = feature_levels()[r.take() % feature_levels().size()];
  const std::uint8_t flags = r.take();
  const std::uint8_t out_byte = r.take();
  const std::uint8_t ranks = r.take();
  req.shift_overflow = (flags & 1)         ? ShiftOverflow::wrap
                       : (out_byte & 0x80) ? ShiftOverflow::zero
                                           : kDefaultShiftOverflow;
  switch ((flags >> 1) & 3) {
    case 1:
      req.out_dtype = DType::uint8;
      break;
    case 2:
      req.out_dtype = DType::uint32;
      break;
    case 3:
      req.out_dtype = dtype_table()[out_byte % kDTypeCount].dtype;
      break;
    default:
      break;
  }
  req.in_place = (flags & 8) != 0;
  const bool small_counts = (flags & 16) != 0;
  const bool threaded = (flags & 32) != 0;
  const std::size_t misalign = std::size_t{1} << (flags >> 6) >> 1;  // 0, 1, 2, 4

  const int arity = op_info(req.op).arity;
  Shape shapes[2];
  const std::size_t rank[2] = {static_cast<std::size_t>(ranks & 15) % 5, static_cast<std::size_t>(ranks >> 4) % 5};
  for (int i = 0; i < 2; ++i) {
    std::uint8_t dims[4];
    for (auto& d : dims) d = r.take();
    for (std::size_t k = 0; k < rank[i]; ++k) shapes[i].push_back(kFuzzDims[dims[k] % 16]);
  }
  for (int i = 0; i < arity; ++i) {
    if (shapes[i].element_count() > kFuzzMaxElements) return false;
    req.inputs.push_back({dtype, shapes[i]});
  }

  const std::optional<ValidatedOp> v = validate_or_refuse(req);
  if (!v) return false;
  (void)to_json(v->desc());

  // What validate() promised, checked against a broadcast computed here.
  Shape out_shape = shapes[0];
  if (arity == 2) {
    const std::size_t n = std::max(shapes[0].rank(), shapes[1].rank());
    out_shape = Shape{};
    for (std::size_t k = 0; k < n; ++k) {
      const std::uint64_t a = k + shapes[0].rank() >= n ? shapes[0][k + shapes[0].rank() - n] : 1;
      const std::uint64_t b = k + shapes[1].rank() >= n ? shapes[1][k + shapes[1].rank() - n] : 1;
      check(a == b || a == 1 || b == 1, "validate accepted shapes that do not broadcast");
      out_shape.push_back(a == 1 ? b : a);
    }
  }
  check(v->output_shape() == out_shape, "validate: output shape is not the broadcast shape");
  check(v->input_dtype() == dtype, "validate: input dtype changed");
  const DType out_dtype = v->output_dtype();
  if (req.op == OpKind::popcount)
    check(out_dtype == req.out_dtype.value_or(DType::uint8), "validate: wrong popcount output dtype");
  else check(out_dtype == dtype, "validate: output dtype differs from the input dtype");

  // Input data: the remaining bytes, repeated; shift counts optionally brought near the width.
  const std::size_t in_size = dtype_info(dtype).size;
  const std::size_t out_size = dtype_info(out_dtype).size;
  const Input data = r.rest();
  std::vector<std::vector<std::byte>> inputs;
  std::size_t cursor = 0;
  for (int i = 0; i < arity; ++i) {
    std::vector<std::byte> bytes(static_cast<std::size_t>(shapes[i].byte_size(in_size)));
    for (auto& b : bytes) b = data.empty() ? std::byte{0} : std::byte{data[cursor++ % data.size()]};
    if (i == 1 && small_counts && (req.op == OpKind::shl || req.op == OpKind::shr)) {
      const std::size_t n = bytes.size() / in_size;
      for (std::size_t e = 0; e < n; ++e)
        store_bits(bytes.data(), in_size, e, load_bits(bytes.data(), in_size, e) % (in_size * 8 + 2));
    }
    inputs.push_back(std::move(bytes));
  }
  const std::uint64_t count = out_shape.element_count();
  if (count > kFuzzMaxElements) return false;
  const std::size_t out_bytes = static_cast<std::size_t>(count * out_size);

  // Runs `backend` on fresh, exactly-sized copies of the inputs; returns the output bytes and
  // checks that inputs the backend may not write are unchanged.
  const auto execute = [&](Backend& backend, bool alias) {
    std::vector<ExactBuffer> ins;
    ExecuteBuffers eb;
    for (const auto& bytes : inputs) {
      ins.emplace_back(std::span<const std::byte>(bytes), misalign);
      eb.inputs.push_back(ins.back().cspan());
    }
    ExactBuffer out(alias ? 0 : out_bytes, misalign);
    if (!alias) std::memset(out.data(), 0xa5, out_bytes);  // stale bytes must be overwritten
    eb.output = alias ? ins[0].span() : out.span();
    try {
      backend.run(*v, eb);
    } catch (const Error& e) {
      throw Finding(fmt::format("backend '{}' ({}) threw: {}", backend.name(),
                                device_text(backend.device_description()), e.what()));
    }
    for (std::size_t i = alias ? 1 : 0; i < ins.size(); ++i)
      check(inputs[i].empty() || std::memcmp(ins[i].data(), inputs[i].data(), inputs[i].size()) == 0,
            fmt::format("backend '{}' ({}) wrote to input {}", backend.name(),
                        device_text(backend.device_description()), i));
    const std::span<const std::byte> result = alias ? ins[0].cspan() : out.cspan();
    return std::vector<std::byte>(result.begin(), result.end());
  };

  CpuReferenceBackend reference;
  const std::vector<std::byte> expected = execute(reference, false);
  std::vector<std::vector<std::uint64_t>> input_strides;
  for (const Shape& s : v->input_shapes()) input_strides.push_back(packed_strides(s));
  for (std::uint64_t o = 0; o < count; ++o) {
    const std::uint64_t want = expected_element(*v, inputs, input_strides, o);
    const std::uint64_t got = load_bits(expected.data(), out_size, static_cast<std::size_t>(o));
    check(got == want, fmt::format("reference backend: {} element {} is 0x{:x}, expected 0x{:x}", op_info(req.op).verb,
                                   o, got, want));
  }
  const std::string what = fmt::format("{} {} {} -> {} at {}", op_info(req.op).verb, dtype_info(dtype).numpy_name,
                                       shapes[0].to_string() + (arity == 2 ? " " + shapes[1].to_string() : ""),
                                       out_shape.to_string(), req.level.short_name());
  const auto compare = [&](Backend& backend, bool alias) {
    if (backend.unsupported_reason(*v)) return;
    const std::vector<std::byte> got = execute(backend, alias);
    if (got == expected) return;
    std::size_t first = 0;
    while (first < got.size() && got[first] == expected[first]) ++first;
    throw Finding(fmt::format("backend '{}' ({}){} differs from the reference for {}: first at byte {} of {}",
                              backend.name(), device_text(backend.device_description()), alias ? " in place" : "", what,
                              first, expected.size()));
  };

  if (v->in_place()) compare(reference, true);
  for (BackendKind kind : backend_kinds()) {
    const std::string_view name = backend_name(kind);
    // The D3D12 backend has its own differential tests (tests/unit/d3d12_backend_test.cpp);
    // here a dispatch per input would slow the fuzzer a hundredfold, and lavapipe's worker
    // threads keep allocations that libFuzzer's leak check would report as findings.
    // The DirectML backend is Microsoft's library, run under wine by tests/directml (Windows
    // build only): it is the oracle, not code of dmlbits' to fuzz, and its shifts follow
    // DirectML's own rule.
    if (kind == BackendKind::d3d12 || kind == BackendKind::directml) continue;
    std::unique_ptr<Backend> backend;
    try {
      OperationRequest request;  // the backend as a run that names none of its options gets it
      request.op = OpKind::bit_not;
      request.operands = {"1"};
      request.backend = kind;
      backend = make_backend(prepare_request(std::move(request)));
    } catch (const Error& e) {
      if (e.code() == Errc::unsupported) continue;
      throw Finding(fmt::format("make_backend('{}') threw: {}", name, e.what()));
    }
    compare(*backend, false);
    if (v->in_place()) compare(*backend, true);
  }
  // Every instruction set this CPU runs, not only the best; on request split over threads
  // even for small tensors.
  for (Isa isa : supported_isas()) {
    CpuBackendOptions options;
    if (threaded) {
      options.threads = 3;
      options.parallel_min_bytes = 0;
    }
    CpuBackend cpu(isa, options);
    compare(cpu, false);
    if (v->in_place()) compare(cpu, true);
  }
  return true;
}

// ---- fuzz_run ------------------------------------------------------------------------------

// Whole operations from files to output files: operands written here in every layout dmlbits
// reads (.npy 1.0/2.0/3.0 little-endian, big-endian, Fortran order in both byte orders, bool,
// JSON objects and nested arrays with bit-pattern strings, literals), at sizes around and past
// the 512 KiB stream chunk, broadcast or not, run streamed (stream_operation, as `-o FILE` does)
// and in memory (run_operation, as --repeat and --expect do). Both results must be the oracle's
// (expected_element) bytes, and the streamed .npy must hold exactly them after its header.
//
// Input: 8 option bytes, then data bytes (A's elements, then B's, repeated as needed).
//   0 op  1 dtype  2 A's layout  3 B's layout (low 3 bits) and B's shape (bits 3-4)
//   4 size class (low 2 bits) and columns (bits 2-3)  5-6 size  7 flags
// Layouts: 0-2 .npy version 1-3 little-endian C order, 3 big-endian, 4 Fortran order, 5
// big-endian Fortran order, 6 JSON object, 7 JSON nested array (bool .npy for a layout-0 uint8
// operand when flag bit 5 is set; a one-element B in layout 7 is a literal). B's shape: the
// output's, (), (1, cols), (rows, 1). Size classes: under 300 elements; the stream chunk +-64;
// two to three chunks and an odd remainder; a 4 KiB page's elements +-2 times 1-4.
// flags: bit 0 shift overflow wrap; bit 1 popcount to uint32; bit 2 one thread; bit 3
// cpu-reference; bit 4 a lower instruction set; bit 5 bool; bit 6 shift overflow zero (bit 0
// clear; with neither, the default, directml).

// A scratch folder for one process's files, removed at exit.
inline const std::string& fuzz_scratch_dir() {
  struct Dir {
    std::string path;
    Dir() {
      std::string tmpl = (std::filesystem::temp_directory_path() / "dmlbits-fuzz-run-XXXXXX").string();
      if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
      path = tmpl;
    }
    ~Dir() {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
  };
  static const Dir dir;
  return dir.path;
}

// An operand's elements (native little-endian bytes, C order, of shape rows x cols or a 0-d
// scalar) written as `layout` says; returns the operand's command-line text (a path or literal).
inline std::string write_operand(const std::string& name, int layout, bool as_bool, DType dtype, const Shape& shape,
                                 const std::vector<std::byte>& c_order) {
  const DTypeInfo& info = dtype_info(dtype);
  const std::size_t w = info.size;
  const std::uint64_t n = shape.element_count();
  const std::uint64_t rows = shape.rank() == 2 ? shape[0] : n, cols = shape.rank() == 2 ? shape[1] : 1;
  const auto element = [&](std::uint64_t i) { return load_bits(c_order.data(), w, static_cast<std::size_t>(i)); };
  const std::string path = fuzz_scratch_dir() + "/" + name;
  if (layout >= 6) {
    if (layout == 7 && n == 1 && shape.rank() == 0) return fmt::format("0x{:x}", element(0));  // a literal
    std::string data;
    data.reserve(static_cast<std::size_t>(n) * (w * 2 + 5) + 16);
    const bool nested = shape.rank() == 2;
    if (nested) data += '[';
    for (std::uint64_t r = 0; r < rows; ++r) {
      if (r) data += ',';
      if (nested) data += '[';
      for (std::uint64_t c = 0; c < cols; ++c) {
        if (c) data += ',';
        data += fmt::format("\"0x{:x}\"", element(r * cols + c));
      }
      if (nested) data += ']';
    }
    if (nested) data += ']';
    if (shape.rank() == 0) data = fmt::format("\"0x{:x}\"", element(0));
    std::ofstream(path, std::ios::binary)
        << (layout == 6 ? fmt::format("{{\"dtype\": \"{}\", \"shape\": [{}], \"data\": {}}}", info.numpy_name,
                                      shape.rank() == 2 ? fmt::format("{}, {}", rows, cols) : "", data)
                        : data);
    return path;
  }
  const bool big = layout == 3 || layout == 5, fortran = layout == 4 || layout == 5;
  const int version = layout <= 2 ? layout + 1 : 1;
  const std::string descr = as_bool ? "|b1" : std::string(w == 1 ? "|" : big ? ">" : "<") + info.numpy_code();
  const std::string shape_text = shape.rank() == 0   ? "()"
                                 : shape.rank() == 2 ? fmt::format("({}, {})", rows, cols)
                                                     : fmt::format("({},)", n);
  std::string dict = fmt::format("{{'descr': '{}', 'fortran_order': {}, 'shape': {}, }}", descr,
                                 fortran ? "True" : "False", shape_text);
  const std::size_t prefix = version == 1 ? 10 : 12;
  dict += std::string((64 - (prefix + dict.size() + 1) % 64) % 64, ' ') + "\n";
  std::string out = std::string("\x93NUMPY", 6) + static_cast<char>(version) + '\0';
  for (std::size_t b = 0; b < prefix - 8; ++b) out += static_cast<char>((dict.size() >> (8 * b)) & 0xff);
  out += dict;
  const std::size_t header = out.size();
  out.resize(header + static_cast<std::size_t>(n) * w);
  for (std::uint64_t k = 0; k < n; ++k) {
    // The k-th stored element: C order, or column by column.
    const std::uint64_t i = fortran ? (k % rows) * cols + k / rows : k;
    const std::uint64_t bits = element(i);
    for (std::size_t b = 0; b < w; ++b)
      out[header + static_cast<std::size_t>(k) * w + b] =
          static_cast<char>((bits >> (8 * (big ? w - 1 - b : b))) & 0xff);
  }
  std::ofstream(path, std::ios::binary) << out;
  return path;
}

inline bool run_target(Input in) {
  ByteReader r(in);
  const OpInfo& op = op_table()[r.take() % op_table().size()];
  const DType dtype = dtype_table()[r.take() % kDTypeCount].dtype;
  const int layout[2] = {r.take() % 8, 0};
  const std::uint8_t b_byte = r.take();
  const std::uint8_t size_byte = r.take();
  const std::uint32_t size = r.take() | (std::uint32_t{r.take()} << 8);
  const std::uint8_t flags = r.take();
  const int b_layout = b_byte & 7, b_shape = (b_byte >> 3) & 3;
  const bool as_bool = (flags & 32) != 0 && dtype == DType::uint8;

  OperationRequest spec;
  spec.op = op.kind;
  spec.backend = BackendKind::cpu;
  spec.output = OutputKind::memory;
  const ShiftOverflow shift_overflow = (flags & 1)    ? ShiftOverflow::wrap
                                       : (flags & 64) ? ShiftOverflow::zero
                                                      : kDefaultShiftOverflow;
  if (op.shift) spec.shift_overflow = shift_overflow;  // the others refuse it (prepare_request)
  if (op.kind == OpKind::popcount && (flags & 2)) spec.out_dtype = DType::uint32;
  const std::size_t w = dtype_info(dtype).size;
  const std::size_t out_w = op.kind == OpKind::popcount ? dtype_info(spec.out_dtype.value_or(DType::uint8)).size : w;
  const std::uint64_t chunk = kStreamChunkBytes / std::max(w, out_w);
  std::uint64_t n = 0;
  switch (size_byte & 3) {
    case 0:
      n = size % 300;
      break;
    case 1:
      n = chunk + size % 129 - 64;
      break;
    case 2:
      n = (2 * chunk + size % chunk) | 1;
      break;
    default:
      n = (4096 / w) * (1 + size % 4) + size % 5 - 2;
      break;
  }
  const std::uint64_t cols = std::array<std::uint64_t, 4>{1, 1, 3, 17}[(size_byte >> 2) & 3];
  const std::uint64_t rows = (n + cols - 1) / cols;
  const Shape a_shape{rows, cols};
  Shape shapes[2] = {a_shape, a_shape};
  switch (b_shape) {
    case 1:
      shapes[1] = Shape{};
      break;
    case 2:
      shapes[1] = Shape{1, cols};
      break;
    case 3:
      shapes[1] = Shape{rows, 1};
      break;
    default:
      break;
  }

  OpRequest req;
  req.op = op.kind;
  req.out_dtype = spec.out_dtype;
  req.shift_overflow = shift_overflow;
  for (int i = 0; i < op.arity; ++i) req.inputs.push_back({dtype, shapes[i]});
  const std::optional<ValidatedOp> v = validate_or_refuse(req);
  if (!v) return false;
  // JSON is bounded (2^23 values, 64 MiB of text): large JSON operands become .npy.
  int layouts[2] = {layout[0], b_layout};
  for (int i = 0; i < op.arity; ++i)
    if (layouts[i] >= 6 && shapes[i].element_count() > 200000) layouts[i] = 3;
  // A nested array cannot say (0, cols): `[]` is shape (0,), as in NumPy. Such operands name
  // their shape in the JSON object form instead.
  for (int i = 0; i < op.arity; ++i)
    if (layouts[i] == 7 && shapes[i].rank() == 2 && shapes[i][0] == 0) layouts[i] = 6;
  // At most one operand may be a nested array without a dtype only if the other names one.
  spec.dtype = dtype;

  const Input data = r.rest();
  std::vector<std::vector<std::byte>> inputs;
  std::size_t cursor = 0;
  for (int i = 0; i < op.arity; ++i) {
    std::vector<std::byte> bytes(static_cast<std::size_t>(shapes[i].byte_size(w)));
    for (auto& b : bytes) b = data.empty() ? std::byte{0} : std::byte{data[cursor++ % data.size()]};
    if (as_bool && layouts[i] == 0)
      for (auto& b : bytes) b &= std::byte{1};
    inputs.push_back(std::move(bytes));
  }
  for (int i = 0; i < op.arity; ++i)
    spec.operands.push_back(
        write_operand(i == 0 ? "a" : "b", layouts[i], as_bool && layouts[i] == 0, dtype, shapes[i], inputs[i]));

  const std::uint64_t count = v->output_shape().element_count();
  std::vector<std::vector<std::uint64_t>> input_strides;
  for (const Shape& s : v->input_shapes()) input_strides.push_back(packed_strides(s));
  std::vector<std::byte> expected(static_cast<std::size_t>(count * out_w));
  for (std::uint64_t o = 0; o < count; ++o)
    store_bits(expected.data(), out_w, static_cast<std::size_t>(o), expected_element(*v, inputs, input_strides, o));

  if (flags & 8) spec.backend = BackendKind::cpu_reference;
  if (!(flags & 8) && (flags & 16)) spec.isa = std::string(isa_name(supported_isas()[size % supported_isas().size()]));
  spec.threads = (flags & 4) ? 1 : 2;
  if (flags & 8) spec.threads.reset();
  const std::string what = fmt::format(
      "{} {} A {} layout {} B {} layout {} on {} {}", op.verb, dtype_info(dtype).numpy_name, shapes[0].to_string(),
      layouts[0], op.arity == 2 ? shapes[1].to_string() : "-", layouts[1], backend_name(*spec.backend), spec.isa);
  const auto differs = [&](std::span<const std::byte> got, std::string_view route) {
    if (got.size() == expected.size() && (got.empty() || std::memcmp(got.data(), expected.data(), got.size()) == 0))
      return;
    std::size_t first = 0;
    while (first < std::min(got.size(), expected.size()) && got[first] == expected[first]) ++first;
    throw Finding(fmt::format("{} differs from the oracle for {}: {} bytes (expected {}), first difference at byte {}",
                              route, what, got.size(), expected.size(), first));
  };
  try {
    const PreparedRequest prepared = prepare_request(spec);
    const RunResult mem = run_operation(prepared);
    differs(mem.result.value().view().bytes(), "in memory");
    const std::string out_path = fuzz_scratch_dir() + "/out.npy";
    (void)stream_operation(prepared, out_path);
    std::ifstream f(out_path, std::ios::binary);
    const std::string file((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    const auto bytes = std::as_bytes(std::span(file.data(), file.size()));
    const NpyHeader h = parse_npy_header(bytes);
    check(h.dtype == v->output_dtype() && h.shape == v->output_shape(), "streamed: wrong .npy header for " + what);
    differs(bytes.subspan(h.data_offset), "streamed");
  } catch (const Error& e) {
    throw Finding(fmt::format("{} threw: {}", what, e.what()));
  }
  return true;
}

// ---- libFuzzer glue -----------------------------------------------------------------------

// Runs a target; a Finding or an exception other than dmlbits::Error is reported and aborts,
// which libFuzzer records as a crash with the input saved.
template <class F>
int run_guarded(F&& target, const std::uint8_t* data, std::size_t size) {
  try {
    (void)target(Input(data, size));
  } catch (const Finding& f) {
    std::fprintf(stderr, "==dmlbits fuzz== FINDING: %s\n", f.what());
    std::abort();
  } catch (const Error& e) {
    std::fprintf(stderr, "==dmlbits fuzz== dmlbits::Error escaped the target (code %s): %s\n",
                 std::string(errc_info(e.code()).name).c_str(), e.what());
    std::abort();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "==dmlbits fuzz== unexpected exception %s: %s\n", typeid(e).name(), e.what());
    std::abort();
  }
  return 0;
}

}  // namespace dmlbits::fuzz

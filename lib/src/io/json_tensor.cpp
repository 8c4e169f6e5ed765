#include "json_tensor.hpp"

#include <algorithm>
#include <cfenv>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <bit>
#include <limits>
#include <set>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "dmlbits/dtype.hpp"
#include "dmlbits/error.hpp"
#include "dmlbits/front_end.hpp"
#include "float16.hpp"

namespace dmlbits {
namespace {

[[noreturn]] void fail(std::string msg) { throw Error(Errc::invalid_input, std::move(msg)); }

// One data value as read, before its dtype is known (an object may name the dtype after the
// data).
// 16 bytes: a document within kMaxJsonValues holds up to 8 Mi of them.
struct Leaf {
  enum Kind : std::uint8_t { negative, nonnegative, big_integer, floating, bits, special };
  explicit Leaf(Kind k) : kind(k) {}
  union {
    std::uint64_t u = 0;  // nonnegative/bits: the value; negative: the int64 bits
    double d;             // floating/special/big_integer: the value
  };
  float f = 0;  // floating: the value parsed directly as float (no double rounding)
  Kind kind;
  std::uint8_t bit_width = 0;  // bits: significant bits written
  // floating: where the text lies against `d` (-1 below, +1 above, 0 equal or not needed), set
  // only when d is halfway between two FLOAT16 values, where it decides the rounding.
  std::int8_t half_side = 0;
};
static_assert(sizeof(Leaf) == 16);

std::string index_path(const std::vector<std::uint64_t>& idx, std::size_t levels) {
  std::string s = "data";
  for (std::size_t i = 0; i < levels; ++i) s += fmt::format("[{}]", idx[i]);
  return s;
}

// "0x1f" / "0b101" (also used for unquoted command-line literals).
std::optional<Leaf> parse_bits(std::string_view s) {
  int base = 0;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) base = 16;
  else if (s.size() > 2 && s[0] == '0' && (s[1] == 'b' || s[1] == 'B')) base = 2;
  else return std::nullopt;
  std::string_view digits = s.substr(2);
  Leaf leaf{Leaf::bits};
  auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), leaf.u, base);
  if (ec == std::errc::result_out_of_range) fail(fmt::format("bit pattern '{}' is wider than 64 bits", s));
  if (ec != std::errc() || p != digits.data() + digits.size()) return std::nullopt;
  leaf.bit_width = static_cast<std::uint8_t>(64 - std::countl_zero(leaf.u));
  return leaf;
}

// Whether `d` lies exactly halfway between two neighbouring FLOAT16 values (65520, between the
// largest finite one and the first that overflows, included).
bool is_half_midpoint(double d) {
  const double a = std::fabs(d);
  if (!(a > 0) || a >= 65536.0) return false;
  const int step = std::max(std::ilogb(a), -14) - 11;  // half of FLOAT16's spacing at a, as 2^step
  const double scaled = std::ldexp(a, -step);          // exact
  return scaled == std::floor(scaled) && std::fmod(scaled, 2.0) == 1.0;
}

// Which side of `d`, the text's nearest double, the text's exact value lies on: -1, 0 or +1.
// strtod rounds in the current rounding mode, so reading the text rounded down and up brackets
// its value between two doubles, one of which is d.
int text_side(std::string_view text, double d) {
  const std::string s(text);
  const int mode = std::fegetround();
  std::fesetround(FE_DOWNWARD);
  const double down = std::strtod(s.c_str(), nullptr);
  std::fesetround(FE_UPWARD);
  const double up = std::strtod(s.c_str(), nullptr);
  std::fesetround(mode);
  if (down == up) return 0;
  return down == d ? 1 : -1;
}

Leaf parse_float_text(std::string_view text) {
  Leaf leaf{Leaf::floating};
  const char* end = text.data() + text.size();
  auto r1 = std::from_chars(text.data(), end, leaf.d);
  auto r2 = std::from_chars(text.data(), end, leaf.f);
  // from_chars reports out-of-range for overflow and for underflow; only overflow is an error
  // (underflow to zero or a subnormal is what NumPy does too).
  if (r1.ec == std::errc::result_out_of_range) leaf.d = std::strtod(std::string(text).c_str(), nullptr);
  if (r2.ec == std::errc::result_out_of_range)
    leaf.f = std::isinf(leaf.d) || std::fabs(leaf.d) > 3.5e38
                 ? std::numeric_limits<float>::infinity() * (leaf.d < 0 ? -1.f : 1.f)
                 : static_cast<float>(leaf.d);
  if ((r1.ec != std::errc() && r1.ec != std::errc::result_out_of_range) || r1.ptr != end)
    fail(fmt::format("'{}' is not a number", text));
  // Text -> double -> FLOAT16 rounds twice, and is wrong when the double lands exactly halfway
  // between two FLOAT16 values that the text is not (1.0004882812500001 would give 0x3c00, not
  // the nearest, 0x3c01). Remember the text's side of d for that case.
  if (is_half_midpoint(leaf.d)) leaf.half_side = static_cast<std::int8_t>(text_side(text, leaf.d));
  return leaf;
}

std::uint64_t width_mask(std::size_t size) {
  return size == 8 ? ~std::uint64_t{0} : (std::uint64_t{1} << (8 * size)) - 1;
}

std::string describe(const Leaf& l) {
  switch (l.kind) {
    case Leaf::negative:
      return fmt::format("{}", static_cast<std::int64_t>(l.u));
    case Leaf::nonnegative:
      return fmt::format("{}", l.u);
    case Leaf::bits:
      return fmt::format("0x{:x}", l.u);
    case Leaf::big_integer:  // 18446744073709551616 itself is not "beyond 2^64"
      if (std::isinf(l.d)) return l.d > 0 ? "beyond float64's range" : "below float64's range";
      return l.d > 0 ? "2^64 or more" : "below -2^63";
    case Leaf::floating: {
      // "1.0", not "1": the message goes on to say it is not an integer.
      std::string s = fmt::format("{}", l.d);
      if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
      return s;
    }
    default:
      return fmt::format("{}", l.d);
  }
}

std::uint64_t leaf_to_bits(const Leaf& l, DType dtype, const std::string& where) {
  const DTypeInfo& info = dtype_info(dtype);
  // `where` is empty for a command-line literal, whose context the caller adds.
  const std::string at = where.empty() ? std::string() : where + ": ";
  const auto out_of_range = [&]() -> std::uint64_t {
    // A float past the type's largest is refused, not rounded to infinity as np.float32(x)
    // would (with a warning): a literal means its value. Infinity is asked for by name.
    fail(fmt::format("{}value {} is out of range for {}{}", at, describe(l), info.numpy_name,
                     info.kind == DTypeKind::floating ? " (infinity is given as inf, not by overflow)" : ""));
  };
  if (l.kind == Leaf::bits) {
    if (l.bit_width > info.bits())
      fail(fmt::format("{}bit pattern 0x{:x} is wider than {}'s {} bits", at, l.u, info.numpy_name, info.bits()));
    return l.u;
  }
  if (info.kind != DTypeKind::floating) {
    switch (l.kind) {
      case Leaf::nonnegative: {
        const std::uint64_t max =
            info.kind == DTypeKind::unsigned_int ? width_mask(info.size) : width_mask(info.size) >> 1;
        if (l.u > max) return out_of_range();
        return l.u;
      }
      case Leaf::negative: {
        if (info.kind == DTypeKind::unsigned_int) return out_of_range();
        const auto v = static_cast<std::int64_t>(l.u);
        const std::int64_t min =
            info.size == 8 ? std::numeric_limits<std::int64_t>::min() : -(std::int64_t{1} << (8 * info.size - 1));
        if (v < min) return out_of_range();
        return l.u & width_mask(info.size);
      }
      case Leaf::big_integer:
        return out_of_range();
      default:
        fail(fmt::format("{}{} is not an integer ({} takes integers or \"0x...\" bit patterns)", at, describe(l),
                         info.numpy_name));
    }
  }
  double d = 0;
  float f = 0;
  switch (l.kind) {
    case Leaf::nonnegative:
      d = static_cast<double>(l.u);
      f = static_cast<float>(l.u);
      break;
    case Leaf::negative: {
      const auto v = static_cast<std::int64_t>(l.u);
      d = static_cast<double>(v);
      f = static_cast<float>(v);
      break;
    }
    default:
      d = l.d;
      f = l.kind == Leaf::floating ? l.f : static_cast<float>(l.d);
      break;
  }
  switch (dtype) {
    case DType::float64:
      if (std::isinf(d) && l.kind != Leaf::special) return out_of_range();
      return std::bit_cast<std::uint64_t>(d);
    case DType::float32:
      if (std::isinf(f) && l.kind != Leaf::special) return out_of_range();
      return std::bit_cast<std::uint32_t>(f);
    default: {
      // A value halfway between two FLOAT16s rounds toward the side its text lies on (ties to
      // even only when the text is exactly halfway): the value is rounded once, from the text.
      if (l.kind == Leaf::floating && l.half_side != 0)
        d = std::nextafter(
            d, l.half_side > 0 ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity());
      const std::uint16_t h = double_to_half(d);
      if ((h & 0x7fff) == 0x7c00 && l.kind != Leaf::special) return out_of_range();
      return h;
    }
  }
}

// "nan(0xF)" or "-nan(0xF)": the float64 NaN whose 52 fraction bits are F (1 to 2^52 - 1), as a
// Python float NaN of any sign and payload is written (the Python module); converted to the
// element type as NumPy converts a float64 (a C cast for float32, npy_double_to_half).
std::optional<double> nan_payload(std::string_view s) {
  const bool negative = s.starts_with('-');
  if (negative) s.remove_prefix(1);
  if (!s.starts_with("nan(0x") || !s.ends_with(')')) return std::nullopt;
  const std::string_view digits = s.substr(6, s.size() - 7);
  std::uint64_t fraction = 0;
  const auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), fraction, 16);
  if (ec != std::errc() || p != digits.data() + digits.size() || digits.empty())
    fail(fmt::format("\"{}\": a NaN's payload is written nan(0x...), in hexadecimal digits", s));
  if (fraction == 0 || fraction >= (std::uint64_t{1} << 52))
    fail(fmt::format("\"{}\": a NaN's payload is a float64 fraction from 0x1 to 0xfffffffffffff", s));
  return std::bit_cast<double>((negative ? std::uint64_t{1} << 63 : 0) | 0x7ff0000000000000u | fraction);
}

std::optional<Leaf> parse_string_value(std::string_view s) {
  if (auto b = parse_bits(s)) return b;
  std::string lower(s);
  for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  Leaf l{Leaf::special};
  if (lower == "nan") l.d = std::numeric_limits<double>::quiet_NaN();
  else if (lower == "-nan") l.d = -std::numeric_limits<double>::quiet_NaN();
  else if (auto payload = nan_payload(lower)) l.d = *payload;
  else if (lower == "inf" || lower == "+inf" || lower == "infinity") l.d = std::numeric_limits<double>::infinity();
  else if (lower == "-inf" || lower == "-infinity") l.d = -std::numeric_limits<double>::infinity();
  else return std::nullopt;
  return l;
}

// Position of element i for a conversion error, as in the document (data[2] of flat data with
// shape [2,2], not data[1][0]), like the positions of every other error.
std::string flat_where(std::size_t i, const Shape& shape) {
  std::vector<std::uint64_t> idx(shape.rank());
  std::uint64_t rest = i;
  for (std::size_t k = shape.rank(); k-- > 0;) {
    idx[k] = rest % shape[k];
    rest /= shape[k];
  }
  return index_path(idx, idx.size());
}

}  // namespace

struct JsonTensorDocument::Impl {
  bool has_dtype = false;
  std::string dtype_name;
  bool has_shape = false;
  std::vector<std::uint64_t> shape_dims;
  Shape inferred;
  std::vector<Leaf> leaves;
};

namespace {

// A SAX handler that reads a tensor document in one pass, checking the structure as it goes:
// nesting depth, rectangularity and value kinds are verified at the event that breaks them.
class TensorSax : public nlohmann::json_sax<nlohmann::json> {
 public:
  using json = nlohmann::json;

  bool null() override { return value_error("null"); }
  bool boolean(bool) override { return value_error("a boolean"); }
  bool number_integer(json::number_integer_t v) override {
    Leaf l{v < 0 ? Leaf::negative : Leaf::nonnegative};
    l.u = static_cast<std::uint64_t>(v);
    return value(l);
  }
  bool number_unsigned(json::number_unsigned_t v) override {
    Leaf l{Leaf::nonnegative};
    l.u = v;
    return value(l);
  }
  bool number_float(json::number_float_t, const json::string_t& text) override {
    // nlohmann falls back to a double for integers beyond 64 bits; keep them apart so that an
    // integer dtype reports "out of range" rather than rounding.
    const bool integral = text.find_first_of(".eE") == std::string::npos;
    Leaf l = parse_float_text(text);
    if (integral) l.kind = Leaf::big_integer;
    return value(l);
  }
  bool string(json::string_t& s) override {
    if (mode_ == Mode::dtype_value) {
      dtype_name_ = s;
      mode_ = Mode::object;
      return true;
    }
    if (mode_ != Mode::data && mode_ != Mode::top) return value_error("a string");
    std::optional<Leaf> leaf;
    try {
      leaf = parse_string_value(s);
    } catch (const Error& e) {  // a pattern wider than 64 bits: add the position
      fail(fmt::format("{}: {}", where(), e.what()));
    }
    if (!leaf)
      fail(fmt::format("{}: string \"{}\" is not a bit pattern (\"0x...\", \"0b...\") or nan/inf", where(), s));
    return value(*leaf);
  }
  bool binary(json::binary_t&) override { return value_error("binary data"); }

  bool start_object(std::size_t) override {
    if (mode_ != Mode::top) fail(fmt::format("{}: unexpected object", mode_ == Mode::data ? where() : "document"));
    mode_ = Mode::object;
    is_object_ = true;
    return true;
  }
  bool key(json::string_t& k) override {
    if (k == "dtype") mode_ = Mode::dtype_value;
    else if (k == "shape") mode_ = Mode::shape_value;
    else if (k == "data") mode_ = Mode::data;
    else fail(fmt::format("unexpected key \"{}\" (a tensor object has \"dtype\", \"shape\" and \"data\")", k));
    if (!seen_keys_.insert(k).second) fail(fmt::format("duplicate key \"{}\"", k));
    return true;
  }
  bool end_object() override {
    mode_ = Mode::done;
    return true;
  }
  bool start_array(std::size_t) override {
    switch (mode_) {
      case Mode::shape_value:
        mode_ = Mode::shape_list;
        have_shape_ = true;
        return true;
      case Mode::top:
        mode_ = Mode::data;
        [[fallthrough]];
      case Mode::data: {
        seen_data_ = true;
        const std::size_t d = counts_.size();
        if (d > 0) element_kind(d - 1, Element::array);
        if (d == kMaxRank)
          fail(fmt::format("{}: more than {} nested levels (a tensor has at most {} dimensions)", where(), kMaxRank,
                           kMaxRank));
        counts_.push_back(0);
        return true;
      }
      default:
        return value_error("an array");
    }
  }
  bool end_array() override {
    if (mode_ == Mode::shape_list) {
      mode_ = Mode::object;
      return true;
    }
    const std::size_t level = counts_.size() - 1;
    const std::uint64_t n = counts_.back();
    if (dims_.size() <= level) dims_.resize(level + 1);
    if (!dims_[level]) dims_[level] = n;
    else if (*dims_[level] != n)
      fail(fmt::format("{}: ragged array: {} elements here, {} in the first array at this level",
                       index_path(counts_, level), n, *dims_[level]));
    counts_.pop_back();
    if (counts_.empty()) mode_ = is_object_ ? Mode::object : Mode::done;
    else ++counts_.back();
    return true;
  }
  bool parse_error(std::size_t position, const std::string& token, const nlohmann::detail::exception& ex) override {
    // nlohmann reports a number beyond double's range (1e400, an integer of hundreds of digits)
    // as a parse error (out_of_range.406); it is a value out of range at a known position.
    if (ex.id == 406) {
      if (mode_ == Mode::data || mode_ == Mode::top)
        fail(fmt::format("{}: value {} is out of range (beyond even float64)", where(), token));
      if (mode_ == Mode::shape_value || mode_ == Mode::shape_list)
        fail("\"shape\" must be a list of non-negative integers");
    }
    std::string what = ex.what();
    // "[json.exception.parse_error.101] parse error at line 1, column 5: ..." -> the part after "parse error "
    if (auto p = what.find("parse error"); p != std::string::npos) what = what.substr(p);
    fail(fmt::format("invalid JSON (byte {}): {}", position, what));
  }

  // Hands the parsed document over; call once, after a successful parse.
  void finish(JsonTensorDocument::Impl& doc) {
    if (!seen_data_) fail(is_object_ ? "the object has no \"data\"" : "no data");
    doc.has_dtype = seen_keys_.count("dtype") != 0;
    doc.dtype_name = std::move(dtype_name_);
    doc.has_shape = have_shape_;
    doc.shape_dims = std::move(shape_dims_);
    for (const auto& d : dims_) doc.inferred.push_back(d.value_or(0));
    doc.leaves = std::move(leaves_);
  }

 private:
  enum class Mode { top, object, dtype_value, shape_value, shape_list, data, done };
  enum class Element : std::uint8_t { unknown, array, value };

  std::string where() const { return index_path(counts_, counts_.size()); }

  void element_kind(std::size_t level, Element e) {
    if (kinds_.size() <= level) kinds_.resize(level + 1, Element::unknown);
    if (kinds_[level] == Element::unknown) kinds_[level] = e;
    else if (kinds_[level] != e)
      fail(fmt::format("{}: ragged array: {} where the other elements at this level are {}", where(),
                       e == Element::array ? "an array" : "a number", e == Element::array ? "numbers" : "arrays"));
  }

  bool value(const Leaf& l) {
    if (mode_ == Mode::shape_list) {
      if (l.kind != Leaf::nonnegative) fail("\"shape\" must be a list of non-negative integers");
      if (shape_dims_.size() == kMaxRank) fail(fmt::format("\"shape\" has more than {} dimensions", kMaxRank));
      shape_dims_.push_back(l.u);
      return true;
    }
    if (mode_ == Mode::top) {  // a bare scalar document: a 0-d tensor
      seen_data_ = true;
      leaves_.push_back(l);
      mode_ = Mode::done;
      return true;
    }
    if (mode_ == Mode::data) {
      seen_data_ = true;
      if (counts_.empty()) {  // "data": 5
        leaves_.push_back(l);
        mode_ = Mode::object;
        return true;
      }
      element_kind(counts_.size() - 1, Element::value);
      if (leaves_.size() == kMaxJsonValues)
        fail(fmt::format("{}: JSON tensors are limited to {} values: use .npy for larger tensors", where(),
                         kMaxJsonValues));
      leaves_.push_back(l);
      ++counts_.back();
      return true;
    }
    if (mode_ == Mode::shape_value) fail("\"shape\" must be a list of non-negative integers");
    if (mode_ == Mode::dtype_value) fail("\"dtype\" must be a string");
    fail("unexpected value");
  }

  bool value_error(const char* what) {
    if (mode_ == Mode::data || mode_ == Mode::top) fail(fmt::format("{}: {} is not a number", where(), what));
    if (mode_ == Mode::dtype_value) fail("\"dtype\" must be a string");
    if (mode_ == Mode::shape_value || mode_ == Mode::shape_list)
      fail("\"shape\" must be a list of non-negative integers");
    fail(fmt::format("unexpected {}", what));
  }

 private:
  Mode mode_ = Mode::top;
  bool is_object_ = false;
  bool have_shape_ = false;
  bool seen_data_ = false;
  std::string dtype_name_;
  std::set<std::string> seen_keys_;
  std::vector<std::uint64_t> shape_dims_;
  std::vector<std::uint64_t> counts_;               // elements so far in each open array
  std::vector<std::optional<std::uint64_t>> dims_;  // extent of each level, once known
  std::vector<Element> kinds_;                      // what each level holds
  std::vector<Leaf> leaves_;
};

std::string shortest_float16(std::uint16_t h) {
  const float v = half_to_float(h);
  const char* sign = std::signbit(v) ? "-" : "";
  const float a = std::fabs(v);
  double back = 0;
  const auto reads_back = [&](const std::string& s) {
    std::from_chars(s.data(), s.data() + s.size(), back);
    return double_to_half(back) == h;
  };
  for (int prec = 1; prec <= 5; ++prec) {
    // The nearest prec-digit decimal ("1.562e-02")...
    const std::string s = fmt::format("{:.{}e}", a, prec - 1);
    // Those digits in the notation float32/float64 output uses: "10", not "1e+01".
    if (reads_back(sign + s)) return fmt::format("{}", back);
    // ... or its neighbour on the other side of v: at a power of two the values reading back
    // reach further up than down, so 0.015625 (2^-6) is 0.01563, while the nearest 0.01562
    // reads back as the float16 below.
    const auto e = s.find('e');
    std::string digits = s.substr(0, e);
    if (prec > 1) digits.erase(1, 1);  // the '.'
    const long m = std::stol(digits) + (std::fabs(back) < a ? 1 : -1);
    if (reads_back(fmt::format("{}{}e{}", sign, m, std::stoi(s.substr(e + 1)) - (prec - 1))))
      return fmt::format("{}", back);
  }
  return fmt::format("{}", v);
}

std::string ensure_float_syntax(std::string s) {
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}

}  // namespace

void fail_json_too_large(std::string_view has) {
  // A size just over the bound reads "64.0 MiB (67108865 bytes)": the bound is then given in
  // bytes too, so that the two are not "64 MiB" against "64.0 MiB".
  const bool exact = has.find(" bytes)") != std::string_view::npos;
  fail(fmt::format("JSON input is limited to {}{}, and {}: use .npy for larger tensors",
                   format_byte_size(kMaxJsonInputBytes), exact ? fmt::format(" ({} bytes)", kMaxJsonInputBytes) : "",
                   has));
}

JsonTensorDocument::JsonTensorDocument() : impl_(std::make_unique<Impl>()) {}
JsonTensorDocument::JsonTensorDocument(JsonTensorDocument&&) noexcept = default;
JsonTensorDocument& JsonTensorDocument::operator=(JsonTensorDocument&&) noexcept = default;
JsonTensorDocument::~JsonTensorDocument() = default;

JsonTensorDocument JsonTensorDocument::parse(std::string_view text) {
  if (text.size() > kMaxJsonInputBytes)
    fail_json_too_large(fmt::format("this text is {}", format_byte_size(text.size())));
  TensorSax sax;
  nlohmann::json::sax_parse(text.begin(), text.end(), &sax, nlohmann::json::input_format_t::json, true);
  JsonTensorDocument doc;
  sax.finish(*doc.impl_);
  return doc;
}

std::optional<DType> JsonTensorDocument::declared_dtype() const {
  if (!impl_->has_dtype) return std::nullopt;
  auto dtype = parse_dtype_name(impl_->dtype_name);
  if (!dtype) fail(fmt::format("unknown dtype \"{}\" (known: {})", impl_->dtype_name, dtype_names_help()));
  return dtype;
}

Tensor JsonTensorDocument::to_tensor(std::optional<DType> fallback) const {
  std::optional<DType> dtype = declared_dtype();
  if (!dtype) dtype = fallback;
  if (!dtype) throw OptionError(OptionKey::dtype, OptionRule::needed, {}, "json", {}, Errc::invalid_input);
  const Impl& d = *impl_;
  Shape shape = d.inferred;
  if (d.has_shape) {
    Shape declared(d.shape_dims);
    const std::uint64_t count = declared.element_count();
    const bool nested_match = d.inferred == declared;
    const bool flat_match = d.inferred.rank() == 1 && d.inferred[0] == count;
    const bool scalar_match = d.inferred.rank() == 0 && count == 1;
    // Nested data stops at its first empty level: NumPy's tolist() of shape [2, 0, 3] is
    // [[], []], whose own shape [2, 0] begins the declared one.
    const bool empty_prefix_match = [&] {
      const std::size_t n = d.inferred.rank();
      if (n == 0 || n > declared.rank() || d.inferred[n - 1] != 0) return false;
      for (std::size_t k = 0; k < n; ++k)
        if (d.inferred[k] != declared[k]) return false;
      return true;
    }();
    if (!nested_match && !flat_match && !scalar_match && !empty_prefix_match)
      fail(fmt::format("shape {} ({} element{}) does not match the data, which has shape {}", declared.to_list_string(),
                       count, count == 1 ? "" : "s", d.inferred.to_list_string()));
    shape = declared;
  }
  Tensor t(*dtype, shape);
  for (std::size_t i = 0; i < d.leaves.size(); ++i)
    t.set_bits_at(i, leaf_to_bits(d.leaves[i], *dtype, flat_where(i, d.inferred)));
  return t;
}

Tensor read_json_tensor(std::string_view text, const JsonReadOptions& options) {
  return JsonTensorDocument::parse(text).to_tensor(options.default_dtype);
}

std::string format_json_value(DType dtype, std::uint64_t bits, bool hex) {
  const DTypeInfo& info = dtype_info(dtype);
  if (hex) return fmt::format("\"0x{:0{}x}\"", bits, info.size * 2);
  switch (info.kind) {
    case DTypeKind::unsigned_int:
      return fmt::format("{}", bits);
    case DTypeKind::signed_int: {
      const unsigned shift = 64 - info.bits();
      return fmt::format("{}", static_cast<std::int64_t>(bits << shift) >> shift);
    }
    case DTypeKind::floating:
      break;
  }
  const auto nonfinite = [&](double v) { return std::isnan(v) || std::isinf(v); };
  switch (dtype) {
    case DType::float64: {
      const double v = std::bit_cast<double>(bits);
      if (nonfinite(v)) return fmt::format("\"0x{:016x}\"", bits);
      return ensure_float_syntax(fmt::format("{}", v));
    }
    case DType::float32: {
      const float v = std::bit_cast<float>(static_cast<std::uint32_t>(bits));
      if (nonfinite(v)) return fmt::format("\"0x{:08x}\"", bits);
      return ensure_float_syntax(fmt::format("{}", v));
    }
    default: {
      const auto h = static_cast<std::uint16_t>(bits);
      if ((h & 0x7c00) == 0x7c00) return fmt::format("\"0x{:04x}\"", bits);
      return ensure_float_syntax(shortest_float16(h));
    }
  }
}

std::string write_json_tensor(const TensorView& t, const JsonWriteOptions& options) {
  const std::size_t size = dtype_info(t.dtype).size;
  const std::size_t rank = t.shape.rank();
  std::string out =
      fmt::format("{{\n  \"dtype\": \"{}\",\n  \"shape\": {},\n  \"data\": ", dtype_info(t.dtype).numpy_name,
                  fmt::format("[{}]", fmt::join(t.shape.dims(), ", ")));
  const std::uint64_t n = t.element_count();
  if (rank == 0) {
    out += format_json_value(t.dtype, load_bits(t.data, size, 0), options.hex);
  } else {
    // NumPy-style layout: each innermost row on its own line, brackets aligned.
    std::vector<std::uint64_t> idx(rank, 0);
    const std::string indent(10, ' ');  // width of `  "data": `
    if (n == 0) {
      out += "[]";  // the declared shape carries the zero dimension
    } else {
      out += std::string(rank, '[');
      for (std::uint64_t i = 0;;) {
        out += format_json_value(t.dtype, load_bits(t.data, size, static_cast<std::size_t>(i)), options.hex);
        ++i;
        std::size_t closed = 0;  // how many levels this element finished
        for (std::size_t k = rank; k-- > 0;) {
          if (++idx[k] < t.shape[k]) break;
          idx[k] = 0;
          ++closed;
        }
        if (closed == rank) break;
        if (closed == 0) {
          out += ", ";
        } else {
          out += std::string(closed, ']');
          out += ",\n" + indent + std::string(rank - closed, ' ') + std::string(closed, '[');
        }
      }
      out += std::string(rank, ']');
    }
  }
  out += "\n}\n";
  return out;
}

namespace {

// An integer literal beyond 64 bits: out of range for every integer dtype, but a float dtype
// takes its value, rounded once (to double and, separately, to float).
Leaf big_integer_literal(std::string_view text, std::string_view digits, int base, bool neg) {
  Leaf l{Leaf::big_integer};
  if (base == 10) {
    l = parse_float_text(text);
  } else {
    std::string hex = neg ? "-" : "";
    if (base == 2) {
      const std::string bin = std::string((4 - digits.size() % 4) % 4, '0') + std::string(digits);
      for (std::size_t i = 0; i < bin.size(); i += 4)
        hex += "0123456789abcdef"[(bin[i] - '0') * 8 + (bin[i + 1] - '0') * 4 + (bin[i + 2] - '0') * 2 +
                                  (bin[i + 3] - '0')];
    } else {
      hex += digits;
    }
    const char* end = hex.data() + hex.size();
    const double inf = neg ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
    if (std::from_chars(hex.data(), end, l.d, std::chars_format::hex).ec != std::errc()) l.d = inf;
    if (std::from_chars(hex.data(), end, l.f, std::chars_format::hex).ec != std::errc()) l.f = static_cast<float>(inf);
  }
  l.kind = Leaf::big_integer;
  return l;
}

}  // namespace

std::uint64_t parse_scalar_literal(std::string_view text, DType dtype) {
  // Unsigned 0x/0b literals are bit patterns (checked against the width); a sign makes any
  // base an integer value (checked against the type's range): -0x1 is -1.
  const bool neg = !text.empty() && text[0] == '-';
  std::string_view body = neg ? text.substr(1) : text;
  if (!neg) {
    if (auto bits = parse_bits(body)) return leaf_to_bits(*bits, dtype, "");
  }
  int base = 10;
  if (body.size() > 2 && body[0] == '0' && (body[1] == 'x' || body[1] == 'X')) base = 16;
  if (body.size() > 2 && body[0] == '0' && (body[1] == 'b' || body[1] == 'B')) base = 2;
  std::optional<Leaf> leaf;
  if (base == 10 && (body.find_first_of(".eE") != std::string_view::npos || parse_string_value(text))) {
    leaf = parse_string_value(text);  // nan, inf, -inf
    if (!leaf) leaf = parse_float_text(text);
  } else {
    const std::string_view digits = base == 10 ? body : body.substr(2);
    std::uint64_t mag = 0;
    auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), mag, base);
    if (digits.empty() || p != digits.data() + digits.size() ||
        (ec != std::errc() && ec != std::errc::result_out_of_range))
      fail(fmt::format("'{}' is not a number", text));
    Leaf l{Leaf::nonnegative};
    if (ec == std::errc::result_out_of_range || (neg && mag > (std::uint64_t{1} << 63))) {
      l = big_integer_literal(text, digits, base, neg);
    } else if (neg && mag != 0) {
      l.kind = Leaf::negative;
      l.u = std::uint64_t{0} - mag;
    } else {
      l.u = mag;
    }
    leaf = l;
  }
  return leaf_to_bits(*leaf, dtype, "");
}

}  // namespace dmlbits

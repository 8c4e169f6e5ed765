#include "dmlbits/npy.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <optional>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "dmlbits/error.hpp"

namespace dmlbits {
namespace {

static_assert(std::endian::native == std::endian::little,
              "dmlbits writes little-endian .npy data straight from memory");

constexpr std::string_view kMagic = "\x93NUMPY";

[[noreturn]] void fail(std::string msg) { throw Error(Errc::invalid_input, std::move(msg)); }

// A parser for the Python dict literal NumPy writes: {'descr': '<u4', 'fortran_order': False,
// 'shape': (2, 3), }. Keys in any order, any spacing, either quote style, trailing commas,
// Python 2's 3L.
class HeaderParser {
 public:
  explicit HeaderParser(std::string_view text) : s_(text) {}

  void parse(NpyHeader& h) {
    bool have_descr = false, have_fortran = false, have_shape = false;
    skip_ws();
    expect('{');
    for (;;) {
      skip_ws();
      if (peek() == '}') {
        ++pos_;
        break;
      }
      const std::string key = parse_string("a key");
      skip_ws();
      expect(':');
      skip_ws();
      if (key == "descr") {
        if (have_descr) fail("malformed header: duplicate key 'descr'");
        have_descr = true;
        if (peek() == '[') fail("unsupported dtype: structured arrays are not tensors");
        h.descr = parse_string("the descr value");
      } else if (key == "fortran_order") {
        if (have_fortran) fail("malformed header: duplicate key 'fortran_order'");
        have_fortran = true;
        h.fortran_order = parse_bool();
      } else if (key == "shape") {
        if (have_shape) fail("malformed header: duplicate key 'shape'");
        have_shape = true;
        h.shape = parse_shape();
      } else {
        fail(fmt::format("malformed header: unexpected key '{}'", key));
      }
      skip_ws();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() == '}') continue;
      fail(fmt::format("malformed header: expected ',' or '}}' at offset {}", pos_));
    }
    skip_ws();
    if (pos_ != s_.size()) fail("malformed header: unexpected text after the dictionary");
    if (!have_descr) fail("malformed header: missing key 'descr'");
    if (!have_fortran) fail("malformed header: missing key 'fortran_order'");
    if (!have_shape) fail("malformed header: missing key 'shape'");
  }

 private:
  char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  void skip_ws() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r'))
      ++pos_;
  }
  void expect(char c) {
    if (peek() != c) fail(fmt::format("malformed header: expected '{}' at offset {}", c, pos_));
    ++pos_;
  }
  std::string parse_string(const char* what) {
    const char q = peek();
    if (q != '\'' && q != '"') fail(fmt::format("malformed header: expected {} at offset {}", what, pos_));
    const std::size_t end = s_.find(q, pos_ + 1);
    if (end == std::string_view::npos) fail("malformed header: unterminated string");
    std::string out(s_.substr(pos_ + 1, end - pos_ - 1));
    pos_ = end + 1;
    return out;
  }
  bool parse_bool() {
    if (s_.substr(pos_, 4) == "True") {
      pos_ += 4;
      return true;
    }
    if (s_.substr(pos_, 5) == "False") {
      pos_ += 5;
      return false;
    }
    fail(fmt::format("malformed header: fortran_order must be True or False (offset {})", pos_));
  }
  Shape parse_shape() {
    expect('(');
    Shape shape;
    bool need_comma_for_one = true;
    for (;;) {
      skip_ws();
      if (peek() == ')') {
        ++pos_;
        break;
      }
      if (peek() < '0' || peek() > '9')
        fail(fmt::format("malformed header: bad shape at offset {}", pos_));
      std::uint64_t v = 0;
      while (peek() >= '0' && peek() <= '9') {
        if (__builtin_mul_overflow(v, 10u, &v) || __builtin_add_overflow(v, static_cast<unsigned>(peek() - '0'), &v))
          fail("malformed header: a shape dimension overflows 64 bits");
        ++pos_;
      }
      if (peek() == 'L') ++pos_;
      if (shape.rank() == kMaxRank) fail(fmt::format("unsupported shape: more than {} dimensions", kMaxRank));
      shape.push_back(v);
      skip_ws();
      if (peek() == ',') {
        ++pos_;
        need_comma_for_one = false;
        continue;
      }
      if (peek() != ')') fail(fmt::format("malformed header: bad shape at offset {}", pos_));
    }
    // Python's (3) is the integer 3, not a tuple.
    if (shape.rank() == 1 && need_comma_for_one) fail("malformed header: shape (N) is not a tuple; expected (N,)");
    return shape;
  }

  std::string_view s_;
  std::size_t pos_ = 0;
};

// Parses descr into h.dtype/byte_order/is_bool.
void parse_descr(NpyHeader& h) {
  std::string_view d = h.descr;
  const auto unsupported = [&](std::string_view why) -> void {
    fail(fmt::format("unsupported dtype '{}'{}", h.descr, why));
  };
  // No order mark means native order to NumPy (np.dtype('u4').byteorder is '='), not
  // "not applicable", which only one-byte types are.
  h.byte_order = '=';
  if (!d.empty() && (d[0] == '<' || d[0] == '>' || d[0] == '=' || d[0] == '|')) {
    h.byte_order = d[0];
    d.remove_prefix(1);
  }
  if (d == "b1") {
    h.is_bool = true;
    h.dtype = DType::uint8;
    return;
  }
  if (d.size() >= 2 && (d[0] == 'u' || d[0] == 'i' || d[0] == 'f')) {
    for (const auto& row : dtype_table()) {
      if (row.numpy_code() == d) {
        h.dtype = row.dtype;
        return;
      }
    }
  }
  if (!d.empty()) {
    switch (d[0]) {
      case 'c': unsupported(" (complex numbers are not tensors of a DirectML type)"); break;
      case 'O': unsupported(" (object arrays are not supported)"); break;
      case 'S': case 'U': case 'a': unsupported(" (string arrays are not supported)"); break;
      case 'V': unsupported(" (void/structured arrays are not supported)"); break;
      case 'M': case 'm': unsupported(" (datetime arrays are not supported)"); break;
      default: break;
    }
  }
  unsupported("");
}

std::uint32_t read_le(const std::byte* p, int n) {
  std::uint32_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | std::to_integer<std::uint32_t>(p[i]);
  return v;
}

void byteswap_inplace(std::byte* data, std::size_t count, std::size_t size) {
  for (std::size_t i = 0; i < count; ++i) std::reverse(data + i * size, data + (i + 1) * size);
}

// Copies column-major `src` into row-major `dst` for the same logical array.
void fortran_to_c(const std::byte* src, std::byte* dst, const Shape& shape, std::size_t size) {
  const std::size_t rank = shape.rank();
  const std::uint64_t n = shape.element_count();
  if (n == 0) return;
  std::array<std::uint64_t, kMaxRank> fstride{};  // column-major strides in elements
  std::uint64_t s = 1;
  for (std::size_t k = 0; k < rank; ++k) {
    fstride[k] = s;
    s *= shape[k];
  }
  std::array<std::uint64_t, kMaxRank> idx{};
  std::uint64_t off = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    std::memcpy(dst + i * size, src + off * size, size);
    for (std::size_t k = rank; k-- > 0;) {  // increment the C-order index, last axis fastest
      off += fstride[k];
      if (++idx[k] < shape[k]) break;
      off -= fstride[k] * shape[k];
      idx[k] = 0;
    }
  }
}

}  // namespace

bool NpyHeader::needs_swap() const {
  return byte_order == '>' && dtype_info(dtype).size > 1;
}

bool is_npy(std::span<const std::byte> bytes) {
  return bytes.size() >= kMagic.size() &&
         std::memcmp(bytes.data(), kMagic.data(), kMagic.size()) == 0;
}

NpyHeader parse_npy_header(std::span<const std::byte> file) {
  if (!is_npy(file)) fail("not a .npy file (bad magic)");
  if (file.size() < 10) fail("truncated header");
  NpyHeader h;
  h.major = std::to_integer<int>(file[6]);
  h.minor = std::to_integer<int>(file[7]);
  if (h.minor != 0 || h.major < 1 || h.major > 3)
    fail(fmt::format("unsupported .npy version {}.{} (dmlbits reads 1.0, 2.0 and 3.0)", h.major, h.minor));
  const int len_bytes = h.major == 1 ? 2 : 4;
  const std::size_t prefix = 8 + static_cast<std::size_t>(len_bytes);
  if (file.size() < prefix) fail("truncated header");
  const std::size_t header_len = read_le(file.data() + 8, len_bytes);
  if (header_len > kMaxNpyHeaderBytes)
    fail(fmt::format("header too long ({} bytes; the limit is {})", header_len, kMaxNpyHeaderBytes));
  if (file.size() - prefix < header_len)
    fail(fmt::format("truncated header: expected {} bytes, found {}", header_len, file.size() - prefix));
  const std::string_view text(reinterpret_cast<const char*>(file.data() + prefix), header_len);
  if (h.major < 3) {
    // Versions 1 and 2 are latin-1; NumPy's own headers are ASCII. Control bytes other than
    // the whitespace of padding are never valid.
    for (char c : text)
      if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\r' && c != '\t' && c != ' ')
        fail("malformed header: control character in header");
  }
  HeaderParser(text).parse(h);
  parse_descr(h);
  h.data_offset = prefix + header_len;
  h.data_bytes = h.shape.byte_size(dtype_info(h.dtype).size);
  return h;
}

void check_npy_data_size(const NpyHeader& h, std::uint64_t found) {
  if (found < h.data_bytes)
    fail(fmt::format("truncated: expected {} bytes of data, found {}", h.data_bytes, found));
  if (found > h.data_bytes)
    fail(fmt::format("trailing garbage: expected {} bytes of data, found {}", h.data_bytes, found));
}

NpyHeader inspect_npy(std::span<const std::byte> file) {
  NpyHeader h = parse_npy_header(file);
  check_npy_data_size(h, file.size() - h.data_offset);
  return h;
}

Tensor read_npy(std::span<const std::byte> file) {
  const NpyHeader h = inspect_npy(file);
  Tensor t(h.dtype, h.shape);
  const std::byte* src = file.data() + h.data_offset;
  const std::size_t size = dtype_info(h.dtype).size;
  if (h.fortran_order && h.shape.rank() > 1)
    fortran_to_c(src, t.data(), h.shape, size);
  else if (t.byte_size() > 0)
    std::memcpy(t.data(), src, t.byte_size());
  if (h.needs_swap()) byteswap_inplace(t.data(), static_cast<std::size_t>(t.element_count()), size);
  return t;
}

std::string npy_header(DType dtype, const Shape& shape) {
  const std::string shape_text = shape.to_string();  // fmt: locale-independent, no separators
  std::string dict = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}",
                                 dtype_info(dtype).numpy_descr(), shape_text);
  // magic(6) + version(2) + length(2 or 4) + dict + padding + '\n' is a multiple of 64.
  auto build = [&](int major) {
    const std::size_t prefix = major == 1 ? 10 : 12;
    const std::size_t unpadded = prefix + dict.size() + 1;
    const std::size_t total = (unpadded + 63) / 64 * 64;
    const std::size_t header_len = total - prefix;
    std::string out(kMagic);
    out += static_cast<char>(major);
    out += '\0';
    for (std::size_t i = 0; i < prefix - 8; ++i) out += static_cast<char>((header_len >> (8 * i)) & 0xff);
    out += dict;
    out.append(total - out.size() - 1, ' ');
    out += '\n';
    return out;
  };
  std::string v1 = build(1);
  if (v1.size() - 10 <= 0xffff) return v1;
  return build(2);
}

}  // namespace dmlbits

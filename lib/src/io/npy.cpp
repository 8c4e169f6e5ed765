#include "npy.hpp"

#include <algorithm>
#include <array>
#include <bit>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <cstring>
#include <optional>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "byte_swap.hpp"
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
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) ++pos_;
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
      if (peek() < '0' || peek() > '9') fail(fmt::format("malformed header: bad shape at offset {}", pos_));
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
      case 'c':
        unsupported(" (complex numbers are not tensors of a DirectML type)");
        break;
      case 'O':
        unsupported(" (object arrays are not supported)");
        break;
      case 'S':
      case 'U':
      case 'a':
        unsupported(" (string arrays are not supported)");
        break;
      case 'V':
        unsupported(" (void/structured arrays are not supported)");
        break;
      case 'M':
      case 'm':
        unsupported(" (datetime arrays are not supported)");
        break;
      default:
        break;
    }
  }
  unsupported("");
}

std::uint32_t read_le(const std::byte* p, int n) {
  std::uint32_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | std::to_integer<std::uint32_t>(p[i]);
  return v;
}

// NpyDecoder's pieces. C-order data to swap arrives in pieces this large, so that each is still
// in cache (L2) when it is swapped. Fortran-order data is transposed from a scratch buffer of
// about kScratchBytes: with 1 MiB, the transpose of 128 MiB took 1.5 times as long (each row
// of the tensor got shorter runs per piece). Transposed tensors from kStreamBytes up, larger
// than a last-level cache, are written with non-temporal stores.
constexpr std::size_t kSwapPieceBytes = 256 << 10;
constexpr std::size_t kScratchBytes = 4 << 20;
constexpr std::uint64_t kStreamBytes = std::uint64_t{32} << 20;

template <class U>
U load(const std::byte* p) {
  U v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <class U>
void store(std::byte* p, U v) {
  std::memcpy(p, &v, sizeof v);
}

#if defined(__SSE2__)
// SSE2 (every x86-64 CPU has it), 16 bytes at a time: element by element, byte-swapping took
// about as long as reading the file from the page cache, and transposing much longer
// (testdata/benchmarks.md, "Byte-swapping and transposing .npy input"). (swapped_lanes:
// byte_swap.hpp.)
using Vec = __m128i;

template <std::size_t G>
Vec unpack_lo(Vec a, Vec b) {
  if constexpr (G == 1) return _mm_unpacklo_epi8(a, b);
  else if constexpr (G == 2) return _mm_unpacklo_epi16(a, b);
  else if constexpr (G == 4) return _mm_unpacklo_epi32(a, b);
  else return _mm_unpacklo_epi64(a, b);
}
template <std::size_t G>
Vec unpack_hi(Vec a, Vec b) {
  if constexpr (G == 1) return _mm_unpackhi_epi8(a, b);
  else if constexpr (G == 2) return _mm_unpackhi_epi16(a, b);
  else if constexpr (G == 4) return _mm_unpackhi_epi32(a, b);
  else return _mm_unpackhi_epi64(a, b);
}

// Transposes G blocks of N x N elements of S bytes (N * S = 16): src row r (16 bytes at
// src + r * src_stride, r < G * N) becomes column r of the N dst rows (G * 16 bytes at
// dst + c * dst_stride). With G = 4 each dst row is a whole cache line, stored at once, so
// that non-temporal stores (Stream, 16-byte-aligned rows) fill their write-combining buffers
// whole. Each round interleaves pairs of rows at a width twice the last's; after log2(N)
// rounds, row j of a block holds the column whose index is j with its bits reversed.
template <std::size_t S, bool Swap, bool Stream, std::size_t G>
void transpose_tile(const std::byte* src, std::size_t src_stride, std::byte* dst, std::size_t dst_stride) {
  constexpr std::size_t N = 16 / S;
  constexpr auto kColumn = [] {
    std::array<std::size_t, N> c{};
    constexpr std::size_t bits = std::countr_zero(N);
    for (std::size_t j = 0; j < N; ++j)
      for (std::size_t b = 0; b < bits; ++b) c[j] |= ((j >> b) & 1) << (bits - 1 - b);
    return c;
  }();
  // Unrolled whole (GCC's -O2 kept these loops, with the vectors in memory).
  Vec out[N][G];
#pragma GCC unroll 4
  for (std::size_t g = 0; g < G; ++g) {
    Vec v[N], t[N];
#pragma GCC unroll 16
    for (std::size_t r = 0; r < N; ++r)
      v[r] = _mm_loadu_si128(reinterpret_cast<const Vec*>(src + (g * N + r) * src_stride));
    const auto round = [&]<std::size_t W>() {
#pragma GCC unroll 8
      for (std::size_t j = 0; j < N / 2; ++j) {
        t[j] = unpack_lo<W>(v[2 * j], v[2 * j + 1]);
        t[j + N / 2] = unpack_hi<W>(v[2 * j], v[2 * j + 1]);
      }
#pragma GCC unroll 16
      for (std::size_t j = 0; j < N; ++j) v[j] = t[j];
    };
    if constexpr (S <= 1) round.template operator()<1>();
    if constexpr (S <= 2) round.template operator()<2>();
    if constexpr (S <= 4) round.template operator()<4>();
    round.template operator()<8>();
#pragma GCC unroll 16
    for (std::size_t j = 0; j < N; ++j) out[kColumn[j]][g] = Swap ? swapped_lanes<S>(v[j]) : v[j];
  }
#pragma GCC unroll 16
  for (std::size_t c = 0; c < N; ++c)
#pragma GCC unroll 4
    for (std::size_t g = 0; g < G; ++g) {
      auto* p = reinterpret_cast<Vec*>(dst + c * dst_stride + g * 16);
      if constexpr (Stream) _mm_stream_si128(p, out[c][g]);
      else _mm_storeu_si128(p, out[c][g]);
    }
}
#endif

template <class U>
void swap_in_place(std::byte* data, std::size_t count) {
  copy_swapped<U>(data, data, count);
}

void swap_in_place(std::byte* data, std::size_t count, std::size_t size) {
  switch (size) {
    case 2:
      swap_in_place<std::uint16_t>(data, count);
      break;
    case 4:
      swap_in_place<std::uint32_t>(data, count);
      break;
    case 8:
      swap_in_place<std::uint64_t>(data, count);
      break;
    default:
      break;
  }
}

// Fortran-order data lists the elements with the first axis fastest: it is the C-order array
// of the reversed shape. `src` holds slices [first, first + count) of the last axis, as they
// lie in the file (each `slice` = the product of the other axes, elements long); this puts
// each of their elements at its C-order place in `dst`, swapped if Swap. For every index of the
// middle axes (1 to rank - 2) that is a transpose of an axis-0 x last-axis block, done in
// tiles of a cache line's worth of slices x 16 bytes of the first axis (transpose_tile), so
// that each line of `dst` is written whole at once; the edges element by element.
template <class U, bool Swap>
void fortran_slices_to_c(const std::byte* src, std::byte* dst, const Shape& shape, std::uint64_t first,
                         std::uint64_t count) {
  constexpr std::size_t S = sizeof(U);
  const std::size_t rank = shape.rank();
  const std::uint64_t s0 = shape[0];
  std::uint64_t slice = 1, row = 1;  // Fortran stride of the last axis, C stride of the first
  for (std::size_t k = 0; k + 1 < rank; ++k) slice *= shape[k];
  for (std::size_t k = 1; k < rank; ++k) row *= shape[k];
  std::array<std::uint64_t, kMaxRank> fstride{}, cstride{}, idx{};
  for (std::size_t k = 1; k + 1 < rank; ++k) {
    fstride[k] = k == 1 ? s0 : fstride[k - 1] * shape[k - 1];
    cstride[k] = 1;
    for (std::size_t j = k + 1; j < rank; ++j) cstride[k] *= shape[j];
  }
  constexpr std::uint64_t kLine = 64 / S;
#if defined(__SSE2__)
  constexpr std::uint64_t kBlock = 16 / S;  // transpose_tile's N
  const std::uint64_t s0_blocks = s0 / kBlock * kBlock;
#else
  constexpr std::uint64_t kBlock = 1;
  const std::uint64_t s0_blocks = 0;  // no tiles: every element one by one
#endif
  const auto one = [&](const std::byte* s, std::byte* d, std::uint64_t i, std::uint64_t k) {
    const U v = load<U>(s + (k * slice + i) * S);
    store(d + (i * row + k) * S, Swap ? byte_swapped(v) : v);
  };
  const std::uint64_t lines = count / kLine * kLine;                       // slices in whole lines
  const std::uint64_t blocks = lines + (count - lines) / kBlock * kBlock;  // and in blocks
#if defined(__SSE2__)
  // Non-temporal stores for a tensor larger than a last-level cache, which it would only flush:
  // they write whole lines without reading them first.
  const bool stream_large = shape.element_count() * S >= kStreamBytes && (row * S) % 16 == 0;
  // Rows [0, s0_blocks) of slices [0, blocks), a square of cache lines at a time: a line of
  // each of kLine slices becomes a line of each of kLine rows, so every line of `src` is
  // fetched once (the slices lie a power of two apart, and a tile per block of rows had each
  // line evicted before its next use: 4 times slower than memcpy), and each row of `dst` gets
  // a run of the piece's slices, adjacent there.
  const auto tiles = [&]<bool Stream>(const std::byte* s, std::byte* d) {
    for (std::uint64_t i0 = 0; i0 < s0_blocks; i0 += kLine) {
      const std::uint64_t i1 = std::min(i0 + kLine, s0_blocks);
      for (std::uint64_t k = 0; k < lines; k += kLine) {
        // The next square's lines, one per slice: a stride the hardware prefetchers miss.
        if (k + kLine < lines)
          for (std::uint64_t r = 0; r < kLine; ++r)
            _mm_prefetch(reinterpret_cast<const char*>(s + ((k + kLine + r) * slice + i0) * S), _MM_HINT_T0);
        for (std::uint64_t i = i0; i < i1; i += kBlock)
          transpose_tile<S, Swap, Stream, 4>(s + (k * slice + i) * S, slice * S, d + (i * row + k) * S, row * S);
      }
      for (std::uint64_t k = lines; k < blocks; k += kBlock)
        for (std::uint64_t i = i0; i < i1; i += kBlock)
          transpose_tile<S, Swap, Stream, 1>(s + (k * slice + i) * S, slice * S, d + (i * row + k) * S, row * S);
    }
  };
#endif
  std::uint64_t fo = 0, co = 0;  // the middle index's offsets in src's slices and in dst
  for (;;) {
    const std::byte* s = src + fo * S;
    std::byte* d = dst + (co + first) * S;
#if defined(__SSE2__)
    if (stream_large && reinterpret_cast<std::uintptr_t>(d) % 16 == 0) tiles.template operator()<true>(s, d);
    else tiles.template operator()<false>(s, d);
#endif
    for (std::uint64_t i = 0; i < s0_blocks; ++i)
      for (std::uint64_t k = blocks; k < count; ++k) one(s, d, i, k);
    for (std::uint64_t i = s0_blocks; i < s0; ++i)
      for (std::uint64_t k = 0; k < count; ++k) one(s, d, i, k);
    // The next middle index, last middle axis fastest (any order would do).
    std::size_t k = rank - 1;
    while (--k >= 1) {
      fo += fstride[k];
      co += cstride[k];
      if (++idx[k] < shape[k]) break;
      fo -= fstride[k] * shape[k];
      co -= cstride[k] * shape[k];
      idx[k] = 0;
    }
    if (k == 0) break;
  }
#if defined(__SSE2__)
  if (stream_large) _mm_sfence();  // the streamed stores are seen before anything that follows
#endif
}

template <bool Swap>
void fortran_slices_to_c(const std::byte* src, std::byte* dst, const Shape& shape, std::uint64_t first,
                         std::uint64_t count, std::size_t size) {
  switch (size) {
    case 1:
      fortran_slices_to_c<std::uint8_t, false>(src, dst, shape, first, count);
      break;
    case 2:
      fortran_slices_to_c<std::uint16_t, Swap>(src, dst, shape, first, count);
      break;
    case 4:
      fortran_slices_to_c<std::uint32_t, Swap>(src, dst, shape, first, count);
      break;
    default:
      fortran_slices_to_c<std::uint64_t, Swap>(src, dst, shape, first, count);
      break;
  }
}

}  // namespace

bool NpyHeader::needs_swap() const { return byte_order == '>' && dtype_info(dtype).size > 1; }

bool is_npy(std::span<const std::byte> bytes) {
  return bytes.size() >= kMagic.size() && std::memcmp(bytes.data(), kMagic.data(), kMagic.size()) == 0;
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
  if (found < h.data_bytes) fail(fmt::format("truncated: expected {} bytes of data, found {}", h.data_bytes, found));
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
  NpyDecoder decoder(h);
  const std::byte* src = file.data() + h.data_offset;
  for (std::size_t i = 0; i < decoder.pieces(); ++i) {
    const auto piece = decoder.buffer(i);
    std::memcpy(piece.data(), src + decoder.offset(i), piece.size());
    decoder.convert(i);
  }
  return decoder.take();
}

NpyDecoder::NpyDecoder(const NpyHeader& h)
    : tensor_(h.dtype, h.shape), size_(dtype_info(h.dtype).size), swap_(h.needs_swap()) {
  const Shape& shape = h.shape;
  const std::uint64_t total = tensor_.byte_size();
  if (total == 0) return;
  std::size_t long_axes = 0;
  for (std::size_t k = 0; k < shape.rank(); ++k) long_axes += shape[k] > 1;
  // With at most one axis longer than 1, Fortran order lists the elements as C order does.
  fortran_ = h.fortran_order && long_axes > 1;
  if (!fortran_) {
    piece_bytes_ = swap_ ? kSwapPieceBytes : total;
    pieces_ = static_cast<std::size_t>((total + piece_bytes_ - 1) / piece_bytes_);
    return;
  }
  slice_elements_ = 1;
  for (std::size_t k = 0; k + 1 < shape.rank(); ++k) slice_elements_ *= shape[k];
  // At least a cache line's worth of slices (see fortran_slices_to_c), a multiple of it when
  // more fit in kScratchBytes, and no more than the last axis has.
  const std::uint64_t line = std::max<std::uint64_t>(1, 64 / size_);
  std::uint64_t slices = std::max<std::uint64_t>(1, kScratchBytes / (slice_elements_ * size_));
  slices = slices > line ? slices / line * line : line;
  const std::uint64_t last = shape[shape.rank() - 1];
  slices_per_piece_ = std::min<std::uint64_t>(slices, last);
  piece_bytes_ = slices_per_piece_ * slice_elements_ * size_;
  pieces_ = static_cast<std::size_t>((last + slices_per_piece_ - 1) / slices_per_piece_);
  scratch_ = AlignedBuffer(static_cast<std::size_t>(piece_bytes_));
}

std::uint64_t NpyDecoder::offset(std::size_t i) const { return i * piece_bytes_; }

std::span<std::byte> NpyDecoder::buffer(std::size_t i) {
  const auto bytes = static_cast<std::size_t>(std::min<std::uint64_t>(piece_bytes_, tensor_.byte_size() - offset(i)));
  return {fortran_ ? scratch_.data() : tensor_.data() + offset(i), bytes};
}

void NpyDecoder::convert(std::size_t i) {
  const std::span<std::byte> piece = buffer(i);
  if (fortran_) {
    const std::uint64_t first = i * slices_per_piece_, slices = piece.size() / (slice_elements_ * size_);
    if (swap_) fortran_slices_to_c<true>(piece.data(), tensor_.data(), tensor_.shape(), first, slices, size_);
    else fortran_slices_to_c<false>(piece.data(), tensor_.data(), tensor_.shape(), first, slices, size_);
  } else if (swap_) {
    swap_in_place(piece.data(), piece.size() / size_, size_);
  }
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

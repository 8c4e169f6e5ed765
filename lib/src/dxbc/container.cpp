// MD5, the DXBC checksum (MD5 with the container's own final block) and the container layout.
#include <bit>
#include <cstring>

#include "dxbc.hpp"
#include "dmlbits/error.hpp"

namespace dmlbits::dxbc {
namespace {

using State = std::array<std::uint32_t, 4>;

constexpr State kMd5Init{0x67452301u, 0xefcdab89u, 0x98badcfeu, 0x10325476u};

// Per-round shift amounts and the sine-derived constants of RFC 1321.
constexpr std::array<unsigned, 64> kShift{7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22,
                                          5, 9,  14, 20, 5, 9,  14, 20, 5, 9,  14, 20, 5, 9,  14, 20,
                                          4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23,
                                          6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21};
constexpr std::array<std::uint32_t, 64> kSine{
    0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613, 0xfd469501,
    0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821,
    0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
    0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed, 0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a,
    0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70,
    0x289b7ec6, 0xeaa127fa, 0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
    0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
    0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391};

std::uint32_t load_le(const std::uint8_t* p) {
  return static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8 |
         static_cast<std::uint32_t>(p[2]) << 16 | static_cast<std::uint32_t>(p[3]) << 24;
}

void store_le(std::uint8_t* p, std::uint32_t v) {
  p[0] = static_cast<std::uint8_t>(v);
  p[1] = static_cast<std::uint8_t>(v >> 8);
  p[2] = static_cast<std::uint8_t>(v >> 16);
  p[3] = static_cast<std::uint8_t>(v >> 24);
}

// The MD5 compression function on one 64-byte block.
void md5_block(State& s, const std::uint8_t* block) {
  std::array<std::uint32_t, 16> m{};
  for (unsigned i = 0; i < 16; ++i) m[i] = load_le(block + 4 * i);
  std::uint32_t a = s[0], b = s[1], c = s[2], d = s[3];
  for (unsigned i = 0; i < 64; ++i) {
    std::uint32_t f = 0;
    unsigned g = 0;
    if (i < 16) {
      f = (b & c) | (~b & d);
      g = i;
    } else if (i < 32) {
      f = (d & b) | (~d & c);
      g = (5 * i + 1) % 16;
    } else if (i < 48) {
      f = b ^ c ^ d;
      g = (3 * i + 5) % 16;
    } else {
      f = c ^ (b | ~d);
      g = (7 * i) % 16;
    }
    f += a + kSine[i] + m[g];
    a = d;
    d = c;
    c = b;
    b += std::rotl(f, static_cast<int>(kShift[i]));
  }
  s[0] += a;
  s[1] += b;
  s[2] += c;
  s[3] += d;
}

// Whole blocks of `data`; returns the leftover bytes (fewer than 64).
std::span<const std::uint8_t> md5_whole_blocks(State& s, std::span<const std::uint8_t> data) {
  std::size_t i = 0;
  for (; i + 64 <= data.size(); i += 64) md5_block(s, data.data() + i);
  return data.subspan(i);
}

constexpr std::size_t kChecksummedFrom = 20;  // magic and checksum are not covered

}  // namespace

std::array<std::uint8_t, 16> md5(std::span<const std::uint8_t> data) {
  State s = kMd5Init;
  const auto rest = md5_whole_blocks(s, data);
  // Standard padding: 0x80, zeros to 56 mod 64, the bit length as a 64-bit little-endian value.
  std::array<std::uint8_t, 128> tail{};
  std::memcpy(tail.data(), rest.data(), rest.size());
  tail[rest.size()] = 0x80;
  const std::size_t blocks = rest.size() < 56 ? 1 : 2;
  const std::uint64_t bits = static_cast<std::uint64_t>(data.size()) * 8;
  store_le(tail.data() + blocks * 64 - 8, static_cast<std::uint32_t>(bits));
  store_le(tail.data() + blocks * 64 - 4, static_cast<std::uint32_t>(bits >> 32));
  for (std::size_t b = 0; b < blocks; ++b) md5_block(s, tail.data() + 64 * b);
  std::array<std::uint8_t, 16> digest{};
  for (unsigned i = 0; i < 4; ++i) store_le(digest.data() + 4 * i, s[i]);
  return digest;
}

std::array<std::uint32_t, 4> dxbc_checksum(std::span<const std::uint8_t> container) {
  if (container.size() <= kChecksummedFrom) throw Error(Errc::internal, "DXBC container too small to checksum");
  const auto data = container.subspan(kChecksummedFrom);
  const auto len = static_cast<std::uint32_t>(data.size());
  State s = kMd5Init;
  const auto rest = md5_whole_blocks(s, data);
  // The final block differs from MD5's: the bit count leads it and (len*2)|1 ends it. When the
  // leftover bytes and the 0x80 do not leave room for the leading count, they get a block of
  // their own and the counts go in one more.
  std::array<std::uint8_t, 64> block{};
  if (rest.size() < 56) {
    store_le(block.data(), len * 8);
    std::memcpy(block.data() + 4, rest.data(), rest.size());
    block[4 + rest.size()] = 0x80;
    store_le(block.data() + 60, (len * 2) | 1);
    md5_block(s, block.data());
  } else {
    std::memcpy(block.data(), rest.data(), rest.size());
    block[rest.size()] = 0x80;
    md5_block(s, block.data());
    block.fill(0);
    store_le(block.data(), len * 8);
    store_le(block.data() + 60, (len * 2) | 1);
    md5_block(s, block.data());
  }
  return s;
}

std::vector<std::uint8_t> make_container(std::span<const std::uint32_t> shex) {
  constexpr std::uint32_t kChunks = 3;
  constexpr std::uint32_t kHeaderBytes = 32 + 4 * kChunks;  // magic, checksum, version, size, count, offsets
  constexpr std::uint32_t kEmptySignatureBytes = 16;        // tag, size 8, element count 0, offset 8
  const std::uint32_t shex_bytes = static_cast<std::uint32_t>(shex.size() * 4);
  const std::uint32_t total = kHeaderBytes + 2 * kEmptySignatureBytes + 8 + shex_bytes;

  std::vector<std::uint32_t> w;
  w.reserve(total / 4);
  w.push_back(0x43425844u);  // "DXBC"
  w.insert(w.end(), {0, 0, 0, 0});
  w.push_back(1);  // container version
  w.push_back(total);
  w.push_back(kChunks);
  w.push_back(kHeaderBytes);
  w.push_back(kHeaderBytes + kEmptySignatureBytes);
  w.push_back(kHeaderBytes + 2 * kEmptySignatureBytes);
  for (std::uint32_t tag : {0x4e475349u /* ISGN */, 0x4e47534fu /* OSGN */}) w.insert(w.end(), {tag, 8, 0, 8});
  w.push_back(0x58454853u);  // SHEX
  w.push_back(shex_bytes);
  w.insert(w.end(), shex.begin(), shex.end());

  std::vector<std::uint8_t> bytes(w.size() * 4);
  for (std::size_t i = 0; i < w.size(); ++i) store_le(bytes.data() + 4 * i, w[i]);
  const auto sum = dxbc_checksum(bytes);
  for (unsigned i = 0; i < 4; ++i) store_le(bytes.data() + 4 + 4 * i, sum[i]);
  return bytes;
}

std::vector<std::uint8_t> assemble(const Program& p) { return make_container(encode_shex(p)); }

}  // namespace dmlbits::dxbc

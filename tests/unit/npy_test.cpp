// The .npy codec (npy.hpp) against the rules of /work/shared/reference/npy-format.md:
// files built byte by byte here, and the fixtures NumPy wrote (testdata/npy, expectations in
// expected.json computed by NumPy; refusals in bad/expected_errors.json).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <locale>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "dmlbits/error.hpp"
#include "io.hpp"
#include "npy.hpp"

namespace dmlbits {
namespace {

namespace fs = std::filesystem;

const std::string kMagic("\x93NUMPY", 6);

std::span<const std::byte> as_bytes(const std::string& s) { return std::as_bytes(std::span(s.data(), s.size())); }

// A .npy file: magic, version major.0, the header length (2 bytes for 1.x, else 4), the dict,
// padding (spaces and '\n') to a multiple of `align` (0: no padding at all), then the data.
std::string make_npy(const std::string& dict, const std::string& data = "", int major = 1, std::size_t align = 64) {
  const std::size_t prefix = major == 1 ? 10 : 12;
  std::string header = dict;
  if (align != 0) {
    const std::size_t unpadded = prefix + header.size() + 1;
    header.append((align - unpadded % align) % align, ' ');
    header += '\n';
  }
  std::string out = kMagic;
  out += static_cast<char>(major);
  out += '\0';
  for (std::size_t i = 0; i < prefix - 8; ++i) out += static_cast<char>((header.size() >> (8 * i)) & 0xff);
  return out + header + data;
}

std::string dict_for(const std::string& descr, const std::string& shape, bool fortran = false) {
  return "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") + ", 'shape': " + shape + ", }";
}

// Little-endian bytes of `v`, `size` bytes wide.
std::string le(std::uint64_t v, std::size_t size) {
  std::string s;
  for (std::size_t i = 0; i < size; ++i) s += static_cast<char>((v >> (8 * i)) & 0xff);
  return s;
}
std::string be(std::uint64_t v, std::size_t size) {
  std::string s = le(v, size);
  return {s.rbegin(), s.rend()};
}

std::vector<std::uint64_t> all_bits(const Tensor& t) {
  std::vector<std::uint64_t> out;
  for (std::size_t i = 0; i < t.element_count(); ++i) out.push_back(t.bits_at(i));
  return out;
}

Tensor read(const std::string& file) { return read_npy(as_bytes(file)); }

// The message of the invalid-input Error that f() throws ("" and a test failure otherwise).
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::invalid_input) << e.what();
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not a dmlbits::Error: " << e.what();
    return "";
  }
  ADD_FAILURE() << "no error";
  return "";
}

#define EXPECT_NPY_ERROR(file, substring)                                      \
  do {                                                                         \
    const std::string npy_file_ = (file);                                      \
    const std::string msg_ = error_of([&] { read(npy_file_); });               \
    EXPECT_NE(msg_.find(substring), std::string::npos) << "message: " << msg_; \
  } while (0)

const std::string kU4x3 = le(1, 4) + le(2, 4) + le(3, 4);
const std::string kGoodDict = dict_for("<u4", "(3,)");

// --- accepted files -------------------------------------------------------------------------

TEST(NpyTest, ReadsEveryDTypeLittleEndian) {
  for (const auto& row : dtype_table()) {
    const std::string descr = row.numpy_descr();
    // Element i is i + 1 in its lowest byte and 0x80 in its top byte (for multi-byte types).
    std::string data;
    for (std::uint64_t i = 0; i < 3; ++i) {
      std::uint64_t v = i + 1;
      if (row.size > 1) v |= std::uint64_t{0x80} << (8 * (row.size - 1));
      data += le(v, row.size);
    }
    const std::string file = make_npy(dict_for(descr, "(3,)"), data);
    const NpyHeader h = inspect_npy(as_bytes(file));
    EXPECT_EQ(h.dtype, row.dtype) << descr;
    EXPECT_EQ(h.descr, descr);
    EXPECT_EQ(h.byte_order, row.size == 1 ? '|' : '<');
    EXPECT_FALSE(h.needs_swap());
    EXPECT_FALSE(h.is_bool);
    EXPECT_EQ(h.data_offset, file.size() - data.size());
    EXPECT_EQ(h.data_offset % 64, 0u);
    EXPECT_EQ(h.data_bytes, 3 * row.size);
    const Tensor t = read(file);
    EXPECT_EQ(t.dtype(), row.dtype);
    EXPECT_EQ(t.shape(), Shape{3});
    ASSERT_EQ(t.byte_size(), data.size());
    EXPECT_EQ(std::memcmp(t.data(), data.data(), data.size()), 0) << descr;
  }
}

TEST(NpyTest, SwapsEveryMultiByteDTypeFromBigEndian) {
  int swapped = 0;
  for (const auto& row : dtype_table()) {
    if (row.size == 1) continue;
    const std::string descr = ">" + row.numpy_code();
    const std::uint64_t a = 0x0102030405060708ull >> (8 * (8 - row.size));
    const std::uint64_t b = 0xF1E2D3C4B5A69788ull >> (8 * (8 - row.size));
    const std::string file = make_npy(dict_for(descr, "(2,)"), be(a, row.size) + be(b, row.size));
    const NpyHeader h = parse_npy_header(as_bytes(file));
    EXPECT_EQ(h.byte_order, '>');
    EXPECT_TRUE(h.needs_swap()) << descr;
    const Tensor t = read(file);
    EXPECT_EQ(t.dtype(), row.dtype);
    EXPECT_EQ(all_bits(t), (std::vector<std::uint64_t>{a, b})) << descr;
    ++swapped;
  }
  EXPECT_EQ(swapped, 9);
}

TEST(NpyTest, ByteOrderMarksOnOneByteTypesNeverSwap) {
  for (const char* descr : {"|u1", "<u1", ">u1", "=u1", "|i1", ">i1", "u1"}) {
    const Tensor t = read(make_npy(dict_for(descr, "(2,)"), "\x01\x80"));
    EXPECT_EQ(all_bits(t), (std::vector<std::uint64_t>{0x01, 0x80})) << descr;
    EXPECT_FALSE(parse_npy_header(as_bytes(make_npy(dict_for(descr, "(2,)"), "\x01\x80"))).needs_swap());
  }
}

TEST(NpyTest, MissingOrPipeOrderMarkOnMultiByteTypesIsNative) {
  // NumPy reads 'u2' and '|u2' as native order (np.dtype('|u2').byteorder == '=').
  for (const char* descr : {"u2", "|u2"}) {
    const std::string file = make_npy(dict_for(descr, "(2,)"), le(0x0102, 2) + le(0x8000, 2));
    const NpyHeader h = parse_npy_header(as_bytes(file));
    EXPECT_FALSE(h.needs_swap()) << descr;
    EXPECT_EQ(all_bits(read(file)), (std::vector<std::uint64_t>{0x0102, 0x8000})) << descr;
  }
  EXPECT_EQ(parse_npy_header(as_bytes(make_npy(dict_for("u2", "(2,)"), std::string(4, '\0')))).byte_order, '=');
}

TEST(NpyTest, NativeOrderIsLittleEndian) {
  const std::string file = make_npy(dict_for("=u2", "(2,)"), le(0x0102, 2) + le(0xfffe, 2));
  const NpyHeader h = parse_npy_header(as_bytes(file));
  EXPECT_EQ(h.byte_order, '=');
  EXPECT_FALSE(h.needs_swap());
  EXPECT_EQ(all_bits(read(file)), (std::vector<std::uint64_t>{0x0102, 0xfffe}));
}

TEST(NpyTest, BoolBecomesUint8) {
  for (const char* descr : {"|b1", "<b1"}) {
    const std::string file = make_npy(dict_for(descr, "(2, 2)"), std::string("\x01\x00\x00\x01", 4));
    const NpyHeader h = inspect_npy(as_bytes(file));
    EXPECT_TRUE(h.is_bool);
    EXPECT_EQ(h.dtype, DType::uint8);  // not INT8: DirectML has no bool; ONNX Runtime uses UINT8
    const Tensor t = read(file);
    EXPECT_EQ(t.dtype(), DType::uint8);
    EXPECT_EQ(all_bits(t), (std::vector<std::uint64_t>{1, 0, 0, 1}));
  }
}

TEST(NpyTest, TransposesFortranOrder2d) {
  // The 2x3 array [[0,1,2],[3,4,5]] stored column by column.
  std::string data;
  for (int v : {0, 3, 1, 4, 2, 5}) data += le(static_cast<std::uint64_t>(v), 4);
  const std::string file = make_npy(dict_for("<i4", "(2, 3)", true), data);
  EXPECT_TRUE(inspect_npy(as_bytes(file)).fortran_order);
  const Tensor t = read(file);
  EXPECT_EQ(t.shape(), (Shape{2, 3}));
  EXPECT_EQ(all_bits(t), (std::vector<std::uint64_t>{0, 1, 2, 3, 4, 5}));
}

TEST(NpyTest, TransposesFortranOrder3dAndSwaps) {
  // Shape (2,3,4): C index (i,j,k) = 12i + 4j + k holds that number; column-major offset is
  // i + 2j + 6k. Big-endian uint16 as well, so the swap and the transpose must both happen.
  std::vector<std::uint64_t> stored(24);
  for (std::uint64_t i = 0; i < 2; ++i)
    for (std::uint64_t j = 0; j < 3; ++j)
      for (std::uint64_t k = 0; k < 4; ++k) stored[i + 2 * j + 6 * k] = 0x0100 + 12 * i + 4 * j + k;
  std::string data;
  for (auto v : stored) data += be(v, 2);
  const Tensor t = read(make_npy(dict_for(">u2", "(2, 3, 4)", true), data));
  EXPECT_EQ(t.shape(), (Shape{2, 3, 4}));
  std::vector<std::uint64_t> want(24);
  for (std::uint64_t n = 0; n < 24; ++n) want[n] = 0x0100 + n;
  EXPECT_EQ(all_bits(t), want);
}

TEST(NpyTest, FortranOrderWithSizeOneAxes) {
  // (3,1,2): C order [[a],[b],[c]] pairs; Fortran offset i + 3k.
  std::string data;
  for (int v : {10, 20, 30, 11, 21, 31}) data += le(static_cast<std::uint64_t>(v), 1);
  const Tensor t = read(make_npy(dict_for("|u1", "(3, 1, 2)", true), data));
  EXPECT_EQ(all_bits(t), (std::vector<std::uint64_t>{10, 11, 20, 21, 30, 31}));
}

TEST(NpyTest, FortranOrderOfZeroAndOneDimensionsIsTheSameData) {
  EXPECT_EQ(all_bits(read(make_npy(dict_for("<u2", "(3,)", true), le(1, 2) + le(2, 2) + le(3, 2)))),
            (std::vector<std::uint64_t>{1, 2, 3}));
  const Tensor zero_d = read(make_npy(dict_for("<u4", "()", true), le(0x12345678, 4)));
  EXPECT_EQ(zero_d.shape().rank(), 0u);
  EXPECT_EQ(all_bits(zero_d), (std::vector<std::uint64_t>{0x12345678}));
  EXPECT_EQ(read(make_npy(dict_for("<f4", "(0, 3)", true))).element_count(), 0u);
}

// Element n (C order) of a test array: distinct bytes in every position, so that a wrong swap
// or a wrong place shows.
std::uint64_t pattern(std::uint64_t n) { return (n + 1) * 0x9e3779b97f4a7c15ull; }

// A Fortran-order file of `shape`, element n (C order) holding pattern(n), written by walking
// the column-major offsets one by one (first axis fastest).
std::string fortran_file(const std::string& descr, const Shape& shape) {
  const std::size_t size = static_cast<std::size_t>(descr[2] - '0');
  const bool big = descr[0] == '>';
  std::vector<std::uint64_t> cstride(shape.rank(), 1);
  for (std::size_t k = shape.rank(); k-- > 1;) cstride[k - 1] = cstride[k] * shape[k];
  std::vector<std::uint64_t> idx(shape.rank(), 0);
  std::string data;
  data.reserve(static_cast<std::size_t>(shape.element_count()) * size);
  for (std::uint64_t f = 0; f < shape.element_count(); ++f) {
    std::uint64_t c = 0;
    for (std::size_t k = 0; k < shape.rank(); ++k) c += idx[k] * cstride[k];
    data += big ? be(pattern(c), size) : le(pattern(c), size);
    for (std::size_t k = 0; k < shape.rank(); ++k) {
      if (++idx[k] < shape[k]) break;
      idx[k] = 0;
    }
  }
  return make_npy(dict_for(descr, shape.to_string(), true), data);
}

TEST(NpyTest, TransposesFortranOrderInPiecesOfEveryShape) {
  // NpyDecoder transposes a few slices of the last axis at a time (about 1 MiB, a multiple of
  // a cache line's worth of slices): shapes whose slices fill it unevenly, leave a last piece
  // shorter than a cache line's worth, have middle axes, or make one slice larger than the
  // scratch buffer; both byte orders and every element size.
  const std::vector<Shape> shapes = {
      Shape{300, 1000},     Shape{1000, 300}, Shape{7, 3, 20001}, Shape{3, 70000, 2}, Shape{2, 3, 2, 3, 2, 3, 2, 300},
      Shape{1100, 1, 1100}, Shape{2, 131073}, Shape{5, 1, 7}};
  for (const char* descr : {"<u1", "<u2", ">u2", "<u4", ">i4", "<u8", ">f8"}) {
    for (const Shape& shape : shapes) {
      SCOPED_TRACE(std::string(descr) + " " + shape.to_string());
      const Tensor t = read(fortran_file(descr, shape));
      ASSERT_EQ(t.shape(), shape);
      const std::size_t size = static_cast<std::size_t>(descr[2] - '0');
      const std::uint64_t mask = size == 8 ? ~std::uint64_t{0} : (std::uint64_t{1} << (8 * size)) - 1;
      std::uint64_t wrong = 0, first_wrong = 0;
      for (std::uint64_t n = 0; n < t.element_count(); ++n)
        if (t.bits_at(n) != (pattern(n) & mask) && wrong++ == 0) first_wrong = n;
      EXPECT_EQ(wrong, 0u) << "first at " << first_wrong;
    }
  }
}

TEST(NpyTest, SwapsBigEndianInPiecesOfAnyLength) {
  // C-order big-endian data is swapped 256 KiB at a time, in blocks of 64 bytes: lengths that
  // end inside a block and inside a piece.
  for (const char* descr : {">u2", ">u4", ">u8"}) {
    const std::size_t size = static_cast<std::size_t>(descr[2] - '0');
    for (std::uint64_t n :
         {std::uint64_t{1}, std::uint64_t{7}, std::uint64_t{33}, (std::uint64_t{256} << 10) / size + 5}) {
      std::string data;
      for (std::uint64_t i = 0; i < n; ++i) data += be(pattern(i), size);
      const Tensor t = read(make_npy(dict_for(descr, fmt::format("({},)", n)), data));
      const std::uint64_t mask = size == 8 ? ~std::uint64_t{0} : (std::uint64_t{1} << (8 * size)) - 1;
      for (std::uint64_t i = 0; i < n; ++i)
        ASSERT_EQ(t.bits_at(i), pattern(i) & mask) << descr << " " << n << " at " << i;
    }
  }
}

TEST(NpyTest, DecoderPiecesCoverTheDataOnce) {
  // What a reader of a file sees: pieces in order, adjacent, adding up to the data.
  for (const std::string& file : {fortran_file(">u2", Shape{1000, 3000}), fortran_file("<u2", Shape{3, 5}),
                                  make_npy(dict_for(">u8", "(70000,)"), std::string(560000, '\x01')),
                                  make_npy(dict_for("<u4", "(0, 4)", true))}) {
    const NpyHeader h = inspect_npy(as_bytes(file));
    NpyDecoder decoder(h);
    std::uint64_t total = 0;
    for (std::size_t i = 0; i < decoder.pieces(); ++i) {
      EXPECT_EQ(decoder.offset(i), total);
      const std::span<std::byte> piece = decoder.buffer(i);
      std::memcpy(piece.data(), file.data() + h.data_offset + total, piece.size());
      total += piece.size();
      decoder.convert(i);
    }
    EXPECT_EQ(total, h.data_bytes);
    EXPECT_EQ(all_bits(decoder.take()), all_bits(read(file)));
    EXPECT_LE(decoder.pieces(), 3u) << h.descr;  // no piece is needlessly small
  }
  EXPECT_EQ(NpyDecoder(inspect_npy(as_bytes(fortran_file(">u2", Shape{1000, 3000})))).pieces(), 2u);
}

TEST(NpyTest, ReadsZeroDimensional) {
  const std::string file = make_npy(dict_for("<u4", "()"), le(0xdeadbeef, 4));
  const NpyHeader h = inspect_npy(as_bytes(file));
  EXPECT_EQ(h.shape.rank(), 0u);
  EXPECT_EQ(h.data_bytes, 4u);
  const Tensor t = read(file);
  EXPECT_EQ(t.shape(), Shape{});
  EXPECT_EQ(t.element_count(), 1u);
  EXPECT_EQ(all_bits(t), (std::vector<std::uint64_t>{0xdeadbeef}));
  // Spaces inside the empty tuple are still the empty tuple.
  EXPECT_EQ(read(make_npy(dict_for(">u2", "( )"), be(0xabcd, 2))).bits_at(0), 0xabcdu);
  // A 0-d array has one element: no data is truncation.
  EXPECT_NPY_ERROR(make_npy(dict_for("<u4", "()")), "truncated");
}

TEST(NpyTest, ReadsEmptyArrays) {
  for (const char* shape : {"(0,)", "(0, 3)", "(2, 0)", "(2, 0, 4)", "(0, 4294967296)"}) {
    const std::string file = make_npy(dict_for(">u8", shape));
    const NpyHeader h = inspect_npy(as_bytes(file));
    EXPECT_EQ(h.data_bytes, 0u) << shape;
    const Tensor t = read(file);
    EXPECT_EQ(t.element_count(), 0u) << shape;
    EXPECT_EQ(t.byte_size(), 0u);
    // Any data after an empty array's header is garbage.
    EXPECT_NPY_ERROR(file + "x", "trailing garbage");
  }
  EXPECT_EQ(read(make_npy(dict_for("<i2", "(2, 0)"))).shape(), (Shape{2, 0}));
}

TEST(NpyTest, ReadsEightDimensionsButNotNine) {
  std::string data;
  for (int i = 0; i < 16; ++i) data += static_cast<char>(i);
  const Tensor t = read(make_npy(dict_for("|u1", "(1, 2, 1, 2, 1, 2, 1, 2)"), data));
  EXPECT_EQ(t.shape().rank(), 8u);
  EXPECT_EQ(t.bits_at(15), 15u);
  EXPECT_NPY_ERROR(make_npy(dict_for("|u1", "(1, 1, 1, 1, 1, 1, 1, 1, 1)"), "\x01"), "more than 8 dimensions");
}

TEST(NpyTest, ReadsVersions2And3) {
  for (int major : {2, 3}) {
    const std::string file = make_npy(kGoodDict, kU4x3, major);
    const NpyHeader h = inspect_npy(as_bytes(file));
    EXPECT_EQ(h.major, major);
    EXPECT_EQ(h.minor, 0);
    EXPECT_EQ(h.data_offset, 128u);  // 12-byte prefix and a 57-byte dict, padded to 64
    EXPECT_EQ(all_bits(read(file)), (std::vector<std::uint64_t>{1, 2, 3}));
  }
}

TEST(NpyTest, Version2HeaderLengthIsFourBytes) {
  // A header longer than 65535 bytes needs the 4-byte field; a reader that takes 2 bytes would
  // see 70000 & 0xffff and misplace the data.
  std::string dict = kGoodDict;
  dict.append(70000 - dict.size() - 1, ' ');
  dict += '\n';
  const std::string file = make_npy(dict, kU4x3, 2, 0);
  ASSERT_EQ(file.size(), 12 + 70000 + 12u);
  const NpyHeader h = inspect_npy(as_bytes(file));
  EXPECT_EQ(h.data_offset, 12 + 70000u);
  EXPECT_EQ(all_bits(read(file)), (std::vector<std::uint64_t>{1, 2, 3}));
}

TEST(NpyTest, AcceptsAnyPadding) {
  for (std::size_t align : {std::size_t{64}, std::size_t{16}, std::size_t{1}, std::size_t{0}}) {
    const std::string file = make_npy(kGoodDict, kU4x3, 1, align);
    EXPECT_EQ(all_bits(read(file)), (std::vector<std::uint64_t>{1, 2, 3})) << "align " << align;
  }
  // 16-byte padding, as NumPy < 1.14, cnpy and libnpy write it.
  const std::string pad16 = make_npy(kGoodDict, kU4x3, 1, 16);
  EXPECT_EQ(parse_npy_header(as_bytes(pad16)).data_offset % 16, 0u);
  EXPECT_NE(parse_npy_header(as_bytes(pad16)).data_offset % 64, 0u);
  // Lots of spare padding, as NumPy >= 1.24 leaves for in-place growth.
  EXPECT_EQ(all_bits(read(make_npy(kGoodDict + std::string(5000, ' '), kU4x3))), (std::vector<std::uint64_t>{1, 2, 3}));
}

TEST(NpyTest, AcceptsAnyKeyOrderAndSpacing) {
  const std::vector<std::string> dicts = {
      "{'shape': (3,), 'fortran_order': False, 'descr': '<u4'}",
      "{'fortran_order':False,'shape':(3,),'descr':'<u4'}",
      "{ \"shape\" :( 3 , ) ,\t'descr' : \"<u4\" , 'fortran_order' : False , }",
      "{\n  'descr': '<u4',\n  'fortran_order': False,\n  'shape': (3,),\n}",
      "\r\n{'descr': '<u4', 'fortran_order': False, 'shape': (3,)}  ",
      "{'descr': '<u4', 'fortran_order': False, 'shape': (3L,)}",
  };
  for (const auto& d : dicts) {
    const std::string file = make_npy(d, kU4x3);
    const NpyHeader h = inspect_npy(as_bytes(file));
    EXPECT_EQ(h.dtype, DType::uint32) << d;
    EXPECT_EQ(h.shape, Shape{3}) << d;
    EXPECT_FALSE(h.fortran_order) << d;
    EXPECT_EQ(all_bits(read(file)), (std::vector<std::uint64_t>{1, 2, 3})) << d;
  }
}

TEST(NpyTest, AcceptsPython2Longs) {
  std::string data;
  for (int i = 0; i < 6; ++i) data += le(static_cast<std::uint64_t>(i), 8);
  const NpyHeader h = inspect_npy(as_bytes(make_npy(dict_for("<i8", "(2L, 3L)"), data)));
  EXPECT_EQ(h.shape, (Shape{2, 3}));
  EXPECT_EQ(inspect_npy(as_bytes(make_npy(dict_for("<i8", "(2L, 3)"), data))).shape, (Shape{2, 3}));
}

TEST(NpyTest, AcceptsTrailingCommaInShape) {
  EXPECT_EQ(inspect_npy(as_bytes(make_npy(dict_for("|u1", "(2, 3,)"), std::string(6, 'x')))).shape, (Shape{2, 3}));
}

TEST(NpyTest, ParsesLargestDimension) {
  // 2^64 - 1 fits in a dimension; only the byte size is refused.
  const std::string msg =
      error_of([&] { parse_npy_header(as_bytes(make_npy(dict_for("|u1", "(18446744073709551615,)")))); });
  EXPECT_NE(msg.find("too large"), std::string::npos) << msg;
}

TEST(NpyTest, ParseHeaderNeedsOnlyTheHeader) {
  const std::string file = make_npy(kGoodDict, kU4x3);
  const std::string header_only = file.substr(0, 128);
  const NpyHeader h = parse_npy_header(as_bytes(header_only));
  EXPECT_EQ(h.data_offset, 128u);
  EXPECT_EQ(h.data_bytes, 12u);
  EXPECT_EQ(error_of([&] { inspect_npy(as_bytes(header_only)); }), "truncated: expected 12 bytes of data, found 0");
}

TEST(NpyTest, IsNpyLooksOnlyAtTheMagic) {
  EXPECT_TRUE(is_npy(as_bytes(make_npy(kGoodDict, kU4x3))));
  EXPECT_TRUE(is_npy(as_bytes(kMagic)));
  EXPECT_FALSE(is_npy(as_bytes(kMagic.substr(0, 5))));
  EXPECT_FALSE(is_npy(as_bytes(std::string("\x93NUMPZ\x01\x00", 8))));
  EXPECT_FALSE(is_npy(as_bytes(std::string("\x93numpy\x01\x00", 8))));
  EXPECT_FALSE(is_npy({}));
}

// --- refused files --------------------------------------------------------------------------

TEST(NpyTest, RejectsBadMagic) {
  std::string file = make_npy(kGoodDict, kU4x3);
  file[5] = 'Z';
  EXPECT_NPY_ERROR(file, "bad magic");
  EXPECT_NPY_ERROR(std::string(""), "bad magic");
  EXPECT_NPY_ERROR(std::string("{\"a\": 1}"), "bad magic");
}

TEST(NpyTest, RejectsUnknownVersions) {
  for (auto [major, minor] : {std::pair{0, 0}, {4, 0}, {1, 1}, {2, 1}, {255, 0}}) {
    std::string file = make_npy(kGoodDict, kU4x3);
    file[6] = static_cast<char>(major);
    file[7] = static_cast<char>(minor);
    EXPECT_NPY_ERROR(file, "unsupported .npy version " + std::to_string(major) + "." + std::to_string(minor));
  }
}

TEST(NpyTest, RejectsTruncatedPrefix) {
  const std::string file = make_npy(kGoodDict, kU4x3, 2);
  for (std::size_t n : {6, 7, 8, 9, 11}) {
    SCOPED_TRACE(n);
    EXPECT_NPY_ERROR(file.substr(0, n), "truncated header");
  }
}

TEST(NpyTest, RejectsHeaderLongerThanFile) {
  for (int major : {1, 2, 3}) {
    std::string file = make_npy(kGoodDict, kU4x3, major);
    file[8] = '\x00';
    file[9] = '\x10';  // 4096
    EXPECT_NPY_ERROR(file, "truncated header: expected 4096 bytes");
  }
}

TEST(NpyTest, RejectsHeaderOverTheLimit) {
  // Only the length field: the limit is checked before anything is read or allocated.
  for (std::uint64_t len : {std::uint64_t{kMaxNpyHeaderBytes} + 1, std::uint64_t{0xffffffff}}) {
    for (int major : {2, 3}) {
      std::string file = kMagic + static_cast<char>(major) + '\0' + le(len, 4);
      EXPECT_NPY_ERROR(file, "header too long");
    }
  }
  // Exactly at the limit is fine.
  std::string dict = kGoodDict;
  dict.append(kMaxNpyHeaderBytes - dict.size() - 1, ' ');
  dict += '\n';
  const std::string at_limit = make_npy(dict, kU4x3, 2, 0);
  EXPECT_EQ(inspect_npy(as_bytes(at_limit)).data_offset, 12 + kMaxNpyHeaderBytes);
  // One more byte of padding is refused even though the file is complete.
  std::string over = dict;
  over.insert(over.size() - 1, " ");
  EXPECT_NPY_ERROR(make_npy(over, kU4x3, 2, 0), "header too long");
}

TEST(NpyTest, RejectsMalformedDictionaries) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{'descr': '<u4', 'shape': (3,), }", "missing key 'fortran_order'"},
      {"{'fortran_order': False, 'shape': (3,), }", "missing key 'descr'"},
      {"{'descr': '<u4', 'fortran_order': False, }", "missing key 'shape'"},
      {"{}", "missing key"},
      {"{'descr': '<u4', 'fortran_order': False, 'shape': (3,), 'extra': 1, }", "unexpected key 'extra'"},
      {"{'Descr': '<u4', 'fortran_order': False, 'shape': (3,), }", "unexpected key 'Descr'"},
      {"{'descr': '<u4', 'descr': '<u4', 'fortran_order': False, 'shape': (3,), }", "duplicate key 'descr'"},
      {"{'descr': '<u4', 'fortran_order': False, 'fortran_order': False, 'shape': (3,), }",
       "duplicate key 'fortran_order'"},
      {"{'descr': '<u4', 'fortran_order': False, 'shape': (3,), 'shape': (3,), }", "duplicate key 'shape'"},
      {"{'descr': \"<u4', 'fortran_order': False, 'shape': (3,), }", "unterminated string"},
      {"{'descr: '<u4', 'fortran_order': False, 'shape': (3,), }", "malformed header"},
      {"{'descr': '<u4', 'fortran_order': False, 'shape': (3), }", "not a tuple"},
      {"{'descr': '<u4', 'fortran_order': False, 'shape': [3], }", "malformed header"},
      {"{'descr': '<u4', 'fortran_order': False, 'shape': 3, }", "malformed header"},
      {"{'descr': '<u4', 'fortran_order': False, 'shape': (-3,), }", "bad shape"},
      {"{'descr': '<u4', 'fortran_order': False, 'shape': (3,,), }", "bad shape"},
      {"{'descr': '<u4', 'fortran_order': False, 'shape': (,), }", "bad shape"},
      {"{'descr': '<u4', 'fortran_order': False, 'shape': (3 4,), }", "bad shape"},
      {"{'descr': '<u4', 'fortran_order': False, 'shape': (3l,), }", "bad shape"},
      {"{'descr': '<u4', 'fortran_order': False, 'shape': (3.0,), }", "bad shape"},
      {"{'descr': '<u4', 'fortran_order': False, 'shape': (3,), ", "malformed header"},
      {"{'descr': '<u4', 'fortran_order': False, 'shape': (3,", "bad shape"},
      {"{'descr': '<u4', 'fortran_order': 0, 'shape': (3,), }", "fortran_order must be True or False"},
      {"{'descr': '<u4', 'fortran_order': false, 'shape': (3,), }", "fortran_order must be True or False"},
      {"{'descr': '<u4', 'fortran_order': 'False', 'shape': (3,), }", "fortran_order must be True or False"},
      {"{'descr': '<u4', 'fortran_order': Falsey, 'shape': (3,), }", "malformed header"},
      {"{'descr': '<u4' 'fortran_order': False, 'shape': (3,), }", "malformed header"},
      {"{'descr': '<u4', 'fortran_order': False, 'shape': (3,), } x", "unexpected text after the dictionary"},
      {"{'descr': '<u4', 'fortran_order': False, 'shape': (3,), }}", "unexpected text after the dictionary"},
      {"'descr': '<u4', 'fortran_order': False, 'shape': (3,)", "malformed header"},
      {"", "malformed header"},
      {"{'descr': '<u4', 'fortran_order': False,\x01 'shape': (3,), }", "control character"},
      {"{'descr': '<u4', 'fortran_order': False," + std::string(1, '\0') + " 'shape': (3,), }", "control character"},
      {"{'descr': '<u4', 'fortran_order': False, 'shape': (18446744073709551616,), }", "overflows 64 bits"},
      {"{'descr': '<u4', 'fortran_order': False, 'shape': (99999999999999999999999,), }", "overflows 64 bits"},
  };
  for (const auto& [dict, substring] : cases) {
    const std::string msg = error_of([&] { read(make_npy(dict, kU4x3)); });
    EXPECT_NE(msg.find(substring), std::string::npos) << dict << "\nmessage: " << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << "one line: " << msg;
  }
}

TEST(NpyTest, RejectsDTypesThatAreNotDirectMLTensors) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"|O", "object"},        {"<c8", "complex"}, {">c16", "complex"}, {"<U3", "string"},
      {"|S2", "string"},       {"|a2", "string"},  {"|V4", "void"},     {"<M8[s]", "datetime"},
      {"<m8[ns]", "datetime"}, {"<u3", "'<u3'"},   {"<f16", "'<f16'"},  {"<i16", "'<i16'"},
      {"<u04", "'<u04'"},      {"", "''"},         {"<", "'<'"},        {"<b2", "'<b2'"},
      {"<x4", "'<x4'"},        {"<U", "string"},
  };
  for (const auto& [descr, substring] : cases) {
    const std::string msg = error_of([&] { read(make_npy(dict_for(descr, "(1,)"), std::string(16, '\0'))); });
    EXPECT_NE(msg.find("unsupported dtype"), std::string::npos) << descr << ": " << msg;
    EXPECT_NE(msg.find(substring), std::string::npos) << descr << ": " << msg;
  }
  // Structured dtypes have a list as descr.
  EXPECT_NPY_ERROR(make_npy("{'descr': [('a', '<u2'), ('b', '<f4')], 'fortran_order': False, 'shape': (2,), }",
                            std::string(12, '\0')),
                   "structured");
}

TEST(NpyTest, RejectsSizesBeyond64Bits) {
  EXPECT_NPY_ERROR(make_npy(dict_for("|u1", "(4294967296, 4294967296)")), "overflows 64 bits");
  EXPECT_NPY_ERROR(make_npy(dict_for("<u8", "(2305843009213693952,)")), "too large");
  EXPECT_NPY_ERROR(make_npy(dict_for("<u2", "(3037000500, 3037000500)")), "too large");
  // 2^32 elements of 1 byte is a valid header; only the data is missing.
  EXPECT_NPY_ERROR(make_npy(dict_for("|u1", "(65536, 65536)")), "truncated: expected 4294967296 bytes");
}

TEST(NpyTest, RejectsTruncatedData) {
  const std::string file = make_npy(kGoodDict, kU4x3);
  EXPECT_EQ(error_of([&] { read(file.substr(0, file.size() - 4)); }), "truncated: expected 12 bytes of data, found 8");
  EXPECT_EQ(error_of([&] { read(file.substr(0, file.size() - 1)); }), "truncated: expected 12 bytes of data, found 11");
  EXPECT_EQ(error_of([&] { read(file.substr(0, 128)); }), "truncated: expected 12 bytes of data, found 0");
  // Fortran data is checked the same way before it is transposed.
  EXPECT_NPY_ERROR(make_npy(dict_for("<u2", "(2, 3)", true), std::string(11, '\0')), "truncated");
}

TEST(NpyTest, RejectsTrailingGarbage) {
  const std::string file = make_npy(kGoodDict, kU4x3);
  EXPECT_EQ(error_of([&] { read(file + '\0'); }), "trailing garbage: expected 12 bytes of data, found 13");
  EXPECT_NPY_ERROR(file + file, "trailing garbage");
}

TEST(NpyTest, MessagesDoNotNameAFile) {
  // Callers add "reading 'a.npy': "; the codec itself must not.
  const std::string msg = error_of([&] { read(make_npy(kGoodDict, kU4x3 + "x")); });
  EXPECT_EQ(msg.find("reading"), std::string::npos) << msg;
}

// --- npy_header -----------------------------------------------------------------------------

TEST(NpyTest, HeaderIsVersion1AlignedTo64AndParsesBack) {
  const std::vector<Shape> shapes = {
      Shape{},
      Shape{0},
      Shape{1},
      Shape{3},
      Shape{2, 3},
      Shape{0, 3},
      Shape{2, 0},
      Shape{1, 2, 3, 4, 5, 6, 7, 8},
      Shape{2621401},
      Shape{4294967296},
      Shape{UINT64_MAX, 0},
      Shape{4294967295, 4294967295, 0, 0, 0, 0, 0, 0},
  };
  for (const auto& row : dtype_table()) {
    for (const auto& shape : shapes) {
      const std::string h = npy_header(row.dtype, shape);
      SCOPED_TRACE(std::string(row.numpy_name) + " " + shape.to_string());
      ASSERT_GE(h.size(), 64u);
      EXPECT_EQ(h.size() % 64, 0u);
      EXPECT_EQ(h.substr(0, 6), kMagic);
      EXPECT_EQ(h[6], '\x01');
      EXPECT_EQ(h[7], '\x00');
      const std::size_t len = static_cast<unsigned char>(h[8]) | (static_cast<unsigned char>(h[9]) << 8);
      EXPECT_EQ(len, h.size() - 10);
      EXPECT_EQ(h.back(), '\n');
      EXPECT_EQ(h.find('\n'), h.size() - 1);  // one newline, at the end
      // Padding is spaces between the dict and the newline.
      const std::size_t close = h.rfind('}');
      ASSERT_NE(close, std::string::npos);
      EXPECT_EQ(h.find_first_not_of(' ', close + 1), h.size() - 1);

      const NpyHeader p = parse_npy_header(as_bytes(h));
      EXPECT_EQ(p.major, 1);
      EXPECT_EQ(p.minor, 0);
      EXPECT_EQ(p.dtype, row.dtype);
      EXPECT_EQ(p.descr, row.numpy_descr());
      EXPECT_FALSE(p.is_bool);
      EXPECT_FALSE(p.fortran_order);
      EXPECT_FALSE(p.needs_swap());
      EXPECT_EQ(p.shape, shape);
      EXPECT_EQ(p.data_offset, h.size());
    }
  }
}

TEST(NpyTest, HeaderTextMatchesNumPy) {
  // NumPy writes repr() of the dict with sorted keys, a trailing ", " and tuple notation.
  const std::string h = npy_header(DType::uint32, Shape{2, 3});
  EXPECT_EQ(h.substr(10, h.find('}') - 9), "{'descr': '<u4', 'fortran_order': False, 'shape': (2, 3), }");
  EXPECT_NE(npy_header(DType::uint8, Shape{5}).find("'descr': '|u1'"), std::string::npos);
  EXPECT_NE(npy_header(DType::float16, Shape{5}).find("'shape': (5,)"), std::string::npos);
  EXPECT_NE(npy_header(DType::int64, Shape{}).find("'shape': ()"), std::string::npos);
  // The shortest dict is 57 bytes, so every header is at least 128 bytes, as NumPy's are.
  EXPECT_EQ(npy_header(DType::uint8, Shape{3}).size(), 128u);
}

// A locale with digit grouping for every stream and C++ formatting call.
struct GroupingPunct : std::numpunct<char> {
  char do_thousands_sep() const override { return ','; }
  std::string do_grouping() const override { return "\3"; }
};

TEST(NpyTest, HeaderIgnoresTheLocale) {
  const std::locale old = std::locale::global(std::locale(std::locale::classic(), new GroupingPunct));
  const std::string h = npy_header(DType::uint8, Shape{2, 621401});
  std::locale::global(old);
  EXPECT_NE(h.find("'shape': (2, 621401)"), std::string::npos) << h;
}

TEST(NpyTest, HeaderPlusDataReadsBack) {
  Tensor t(DType::int16, Shape{2, 3});
  for (std::size_t i = 0; i < 6; ++i) t.set_bits_at(i, 0x8001 + 0x101 * i);
  const std::string file =
      npy_header(t.dtype(), t.shape()) + std::string(reinterpret_cast<const char*>(t.data()), t.byte_size());
  const Tensor back = read(file);
  EXPECT_EQ(back.dtype(), DType::int16);
  EXPECT_EQ(back.shape(), t.shape());
  EXPECT_EQ(all_bits(back), all_bits(t));
}

// --- fixtures written by NumPy (testdata/npy) -----------------------------------------------

const fs::path kNpyDir = fs::path(DMLBITS_TESTDATA_DIR) / "npy";

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  EXPECT_TRUE(f) << p;
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

nlohmann::json load_json(const fs::path& p) { return nlohmann::json::parse(slurp(p)); }

std::string hex_bits(std::uint64_t v, std::size_t size) {
  static const char* digits = "0123456789abcdef";
  std::string s = "0x";
  for (std::size_t i = 2 * size; i-- > 0;) s += digits[(v >> (4 * i)) & 0xf];
  return s;
}

TEST(NpyTest, FixturesMatchNumPy) {
  const nlohmann::json expected = load_json(kNpyDir / "expected.json");
  ASSERT_GE(expected.size(), 40u);
  std::size_t files = 0;
  for (const auto& entry : fs::directory_iterator(kNpyDir)) {
    if (entry.path().extension() != ".npy") continue;
    ++files;
    const std::string name = entry.path().filename().string();
    SCOPED_TRACE(name);
    ASSERT_TRUE(expected.contains(name));
    const nlohmann::json& e = expected[name];
    const std::string file = slurp(entry.path());

    const NpyHeader h = inspect_npy(as_bytes(file));
    const std::string numpy_dtype = e["dtype"];
    EXPECT_EQ(h.is_bool, numpy_dtype == "bool");
    EXPECT_EQ(dtype_info(h.dtype).numpy_name, h.is_bool ? "uint8" : numpy_dtype);
    EXPECT_EQ(h.descr, e["descr"].get<std::string>());
    EXPECT_EQ(fmt::format("{}.{}", h.major, h.minor), e["version"].get<std::string>());
    EXPECT_EQ(h.fortran_order, e["fortran_order"].get<bool>());
    EXPECT_EQ(h.shape, Shape(e["shape"].get<std::vector<std::uint64_t>>()));
    EXPECT_EQ(h.data_offset, e["data_offset"].get<std::size_t>());
    // NumPy's byteorder: '>' big-endian, '|' one byte, '=' native (it writes '<' as '=' here).
    const std::string order = e["byteorder"];
    EXPECT_EQ(h.needs_swap(), order == ">");
    if (order == ">") {
      EXPECT_EQ(h.byte_order, '>');
    }

    const Tensor t = read_npy(as_bytes(file));
    EXPECT_EQ(t.dtype(), h.dtype);
    EXPECT_EQ(t.shape(), h.shape);
    const auto& want = e["data"];
    ASSERT_EQ(t.element_count(), want.size());
    const std::size_t size = dtype_info(t.dtype()).size;
    for (std::size_t i = 0; i < want.size(); ++i)
      EXPECT_EQ(hex_bits(t.bits_at(i), size), want[i].get<std::string>()) << "element " << i;
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(t.data()) % kTensorAlignment, 0u);
  }
  EXPECT_EQ(files, expected.size());
}

TEST(NpyTest, BadFixturesAreRefusedWithTheExpectedMessage) {
  const nlohmann::json expected = load_json(kNpyDir / "bad" / "expected_errors.json");
  ASSERT_GE(expected.size(), 40u);
  std::size_t files = 0;
  for (const auto& entry : fs::directory_iterator(kNpyDir / "bad")) {
    if (entry.path().extension() != ".npy") continue;
    ++files;
    const std::string name = entry.path().filename().string();
    SCOPED_TRACE(name);
    ASSERT_TRUE(expected.contains(name));
    const std::string file = slurp(entry.path());
    // Through the same path the CLI takes (format detection, then the codec).
    std::string msg = error_of([&] { read_tensor_bytes(as_bytes(file), name); });
    EXPECT_NE(msg.find(expected[name].get<std::string>()), std::string::npos) << msg;
    EXPECT_NE(msg.find("'" + name + "'"), std::string::npos) << msg;
    // The codec alone refuses it too.
    error_of([&] { read_npy(as_bytes(file)); });
  }
  EXPECT_EQ(files, expected.size());
}

}  // namespace
}  // namespace dmlbits

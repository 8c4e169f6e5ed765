// The JSON tensor codec (json_tensor.hpp): both input forms, dtype names, exact
// integers, float parsing, bit-pattern strings, positions in error messages, nesting limits,
// 0-d and empty tensors, the writer (object form, shortest round-tripping floats, hex) and
// parse_scalar_literal. Expected bits are hand-computed (limits, IEEE encodings) or from NumPy
// (noted where used).
#include <gtest/gtest.h>

#include <bit>
#include <chrono>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "dmlbits/dtype.hpp"
#include "dmlbits/error.hpp"
#include "json_tensor.hpp"
#include "dmlbits/tensor.hpp"

namespace dmlbits {
namespace {

Tensor read(const std::string& text, std::optional<DType> dtype = std::nullopt) {
  return read_json_tensor(text, JsonReadOptions{dtype});
}

std::vector<std::uint64_t> bits_of(const Tensor& t) {
  std::vector<std::uint64_t> v;
  for (std::size_t i = 0; i < t.element_count(); ++i) v.push_back(t.bits_at(i));
  return v;
}

std::vector<std::uint64_t> dims_of(const Tensor& t) { return {t.shape().dims().begin(), t.shape().dims().end()}; }

// The message of the invalid-input Error reading `text` throws ("" if none is thrown).
std::string read_error(const std::string& text, std::optional<DType> dtype = std::nullopt) {
  try {
    read(text, dtype);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::invalid_input) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error for " << text.substr(0, 200);
  return "";
}

std::string literal_error(const std::string& text, DType dtype) {
  try {
    parse_scalar_literal(text, dtype);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::invalid_input) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error for literal " << text;
  return "";
}

#define EXPECT_HAS(haystack, needle)                               \
  EXPECT_NE(std::string(haystack).find(needle), std::string::npos) \
      << "'" << (haystack) << "' lacks '" << (needle) << "'"

// --- input forms -------------------------------------------------------------------------------

TEST(JsonTensorTest, NestedArrayInfersShapeAndTakesDefaultDtype) {
  const Tensor t = read("[[0,123],[456,789]]", DType::uint32);
  EXPECT_EQ(t.dtype(), DType::uint32);
  EXPECT_EQ(dims_of(t), (std::vector<std::uint64_t>{2, 2}));
  EXPECT_EQ(bits_of(t), (std::vector<std::uint64_t>{0, 123, 456, 789}));
  const Tensor t3 = read(" [ [ [1], [2] ], [ [3], [4] ], [ [5], [6] ] ] ", DType::uint8);
  EXPECT_EQ(dims_of(t3), (std::vector<std::uint64_t>{3, 2, 1}));
  EXPECT_EQ(bits_of(t3), (std::vector<std::uint64_t>{1, 2, 3, 4, 5, 6}));
}

TEST(JsonTensorTest, NestedArrayWithoutDtypeAsksForDtype) {
  const std::string msg = read_error("[[0,123],[456,789]]");
  EXPECT_HAS(msg, "or use dtype");  // the option, in the library's words: each face names its own
  EXPECT_HAS(msg, "data type is unknown");
  try {
    (void)read("[1]", std::nullopt);
    ADD_FAILURE() << "read without a dtype";
  } catch (const OptionError& e) {
    EXPECT_EQ(e.key(), OptionKey::dtype);
    EXPECT_EQ(e.rule(), OptionRule::needed);
    EXPECT_EQ(e.code(), Errc::invalid_input);
  }
  // The document itself parses; only the conversion needs a dtype.
  const auto doc = JsonTensorDocument::parse("[1, 2]");
  EXPECT_FALSE(doc.declared_dtype().has_value());
  EXPECT_EQ(bits_of(doc.to_tensor(DType::int16)), (std::vector<std::uint64_t>{1, 2}));
  // The same document in two dtypes: -1 fits int8, not uint8.
  const auto neg = JsonTensorDocument::parse("[-1]");
  EXPECT_EQ(bits_of(neg.to_tensor(DType::int8)), (std::vector<std::uint64_t>{0xff}));
  EXPECT_THROW(neg.to_tensor(DType::uint8), Error);
}

TEST(JsonTensorTest, ObjectKeysInAnyOrder) {
  const char* dtype = R"("dtype": "uint32")";
  const char* shape = R"("shape": [2, 2])";
  const char* data[] = {R"("data": [[0, 123], [456, 789]])", R"("data": [0, 123, 456, 789])"};
  for (const char* d : data) {
    const std::vector<std::string> orders = {
        fmt::format("{{{}, {}, {}}}", dtype, shape, d), fmt::format("{{{}, {}, {}}}", dtype, d, shape),
        fmt::format("{{{}, {}, {}}}", shape, dtype, d), fmt::format("{{{}, {}, {}}}", shape, d, dtype),
        fmt::format("{{{}, {}, {}}}", d, dtype, shape), fmt::format("{{{}, {}, {}}}", d, shape, dtype)};
    for (const auto& text : orders) {
      SCOPED_TRACE(text);
      const Tensor t = read(text);
      EXPECT_EQ(t.dtype(), DType::uint32);
      EXPECT_EQ(dims_of(t), (std::vector<std::uint64_t>{2, 2}));
      EXPECT_EQ(bits_of(t), (std::vector<std::uint64_t>{0, 123, 456, 789}));
    }
  }
}

TEST(JsonTensorTest, ObjectDtypeWinsOverDefaultAndShapeIsOptional) {
  const Tensor t = read(R"({"data": [[1, 2, 3]], "dtype": "int16"})", DType::uint8);
  EXPECT_EQ(t.dtype(), DType::int16);
  EXPECT_EQ(dims_of(t), (std::vector<std::uint64_t>{1, 3}));
  // An object without a dtype takes the caller's.
  EXPECT_EQ(read(R"({"data": [7]})", DType::uint64).dtype(), DType::uint64);
  EXPECT_HAS(read_error(R"({"data": [7]})"), "or use dtype");
}

TEST(JsonTensorTest, AcceptsNumpyAndDirectMLDtypeNames) {
  for (const DTypeInfo& row : dtype_table()) {
    const std::string code = row.numpy_code();
    const std::string byte_order = row.size == 1 ? "|" : "<";
    for (const std::string& name : {std::string(row.numpy_name), code, byte_order + code, "=" + code,
                                    std::string(row.dml_name), row.dml_enum_name()}) {
      SCOPED_TRACE(name);
      const std::string text = fmt::format(R"({{"dtype": "{}", "data": [1]}})", name);
      const auto doc = JsonTensorDocument::parse(text);
      EXPECT_EQ(doc.declared_dtype(), row.dtype);
      EXPECT_EQ(read(text).dtype(), row.dtype);
    }
  }
  // Spot checks written out by hand, independent of the table.
  EXPECT_EQ(read(R"({"dtype": "u1", "data": [1]})").dtype(), DType::uint8);
  EXPECT_EQ(read(R"({"dtype": "<u4", "data": [1]})").dtype(), DType::uint32);
  EXPECT_EQ(read(R"({"dtype": "UINT8", "data": [1]})").dtype(), DType::uint8);
  EXPECT_EQ(read(R"({"dtype": "DML_TENSOR_DATA_TYPE_FLOAT16", "data": [1]})").dtype(), DType::float16);
  EXPECT_EQ(read(R"({"dtype": "<f8", "data": [1]})").dtype(), DType::float64);
}

TEST(JsonTensorTest, RefusesUnknownDtypeNames) {
  for (const char* name : {"uint7", "Uint8", "", "float", "DML_TENSOR_DATA_TYPE_", "DML_TENSOR_DATA_TYPE_uint8"}) {
    SCOPED_TRACE(name);
    const std::string msg = read_error(fmt::format(R"({{"dtype": "{}", "data": [1]}})", name));
    EXPECT_HAS(msg, fmt::format("unknown dtype \"{}\"", name));
    EXPECT_HAS(msg, "uint8");  // the known names are listed
  }
  EXPECT_HAS(read_error(R"({"dtype": 8, "data": [1]})"), "\"dtype\" must be a string");
  EXPECT_HAS(read_error(R"({"dtype": null, "data": [1]})"), "\"dtype\" must be a string");
  EXPECT_HAS(read_error(R"({"dtype": ["uint8"], "data": [1]})"), "\"dtype\" must be a string");
}

TEST(JsonTensorTest, RefusesMalformedObjects) {
  EXPECT_HAS(read_error(R"({"dtype": "uint8", "shape": [1]})"), "no \"data\"");
  EXPECT_HAS(read_error("{}"), "no \"data\"");
  EXPECT_HAS(read_error(R"({"dtype": "uint8", "data": [1], "fortran_order": false})"),
             "unexpected key \"fortran_order\"");
  EXPECT_HAS(read_error(R"({"dtype": "uint8", "data": [1], "data": [2]})"), "duplicate key \"data\"");
  EXPECT_HAS(read_error(R"({"dtype": "uint8", "dtype": "uint8", "data": [2]})"), "duplicate key \"dtype\"");
  EXPECT_HAS(read_error(R"({"dtype": "uint8", "data": {"data": [1]}})"), "data: unexpected object");
  EXPECT_HAS(read_error(R"({"dtype": "uint8", "data": [1, {}]})"), "data[1]: unexpected object");
}

// --- integers ----------------------------------------------------------------------------------

struct IntLimits {
  DType dtype;
  const char* min;
  const char* max;
  const char* below;  // min - 1
  const char* above;  // max + 1
  std::uint64_t min_bits;
  std::uint64_t max_bits;
};

// Hand-written limits: 2^(n-1) and 2^n.
const IntLimits kIntLimits[] = {
    {DType::uint8, "0", "255", "-1", "256", 0, 0xff},
    {DType::uint16, "0", "65535", "-1", "65536", 0, 0xffff},
    {DType::uint32, "0", "4294967295", "-1", "4294967296", 0, 0xffffffff},
    {DType::uint64, "0", "18446744073709551615", "-1", "18446744073709551616", 0, 0xffffffffffffffff},
    {DType::int8, "-128", "127", "-129", "128", 0x80, 0x7f},
    {DType::int16, "-32768", "32767", "-32769", "32768", 0x8000, 0x7fff},
    {DType::int32, "-2147483648", "2147483647", "-2147483649", "2147483648", 0x80000000, 0x7fffffff},
    {DType::int64, "-9223372036854775808", "9223372036854775807", "-9223372036854775809", "9223372036854775808",
     0x8000000000000000, 0x7fffffffffffffff},
};

TEST(JsonTensorTest, IntegerLimitsOfEveryIntegerDtype) {
  for (const auto& lim : kIntLimits) {
    const std::string name(dtype_info(lim.dtype).numpy_name);
    SCOPED_TRACE(name);
    const Tensor t = read(fmt::format(R"({{"dtype": "{}", "data": [{}, {}]}})", name, lim.min, lim.max));
    EXPECT_EQ(bits_of(t), (std::vector<std::uint64_t>{lim.min_bits, lim.max_bits}));
    // One beyond each end is refused, naming the position in the nested data.
    for (const char* bad : {lim.below, lim.above}) {
      const std::string msg = read_error(fmt::format(R"({{"dtype": "{}", "data": [[0, 0], [{}, 0]]}})", name, bad));
      EXPECT_HAS(msg, "data[1][0]");
      EXPECT_HAS(msg, "out of range for " + name);
    }
    // The same through parse_scalar_literal.
    EXPECT_EQ(parse_scalar_literal(lim.min, lim.dtype), lim.min_bits);
    EXPECT_EQ(parse_scalar_literal(lim.max, lim.dtype), lim.max_bits);
    EXPECT_HAS(literal_error(lim.below, lim.dtype), "out of range for " + name);
    EXPECT_HAS(literal_error(lim.above, lim.dtype), "out of range for " + name);
  }
}

TEST(JsonTensorTest, Uint64MaxAndBeyond) {
  EXPECT_EQ(bits_of(read("[18446744073709551615]", DType::uint64)), (std::vector<std::uint64_t>{0xffffffffffffffff}));
  const std::string msg = read_error("[0, 18446744073709551616]", DType::uint64);
  EXPECT_HAS(msg, "data[1]: value 2^64 or more is out of range for uint64");
  // Far beyond 64 bits, and beyond even double's range: still "out of range" with a position.
  EXPECT_HAS(read_error("[0, 100000000000000000000000000000000000000]", DType::uint64), "data[1]: value");
  const std::string huge = "[1, " + std::string(400, '9') + "]";
  const std::string msg2 = read_error(huge, DType::uint64);
  EXPECT_HAS(msg2, "data[1]");
  EXPECT_HAS(msg2, "out of range");
  EXPECT_HAS(read_error("[-18446744073709551616]", DType::int64), "out of range for int64");
}

TEST(JsonTensorTest, IntegersAreExactWithoutDoubleRounding) {
  // 2^53 + 1 is the first integer a double cannot hold.
  EXPECT_EQ(bits_of(read("[9007199254740993, 18446744073709551613]", DType::uint64)),
            (std::vector<std::uint64_t>{9007199254740993u, 18446744073709551613u}));
  EXPECT_EQ(bits_of(read("[-9007199254740993, 9223372036854775807, -9223372036854775807]", DType::int64)),
            (std::vector<std::uint64_t>{static_cast<std::uint64_t>(-9007199254740993), 0x7fffffffffffffff,
                                        0x8000000000000001}));
  EXPECT_EQ(bits_of(read("[-1, -2]", DType::int32)), (std::vector<std::uint64_t>{0xffffffff, 0xfffffffe}));
}

TEST(JsonTensorTest, IntegerDtypesRefuseFloatsAndNonFiniteStrings) {
  const std::string msg = read_error("[1, 1.5]", DType::uint8);
  EXPECT_HAS(msg, "data[1]");
  EXPECT_HAS(msg, "not an integer");
  EXPECT_HAS(read_error("[1.0]", DType::int32), "data[0]: 1.0 is not an integer");
  EXPECT_HAS(read_error("[1e2]", DType::int32), "not an integer");
  EXPECT_HAS(read_error(R"([[1], ["nan"]])", DType::int32), "data[1][0]");
  EXPECT_HAS(read_error(R"(["inf"])", DType::uint64), "not an integer");
}

// --- floats ------------------------------------------------------------------------------------

TEST(JsonTensorTest, FloatValues) {
  // Encodings from NumPy: np.array([0.1], dtype).view(uint).
  EXPECT_EQ(bits_of(read("[0.1]", DType::float16)), (std::vector<std::uint64_t>{0x2e66}));
  EXPECT_EQ(bits_of(read("[0.1]", DType::float32)), (std::vector<std::uint64_t>{0x3dcccccd}));
  EXPECT_EQ(bits_of(read("[0.1]", DType::float64)), (std::vector<std::uint64_t>{0x3fb999999999999a}));
  EXPECT_EQ(bits_of(read("[-2.5, 1e20]", DType::float64)),
            (std::vector<std::uint64_t>{0xc004000000000000, 0x4415af1d78b58c40}));
  // Integers for float types, exactly representable ones exact (hand: 3 = 1.5 * 2^1).
  EXPECT_EQ(bits_of(read("[3, -3, 0]", DType::float32)), (std::vector<std::uint64_t>{0x40400000, 0xc0400000, 0}));
  EXPECT_EQ(bits_of(read("[3]", DType::float16)), (std::vector<std::uint64_t>{0x4200}));
  // 2^53 + 1 rounds to even (2^53) once: 0x4340000000000000.
  EXPECT_EQ(bits_of(read("[9007199254740993]", DType::float64)), (std::vector<std::uint64_t>{0x4340000000000000}));
  // An integer beyond 64 bits is a valid float64 value: 2^64 = 0x43f0000000000000.
  EXPECT_EQ(bits_of(read("[18446744073709551616]", DType::float64)), (std::vector<std::uint64_t>{0x43f0000000000000}));
  EXPECT_EQ(bits_of(read("[18446744073709551616]", DType::float32)), (std::vector<std::uint64_t>{0x5f800000}));
  // -0.0 keeps its sign.
  EXPECT_EQ(bits_of(read("[-0.0]", DType::float16)), (std::vector<std::uint64_t>{0x8000}));
  EXPECT_EQ(bits_of(read("[-0.0]", DType::float32)), (std::vector<std::uint64_t>{0x80000000}));
  EXPECT_EQ(bits_of(read("[-0.0]", DType::float64)), (std::vector<std::uint64_t>{0x8000000000000000}));
  // Largest finite values and smallest subnormals.
  EXPECT_EQ(bits_of(read("[65504, 6e-08]", DType::float16)), (std::vector<std::uint64_t>{0x7bff, 0x0001}));
  EXPECT_EQ(bits_of(read("[3.4028235e38, 1e-45]", DType::float32)), (std::vector<std::uint64_t>{0x7f7fffff, 1}));
  EXPECT_EQ(bits_of(read("[1.7976931348623157e308, 5e-324]", DType::float64)),
            (std::vector<std::uint64_t>{0x7fefffffffffffff, 1}));
  // Underflow to zero is what NumPy does too, not an error.
  EXPECT_EQ(bits_of(read("[1e-60, -1e-60]", DType::float32)), (std::vector<std::uint64_t>{0, 0x80000000}));
}

TEST(JsonTensorTest, Float32IsParsedWithoutDoubleRounding) {
  // Just above the midpoint 1 + 2^-24 between 1 and 1 + 2^-23: correctly rounded it is
  // 1 + 2^-23 (0x3f800001); via double it would land on the midpoint and round to even, 1.0.
  EXPECT_EQ(bits_of(read("[1.0000000596046447753906250000000001]", DType::float32)),
            (std::vector<std::uint64_t>{0x3f800001}));
  // Exactly the midpoint rounds to even.
  EXPECT_EQ(bits_of(read("[1.000000059604644775390625]", DType::float32)), (std::vector<std::uint64_t>{0x3f800000}));
}

TEST(JsonTensorTest, FloatOverflowIsOutOfRange) {
  std::string msg = read_error("[[1], [1e39]]", DType::float32);
  EXPECT_HAS(msg, "data[1][0]");
  EXPECT_HAS(msg, "out of range for float32");
  msg = read_error("[0, 65520]", DType::float16);  // rounds to infinity in binary16
  EXPECT_HAS(msg, "data[1]");
  EXPECT_HAS(msg, "out of range for float16");
  EXPECT_EQ(bits_of(read("[65519]", DType::float16)), (std::vector<std::uint64_t>{0x7bff}));
  msg = read_error("[0, 0, -1e309]", DType::float64);
  EXPECT_HAS(msg, "data[2]");
  EXPECT_HAS(msg, "out of range");
  EXPECT_HAS(read_error("[1e400]", DType::float32), "data[0]");
}

TEST(JsonTensorTest, NanAndInfinityStrings) {
  EXPECT_EQ(bits_of(read(R"(["nan", "inf", "-inf", "Infinity", "-Infinity"])", DType::float32)),
            (std::vector<std::uint64_t>{0x7fc00000, 0x7f800000, 0xff800000, 0x7f800000, 0xff800000}));
  EXPECT_EQ(bits_of(read(R"(["inf", "-inf"])", DType::float16)), (std::vector<std::uint64_t>{0x7c00, 0xfc00}));
  EXPECT_EQ(bits_of(read(R"(["inf", "-inf"])", DType::float64)),
            (std::vector<std::uint64_t>{0x7ff0000000000000, 0xfff0000000000000}));
  // Any case, with the optional signs the man page lists; "-nan" is the quiet NaN with its sign set.
  EXPECT_EQ(bits_of(read(R"(["+inf", "INF", "-Inf", "NaN", "-nan", "-NAN"])", DType::float32)),
            (std::vector<std::uint64_t>{0x7f800000, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00000, 0xffc00000}));
  EXPECT_EQ(bits_of(read(R"(["-nan"])", DType::float16)), (std::vector<std::uint64_t>{0xfe00}));
  EXPECT_EQ(bits_of(read(R"(["-nan"])", DType::float64)), (std::vector<std::uint64_t>{0xfff8000000000000}));
  EXPECT_HAS(read_error(R"(["+nan", "inff"])", DType::float32), "data[0]");
  EXPECT_HAS(read_error(R"([1, "inff"])", DType::float32), "data[1]: string \"inff\"");
  const Tensor nan16 = read(R"(["nan"])", DType::float16);
  EXPECT_EQ(nan16.bits_at(0) & 0x7c00, 0x7c00u);
  EXPECT_NE(nan16.bits_at(0) & 0x03ff, 0u);
}

// --- bit patterns ------------------------------------------------------------------------------

TEST(JsonTensorTest, HexStringsAreExactBitPatterns) {
  // A signalling NaN with a payload and a negative quiet NaN survive unchanged.
  EXPECT_EQ(bits_of(read(R"(["0x7fc00000", "0x7f800001", "0xffc12345", "0x00000001"])", DType::float32)),
            (std::vector<std::uint64_t>{0x7fc00000, 0x7f800001, 0xffc12345, 1}));
  EXPECT_EQ(bits_of(read(R"(["0x7c01", "0xfe00", "0x8000"])", DType::float16)),
            (std::vector<std::uint64_t>{0x7c01, 0xfe00, 0x8000}));
  EXPECT_EQ(bits_of(read(R"(["0x7ff0000000000001", "0xFFFFFFFFFFFFFFFF"])", DType::float64)),
            (std::vector<std::uint64_t>{0x7ff0000000000001, 0xffffffffffffffff}));
  EXPECT_EQ(bits_of(read(R"(["0xff", "0X1f", "0b101", "0x00ff"])", DType::uint8)),
            (std::vector<std::uint64_t>{0xff, 0x1f, 5, 0xff}));
  // For a signed type the pattern is the two's-complement encoding: 0xff is int8 -1.
  EXPECT_EQ(bits_of(read(R"(["0xff", "0x80"])", DType::int8)), (std::vector<std::uint64_t>{0xff, 0x80}));
  EXPECT_EQ(bits_of(read(R"(["0xffffffffffffffff"])", DType::uint64)),
            (std::vector<std::uint64_t>{0xffffffffffffffff}));
  // A bare string document is a 0-d tensor.
  const Tensor t = read(R"("0x7fc00000")", DType::float32);
  EXPECT_EQ(t.shape().rank(), 0u);
  EXPECT_EQ(t.bits_at(0), 0x7fc00000u);
}

TEST(JsonTensorTest, HexStringsWiderThanTheTypeAreRefused) {
  std::string msg = read_error(R"([["0x1", "0x100"]])", DType::uint8);
  EXPECT_HAS(msg, "data[0][1]");
  EXPECT_HAS(msg, "wider than uint8's 8 bits");
  msg = read_error(R"(["0x7fc00000"])", DType::float16);
  EXPECT_HAS(msg, "data[0]");
  EXPECT_HAS(msg, "wider than float16's 16 bits");
  EXPECT_HAS(read_error(R"(["0x1ffffffff"])", DType::float32), "wider than float32's 32 bits");
  EXPECT_HAS(read_error(R"(["0b111111111"])", DType::int8), "wider than int8's 8 bits");
  msg = read_error(R"([0, "0x10000000000000000"])", DType::uint64);
  EXPECT_HAS(msg, "data[1]");
  EXPECT_HAS(msg, "wider than 64 bits");
}

// --- structural errors -------------------------------------------------------------------------

TEST(JsonTensorTest, RefusesNonNumbersWithPosition) {
  struct Case {
    const char* text;
    const char* where;
    const char* what;
  };
  const Case cases[] = {
      {"[[1, 2], [3, null]]", "data[1][1]", "null"},
      {"[1, true]", "data[1]", "boolean"},
      {"[false]", "data[0]", "boolean"},
      {"[[1], [{}]]", "data[1][0]", "object"},
      {R"([1, "abc"])", "data[1]", "\"abc\""},
      {R"([1, ""])", "data[1]", "is not a bit pattern"},
      {R"([["0x"]])", "data[0][0]", "\"0x\""},
      {R"(["0xg1"])", "data[0]", "\"0xg1\""},
      {R"(["12"])", "data[0]", "\"12\""},
      {R"({"dtype": "uint8", "data": [[1, 2], [3, null]]})", "data[1][1]", "null"},
      {"null", "data", "null"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    const std::string msg = read_error(c.text, DType::uint8);
    EXPECT_HAS(msg, std::string(c.where) + ":");
    EXPECT_HAS(msg, c.what);
  }
}

TEST(JsonTensorTest, RefusesRaggedArraysWithPosition) {
  struct Case {
    const char* text;
    const char* where;
  };
  const Case cases[] = {
      {"[[1, 2], [3]]", "data[1]:"},
      {"[[1, 2], [3, 4, 5]]", "data[1]:"},
      {"[[1, 2], 3]", "data[1]:"},
      {"[1, [2]]", "data[1]:"},
      {"[[[1, 2], [3, 4]], [[5, 6], [7]]]", "data[1][1]:"},
      {"[[], [1]]", "data[1]:"},
      {"[[1], []]", "data[1]:"},
      {"[[[1]], [[]]]", "data[1][0]:"},
      {"[[], [[]]]", "data[1]:"},
      {R"({"dtype": "int8", "data": [[1], [2, 3]]})", "data[1]:"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    const std::string msg = read_error(c.text, DType::uint8);
    EXPECT_HAS(msg, c.where);
    EXPECT_HAS(msg, "ragged");
  }
}

TEST(JsonTensorTest, ShapeAndDataMustAgree) {
  std::string msg = read_error(R"({"dtype": "uint8", "shape": [2, 2], "data": [1, 2, 3]})");
  EXPECT_HAS(msg, "shape [2,2]");
  EXPECT_HAS(msg, "does not match");
  EXPECT_HAS(read_error(R"({"dtype": "uint8", "shape": [2, 2], "data": [[1, 2, 3, 4]]})"), "shape [1,4]");
  EXPECT_HAS(read_error(R"({"dtype": "uint8", "shape": [3], "data": [[1, 2, 3]]})"), "does not match");
  EXPECT_HAS(read_error(R"({"dtype": "uint8", "shape": [2], "data": 5})"), "does not match");
  EXPECT_HAS(read_error(R"({"dtype": "uint8", "shape": [], "data": [1, 2]})"), "does not match");
  EXPECT_HAS(read_error(R"({"dtype": "uint8", "shape": [2, 2], "data": []})"), "does not match");
  // Flat data takes the declared shape; nested data must equal it.
  const Tensor flat = read(R"({"dtype": "uint8", "shape": [2, 3], "data": [1, 2, 3, 4, 5, 6]})");
  EXPECT_EQ(dims_of(flat), (std::vector<std::uint64_t>{2, 3}));
  EXPECT_EQ(bits_of(flat), (std::vector<std::uint64_t>{1, 2, 3, 4, 5, 6}));
  // A value error in flat data names its position in the document.
  msg = read_error(R"({"dtype": "uint8", "shape": [2, 2], "data": [1, 2, 300, 4]})");
  EXPECT_HAS(msg, "data[2]: value 300 is out of range for uint8");
}

TEST(JsonTensorTest, RefusesMalformedShapes) {
  for (const char* shape : {"[2, -1]", "[2.0]", R"(["2"])", "[[2]]", "2", "null", "[1, 1, 1, 1, 1, 1, 1, 1, 1]",
                            "[18446744073709551616]", "[1e400]"}) {
    SCOPED_TRACE(shape);
    const std::string msg = read_error(fmt::format(R"({{"dtype": "uint8", "shape": {}, "data": [1]}})", shape));
    EXPECT_HAS(msg, "\"shape\"");
  }
  // Element counts that overflow are refused, not wrapped.
  EXPECT_THROW(read(R"({"dtype": "uint8", "shape": [4294967296, 4294967296, 16], "data": []})"), Error);
}

TEST(JsonTensorTest, RefusesInvalidJsonWithPosition) {
  for (const char* text : {"[1,", "[1, 2", "[1 2]", "{\"data\": [1],}", "[1] 2", "[01]", "[NaN]", "[.5]", "[+1]", "",
                           "   ", "[1]]", "{'data': [1]}"}) {
    SCOPED_TRACE(text);
    const std::string msg = read_error(text, DType::uint8);
    EXPECT_HAS(msg, "invalid JSON");
    EXPECT_HAS(msg, "line 1, column");
    EXPECT_EQ(msg.find('\n'), std::string::npos);  // one line
  }
  EXPECT_HAS(read_error("[1,\n 2,\n x]", DType::uint8), "line 3, column");
}

// --- nesting -----------------------------------------------------------------------------------

TEST(JsonTensorTest, EightDimensionsAccepted) {
  const Tensor t = read("[[[[[[[[1, 2]]]], [[[[3, 4]]]]]]]]", DType::uint8);
  EXPECT_EQ(dims_of(t), (std::vector<std::uint64_t>{1, 1, 1, 2, 1, 1, 1, 2}));
  EXPECT_EQ(bits_of(t), (std::vector<std::uint64_t>{1, 2, 3, 4}));
  const Tensor o = read(R"({"dtype": "uint8", "shape": [1, 1, 1, 1, 1, 1, 1, 1], "data": [[[[[[[[9]]]]]]]]})");
  EXPECT_EQ(o.shape().rank(), 8u);
}

TEST(JsonTensorTest, NineLevelsRefused) {
  const std::string msg = read_error("[[[[[[[[[1]]]]]]]]]", DType::uint8);
  EXPECT_HAS(msg, "more than 8 nested levels");
  EXPECT_HAS(msg, "data[0][0][0][0][0][0][0][0]");
  EXPECT_HAS(read_error(R"({"dtype": "uint8", "data": [[[[[[[[[1]]]]]]]]]})"), "more than 8 nested levels");
}

TEST(JsonTensorTest, DeepDocumentFailsFastWithoutCrashing) {
  const std::size_t depth = 100000;
  const auto start = std::chrono::steady_clock::now();
  for (const std::string& text :
       {std::string(depth, '[') + std::string(depth, ']'), std::string(depth, '['),  // unterminated too
        R"({"dtype": "uint8", "data": )" + std::string(depth, '[') + std::string(depth, ']') + "}"}) {
    const std::string msg = read_error(text, DType::uint8);
    EXPECT_HAS(msg, "more than 8 nested levels");
  }
  std::string objects;
  for (std::size_t i = 0; i < depth; ++i) objects += R"({"data": )";
  EXPECT_HAS(read_error(objects, DType::uint8), "unexpected object");
  const auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_LT(elapsed, std::chrono::seconds(2));  // refused at the ninth level, not after the whole document
}

// --- 0-d and empty -----------------------------------------------------------------------------

TEST(JsonTensorTest, ZeroDimensional) {
  Tensor t = read("5", DType::uint8);
  EXPECT_EQ(t.shape().rank(), 0u);
  EXPECT_EQ(bits_of(t), (std::vector<std::uint64_t>{5}));
  t = read(" -3 ", DType::int8);
  EXPECT_EQ(t.shape().rank(), 0u);
  EXPECT_EQ(bits_of(t), (std::vector<std::uint64_t>{0xfd}));
  t = read(R"({"shape": [], "data": 5})", DType::uint16);
  EXPECT_EQ(t.shape().rank(), 0u);
  EXPECT_EQ(bits_of(t), (std::vector<std::uint64_t>{5}));
  t = read(R"({"data": 2.5, "dtype": "float32"})");
  EXPECT_EQ(t.shape().rank(), 0u);
  EXPECT_EQ(bits_of(t), (std::vector<std::uint64_t>{0x40200000}));
  t = read(R"({"dtype": "float16", "data": "0x7e01"})");
  EXPECT_EQ(bits_of(t), (std::vector<std::uint64_t>{0x7e01}));
  // A single value for a shape of one element (the man page's rule).
  t = read(R"({"shape": [1, 1], "data": 9})", DType::uint8);
  EXPECT_EQ(dims_of(t), (std::vector<std::uint64_t>{1, 1}));
  EXPECT_EQ(bits_of(t), (std::vector<std::uint64_t>{9}));
  // [5] is one-dimensional, not 0-d.
  EXPECT_EQ(read("[5]", DType::uint8).shape().rank(), 1u);
  // A 0-d value out of range names the only position there is.
  EXPECT_HAS(read_error("256", DType::uint8), "data: value 256 is out of range for uint8");
  EXPECT_HAS(read_error("5"), "or use dtype");
}

TEST(JsonTensorTest, EmptyTensors) {
  Tensor t = read("[]", DType::uint8);
  EXPECT_EQ(dims_of(t), (std::vector<std::uint64_t>{0}));
  EXPECT_EQ(t.element_count(), 0u);
  t = read(R"({"shape": [0, 3], "data": []})", DType::int32);
  EXPECT_EQ(dims_of(t), (std::vector<std::uint64_t>{0, 3}));
  EXPECT_EQ(t.element_count(), 0u);
  t = read("[[], []]", DType::uint8);
  EXPECT_EQ(dims_of(t), (std::vector<std::uint64_t>{2, 0}));
  t = read(R"({"dtype": "float64", "shape": [3, 0], "data": [[], [], []]})");
  EXPECT_EQ(dims_of(t), (std::vector<std::uint64_t>{3, 0}));
}

// Significant digits of a decimal number's text ("65500.0" -> 3, "6e-08" -> 1).
std::size_t significant_digits(const std::string& text) {
  std::string digits;
  for (char c : text.substr(0, text.find_first_of("eE")))
    if (c >= '0' && c <= '9') digits += c;
  digits.erase(0, digits.find_first_not_of('0'));
  digits.erase(digits.find_last_not_of('0') + 1);
  return digits.size();
}

// --- writer ------------------------------------------------------------------------------------

Tensor make(DType dtype, Shape shape, const std::vector<std::uint64_t>& bits) {
  Tensor t(dtype, shape);
  for (std::size_t i = 0; i < bits.size(); ++i) t.set_bits_at(i, bits[i]);
  return t;
}

TEST(JsonTensorTest, WritesObjectFormWithExactIntegers) {
  const Tensor u = make(DType::uint64, Shape{2}, {0xffffffffffffffff, 9007199254740993});
  const std::string text = write_json_tensor(u.view());
  EXPECT_HAS(text, "18446744073709551615");
  EXPECT_HAS(text, "9007199254740993");
  const auto j = nlohmann::json::parse(text);
  EXPECT_EQ(j.at("dtype"), "uint64");
  EXPECT_EQ(j.at("shape"), nlohmann::json::parse("[2]"));
  EXPECT_EQ(j.at("data")[0].get<std::uint64_t>(), 18446744073709551615u);
  const Tensor s = make(DType::int64, Shape{2}, {0x8000000000000000, 0xffffffffffffffff});
  EXPECT_EQ(nlohmann::json::parse(write_json_tensor(s.view())).at("data"),
            nlohmann::json::parse("[-9223372036854775808, -1]"));
  const Tensor i8 = make(DType::int8, Shape{2, 2}, {0x80, 0x7f, 0xff, 0});
  const auto j8 = nlohmann::json::parse(write_json_tensor(i8.view()));
  EXPECT_EQ(j8.at("shape"), nlohmann::json::parse("[2, 2]"));
  EXPECT_EQ(j8.at("data"), nlohmann::json::parse("[[-128, 127], [-1, 0]]"));
  const Tensor z = make(DType::uint8, Shape{}, {7});
  const auto jz = nlohmann::json::parse(write_json_tensor(z.view()));
  EXPECT_EQ(jz.at("shape"), nlohmann::json::array());
  EXPECT_EQ(jz.at("data"), 7);
  const Tensor e = make(DType::uint8, Shape{0, 3}, {});
  const auto je = nlohmann::json::parse(write_json_tensor(e.view()));
  EXPECT_EQ(je.at("shape"), nlohmann::json::parse("[0, 3]"));
  EXPECT_EQ(je.at("data"), nlohmann::json::array());
}

TEST(JsonTensorTest, FormatsFloatsShortestAndNonFiniteAsHex) {
  // Shortest texts, as NumPy's repr prints them (np.float16(0.1) -> 0.1, etc.).
  EXPECT_EQ(format_json_value(DType::float16, 0x2e66, false), "0.1");
  EXPECT_EQ(format_json_value(DType::float32, 0x3dcccccd, false), "0.1");
  EXPECT_EQ(format_json_value(DType::float64, 0x3fb999999999999a, false), "0.1");
  EXPECT_EQ(format_json_value(DType::float16, 0x3555, false), "0.3333");  // np.float16(1/3)
  EXPECT_EQ(format_json_value(DType::float16, 0x3c01, false), "1.001");
  EXPECT_EQ(format_json_value(DType::float16, 0x0001, false), "6e-08");
  // 2^-6: the nearest 4-digit decimal, 0.01562, reads back as the float16 below; 0.01563 is the
  // shortest that reads back (NumPy prints np.float16(0.015625) as 0.01563).
  EXPECT_EQ(format_json_value(DType::float16, 0x2400, false), "0.01563");
  EXPECT_EQ(format_json_value(DType::float16, 0xa400, false), "-0.01563");
  // Whole numbers stay recognisably floats.
  EXPECT_EQ(format_json_value(DType::float16, 0x3c00, false), "1.0");
  // 65504's neighbours are 65472 and infinity (from 65520), so 65500 already reads back as
  // 65504: three digits suffice, whatever the notation.
  const std::string max16 = format_json_value(DType::float16, 0x7bff, false);
  EXPECT_EQ(significant_digits(max16), 3u) << max16;
  EXPECT_EQ(max16, "65500.0");  // as NumPy prints np.float16(65504)
  EXPECT_EQ(bits_of(read("[" + max16 + "]", DType::float16)), (std::vector<std::uint64_t>{0x7bff}));
  EXPECT_EQ(format_json_value(DType::float16, 0x4900, false), "10.0");
  EXPECT_EQ(format_json_value(DType::float32, 0x3f800000, false), "1.0");
  EXPECT_EQ(format_json_value(DType::float64, 0x4059000000000000, false), "100.0");
  // -0.0 keeps its sign.
  EXPECT_EQ(format_json_value(DType::float16, 0x8000, false), "-0.0");
  EXPECT_EQ(format_json_value(DType::float32, 0x80000000, false), "-0.0");
  EXPECT_EQ(format_json_value(DType::float64, 0x8000000000000000, false), "-0.0");
  // NaN and infinities have no JSON literal: their bit patterns, zero-padded.
  EXPECT_EQ(format_json_value(DType::float16, 0x7c00, false), "\"0x7c00\"");
  EXPECT_EQ(format_json_value(DType::float16, 0xfe00, false), "\"0xfe00\"");
  EXPECT_EQ(format_json_value(DType::float32, 0x7fc00000, false), "\"0x7fc00000\"");
  EXPECT_EQ(format_json_value(DType::float32, 0xff800000, false), "\"0xff800000\"");
  EXPECT_EQ(format_json_value(DType::float64, 0x7ff0000000000001, false), "\"0x7ff0000000000001\"");
}

TEST(JsonTensorTest, HexOptionPrintsZeroPaddedBitPatterns) {
  EXPECT_EQ(format_json_value(DType::uint8, 0x0f, true), "\"0x0f\"");
  EXPECT_EQ(format_json_value(DType::int8, 0xff, true), "\"0xff\"");
  EXPECT_EQ(format_json_value(DType::uint16, 1, true), "\"0x0001\"");
  EXPECT_EQ(format_json_value(DType::float16, 0x3c00, true), "\"0x3c00\"");
  EXPECT_EQ(format_json_value(DType::int32, 0x80000000, true), "\"0x80000000\"");
  EXPECT_EQ(format_json_value(DType::float32, 0x3f800000, true), "\"0x3f800000\"");
  EXPECT_EQ(format_json_value(DType::uint64, 0xffffffffffffffff, true), "\"0xffffffffffffffff\"");
  EXPECT_EQ(format_json_value(DType::float64, 0, true), "\"0x0000000000000000\"");
  const Tensor t = make(DType::uint16, Shape{2}, {0xbeef, 1});
  const auto j = nlohmann::json::parse(write_json_tensor(t.view(), JsonWriteOptions{true}));
  EXPECT_EQ(j.at("data"), nlohmann::json::parse(R"(["0xbeef", "0x0001"])"));
  EXPECT_EQ(j.at("dtype"), "uint16");
}

// Interesting bit patterns of each dtype (limits, signed zeros, subnormals, infinities, NaNs
// with payloads) plus pseudo-random ones.
std::vector<std::uint64_t> sample_bits(DType dtype, std::size_t random_count) {
  const DTypeInfo& info = dtype_info(dtype);
  const std::uint64_t mask = info.size == 8 ? ~std::uint64_t{0} : (std::uint64_t{1} << info.bits()) - 1;
  std::vector<std::uint64_t> v = {0, 1, 2, mask, mask - 1, mask >> 1, (mask >> 1) + 1};
  switch (dtype) {
    case DType::float16:
      v.insert(v.end(), {0x8000, 0x03ff, 0x0400, 0x7bff, 0xfbff, 0x7c00, 0xfc00, 0x7e00, 0xfe00, 0x7c01, 0x7d55, 0xffff,
                         0x3c00, 0x3555, 0x8001});
      break;
    case DType::float32:
      v.insert(v.end(), {0x80000000, 0x007fffff, 0x00800000, 0x7f7fffff, 0xff7fffff, 0x7f800000, 0xff800000, 0x7fc00000,
                         0xffc00000, 0x7f800001, 0x7fa5a5a5, 0x3f800000, 0x3eaaaaab, 0x80000001});
      break;
    case DType::float64:
      v.insert(v.end(),
               {0x8000000000000000, 0x000fffffffffffff, 0x0010000000000000, 0x7fefffffffffffff, 0xffefffffffffffff,
                0x7ff0000000000000, 0xfff0000000000000, 0x7ff8000000000000, 0xfff8000000000000, 0x7ff0000000000001,
                0x7ff4deadbeef0001, 0x3ff0000000000000, 0x3fd5555555555555, 0x8000000000000001});
      break;
    default:
      break;
  }
  std::mt19937_64 rng(0x5eed + static_cast<unsigned>(dtype));
  for (std::size_t i = 0; i < random_count; ++i) v.push_back(rng() & mask);
  return v;
}

TEST(JsonTensorTest, WrittenJsonReadsBackToTheSameBitsForEveryDtype) {
  for (const DTypeInfo& row : dtype_table()) {
    SCOPED_TRACE(row.numpy_name);
    std::vector<std::uint64_t> bits = sample_bits(row.dtype, 2000);
    if (bits.size() % 2) bits.push_back(0);
    for (const bool hex : {false, true}) {
      SCOPED_TRACE(hex ? "hex" : "decimal");
      for (const Shape& shape : {Shape{bits.size()}, Shape{2, bits.size() / 2}, Shape{1, 2, 1, bits.size() / 2}}) {
        const Tensor t = make(row.dtype, shape, bits);
        const std::string text = write_json_tensor(t.view(), JsonWriteOptions{hex});
        // Standard JSON (no NaN literals), and readable with no dtype given.
        EXPECT_TRUE(nlohmann::json::accept(text));
        const Tensor back = read(text);
        EXPECT_EQ(back.dtype(), row.dtype);
        EXPECT_EQ(back.shape(), shape);
        EXPECT_EQ(bits_of(back), bits);
      }
      const Tensor scalar = make(row.dtype, Shape{}, {bits[7]});
      const Tensor back = read(write_json_tensor(scalar.view(), JsonWriteOptions{hex}));
      EXPECT_EQ(back.shape().rank(), 0u);
      EXPECT_EQ(back.bits_at(0), bits[7]);
      const Tensor empty = make(row.dtype, Shape{0, 3}, {});
      EXPECT_EQ(read(write_json_tensor(empty.view(), JsonWriteOptions{hex})).shape(), (Shape{0, 3}));
    }
  }
}

TEST(JsonTensorTest, EveryFloat16RoundTripsThroughShortestText) {
  std::string doc = "[";
  for (std::uint32_t h = 0; h <= 0xffff; ++h) {
    const std::string text = format_json_value(DType::float16, h, false);
    doc += (h ? ", " : "") + text;
    // Finite values are plain JSON numbers of at most 5 significant digits (binary16 needs 5).
    if ((h & 0x7c00) != 0x7c00) {
      ASSERT_NE(text.front(), '"') << text;
      EXPECT_LE(significant_digits(text), 5u) << text;
    }
  }
  const Tensor back = read(doc + "]", DType::float16);
  ASSERT_EQ(back.element_count(), 0x10000u);
  for (std::uint32_t h = 0; h <= 0xffff; ++h)
    ASSERT_EQ(back.bits_at(h), h) << fmt::format("0x{:04x} written as {}", h,
                                                 format_json_value(DType::float16, h, false));
}

TEST(JsonTensorTest, Float32AndFloat64TextIsShortest) {
  // Dragon4 shortest texts NumPy prints for these values (repr of np.float32 / np.float64).
  EXPECT_EQ(format_json_value(DType::float32, 0x3eaaaaab, false), "0.33333334");
  EXPECT_EQ(format_json_value(DType::float32, 0x00000001, false), "1e-45");
  EXPECT_EQ(format_json_value(DType::float32, 0x7f7fffff, false), "3.4028235e+38");
  EXPECT_EQ(format_json_value(DType::float64, 0x3fd5555555555555, false), "0.3333333333333333");
  EXPECT_EQ(format_json_value(DType::float64, 0x0000000000000001, false), "5e-324");
}

// --- command-line literals ---------------------------------------------------------------------

TEST(JsonTensorTest, ParseScalarLiteral) {
  EXPECT_EQ(parse_scalar_literal("5", DType::uint8), 5u);
  EXPECT_EQ(parse_scalar_literal("-5", DType::int8), 0xfbu);
  EXPECT_EQ(parse_scalar_literal("-5", DType::int64), static_cast<std::uint64_t>(-5));
  EXPECT_EQ(parse_scalar_literal("0xff", DType::uint8), 0xffu);
  EXPECT_EQ(parse_scalar_literal("0xff", DType::int8), 0xffu);  // a bit pattern: int8 -1
  EXPECT_EQ(parse_scalar_literal("0XFF", DType::uint16), 0xffu);
  EXPECT_EQ(parse_scalar_literal("0b101", DType::uint8), 5u);
  EXPECT_EQ(parse_scalar_literal("0x7fc00000", DType::float32), 0x7fc00000u);
  EXPECT_EQ(parse_scalar_literal("0xffffffffffffffff", DType::uint64), 0xffffffffffffffffu);
  EXPECT_EQ(parse_scalar_literal("18446744073709551615", DType::uint64), 0xffffffffffffffffu);
  EXPECT_EQ(parse_scalar_literal("-9223372036854775808", DType::int64), 0x8000000000000000u);
  EXPECT_EQ(parse_scalar_literal("1.5", DType::float32), 0x3fc00000u);
  EXPECT_EQ(parse_scalar_literal("-0.0", DType::float64), 0x8000000000000000u);
  EXPECT_EQ(parse_scalar_literal("3", DType::float16), 0x4200u);
  EXPECT_EQ(parse_scalar_literal("inf", DType::float32), 0x7f800000u);
  EXPECT_EQ(parse_scalar_literal("-inf", DType::float16), 0xfc00u);
  EXPECT_EQ(parse_scalar_literal("nan", DType::float64) & 0x7ff8000000000000, 0x7ff8000000000000u);
  // A signed hex literal is a value (the lead's rule): -0x1 is -1, -0x80 the int8 minimum.
  EXPECT_EQ(parse_scalar_literal("-0x1", DType::int8), 0xffu);
  EXPECT_EQ(parse_scalar_literal("-0x80", DType::int8), 0x80u);
  EXPECT_HAS(literal_error("-0x81", DType::int8), "out of range for int8");
  EXPECT_HAS(literal_error("-0x1", DType::uint8), "out of range for uint8");
}

TEST(JsonTensorTest, ParseScalarLiteralRefusals) {
  EXPECT_HAS(literal_error("256", DType::uint8), "out of range for uint8");
  EXPECT_HAS(literal_error("-5", DType::uint32), "out of range for uint32");
  EXPECT_HAS(literal_error("-129", DType::int8), "out of range for int8");
  EXPECT_HAS(literal_error("18446744073709551616", DType::uint64), "out of range for uint64");
  EXPECT_HAS(literal_error("-9223372036854775809", DType::int64), "out of range for int64");
  EXPECT_HAS(literal_error("0x100", DType::uint8), "wider than uint8's 8 bits");
  EXPECT_HAS(literal_error("0b100000000", DType::int8), "wider than int8's 8 bits");
  EXPECT_HAS(literal_error("0x10000", DType::float16), "wider than float16's 16 bits");
  EXPECT_HAS(literal_error("0x10000000000000000", DType::uint64), "wider than 64 bits");
  EXPECT_HAS(literal_error("1.5", DType::uint8), "not an integer");
  EXPECT_HAS(literal_error("nan", DType::int32), "not an integer");
  EXPECT_HAS(literal_error("1e39", DType::float32), "out of range for float32");
  EXPECT_HAS(literal_error("70000", DType::float16), "out of range for float16");
  for (const char* bad : {"abc", "", "-", "+5", "5x", "0x", "0b", "0b102", "1.2.3", "--1", " 5"}) {
    SCOPED_TRACE(bad);
    EXPECT_THROW(parse_scalar_literal(bad, DType::uint8), Error);
  }
  EXPECT_HAS(literal_error("abc", DType::uint8), "'abc' is not a number");
}

TEST(JsonTensorTest, ParseScalarLiteralBeyond64BitsKeepsItsValueForFloats) {
  // 1e20 as float64 and float32 (NumPy: np.float64(1e20).view(np.uint64) = 0x4415af1d78b58c40,
  // np.float32(1e20).view(np.uint32) = 0x60ad78ec); 2^64 = 0x43f0000000000000 / 0x5f800000.
  EXPECT_EQ(parse_scalar_literal("100000000000000000000", DType::float64), 0x4415af1d78b58c40u);
  EXPECT_EQ(parse_scalar_literal("100000000000000000000", DType::float32), 0x60ad78ecu);
  EXPECT_EQ(parse_scalar_literal("18446744073709551616", DType::float64), 0x43f0000000000000u);
  EXPECT_EQ(parse_scalar_literal("-18446744073709551616", DType::float32), 0xdf800000u);
  EXPECT_EQ(parse_scalar_literal("-0x10000000000000000", DType::float64), 0xc3f0000000000000u);
  EXPECT_EQ(
      parse_scalar_literal("-0b10000000000000000000000000000000000000000000000000000000000000000", DType::float32),
      0xdf800000u);
  EXPECT_HAS(literal_error("100000000000000000000", DType::float16), "out of range for float16");
  EXPECT_HAS(literal_error(std::string(400, '9'), DType::float64), "out of range for float64");
}

}  // namespace
}  // namespace dmlbits

namespace dmlbits {
namespace {

// NumPy's tolist() of an empty shape stops at the first empty level: [2, 0, 3] is [[], []]
// (#44 item 7). Every such nesting reads with its declared shape; a wrong one is refused.
TEST(JsonTensorEmpty, TheNestedFormOfEveryEmptyShapeReads) {
  struct Case {
    const char* shape;
    const char* data;  // np.empty(shape).tolist()
  };
  for (const Case& c :
       {Case{"[2, 0, 3]", "[[], []]"}, Case{"[0, 3]", "[]"}, Case{"[2, 3, 0]", "[[[], [], []], [[], [], []]]"},
        Case{"[1, 0]", "[[]]"}, Case{"[3, 0, 0, 2]", "[[], [], []]"}, Case{"[2, 1, 0, 5]", "[[[]], [[]]]"}}) {
    const std::string text = fmt::format(R"({{"dtype": "uint8", "shape": {}, "data": {}}})", c.shape, c.data);
    const Tensor t = read(text);
    EXPECT_EQ(fmt::format("[{}]", fmt::join(dims_of(t), ", ")), c.shape) << text;
    EXPECT_EQ(t.element_count(), 0u);
  }
  EXPECT_HAS(read_error(R"({"dtype": "uint8", "shape": [3, 0, 3], "data": [[], []]})"), "does not match the data");
  EXPECT_HAS(read_error(R"({"dtype": "uint8", "shape": [2, 1, 3], "data": [[], []]})"), "does not match the data");
  EXPECT_HAS(read_error(R"({"dtype": "uint8", "shape": [2], "data": [[], []]})"), "does not match the data");
}

// A NaN with its sign and float64 payload, "nan(0x...)", converts as NumPy converts the float64
// (#44 item 2). Expected bits from NumPy 1.24: np.float32(x), np.float16(x) of the double x.
TEST(JsonTensorNan, APayloadConvertsAsNumPyConvertsTheDouble) {
  struct Case {
    const char* text;
    std::uint64_t f64;
    std::uint32_t f32;
    std::uint16_t f16;
  };
  for (const Case& c :
       {Case{"nan", 0x7ff8000000000000, 0x7fc00000, 0x7e00}, Case{"-nan", 0xfff8000000000000, 0xffc00000, 0xfe00},
        Case{"-nan(0x8000000000000)", 0xfff8000000000000, 0xffc00000, 0xfe00},
        Case{"nan(0x1)", 0x7ff0000000000001, 0x7fc00000, 0x7c01},
        Case{"nan(0x4000000000000)", 0x7ff4000000000000, 0x7fe00000, 0x7d00},
        Case{"-nan(0x400)", 0xfff0000000000400, 0xffc00000, 0xfc01},
        Case{"nan(0xc000000000000)", 0x7ffc000000000000, 0x7fe00000, 0x7f00},
        Case{"nan(0x40000000000)", 0x7ff0040000000000, 0x7fc02000, 0x7c01}}) {
    const std::string text = fmt::format(R"(["{}"])", c.text);
    EXPECT_EQ(bits_of(read(text, DType::float64)), std::vector<std::uint64_t>{c.f64}) << c.text;
    EXPECT_EQ(bits_of(read(text, DType::float32)), std::vector<std::uint64_t>{c.f32}) << c.text;
    EXPECT_EQ(bits_of(read(text, DType::float16)), std::vector<std::uint64_t>{c.f16}) << c.text;
  }
  EXPECT_HAS(read_error(R"j(["nan(0x0)"])j", DType::float32), "from 0x1 to 0xfffffffffffff");
  EXPECT_HAS(read_error(R"j(["nan(0x10000000000000)"])j", DType::float32), "from 0x1 to 0xfffffffffffff");
  EXPECT_HAS(read_error(R"j(["nan(0xg)"])j", DType::float32), "hexadecimal digits");
}

}  // namespace
}  // namespace dmlbits

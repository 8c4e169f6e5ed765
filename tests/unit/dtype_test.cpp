// The data-type table (dmlbits/dtype.hpp) against DirectML.h's DML_TENSOR_DATA_TYPE values
// (reference/directml-bitwise.md) and NumPy's names and descr codes.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "dmlbits/dtype.hpp"

namespace dmlbits {
namespace {

struct Row {
  DType dtype;
  const char* dml;
  int dml_value;
  const char* numpy;
  const char* code;
  const char* descr;
  std::size_t size;
  DTypeKind kind;
};

// Hand-written from DirectML.h and NumPy; independent of the table under test.
const std::vector<Row> kRows = {
    {DType::uint8, "UINT8", 5, "uint8", "u1", "|u1", 1, DTypeKind::unsigned_int},
    {DType::uint16, "UINT16", 4, "uint16", "u2", "<u2", 2, DTypeKind::unsigned_int},
    {DType::uint32, "UINT32", 3, "uint32", "u4", "<u4", 4, DTypeKind::unsigned_int},
    {DType::uint64, "UINT64", 10, "uint64", "u8", "<u8", 8, DTypeKind::unsigned_int},
    {DType::int8, "INT8", 8, "int8", "i1", "|i1", 1, DTypeKind::signed_int},
    {DType::int16, "INT16", 7, "int16", "i2", "<i2", 2, DTypeKind::signed_int},
    {DType::int32, "INT32", 6, "int32", "i4", "<i4", 4, DTypeKind::signed_int},
    {DType::int64, "INT64", 11, "int64", "i8", "<i8", 8, DTypeKind::signed_int},
    {DType::float16, "FLOAT16", 2, "float16", "f2", "<f2", 2, DTypeKind::floating},
    {DType::float32, "FLOAT32", 1, "float32", "f4", "<f4", 4, DTypeKind::floating},
    {DType::float64, "FLOAT64", 9, "float64", "f8", "<f8", 8, DTypeKind::floating},
};

TEST(DTypeTest, TableHasElevenRowsInEnumOrder) {
  const auto table = dtype_table();
  ASSERT_EQ(table.size(), kDTypeCount);
  ASSERT_EQ(table.size(), 11u);
  for (std::size_t i = 0; i < table.size(); ++i) {
    EXPECT_EQ(static_cast<std::size_t>(table[i].dtype), i);
    EXPECT_EQ(&dtype_info(table[i].dtype), &table[i]);
  }
}

TEST(DTypeTest, TableMatchesDirectMLAndNumPy) {
  for (const auto& r : kRows) {
    const DTypeInfo& d = dtype_info(r.dtype);
    SCOPED_TRACE(r.dml);
    EXPECT_EQ(d.dtype, r.dtype);
    EXPECT_EQ(d.dml_name, r.dml);
    EXPECT_EQ(d.dml_value, r.dml_value);
    EXPECT_EQ(d.numpy_name, r.numpy);
    EXPECT_EQ(d.numpy_code(), r.code);
    EXPECT_EQ(d.numpy_descr(), r.descr);
    EXPECT_EQ(d.size, r.size);
    EXPECT_EQ(d.bits(), 8 * r.size);
    EXPECT_EQ(d.kind, r.kind);
    EXPECT_EQ(d.dml_enum_name(), std::string("DML_TENSOR_DATA_TYPE_") + r.dml);
  }
}

TEST(DTypeTest, DirectMLValuesAreDistinctAndSkipUnknown) {
  std::set<int> values;
  for (const auto& d : dtype_table()) {
    EXPECT_TRUE(values.insert(d.dml_value).second) << d.dml_name;
    EXPECT_NE(d.dml_value, 0) << "0 is DML_TENSOR_DATA_TYPE_UNKNOWN";
  }
  EXPECT_EQ(*values.begin(), 1);
  EXPECT_EQ(*values.rbegin(), 11);  // UINT4 (12) and INT4 (13) are not bitwise types
}

TEST(DTypeTest, ParsesNumPyNamesCodesAndDescrs) {
  for (const auto& r : kRows) {
    EXPECT_EQ(parse_dtype_name(r.numpy), r.dtype) << r.numpy;
    EXPECT_EQ(parse_dtype_name(r.code), r.dtype) << r.code;
    EXPECT_EQ(parse_dtype_name(r.descr), r.dtype) << r.descr;
    EXPECT_EQ(parse_dtype_name(std::string("<") + r.code), r.dtype) << r.code;
    EXPECT_EQ(parse_dtype_name(std::string("=") + r.code), r.dtype) << r.code;
    EXPECT_EQ(parse_dtype_name(std::string("|") + r.code), r.dtype) << r.code;
  }
  EXPECT_EQ(parse_dtype_name("<u4"), DType::uint32);
  EXPECT_EQ(parse_dtype_name("=i2"), DType::int16);
  EXPECT_EQ(parse_dtype_name("|u1"), DType::uint8);
}

TEST(DTypeTest, ParsesDirectMLNames) {
  for (const auto& r : kRows) {
    EXPECT_EQ(parse_dtype_name(r.dml), r.dtype) << r.dml;
    EXPECT_EQ(parse_dtype_name(std::string("DML_TENSOR_DATA_TYPE_") + r.dml), r.dtype) << r.dml;
  }
}

TEST(DTypeTest, RejectsJunk) {
  for (const char* name : {"",
                           " ",
                           "uint8 ",
                           " uint8",
                           "Uint8",
                           "UInt8",
                           "uint",
                           "int",
                           "float",
                           "double",
                           "half",
                           "bool",
                           "b1",
                           "|b1",
                           "?",
                           "u3",
                           "u16",
                           "f16",
                           "i0",
                           "c8",
                           "<c8",
                           "complex64",
                           "U3",
                           "<U3",
                           "O",
                           "|O",
                           "<",
                           "|",
                           "<<u4",
                           "<uint8",
                           "<UINT8",
                           "u1u1",
                           "uint8\n",
                           "UINT",
                           "UNKNOWN",
                           "UINT4",
                           "INT4",
                           "FLOAT16x",
                           "DML_TENSOR_DATA_TYPE_",
                           "DML_TENSOR_DATA_TYPE_UNKNOWN",
                           "DML_TENSOR_DATA_TYPE_uint8",
                           "DML_TENSOR_DATA_TYPE_u1",
                           "DML_TENSOR_DATA_TYPE_UINT4",
                           "dml_tensor_data_type_uint8",
                           "DML_TENSOR_DATA_TYPE_UINT8 ",
                           "float128",
                           "int128",
                           "bfloat16"}) {
    EXPECT_EQ(parse_dtype_name(name), std::nullopt) << "'" << name << "'";
  }
  // A NUL inside a name is not a terminator.
  EXPECT_EQ(parse_dtype_name(std::string_view("uint8\0x", 7)), std::nullopt);
}

TEST(DTypeTest, NamesHelpListsEverySpelling) {
  const std::string help = dtype_names_help();
  for (const auto& r : kRows) {
    EXPECT_NE(help.find(r.numpy), std::string::npos) << r.numpy;
    EXPECT_NE(help.find(r.code), std::string::npos) << r.code;
    EXPECT_NE(help.find(r.dml), std::string::npos) << r.dml;
  }
}

TEST(DTypeTest, DTypeSetBasics) {
  DTypeSet none;
  EXPECT_TRUE(none.empty());
  EXPECT_EQ(none.to_string(), "");
  for (const auto& r : kRows) EXPECT_FALSE(none.contains(r.dtype));

  const DTypeSet a{DType::uint8, DType::float32};
  EXPECT_FALSE(a.empty());
  EXPECT_TRUE(a.contains(DType::uint8));
  EXPECT_TRUE(a.contains(DType::float32));
  EXPECT_FALSE(a.contains(DType::int8));
  EXPECT_EQ(a.to_string(), "UINT8, FLOAT32");  // table order, whatever the listing order
  EXPECT_EQ((DTypeSet{DType::float32, DType::uint8}), a);
  const DTypeSet b = a | DTypeSet{DType::int64};
  EXPECT_TRUE(b.contains(DType::int64));
  EXPECT_EQ(b.to_string(), "UINT8, INT64, FLOAT32");
  EXPECT_NE(a, b);
}

TEST(DTypeTest, NamedSets) {
  for (const auto& r : kRows) EXPECT_TRUE(dtypes::kAll.contains(r.dtype)) << r.dml;
  EXPECT_EQ(dtypes::kAll.raw(), (1u << 11) - 1);
  EXPECT_EQ(dtypes::kUnsigned8To32.to_string(), "UINT8, UINT16, UINT32");
  EXPECT_EQ(dtypes::kUnsigned.to_string(), "UINT8, UINT16, UINT32, UINT64");
  EXPECT_EQ(dtypes::kPopcountOutputs.to_string(), "UINT8, UINT32");
}

}  // namespace
}  // namespace dmlbits

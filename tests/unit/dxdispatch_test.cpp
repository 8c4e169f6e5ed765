// DxDispatch models: the structure DxDispatch's Guide (microsoft/DirectML,
// DxDispatch/doc/Guide.md) and its parser (DxDispatch/src/model/JsonParsers.cpp) expect, with
// the descriptors of the validated operation. Expected sizes, strides and byte counts are
// hand-computed from NumPy's broadcasting and DMLCalcBufferTensorSize's formula
// (directml-bitwise.md); names and field spellings are DirectML's and the Guide's.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "dxdispatch.hpp"
#include "dmlbits/error.hpp"
#include "io.hpp"

namespace dmlbits {
namespace {

using nlohmann::json;
using U64s = std::vector<std::uint64_t>;

ValidatedOp make_op(OpKind op, DType in, std::vector<Shape> shapes, FeatureLevel level = FeatureLevel(6, 4),
                    std::optional<DType> out = std::nullopt, bool in_place = false) {
  OpRequest r;
  r.op = op;
  r.level = level;
  for (auto& s : shapes) r.inputs.push_back({in, s});
  r.out_dtype = out;
  r.in_place = in_place;
  return validate(r);
}

Errc errc_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.code();
  }
  ADD_FAILURE() << "no Error thrown";
  return Errc::internal;
}

// The tensor desc as the model spells it equals DmlTensorDesc `d`, field by field.
void expect_tensor(const json& t, const DmlTensorDesc& d) {
  EXPECT_EQ(t.at("DataType"), dtype_info(d.dtype).dml_enum_name());
  EXPECT_EQ(t.at("Sizes").get<U64s>(), d.sizes);
  EXPECT_EQ(t.at("Strides").get<U64s>(), d.strides);
  EXPECT_EQ(t.at("DimensionCount").get<std::uint64_t>(), d.sizes.size());
  EXPECT_EQ(t.at("TotalTensorSizeInBytes").get<std::uint64_t>(), d.total_bytes);
  EXPECT_EQ(t.at("Flags"), "DML_TENSOR_FLAG_NONE");
}

TEST(DxDispatchTest, BinaryBroadcastModel) {
  // A (2,1) AND B (3,) -> (2,3), UINT8 at 3_0.
  const auto op = make_op(OpKind::bit_and, DType::uint8, {Shape{2, 1}, Shape{3}}, FeatureLevel(3, 0));
  const json m = dxdispatch_model(op, {"m-a.npy", "m-b.npy"}, "m-out.npy");

  // The three members DxDispatch reads, and the note it ignores.
  ASSERT_TRUE(m.at("resources").is_object());
  ASSERT_TRUE(m.at("dispatchables").is_object());
  ASSERT_TRUE(m.at("commands").is_array());
  EXPECT_EQ(m.size(), 4u);

  const json& res = m.at("resources");
  EXPECT_EQ(res.size(), 3u);
  EXPECT_EQ(res.at("A").at("initialValues"), json({{"sourcePath", "m-a.npy"}}));
  EXPECT_EQ(res.at("B").at("initialValues"), json({{"sourcePath", "m-b.npy"}}));
  EXPECT_EQ(res.at("A").at("initialValuesDataType"), "DML_TENSOR_DATA_TYPE_UINT8");
  EXPECT_EQ(res.at("B").at("initialValuesDataType"), "DML_TENSOR_DATA_TYPE_UINT8");
  // A holds 2 bytes, B 3: both padded to 4, DirectML's alignment, which also covers their
  // TotalTensorSizeInBytes (4).
  EXPECT_EQ(res.at("A").at("sizeInBytes"), 4);
  EXPECT_EQ(res.at("B").at("sizeInBytes"), 4);
  const json& out = res.at("Out");
  EXPECT_EQ(out.at("initialValuesDataType"), "DML_TENSOR_DATA_TYPE_UINT8");
  EXPECT_EQ(out.at("initialValues"), json({{"valueCount", 6}, {"value", 0}}));
  EXPECT_EQ(out.at("sizeInBytes"), 8);  // 6 bytes, padded to 8

  ASSERT_EQ(m.at("dispatchables").size(), 1u);
  const json& d = m.at("dispatchables").at("and");
  EXPECT_EQ(d.at("type"), "DML_OPERATOR_ELEMENT_WISE_BIT_AND");
  EXPECT_EQ(d.at("executionFlags"), json::array({"DML_EXECUTION_FLAG_NONE"}));
  const json& desc = d.at("desc");
  EXPECT_EQ(desc.size(), 3u);
  // Hand-computed: A is read with stride 0 along the new dimension 1, B along dimension 0.
  EXPECT_EQ(desc.at("ATensor").at("Sizes").get<U64s>(), (U64s{2, 3}));
  EXPECT_EQ(desc.at("ATensor").at("Strides").get<U64s>(), (U64s{1, 0}));
  EXPECT_EQ(desc.at("ATensor").at("TotalTensorSizeInBytes"), 4);  // last element 1 -> 2 bytes -> 4
  EXPECT_EQ(desc.at("BTensor").at("Sizes").get<U64s>(), (U64s{2, 3}));
  EXPECT_EQ(desc.at("BTensor").at("Strides").get<U64s>(), (U64s{0, 1}));
  EXPECT_EQ(desc.at("BTensor").at("TotalTensorSizeInBytes"), 4);
  EXPECT_EQ(desc.at("OutputTensor").at("Strides").get<U64s>(), (U64s{3, 1}));
  EXPECT_EQ(desc.at("OutputTensor").at("TotalTensorSizeInBytes"), 8);
  // And exactly what the validated operation executes.
  expect_tensor(desc.at("ATensor"), op.desc().inputs[0]);
  expect_tensor(desc.at("BTensor"), op.desc().inputs[1]);
  expect_tensor(desc.at("OutputTensor"), op.desc().output);

  const json& cmds = m.at("commands");
  ASSERT_EQ(cmds.size(), 2u);
  EXPECT_EQ(cmds[0].at("type"), "dispatch");
  EXPECT_EQ(cmds[0].at("dispatchable"), "and");
  EXPECT_EQ(cmds[0].at("bindings"), json({{"ATensor", "A"}, {"BTensor", "B"}, {"OutputTensor", "Out"}}));
  EXPECT_EQ(cmds[1],
            json({{"type", "writeFile"}, {"resource", "Out"}, {"targetPath", "m-out.npy"}, {"dimensions", {2, 3}}}));

  const json& note = m.at("dmlbits");
  EXPECT_EQ(note.at("feature_level"), "DML_FEATURE_LEVEL_3_0");
  EXPECT_EQ(note.at("dxdispatch_arguments"), json::array({"--dml_feature_level", "3.0"}));
  EXPECT_EQ(note.at("output").at("shape").get<U64s>(), (U64s{2, 3}));
  EXPECT_EQ(note.at("output").at("dtype"), "uint8");
  EXPECT_FALSE(note.contains("shift_overflow"));
}

TEST(DxDispatchTest, UnaryModelBindsInputTensor) {
  // NOT of INT16 needs 4_1; 3 elements = 6 bytes, padded to 8.
  const auto op = make_op(OpKind::bit_not, DType::int16, {Shape{3}}, FeatureLevel(4, 1));
  const json m = dxdispatch_model(op, {"n-a.npy"}, "n-out.npy");
  const json& res = m.at("resources");
  EXPECT_EQ(res.size(), 2u);
  EXPECT_FALSE(res.contains("B"));
  EXPECT_EQ(res.at("A").at("initialValuesDataType"), "DML_TENSOR_DATA_TYPE_INT16");
  EXPECT_EQ(res.at("A").at("sizeInBytes"), 8);
  EXPECT_EQ(res.at("Out").at("sizeInBytes"), 8);
  const json& d = m.at("dispatchables").at("not");
  EXPECT_EQ(d.at("type"), "DML_OPERATOR_ELEMENT_WISE_BIT_NOT");
  EXPECT_EQ(d.at("desc").size(), 2u);
  EXPECT_EQ(d.at("desc").at("InputTensor").at("DataType"), "DML_TENSOR_DATA_TYPE_INT16");
  EXPECT_EQ(d.at("desc").at("InputTensor").at("Sizes").get<U64s>(), (U64s{3}));
  EXPECT_EQ(d.at("desc").at("InputTensor").at("Strides").get<U64s>(), (U64s{1}));
  expect_tensor(d.at("desc").at("InputTensor"), op.desc().inputs[0]);
  expect_tensor(d.at("desc").at("OutputTensor"), op.desc().output);
  EXPECT_EQ(m.at("commands")[0].at("bindings"), json({{"InputTensor", "A"}, {"OutputTensor", "Out"}}));
  EXPECT_EQ(m.at("dmlbits").at("dxdispatch_arguments")[1], "4.1");
}

TEST(DxDispatchTest, PopcountWithUint32Output) {
  // UINT16 in (5 elements, 10 bytes -> 12), UINT32 out (20 bytes).
  const auto op = make_op(OpKind::popcount, DType::uint16, {Shape{5}}, FeatureLevel(3, 0), DType::uint32);
  const json m = dxdispatch_model(op, {"p-a.npy"}, "p-out.npy");
  const json& res = m.at("resources");
  EXPECT_EQ(res.at("A").at("initialValuesDataType"), "DML_TENSOR_DATA_TYPE_UINT16");
  EXPECT_EQ(res.at("A").at("sizeInBytes"), 12);
  EXPECT_EQ(res.at("Out").at("initialValuesDataType"), "DML_TENSOR_DATA_TYPE_UINT32");
  EXPECT_EQ(res.at("Out").at("initialValues").at("valueCount"), 5);
  EXPECT_EQ(res.at("Out").at("sizeInBytes"), 20);
  const json& desc = m.at("dispatchables").at("popcount").at("desc");
  EXPECT_EQ(m.at("dispatchables").at("popcount").at("type"), "DML_OPERATOR_ELEMENT_WISE_BIT_COUNT");
  EXPECT_EQ(desc.at("InputTensor").at("DataType"), "DML_TENSOR_DATA_TYPE_UINT16");
  EXPECT_EQ(desc.at("OutputTensor").at("DataType"), "DML_TENSOR_DATA_TYPE_UINT32");
  EXPECT_EQ(desc.at("OutputTensor").at("TotalTensorSizeInBytes"), 20);
  EXPECT_EQ(m.at("dmlbits").at("output").at("dtype"), "uint32");
}

TEST(DxDispatchTest, InPlaceBindsTheOutputToA) {
  const auto op = make_op(OpKind::bit_xor, DType::uint8, {Shape{2, 3}, Shape{}}, FeatureLevel(3, 0), std::nullopt,
                          /*in_place=*/true);
  const json m = dxdispatch_model(op, {"x-a.npy", "x-b.npy"}, "x-out.npy");
  EXPECT_FALSE(m.at("resources").contains("Out"));
  EXPECT_EQ(m.at("resources").at("A").at("sizeInBytes"), 8);
  EXPECT_EQ(m.at("resources").at("B").at("sizeInBytes"), 4);  // one byte, padded
  EXPECT_EQ(m.at("dispatchables").at("xor").at("desc").at("BTensor").at("Strides").get<U64s>(), (U64s{0, 0}));
  EXPECT_EQ(m.at("commands")[0].at("bindings").at("OutputTensor"), "A");
  EXPECT_EQ(m.at("commands")[1].at("resource"), "A");
}

TEST(DxDispatchTest, ShiftsRecordTheOverflowMode) {
  OpRequest r;
  r.op = OpKind::shl;
  r.level = FeatureLevel(2, 1);
  r.inputs = {{DType::uint32, Shape{1, 1, 2, 2}}, {DType::uint32, Shape{1, 1, 2, 2}}};
  r.shift_overflow = ShiftOverflow::wrap;
  const json m = dxdispatch_model(validate(r), {"s-a.npy", "s-b.npy"}, "s-out.npy");
  EXPECT_EQ(m.at("dispatchables").at("shl").at("type"), "DML_OPERATOR_ELEMENT_WISE_BIT_SHIFT_LEFT");
  EXPECT_EQ(m.at("dmlbits").at("shift_overflow"), "wrap");
  EXPECT_EQ(m.at("dmlbits").at("dxdispatch_arguments")[1], "2.1");
  EXPECT_EQ(m.at("commands")[1].at("dimensions").get<U64s>(), (U64s{1, 1, 2, 2}));
  r.shift_overflow = kDefaultShiftOverflow;
  EXPECT_EQ(dxdispatch_model(validate(r), {"s-a.npy", "s-b.npy"}, "s-out.npy").at("dmlbits").at("shift_overflow"),
            "directml");
}

TEST(DxDispatchTest, ScalarOutputGetsOneDimension) {
  const auto op = make_op(OpKind::bit_or, DType::uint64, {Shape{}, Shape{}});
  const json m = dxdispatch_model(op, {"a.npy", "b.npy"}, "o.npy");
  EXPECT_EQ(m.at("commands")[1].at("dimensions").get<U64s>(), (U64s{1}));
  EXPECT_EQ(m.at("dispatchables").at("or").at("desc").at("OutputTensor").at("Sizes").get<U64s>(), (U64s{1}));
  EXPECT_EQ(m.at("resources").at("Out").at("sizeInBytes"), 8);
  EXPECT_EQ(m.at("dmlbits").at("output").at("shape"), json::array());
}

TEST(DxDispatchTest, RefusesWhatDirectMLCannotDispatch) {
  const auto empty = make_op(OpKind::bit_and, DType::uint8, {Shape{0}, Shape{1}});
  EXPECT_EQ(errc_of([&] { dxdispatch_model(empty, {"a", "b"}, "o"); }), Errc::unsupported);
  const auto ok = make_op(OpKind::bit_and, DType::uint8, {Shape{2}, Shape{2}});
  EXPECT_EQ(errc_of([&] { dxdispatch_model(ok, {"a"}, "o"); }), Errc::internal);
}

TEST(DxDispatchTest, FileNames) {
  auto n = dxdispatch_file_names("dir/repro", 2);
  EXPECT_EQ(n.model, "dir/repro.json");
  EXPECT_EQ(n.inputs, (std::vector<std::string>{"dir/repro-a.npy", "dir/repro-b.npy"}));
  EXPECT_EQ(n.output, "dir/repro-out.npy");
  n = dxdispatch_file_names("repro.JSON", 1);  // the extension is dropped in any case
  EXPECT_EQ(n.model, "repro.json");
  EXPECT_EQ(n.inputs, (std::vector<std::string>{"repro-a.npy"}));
  EXPECT_EQ(errc_of([] { dxdispatch_file_names("-", 1); }), Errc::usage);
  EXPECT_EQ(errc_of([] { dxdispatch_file_names("dir/", 1); }), Errc::usage);
  EXPECT_EQ(errc_of([] { dxdispatch_file_names("dir/.json", 1); }), Errc::usage);
}

TEST(DxDispatchTest, WritesModelAndInputsBesideIt) {
  char tmpl[] = "/tmp/dmlbits-dxd-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::filesystem::path dir(tmpl);

  Tensor a(DType::uint16, Shape{2, 1});
  a.set_bits_at(0, 0x1234);
  a.set_bits_at(1, 0xffff);
  Tensor b(DType::uint16, Shape{3});
  for (std::size_t i = 0; i < 3; ++i) b.set_bits_at(i, 0x0f0f << i);
  const auto op = make_op(OpKind::bit_or, DType::uint16, {a.shape(), b.shape()});
  const auto files = write_dxdispatch_model((dir / "m").string(), op, {a.view(), b.view()});
  EXPECT_EQ(files.model, (dir / "m.json").string());

  std::stringstream text;
  {
    // Closed before remove_all below: Windows refuses to delete a file that is still open
    // (without FILE_SHARE_DELETE, which std::ifstream does not ask for).
    std::ifstream in(files.model);
    text << in.rdbuf();
  }
  const json m = json::parse(text.str());
  // Names without the directory: DxDispatch resolves them relative to the model.
  EXPECT_EQ(m.at("resources").at("A").at("initialValues").at("sourcePath"), "m-a.npy");
  EXPECT_EQ(m.at("resources").at("B").at("initialValues").at("sourcePath"), "m-b.npy");
  EXPECT_EQ(m.at("commands")[1].at("targetPath"), "m-out.npy");

  const Tensor* want[] = {&a, &b};
  for (int i = 0; i < 2; ++i) {
    const auto got = read_tensor(files.inputs[i]);
    EXPECT_EQ(got.tensor.dtype(), DType::uint16);
    EXPECT_EQ(got.tensor.shape(), want[i]->shape());
    ASSERT_EQ(got.tensor.byte_size(), want[i]->byte_size());
    EXPECT_EQ(std::memcmp(got.tensor.data(), want[i]->data(), want[i]->byte_size()), 0) << files.inputs[i];
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "m-out.npy"));  // DxDispatch writes it

  // Inputs that are not the validated ones are a bug, and nothing is written.
  EXPECT_EQ(errc_of([&] { write_dxdispatch_model((dir / "n").string(), op, {b.view(), a.view()}); }), Errc::internal);
  EXPECT_FALSE(std::filesystem::exists(dir / "n-a.npy"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace dmlbits

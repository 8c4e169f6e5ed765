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
#include "evaluate.hpp"
#include "expression.hpp"
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

// An expression's graph as `dmlbits eval` validates it (the parser and the run's literal reader
// give the graph; the model of it is what is tested).
ValidatedGraph make_graph(const std::string& text, std::vector<OperandInfo> inputs) {
  auto e = std::make_shared<const expr::Expression>(expr::parse_expression(text));
  GraphRequest r;
  r.expression = e;
  r.inputs = std::move(inputs);
  r.literal_shape = [e](std::int32_t node, DType dtype) {
    return read_expression_literal(e->nodes[static_cast<std::size_t>(node)].literal, dtype).shape();
  };
  return validate_graph(r);
}

std::vector<Tensor> constants_of(const ValidatedGraph& g) {
  std::vector<Tensor> out;
  for (const GraphConstant& c : g.constants())
    out.push_back(
        read_expression_literal(g.expression().nodes[static_cast<std::size_t>(c.expr_node)].literal, c.dtype));
  return out;
}

json graph_model(const ValidatedGraph& g, const std::vector<std::string>& files, const std::string& out) {
  const std::vector<Tensor> constants = constants_of(g);
  std::vector<TensorView> views;
  for (const Tensor& t : constants) views.push_back(t.view());
  return dxdispatch_graph_model(g, files, views, out);
}

TEST(DxDispatchGraphTest, HammingDistanceWithBroadcast) {
  // popcount(a ^ b), a uint32 (2,1), b uint32 (3,): an XOR into a (2,3) UINT32 intermediate,
  // then a BIT_COUNT of it into UINT8 (popcount's default count type).
  const ValidatedGraph g = make_graph("popcount(a ^ b)", {{DType::uint32, Shape{2, 1}}, {DType::uint32, Shape{3}}});
  const json m = graph_model(g, {"h-a.npy", "h-b.npy"}, "h-out.npy");
  ASSERT_EQ(m.size(), 4u);

  const json& res = m.at("resources");
  EXPECT_EQ(res.size(), 4u);  // a, b, and one per node
  EXPECT_EQ(res.at("a").at("initialValues"), json({{"sourcePath", "h-a.npy"}}));
  EXPECT_EQ(res.at("a").at("initialValuesDataType"), "DML_TENSOR_DATA_TYPE_UINT32");
  EXPECT_EQ(res.at("a").at("sizeInBytes"), 8);  // 2 elements, read with stride 0 along dimension 1
  EXPECT_EQ(res.at("b").at("initialValues"), json({{"sourcePath", "h-b.npy"}}));
  EXPECT_EQ(res.at("b").at("sizeInBytes"), 12);
  // The intermediate: 6 UINT32, zero-filled, the XOR's output and the count's input.
  EXPECT_EQ(res.at("node:0").at("initialValuesDataType"), "DML_TENSOR_DATA_TYPE_UINT32");
  EXPECT_EQ(res.at("node:0").at("initialValues"), json({{"valueCount", 6}, {"value", 0}}));
  EXPECT_EQ(res.at("node:0").at("sizeInBytes"), 24);
  // The result: 6 UINT8, padded to 8.
  EXPECT_EQ(res.at("node:1").at("initialValuesDataType"), "DML_TENSOR_DATA_TYPE_UINT8");
  EXPECT_EQ(res.at("node:1").at("initialValues"), json({{"valueCount", 6}, {"value", 0}}));
  EXPECT_EQ(res.at("node:1").at("sizeInBytes"), 8);

  const json& ds = m.at("dispatchables");
  ASSERT_EQ(ds.size(), 2u);
  EXPECT_EQ(ds.at("node:0").at("type"), "DML_OPERATOR_ELEMENT_WISE_BIT_XOR");
  EXPECT_EQ(ds.at("node:1").at("type"), "DML_OPERATOR_ELEMENT_WISE_BIT_COUNT");
  const json& x = ds.at("node:0").at("desc");
  EXPECT_EQ(x.at("ATensor").at("Sizes").get<U64s>(), (U64s{2, 3}));
  EXPECT_EQ(x.at("ATensor").at("Strides").get<U64s>(), (U64s{1, 0}));
  EXPECT_EQ(x.at("ATensor").at("TotalTensorSizeInBytes"), 8);
  EXPECT_EQ(x.at("BTensor").at("Strides").get<U64s>(), (U64s{0, 1}));
  EXPECT_EQ(x.at("BTensor").at("TotalTensorSizeInBytes"), 12);
  EXPECT_EQ(x.at("OutputTensor").at("Strides").get<U64s>(), (U64s{3, 1}));
  EXPECT_EQ(x.at("OutputTensor").at("TotalTensorSizeInBytes"), 24);
  const json& c = ds.at("node:1").at("desc");
  EXPECT_EQ(c.size(), 2u);
  EXPECT_EQ(c.at("InputTensor").at("DataType"), "DML_TENSOR_DATA_TYPE_UINT32");
  EXPECT_EQ(c.at("InputTensor").at("Sizes").get<U64s>(), (U64s{2, 3}));
  EXPECT_EQ(c.at("InputTensor").at("TotalTensorSizeInBytes"), 24);
  EXPECT_EQ(c.at("OutputTensor").at("DataType"), "DML_TENSOR_DATA_TYPE_UINT8");
  EXPECT_EQ(c.at("OutputTensor").at("TotalTensorSizeInBytes"), 8);
  for (std::size_t k = 0; k < 2; ++k) {
    const std::string name = "node:" + std::to_string(k);
    EXPECT_EQ(ds.at(name).at("executionFlags"), json::array({"DML_EXECUTION_FLAG_NONE"}));
    expect_tensor(ds.at(name).at("desc").at("OutputTensor"), g.nodes()[k].op.desc().output);
  }

  const json& cmds = m.at("commands");
  ASSERT_EQ(cmds.size(), 3u);
  EXPECT_EQ(cmds[0], json({{"type", "dispatch"},
                           {"dispatchable", "node:0"},
                           {"bindings", {{"ATensor", "a"}, {"BTensor", "b"}, {"OutputTensor", "node:0"}}}}));
  EXPECT_EQ(cmds[1], json({{"type", "dispatch"},
                           {"dispatchable", "node:1"},
                           {"bindings", {{"InputTensor", "node:0"}, {"OutputTensor", "node:1"}}}}));
  EXPECT_EQ(cmds[2],
            json({{"type", "writeFile"}, {"resource", "node:1"}, {"targetPath", "h-out.npy"}, {"dimensions", {2, 3}}}));

  const json& note = m.at("dmlbits");
  EXPECT_EQ(note.at("expression"), "popcount(a ^ b)");
  EXPECT_EQ(note.at("inputs"), json({{"a", "h-a.npy"}, {"b", "h-b.npy"}}));
  EXPECT_EQ(note.at("nodes")[0].at("text"), "a ^ b");
  EXPECT_EQ(note.at("nodes")[1].at("text"), "popcount(a ^ b)");
  EXPECT_EQ(note.at("output"), json({{"path", "h-out.npy"}, {"dtype", "uint8"}, {"shape", {2, 3}}}));
  EXPECT_FALSE(note.contains("shift_overflow"));
}

TEST(DxDispatchGraphTest, LiteralsAreInlineConstants) {
  // (a >> 3) & 0xfff0, a uint16 (5,): each literal a UINT16 0-d constant read with stride 0.
  const ValidatedGraph g = make_graph("(a >> 3) & 0xfff0", {{DType::uint16, Shape{5}}});
  const json m = graph_model(g, {"f-a.npy"}, "f-out.npy");
  const json& res = m.at("resources");
  EXPECT_EQ(res.size(), 5u);                     // a, two constants, two nodes
  EXPECT_EQ(res.at("a").at("sizeInBytes"), 12);  // 10 bytes, padded
  EXPECT_EQ(
      res.at("const:0"),
      json({{"initialValuesDataType", "DML_TENSOR_DATA_TYPE_UINT16"}, {"initialValues", {3}}, {"sizeInBytes", 4}}));
  EXPECT_EQ(res.at("const:1"), json({{"initialValuesDataType", "DML_TENSOR_DATA_TYPE_UINT16"},
                                     {"initialValues", {0xfff0}},
                                     {"sizeInBytes", 4}}));
  EXPECT_EQ(res.at("node:0").at("sizeInBytes"), 12);
  EXPECT_EQ(res.at("node:1").at("initialValuesDataType"), "DML_TENSOR_DATA_TYPE_UINT16");
  const json& ds = m.at("dispatchables");
  EXPECT_EQ(ds.at("node:0").at("type"), "DML_OPERATOR_ELEMENT_WISE_BIT_SHIFT_RIGHT");
  EXPECT_EQ(ds.at("node:0").at("desc").at("BTensor").at("Strides").get<U64s>(), (U64s{0}));
  EXPECT_EQ(ds.at("node:0").at("desc").at("BTensor").at("TotalTensorSizeInBytes"), 4);
  EXPECT_EQ(ds.at("node:1").at("type"), "DML_OPERATOR_ELEMENT_WISE_BIT_AND");
  const json& cmds = m.at("commands");
  ASSERT_EQ(cmds.size(), 3u);
  EXPECT_EQ(cmds[0].at("bindings"), json({{"ATensor", "a"}, {"BTensor", "const:0"}, {"OutputTensor", "node:0"}}));
  EXPECT_EQ(cmds[1].at("bindings"), json({{"ATensor", "node:0"}, {"BTensor", "const:1"}, {"OutputTensor", "node:1"}}));
  EXPECT_EQ(cmds[2].at("dimensions").get<U64s>(), (U64s{5}));
  EXPECT_EQ(m.at("dmlbits").at("shift_overflow"), "directml");
  EXPECT_EQ(m.at("dmlbits").at("inputs"), json({{"a", "f-a.npy"}}));

  // A signed type's literal keeps its sign: -16 as INT16.
  const ValidatedGraph s = make_graph("a ^ -16", {{DType::int16, Shape{5}}});
  EXPECT_EQ(graph_model(s, {"s-a.npy"}, "s-out.npy").at("resources").at("const:0").at("initialValues"),
            json::array({-16}));
}

TEST(DxDispatchGraphTest, SharedNodeAndFloatBits) {
  // (a & [1.5, 2.0, 0.5]) ^ ~(a & [1.5, 2.0, 0.5]), a float32 (2,3): the AND is one node read by
  // two; the list a FLOAT32 constant written as its bits (0x3fc00000, 0x40000000, 0x3f000000).
  const ValidatedGraph g =
      make_graph("(a & [1.5, 2.0, 0.5]) ^ ~(a & [1.5, 2.0, 0.5])", {{DType::float32, Shape{2, 3}}});
  const json m = graph_model(g, {"s-a.npy"}, "s-out.npy");
  const json& res = m.at("resources");
  EXPECT_EQ(res.size(), 5u);  // a, one constant, three nodes
  EXPECT_EQ(res.at("const:0"), json({{"initialValuesDataType", "DML_TENSOR_DATA_TYPE_UINT32"},
                                     {"initialValues", {1069547520u, 1073741824u, 1056964608u}},
                                     {"sizeInBytes", 12}}));
  const json& cmds = m.at("commands");
  ASSERT_EQ(cmds.size(), 4u);
  EXPECT_EQ(cmds[0].at("dispatchable"), "node:0");
  EXPECT_EQ(cmds[0].at("bindings"), json({{"ATensor", "a"}, {"BTensor", "const:0"}, {"OutputTensor", "node:0"}}));
  EXPECT_EQ(cmds[1].at("bindings"), json({{"InputTensor", "node:0"}, {"OutputTensor", "node:1"}}));
  EXPECT_EQ(cmds[2].at("bindings"), json({{"ATensor", "node:0"}, {"BTensor", "node:1"}, {"OutputTensor", "node:2"}}));
  EXPECT_EQ(cmds[3].at("resource"), "node:2");
  const json& ds = m.at("dispatchables");
  EXPECT_EQ(ds.at("node:0").at("desc").at("BTensor").at("Strides").get<U64s>(), (U64s{0, 1}));
  EXPECT_EQ(ds.at("node:0").at("desc").at("BTensor").at("DataType"), "DML_TENSOR_DATA_TYPE_FLOAT32");
  EXPECT_EQ(ds.at("node:1").at("type"), "DML_OPERATOR_ELEMENT_WISE_BIT_NOT");
  EXPECT_EQ(ds.at("node:2").at("type"), "DML_OPERATOR_ELEMENT_WISE_BIT_XOR");
  for (const char* n : {"node:0", "node:1", "node:2"}) {
    EXPECT_EQ(res.at(n).at("initialValuesDataType"), "DML_TENSOR_DATA_TYPE_FLOAT32") << n;
    EXPECT_EQ(res.at(n).at("sizeInBytes"), 24) << n;
  }
  EXPECT_EQ(m.at("dmlbits").at("output").at("dtype"), "float32");
}

TEST(DxDispatchGraphTest, RefusesEmptyResultsAndWrongCounts) {
  const ValidatedGraph empty = make_graph("a & ~b", {{DType::uint8, Shape{0}}, {DType::uint8, Shape{1}}});
  EXPECT_EQ(errc_of([&] { graph_model(empty, {"a", "b"}, "o"); }), Errc::unsupported);
  const ValidatedGraph g = make_graph("a & ~b", {{DType::uint8, Shape{2}}, {DType::uint8, Shape{2}}});
  EXPECT_EQ(errc_of([&] { graph_model(g, {"a"}, "o"); }), Errc::internal);
}

TEST(DxDispatchGraphTest, FileNamesOfOperands) {
  const auto n = dxdispatch_file_names("dir/g.json", std::vector<std::string>{"mask", "x_1"});
  EXPECT_EQ(n.model, "dir/g.json");
  EXPECT_EQ(n.inputs, (std::vector<std::string>{"dir/g-mask.npy", "dir/g-x_1.npy"}));
  EXPECT_EQ(n.output, "dir/g-out.npy");
  // The output's name, and names one file on Windows, are refused.
  EXPECT_EQ(errc_of([] { dxdispatch_file_names("g", std::vector<std::string>{"Out"}); }), Errc::usage);
  EXPECT_EQ(errc_of([] { dxdispatch_file_names("g", std::vector<std::string>{"a", "A"}); }), Errc::usage);
}

}  // namespace
}  // namespace dmlbits

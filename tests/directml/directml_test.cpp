// dmlbits against Microsoft's DirectML itself (Windows build, under wine with DirectML.dll; see
// scripts/directml-wine). One process for every case: a wine process costs about a second.
//
//   SelfCheck            DirectML's documented examples, first: a Mesa without descriptor
//                        indexing returns zeros with S_OK, and nothing else would be worth running
//   RefusalsAgree        for every operator x data type (x output type for popcount) x dimension
//                        count 0..9, DirectML's CreateOperator accepts exactly what validate()
//                        accepts, at the newest level (failures) and at 3_0 and 2_1 (reported)
//   ExplainJson          every operator built from the exact JSON `--explain-json` writes
//   KnownAnswers         the NumPy goldens of testdata/golden on --backend directml (shifts in
//                        --shift-overflow directml, once it exists), and hand-calculated shifts
//   Chunks               a tensor cut into many DirectML operators gives the one-operator result
//   Graphs               expressions (issue #46) as one DML_GRAPH_DESC compiled with
//                        IDMLDevice1::CompileGraph: byte for byte the graph run node by node on
//                        the reference backend (run_graph_nodes), over several dtypes; shared
//                        subexpressions, broadcast inputs and intermediates, constants
//
// Without DirectML the program exits 77 (CTest: skipped), unless DMLBITS_REQUIRE_DIRECTML=1,
// which makes a missing DirectML a failure.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cpu_reference.hpp"
#include "d3d12_backend.hpp"
#include "directml_backend.hpp"
#include "dmlbits/check.hpp"
#include "dml_desc.hpp"
#include "dmlbits/error.hpp"
#include "dmlbits/tensor.hpp"
#include "graph.hpp"
#include "validate.hpp"

namespace dmlbits {
namespace {

Shape shape_of_rank(std::size_t rank) {
  Shape s;
  for (std::size_t i = 0; i < rank; ++i) s.push_back(i % 2 ? 3 : 2);
  return s;
}

// The descriptor dmlbits would send if it accepted: packed tensors of `rank` dimensions, the
// DimensionCount as given (0 included, which dmlbits itself never sends).
DmlOperatorDesc raw_desc(const OpInfo& op, DType in, DType out, std::size_t rank, FeatureLevel level) {
  DmlOperatorDesc d;
  d.op = op.kind;
  d.level = level;
  std::vector<std::uint64_t> sizes, strides(rank, 1);
  for (std::size_t i = 0; i < rank; ++i) sizes.push_back(i % 2 ? 3 : 2);
  for (std::size_t i = rank; i-- > 1;) strides[i - 1] = strides[i] * sizes[i];
  const auto tensor = [&](DType t) {
    DmlTensorDesc x;
    x.dtype = t;
    x.sizes = sizes;
    x.strides = strides;
    x.total_bytes = calc_buffer_tensor_size(t, sizes, strides);
    return x;
  };
  for (int i = 0; i < op.arity; ++i) d.inputs.push_back(tensor(in));
  d.output = tensor(out);
  return d;
}

std::optional<std::string> dmlbits_refusal(const OpInfo& op, DType in, DType out, std::size_t rank, FeatureLevel level,
                                           std::optional<ValidatedOp>& accepted) {
  OpRequest r;
  r.op = op.kind;
  r.level = level;
  for (int i = 0; i < op.arity; ++i) r.inputs.push_back({in, shape_of_rank(rank)});
  if (op.kind == OpKind::popcount) r.out_dtype = out;
  try {
    accepted = validate(r);
    return std::nullopt;
  } catch (const Error& e) {
    return std::string(e.what());
  }
}

// ---- the self-check ---------------------------------------------------------------------------

Tensor tensor_of(DType dtype, Shape shape, std::initializer_list<std::uint64_t> bits) {
  Tensor t(dtype, shape);
  std::size_t i = 0;
  for (auto b : bits) t.set_bits_at(i++, b);
  return t;
}

Tensor run_directml(const ValidatedOp& v, const std::vector<const Tensor*>& inputs,
                    std::uint64_t max_buffer_bytes = 0) {
  DirectmlBackendOptions o;
  if (max_buffer_bytes) o.max_buffer_bytes = max_buffer_bytes;
  DirectmlBackend backend(o);
  Tensor out(v.output_dtype(), v.output_shape());
  ExecuteBuffers b;
  for (const Tensor* t : inputs) b.inputs.emplace_back(t->data(), t->byte_size());
  b.output = {out.data(), out.byte_size()};
  backend.run(v, b);
  return out;
}

std::vector<std::uint64_t> bits_of(const Tensor& t) {
  std::vector<std::uint64_t> out;
  for (std::size_t i = 0; i < t.element_count(); ++i) out.push_back(t.bits_at(i));
  return out;
}

ValidatedOp validated(OpKind op, DType dtype, std::vector<Shape> shapes, std::optional<DType> out = std::nullopt) {
  OpRequest r;
  r.op = op;
  for (auto& s : shapes) r.inputs.push_back({dtype, s});
  r.out_dtype = out;
  return validate(r);
}

// DirectML's documentation: BIT_COUNT UINT32 {2,2} [[0,123],[456,789]] -> [[0,6],[4,5]]; BIT_NOT
// UINT8 [[0,128],[42,255]] -> [[255,127],[213,0]]; and an XOR worked by hand.
TEST(SelfCheck, DocumentedExamples) {
  const Tensor count_in = tensor_of(DType::uint32, {2, 2}, {0, 123, 456, 789});
  EXPECT_EQ(bits_of(run_directml(validated(OpKind::popcount, DType::uint32, {{2, 2}}, DType::uint32), {&count_in})),
            (std::vector<std::uint64_t>{0, 6, 4, 5}))
      << "DirectML computed a wrong known answer: with zeros, the Vulkan driver lacks descriptor indexing (Mesa 25 "
         "lavapipe from bookworm-backports is needed, VKD3D_CONFIG=virtual_heaps)";
  const Tensor not_in = tensor_of(DType::uint8, {2, 2}, {0, 128, 42, 255});
  EXPECT_EQ(bits_of(run_directml(validated(OpKind::bit_not, DType::uint8, {{2, 2}}), {&not_in})),
            (std::vector<std::uint64_t>{255, 127, 213, 0}));
  const Tensor xb = tensor_of(DType::uint8, {2, 2}, {255, 128, 15, 240});
  EXPECT_EQ(bits_of(run_directml(validated(OpKind::bit_xor, DType::uint8, {{2, 2}, {2, 2}}), {&not_in, &xb})),
            (std::vector<std::uint64_t>{255, 0, 37, 15}));
}

// ---- refusals ---------------------------------------------------------------------------------

struct Disagreement {
  std::string what;  // "and INT8 -> INT8, level 3_0"
  std::size_t rank;
  std::string dmlbits, directml;
};

// One table per level: a row per operator x input type (x output type for popcount), a column
// per dimension count. "ok" both accept, "-" both refuse, "D" only DirectML accepts, "d" only
// dmlbits accepts.
std::vector<Disagreement> compare_refusals(FeatureLevel level, std::string& table, std::string& dim0) {
  std::vector<Disagreement> found;
  constexpr std::size_t kMaxRankTried = 9;
  table += fmt::format("DirectML CreateOperator vs dmlbits validate() on a device of minimum level {}\n",
                       level.short_name());
  table += fmt::format("{:<34}", "operator input -> output");
  for (std::size_t r = 0; r <= kMaxRankTried; ++r) table += fmt::format("{:>4}", r);
  table += "\n";
  for (const OpInfo& op : op_table()) {
    for (const DTypeInfo& in : dtype_table()) {
      std::vector<DType> outs;
      if (op.kind == OpKind::popcount)
        for (const DTypeInfo& o : dtype_table()) outs.push_back(o.dtype);
      else outs.push_back(in.dtype);
      for (DType out : outs) {
        table += fmt::format("{:<34}", fmt::format("{} {} -> {}", op.verb, in.dml_name, dtype_info(out).dml_name));
        for (std::size_t rank = 0; rank <= kMaxRankTried; ++rank) {
          std::optional<ValidatedOp> v;
          std::optional<std::string> ours;
          if (rank <= kMaxRank) ours = dmlbits_refusal(op, in.dtype, out, rank, level, v);
          else ours = "more dimensions than dmlbits' shapes hold";
          // What dmlbits would send (a 0-d tensor as 1 dimension), else the plain packed tensors.
          const DmlOperatorDesc desc =
              v ? v->desc() : raw_desc(op, in.dtype, out, std::max<std::size_t>(rank, 1), level);
          const auto theirs = directml_create_operator(desc, level);
          if (rank == 0) {
            // DimensionCount 0 itself, which dmlbits never sends: DirectML's opinion, reported.
            const auto zero = directml_create_operator(raw_desc(op, in.dtype, out, 0, level), level);
            dim0 += fmt::format("{} {} -> {}: DimensionCount 0 {}\n", op.verb, in.dml_name, dtype_info(out).dml_name,
                                zero ? "refused: " + *zero : "accepted");
          }
          const char* cell = !ours && !theirs ? "ok" : ours && theirs ? "-" : theirs ? "d" : "D";
          table += fmt::format("{:>4}", cell);
          if (ours.has_value() != theirs.has_value())
            found.push_back({fmt::format("{} {} -> {}, level {}", op.verb, in.dml_name, dtype_info(out).dml_name,
                                         level.short_name()),
                             rank, ours ? "refuses: " + *ours : "accepts", theirs ? "refuses: " + *theirs : "accepts"});
        }
        table += "\n";
      }
    }
  }
  return found;
}

// One line per operator and types and verdicts, with the dimension counts, and the first
// dimension count's messages.
std::string describe(const std::vector<Disagreement>& found) {
  std::string out;
  const auto same = [](const Disagreement& a, const Disagreement& b) {
    return a.what == b.what && (a.dmlbits == "accepts") == (b.dmlbits == "accepts");
  };
  for (std::size_t i = 0; i < found.size();) {
    std::size_t j = i;
    std::vector<std::size_t> ranks;
    while (j < found.size() && same(found[j], found[i])) ranks.push_back(found[j++].rank);
    out += fmt::format("  {}, dims {{{}}}: dmlbits {}; DirectML {}\n", found[i].what, fmt::join(ranks, ","),
                       found[i].dmlbits, found[i].directml);
    i = j;
  }
  return out;
}

TEST(RefusalsAgree, AtTheNewestLevel) {
  std::string table, dim0;
  const auto found = compare_refusals(newest_feature_level(), table, dim0);
  std::printf("%s\n%s\n", table.c_str(), dim0.c_str());
  EXPECT_TRUE(found.empty()) << found.size() << " disagreements:\n" << describe(found);
}

// DirectML's device takes the level as a minimum, not a limit: a DirectML newer than the level
// may accept more than the level documents. The disagreements are printed, not failures.
TEST(RefusalsAgree, AtOlderLevelsReported) {
  for (FeatureLevel level : {FeatureLevel(3, 0), FeatureLevel(2, 1)}) {
    std::string table, dim0;
    const auto found = compare_refusals(level, table, dim0);
    std::printf("%s\n%zu disagreements at %s:\n%s\n", table.c_str(), found.size(), level.short_name().c_str(),
                describe(found).c_str());
  }
}

// ---- --explain-json ----------------------------------------------------------------------------

DType dtype_from_enum_name(const std::string& name) {
  for (const DTypeInfo& d : dtype_table())
    if (d.dml_enum_name() == name) return d.dtype;
  throw Error(Errc::invalid_input, "unknown DataType " + name);
}

DmlTensorDesc tensor_from_json(const nlohmann::json& j) {
  EXPECT_EQ(j.at("Type"), "DML_TENSOR_TYPE_BUFFER");
  EXPECT_EQ(j.at("Flags"), "DML_TENSOR_FLAG_NONE");
  DmlTensorDesc t;
  t.dtype = dtype_from_enum_name(j.at("DataType"));
  t.sizes = j.at("Sizes").get<std::vector<std::uint64_t>>();
  t.strides = j.at("Strides").get<std::vector<std::uint64_t>>();
  EXPECT_EQ(j.at("DimensionCount").get<std::size_t>(), t.sizes.size());
  t.total_bytes = j.at("TotalTensorSizeInBytes");
  t.guaranteed_base_offset_alignment = j.at("GuaranteedBaseOffsetAlignment");
  return t;
}

// The operator from `--explain-json`'s text alone: its operator value, and its tensors by the
// DirectML desc's field names.
DmlOperatorDesc desc_from_explain_json(const std::string& text) {
  const nlohmann::json j = nlohmann::json::parse(text);
  DmlOperatorDesc d;
  const int value = j.at("operator_value");
  const OpInfo* op = nullptr;
  for (const OpInfo& o : op_table())
    if (o.dml_enum == value) op = &o;
  if (!op) throw Error(Errc::invalid_input, fmt::format("unknown operator_value {}", value));
  d.op = op->kind;
  for (FeatureLevel l : feature_levels())
    if (l.enum_name() == j.at("feature_level")) d.level = l;
  for (auto name : op->input_field_names()) d.inputs.push_back(tensor_from_json(j.at("tensors").at(std::string(name))));
  d.output = tensor_from_json(j.at("tensors").at("OutputTensor"));
  return d;
}

TEST(ExplainJson, EveryOperatorBuildsFromTheJson) {
  // Shapes as dmlbits broadcasts them: same shapes, a broadcast in each input and in both, a
  // scalar, a 0-d tensor, and 8 dimensions.
  const std::vector<std::vector<Shape>> binary = {{{3, 5}, {3, 5}},
                                                  {{2, 3, 4}, {3, 1}},
                                                  {{4, 1}, {2, 1, 6}},
                                                  {{4, 1}, {1, 5}},
                                                  {{7}, {}},
                                                  {{}, {}},
                                                  {{2, 1, 2, 1, 2, 1, 2, 3}, {1, 2, 1, 2, 1, 2, 1, 3}}};
  const std::vector<Shape> unary = {{3, 5}, {}, {1}, {2, 1, 2, 1, 2, 1, 2, 3}};
  int built = 0;
  for (const OpInfo& op : op_table()) {
    const OpTier* tier = op.tier_at(newest_feature_level());
    for (const DTypeInfo& in : dtype_table()) {
      if (!tier->inputs.contains(in.dtype)) continue;
      std::vector<std::optional<DType>> outs{std::nullopt};
      if (!tier->outputs.empty()) outs = {DType::uint8, DType::uint32};
      for (auto out : outs) {
        const auto cases = op.arity == 2 ? binary : [&] {
          std::vector<std::vector<Shape>> c;
          for (const auto& s : unary) c.push_back({s});
          return c;
        }();
        for (const auto& shapes : cases) {
          const ValidatedOp v = validated(op.kind, in.dtype, shapes, out);
          const std::string text = to_json(v.desc()).dump(2) + "\n";  // as cmd_op.cpp writes --explain-json
          const DmlOperatorDesc d = desc_from_explain_json(text);
          const auto refusal = directml_create_operator(d, d.level);
          EXPECT_FALSE(refusal.has_value()) << *refusal << "\n" << text;
          ++built;
        }
      }
    }
  }
  std::printf("%d operators built from --explain-json text\n", built);
}

// ---- known answers -----------------------------------------------------------------------------

TEST(KnownAnswers, NumPyGoldensOnDirectml) {
  CheckOptions options;
  options.backend = BackendKind::directml;
  options.jobs = 1;
  Manifest m = load_manifest(DMLBITS_TESTDATA_DIR "/golden/manifest.json", options);
  // The directml backend runs shifts in DirectML's own mode only: the goldens of --shift-overflow
  // zero and wrap are left out.
  std::erase_if(m.cases, [](const CheckCase& c) {
    return op_info(c.request->request().op).shift && c.request->shift_overflow() != ShiftOverflow::directml;
  });
  const CheckSummary s = run_manifest(m, options);
  std::map<std::string, int> by_op;
  for (const CaseResult& r : s.cases) {
    EXPECT_EQ(r.outcome, CaseResult::Outcome::pass) << r.name << ": " << case_detail(r) << "\n" << case_report(r);
    if (r.outcome == CaseResult::Outcome::pass) ++by_op[r.name.substr(0, r.name.find('_'))];
  }
  std::printf("%zu of %zu golden cases (shifts in the directml mode only) pass on directml:", s.passed(),
              s.cases.size());
  for (const auto& [op, n] : by_op) std::printf(" %s %d", op.c_str(), n);
  std::printf("\n");
  EXPECT_GT(s.cases.size(), 50u);
}

// Counts below the width, by hand: 0x81 << 1 = 0x02 (UINT8), 0xff << 4 = 0xf0, 1 << 7 = 0x80,
// 0x10 << 0 = 0x10; and to the right 0x81 >> 1 = 0x40, 0xff >> 4 = 0x0f, 1 >> 7 = 0, 0x10 >> 0.
TEST(KnownAnswers, ShiftsByHand) {
  const Tensor a = tensor_of(DType::uint8, {4}, {0x81, 0xff, 1, 0x10});
  const Tensor b = tensor_of(DType::uint8, {4}, {1, 4, 7, 0});
  for (OpKind k : {OpKind::shl, OpKind::shr}) {
    OpRequest r;
    r.op = k;
    r.inputs = {{DType::uint8, {4}}, {DType::uint8, {4}}};
    r.shift_overflow = ShiftOverflow::directml;
    const std::vector<std::uint64_t> expected = k == OpKind::shl ? std::vector<std::uint64_t>{0x02, 0xf0, 0x80, 0x10}
                                                                 : std::vector<std::uint64_t>{0x40, 0x0f, 0x00, 0x10};
    EXPECT_EQ(bits_of(run_directml(validate(r), {&a, &b})), expected);
  }
}

// ---- chunks ------------------------------------------------------------------------------------

// A tensor past one buffer becomes many DirectML operators (boxes); every element must come out
// as in one operator. Broadcast along both inputs, so that boxes read ranges of each.
TEST(Chunks, ManyOperatorsGiveTheOneOperatorResult) {
  const Shape as{5, 1, 1003}, bs{1, 7, 1003};
  Tensor a(DType::uint16, as), b(DType::uint16, bs);
  for (std::size_t i = 0; i < a.element_count(); ++i) a.set_bits_at(i, (i * 2654435761u) & 0xffff);
  for (std::size_t i = 0; i < b.element_count(); ++i) b.set_bits_at(i, (i * 40503u + 17) & 0xffff);
  const ValidatedOp v = validated(OpKind::bit_xor, DType::uint16, {as, bs});
  const Tensor whole = run_directml(v, {&a, &b});
  const Tensor chunked = run_directml(v, {&a, &b}, 4096);  // 2048 elements a box
  ASSERT_EQ(bits_of(whole), bits_of(chunked));
  // And both are the XOR of the broadcast operands, element by element.
  for (std::size_t i = 0; i < 5; ++i)
    for (std::size_t j = 0; j < 7; ++j)
      for (std::size_t k = 0; k < 1003; ++k)
        ASSERT_EQ(whole.bits_at((i * 7 + j) * 1003 + k), a.bits_at(i * 1003 + k) ^ b.bits_at(j * 1003 + k));
}

// ---- the adapter -----------------------------------------------------------------------------

// --adapter chooses DirectML's adapter by the d3d12 backend's rules (d3d12_device.hpp), and the
// two backends then share one device and queue: runs of either, interleaved in one process,
// must each give the known answer (NOT of a uint8 ramp, by hand: 255 - x).
TEST(Adapter, ChosenAsForD3d12AndItsQueueShared) {
  const GpuAdapter& chosen = chosen_adapter("");
  Tensor a(DType::uint8, Shape{4096});
  std::vector<std::uint64_t> expected;
  for (std::size_t i = 0; i < a.element_count(); ++i) {
    a.set_bits_at(i, i & 0xff);
    expected.push_back(255 - (i & 0xff));
  }
  const ValidatedOp v = validated(OpKind::bit_not, DType::uint8, {Shape{4096}});
  const auto run = [&](Backend& backend) {
    Tensor out(v.output_dtype(), v.output_shape());
    ExecuteBuffers b;
    b.inputs.emplace_back(a.data(), a.byte_size());
    b.output = {out.data(), out.byte_size()};
    backend.run(v, b);
    return bits_of(out);
  };
  DirectmlBackendOptions o;
  o.adapter = std::to_string(chosen.index);
  DirectmlBackend dml(o);
  EXPECT_NE(device_text(dml.device_description()).find(chosen.name), std::string::npos)
      << device_text(dml.device_description());
  D3d12Backend d3d12(D3d12BackendOptions{o.adapter});
  for (int round = 0; round < 2; ++round) {
    EXPECT_EQ(run(dml), expected) << "directml, round " << round;
    EXPECT_EQ(run(d3d12), expected) << "d3d12, round " << round;
  }
  o.adapter = "999";
  try {
    DirectmlBackend none(o);
    ADD_FAILURE() << "adapter 999 accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::usage) << e.what();
  }
}

// ---- graphs ----------------------------------------------------------------------------------

// An expression assembled node by node, as the parser would give it (shared nodes once), so that
// these tests do not lean on the parser (as tests/unit/graph_test.cpp builds them).
// The operands are named first, in the order given: their order is the graph's inputs' (an
// argument's evaluation order is unspecified).
class ExprBuilder {
 public:
  explicit ExprBuilder(std::string text, std::initializer_list<const char*> names = {"a", "b"}) {
    e_.text = std::move(text);
    for (const char* n : names) name(n);
  }
  std::int32_t name(const std::string& n) {
    for (std::size_t i = 0; i < e_.nodes.size(); ++i)
      if (e_.nodes[i].kind == expr::NodeKind::name && e_.nodes[i].name == n) return static_cast<std::int32_t>(i);
    e_.names.push_back(n);
    expr::Node node;
    node.kind = expr::NodeKind::name;
    node.name = n;
    return add(std::move(node));
  }
  std::int32_t lit(const std::string& text) {
    for (std::size_t i = 0; i < e_.nodes.size(); ++i)
      if (e_.nodes[i].kind == expr::NodeKind::literal && e_.nodes[i].literal == text)
        return static_cast<std::int32_t>(i);
    expr::Node node;
    node.kind = expr::NodeKind::literal;
    node.literal = text;
    return add(std::move(node));
  }
  std::int32_t op(OpKind k, std::int32_t a, std::int32_t b = -1, std::optional<DType> out = std::nullopt) {
    for (std::size_t i = 0; i < e_.nodes.size(); ++i) {
      const expr::Node& n = e_.nodes[i];
      if (n.kind == expr::NodeKind::op && n.op == k && n.args[0] == a && n.args[1] == b && n.out_dtype == out)
        return static_cast<std::int32_t>(i);
    }
    expr::Node node;
    node.kind = expr::NodeKind::op;
    node.op = k;
    node.args = {a, b};
    node.out_dtype = out;
    node.span = {0, static_cast<std::uint32_t>(e_.text.size())};
    return add(std::move(node));
  }
  std::shared_ptr<const expr::Expression> done(std::int32_t root) {
    e_.root = root;
    return std::make_shared<const expr::Expression>(e_);
  }

 private:
  std::int32_t add(expr::Node n) {
    e_.nodes.push_back(std::move(n));
    return static_cast<std::int32_t>(e_.nodes.size() - 1);
  }
  expr::Expression e_;
};

// The test's literals: a whole number (decimal or 0x) or a list of them, "[1, 2, 3]".
std::vector<std::uint64_t> literal_values(const std::string& text) {
  std::vector<std::uint64_t> out;
  std::size_t i = text.find_first_of("0123456789");
  while (i != std::string::npos) {
    std::size_t used = 0;
    out.push_back(std::stoull(text.substr(i), &used, 0));
    i = text.find_first_of("0123456789", i + used);
  }
  return out;
}

ValidatedGraph graph_of(std::shared_ptr<const expr::Expression> e, std::vector<OperandInfo> inputs) {
  GraphRequest r;
  const expr::Expression* raw = e.get();
  r.expression = std::move(e);
  r.inputs = std::move(inputs);
  r.shift_overflow = ShiftOverflow::directml;  // the directml backend's only shift mode
  r.literal_shape = [raw](std::int32_t node, DType) {
    const std::string& t = raw->nodes[static_cast<std::size_t>(node)].literal;
    return t.front() == '[' ? Shape{literal_values(t).size()} : Shape{};
  };
  return validate_graph(r);
}

struct GraphRun {
  std::vector<std::uint64_t> directml, reference;
  std::uint64_t compiled_graph_runs = 0;
};

// The graph on random inputs (seeded) and its constants from their literals: once through the
// directml backend's run_graph(), once node by node on the reference backend.
GraphRun run_both(const ValidatedGraph& g, DirectmlBackend& backend, std::uint64_t seed = 1) {
  std::mt19937_64 rng(seed);
  std::vector<Tensor> inputs, constants;
  for (const OperandInfo& in : g.inputs()) {
    inputs.emplace_back(in.dtype, in.shape);
    for (std::size_t i = 0; i < inputs.back().element_count(); ++i) inputs.back().set_bits_at(i, rng());
  }
  for (const GraphConstant& c : g.constants()) {
    constants.emplace_back(c.dtype, c.shape);
    const auto values = literal_values(g.expression().nodes[static_cast<std::size_t>(c.expr_node)].literal);
    for (std::size_t i = 0; i < values.size(); ++i) constants.back().set_bits_at(i, values[i]);
  }
  GraphBuffers b;
  for (const Tensor& t : inputs) b.inputs.emplace_back(t.data(), t.byte_size());
  for (const Tensor& t : constants) b.constants.emplace_back(t.data(), t.byte_size());
  Tensor dml_out(g.output_dtype(), g.output_shape()), ref_out(g.output_dtype(), g.output_shape());
  b.output = {dml_out.data(), dml_out.byte_size()};
  const std::uint64_t before = backend.compiled_graph_runs();
  backend.run_graph(g, b);
  CpuReferenceBackend reference;
  run_graph_nodes(g, reference, b.inputs, b.constants, {ref_out.data(), ref_out.byte_size()});
  return {bits_of(dml_out), bits_of(ref_out), backend.compiled_graph_runs() - before};
}

std::string dtype_name(DType d) { return std::string(dtype_info(d).dml_name); }

struct GraphCase {
  std::string text;
  // The expression at the dtype its operands are given (each operand's shape fixed by the case).
  std::function<std::shared_ptr<const expr::Expression>(DType)> build;
  std::vector<Shape> shapes;
  std::vector<DType> dtypes;
};

std::vector<GraphCase> graph_cases() {
  using K = OpKind;
  std::vector<GraphCase> cases;
  const auto add = [&](std::string text, std::vector<Shape> shapes, std::vector<DType> dtypes, auto body) {
    cases.push_back({text,
                     [text, body, n = shapes.size()](DType d) {
                       ExprBuilder b(text, {});
                       for (std::size_t i = 0; i < n; ++i) b.name(std::string(1, static_cast<char>('a' + i)));
                       return b.done(body(b, d));
                     },
                     std::move(shapes), std::move(dtypes)});
  };
  add("popcount(a ^ b)", {{6, 7}, {6, 7}}, {DType::uint32, DType::int64, DType::uint8},
      [](ExprBuilder& b, DType) { return b.op(K::popcount, b.op(K::bit_xor, b.name("a"), b.name("b"))); });
  add("popcount(a ^ b, out_dtype=uint32)", {{37}, {37}}, {DType::int16, DType::uint64}, [](ExprBuilder& b, DType) {
    return b.op(K::popcount, b.op(K::bit_xor, b.name("a"), b.name("b")), -1, DType::uint32);
  });
  add("a & ~b", {{5, 9}, {5, 9}}, {DType::uint8, DType::int16, DType::uint64},
      [](ExprBuilder& b, DType) { return b.op(K::bit_and, b.name("a"), b.op(K::bit_not, b.name("b"))); });
  add("(a >> 3) & 0xff", {{33}}, {DType::uint16, DType::uint32, DType::uint64},
      [](ExprBuilder& b, DType) { return b.op(K::bit_and, b.op(K::shr, b.name("a"), b.lit("3")), b.lit("0xff")); });
  // Shared subexpressions: a node's output read by two nodes.
  add("((a & b) | c) ^ ((a & b) << 2)", {{4, 6}, {4, 6}, {4, 6}}, {DType::uint8, DType::uint32},
      [](ExprBuilder& b, DType) {
        const auto ab = b.op(K::bit_and, b.name("a"), b.name("b"));
        return b.op(K::bit_xor, b.op(K::bit_or, ab, b.name("c")), b.op(K::shl, ab, b.lit("2")));
      });
  add("(a ^ b) | popcount(a ^ b, out_dtype=uint32)", {{19}, {19}}, {DType::uint32}, [](ExprBuilder& b, DType) {
    const auto x = b.op(K::bit_xor, b.name("a"), b.name("b"));
    return b.op(K::bit_or, x, b.op(K::popcount, x, -1, DType::uint32));
  });
  add("popcount(a) ^ popcount(~a)", {{3, 5}}, {DType::int32, DType::uint8}, [](ExprBuilder& b, DType) {
    return b.op(K::bit_xor, b.op(K::popcount, b.name("a"), -1, DType::uint8),
                b.op(K::popcount, b.op(K::bit_not, b.name("a")), -1, DType::uint8));
  });
  // One graph input read by both ports of a node.
  add("(a | a) ^ ~a", {{7}}, {DType::uint16, DType::int64}, [](ExprBuilder& b, DType) {
    return b.op(K::bit_xor, b.op(K::bit_or, b.name("a"), b.name("a")), b.op(K::bit_not, b.name("a")));
  });
  // Broadcast inputs: graph inputs read through stride-0 dimensions.
  add("(a ^ b) | ~b", {{4, 1, 5}, {3, 1}}, {DType::int8, DType::uint32}, [](ExprBuilder& b, DType) {
    return b.op(K::bit_or, b.op(K::bit_xor, b.name("a"), b.name("b")), b.op(K::bit_not, b.name("b")));
  });
  // Broadcast intermediates: a node's output read through stride-0 dimensions by the next one.
  add("~a ^ (b & c)", {{2, 1, 4}, {3, 4}, {3, 1}}, {DType::uint16, DType::int32}, [](ExprBuilder& b, DType) {
    return b.op(K::bit_xor, b.op(K::bit_not, b.name("a")), b.op(K::bit_and, b.name("b"), b.name("c")));
  });
  add("popcount(a, out_dtype=uint8) & b", {{3, 1}, {1, 4}}, {DType::uint8}, [](ExprBuilder& b, DType) {
    return b.op(K::bit_and, b.op(K::popcount, b.name("a"), -1, DType::uint8), b.name("b"));
  });
  // Constants: one element (broadcast), a list, one constant read by two nodes.
  add("(a | 0x41) & ~a", {{2, 8}}, {DType::int8, DType::uint16}, [](ExprBuilder& b, DType) {
    return b.op(K::bit_and, b.op(K::bit_or, b.name("a"), b.lit("0x41")), b.op(K::bit_not, b.name("a")));
  });
  add("a & [1, 2, 0x70] | 8", {{2, 3}}, {DType::uint8, DType::int64}, [](ExprBuilder& b, DType) {
    return b.op(K::bit_or, b.op(K::bit_and, b.name("a"), b.lit("[1, 2, 0x70]")), b.lit("8"));
  });
  add("(a ^ 5) & (b ^ 5)", {{10}, {10}}, {DType::uint32, DType::int16}, [](ExprBuilder& b, DType) {
    return b.op(K::bit_and, b.op(K::bit_xor, b.name("a"), b.lit("5")), b.op(K::bit_xor, b.name("b"), b.lit("5")));
  });
  return cases;
}

TEST(Graphs, OneCompiledGraphGivesTheNodeByNodeResult) {
  DirectmlBackend backend;
  int runs = 0;
  for (const GraphCase& c : graph_cases()) {
    for (DType d : c.dtypes) {
      std::vector<OperandInfo> inputs;
      for (const Shape& s : c.shapes) inputs.push_back({d, s});
      const ValidatedGraph g = graph_of(c.build(d), inputs);
      ASSERT_GE(g.nodes().size(), 2u) << c.text;
      const GraphRun r = run_both(g, backend, static_cast<std::uint64_t>(runs) + 1);
      EXPECT_EQ(r.compiled_graph_runs, 1u) << c.text << " on " << dtype_name(d) << ": not run as a compiled graph";
      EXPECT_EQ(r.directml, r.reference) << c.text << " on " << dtype_name(d) << " (" << g.nodes().size() << " nodes, "
                                         << g.constants().size() << " constants)";
      ++runs;
    }
  }
  std::printf("%d expressions ran as one compiled DirectML graph, each equal to the node-by-node result\n", runs);
}

// Known answers by hand: popcount(a ^ b) on UINT32 (0 ^ 0 = 0; 0xff ^ 0x0f = 0xf0: 4 bits;
// 0xf0f0f0f0 ^ 0x0f0f0f0f = 0xffffffff: 32; 1 ^ 0xffffffff = 0xfffffffe: 31), and a & ~b on
// UINT8 (0xff & ~0x0f = 0xf0, 0x3c & ~0x30 = 0x0c, 0x80 & ~0x80 = 0, 0x01 & ~0xfe = 0x01).
TEST(Graphs, KnownAnswersByHand) {
  DirectmlBackend backend;
  const auto run = [&](const ValidatedGraph& g, const Tensor& a, const Tensor& b) {
    Tensor out(g.output_dtype(), g.output_shape());
    GraphBuffers buffers;
    buffers.inputs = {{a.data(), a.byte_size()}, {b.data(), b.byte_size()}};
    buffers.output = {out.data(), out.byte_size()};
    backend.run_graph(g, buffers);
    return bits_of(out);
  };
  {
    ExprBuilder b("popcount(a ^ b, out_dtype=uint8)");
    const auto root = b.op(OpKind::popcount, b.op(OpKind::bit_xor, b.name("a"), b.name("b")), -1, DType::uint8);
    const ValidatedGraph g = graph_of(b.done(root), {{DType::uint32, Shape{4}}, {DType::uint32, Shape{4}}});
    const Tensor x = tensor_of(DType::uint32, {4}, {0, 0xff, 0xf0f0f0f0, 1});
    const Tensor y = tensor_of(DType::uint32, {4}, {0, 0x0f, 0x0f0f0f0f, 0xffffffff});
    EXPECT_EQ(run(g, x, y), (std::vector<std::uint64_t>{0, 4, 32, 31}));
  }
  {
    ExprBuilder b("a & ~b");
    const auto root = b.op(OpKind::bit_and, b.name("a"), b.op(OpKind::bit_not, b.name("b")));
    const ValidatedGraph g = graph_of(b.done(root), {{DType::uint8, Shape{4}}, {DType::uint8, Shape{4}}});
    const Tensor x = tensor_of(DType::uint8, {4}, {0xff, 0x3c, 0x80, 0x01});
    const Tensor y = tensor_of(DType::uint8, {4}, {0x0f, 0x30, 0x80, 0xfe});
    EXPECT_EQ(run(g, x, y), (std::vector<std::uint64_t>{0xf0, 0x0c, 0x00, 0x01}));
  }
  EXPECT_EQ(backend.compiled_graph_runs(), 2u);
}

// A graph of one shape is compiled once: a second run with other data compiles nothing.
TEST(Graphs, CompiledOncePerShape) {
  DirectmlBackend backend;
  ExprBuilder b("popcount(a & ~b, out_dtype=uint32) | (a >> 1)");
  const auto na = b.name("a");
  const auto root =
      b.op(OpKind::bit_or,
           b.op(OpKind::popcount, b.op(OpKind::bit_and, na, b.op(OpKind::bit_not, b.name("b"))), -1, DType::uint32),
           b.op(OpKind::shr, na, b.lit("1")));
  const ValidatedGraph g = graph_of(b.done(root), {{DType::uint32, Shape{2, 50}}, {DType::uint32, Shape{2, 50}}});
  const auto compile_seconds = [&] {
    for (const PhaseTime& p : backend.detail_phases())
      if (p.name == "compile") return p.seconds;
    return -1.0;
  };
  const GraphRun first = run_both(g, backend, 11);
  const double compiled = compile_seconds();
  const GraphRun second = run_both(g, backend, 12);
  EXPECT_EQ(first.directml, first.reference);
  EXPECT_EQ(second.directml, second.reference);
  EXPECT_NE(first.directml, second.directml);  // other data
  EXPECT_EQ(first.compiled_graph_runs + second.compiled_graph_runs, 2u);
  EXPECT_GT(compiled, 0.0);
  EXPECT_EQ(compile_seconds(), compiled) << "the second run compiled again";
}

// One node is one operator (the single-operator path, no CompileGraph); a graph with a tensor
// past the backend's largest buffer runs node by node, each node in chunks. Both give the
// reference's bytes.
TEST(Graphs, SingleNodesAndLargeGraphsRunAsOperators) {
  {
    DirectmlBackend backend;
    const ValidatedGraph g = single_node_graph(validated(OpKind::bit_xor, DType::uint16, {{4, 5}, {5}}));
    const GraphRun r = run_both(g, backend);
    EXPECT_EQ(r.compiled_graph_runs, 0u);
    EXPECT_EQ(r.directml, r.reference);
    ExprBuilder b("a ^ 7", {"a"});
    const ValidatedGraph c = graph_of(b.done(b.op(OpKind::bit_xor, b.name("a"), b.lit("7"))), {{DType::int8, {9}}});
    const GraphRun rc = run_both(c, backend);
    EXPECT_EQ(rc.compiled_graph_runs, 0u);
    EXPECT_EQ(rc.directml, rc.reference);
  }
  DirectmlBackendOptions o;
  o.max_buffer_bytes = 4096;
  DirectmlBackend small(o);
  ExprBuilder b("popcount(a ^ b, out_dtype=uint32) & 7");
  const auto root =
      b.op(OpKind::bit_and, b.op(OpKind::popcount, b.op(OpKind::bit_xor, b.name("a"), b.name("b")), -1, DType::uint32),
           b.lit("7"));
  const ValidatedGraph g = graph_of(b.done(root), {{DType::uint32, Shape{3000}}, {DType::uint32, Shape{3000}}});
  const GraphRun r = run_both(g, small);
  EXPECT_EQ(r.compiled_graph_runs, 0u);
  EXPECT_EQ(r.directml, r.reference);
}

// Reported, not checked: one compiled graph against its nodes run one by one on DirectML (each
// its own operator, dispatch and round trip), warm, on this machine's adapter.
TEST(Graphs, TimeAgainstNodeByNodeReported) {
  DirectmlBackend backend;
  ExprBuilder b("popcount(a ^ b, out_dtype=uint32) & (a | ~b)");
  const auto na = b.name("a"), nb = b.name("b");
  const auto root = b.op(OpKind::bit_and, b.op(OpKind::popcount, b.op(OpKind::bit_xor, na, nb), -1, DType::uint32),
                         b.op(OpKind::bit_or, na, b.op(OpKind::bit_not, nb)));
  const Shape shape{16384};  // 64 KiB of UINT32: one buffer at the suite's DMLBITS_DIRECTML_MAX_BUFFER_BYTES
  const ValidatedGraph g = graph_of(b.done(root), {{DType::uint32, shape}, {DType::uint32, shape}});
  Tensor a(DType::uint32, shape), c(DType::uint32, shape), out(DType::uint32, shape);
  for (std::size_t i = 0; i < a.element_count(); ++i) {
    a.set_bits_at(i, i * 2654435761u);
    c.set_bits_at(i, i * 40503u);
  }
  GraphBuffers buffers;
  buffers.inputs = {{a.data(), a.byte_size()}, {c.data(), c.byte_size()}};
  buffers.output = {out.data(), out.byte_size()};
  const auto best_of = [&](auto&& fn) {
    double best = 1e9;
    for (int i = 0; i < 6; ++i) {  // the first run compiles
      const auto t0 = std::chrono::steady_clock::now();
      fn();
      best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    return best;
  };
  const double graph = best_of([&] { backend.run_graph(g, buffers); });
  const double nodes = best_of([&] { run_graph_nodes(g, backend, buffers.inputs, {}, buffers.output); });
  std::printf("%s on 2 x %llu UINT32 (%zu nodes): one compiled graph %.2f ms, node by node %.2f ms (best of 5 warm)\n",
              g.expression().text.c_str(), static_cast<unsigned long long>(shape.element_count()), g.nodes().size(),
              graph * 1e3, nodes * 1e3);
}

}  // namespace
}  // namespace dmlbits

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  const dmlbits::DirectmlInfo info = dmlbits::probe_directml();
  const char* require = std::getenv("DMLBITS_REQUIRE_DIRECTML");
  const bool required = require && std::strcmp(require, "1") == 0;
  if (!info.found || !info.error.empty()) {
    std::fprintf(stderr, "DirectML unavailable: %s\n", info.error.c_str());
    if (required) {
      std::fprintf(stderr, "FAILED: DMLBITS_REQUIRE_DIRECTML=1 and DirectML cannot run\n");
      return 1;
    }
    std::printf("SKIPPED: the DirectML tests need DirectML (scripts/directml-wine sets it up)\n");
    return 77;
  }
  std::printf("DirectML %s (%s), highest feature level %s, on %s\n", info.version.c_str(), info.path.c_str(),
              info.max_feature_level ? info.max_feature_level->short_name().c_str() : "unknown", info.adapter.c_str());
  return RUN_ALL_TESTS();
}

// One operation in memory (run.hpp): run_operation's result for hand-worked operands, its
// phases in the order they ran, --repeat/--warmup/--in-place refusals (prepare_request's, before
// anything is read), errors that name the operand, and the helpers shared with stream_operation
// (make_operation_backend, validate_operation).
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "cpu_backend.hpp"
#include "dmlbits/error.hpp"
#include "run.hpp"
#include "unit_support.hpp"

namespace dmlbits {
namespace {

// A request whose result comes back in memory (RunResult::result).
OperationRequest literal_spec(OpKind op, std::vector<std::string> operands, DType dtype = DType::uint8) {
  OperationRequest s;
  s.op = op;
  s.operands.assign(operands.begin(), operands.end());
  s.dtype = dtype;
  s.output = OutputKind::memory;
  return s;
}

RunResult run_operation(const OperationRequest& s) { return dmlbits::run_operation(prepare_request(s)); }

// The result run_operation returned in memory.
const Tensor& result_of(const RunResult& r) {
  EXPECT_TRUE(r.result.has_value());
  return *r.result;
}

std::vector<std::uint64_t> bits_of(const Tensor& t) {
  std::vector<std::uint64_t> v;
  for (std::size_t i = 0; i < t.element_count(); ++i) v.push_back(t.bits_at(i));
  return v;
}

std::vector<std::string> phase_names(const RunTiming& t) {
  std::vector<std::string> v;
  for (const auto& p : t.phases) v.push_back(p.name);
  return v;
}

using test::error_of;

TEST(RunOperationTest, ComputesHandWorkedResults) {
  // 0xF0 & 0x3C = 0x30, 0x0F & 0x3C = 0x0C, 0xFF & 0x3C = 0x3C.
  RunResult r = run_operation(literal_spec(OpKind::bit_and, {"[240, 15, 255]", "0x3c"}));
  EXPECT_EQ(result_of(r).dtype(), DType::uint8);
  EXPECT_EQ(bits_of(result_of(r)), (std::vector<std::uint64_t>{0x30, 0x0C, 0x3C}));
  // 1 << 31 = 0x80000000; in the default (directml) mode a uint32 count of 32 shifts by 32 & 31 = 0.
  r = run_operation(literal_spec(OpKind::shl, {"[1, 1, 3]", "[31, 32, 1]"}, DType::uint32));
  EXPECT_EQ(bits_of(result_of(r)), (std::vector<std::uint64_t>{0x80000000u, 1, 6}));
  // popcount(0xF0) = 4, popcount(0) = 0, popcount(0xFFFF) = 16; the output defaults to uint8.
  r = run_operation(literal_spec(OpKind::popcount, {"[240, 0, 65535]"}, DType::uint16));
  EXPECT_EQ(result_of(r).dtype(), DType::uint8);
  EXPECT_EQ(bits_of(result_of(r)), (std::vector<std::uint64_t>{4, 0, 16}));
}

TEST(RunOperationTest, WrapModeTakesTheShiftCountModuloTheWidth) {
  OperationRequest s = literal_spec(OpKind::shl, {"[1, 1]", "[9, 8]"});
  s.shift_overflow = ShiftOverflow::wrap;
  // uint8: 9 % 8 = 1 (1 << 1 = 2), 8 % 8 = 0 (1).
  EXPECT_EQ(bits_of(result_of(run_operation(s))), (std::vector<std::uint64_t>{2, 1}));
  s.shift_overflow = ShiftOverflow::zero;
  EXPECT_EQ(bits_of(result_of(run_operation(s))), (std::vector<std::uint64_t>{0, 0}));
}

TEST(RunOperationTest, TheDefaultModeIsWhatDirectmlComputed) {
  // DirectML 1.15.4's results (man page, --shift-overflow): the uint8 element as a 32-bit lane
  // shifted by count & 31: 0xF4 << 32 = 0xF4, 0xF5 << 35 = 0xF5 << 3 = 0x7A8 -> 0xA8, 0xF7 << 41
  // = 0xF7 << 9 -> 0x00.
  OperationRequest s = literal_spec(OpKind::shl, {"[244, 245, 247]", "[32, 35, 41]"});
  EXPECT_EQ(bits_of(result_of(run_operation(s))), (std::vector<std::uint64_t>{0xF4, 0xA8, 0x00}));
  s.shift_overflow = ShiftOverflow::directml;
  EXPECT_EQ(bits_of(result_of(run_operation(s))), (std::vector<std::uint64_t>{0xF4, 0xA8, 0x00}));
  // uint64: 0xD69A5E00F2F2F2F2 >> 64 shifts by 32.
  s = literal_spec(OpKind::shr, {"0xd69a5e00f2f2f2f2", "64"}, DType::uint64);
  EXPECT_EQ(bits_of(result_of(run_operation(s))), (std::vector<std::uint64_t>{0xD69A5E00u}));
}

TEST(RunOperationTest, EveryBackendNameGivesTheSameBits) {
  for (const std::string backend : {"cpu", "cpu-reference", "auto"}) {
    OperationRequest s = literal_spec(OpKind::bit_xor, {"[170, 85]", "255"});
    s.backend = *parse_backend(backend);
    const RunResult r = run_operation(s);
    EXPECT_EQ(bits_of(result_of(r)), (std::vector<std::uint64_t>{85, 170})) << backend;
    EXPECT_EQ(r.timing.backend, backend == "cpu-reference" ? "cpu-reference" : "cpu") << backend;
    // auto says why it chose; a backend named on the command line has no reason to give.
    EXPECT_EQ(selection_text(r.timing.selection).rfind("auto chose cpu: ", 0) == 0, backend == "auto")
        << selection_text(r.timing.selection);
  }
}

TEST(RunOperationTest, PhasesComeInTheOrderTheyRan) {
  OperationRequest s = literal_spec(OpKind::bit_or, {"[1, 2, 4, 8]", "[16, 32, 64, 128]"});
  s.warmup = 2;
  s.repeat = 3;
  const RunResult r = run_operation(s);
  EXPECT_EQ(phase_names(r.timing),
            (std::vector<std::string>{"read", "backend", "validate", "allocate", "warmup", "execute", "write"}));
  EXPECT_EQ(r.execute_samples.size(), 3u);
  EXPECT_EQ(r.timing.execute_runs, 3);
  EXPECT_EQ(compute_stats(r.execute_samples).count, 3u);
  // One execution reads two 4-byte inputs and writes a 4-byte output.
  EXPECT_EQ(r.timing.execute_bytes, 12u);
  EXPECT_EQ(bits_of(result_of(r)), (std::vector<std::uint64_t>{17, 34, 68, 136}));

  const RunResult once = run_operation(literal_spec(OpKind::bit_not, {"[0]"}));
  EXPECT_EQ(phase_names(once.timing),
            (std::vector<std::string>{"read", "backend", "validate", "allocate", "execute", "write"}));
  EXPECT_EQ(bits_of(result_of(once)), (std::vector<std::uint64_t>{255}));
}

TEST(RunOperationTest, ExplainOnlyStopsAfterValidation) {
  OperationRequest s = literal_spec(OpKind::bit_and, {"[1, 2, 3]", "1"});
  s.explain_only = true;
  const RunResult r = run_operation(s);
  ASSERT_TRUE(r.op);
  EXPECT_EQ(r.op.summary().output_shape, Shape({3}));
  EXPECT_EQ(phase_names(r.timing), (std::vector<std::string>{"read", "backend", "validate"}));
  EXPECT_TRUE(r.execute_samples.empty());
  EXPECT_FALSE(r.result.has_value());
}

// A writable uint8 operand over `bytes`, as the Python module lends a NumPy array.
BorrowedTensor borrowed_uint8(std::vector<std::uint8_t>& bytes) {
  BorrowedTensor t;
  t.dtype = DType::uint8;
  t.shape = Shape{bytes.size()};
  t.data = reinterpret_cast<const std::byte*>(bytes.data());
  t.writable = reinterpret_cast<std::byte*>(bytes.data());
  return t;
}

TEST(RunOperationTest, InPlaceWritesOverInputA) {
  std::vector<std::uint8_t> a{0, 15, 255};
  OperationRequest s;
  s.op = OpKind::bit_not;
  s.operands = {borrowed_uint8(a)};
  s.in_place = true;
  const RunResult r = run_operation(s);
  EXPECT_FALSE(r.result.has_value());  // the result is A's memory
  EXPECT_EQ(a, (std::vector<std::uint8_t>{255, 240, 0}));
  // Output and input A are one buffer: 3 bytes read, 3 written.
  EXPECT_EQ(r.timing.execute_bytes, 6u);
}

TEST(RunOperationTest, RefusesRepeatWarmupAndInPlaceMisuse) {
  OperationRequest s = literal_spec(OpKind::bit_not, {"[1]"});
  s.repeat = 0;
  EXPECT_EQ(error_of([&] { run_operation(s); }).code(), Errc::usage);
  s.repeat = 1;
  s.warmup = -1;
  EXPECT_EQ(error_of([&] { run_operation(s); }).code(), Errc::usage);
  std::vector<std::uint8_t> a{1};
  s.operands = {borrowed_uint8(a)};
  s.output = OutputKind::automatic;
  s.warmup = 1;
  s.in_place = true;
  const Error e = error_of([&] { run_operation(s); });
  EXPECT_EQ(e.code(), Errc::usage);
  EXPECT_NE(std::string(e.what()).find("in_place runs once"), std::string::npos) << e.what();
  EXPECT_EQ(a, std::vector<std::uint8_t>{1});  // refused before anything ran
  // popcount cannot run in place (DirectML's docs): refused before anything is read.
  OperationRequest p;
  p.op = OpKind::popcount;
  p.operands = {borrowed_uint8(a)};
  p.in_place = true;
  const Error popcount = error_of([&] { run_operation(p); });
  EXPECT_EQ(popcount.code(), Errc::usage);
  EXPECT_NE(
      std::string(popcount.what()).find("is not offered: DirectML does not let BIT_COUNT's output alias its input"),
      std::string::npos)
      << popcount.what();
}

TEST(RunOperationTest, BackendMistakesComeBeforeReading) {
  test::TempDir dir("run-test");
  OperationRequest s = literal_spec(OpKind::bit_not, {dir.file("missing.npy")});
  s.backend = test::kind("cpu-reference");
  s.isa = "scalar";
  const Error e = error_of([&] { run_operation(s); });
  EXPECT_EQ(e.code(), Errc::usage);
  EXPECT_NE(std::string(e.what()).find("no choice of instruction set"), std::string::npos) << e.what();
  // The same spec with a valid backend reaches the file, and names it.
  s.backend = test::kind("cpu");
  s.isa.clear();
  const Error missing = error_of([&] { run_operation(s); });
  EXPECT_EQ(missing.code(), Errc::io);
  EXPECT_EQ(std::string(missing.what()).rfind("reading '" + dir.file("missing.npy") + "': ", 0), 0u) << missing.what();
}

TEST(RunOperationTest, InvalidOperationsNameTheOperator) {
  // xor of int32 needs feature level 4_1.
  OperationRequest s = literal_spec(OpKind::bit_xor, {"[1]", "[2]"}, DType::int32);
  s.level = FeatureLevel(3, 0);
  const Error e = error_of([&] { run_operation(s); });
  EXPECT_EQ(e.code(), Errc::invalid_input);
  EXPECT_EQ(std::string(e.what()).rfind("xor: ", 0), 0u) << e.what();
  // Shapes that do not broadcast.
  const Error shapes = error_of([&] { run_operation(literal_spec(OpKind::bit_and, {"[1, 2]", "[1, 2, 3]"})); });
  EXPECT_EQ(shapes.code(), Errc::invalid_input);
}

TEST(MakeBackendTest, TakesTheRequestsInstructionSetAndThreads) {
  OperationRequest s = literal_spec(OpKind::bit_not, {"1"});
  s.backend = BackendKind::cpu;
  s.isa = "scalar";
  s.threads = 3;
  const auto backend = make_backend(prepare_request(s));
  const auto* cpu = dynamic_cast<const CpuBackend*>(backend.get());
  ASSERT_NE(cpu, nullptr);
  EXPECT_EQ(cpu->isa(), Isa::scalar);
  EXPECT_EQ(cpu->threads(), 3u);
}

// A backend that refuses everything, for validate_operation's refusal.
class RefusingBackend final : public Backend {
 public:
  std::string_view name() const override { return "refusing"; }
  DeviceDescription device_description() const override { return {}; }
  std::optional<std::string> unsupported_reason(const ValidatedOp&) const override { return "it never runs"; }
  void run(const ValidatedOp&, const ExecuteBuffers&) override { ADD_FAILURE() << "ran"; }
};

TEST(ValidateOperationTest, ABackendsRefusalIsUnsupported) {
  const PreparedRequest s = prepare_request(literal_spec(OpKind::bit_or, {"[1, 2]", "3"}));
  const auto inputs = load_operands(s.request().operands, s.request().dtype);
  RefusingBackend backend;
  const Error e = error_of([&] { validate_operation(s, inputs, backend); });
  EXPECT_EQ(e.code(), Errc::unsupported);
  EXPECT_STREQ(e.what(), "or: the refusing backend cannot run this: it never runs");

  const auto cpu = make_operation_backend(s, inputs);
  const ValidatedOp v = validate_operation(s, inputs, *cpu);
  EXPECT_EQ(v.op().kind, OpKind::bit_or);
  EXPECT_EQ(v.output_shape(), Shape({2}));
  EXPECT_EQ(v.output_dtype(), DType::uint8);
}

TEST(ValidateOperationTest, TheSpecsOptionsReachTheValidatedOp) {
  OperationRequest r = literal_spec(OpKind::popcount, {"[7]"}, DType::uint16);
  r.out_dtype = DType::uint32;
  r.level = FeatureLevel(4, 1);
  const PreparedRequest s = prepare_request(r);
  const auto inputs = load_operands(r.operands, r.dtype);
  const auto backend = make_operation_backend(s, inputs);
  const ValidatedOp v = validate_operation(s, inputs, *backend);
  EXPECT_EQ(v.output_dtype(), DType::uint32);
  EXPECT_EQ(v.input_dtype(), DType::uint16);
  EXPECT_EQ(v.level(), FeatureLevel(4, 1));
  OperationRequest shift = literal_spec(OpKind::shr, {"[7]", "1"});
  shift.shift_overflow = ShiftOverflow::wrap;
  const auto shift_inputs = load_operands(shift.operands, shift.dtype);
  EXPECT_EQ(validate_operation(prepare_request(shift), shift_inputs, *backend).shift_overflow(), ShiftOverflow::wrap);
}

TEST(MakeOperationBackendTest, AutoSizesTheOutputFromTheOperands) {
  // 1024 uint16 elements broadcast with one: a 2048-byte output, far below the GPU threshold.
  std::string a = "[0";
  for (int i = 1; i < 1024; ++i) a += ", " + std::to_string(i);
  a += "]";
  OperationRequest s = literal_spec(OpKind::bit_and, {a, "1"}, DType::uint16);
  s.backend = test::kind("auto");
  const auto inputs = load_operands(s.operands, s.dtype);
  const auto backend = make_operation_backend(prepare_request(s), inputs);
  EXPECT_EQ(backend->name(), "cpu");
  EXPECT_NE(selection_text(backend->selection()).find("the output (2 KiB) is below 16 MiB"), std::string::npos)
      << selection_text(backend->selection());
}

}  // namespace
}  // namespace dmlbits

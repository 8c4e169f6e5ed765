// The backend interface (backend.hpp) and factory (make_backend.hpp): the names --backend accepts, the
// refusals of check_backend_choice (each a usage error, before anything is created), what
// make_backend builds for the CPU names and for a small `auto` run, the process-wide default
// adapter, and output_size_hint's broadcast arithmetic.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "backend.hpp"
#include "make_backend.hpp"
#include "cpu_backend.hpp"
#include "dmlbits/error.hpp"
#include "run.hpp"
#include "validate.hpp"
#include "unit_support.hpp"

namespace dmlbits {
namespace {

// The backend's choices as a request gives them.
struct Choices {
  std::string isa;
  std::string adapter;
  std::optional<unsigned> threads;
};

std::optional<Error> refusal(std::string_view name, const Choices& c) {
  try {
    check_backend_choice(test::kind(name), c.isa, c.adapter, c.threads);
  } catch (const Error& e) {
    return e;
  }
  return std::nullopt;
}

// Refused as an option (OptionError), whose what() is in the library's words: the keywords
// (each face's own: option_error_test.cpp).
void expect_usage(std::string_view name, const Choices& c, const std::string& message) {
  try {
    check_backend_choice(test::kind(name), c.isa, c.adapter, c.threads);
    ADD_FAILURE() << name << " was accepted";
  } catch (const OptionError& e) {
    EXPECT_EQ(e.code(), Errc::usage);
    EXPECT_EQ(std::string(e.what()), message);
  }
}

Choices with_isa(std::string isa) { return {std::move(isa), {}, std::nullopt}; }
Choices with_threads(unsigned threads) { return {{}, {}, threads}; }
Choices with_adapter(std::string adapter) { return {{}, std::move(adapter), std::nullopt}; }

TEST(BackendNamesTest, InHelpOrder) {
  std::vector<std::string_view> names;
  for (BackendKind k : backend_kinds()) names.push_back(backend_name(k));
  EXPECT_EQ(names, (std::vector<std::string_view>{"auto", "cpu", "d3d12", "directml", "cpu-reference"}));
  for (BackendKind k : backend_kinds()) EXPECT_EQ(parse_backend(backend_name(k)), k);
  EXPECT_EQ(parse_backend("gpu"), std::nullopt);
  EXPECT_EQ(parse_backend("CPU"), std::nullopt);  // names are exact
}

TEST(CheckBackendOptionsTest, AcceptsWhatEachBackendTakes) {
  for (const char* name : {"auto", "cpu", "d3d12", "directml", "cpu-reference"})
    EXPECT_FALSE(refusal(name, {})) << name;
  EXPECT_FALSE(refusal("cpu", with_isa("scalar")));
  EXPECT_FALSE(refusal("auto", with_isa("scalar")));
  EXPECT_FALSE(refusal("cpu", with_threads(1)));
  EXPECT_FALSE(refusal("cpu-reference", with_threads(kMaxThreads)));
  EXPECT_FALSE(refusal("d3d12", with_adapter("0")));
  EXPECT_FALSE(refusal("auto", with_adapter("0")));
}

TEST(CheckBackendOptionsTest, RefusesWithAUsageError) {
  expect_usage("cpu-reference", with_isa("scalar"),
               "the cpu-reference backend has no choice of instruction set (asked for 'scalar')");
  expect_usage("d3d12", with_isa("avx2"), "the d3d12 backend has no choice of instruction set (asked for 'avx2')");
  expect_usage("cpu", with_isa("neon"), "isa: unknown instruction set 'neon' (known: scalar, avx2, avx512)");
  expect_usage("d3d12", with_threads(2), "the d3d12 backend has no choice of CPU threads (threads)");
  expect_usage("cpu", with_threads(kMaxThreads + 1), "threads: 257 is more than 256");
  expect_usage("cpu", with_adapter("0"), "adapter applies to the d3d12, directml and auto backends, not cpu");
  expect_usage("cpu-reference", with_adapter("x"),
               "adapter applies to the d3d12, directml and auto backends, not cpu-reference");
  expect_usage("directml", with_isa("avx2"),
               "the directml backend has no choice of instruction set (asked for 'avx2')");
  expect_usage("directml", with_threads(2), "the directml backend has no choice of CPU threads (threads)");
  EXPECT_FALSE(refusal("directml", with_adapter("0")));  // it runs on the d3d12 backend's device
}

// --adapter travels in the operation's request (there is no process-wide default adapter):
// prepare_request refuses it for the CPU backends, and a named adapter reaches auto, which then
// looks at adapters whatever the output's size.
TEST(CheckBackendOptionsTest, TheOperationsAdapterReachesItsBackend) {
  const Error cpu = test::error_of([] { (void)test::backend_request("cpu", "", "1"); });
  EXPECT_EQ(cpu.code(), Errc::usage);
  EXPECT_EQ(std::string(cpu.what()), "adapter applies to the d3d12, directml and auto backends, not cpu");
  EXPECT_NO_THROW((void)test::backend_request("d3d12", "", "1"));
  const auto named = make_backend(test::backend_request("auto", "", "0"), test::operands_of_bytes(1));
  EXPECT_NE(named->selection().rule, SelectionRule::small_output) << selection_text(named->selection());
  EXPECT_EQ(make_backend(test::backend_request("auto"), test::operands_of_bytes(1))->selection().rule,
            SelectionRule::small_output);
}

TEST(MakeBackendTest, BuildsTheNamedCpuBackends) {
  const auto cpu = make_backend(test::backend_request("cpu", "", {}, 1));
  EXPECT_EQ(cpu->name(), "cpu");
  EXPECT_EQ(selection_text(cpu->selection()), "");  // named, not chosen
  EXPECT_TRUE(cpu->detail_phases().empty());
  const auto* as_cpu = dynamic_cast<const CpuBackend*>(cpu.get());
  ASSERT_NE(as_cpu, nullptr);
  EXPECT_EQ(as_cpu->threads(), 1u);
  const auto scalar = make_backend(test::backend_request("cpu", "scalar"));
  ASSERT_NE(dynamic_cast<const CpuBackend*>(scalar.get()), nullptr);
  EXPECT_EQ(dynamic_cast<const CpuBackend*>(scalar.get())->isa(), Isa::scalar);
  EXPECT_EQ(make_backend(test::backend_request("cpu-reference"))->name(), "cpu-reference");
}

TEST(MakeBackendTest, AutoKeepsASmallRunOnTheCpuAndSaysWhy) {
  const auto b = make_backend(test::backend_request("auto"),
                              test::operands_of_bytes(3 << 20));  // 3 MiB, below kAutoGpuMinBytes (16 MiB)
  EXPECT_EQ(b->name(), "cpu");
  EXPECT_EQ(selection_text(b->selection()),
            "auto chose cpu: the output (3 MiB) is below 16 MiB, where the CPU beats starting a GPU device");
  EXPECT_EQ(device_text(b->device_description()).rfind("CPU, ", 0), 0u) << device_text(b->device_description());
  // An unknown size counts as small.
  EXPECT_EQ(selection_text(make_backend(test::backend_request("auto"))->selection()),
            "auto chose cpu: the output (0 bytes) is below 16 MiB, where the CPU beats starting a GPU device");
}

// -v under auto names the threads a run uses as the chosen backend does (a small output is
// computed on one of two threads): auto passes the question on instead of answering it with the
// backend's general description.
TEST(MakeBackendTest, AutoDescribesARunAsTheBackendItChose) {
  OpRequest r;
  r.op = OpKind::bit_not;
  r.inputs.push_back({DType::uint32, Shape{16}});
  const ValidatedOp small = validate(r);
  const auto chosen = make_backend(test::backend_request("auto", "", {}, 2));
  const auto cpu = make_backend(test::backend_request("cpu", "", {}, 2));
  ASSERT_EQ(chosen->name(), "cpu");
  EXPECT_EQ(device_text(chosen->device_description_for(small, false)),
            device_text(cpu->device_description_for(small, false)));
  EXPECT_NE(device_text(chosen->device_description_for(small, false)).find("1 of 2 threads"), std::string::npos)
      << device_text(chosen->device_description_for(small, false));
  EXPECT_EQ(device_text(chosen->device_description_for(small, true)),
            device_text(cpu->device_description_for(small, true)));
}

TEST(OutputSizeHintTest, BroadcastElementsTimesTheWidestInput) {
  EXPECT_EQ(output_size_hint({}), 0u);
  // (3, 1) uint8 with (4,) uint32: (3, 4), 12 elements of 4 bytes.
  EXPECT_EQ(output_size_hint({{DType::uint8, Shape{3, 1}}, {DType::uint32, Shape{4}}}), 48u);
  // A scalar with (2, 5) uint16: 10 elements of 2 bytes.
  EXPECT_EQ(output_size_hint({{DType::uint16, Shape{}}, {DType::uint16, Shape{2, 5}}}), 20u);
  EXPECT_EQ(output_size_hint({{DType::uint64, Shape{7}}}), 56u);
  // (2,) and (3,) do not broadcast.
  EXPECT_EQ(output_size_hint({{DType::uint8, Shape{2}}, {DType::uint8, Shape{3}}}), 0u);
  // A zero-size dimension makes no bytes.
  EXPECT_EQ(output_size_hint({{DType::uint32, Shape{0, 9}}}), 0u);
}

TEST(InputSizeHintTest, EachOperandsOwnBytes) {
  EXPECT_EQ(input_size_hint({}), 0u);
  // (3, 1) uint8 and (4,) uint32: 3 bytes and 16, whatever they broadcast to.
  EXPECT_EQ(input_size_hint({{DType::uint8, Shape{3, 1}}, {DType::uint32, Shape{4}}}), 19u);
  EXPECT_EQ(input_size_hint({{DType::uint16, Shape{}}, {DType::uint16, Shape{2, 5}}}), 22u);
  // 2^31 * 2^31 elements of 8 bytes twice: saturated.
  const Shape huge{std::uint64_t{1} << 31, std::uint64_t{1} << 31};
  EXPECT_EQ(input_size_hint({{DType::uint64, huge}, {DType::uint64, huge}}), std::numeric_limits<std::uint64_t>::max());
}

TEST(OutputSizeHintTest, SaturatesInsteadOfOverflowing) {
  // 2^31 * 2^31 = 2^62 elements of 8 bytes is 2^65 bytes: more than 64 bits hold.
  const std::uint64_t big = std::uint64_t{1} << 31;
  EXPECT_EQ(output_size_hint({{DType::uint64, Shape{big, big}}}), std::numeric_limits<std::uint64_t>::max());
  // 2^62 one-byte elements still fit.
  EXPECT_EQ(output_size_hint({{DType::uint8, Shape{big, big}}}), std::uint64_t{1} << 62);
}

}  // namespace
}  // namespace dmlbits

// Option words (request.hpp, error.hpp): each parser takes the names of its table and
// refuses anything else as an OptionError that says which option, which rule and which value;
// option_error_text words it for a face's spelling. The spellings here are the command line's
// and Python's as those faces define them (app/option_errors.cpp, the module's translator); the
// expected sentences are written by hand (the messages tests/cli and tests/python pin).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "dmlbits/request.hpp"
#include "unit_support.hpp"

namespace dmlbits {
namespace {

std::string flag(OptionKey key) {
  if (key == OptionKey::output) return "-o";
  std::string f = "--" + std::string(option_keyword(key));
  std::replace(f.begin(), f.end(), '_', '-');
  return f;
}
std::string keyword(OptionKey key) {
  return key == OptionKey::in_place ? std::string("out=x (in place)") : std::string(option_keyword(key));
}
std::string keyword_arg(OptionKey key) { return key == OptionKey::in_place ? keyword(key) : keyword(key) + "="; }

const OptionSpelling kCli{&flag, &flag, '\''};
const OptionSpelling kPython{&keyword, &keyword_arg, '\''};

TEST(OptionParsers, TakeTheirTablesNames) {
  for (BackendKind k : backend_kinds()) EXPECT_EQ(parse_backend_option(backend_name(k)), k);
  for (const DTypeInfo& t : dtype_table()) {
    EXPECT_EQ(parse_dtype_option(t.numpy_name), t.dtype);
    EXPECT_EQ(parse_dtype_option(t.dml_name, OptionKey::out_dtype), t.dtype);
  }
  for (FeatureLevel l : feature_levels()) EXPECT_EQ(parse_feature_level_option(l.short_name()), l);
  EXPECT_EQ(parse_feature_level_option("4.1"), FeatureLevel(4, 1));
  for (ShiftOverflow m : shift_overflow_modes()) EXPECT_EQ(parse_shift_overflow_option(shift_overflow_name(m)), m);
  for (std::string_view isa : isa_names()) EXPECT_EQ(parse_isa_option(isa), isa);
  EXPECT_EQ(parse_threads_option("1"), 1u);
  EXPECT_EQ(parse_threads_option("256"), 256u);
  EXPECT_EQ(check_threads_option(256), 256u);
  EXPECT_NO_THROW(check_repeat_option(1, 0));
  EXPECT_NO_THROW(check_adapter_option("0"));
}

TEST(OptionParsers, RefuseWithWhichOptionRuleAndValue) {
  const auto expect = [](const OptionError& e, OptionKey key, OptionRule rule, const std::string& value) {
    EXPECT_EQ(e.code(), Errc::usage);
    EXPECT_EQ(e.key(), key);
    EXPECT_EQ(e.rule(), rule);
    EXPECT_EQ(e.value(), value);
  };
  OptionError e = test::error_of<OptionError>([] { parse_backend_option("gpu"); });
  expect(e, OptionKey::backend, OptionRule::unknown_name, "gpu");
  EXPECT_EQ(e.choices(), (std::vector<std::string>{"auto", "cpu", "d3d12", "directml", "cpu-reference"}));
  expect(test::error_of<OptionError>([] { parse_backend_option("CPU"); }), OptionKey::backend, OptionRule::unknown_name,
         "CPU");
  expect(test::error_of<OptionError>([] { parse_dtype_option("uint7"); }), OptionKey::dtype, OptionRule::unknown_name,
         "uint7");
  expect(test::error_of<OptionError>([] { parse_dtype_option("u9", OptionKey::out_dtype); }), OptionKey::out_dtype,
         OptionRule::unknown_name, "u9");
  e = test::error_of<OptionError>([] { parse_feature_level_option("4_2"); });
  expect(e, OptionKey::feature_level, OptionRule::unknown_name, "4_2");
  EXPECT_EQ(e.choices().front(), "1_0");
  EXPECT_EQ(e.choices().back(), newest_feature_level().short_name());
  e = test::error_of<OptionError>([] { parse_shift_overflow_option("clamp"); });
  expect(e, OptionKey::shift_overflow, OptionRule::unknown_name, "clamp");
  EXPECT_EQ(e.choices(), (std::vector<std::string>{"directml", "zero", "wrap"}));  // the default first
  expect(test::error_of<OptionError>([] { parse_isa_option("AVX2"); }), OptionKey::isa, OptionRule::unknown_name,
         "AVX2");
  for (const char* bad : {"0", "257", "abc", "", "1x", "-1", " 2"})
    expect(test::error_of<OptionError>([&] { parse_threads_option(bad); }), OptionKey::threads, OptionRule::not_a_count,
           bad);
  expect(test::error_of<OptionError>([] { check_threads_option(0); }), OptionKey::threads, OptionRule::zero, "0");
  expect(test::error_of<OptionError>([] { check_threads_option(257); }), OptionKey::threads, OptionRule::above_maximum,
         "257");
  expect(test::error_of<OptionError>([] { check_repeat_option(0, 0); }), OptionKey::repeat, OptionRule::too_few, "0");
  expect(test::error_of<OptionError>([] { check_repeat_option(1, -1); }), OptionKey::warmup, OptionRule::too_few, "-1");
  expect(test::error_of<OptionError>([] { check_adapter_option(""); }), OptionKey::adapter, OptionRule::empty, "");
}

TEST(OptionErrorText, EachFaceSpellsTheOption) {
  const auto both = [](auto f, const std::string& cli, const std::string& python) {
    const OptionError e = test::error_of<OptionError>(f);
    EXPECT_EQ(option_error_text(e, kCli), cli);
    EXPECT_EQ(option_error_text(e, kPython), python);
  };
  both([] { parse_backend_option("gpu"); },
       "--backend: unknown backend 'gpu' (available: auto, cpu, d3d12, directml, cpu-reference)",
       "backend: unknown backend 'gpu' (available: auto, cpu, d3d12, directml, cpu-reference)");
  both([] { parse_feature_level_option("9_9"); },
       "--feature-level: unknown level '9_9' (1_0 to 6_4, also written 4.1 or DML_FEATURE_LEVEL_4_1)",
       "feature_level: unknown level '9_9' (1_0 to 6_4, also written 4.1 or DML_FEATURE_LEVEL_4_1)");
  both([] { parse_shift_overflow_option("clamp"); },
       "--shift-overflow: unknown mode 'clamp' ('directml', 'zero' or 'wrap')",
       "shift_overflow: unknown mode 'clamp' ('directml', 'zero' or 'wrap')");
  both([] { parse_isa_option("neon"); }, "--isa: unknown instruction set 'neon' (known: scalar, avx2, avx512)",
       "isa: unknown instruction set 'neon' (known: scalar, avx2, avx512)");
  both([] { parse_threads_option("abc"); }, "--threads: 'abc' is not a thread count from 1 to 256",
       "threads: 'abc' is not a thread count from 1 to 256");
  both([] { check_threads_option(300); }, "--threads: 300 is more than 256", "threads: 300 is more than 256");
  both([] { check_threads_option(0); }, "--threads: 0 is not from 1 to 256", "threads: 0 is not from 1 to 256");
  both([] { check_repeat_option(0, 0); }, "--repeat must be at least 1 and --warmup at least 0",
       "repeat must be at least 1 and warmup at least 0");
  both([] { check_adapter_option(""); },
       "--adapter: an empty name matches no adapter (give an index or part of a name)",
       "adapter: an empty name matches no adapter (give an index or part of a name)");
  const auto text = [](const OptionError& e, const OptionSpelling& s) { return option_error_text(e, s); };
  const OptionError adapter(OptionKey::adapter, OptionRule::not_for_backend, "0", "cpu", {"d3d12", "directml", "auto"});
  EXPECT_EQ(text(adapter, kCli), "--adapter applies to the d3d12, directml and auto backends, not cpu");
  EXPECT_EQ(text(adapter, kPython), "adapter= applies to the d3d12, directml and auto backends, not cpu");
  const OptionError threads(OptionKey::threads, OptionRule::not_for_backend, "2", "d3d12");
  EXPECT_EQ(text(threads, kCli), "the d3d12 backend has no choice of CPU threads (--threads)");
  EXPECT_EQ(text(threads, kPython), "the d3d12 backend has no choice of CPU threads (threads=)");
  const OptionError isa(OptionKey::isa, OptionRule::not_for_backend, "avx2", "d3d12");
  EXPECT_EQ(text(isa, kCli), "the d3d12 backend has no choice of instruction set (asked for 'avx2')");
  const OptionError once(OptionKey::in_place, OptionRule::runs_once);
  EXPECT_EQ(text(once, kCli), "--in-place runs once: it cannot be combined with --repeat or --warmup");
  EXPECT_EQ(text(once, kPython), "out=x (in place) runs once: it cannot be combined with repeat or warmup");
  const OptionError offered(OptionKey::in_place, OptionRule::not_offered, "", "BIT_COUNT");
  EXPECT_EQ(text(offered, kPython),
            "out=x (in place) is not offered: DirectML does not let BIT_COUNT's output alias its input");
  const OptionError out_dtype(OptionKey::out_dtype, OptionRule::not_for_operator, "uint32", "xor", {"popcount"});
  EXPECT_EQ(text(out_dtype, kCli), "--out-dtype does not apply to xor (only popcount takes it)");
  const OptionError shift(OptionKey::shift_overflow, OptionRule::not_for_operator, "wrap", "and", {"shl", "shr"});
  EXPECT_EQ(text(shift, kPython), "shift_overflow does not apply to and (only shl and shr take it)");
  const OptionError none(OptionKey::adapter, OptionRule::no_such_adapter, "7", "", {"0 llvmpipe"});
  EXPECT_EQ(text(none, kCli), "--adapter: no adapter 7 (adapters: 0 llvmpipe)");
  const OptionError named(OptionKey::adapter, OptionRule::no_such_adapter, "zzz", "", {});
  EXPECT_EQ(text(named, kPython), "adapter: no adapter named like 'zzz' (adapters: none)");
  const OptionError needed(OptionKey::dtype, OptionRule::needed, "", "operand", {}, Errc::invalid_input);
  EXPECT_EQ(needed.code(), Errc::invalid_input);
  EXPECT_EQ(text(needed, kCli), "the data type is unknown: no other operand names one; use --dtype");
  EXPECT_EQ(text(needed, kPython), "the data type is unknown: no other operand names one; use dtype=");
  const OptionError with_output(OptionKey::in_place, OptionRule::with_output);
  EXPECT_EQ(text(with_output, kCli), "--in-place and -o cannot be combined");
  const OptionError read_only(OptionKey::in_place, OptionRule::read_only);
  EXPECT_EQ(text(read_only, kPython), "out=x (in place): operand A is read-only");
  EXPECT_EQ(std::string(read_only.what()), "in_place: operand A is read-only");
  const OptionError dtype(OptionKey::out, OptionRule::wrong_dtype, "uint32", "uint16");
  EXPECT_EQ(text(dtype, kPython), "out: the result is uint16, but out has dtype uint32");
  const OptionError shape(OptionKey::out, OptionRule::wrong_shape, "(4,)", "(2, 2)");
  EXPECT_EQ(text(shape, kPython), "out: the result has shape (2, 2), but out has shape (4,)");
  const OptionError unused(OptionKey::adapter, OptionRule::applies_to_none, "0", "'m.json'",
                           {"d3d12", "directml", "auto"});
  EXPECT_EQ(text(unused, kCli),
            "--adapter applies to the d3d12, directml and auto backends, and no case of 'm.json' runs on one");
}

// what() is the library's own words (the keywords); a context added on the way out stays in
// front of every face's sentence, and the error stays an OptionError.
// The refusals that once spelt a command-line flag in the library's own text (--format,
// --in-place, --emit-dxdispatch, --shard, --shift-overflow): the command line words them as it
// always did, and the library's own text (what() and so every other face) names no flag.
TEST(OptionErrorText, NoLibraryTextSpellsAFlag) {
  const auto text = [](const OptionError& e, const OptionSpelling& s) { return option_error_text(e, s); };
  const auto check = [&](const OptionError& e, const std::string& cli) {
    EXPECT_EQ(text(e, kCli), cli);
    EXPECT_EQ(std::string(e.what()).find("--"), std::string::npos) << e.what();
    EXPECT_EQ(text(e, kPython).find("--"), std::string::npos) << text(e, kPython);
  };
  check(OptionError(OptionKey::format, OptionRule::cannot_tell, "out.unknown"),
        "cannot tell the output format from 'out.unknown': name it .npy or .json, or use --format");
  check(OptionError(OptionKey::format, OptionRule::binary_terminal),
        "refusing to write binary .npy to a terminal; redirect it, or use --format json");
  check(OptionError(OptionKey::in_place, OptionRule::needs_file, "1"), "--in-place needs input A to be a file");
  check(OptionError(OptionKey::emit_dxdispatch, OptionRule::no_file_name, "-"),
        "--emit-dxdispatch needs a file name (the model and its .npy files are files)");
  check(OptionError(OptionKey::emit_dxdispatch, OptionRule::no_file_name, "dir/", "named"),
        "--emit-dxdispatch: 'dir/' names no file");
  check(OptionError(OptionKey::shard, OptionRule::out_of_range, "3/2"),
        "--shard 3/2: K counts from 0 and must be below N (N >= 1)");
  const OptionError directml = OptionError(OptionKey::shift_overflow, OptionRule::not_backend_rule, "wrap", "directml",
                                           {"directml"}, Errc::unsupported)
                                   .with_context("shl: the directml backend cannot run this");
  EXPECT_EQ(directml.code(), Errc::unsupported);
  check(directml,
        "shl: the directml backend cannot run this: --shift-overflow wrap is not DirectML's rule for shift counts of "
        "the element width and more; the directml backend runs shifts with --shift-overflow directml only");
  EXPECT_EQ(test::error_of<OptionError>([] { (void)dxdispatch_file_names("-", 1); }).key(), OptionKey::emit_dxdispatch);
}

TEST(OptionErrorText, KeepsItsContextAndItsType) {
  const OptionError e(OptionKey::dtype, OptionRule::needed, "", "operand", {}, Errc::invalid_input);
  EXPECT_EQ(std::string(e.what()), "the data type is unknown: no other operand names one; use dtype");
  try {
    with_context("operand A (literal '1')", [&] { throw e; });
  } catch (const OptionError& c) {
    EXPECT_EQ(c.code(), Errc::invalid_input);
    EXPECT_EQ(option_error_text(c, kCli),
              "operand A (literal '1'): the data type is unknown: no other operand names one; use --dtype");
    EXPECT_EQ(std::string(c.what()),
              "operand A (literal '1'): the data type is unknown: no other operand names one; use dtype");
    return;
  }
  ADD_FAILURE() << "the context lost the OptionError";
}

}  // namespace
}  // namespace dmlbits

#include "dmlbits/request.hpp"

#include <fmt/format.h>

#include "cpu_backend.hpp"
#include "cpu_isa.hpp"
#include "thread_rule.hpp"

namespace dmlbits {
namespace {

[[noreturn]] void unknown(OptionKey key, std::string_view text) {
  throw OptionError(key, OptionRule::unknown_name, std::string(text), {}, option_choices(key));
}

}  // namespace

std::vector<std::string> option_choices(OptionKey key) {
  std::vector<std::string> names;
  switch (key) {
    case OptionKey::backend:
      for (BackendKind kind : backend_kinds()) names.emplace_back(backend_name(kind));
      break;
    case OptionKey::dtype:
    case OptionKey::out_dtype:
      for (const DTypeInfo& t : dtype_table()) names.emplace_back(t.numpy_name);
      break;
    case OptionKey::feature_level:
      for (FeatureLevel level : feature_levels()) names.push_back(level.short_name());
      break;
    case OptionKey::shift_overflow:
      for (ShiftOverflow mode : shift_overflow_modes()) names.emplace_back(shift_overflow_name(mode));
      break;
    case OptionKey::isa:
      for (std::string_view isa : isa_names()) names.emplace_back(isa);
      break;
    default:
      break;
  }
  return names;
}

BackendKind parse_backend_option(std::string_view text) {
  if (const auto kind = parse_backend(text)) return *kind;
  unknown(OptionKey::backend, text);
}

DType parse_dtype_option(std::string_view text, OptionKey key) {
  if (const auto dtype = parse_dtype_name(text)) return *dtype;
  unknown(key, text);
}

FeatureLevel parse_feature_level_option(std::string_view text) {
  if (const auto level = parse_feature_level(text)) return *level;
  unknown(OptionKey::feature_level, text);
}

ShiftOverflow parse_shift_overflow_option(std::string_view text) {
  if (const auto mode = parse_shift_overflow(text)) return *mode;
  unknown(OptionKey::shift_overflow, text);
}

std::string parse_isa_option(std::string_view text) {
  if (const auto isa = parse_isa(text)) return std::string(isa_name(*isa));
  unknown(OptionKey::isa, text);
}

unsigned parse_threads_option(std::string_view text) {
  if (const auto n = parse_thread_count(text)) return *n;
  throw OptionError(OptionKey::threads, OptionRule::not_a_count, std::string(text), std::to_string(kMaxThreads));
}

ThreadDefaults thread_defaults() {
  // One figure for the SIMD kernels: thread_rule_test checks that every SIMD set has it.
  return {.most = knee_threads(Isa::avx2),
          .most_scalar = knee_threads(Isa::scalar),
          .parallel_min_bytes = kParallelMinBytes};
}

unsigned check_threads_option(unsigned threads) {
  if (threads == 0) throw OptionError(OptionKey::threads, OptionRule::zero, "0", std::to_string(kMaxThreads));
  if (threads > kMaxThreads)
    throw OptionError(OptionKey::threads, OptionRule::above_maximum, std::to_string(threads),
                      std::to_string(kMaxThreads));
  return threads;
}

void check_repeat_option(int repeat, int warmup) {
  if (repeat < 1) throw OptionError(OptionKey::repeat, OptionRule::too_few, std::to_string(repeat));
  if (warmup < 0) throw OptionError(OptionKey::warmup, OptionRule::too_few, std::to_string(warmup));
}

void check_adapter_option(std::string_view adapter) {
  if (adapter.empty()) throw OptionError(OptionKey::adapter, OptionRule::empty);
}

}  // namespace dmlbits

// What the directml backend decides in every build, with or without DirectML.
#include <charconv>

#include <fmt/format.h>

#include "directml_backend.hpp"
#include "directml_internal.hpp"
#include "dmlbits/error.hpp"
#include "environment.hpp"

namespace dmlbits::directml {
std::optional<std::string> unsupported_reason(const ValidatedOp& op) {
  if (op.op().shift && op.shift_overflow() != ShiftOverflow::directml)
    throw OptionError(OptionKey::shift_overflow, OptionRule::not_backend_rule,
                      std::string(shift_overflow_name(op.shift_overflow())), "directml",
                      {std::string(shift_overflow_name(ShiftOverflow::directml))}, Errc::unsupported)
        .with_context(fmt::format("{}: the directml backend cannot run this", op.op().verb));
  return std::nullopt;
}

std::uint64_t max_buffer_bytes(std::uint64_t requested) {
  if (requested != 0) return requested;
  const std::string env = environment_variable("DMLBITS_DIRECTML_MAX_BUFFER_BYTES").value_or("");
  if (env.empty()) return kDefaultMaxBufferBytes;
  std::uint64_t n = 0;
  const char* end = env.data() + env.size();
  const auto [p, ec] = std::from_chars(env.data(), end, n);
  if (ec != std::errc{} || p != end || n < kMinBufferBytes || n > kMaxBufferBytes)
    throw Error(Errc::usage, fmt::format("DMLBITS_DIRECTML_MAX_BUFFER_BYTES: '{}' is not a byte count from {} to {}",
                                         env, kMinBufferBytes, kMaxBufferBytes));
  return n;
}

}  // namespace dmlbits::directml

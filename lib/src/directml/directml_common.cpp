// What the directml backend decides in every build, with or without DirectML.
#include <fmt/format.h>

#include "directml_backend.hpp"
#include "directml_internal.hpp"

namespace dmlbits::directml {
namespace {

// ShiftOverflow::directml comes with DirectML's own shift rule (branch dml-shift). Written as a
// template so that this compiles before and after that enumerator exists: before, no mode is
// DirectML's and every shift is refused.
template <class E>
bool is_directml_mode(E mode) {
  if constexpr (requires { E::directml; }) return mode == E::directml;
  else return false;
}

}  // namespace

std::optional<std::string> unsupported_reason(const ValidatedOp& op) {
  if (op.op().shift && !is_directml_mode(op.shift_overflow()))
    return fmt::format(
        "--shift-overflow {} is not DirectML's rule for shift counts of the element width and more; the directml "
        "backend runs shifts with --shift-overflow directml only",
        shift_overflow_name(op.shift_overflow()));
  return std::nullopt;
}

}  // namespace dmlbits::directml

// Shared by the directml layer's files (never included outside lib/src/directml).
#pragma once

#include <optional>
#include <string>

#include "dmlbits/validate.hpp"

namespace dmlbits::directml {

// Why the directml backend does not run `op` whatever DirectML says (directml_common.cpp).
std::optional<std::string> unsupported_reason(const ValidatedOp& op);

}  // namespace dmlbits::directml

// Operands of an operation as given on the command line: a file path, "-" for standard input,
// or an inline literal (an integer in decimal, 0x hex or 0b binary, or a JSON array). A literal,
// and a JSON tensor that names no dtype, take the dtype of --dtype or else of the other operand.
// "./NAME" always names a file.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "dmlbits/io.hpp"
#include "dmlbits/tensor.hpp"

namespace dmlbits {

enum class OperandKind { file, standard_input, scalar_literal, array_literal };

OperandKind classify_operand(const std::string& text);

struct LoadedOperand {
  Tensor tensor;
  OperandKind kind{};
  std::uint64_t source_bytes = 0;  // bytes read from the file or stream (0 for literals)
};

// Loads every operand; at most one may be "-" (Errc::usage otherwise). Errors name the operand
// ("reading 'a.npy': ...", "operand 2 (literal '0x1ff'): ...").
std::vector<LoadedOperand> load_operands(const std::vector<std::string>& operands, std::optional<DType> dtype);

}  // namespace dmlbits

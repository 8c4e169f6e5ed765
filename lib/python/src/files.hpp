// The tool's file and comparison services for the Python face: tensors read and written as the
// CLI reads and writes them, and the --expect report. The operators do not come through here:
// they are requests (dmlbits/request.hpp, module.cpp). Public headers only: dmlbits/tensor.hpp
// (read_tensor_file, write_tensor_file) and dmlbits/check.hpp (compare_tensors, compare_text).
#pragma once

#include <optional>
#include <string>

#include "dmlbits/tensor.hpp"

namespace dmlbits::python {

// A tensor file (.npy or JSON, "-" is not offered) as the CLI reads it; `dtype` for JSON
// without one. Errors carry "reading 'PATH'".
Tensor read_tensor_path(const std::string& path, std::optional<DType> dtype);
// Writes `t` atomically as `format` ("npy", "json") or, when empty, as the extension says.
void write_tensor_path(const TensorView& t, const std::string& path, const std::string& format, bool hex);
// nullopt when `actual` has `expected`'s dtype, shape and bits; else the --expect report.
std::optional<std::string> compare_bits(const TensorView& actual, const TensorView& expected, std::size_t max_listed,
                                        const std::string& label);

}  // namespace dmlbits::python

#include "files.hpp"

#include <fmt/format.h>

#include "dmlbits/check.hpp"
#include "dmlbits/error.hpp"

namespace dmlbits::python {

Tensor read_tensor_path(const std::string& path, std::optional<DType> dtype) {
  if (path == "-") throw Error(Errc::usage, "read_tensor: '-' (standard input) is for the command line; give a path");
  return read_tensor_file(path, dtype);
}

void write_tensor_path(const TensorView& t, const std::string& path, const std::string& format_name, bool hex) {
  if (path == "-") throw Error(Errc::usage, "write_tensor: '-' (standard output) is for the command line; give a path");
  std::optional<TensorFormat> format;
  if (!format_name.empty()) {
    format = parse_format_name(format_name);
    if (!format) throw Error(Errc::usage, fmt::format("format: unknown format '{}' (npy or json)", format_name));
  } else {
    format = format_from_extension(path);
    if (!format)
      throw Error(Errc::usage,
                  fmt::format("cannot tell the output format from '{}': name it .npy or .json, or give format=", path));
  }
  write_tensor_file(t, path, *format, hex);
}

std::optional<std::string> compare_bits(const TensorView& actual, const TensorView& expected, std::size_t max_listed,
                                        const std::string& label) {
  const CompareReport r = compare_tensors(expected, actual, max_listed);
  if (r.equal()) return std::nullopt;
  return compare_text(r, label);
}

}  // namespace dmlbits::python

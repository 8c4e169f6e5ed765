// The .npy format (NumPy's numpy/lib/format.py): strict reading of versions 1.0, 2.0 and 3.0,
// and writing of version 1.0 (2.0 when the header needs it). All functions throw
// Errc::invalid_input with a message that names the problem but not the file; callers add the
// file as context.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "dmlbits/tensor.hpp"

namespace dmlbits {

// Longest header dmlbits accepts. NumPy's own reader refuses headers over 10000 bytes by
// default; dmlbits allows more room for padding but bounds it, so a hostile length field
// cannot make it read or allocate without limit.
inline constexpr std::size_t kMaxNpyHeaderBytes = 1 << 20;

struct NpyHeader {
  int major = 1, minor = 0;
  std::string descr;         // as written, e.g. ">u4"
  DType dtype{};             // UINT8 for NumPy bool
  bool is_bool = false;      // descr was "|b1"
  char byte_order = '|';     // '<', '>', '=' or '|' as written
  bool fortran_order = false;
  Shape shape;
  std::size_t data_offset = 0;   // bytes before the array data
  std::uint64_t data_bytes = 0;  // bytes the header promises

  // True if the stored bytes must be swapped to become native (little-endian) values.
  bool needs_swap() const;
};

// True if `bytes` starts with the .npy magic string.
bool is_npy(std::span<const std::byte> bytes);

// Parses and checks the header; `file` must hold at least the whole header. Does not look at
// the data.
NpyHeader parse_npy_header(std::span<const std::byte> file);

// Throws unless `found` (the bytes after the header) is exactly what the header promises:
// "truncated: ..." or "trailing garbage: ...".
void check_npy_data_size(const NpyHeader& h, std::uint64_t found);

// parse_npy_header, plus the check that the data is exactly as long as the header promises.
NpyHeader inspect_npy(std::span<const std::byte> file);

// A whole file to a tensor in C order and native byte order (big-endian data swapped,
// Fortran-order data transposed), as NumPy's np.load presents it.
Tensor read_npy(std::span<const std::byte> file);

// The header (magic, version, length, dict, padding) for a C-order, little-endian array; its
// length is a multiple of 64. Version 1.0 unless the header needs 2.0.
std::string npy_header(DType dtype, const Shape& shape);

}  // namespace dmlbits

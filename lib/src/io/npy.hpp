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
  std::string descr;      // as written, e.g. ">u4"
  DType dtype{};          // UINT8 for NumPy bool
  bool is_bool = false;   // descr was "|b1"
  char byte_order = '|';  // '<', '>', '=' or '|' as written
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

// read_npy's conversion for data that arrives in pieces, so that a reader puts each where it
// belongs and the file is never held in memory besides the tensor: C-order data is read
// straight into the tensor's storage and swapped there a piece at a time, while the piece is
// still in cache; Fortran-order data goes to a scratch buffer of a few slices of the last axis,
// and is transposed into the tensor from there.
//   NpyDecoder d(h);
//   for (std::size_t i = 0; i < d.pieces(); ++i) { fill d.buffer(i) from data offset d.offset(i); d.convert(i); }
class NpyDecoder {
 public:
  // Allocates the tensor (and the scratch buffer); `h` comes from parse_npy_header.
  explicit NpyDecoder(const NpyHeader& h);
  std::size_t pieces() const { return pieces_; }
  // Piece i is the data's bytes [offset(i), offset(i) + buffer(i).size()).
  std::uint64_t offset(std::size_t i) const;
  // Where piece i goes, to be filled whole before convert(i): the tensor's own storage in C
  // order, the scratch buffer in Fortran order (so piece i + 1 is filled after convert(i)).
  std::span<std::byte> buffer(std::size_t i);
  // Converts piece i, in order of i.
  void convert(std::size_t i);
  // The tensor, once every piece is converted.
  Tensor take() { return std::move(tensor_); }

 private:
  Tensor tensor_;
  AlignedBuffer scratch_;  // Fortran order: the piece being converted
  std::size_t size_ = 1;   // element size
  bool swap_ = false;
  bool fortran_ = false;  // transposed through scratch_ (rank >= 2, two axes longer than 1)
  std::size_t pieces_ = 0;
  std::uint64_t piece_bytes_ = 0;     // every piece but perhaps the last
  std::uint64_t slice_elements_ = 0;  // Fortran order: elements in one slice (all axes but the last)
  std::uint64_t slices_per_piece_ = 0;
};

// The header (magic, version, length, dict, padding) for a C-order, little-endian array; its
// length is a multiple of 64. Version 1.0 unless the header needs 2.0.
std::string npy_header(DType dtype, const Shape& shape);

}  // namespace dmlbits

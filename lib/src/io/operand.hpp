// Operands of an operation as given on the command line: a file path, "-" for standard input,
// or an inline literal (an integer in decimal, 0x hex or 0b binary, or a JSON array). A literal,
// and a JSON tensor that names no dtype, take the dtype of --dtype or else of the other operand.
// "./NAME" always names a file.
#pragma once

#include <memory>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "io.hpp"
#include "dmlbits/tensor.hpp"

namespace dmlbits {

class NpyStream;  // private: npy_stream.hpp

struct LoadedOperand {
  Tensor tensor;                      // empty while `stream` holds the data
  std::shared_ptr<NpyStream> stream;  // an .npy input left unread, to be read in chunks
  // OperandKind::borrowed: the caller's memory, read in place (BorrowedTensor::read_in_place),
  // or, with LoadMode::borrowed_as_is, in another layout or byte order, converted as read.
  BorrowedTensor borrowed;
  OperandKind kind{};
  TensorFormat format = TensorFormat::npy;  // of a file or standard input

  DType dtype() const;
  Shape shape() const;
  // The operand's elements in memory (its tensor, or the borrowed memory); not for a stream
  // or a borrowed tensor still to convert (materialize() first).
  TensorView view() const;
  // The same memory for writing a result over the operand (in place): the tensor's, or a
  // borrowed operand's when the caller made it writable; nullptr otherwise.
  std::byte* writable_data();
  // Reads a streamed operand whole (for an input that is broadcast rather than streamed), and
  // converts a borrowed one still to convert into a C-order, native tensor of its own.
  void materialize();
  // Whether it is a borrowed tensor still to convert (LoadMode::borrowed_as_is).
  bool converts() const { return kind == OperandKind::borrowed && borrowed.data && !borrowed.read_in_place(); }

  // The one way a chunked run reads an operand, whatever its layout was: the bytes of elements
  // [first, first + count) in C order. An operand left as a stream, or a borrowed tensor still
  // to convert, is read into `scratch` (count elements; the result is a view of it); one held
  // in memory (converted from
  // big-endian, Fortran order or JSON, or a literal) is a view into its tensor. An operand of
  // one element is broadcast: its chunk is that element whatever `first` is. A range past the
  // operand's end is Errc::internal.
  std::span<const std::byte> chunk(std::uint64_t first, std::size_t count, std::byte* scratch) const;
  // Whether chunk() needs a scratch buffer.
  bool chunk_needs_scratch() const { return stream != nullptr || converts(); }
};

enum class LoadMode {
  whole,    // every operand read into memory
  streams,  // .npy inputs in C order and native byte order are left as streams
  // A borrowed tensor that is not read in place is left where it lies, for chunk() to convert
  // piece by piece (or materialize() whole); under the other modes it is converted at once.
  borrowed_as_is,
};

// Loads every operand; at most one may be "-" (Errc::usage otherwise). Errors name the operand
// ("reading 'a.npy': ...", "operand B (literal '0x1ff'): ..."). A borrowed C-contiguous, native
// tensor is used where it lies (and anchors the dtype like a file); another is converted to C
// order and native byte order, at once or (LoadMode::borrowed_as_is) as it is read.
// Without a dtype from any operand or `dtype`: OptionError(OptionKey::dtype, OptionRule::needed).
std::vector<LoadedOperand> load_operands(const std::vector<Operand>& operands, std::optional<DType> dtype,
                                         LoadMode mode = LoadMode::whole);
std::vector<LoadedOperand> load_operands(const std::vector<std::string>& operands, std::optional<DType> dtype,
                                         LoadMode mode = LoadMode::whole);

}  // namespace dmlbits

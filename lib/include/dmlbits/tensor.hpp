// Tensors: a dtype, a shape and C-order (row-major) data in native byte order. Tensor owns
// 64-byte-aligned storage; TensorView and MutableTensorView borrow it (or any other memory) and
// never outlive what they borrow.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "dmlbits/dtype.hpp"

namespace dmlbits {

inline constexpr std::size_t kTensorAlignment = 64;

// Uninitialised, 64-byte-aligned bytes, from allocate_buffer (memory.hpp): a large buffer
// has huge pages and is resident from the start (Prefault::yes), because every AlignedBuffer is
// written whole soon after (a read, an execution), and a timed execution should not pay the
// page faults of its output.
class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  explicit AlignedBuffer(std::size_t size);
  std::byte* data() { return data_.get(); }
  const std::byte* data() const { return data_.get(); }
  std::size_t size() const { return data_.get_deleter().size; }

 private:
  struct Free {
    // 0 in an empty buffer: unique_ptr value-initialises its deleter. (An initialiser here would
    // keep Free from being default-constructible within AlignedBuffer, where unique_ptr needs it.)
    std::size_t size;
    void operator()(std::byte* p) const;
  };
  std::unique_ptr<std::byte, Free> data_;
};

struct TensorView {
  DType dtype{};
  Shape shape;
  const std::byte* data = nullptr;  // element_count * element size bytes

  std::uint64_t element_count() const { return shape.element_count(); }
  std::size_t byte_size() const { return static_cast<std::size_t>(shape.byte_size(dtype_info(dtype).size)); }
  std::span<const std::byte> bytes() const { return {data, byte_size()}; }
};

struct MutableTensorView {
  DType dtype{};
  Shape shape;
  std::byte* data = nullptr;

  std::size_t byte_size() const { return static_cast<std::size_t>(shape.byte_size(dtype_info(dtype).size)); }
  operator TensorView() const { return {dtype, shape, data}; }
};

// A tensor in the caller's memory (a NumPy array's buffer), borrowed for one run and never
// freed by dmlbits. `strides` are bytes per step of each dimension (empty: C order; negative
// steps allowed); a C-contiguous tensor in native byte order is read in place. Any other is
// converted to C order and native byte order as it is read: by cache-sized chunks during the
// execution where the run allows it (one execution, not timed, no axis broadcast), else whole
// before it, into memory of the run's own.
struct BorrowedTensor {
  DType dtype{};
  Shape shape;
  std::vector<std::int64_t> strides;
  const std::byte* data = nullptr;
  // The same memory when the caller lets a run write over it (in place), else null.
  std::byte* writable = nullptr;
  // The elements are in the other byte order (a big-endian NumPy array): swapped as read.
  bool byte_swapped = false;

  bool c_contiguous() const;
  // Whether a run reads it where it lies: C-contiguous and in native byte order.
  bool read_in_place() const { return c_contiguous() && !byte_swapped; }
};

// An operand as a face gives it: text as on the command line (a path, "-" for standard input, a
// literal "5", "0xff", "[1,2,3]"), or a borrowed tensor.
using Operand = std::variant<std::string, BorrowedTensor>;

class Tensor {
 public:
  Tensor() = default;
  // Storage for shape.element_count() elements, uninitialised; throws if the size overflows.
  Tensor(DType dtype, Shape shape);

  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  std::uint64_t element_count() const { return shape_.element_count(); }
  std::size_t byte_size() const { return byte_size_; }
  std::byte* data() { return storage_.data(); }
  const std::byte* data() const { return storage_.data(); }

  TensorView view() const { return {dtype_, shape_, storage_.data()}; }
  MutableTensorView mutable_view() { return {dtype_, shape_, storage_.data()}; }

  // Element i's bits, zero-extended to 64 bits (native byte order).
  std::uint64_t bits_at(std::size_t i) const;
  void set_bits_at(std::size_t i, std::uint64_t bits);

 private:
  DType dtype_{};
  Shape shape_;
  std::size_t byte_size_ = 0;
  AlignedBuffer storage_;
};

// Element i of `data` (element width `size` bytes) as zero-extended bits.
inline std::uint64_t load_bits(const std::byte* data, std::size_t size, std::size_t i) {
  switch (size) {
    case 1: {
      std::uint8_t v;
      std::memcpy(&v, data + i, 1);
      return v;
    }
    case 2: {
      std::uint16_t v;
      std::memcpy(&v, data + 2 * i, 2);
      return v;
    }
    case 4: {
      std::uint32_t v;
      std::memcpy(&v, data + 4 * i, 4);
      return v;
    }
    default: {
      std::uint64_t v;
      std::memcpy(&v, data + 8 * i, 8);
      return v;
    }
  }
}

inline void store_bits(std::byte* data, std::size_t size, std::size_t i, std::uint64_t bits) {
  switch (size) {
    case 1: {
      auto v = static_cast<std::uint8_t>(bits);
      std::memcpy(data + i, &v, 1);
      break;
    }
    case 2: {
      auto v = static_cast<std::uint16_t>(bits);
      std::memcpy(data + 2 * i, &v, 2);
      break;
    }
    case 4: {
      auto v = static_cast<std::uint32_t>(bits);
      std::memcpy(data + 4 * i, &v, 4);
      break;
    }
    default: {
      std::memcpy(data + 8 * i, &bits, 8);
      break;
    }
  }
}

}  // namespace dmlbits

// The files one command reads and writes, checked before anything is read or written: two
// outputs, or an output and an input, golden or manifest, must not be one file. Without this
// check the last write wins: `--report-json g.npy --expect g.npy` turns the golden into the
// report, `-o r.npy --time-json r.npy` loses the result, and two writers of standard output mix
// a tensor with JSON. Every face (the command line, a binding) builds its list and calls
// check_file_uses() first.
namespace dmlbits {

struct FileUse {
  std::string path;  // as given; "-" is standard input when read, standard output when written
  std::string name;  // how a message names the use: "-o", "--time-json", "input A", "manifest"
  bool written = false;
  bool operand = false;   // an input of the operation (its A or B)
  bool in_place = false;  // a write that replaces the operation's inputs by design (--in-place)
};

// Throws Error(Errc::usage) naming the first two uses, in list order, that are the same file
// while at least one of them writes it: the same path once resolved (links, `.` and `..`; on
// Windows without regard to case), the same file by identity (device and inode; on Windows the
// volume and file index), or standard output written twice. Standard input read and standard
// output written are two streams; reads alone never clash; the null device (/dev/null, NUL)
// takes any number of writes; an in_place write may be the same file as any operand.
void check_file_uses(const std::vector<FileUse>& uses);

}  // namespace dmlbits

// Tensor files: the two formats, reading and writing them as every face does, and what one
// holds (an operation's own reading and writing is run()'s). A front end's probes of the files
// it names are dmlbits/front_end.hpp's.
namespace dmlbits {

enum class TensorFormat { npy, json };
std::string_view format_name(TensorFormat f);
std::optional<TensorFormat> parse_format_name(std::string_view name);

// The format an output path implies: ".npy" or ".json" (case-insensitive); nullopt otherwise.
std::optional<TensorFormat> format_from_extension(std::string_view path);

// What an operand's text names: a file, standard input ("-"), an inline literal; borrowed =
// a BorrowedTensor. "./NAME" always names a file.
enum class OperandKind { file, standard_input, scalar_literal, array_literal, borrowed };

OperandKind classify_operand(const std::string& text);

// A tensor file as the operator commands read an operand file: .npy or JSON, told apart by its
// content; `json_dtype` is the dtype of a JSON file that names none. "-" reads standard input.
// Errors carry the context "reading 'PATH'"; JSON without a dtype is an OptionError (the
// option dtype is needed: error.hpp), which the face words.
Tensor read_tensor_file(const std::string& path, std::optional<DType> json_dtype = std::nullopt);

// Writes `t` to `path` in `format` as every output is written: complete or not at all (never a
// partial file, even if the process is killed), "-" for standard output. json_hex writes each
// JSON value as the "0x..." string of its bit pattern. Errors carry the context "writing 'PATH'".
void write_tensor_file(const TensorView& t, const std::string& path, TensorFormat format, bool json_hex = false);

// What a tensor file holds, for `dmlbits info`: an .npy file's header alone (its data is never
// read, so a file of any size costs a few KiB); a JSON file's declared dtype (else `dtype`) and
// shape, read whole within the JSON input bound. With parse_json false, a JSON file is only
// named as such. Errors other than opening carry the context "reading 'PATH'".
struct TensorFileInfo {
  std::string path;
  TensorFormat format{};
  std::string version;  // "1.0" for .npy, "" for JSON
  std::optional<DType> dtype;
  std::string descr;  // .npy descr as written
  bool is_bool = false;
  Shape shape;
  std::string byte_order;  // "little", "big", "not applicable", "native"
  bool fortran_order = false;
  std::uint64_t header_bytes = 0;
};
TensorFileInfo inspect_tensor_file(const std::string& path, std::optional<DType> dtype, bool parse_json = true);

}  // namespace dmlbits

// Files in and out: reading a tensor from a path or standard input with its format detected
// from the content, and writing through OutputFile, which never leaves a partial file: data goes
// to a temporary file in the destination's folder and is renamed into place on commit().
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dmlbits/json_tensor.hpp"
#include "dmlbits/npy.hpp"
#include "dmlbits/tensor.hpp"

namespace dmlbits {

enum class TensorFormat { npy, json };
std::string_view format_name(TensorFormat f);
std::optional<TensorFormat> parse_format_name(std::string_view name);

// The bytes of a file (memory-mapped) or of standard input ("-", read to the end).
class InputBytes {
 public:
  // Throws Errc::io with the path in the message.
  static InputBytes open(const std::string& path);
  // `prefix` (bytes a caller already read from standard input) followed by the rest of it.
  static InputBytes read_rest_of_stdin(std::vector<std::byte> prefix);
  InputBytes(InputBytes&&) noexcept;
  InputBytes& operator=(InputBytes&&) noexcept;
  ~InputBytes();
  std::span<const std::byte> bytes() const { return {data_, size_}; }

 private:
  InputBytes() = default;
  void read_to_end(int fd, const std::string& path);
  const std::byte* data_ = nullptr;
  std::size_t size_ = 0;
  bool mapped_ = false;
  std::vector<std::byte> buffer_;
};

// .npy by its magic; JSON if the first non-blank byte is '[', '{', a digit, '-' or '"'.
// Throws Errc::invalid_input otherwise.
TensorFormat detect_format(std::span<const std::byte> bytes);

struct ReadOptions {
  std::optional<DType> default_dtype;  // for JSON without a dtype
};

struct LoadedTensor {
  Tensor tensor;
  TensorFormat format{};
  std::optional<NpyHeader> npy;  // for .npy input
};

// Reads a tensor file ("-" for standard input). Errors carry the context "reading 'PATH'".
LoadedTensor read_tensor(const std::string& path, const ReadOptions& options = {});
// The same from bytes already in memory; `path` is only for messages.
LoadedTensor read_tensor_bytes(std::span<const std::byte> bytes, const std::string& path,
                               const ReadOptions& options = {});

// The format an output path implies: ".npy" or ".json" (case-insensitive); nullopt otherwise.
std::optional<TensorFormat> format_from_extension(std::string_view path);

// An output file that appears complete or not at all. For "-" it writes to standard output
// directly. Errors carry the context "writing 'PATH'".
class OutputFile {
 public:
  explicit OutputFile(std::string path);
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  ~OutputFile();  // removes the temporary file unless commit() succeeded

  void write(std::span<const std::byte> data);
  void write(std::string_view text) { write(std::as_bytes(std::span(text.data(), text.size()))); }
  // Closes and renames the temporary file over the destination.
  void commit();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::string temp_path_;
  int fd_ = -1;
  bool committed_ = false;
};

// Writes `t` in `format` to `path` ("-" for standard output), atomically for files.
void write_tensor(const TensorView& t, const std::string& path, TensorFormat format,
                  const JsonWriteOptions& json = {});

// Writes `text` to `path` atomically, like write_tensor (reports, models, JUnit XML).
void write_text_file(const std::string& path, std::string_view text);

}  // namespace dmlbits

// Files in and out: reading a tensor from a path or standard input with its format detected
// from the content, and writing through OutputFile, which never leaves a partial file: data goes
// to an unnamed file in the destination's folder (a named temporary file where the file system
// or platform has none) and takes the destination's name on commit().
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "json_tensor.hpp"
#include "memory.hpp"
#include "npy.hpp"
#include "dmlbits/front_end.hpp"
#include "dmlbits/tensor.hpp"

namespace dmlbits {

struct InputSummary;
struct InputContent;
class File;
class PendingFile;

// The bytes of a file, or of standard input ("-"), read into memory with read(2). Files are not
// memory-mapped: a mapped file that another process truncates kills the reader with SIGBUS,
// while a short read is an ordinary error ("file shrank while reading: ...", Errc::io).
// Input that is not .npy is JSON to every caller, and is refused beyond kMaxJsonInputBytes
// (Errc::invalid_input): a regular file from its size, before its data is read; a pipe as soon
// as it passes the bound, so memory stays within the bound either way.
// Errors opening the input name it ("cannot open 'a.npy': ..."); the others leave it to the
// caller's context ("reading 'a.npy': ...").
class InputBytes {
 public:
  static InputBytes open(const std::string& path);
  // `prefix` (bytes a caller already read from standard input) followed by the rest of it.
  static InputBytes read_rest_of_stdin(std::vector<std::byte> prefix);
  InputBytes(InputBytes&&) noexcept;
  InputBytes& operator=(InputBytes&&) noexcept;
  ~InputBytes();
  std::span<const std::byte> bytes() const { return {buffer_.data(), buffer_.size()}; }

  // A byte vector whose resize() leaves new bytes uninitialised: they are about to be read over,
  // and zeroing them first would touch every page twice. Its memory is allocate_buffer's
  // (huge pages when large), not prefaulted: a reservation (JSON from a pipe) stays untouched
  // until data arrives in it.
  template <class T>
  struct UninitAllocator : std::allocator<T> {
    template <class U>
    struct rebind {
      using other = UninitAllocator<U>;
    };
    UninitAllocator() = default;
    template <class U>
    UninitAllocator(const UninitAllocator<U>&) noexcept {}
    template <class U>
    void construct(U* p) noexcept {
      ::new (static_cast<void*>(p)) U;
    }
    T* allocate(std::size_t n) { return reinterpret_cast<T*>(allocate_buffer(n * sizeof(T))); }
    void deallocate(T* p, std::size_t n) noexcept { free_buffer(reinterpret_cast<std::byte*>(p), n * sizeof(T)); }
  };
  using Buffer = std::vector<std::byte, UninitAllocator<std::byte>>;

 private:
  friend struct InputReader;
  friend InputSummary inspect_input(const std::string& path);
  friend InputContent read_input(const std::string& path);
  InputBytes() = default;
  Buffer buffer_;
};

// An input read whole, as an operation needs it: .npy as a tensor (C order, native byte order,
// as read_npy gives it), anything else as the bytes of JSON text. A regular .npy file's data
// goes straight into the tensor's storage through NpyDecoder, converted as it arrives, so the
// file is never held in memory as well; its header is checked against the file's size first,
// so a header that promises more data than there is allocates nothing. Standard input, and
// anything else whose length is unknown until its end, is read whole (InputBytes) and then
// converted. Errors are those of InputBytes::open, read_npy and detect_format, with the
// caller's context to add ("reading 'a.npy': ..."); a regular file that shrinks while it is
// read is "file shrank while reading: expected N bytes, found M" (Errc::io), N and M counting
// the whole file.
struct InputContent {
  TensorFormat format{};
  std::optional<NpyHeader> npy;    // .npy
  Tensor tensor;                   // .npy
  std::optional<InputBytes> json;  // JSON
};
InputContent read_input(const std::string& path);

// What `dmlbits info` needs from an input, with its data left unread: for .npy, the header,
// checked against the length of the data (a regular file's size, or a pipe read through and
// counted, not kept), so that inspecting a file of any size costs a few KiB; for JSON, the
// whole text (within kMaxJsonInputBytes). Errors other than opening carry the context
// "reading 'PATH'".
struct InputSummary {
  TensorFormat format{};
  std::optional<NpyHeader> npy;
  std::optional<InputBytes> json;
};
InputSummary inspect_input(const std::string& path);

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

// An output file that appears complete or not at all, even if the process is killed while
// writing it (files.hpp, PendingFile, says how, and what is left where the platform cannot
// do better). For "-" it writes to standard output directly; a device, FIFO or a kernel's link
// to an open file (/dev/stdout, /dev/fd/N: names_open_descriptor) is written in place, as cp
// and tee do (a regular file behind such a link is truncated first; standard output's own
// file is written through standard output). Errors carry the context "writing 'PATH'".
class OutputFile {
 public:
  explicit OutputFile(std::string path);
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  ~OutputFile();  // discards the unfinished file unless commit() succeeded

  void write(std::span<const std::byte> data);
  void write(std::string_view text) { write(std::as_bytes(std::span(text.data(), text.size()))); }
  // Whether write_at() may be used: the output is a new file named on commit() (not standard
  // output, a device or a pipe, which are written in order).
  bool writes_at_offsets() const { return pending_ != nullptr; }
  // Writes `data` at byte `offset` of the file; threads may write disjoint ranges at once. Only
  // when writes_at_offsets(), and not mixed with write() after the first write_at().
  void write_at(std::uint64_t offset, std::span<const std::byte> data);
  // Gives the complete file the destination's name (flushed first with set_sync_outputs).
  void commit();
  const std::string& path() const { return path_; }

 private:
  File& file();
  std::string path_;
  std::unique_ptr<File> file_;            // written in place: standard output, a device
  std::unique_ptr<PendingFile> pending_;  // a file to name on commit()
};

// Whether `path` is an existing device, FIFO or socket, or a kernel's link to an open file
// (/dev/stdout): written in place, never replaced.
bool is_device_or_pipe(const std::string& path);

// Writes `t` in `format` to `path` ("-" for standard output), atomically for files.
void write_tensor(const TensorView& t, const std::string& path, TensorFormat format, const JsonWriteOptions& json = {});

// write_tensor and write_text_file without the commit: the file, complete, for the caller to
// commit() together with others (all or nothing), or to drop, which leaves nothing.
std::unique_ptr<OutputFile> prepare_tensor_file(const TensorView& t, const std::string& path, TensorFormat format,
                                                const JsonWriteOptions& json = {});
std::unique_ptr<OutputFile> prepare_text_file(const std::string& path, std::string_view text);

}  // namespace dmlbits

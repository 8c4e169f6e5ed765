// An .npy input read in chunks instead of all at once: a regular file through pread, or a
// pipe (standard input) through sequential reads. Only data that needs no conversion streams:
// C order and native byte order; anything else is read whole (read_npy).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "npy.hpp"
#include "files.hpp"

namespace dmlbits {

class NpyStream {
 public:
  // Opens `path` ("-" for standard input). Returns nullptr when the input is not an .npy file
  // or its data cannot stream; for a pipe, the bytes already read are left in `consumed` so
  // the caller can read the rest and parse the whole. Errors leave the path to the caller's
  // context (load_operands adds "reading 'PATH'"), but for "cannot open 'PATH'"; a regular
  // file whose size disagrees with its header is refused here, before any output, whatever
  // its layout. Errors of read() and finish() carry "reading 'PATH'"; a regular file that
  // shrank since open() is Errc::io ("file shrank while reading"), a pipe that ends early
  // Errc::invalid_input ("truncated").
  static std::unique_ptr<NpyStream> open(const std::string& path, std::vector<std::byte>& consumed);
  ~NpyStream();
  NpyStream(const NpyStream&) = delete;
  NpyStream& operator=(const NpyStream&) = delete;

  const NpyHeader& header() const { return header_; }
  const std::string& path() const { return path_; }
  // Reads elements [first, first + count) into dst. A pipe must be read in order; a regular
  // file may be read by several threads at once (at different offsets).
  void read(std::uint64_t first, std::size_t count, std::byte* dst);
  // Whether it is read at offsets (a regular file named by its path), not in order (a pipe,
  // standard input).
  bool seekable() const { return seekable_; }
  // For a pipe: checks that nothing follows the data.
  void finish();
  // Lets the file go (read() no longer works; header() still does), so that an output may
  // replace it (--in-place), which Windows refuses while it is open.
  void close() { file_ = File(); }
  // The whole array as a tensor (for inputs that are broadcast rather than streamed).
  Tensor read_all();

 private:
  NpyStream() = default;
  std::string path_;
  File file_;  // standard input is not closed by it
  bool seekable_ = false;
  std::uint64_t position_ = 0;  // pipes: element index of the next read
  NpyHeader header_;
};

}  // namespace dmlbits

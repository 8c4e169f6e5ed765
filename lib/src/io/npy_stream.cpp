#include "npy_stream.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "dmlbits/error.hpp"
#include "dmlbits/interrupt.hpp"

namespace dmlbits {
namespace {

// `context` is "" in open(), whose caller adds "reading 'PATH'", and that context elsewhere.
[[noreturn]] void io_fail(const std::string& context, std::string_view what) {
  throw Error(Errc::io, fmt::format("{}{}: {}", context, what, std::strerror(errno)));
}

// Reads up to `size` bytes at `offset` (or sequentially); returns the count read (< size at
// end of file).
std::size_t read_some(int fd, bool seekable, std::uint64_t offset, std::byte* dst, std::size_t size,
                      const std::string& context) {
  std::size_t done = 0;
  while (done < size) {
    const ssize_t n = seekable ? ::pread(fd, dst + done, size - done, static_cast<off_t>(offset + done))
                               : ::read(fd, dst + done, size - done);
    if (n < 0) {
      if (errno == EINTR) {
        throw_if_interrupted();
        continue;
      }
      io_fail(context, "read failed");
    }
    if (n == 0) break;
    done += static_cast<std::size_t>(n);
  }
  return done;
}

}  // namespace

NpyStream::~NpyStream() {
  if (owns_fd_ && fd_ >= 0) ::close(fd_);
}

std::unique_ptr<NpyStream> NpyStream::open(const std::string& path, std::vector<std::byte>& consumed) {
  std::unique_ptr<NpyStream> s(new NpyStream);
  s->path_ = path;
  if (path == "-") {
    s->fd_ = STDIN_FILENO;
  } else {
    s->fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (s->fd_ < 0) throw Error(Errc::io, fmt::format("cannot open {}: {}", quote_path(path), std::strerror(errno)));
    s->owns_fd_ = true;
  }
  struct stat st {};
  if (::fstat(s->fd_, &st) != 0) io_fail("", "cannot stat");
  if (S_ISDIR(st.st_mode)) {
    errno = EISDIR;
    io_fail("", "cannot read");
  }
  // Standard input is read in order even when it is a regular file (`< a.npy`): its offset may
  // not be 0, and a caller that reads it whole after a nullptr must find it past `consumed`.
  s->seekable_ = S_ISREG(st.st_mode) && path != "-";
  // The header: magic, version, length, then the dict.
  consumed.resize(12);
  std::size_t got = read_some(s->fd_, s->seekable_, 0, consumed.data(), consumed.size(), "");
  consumed.resize(got);
  if (!is_npy(consumed) || got < 10) return nullptr;
  const int major = std::to_integer<int>(consumed[6]);
  const std::size_t prefix = major == 1 ? 10 : 12;
  std::size_t header_len = std::to_integer<std::size_t>(consumed[8]) | (std::to_integer<std::size_t>(consumed[9]) << 8);
  if (major != 1 && got >= 12)
    header_len |= (std::to_integer<std::size_t>(consumed[10]) << 16) | (std::to_integer<std::size_t>(consumed[11]) << 24);
  if (header_len > kMaxNpyHeaderBytes)  // refused from the length alone (not read whole to say why)
    parse_npy_header(consumed);
  const std::size_t want = prefix + header_len;
  if (want > consumed.size()) {
    const std::size_t have = consumed.size();
    consumed.resize(want);
    consumed.resize(have + read_some(s->fd_, s->seekable_, have, consumed.data() + have, want - have, ""));
  }
  NpyHeader h = parse_npy_header(consumed);
  if (s->seekable_) {  // before anything is read whole, or any output made
    const auto size = static_cast<std::uint64_t>(st.st_size);
    const std::uint64_t found = size > h.data_offset ? size - h.data_offset : 0;
    check_npy_data_size(h, found);
  }
  if (h.fortran_order && h.shape.rank() > 1) return nullptr;
  if (h.needs_swap()) return nullptr;
  if (!s->seekable_ && consumed.size() > h.data_offset) {
    return nullptr;  // the pipe already gave us data bytes; let the whole-input reader have them
  }
  s->header_ = h;
  consumed.clear();
  return s;
}

void NpyStream::read(std::uint64_t first, std::size_t count, std::byte* dst) {
  const std::size_t size = dtype_info(header_.dtype).size;
  const std::size_t bytes = count * size;
  if (!seekable_ && first != position_)
    throw Error(Errc::internal, "a pipe must be read in order");
  const std::size_t got =
      read_some(fd_, seekable_, header_.data_offset + first * size, dst, bytes, fmt::format("reading {}: ", quote_path(path_)));
  if (got < bytes) {
    // A regular file's size was checked at open, so a short read means another program cut it
    // since: an I/O failure, not a malformed file. A pipe that ends early is truncated input.
    if (seekable_)
      throw Error(Errc::io, fmt::format("reading {}: file shrank while reading: expected {} bytes of data, found {}",
                                        quote_path(path_), header_.data_bytes, first * size + got));
    throw Error(Errc::invalid_input, fmt::format("reading {}: truncated: expected {} bytes of data, found {}",
                                                 quote_path(path_), header_.data_bytes, first * size + got));
  }
  position_ = first + count;
}

void NpyStream::finish() {
  if (seekable_) return;
  std::byte extra[1];
  if (read_some(fd_, false, 0, extra, 1, fmt::format("reading {}: ", quote_path(path_))) != 0)
    throw Error(Errc::invalid_input,
                fmt::format("reading {}: trailing garbage after {} bytes of data", quote_path(path_), header_.data_bytes));
}

Tensor NpyStream::read_all() {
  Tensor t(header_.dtype, header_.shape);
  read(0, static_cast<std::size_t>(t.element_count()), t.data());
  finish();
  return t;
}

}  // namespace dmlbits

#include "dmlbits/io.hpp"

#include <fcntl.h>
#include <limits.h>  // NAME_MAX
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>  // renameat2
#include <algorithm>
#include <cstring>
#include <cstdint>
#include <utility>

#include <fmt/format.h>

#include "byte_size.hpp"
#include "dmlbits/error.hpp"
#include "dmlbits/interrupt.hpp"

namespace dmlbits {
namespace {

[[noreturn]] void io_fail(std::string_view what) {
  throw Error(Errc::io, fmt::format("{}: {}", what, std::strerror(errno)));
}

std::string directory_of(const std::string& path) {
  const auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string base_name(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The mkstemp template for an output named `base`: ".BASE.dmlbits-XXXXXX", with BASE cut short
// when the whole would pass NAME_MAX (255 bytes), so that names of 241 to 255 bytes can be
// written too. The cut falls between UTF-8 characters, keeping the name readable.
std::string temporary_name(const std::string& base) {
  constexpr std::string_view kSuffix = ".dmlbits-XXXXXX";
  constexpr std::size_t kMaxBase = NAME_MAX - 1 - kSuffix.size();
  std::size_t keep = std::min(base.size(), kMaxBase);
  while (keep > 0 && keep < base.size() && (static_cast<unsigned char>(base[keep]) & 0xC0) == 0x80) --keep;
  return "." + base.substr(0, keep) + std::string(kSuffix);
}

void write_all(int fd, const std::byte* data, std::size_t size) {
  constexpr std::size_t kMaxWrite = 8 << 20;  // bounded writes, so that an interrupt is seen
  while (size > 0) {
    throw_if_interrupted();
    const ssize_t n = ::write(fd, data, std::min(size, kMaxWrite));
    if (n < 0) {
      if (errno == EINTR) continue;
      // The reader of a pipe went away (`| head`): the end of the run, not a failure to report.
      if (errno == EPIPE) throw Error(Errc::broken_pipe, "write failed: the reader closed the pipe");
      io_fail("write failed");
    }
    data += n;
    size -= static_cast<std::size_t>(n);
  }
}

}  // namespace

std::string_view format_name(TensorFormat f) { return f == TensorFormat::npy ? "npy" : "json"; }

std::optional<TensorFormat> parse_format_name(std::string_view name) {
  if (name == "npy") return TensorFormat::npy;
  if (name == "json") return TensorFormat::json;
  return std::nullopt;
}

InputBytes::InputBytes(InputBytes&&) noexcept = default;
InputBytes& InputBytes::operator=(InputBytes&&) noexcept = default;
InputBytes::~InputBytes() = default;

namespace {

constexpr std::size_t kReadChunk = 8 << 20;  // bounded reads, so that an interrupt is seen
constexpr std::size_t kHeadBytes = 4096;     // enough to tell .npy from JSON from neither

// Reads `size` bytes, or fewer at the end of the input.
std::size_t read_full(int fd, std::byte* dst, std::size_t size, const std::string& path) {
  std::size_t done = 0;
  while (done < size) {
    throw_if_interrupted();
    const ssize_t n = ::read(fd, dst + done, std::min(size - done, kReadChunk));
    if (n < 0) {
      if (errno == EINTR) continue;
      io_fail(fmt::format("cannot read {}", quote_path(path)));
    }
    if (n == 0) break;
    done += static_cast<std::size_t>(n);
  }
  return done;
}

[[noreturn]] void file_shrank(std::uint64_t expected, std::uint64_t found) {
  throw Error(Errc::io, fmt::format("file shrank while reading: expected {} bytes, found {}", expected, found));
}

// Input over the JSON bound: if its first bytes are neither .npy nor JSON, that is the error.
[[noreturn]] void refuse_large(std::span<const std::byte> head, const std::string& has) {
  detect_format(head.subspan(0, std::min(head.size(), kHeadBytes)));
  fail_json_too_large(has);
}

}  // namespace

// Fills an InputBytes buffer from a descriptor.
struct InputReader {
  int fd;
  const std::string& path;
  InputBytes::Buffer& buf;

  // A regular file of `size` bytes (at fstat): the head first, so that a JSON file over the
  // bound is refused before its data is read; then exactly `size` bytes, fewer being an error.
  void read_file(std::uint64_t size) {
    read_head(size);
    read_rest(size);
  }

  void read_head(std::uint64_t size) {
    const std::size_t head = static_cast<std::size_t>(std::min<std::uint64_t>(size, kHeadBytes));
    buf.resize(head);
    const std::size_t got = read_full(fd, buf.data(), head, path);
    if (got < head) file_shrank(size, got);
    if (!is_npy(buf) && size > kMaxJsonInputBytes)
      refuse_large(buf, fmt::format("this file is {}", format_byte_size(size)));
  }

  void read_rest(std::uint64_t size) {
    const std::size_t head = buf.size();
    buf.resize(static_cast<std::size_t>(size));
    const std::size_t got = head + read_full(fd, buf.data() + head, buf.size() - head, path);
    if (got < size) file_shrank(size, got);
    // A file that grew since fstat is read on to its new end.
    std::byte probe;
    if (read_full(fd, &probe, 1, path) == 0) return;
    buf.push_back(probe);
    read_stream("the file grew past it while being read");
  }

  // An .npy regular file of `size` bytes after read_head(): the rest of a long header, then the
  // data straight into the tensor, with the same messages as reading the whole file into memory
  // and then read_npy gave. Leaves the header in `h`.
  Tensor read_npy_file(std::uint64_t size, NpyHeader& h) {
    if (buf.size() >= 10) {
      // parse_npy_header needs the whole header, or the whole file if that is shorter (its
      // "truncated header" message counts what the file has).
      const int major = std::to_integer<int>(buf[6]);
      std::size_t header_len = std::to_integer<std::size_t>(buf[8]) | (std::to_integer<std::size_t>(buf[9]) << 8);
      if (major != 1 && buf.size() >= 12)
        header_len |= (std::to_integer<std::size_t>(buf[10]) << 16) | (std::to_integer<std::size_t>(buf[11]) << 24);
      if (header_len <= kMaxNpyHeaderBytes) {  // otherwise parse_npy_header says so from the length
        const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(size, (major == 1 ? 10 : 12) + header_len));
        const std::size_t have = buf.size();
        if (want > have) {
          buf.resize(want);
          const std::size_t got = have + read_full(fd, buf.data() + have, want - have, path);
          if (got < want) file_shrank(size, got);
        }
      }
    }
    h = parse_npy_header(buf);  // the buffer holds the file if it is shorter than the header says
    check_npy_data_size(h, size - h.data_offset);  // before the tensor is allocated
    if (::lseek(fd, static_cast<off_t>(h.data_offset), SEEK_SET) < 0)
      io_fail(fmt::format("cannot seek in {}", quote_path(path)));
    NpyDecoder decoder(h);
    for (std::size_t i = 0; i < decoder.pieces(); ++i) {
      const std::span<std::byte> piece = decoder.buffer(i);
      const std::size_t got = read_full(fd, piece.data(), piece.size(), path);
      if (got < piece.size()) file_shrank(size, h.data_offset + decoder.offset(i) + got);
      decoder.convert(i);
    }
    // A file that grew since fstat: counted to its new end (not kept) for the message.
    std::byte probe;
    if (read_full(fd, &probe, 1, path) != 0) {
      std::uint64_t more = 1;
      std::vector<std::byte> sink(1 << 16);
      while (const std::size_t n = read_full(fd, sink.data(), sink.size(), path)) more += n;
      check_npy_data_size(h, h.data_bytes + more);  // "trailing garbage"
    }
    return decoder.take();
  }

  // Appends the rest of a pipe (or of a growing file) up to its end; input that is not .npy
  // stops one byte past the JSON bound, so memory never holds much more than the bound.
  void read_stream(const std::string& has_more) {
    for (;;) {
      const bool bounded = buf.size() >= 6 && !is_npy(buf);
      if (bounded && buf.size() > kMaxJsonInputBytes) refuse_large(buf, has_more);
      std::size_t want = std::max<std::size_t>(buf.size(), std::size_t{1} << 16);
      if (bounded) {
        want = std::min<std::size_t>(want, kMaxJsonInputBytes + 1 - buf.size());
        // Text past the first read grows in place up to the bound: doubling would copy the
        // old buffer into one twice its size, holding three times the bound at the peak. The
        // allocator leaves the reserved pages untouched until data arrives in them.
        if (buf.size() >= (std::size_t{1} << 16) && buf.capacity() < kMaxJsonInputBytes + 1)
          buf.reserve(kMaxJsonInputBytes + 1);
      }
      const std::size_t used = buf.size();
      buf.resize(used + want);
      const std::size_t n = read_full(fd, buf.data() + used, want, path);
      buf.resize(used + n);
      if (n < want) {
        if (bounded && buf.size() > kMaxJsonInputBytes) refuse_large(buf, has_more);
        return;
      }
    }
  }
};

namespace {
// Opens `path` for reading ("-": standard input, which stays open), refuses a folder, and
// returns f(fd, stat, is_stdin); a file is closed however f ends.
template <class F>
auto with_input_fd(const std::string& path, F&& f) {
  const bool is_stdin = path == "-";
  const int fd = is_stdin ? STDIN_FILENO : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) io_fail(fmt::format("cannot open {}", quote_path(path)));
  struct FdCloser {
    int fd;
    bool close;
    ~FdCloser() {
      if (close) ::close(fd);
    }
  } closer{fd, !is_stdin};
  struct stat st {};
  if (::fstat(fd, &st) != 0) io_fail(fmt::format("cannot stat {}", quote_path(path)));
  if (S_ISDIR(st.st_mode)) {
    errno = EISDIR;
    io_fail(fmt::format("cannot read {}", quote_path(path)));
  }
  return f(fd, st, is_stdin);
}
}  // namespace

InputBytes InputBytes::open(const std::string& path) {
  return with_input_fd(path, [&](int fd, const struct stat& st, bool is_stdin) {
    InputBytes in;
    InputReader reader{fd, path, in.buffer_};
    // Standard input redirected from a file is read from where its offset stands, as a stream.
    if (S_ISREG(st.st_mode) && !is_stdin) reader.read_file(static_cast<std::uint64_t>(st.st_size));
    else reader.read_stream(is_stdin ? "standard input has more" : "the input has more");
    return in;
  });
}

InputContent read_input(const std::string& path) {
  return with_input_fd(path, [&](int fd, const struct stat& st, bool is_stdin) {
    InputContent out;
    InputBytes in;
    InputReader reader{fd, path, in.buffer_};
    // Standard input redirected from a file is read from where its offset stands, as a stream.
    if (S_ISREG(st.st_mode) && !is_stdin) {
      const auto size = static_cast<std::uint64_t>(st.st_size);
      reader.read_head(size);
      if (is_npy(in.buffer_)) {
        out.format = TensorFormat::npy;
        out.tensor = reader.read_npy_file(size, out.npy.emplace());
        return out;
      }
      reader.read_rest(size);
    } else {
      reader.read_stream(is_stdin ? "standard input has more" : "the input has more");
    }
    out.format = detect_format(in.bytes());
    if (out.format == TensorFormat::npy) {
      out.npy = inspect_npy(in.bytes());
      out.tensor = read_npy(in.bytes());
    } else {
      out.json = std::move(in);
    }
    return out;
  });
}

InputBytes InputBytes::read_rest_of_stdin(std::vector<std::byte> prefix) {
  InputBytes in;
  in.buffer_.assign(prefix.begin(), prefix.end());
  InputReader{STDIN_FILENO, "-", in.buffer_}.read_stream("standard input has more");
  return in;
}

TensorFormat detect_format(std::span<const std::byte> bytes) {
  if (is_npy(bytes)) return TensorFormat::npy;
  // A UTF-8 byte-order mark, which some Windows editors write, starts JSON text too (the JSON
  // parser skips it).
  if (bytes.size() >= 3 && bytes[0] == std::byte{0xEF} && bytes[1] == std::byte{0xBB} && bytes[2] == std::byte{0xBF})
    bytes = bytes.subspan(3);
  for (std::byte b : bytes) {
    const char c = static_cast<char>(b);
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') continue;
    if (c == '[' || c == '{' || c == '-' || c == '"' || (c >= '0' && c <= '9')) return TensorFormat::json;
    break;
  }
  if (bytes.empty()) throw Error(Errc::invalid_input, "empty input (neither .npy nor JSON)");
  throw Error(Errc::invalid_input, "unrecognised format (neither .npy nor JSON)");
}

LoadedTensor read_tensor_bytes(std::span<const std::byte> bytes, const std::string& path,
                               const ReadOptions& options) {
  return with_context(fmt::format("reading {}", quote_path(path)), [&] {
    LoadedTensor out;
    out.format = detect_format(bytes);
    if (out.format == TensorFormat::npy) {
      out.npy = inspect_npy(bytes);
      out.tensor = read_npy(bytes);
    } else {
      const std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
      out.tensor = read_json_tensor(text, JsonReadOptions{options.default_dtype});
    }
    return out;
  });
}

LoadedTensor read_tensor(const std::string& path, const ReadOptions& options) {
  InputContent in = with_context(fmt::format("reading {}", quote_path(path)), [&] { return read_input(path); });
  if (in.format == TensorFormat::npy) return LoadedTensor{std::move(in.tensor), TensorFormat::npy, in.npy};
  return read_tensor_bytes(in.json->bytes(), path, options);
}

InputSummary inspect_input(const std::string& path) {
  return with_input_fd(path, [&](int fd, const struct stat& st, bool is_stdin) {
    return with_context(fmt::format("reading {}", quote_path(path)), [&] {
      InputSummary out;
      InputBytes in;
      InputReader reader{fd, path, in.buffer_};
      // The magic, version and header length: 12 bytes, or the whole input if shorter.
      in.buffer_.resize(12);
      in.buffer_.resize(read_full(fd, in.buffer_.data(), in.buffer_.size(), path));
      const bool regular = S_ISREG(st.st_mode) && !is_stdin;
      if (!is_npy(in.buffer_)) {
        if (regular) {  // from the start, as InputBytes::open reads it: the JSON bound from the size
          if (::lseek(fd, 0, SEEK_SET) != 0) io_fail(fmt::format("cannot seek in {}", quote_path(path)));
          in.buffer_.clear();
          reader.read_file(static_cast<std::uint64_t>(st.st_size));
        } else {
          reader.read_stream(is_stdin ? "standard input has more" : "the input has more");
        }
        out.format = detect_format(in.bytes());
        out.json = std::move(in);
        return out;
      }
      // An .npy header, then only the data's length.
      if (in.buffer_.size() < 10) parse_npy_header(in.bytes());  // "truncated header"
      const int major = std::to_integer<int>(in.buffer_[6]);
      std::size_t header_len = std::to_integer<std::size_t>(in.buffer_[8]) | (std::to_integer<std::size_t>(in.buffer_[9]) << 8);
      if (major != 1 && in.buffer_.size() >= 12)
        header_len |= (std::to_integer<std::size_t>(in.buffer_[10]) << 16) | (std::to_integer<std::size_t>(in.buffer_[11]) << 24);
      if (header_len <= kMaxNpyHeaderBytes) {  // otherwise parse_npy_header says so from the length
        const std::size_t want = (major == 1 ? 10 : 12) + header_len;
        const std::size_t have = in.buffer_.size();
        if (want > have) {
          in.buffer_.resize(want);
          in.buffer_.resize(have + read_full(fd, in.buffer_.data() + have, want - have, path));
        }
      }
      const NpyHeader h = parse_npy_header(in.bytes());
      std::uint64_t found = in.buffer_.size() - h.data_offset;
      if (regular) {
        const auto size = static_cast<std::uint64_t>(st.st_size);
        found = size > h.data_offset ? size - h.data_offset : 0;
      } else {
        // A pipe: count the rest without keeping it.
        std::vector<std::byte> sink(1 << 16);
        while (const std::size_t n = read_full(fd, sink.data(), sink.size(), path)) found += n;
      }
      check_npy_data_size(h, found);
      out.format = TensorFormat::npy;
      out.npy = h;
      return out;
    });
  });
}

std::optional<TensorFormat> format_from_extension(std::string_view path) {
  auto ends_with = [&](std::string_view ext) {
    if (path.size() < ext.size()) return false;
    for (std::size_t i = 0; i < ext.size(); ++i)
      if (std::tolower(static_cast<unsigned char>(path[path.size() - ext.size() + i])) != ext[i]) return false;
    return true;
  };
  if (ends_with(".npy")) return TensorFormat::npy;
  if (ends_with(".json")) return TensorFormat::json;
  return std::nullopt;
}

namespace {

// Puts `temp` in place of an existing regular file at `path` by exchanging the two names
// (renameat2 RENAME_EXCHANGE) and then removing the old file, now at `temp`. Readers see the
// old file or the new one, as with rename(). The reason: rename() over an existing file makes
// ext4 (auto_da_alloc) start write-back of the whole new file inside the call, 0.17-0.19 s for
// 256 MiB on the test host, more than reading, computing and writing it took; the exchange
// leaves write-back to the kernel's usual timing. Returns false, having changed nothing, when
// there is no regular file to replace or the file system cannot exchange; rename() then does.
bool replace_by_exchange(const std::string& temp, const std::string& path) {
#ifdef RENAME_EXCHANGE
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  if (::renameat2(AT_FDCWD, temp.c_str(), AT_FDCWD, path.c_str(), RENAME_EXCHANGE) != 0) return false;
  if (::unlink(temp.c_str()) == 0 || errno == ENOENT) return true;
  // Whatever came back (a folder swapped in since the lstat, say) is not ours to remove: swap back.
  const int err = errno;
  ::renameat2(AT_FDCWD, temp.c_str(), AT_FDCWD, path.c_str(), RENAME_EXCHANGE);
  errno = err;
  io_fail("cannot remove the replaced file");
#else
  (void)temp;
  (void)path;
  return false;
#endif
}

}  // namespace

OutputFile::OutputFile(std::string path) : path_(std::move(path)) {
  with_context(fmt::format("writing {}", path_ == "-" ? std::string("standard output") : quote_path(path_)), [&] {
    if (path_ == "-") {
      fd_ = STDOUT_FILENO;
      return;
    }
    if (path_.empty() || path_.back() == '/') {
      errno = EISDIR;
      io_fail("not a file name");
    }
    struct stat st {};
    if (::stat(path_.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
      // A device or FIFO (/dev/null, a named pipe) is written in place: it cannot be renamed over.
      fd_ = ::open(path_.c_str(), O_WRONLY | O_CLOEXEC);
      if (fd_ < 0) io_fail("cannot open");
      return;
    }
    std::string tmpl = directory_of(path_) + "/" + temporary_name(base_name(path_));
    fd_ = ::mkstemp(tmpl.data());
    if (fd_ < 0) io_fail(fmt::format("cannot create a temporary file in '{}'", directory_of(path_)));
    temp_path_ = tmpl;
    struct stat old {};
    if (::lstat(path_.c_str(), &old) == 0 && S_ISREG(old.st_mode)) {
      // Replacing a file keeps its owner (where permitted) and mode, as sed -i does: a 0600
      // file must not become readable by others because dmlbits rewrote it. The owner first:
      // chown clears the set-user-ID and set-group-ID bits that fchmod then restores.
      if (old.st_uid != ::geteuid() || old.st_gid != ::getegid()) (void)::fchown(fd_, old.st_uid, old.st_gid);
      ::fchmod(fd_, old.st_mode & 07777);
    } else {
      // mkstemp makes the file 0600; a new file gets the mode creat() would give (0666 & ~umask).
      const mode_t mask = ::umask(0);
      ::umask(mask);
      ::fchmod(fd_, 0666 & ~mask);
    }
  });
}

void check_output_path(const std::string& path) {
  if (path == "-") return;
  with_context(fmt::format("writing {}", quote_path(path)), [&] {
    if (path.empty() || path.back() == '/') {
      errno = EISDIR;
      io_fail("not a file name");
    }
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0) {
      if (S_ISDIR(st.st_mode)) {
        errno = EISDIR;
        io_fail("cannot write");
      }
      if (!S_ISREG(st.st_mode)) {  // a device or FIFO is opened in place
        if (::access(path.c_str(), W_OK) != 0) io_fail("cannot open");
        return;
      }
    }
    // A new or replaced file is created in its folder, which must exist and be writable.
    const std::string dir = directory_of(path);
    struct stat dst {};
    if (::stat(dir.c_str(), &dst) != 0) io_fail(fmt::format("cannot create a file in '{}'", dir));
    if (!S_ISDIR(dst.st_mode)) {
      errno = ENOTDIR;
      io_fail(fmt::format("cannot create a file in '{}'", dir));
    }
    if (::access(dir.c_str(), W_OK | X_OK) != 0) io_fail(fmt::format("cannot create a file in '{}'", dir));
  });
}

OutputFile::~OutputFile() {
  if (!temp_path_.empty() && !committed_) ::unlink(temp_path_.c_str());
  if (fd_ > STDERR_FILENO) ::close(fd_);
}

void OutputFile::write(std::span<const std::byte> data) {
  with_context(fmt::format("writing {}", path_ == "-" ? std::string("standard output") : quote_path(path_)),
               [&] { write_all(fd_, data.data(), data.size()); });
}

void OutputFile::commit() {
  with_context(fmt::format("writing {}", path_ == "-" ? std::string("standard output") : quote_path(path_)), [&] {
    if (temp_path_.empty()) return;  // standard output or a device: nothing to rename
    // No fsync: like cp and sed -i, dmlbits relies on rename's atomicity for readers, not on
    // durability across a power cut, which would cost a disk flush per run.
    if (::close(fd_) != 0) {
      fd_ = -1;
      io_fail("close failed");
    }
    fd_ = -1;
    if (!replace_by_exchange(temp_path_, path_) && ::rename(temp_path_.c_str(), path_.c_str()) != 0)
      io_fail("cannot rename the temporary file into place");
    committed_ = true;
  });
}

void write_text_file(const std::string& path, std::string_view text) {
  OutputFile out(path);
  out.write(text);
  out.commit();
}

void write_tensor(const TensorView& t, const std::string& path, TensorFormat format, const JsonWriteOptions& json) {
  OutputFile out(path);
  if (format == TensorFormat::npy) {
    out.write(npy_header(t.dtype, t.shape));
    out.write(t.bytes());
  } else {
    out.write(write_json_tensor(t, json));
  }
  out.commit();
}

}  // namespace dmlbits

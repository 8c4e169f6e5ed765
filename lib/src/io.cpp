#include "dmlbits/io.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <cstring>
#include <utility>

#include <fmt/format.h>

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

void write_all(int fd, const std::byte* data, std::size_t size) {
  constexpr std::size_t kMaxWrite = 8 << 20;  // bounded writes, so that an interrupt is seen
  while (size > 0) {
    throw_if_interrupted();
    const ssize_t n = ::write(fd, data, std::min(size, kMaxWrite));
    if (n < 0) {
      if (errno == EINTR) continue;
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

InputBytes::InputBytes(InputBytes&& o) noexcept { *this = std::move(o); }

InputBytes& InputBytes::operator=(InputBytes&& o) noexcept {
  if (this != &o) {
    if (mapped_) ::munmap(const_cast<std::byte*>(data_), size_);
    data_ = std::exchange(o.data_, nullptr);
    size_ = std::exchange(o.size_, 0);
    mapped_ = std::exchange(o.mapped_, false);
    buffer_ = std::move(o.buffer_);
    if (!mapped_) data_ = buffer_.data();
  }
  return *this;
}

InputBytes::~InputBytes() {
  if (mapped_) ::munmap(const_cast<std::byte*>(data_), size_);
}

InputBytes InputBytes::open(const std::string& path) {
  InputBytes in;
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
  if (S_ISREG(st.st_mode) && st.st_size > 0) {
    void* p = ::mmap(nullptr, static_cast<std::size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
    if (p != MAP_FAILED) {
      in.data_ = static_cast<const std::byte*>(p);
      in.size_ = static_cast<std::size_t>(st.st_size);
      in.mapped_ = true;
      return in;
    }
  }
  // Pipes, terminals, and files that cannot be mapped: read to the end.
  in.read_to_end(fd, path);
  return in;
}

InputBytes InputBytes::read_rest_of_stdin(std::vector<std::byte> prefix) {
  InputBytes in;
  in.buffer_ = std::move(prefix);
  in.read_to_end(STDIN_FILENO, "-");
  return in;
}

void InputBytes::read_to_end(int fd, const std::string& path) {
  std::size_t used = buffer_.size();
  buffer_.resize(std::max<std::size_t>(used * 2, 1 << 16));
  for (;;) {
    if (used == buffer_.size()) buffer_.resize(buffer_.size() * 2);
    const ssize_t n = ::read(fd, buffer_.data() + used, buffer_.size() - used);
    if (n < 0) {
      if (errno == EINTR) continue;
      io_fail(fmt::format("cannot read {}", quote_path(path)));
    }
    if (n == 0) break;
    used += static_cast<std::size_t>(n);
  }
  buffer_.resize(used);
  data_ = buffer_.data();
  size_ = used;
}

TensorFormat detect_format(std::span<const std::byte> bytes) {
  if (is_npy(bytes)) return TensorFormat::npy;
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
  InputBytes in = InputBytes::open(path);
  return read_tensor_bytes(in.bytes(), path, options);
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
    std::string tmpl = directory_of(path_) + "/." + base_name(path_) + ".dmlbits-XXXXXX";
    fd_ = ::mkstemp(tmpl.data());
    if (fd_ < 0) io_fail(fmt::format("cannot create a temporary file in '{}'", directory_of(path_)));
    temp_path_ = tmpl;
    // mkstemp makes the file 0600; give it the mode a plain creat() would (0666 & ~umask).
    const mode_t mask = ::umask(0);
    ::umask(mask);
    ::fchmod(fd_, 0666 & ~mask);
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
    if (::rename(temp_path_.c_str(), path_.c_str()) != 0) io_fail("cannot rename the temporary file into place");
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

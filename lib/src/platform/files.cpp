// The POSIX implementation of files.hpp.
#include "files.hpp"

#include <fcntl.h>
#include <poll.h>
#include <limits.h>  // NAME_MAX
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>  // renameat2
#include <string_view>
#include <utility>

#include "dmlbits/interrupt.hpp"

namespace dmlbits {
namespace {

[[noreturn]] void throw_errno(const char* what = "") {
  throw std::system_error(errno, std::generic_category(), what);
}

FileInfo to_info(const struct stat& st) {
  FileInfo info;
  if (S_ISREG(st.st_mode)) {
    info.type = FileType::regular;
    info.size = static_cast<std::uint64_t>(st.st_size);
  } else if (S_ISDIR(st.st_mode)) {
    info.type = FileType::directory;
  }
  return info;
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
  throw_errno("cannot remove the replaced file");
#else
  (void)temp;
  (void)path;
  return false;
#endif
}

}  // namespace

File::File(File&& other) noexcept : handle_(std::exchange(other.handle_, -1)), owned_(other.owned_) {}

File& File::operator=(File&& other) noexcept {
  if (this != &other) {
    if (owned_ && handle_ >= 0) ::close(handle_);
    handle_ = std::exchange(other.handle_, -1);
    owned_ = other.owned_;
  }
  return *this;
}

File::~File() {
  if (owned_ && handle_ >= 0) ::close(handle_);
}

File File::open_for_reading(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw_errno();
  return File(fd, true);
}

File File::open_existing_for_writing(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) throw_errno();
  return File(fd, true);
}

File File::standard_input() noexcept { return File(STDIN_FILENO, false); }
File File::standard_output() noexcept { return File(STDOUT_FILENO, false); }

FileInfo File::info() const {
  struct stat st {};
  if (::fstat(handle_, &st) != 0) throw_errno();
  return to_info(st);
}

std::size_t File::read(std::span<std::byte> buffer) {
  for (;;) {
    // A pipe or terminal may give nothing for as long as its writer likes, and a read(2)
    // blocked there is restarted after SIGINT (std::signal sets SA_RESTART) or never sees it
    // at all on a thread that blocks signals (a streamed run's reader): wait in poll(2), which
    // a signal always interrupts, and look at the interrupt flag at least every 100 ms. A
    // regular file is always ready, at the cost of one call per read.
    pollfd ready{handle_, POLLIN, 0};
    const int polled = ::poll(&ready, 1, 100);
    if (polled == 0 || (polled < 0 && errno == EINTR)) {
      throw_if_interrupted();
      continue;
    }  // ready, or poll failed: read() then says why
    const ssize_t n = ::read(handle_, buffer.data(), buffer.size());
    if (n >= 0) return static_cast<std::size_t>(n);
    if (errno != EINTR) throw_errno();
    throw_if_interrupted();
  }
}

std::size_t File::read_at(std::uint64_t offset, std::span<std::byte> buffer) {
  for (;;) {
    const ssize_t n = ::pread(handle_, buffer.data(), buffer.size(), static_cast<off_t>(offset));
    if (n >= 0) return static_cast<std::size_t>(n);
    if (errno != EINTR) throw_errno();
    throw_if_interrupted();
  }
}

void File::seek(std::uint64_t offset) {
  if (::lseek(handle_, static_cast<off_t>(offset), SEEK_SET) < 0) throw_errno();
}

std::size_t File::write(std::span<const std::byte> data) {
  for (;;) {
    const ssize_t n = ::write(handle_, data.data(), data.size());
    if (n >= 0) return static_cast<std::size_t>(n);
    if (errno != EINTR) throw_errno();
    throw_if_interrupted();
  }
}

void File::close() {
  const int fd = std::exchange(handle_, -1);
  if (fd < 0 || !owned_) return;
  if (::close(fd) != 0) throw_errno();
}

std::optional<FileInfo> file_info(const std::string& path, std::error_code& error) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    error.assign(errno, std::generic_category());
    return std::nullopt;
  }
  error.clear();
  return to_info(st);
}

std::optional<FileInfo> file_info(const std::string& path) {
  std::error_code ignored;
  return file_info(path, ignored);
}

std::optional<FileInfo> link_info(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return std::nullopt;
  return to_info(st);
}

bool can_write_file(const std::string& path, std::error_code& error) {
  if (::access(path.c_str(), W_OK) == 0) return true;
  error.assign(errno, std::generic_category());
  return false;
}

bool can_create_in(const std::string& path, std::error_code& error) {
  if (::access(path.c_str(), W_OK | X_OK) == 0) return true;
  error.assign(errno, std::generic_category());
  return false;
}

// The mkstemp template for an output named NAME: ".NAME.dmlbits-XXXXXX", with NAME cut short
// when the whole would pass NAME_MAX (255 bytes), so that names of 241 to 255 bytes can be
// written too. The cut falls between UTF-8 characters, keeping the name readable.
std::string temporary_name_for(const std::string& destination) {
  const std::string base = base_name(destination);
  constexpr std::string_view kSuffix = ".dmlbits-XXXXXX";
  constexpr std::size_t kMaxBase = NAME_MAX - 1 - kSuffix.size();
  std::size_t keep = std::min(base.size(), kMaxBase);
  while (keep > 0 && keep < base.size() && (static_cast<unsigned char>(base[keep]) & 0xC0) == 0x80) --keep;
  return directory_of(destination) + "/." + base.substr(0, keep) + std::string(kSuffix);
}

// The umask, read once during static initialisation, before main and before any thread: the
// only way to read it, umask(), also sets it, and a thread creating a file between the two
// calls (check --update -j) would get mode 0666 & ~0.
const mode_t process_umask = [] {
  const mode_t mask = ::umask(0);
  ::umask(mask);
  return mask;
}();

TemporaryFile create_temporary_beside(const std::string& destination) {
  std::string tmpl = temporary_name_for(destination);
  const int fd = ::mkstemp(tmpl.data());
  if (fd < 0) throw_errno();
  TemporaryFile out{File(fd, true), std::move(tmpl)};
  struct stat old {};
  if (::lstat(destination.c_str(), &old) == 0 && S_ISREG(old.st_mode)) {
    // Replacing a file keeps its owner (where permitted) and mode, as sed -i does: a 0600
    // file must not become readable by others because dmlbits rewrote it. The owner first:
    // chown clears the set-user-ID and set-group-ID bits that fchmod then restores.
    if (old.st_uid != ::geteuid() || old.st_gid != ::getegid()) (void)::fchown(fd, old.st_uid, old.st_gid);
    ::fchmod(fd, old.st_mode & 07777);
  } else {
    // mkstemp makes the file 0600; a new file gets the mode creat() would give (0666 & ~umask).
    ::fchmod(fd, 0666 & ~process_umask);
  }
  return out;
}

void replace_file(const std::string& from, const std::string& to) {
  if (replace_by_exchange(from, to)) return;
  if (::rename(from.c_str(), to.c_str()) != 0) throw_errno("cannot rename the temporary file into place");
}

bool remove_file(const std::string& path) noexcept { return ::unlink(path.c_str()) == 0 || errno == ENOENT; }

}  // namespace dmlbits

// The POSIX implementation of files.hpp.
#include "files.hpp"

#include <fcntl.h>
#include <poll.h>
#include <limits.h>  // NAME_MAX
#include <sys/stat.h>
#include <sys/vfs.h>  // statfs
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>  // renameat2
#include <ctime>
#include <random>
#include <string_view>
#include <utility>

#include "dmlbits/error.hpp"

namespace dmlbits {
namespace {

[[noreturn]] void throw_errno(const char* what = "") { throw std::system_error(errno, std::generic_category(), what); }

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

File File::open_existing_for_writing(const std::string& path, bool truncate) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) throw_errno();
  File f(fd, true);
  struct stat st {};
  if (truncate && ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && ::ftruncate(fd, 0) != 0) throw_errno();
  return f;
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

std::size_t File::write_at(std::uint64_t offset, std::span<const std::byte> data) {
  for (;;) {
    const ssize_t n = ::pwrite(handle_, data.data(), data.size(), static_cast<off_t>(offset));
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

namespace {

// Gives the new file `fd` the permissions a file replacing `destination` needs.
void take_permissions(int fd, const std::string& destination) {
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
}

// O_TMPFILE's refusals that mean "not on this file system" rather than "not in this folder".
bool no_unnamed_files(int err) { return err == EOPNOTSUPP || err == EISDIR || err == EINVAL; }

void fsync_or_throw(int fd, const char* what) {
  while (::fsync(fd) != 0)
    if (errno != EINTR) throw_errno(what);
}

// Flushes the folder's entries (the new name), as the file's own fsync does not.
void sync_directory_of(const std::string& path) {
  const int dir = ::open(directory_of(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) throw_errno("cannot open the folder to flush it");
  const int rc = ::fsync(dir);
  const int err = errno;
  ::close(dir);
  // Some file systems cannot flush a folder (EINVAL): their entries are as durable as they get.
  if (rc != 0 && err != EINVAL) {
    errno = err;
    throw_errno("cannot flush the folder");
  }
}

// Links the unnamed file `fd` at `name`; false, with errno set, if that fails.
bool link_descriptor(int fd, const std::string& name) {
  const std::string proc = "/proc/self/fd/" + std::to_string(fd);
  return ::linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, name.c_str(), AT_SYMLINK_FOLLOW) == 0;
}

}  // namespace

TemporaryFile create_temporary_beside(const std::string& destination) {
  std::string tmpl = temporary_name_for(destination);
  const int fd = ::mkstemp(tmpl.data());
  if (fd < 0) throw_errno();
  TemporaryFile out{File(fd, true), std::move(tmpl)};
  take_permissions(fd, destination);
  return out;
}

PendingFile PendingFile::create(const std::string& destination) {
  PendingFile p;
  p.destination_ = destination;
  const std::string dir = directory_of(destination);
  // Linking an unnamed file goes through /proc/self/fd (AT_EMPTY_PATH needs a capability).
  static const bool have_proc = ::access("/proc/self/fd", X_OK) == 0;
  int fd = -1;
  if (have_proc) {
    fd = ::open(dir.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
    if (fd < 0 && !no_unnamed_files(errno)) throw_errno();
    if (fd < 0)
      p.named_because_ = ("the file system of '" + dir +
                          "' has no unnamed files (O_TMPFILE: " + std::generic_category().message(errno) + ")");
  } else {
    p.named_because_ = "/proc/self/fd is not there to link an unnamed file with";
  }
  if (fd >= 0) {
    p.file_ = File(fd, true);
    take_permissions(fd, destination);
    return p;
  }
  TemporaryFile t = create_temporary_beside(destination);
  p.file_ = std::move(t.file);
  p.temp_path_ = std::move(t.path);
  return p;
}

void PendingFile::commit(bool sync) {
  if (committed_) return;
  if (sync) fsync_or_throw(file_.handle_, "cannot flush the file to the disk");
  if (temp_path_.empty()) {
    // A new name takes the file directly: no temporary name ever exists.
    struct stat st {};
    bool named = false;
    if (::lstat(destination_.c_str(), &st) != 0 && errno == ENOENT) {
      named = link_descriptor(file_.handle_, destination_);
      if (!named && errno != EEXIST) throw_errno("cannot link the new file into place");
    }
    if (!named) {
      std::string name = temporary_name_for(destination_);
      // Seeded by getentropy(3), one getrandom call: std::random_device's constructor runs
      // cpuid several times, and under a hypervisor each one exits to it (testdata/benchmarks.md,
      // "CPUID under a hypervisor"). A name taken already is tried again below in any case.
      std::uint64_t seed = 0;
      if (::getentropy(&seed, sizeof seed) != 0) seed = static_cast<std::uint64_t>(::time(nullptr));
      std::mt19937_64 random(seed ^ static_cast<std::uint64_t>(::getpid()));
      static constexpr char kLetters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
      for (int attempt = 0;; ++attempt) {
        for (std::size_t i = name.size() - 6; i < name.size(); ++i)
          name[i] = kLetters[random() % (sizeof kLetters - 1)];
        if (link_descriptor(file_.handle_, name)) break;
        if (errno != EEXIST || attempt == 100) throw_errno("cannot link the new file into place");
      }
      temp_path_ = name;
      replace_file(temp_path_, destination_);  // on failure the destructor removes the name
      temp_path_.clear();
    }
    committed_ = true;
    file_.close();  // named already: a failure here is reported, the file stays
  } else {
    file_.close();
    replace_file(temp_path_, destination_);
    committed_ = true;
  }
  if (sync) sync_directory_of(destination_);
}

bool names_open_descriptor(const std::string& path) {
  // Follows the chain of links by hand: a link whose folder is on procfs is one of the
  // kernel's (/proc/self/fd/1 names standard output's file itself, not a path to it).
  constexpr long kProcSuperMagic = 0x9fa0;
  std::string p = path;
  for (int hop = 0; hop < 40; ++hop) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return false;
    struct statfs fs {};
    if (::statfs(directory_of(p).c_str(), &fs) == 0 && static_cast<long>(fs.f_type) == kProcSuperMagic) return true;
    std::string target(PATH_MAX, '\0');
    const ssize_t n = ::readlink(p.c_str(), target.data(), target.size());
    if (n <= 0) return false;
    target.resize(static_cast<std::size_t>(n));
    p = target.front() == '/' ? target : directory_of(p) + "/" + target;
  }
  return false;
}

bool is_standard_output(const std::string& path) {
  struct stat a {
  }, b{};
  return ::stat(path.c_str(), &a) == 0 && ::fstat(STDOUT_FILENO, &b) == 0 && a.st_dev == b.st_dev &&
         a.st_ino == b.st_ino;
}

void replace_file(const std::string& from, const std::string& to) {
  if (replace_by_exchange(from, to)) return;
  if (::rename(from.c_str(), to.c_str()) != 0) throw_errno("cannot rename the temporary file into place");
}

bool remove_file(const std::string& path) noexcept { return ::unlink(path.c_str()) == 0 || errno == ENOENT; }

}  // namespace dmlbits

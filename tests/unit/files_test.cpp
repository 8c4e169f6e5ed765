// The platform layer's files (files.hpp): reading, positioned reads, writing, looking files up,
// temporary files beside a destination with the destination's permissions, atomic replacement
// and removal, with the operating system's error codes in std::system_error.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include "files.hpp"

namespace dmlbits {
namespace {

namespace fs = std::filesystem;

class FilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    dir_ = fs::temp_directory_path() / fs::path("dmlbits-files-test-" + std::to_string(::getpid()) + "-" + test);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::string file(const std::string& name, const std::string& content) const {
    std::ofstream(path(name), std::ios::binary) << content;
    return path(name);
  }
  static std::string contents(const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  static std::span<const std::byte> bytes(std::string_view s) { return std::as_bytes(std::span(s.data(), s.size())); }

  fs::path dir_;
};

std::string as_string(const std::vector<std::byte>& v, std::size_t n) {
  return std::string(reinterpret_cast<const char*>(v.data()), n);
}

TEST_F(FilesTest, ReadsSequentiallyAndAtOffsets) {
  File f = File::open_for_reading(file("a", "hello world"));
  ASSERT_TRUE(f.is_open());
  EXPECT_FALSE(f.is_standard());
  const FileInfo info = f.info();
  EXPECT_EQ(info.type, FileType::regular);
  EXPECT_EQ(info.size, 11u);
  std::vector<std::byte> buf(5);
  ASSERT_EQ(f.read(buf), 5u);
  EXPECT_EQ(as_string(buf, 5), "hello");
  ASSERT_EQ(f.read_at(6, buf), 5u);  // leaves the position alone
  EXPECT_EQ(as_string(buf, 5), "world");
  ASSERT_EQ(f.read(buf), 5u);
  EXPECT_EQ(as_string(buf, 5), " worl");
  f.seek(10);
  ASSERT_EQ(f.read(buf), 1u);
  EXPECT_EQ(f.read(buf), 0u);  // the end
  EXPECT_EQ(f.read_at(100, buf), 0u);
  f.close();
  EXPECT_FALSE(f.is_open());
}

TEST_F(FilesTest, OpenFailuresCarryTheSystemsCode) {
  try {
    (void)File::open_for_reading(path("missing"));
    FAIL() << "opened a missing file";
  } catch (const std::system_error& e) {
    EXPECT_EQ(e.code(), std::errc::no_such_file_or_directory);
    EXPECT_EQ(e.code().message(), "No such file or directory");
  }
  EXPECT_THROW((void)File::open_existing_for_writing(path("missing")), std::system_error);
}

TEST_F(FilesTest, AFolderOpensForReadingAndSaysItIsOne) {
  File f = File::open_for_reading(dir_.string());
  EXPECT_EQ(f.info().type, FileType::directory);
  std::vector<std::byte> buf(4);
  try {
    (void)f.read(buf);
    FAIL() << "read a folder";
  } catch (const std::system_error& e) {
    EXPECT_EQ(e.code(), std::errc::is_a_directory);
  }
}

TEST_F(FilesTest, MovedFilesCloseOnce) {
  File a = File::open_for_reading(file("a", "x"));
  File b = std::move(a);
  EXPECT_FALSE(a.is_open());  // NOLINT(bugprone-use-after-move): the contract says so
  EXPECT_TRUE(b.is_open());
  File c;
  c = std::move(b);
  EXPECT_TRUE(c.is_open());
  EXPECT_EQ(c.info().size, 1u);
}

TEST_F(FilesTest, StandardStreamsAreNotClosed) {
  {
    File in = File::standard_input();
    File out = File::standard_output();
    EXPECT_TRUE(in.is_standard());
    EXPECT_TRUE(out.is_standard());
    out.close();  // only let go
  }
  struct stat st {};
  EXPECT_EQ(::fstat(STDIN_FILENO, &st), 0);
  EXPECT_EQ(::fstat(STDOUT_FILENO, &st), 0);
}

TEST_F(FilesTest, WritesInPlaceToADevice) {
  File f = File::open_existing_for_writing("/dev/null");
  EXPECT_EQ(f.info().type, FileType::other);
  EXPECT_EQ(f.write(bytes("abc")), 3u);
}

TEST_F(FilesTest, LooksFilesUp) {
  std::error_code error;
  EXPECT_EQ(file_info(file("a", "abc"), error)->size, 3u);
  EXPECT_FALSE(error);
  EXPECT_EQ(file_info(dir_.string())->type, FileType::directory);
  EXPECT_EQ(file_info("/dev/null")->type, FileType::other);
  EXPECT_FALSE(file_info(path("missing"), error));
  EXPECT_EQ(error, std::errc::no_such_file_or_directory);
  fs::create_symlink(path("nowhere"), path("link"));
  EXPECT_FALSE(file_info(path("link")));  // followed, to nothing
  EXPECT_TRUE(link_info(path("link")));   // the link itself
  EXPECT_FALSE(link_info(path("missing")));
}

TEST_F(FilesTest, SaysWhatMayBeWritten) {
  std::error_code error;
  EXPECT_TRUE(can_write_file("/dev/null", error));
  EXPECT_TRUE(can_create_in(dir_.string(), error));
  EXPECT_FALSE(can_create_in(path("missing"), error));
  EXPECT_EQ(error, std::errc::no_such_file_or_directory);
}

TEST_F(FilesTest, TemporaryNamesStayWithinTheFileSystemsLimit) {
  EXPECT_EQ(temporary_name_for("out.npy"), "./.out.npy.dmlbits-XXXXXX");
  EXPECT_EQ(temporary_name_for("/out.npy"), "//.out.npy.dmlbits-XXXXXX");  // as before: a valid name
  EXPECT_EQ(temporary_name_for("a/b/out.npy"), "a/b/.out.npy.dmlbits-XXXXXX");
  const std::string name = temporary_name_for("d/" + std::string(255, 'x'));
  EXPECT_EQ(name.size() - 2, 255u);
  // A cut never splits a UTF-8 character: 'é' is two bytes.
  std::string accents;
  for (int i = 0; i < 127; ++i) accents += "\xc3\xa9";
  const std::string cut = temporary_name_for(accents).substr(3);  // after "./."
  const std::string base = cut.substr(0, cut.size() - std::string(".dmlbits-XXXXXX").size());
  EXPECT_EQ(base.size() % 2, 0u);
  EXPECT_LE(cut.size() + 1, 255u);
}

TEST_F(FilesTest, TemporaryFilesTakeTheReplacedFilesMode) {
  const std::string dest = file("out.npy", "old");
  ASSERT_EQ(::chmod(dest.c_str(), 0640), 0);
  TemporaryFile t = create_temporary_beside(dest);
  EXPECT_EQ(fs::path(t.path).parent_path(), dir_);
  EXPECT_EQ(fs::path(t.path).filename().string().rfind(".out.npy.dmlbits-", 0), 0u);
  struct stat st {};
  ASSERT_EQ(::stat(t.path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  EXPECT_EQ(t.file.write(bytes("new")), 3u);
  t.file.close();
  replace_file(t.path, dest);
  EXPECT_EQ(contents(dest), "new");
  EXPECT_FALSE(fs::exists(t.path));
  ASSERT_EQ(::stat(dest.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
}

TEST_F(FilesTest, NewFilesGetTheUmasksMode) {
  const auto mask = ::umask(022);  // mode_t on POSIX, int in the Windows C runtime
  TemporaryFile t = create_temporary_beside(path("new.json"));
  ::umask(mask);
  struct stat st {};
  ASSERT_EQ(::stat(t.path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0644u);
  t.file.close();
  replace_file(t.path, path("new.json"));
  EXPECT_TRUE(fs::exists(path("new.json")));
}

TEST_F(FilesTest, ATemporaryFileNeedsItsFolder) {
  try {
    (void)create_temporary_beside(path("missing/out.npy"));
    FAIL() << "created a file in a missing folder";
  } catch (const std::system_error& e) {
    EXPECT_EQ(e.code(), std::errc::no_such_file_or_directory);
  }
}

TEST_F(FilesTest, ReplacingNamesTheFailedStep) {
  fs::create_directories(path("folder/inside"));
  const std::string temp = file("temp", "x");
  try {
    replace_file(temp, path("folder"));  // a non-empty folder cannot be renamed over
    FAIL() << "replaced a folder";
  } catch (const std::system_error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("cannot rename the temporary file into place: ", 0), 0u) << e.what();
  }
  EXPECT_TRUE(fs::is_directory(path("folder/inside")));
  EXPECT_EQ(contents(temp), "x");
}

std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

TEST_F(FilesTest, APendingFileHasNoNameUntilCommitted) {
  const std::string dest = file("out.npy", "old");
  ASSERT_EQ(::chmod(dest.c_str(), 0640), 0);
  PendingFile p = PendingFile::create(dest);
  // On Linux file systems with O_TMPFILE (the test's /tmp), the file is unnamed while written.
  EXPECT_EQ(p.named_because(), "");
  EXPECT_EQ(p.temporary_path(), "");
  EXPECT_EQ(p.file().write(bytes("new")), 3u);
  EXPECT_EQ(names_in(dir_), std::vector<std::string>{"out.npy"});
  EXPECT_EQ(contents(dest), "old");
  p.commit(false);
  EXPECT_EQ(contents(dest), "new");
  EXPECT_EQ(names_in(dir_), std::vector<std::string>{"out.npy"});
  struct stat st {};
  ASSERT_EQ(::stat(dest.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);  // the replaced file's mode
}

TEST_F(FilesTest, APendingFileTakesANewNameDirectlyAndSyncs) {
  const auto mask = ::umask(022);
  PendingFile p = PendingFile::create(path("new.json"));
  ::umask(mask);
  EXPECT_EQ(p.file().write(bytes("{}")), 2u);
  EXPECT_TRUE(names_in(dir_).empty());
  p.commit(true);
  EXPECT_EQ(contents(path("new.json")), "{}");
  struct stat st {};
  ASSERT_EQ(::stat(path("new.json").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0644u);
}

TEST_F(FilesTest, ADiscardedPendingFileLeavesNothing) {
  const std::string dest = file("out.npy", "old");
  {
    PendingFile p = PendingFile::create(dest);
    (void)p.file().write(bytes("partial"));
    PendingFile moved = std::move(p);  // moving does not discard twice nor commit
  }
  EXPECT_EQ(contents(dest), "old");
  EXPECT_EQ(names_in(dir_), std::vector<std::string>{"out.npy"});
  try {
    (void)PendingFile::create(path("missing/out.npy"));
    FAIL() << "created a file in a missing folder";
  } catch (const std::system_error& e) {
    EXPECT_EQ(e.code(), std::errc::no_such_file_or_directory);
  }
}

// Both systems: replacing a file and naming a new one (with --sync) leave the destinations and
// nothing else. On Windows the file, marked delete-on-close since its creation, is linked over
// the destination and its temporary name goes with its handle; named_because() stays empty when
// no fallback (a copy, for file systems without hard links) was needed.
TEST_F(FilesTest, ACommittedPendingFileLeavesOnlyItsDestination) {
  const std::string dest = file("out.npy", "old");
  PendingFile p = PendingFile::create(dest);
  EXPECT_EQ(p.file().write(bytes("new")), 3u);
  p.commit(false);
  PendingFile q = PendingFile::create(path("new.json"));
  EXPECT_EQ(q.file().write(bytes("{}")), 2u);
  q.commit(true);
  EXPECT_EQ(contents(dest), "new");
  EXPECT_EQ(contents(path("new.json")), "{}");
  EXPECT_EQ(names_in(dir_), (std::vector<std::string>{"new.json", "out.npy"}));
  EXPECT_EQ(p.named_because(), "");
  EXPECT_EQ(q.named_because(), "");
}

TEST_F(FilesTest, KnowsTheKernelsLinksToOpenFiles) {
  EXPECT_TRUE(names_open_descriptor("/proc/self/fd/1"));
  EXPECT_TRUE(names_open_descriptor("/dev/fd/1"));
  fs::create_symlink("/proc/self/fd/1", path("stdout"));
  fs::create_symlink(path("stdout"), path("link-to-stdout"));
  EXPECT_TRUE(names_open_descriptor(path("stdout")));
  EXPECT_TRUE(names_open_descriptor(path("link-to-stdout")));
  fs::create_symlink(file("plain", "x"), path("plain-link"));
  EXPECT_FALSE(names_open_descriptor(path("plain-link")));  // replaced, as sed -i does
  EXPECT_FALSE(names_open_descriptor(path("plain")));
  EXPECT_FALSE(names_open_descriptor(path("missing")));
  EXPECT_FALSE(names_open_descriptor("/dev/null"));  // a device, written in place for that reason
}

TEST_F(FilesTest, RemovesFiles) {
  const std::string p = file("a", "x");
  EXPECT_TRUE(remove_file(p));
  EXPECT_FALSE(fs::exists(p));
  EXPECT_TRUE(remove_file(p));  // already gone
  EXPECT_FALSE(remove_file(dir_.string()));
}

}  // namespace
}  // namespace dmlbits

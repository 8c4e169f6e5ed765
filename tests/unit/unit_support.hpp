// Helpers shared by the unit tests (not a test itself: only unit/*_test.cpp are globbed). Files
// are written byte by byte here, not with the library's writers, so that a test of a reader
// does not depend on the code it checks.
#pragma once

#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include <gtest/gtest.h>

#include "cpu_isa.hpp"
#include "dmlbits/error.hpp"
#include "dmlbits/request.hpp"
#include "make_backend.hpp"

namespace dmlbits::test {

namespace fs = std::filesystem;

// A backend by its --backend name, for tests that read better with names.
inline BackendKind kind(std::string_view name) { return parse_backend(name).value(); }

// A prepared request for the backend named `name` with these choices (a `not` of the literal 1),
// what make_backend takes; prepare_request refuses what its rules refuse.
inline PreparedRequest backend_request(std::string_view name, std::string isa = {},
                                       std::optional<std::string> adapter = {}, std::optional<unsigned> threads = {}) {
  OperationRequest r;
  r.op = OpKind::bit_not;
  r.operands = {"1"};
  r.backend = kind(name);
  r.isa = std::move(isa);
  r.adapter = std::move(adapter);
  r.threads = threads;
  return prepare_request(std::move(r));
}

// One uint8 operand of `bytes` elements: an output of that many bytes, for auto's size rule.
inline std::vector<OperandInfo> operands_of_bytes(std::uint64_t bytes) { return {{DType::uint8, Shape{bytes}}}; }

// A fresh folder under the system's temporary folder, removed with everything in it.
class TempDir {
 public:
  explicit TempDir(const std::string& tag) {
    static std::atomic<int> serial{0};
    path_ = fs::temp_directory_path() /
            ("dmlbits-" + tag + "-" + std::to_string(::getpid()) + "-" + std::to_string(serial++));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const fs::path& path() const { return path_; }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  // The names in the folder (temporary files included), sorted.
  std::set<std::string> names() const {
    std::set<std::string> out;
    for (const auto& e : fs::directory_iterator(path_)) out.insert(e.path().filename().string());
    return out;
  }

 private:
  fs::path path_;
};

inline void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary);
  f << bytes;
}

inline std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// A version 1.0 .npy header for a little-endian C-order array: `descr` as NumPy writes it
// ("|u1", "<u4"), `shape` as a Python tuple ("(5,)", "(2, 3)"), padded to 64 bytes.
inline std::string npy_header_v1(const std::string& descr, const std::string& shape) {
  std::string dict = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  dict += std::string((64 - (10 + dict.size() + 1) % 64) % 64, ' ') + "\n";
  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(dict.size() & 0xff);
  out += static_cast<char>(dict.size() >> 8);
  return out + dict;
}

// Little-endian bytes of `values`, each `width` bytes.
template <class T>
std::string le_bytes(const std::vector<T>& values, std::size_t width = sizeof(T)) {
  std::string out;
  out.reserve(values.size() * width);
  for (const T v : values)
    for (std::size_t b = 0; b < width; ++b) out += static_cast<char>((static_cast<std::uint64_t>(v) >> (8 * b)) & 0xff);
  return out;
}

// A 1-D .npy of `values` (uint8, uint16, uint32 or uint64 by sizeof(T)).
template <class T>
std::string npy_1d(const std::vector<T>& values) {
  static_assert(sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8);
  const std::string descr = sizeof(T) == 1 ? "|u1" : "<u" + std::to_string(sizeof(T));
  return npy_header_v1(descr, "(" + std::to_string(values.size()) + ",)") + le_bytes(values);
}

// The data of an .npy file written by npy_header_v1 or by dmlbits (whose header is padded to a
// multiple of 64 bytes and ends in '\n'): everything after the header's newline.
inline std::string npy_data(const std::string& file) {
  const auto nl = file.find('\n');
  return nl == std::string::npos ? std::string() : file.substr(nl + 1);
}

template <class T>
std::vector<T> values_of(const std::string& bytes) {
  std::vector<T> v(bytes.size() / sizeof(T));
  std::memcpy(v.data(), bytes.data(), v.size() * sizeof(T));
  return v;
}

// The exception of type E (dmlbits::Error, or a kind of it: OptionError) that f throws; a test
// failure if it throws none (then an internal error, or an OptionError of no real option's rule).
template <class E = Error, class F>
E error_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e;
  }
  ADD_FAILURE() << "no " << (std::is_same_v<E, OptionError> ? "OptionError" : "dmlbits::Error") << " thrown";
  if constexpr (std::is_same_v<E, OptionError>) return OptionError(OptionKey::backend, OptionRule::empty);
  else return E(Errc::internal, "");
}

// A fixture that runs each test with DMLBITS_ISA unset and no forced instruction set, and puts
// both back afterwards.
class IsaOverrideFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const char* v = std::getenv("DMLBITS_ISA")) saved_ = v;
    ::unsetenv("DMLBITS_ISA");
    force_isa(std::nullopt);
  }
  void TearDown() override {
    force_isa(std::nullopt);
    if (saved_) ::setenv("DMLBITS_ISA", saved_->c_str(), 1);
    else ::unsetenv("DMLBITS_ISA");
  }
  std::optional<std::string> saved_;
};

}  // namespace dmlbits::test

// Libraries loaded at run time (vkd3d, the Vulkan loader; d3d12.dll in a Windows build), so
// that one binary runs with or without them. POSIX dlopen today (dynamic_library.cpp).
#pragma once

#include <optional>
#include <string>

namespace dmlbits {

class DynamicLibrary {
 public:
  DynamicLibrary() = default;  // nothing loaded: loaded() is false, error() is empty
  // Loads `name` (a file name searched as the system's loader searches, or a path), resolving
  // all its symbols now and keeping them out of the global namespace. On failure loaded() is
  // false and error() holds the loader's reason ("NAME: cannot open shared object file: ...").
  static DynamicLibrary open(const std::string& name);
  // open(), except that on Windows a bare file name is looked for in the running program's
  // folder first, then in the system folders: where applications put a redistributable DLL they
  // ship (DirectML.dll), never the current folder. Elsewhere the same as open().
  static DynamicLibrary open_beside_program(const std::string& name);

  bool loaded() const noexcept { return handle_ != nullptr; }
  const std::string& error() const noexcept { return error_; }
  // The address of `symbol` in the library or the libraries it loaded; nullptr when it has
  // none (or nothing is loaded).
  void* symbol(const char* symbol) const noexcept;
  // The file the library was loaded from ("" when the system does not say, or nothing is loaded).
  std::string file_path() const;
  // Windows: the file's version resource, "1.15.4.0" (the fixed version) followed, when the
  // string table has one that says more, by its FileVersion string in parentheses; nullopt when
  // the file has none (and on other systems, whose libraries carry no such resource).
  std::optional<std::string> file_version() const;
  // symbol() as a function pointer of type F.
  template <class F>
  F function(const char* name) const noexcept {
    return reinterpret_cast<F>(symbol(name));
  }

  // A library stays loaded for the rest of the process: the object can go, the code cannot.
  // vkd3d and the Vulkan loader start threads and register callbacks that may outlive any
  // owner here, and unloading them at exit would run their destructors in the wrong order.

 private:
  // Windows: LoadLibraryExW with these LOAD_LIBRARY_SEARCH_* flags for a bare file name.
  static DynamicLibrary open_searching(const std::string& name, unsigned long bare_search);

  void* handle_ = nullptr;
  std::string error_;
};

}  // namespace dmlbits

// Test tool: writes every kernel of gpu::all_kernel_keys() as <name>.dxbc into a folder (and,
// with --listings, its assembly as <name>.asm), so that external tools (vkd3d-compiler,
// spirv-val) can check the bytecode. Prints one kernel name per line.
//
//   dmlbits_dump_kernels [--listings] OUT_DIR
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "dmlbits/error.hpp"
#include "gpu_kernel.hpp"

namespace {

bool write_file(const std::filesystem::path& path, const void* data, std::size_t size) {
  std::ofstream f(path, std::ios::binary);
  f.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
  return static_cast<bool>(f);
}

}  // namespace

int main(int argc, char** argv) {
  bool listings = false;
  const char* dir = nullptr;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--listings") == 0) {
      listings = true;
    } else if (!dir) {
      dir = argv[i];
    } else {
      dir = nullptr;
      break;
    }
  }
  if (!dir) {
    std::fprintf(stderr, "usage: dmlbits_dump_kernels [--listings] OUT_DIR\n");
    return 2;
  }
  try {
    std::filesystem::create_directories(dir);
    for (const auto& key : dmlbits::gpu::all_kernel_keys()) {
      const std::string name = dmlbits::gpu::to_string(key);
      const auto bytes = dmlbits::gpu::build_kernel(key);
      const auto base = std::filesystem::path(dir) / name;
      if (!write_file(base.string() + ".dxbc", bytes.data(), bytes.size())) {
        std::fprintf(stderr, "dmlbits_dump_kernels: cannot write %s.dxbc\n", base.string().c_str());
        return 5;
      }
      if (listings) {
        const std::string text = dmlbits::gpu::kernel_listing(key);
        if (!write_file(base.string() + ".asm", text.data(), text.size())) {
          std::fprintf(stderr, "dmlbits_dump_kernels: cannot write %s.asm\n", base.string().c_str());
          return 5;
        }
      }
      std::printf("%s\n", name.c_str());
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dmlbits_dump_kernels: %s\n", e.what());
    return 70;
  }
  return 0;
}

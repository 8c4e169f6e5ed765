// Test tool: writes every kernel of gpu::all_kernel_keys() as <name>.dxbc into a folder (and,
// with --listings, its assembly as <name>.asm), so that external tools (vkd3d-compiler,
// spirv-val) can check the bytecode. Prints one kernel name per line. With --graphs, the graph
// kernels of gpu::example_graph_kernel_keys() instead, as graph<i>_<name>.
//
//   dmlbits_dump_kernels [--listings] [--graphs] OUT_DIR
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "dmlbits/error.hpp"
#include "gpu_kernel.hpp"
#include "graph_kernel.hpp"

namespace {

bool write_file(const std::filesystem::path& path, const void* data, std::size_t size) {
  std::ofstream f(path, std::ios::binary);
  f.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
  return static_cast<bool>(f);
}

}  // namespace

int main(int argc, char** argv) {
  bool listings = false, graphs = false;
  const char* dir = nullptr;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--listings") == 0) {
      listings = true;
    } else if (std::strcmp(argv[i], "--graphs") == 0) {
      graphs = true;
    } else if (!dir) {
      dir = argv[i];
    } else {
      dir = nullptr;
      break;
    }
  }
  if (!dir) {
    std::fprintf(stderr, "usage: dmlbits_dump_kernels [--listings] [--graphs] OUT_DIR\n");
    return 2;
  }
  try {
    std::filesystem::create_directories(dir);
    struct Kernel {
      std::string name;
      std::vector<std::uint8_t> bytes;
      std::string text;
    };
    std::vector<Kernel> kernels;
    if (graphs) {
      const auto keys = dmlbits::gpu::example_graph_kernel_keys();
      for (std::size_t i = 0; i < keys.size(); ++i)
        kernels.push_back({"graph" + std::to_string(i) + "_" + dmlbits::gpu::to_string(keys[i]),
                           dmlbits::gpu::build_graph_kernel(keys[i]),
                           listings ? dmlbits::gpu::graph_kernel_listing(keys[i]) : std::string()});
    } else {
      for (const auto& key : dmlbits::gpu::all_kernel_keys())
        kernels.push_back({dmlbits::gpu::to_string(key), dmlbits::gpu::build_kernel(key),
                           listings ? dmlbits::gpu::kernel_listing(key) : std::string()});
    }
    for (const Kernel& k : kernels) {
      const std::string& name = k.name;
      const auto& bytes = k.bytes;
      const auto base = std::filesystem::path(dir) / name;
      if (!write_file(base.string() + ".dxbc", bytes.data(), bytes.size())) {
        std::fprintf(stderr, "dmlbits_dump_kernels: cannot write %s.dxbc\n", base.string().c_str());
        return 5;
      }
      if (listings) {
        const std::string& text = k.text;
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

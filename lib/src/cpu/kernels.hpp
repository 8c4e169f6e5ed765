// Internal: the rows each kernel file contributes to the kernel table (kernel_table.cpp).
#pragma once

#include <span>

#include "cpu_backend.hpp"

namespace dmlbits::cpu {

struct KernelRow {
  OpKind op;
  unsigned width;      // input element bytes
  unsigned out_width;  // output element bytes
  Operands operands;
  Isa isa;
  CpuExtension extension;
  const char* tag;  // the name's suffix after "__": "avx2", "scalar_popcnt"
  KernelFn fn;
};

// One function per kernel file. Calling them runs no instruction of the file's set: they only
// return addresses.
std::span<const KernelRow> scalar_kernels();
std::span<const KernelRow> avx2_kernels();
std::span<const KernelRow> avx512_kernels();
std::span<const KernelRow> avx512_vpopcntdq_kernels();
std::span<const KernelRow> avx512_bitalg_kernels();

}  // namespace dmlbits::cpu

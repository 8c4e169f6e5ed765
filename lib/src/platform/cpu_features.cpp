// detect_x86_features: glibc's table where there is one (its header is an operating-system
// one, <sys/platform/x86.h>), else the compiler's cpuid-based builtins, which is also what a
// mingw-w64 (Windows) build uses.
#include "cpu_features.hpp"

// glibc 2.33 and later publish the CPU features they detected at start-up. Their header is C
// (it uses _Bool), which g++ accepts and clang++ does not: clang builds (fuzzing) use libgcc's.
#if (defined(__x86_64__) || defined(__i386__)) && defined(__has_include) && !defined(__clang__)
#if __has_include(<sys/platform/x86.h>)
#include <sys/platform/x86.h>
#define DMLBITS_GLIBC_X86_FEATURES 1
#endif
#endif
#ifndef DMLBITS_GLIBC_X86_FEATURES
#define DMLBITS_GLIBC_X86_FEATURES 0
#endif

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <cstring>
#endif

namespace dmlbits {

X86Features detect_x86_features() noexcept {
  X86Features f;
#if DMLBITS_GLIBC_X86_FEATURES
  // glibc has already run cpuid (and checked XCR0, so "active" means the OS saves the wider
  // registers) for its own string functions; reading its table costs nothing. libgcc's
  // __builtin_cpu_init would run cpuid again, about a dozen times, and on a virtual machine
  // every cpuid exits to the hypervisor, a visible part of a small run's start-up
  // (testdata/benchmarks.md, "CPUID under a hypervisor"). Not calling it also keeps libgcc's detection constructor out
  // of the program.
  f.popcnt = CPU_FEATURE_ACTIVE(POPCNT);
  f.avx2 = CPU_FEATURE_ACTIVE(AVX2);
  f.avx512f = CPU_FEATURE_ACTIVE(AVX512F);
  f.avx512bw = CPU_FEATURE_ACTIVE(AVX512BW);
  f.avx512vl = CPU_FEATURE_ACTIVE(AVX512VL);
  f.avx512vpopcntdq = CPU_FEATURE_ACTIVE(AVX512_VPOPCNTDQ);
  f.avx512bitalg = CPU_FEATURE_ACTIVE(AVX512_BITALG);
#elif defined(__x86_64__) || defined(__i386__)
  // libgcc's tables are filled by a constructor; calling the init first makes detection safe
  // even from other static initialisers.
  __builtin_cpu_init();
  f.popcnt = __builtin_cpu_supports("popcnt");
  f.avx2 = __builtin_cpu_supports("avx2");
  f.avx512f = __builtin_cpu_supports("avx512f");
  f.avx512bw = __builtin_cpu_supports("avx512bw");
  f.avx512vl = __builtin_cpu_supports("avx512vl");
  f.avx512vpopcntdq = __builtin_cpu_supports("avx512vpopcntdq");
  f.avx512bitalg = __builtin_cpu_supports("avx512bitalg");
#endif
  return f;
}

X86Vendor detect_x86_vendor() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  // glibc's public table has no vendor, so this is the one cpuid of our own.
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(0, &eax, &ebx, &ecx, &edx) == 0) return X86Vendor::other;
  char vendor[12];
  std::memcpy(vendor, &ebx, 4);  // the string is EBX, EDX, ECX
  std::memcpy(vendor + 4, &edx, 4);
  std::memcpy(vendor + 8, &ecx, 4);
  if (std::memcmp(vendor, "GenuineIntel", 12) == 0) return X86Vendor::intel;
  if (std::memcmp(vendor, "AuthenticAMD", 12) == 0) return X86Vendor::amd;
#endif
  return X86Vendor::other;
}

}  // namespace dmlbits

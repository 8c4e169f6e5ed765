// The x86 instruction-set extensions this CPU has and the operating system enables (it saves
// the wider registers on a context switch), as the cpu layer's dispatch needs them.
#pragma once

namespace dmlbits {

struct X86Features {
  bool popcnt = false;
  bool avx2 = false;
  bool avx512f = false;
  bool avx512bw = false;
  bool avx512vl = false;
  bool avx512vpopcntdq = false;
  bool avx512bitalg = false;
};

// Detected afresh at each call (callers keep the result); all false off x86. Safe from any
// thread and from static initialisers.
X86Features detect_x86_features() noexcept;

// Who made the CPU, from cpuid leaf 0's vendor string. Only where a measured policy differs by
// maker (the streaming kernels' plans, stream_policy.hpp); other makers' CPUs are `other`.
enum class X86Vendor : unsigned char { other, intel, amd };

// Runs cpuid afresh at each call: about 11 us under a hypervisor (every cpuid exits to it), so
// callers ask once, and only where a large run needs the answer. `other` off x86.
X86Vendor detect_x86_vendor() noexcept;

}  // namespace dmlbits

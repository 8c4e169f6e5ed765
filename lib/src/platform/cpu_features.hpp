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

}  // namespace dmlbits

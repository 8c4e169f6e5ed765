// Vulkan's loader, lavapipe and vkd3d keep some allocations until exit, and the loader unloads
// the driver's module before LeakSanitizer looks, so the reports name "<unknown module>" and no
// suppression file can match them. In sanitizer builds, allocations made while a
// ForeignAllocations guard lives on this thread are not reported as leaks; our own allocations
// elsewhere still are.
#pragma once

#if defined(__SANITIZE_ADDRESS__)
#define DMLBITS_LSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DMLBITS_LSAN 1
#endif
#endif

#ifdef DMLBITS_LSAN
#include <sanitizer/lsan_interface.h>
#endif

namespace dmlbits::d3d12_detail {

struct ForeignAllocations {
#ifdef DMLBITS_LSAN
  ForeignAllocations() { __lsan_disable(); }
  ~ForeignAllocations() { __lsan_enable(); }
#else
  ForeignAllocations() {}  // user-provided, so that a guard is not an "unused variable"
#endif
  ForeignAllocations(const ForeignAllocations&) = delete;
  ForeignAllocations& operator=(const ForeignAllocations&) = delete;
};

}  // namespace dmlbits::d3d12_detail

// The CPU reference backend: one plain loop over the output that calls the operator table's
// reference function (OpInfo::reference) per element, written to be read.
// It is the executable specification of dmlbits' semantics; every faster kernel and shader is
// tested against it byte for byte.
#pragma once

#include <cstdint>
#include <type_traits>

#include "backend.hpp"
#include "dmlbits/ops.hpp"

namespace dmlbits {

// The operator table's reference functions (OpInfo::reference) at one element type T, the
// unsigned integer of the element width.
template <class T>
T reference_binary(OpKind op, T a, T b, ShiftOverflow overflow) {
  static_assert(std::is_unsigned_v<T>);
  return static_cast<T>(op_info(op).reference(a, b, sizeof(T) * 8, overflow));
}

template <class T>
T reference_not(T a) {
  return reference_binary<T>(OpKind::bit_not, a, 0, ShiftOverflow::zero);
}

template <class T>
unsigned reference_popcount(T a) {
  return static_cast<unsigned>(op_info(OpKind::popcount).reference(a, 0, sizeof(T) * 8, ShiftOverflow::zero));
}

class CpuReferenceBackend final : public Backend {
 public:
  std::string_view name() const override { return "cpu-reference"; }
  bool computes_on_cpu() const override { return true; }
  DeviceDescription device_description() const override { return {.kind = DeviceKind::cpu_reference}; }
  std::optional<std::string> unsupported_reason(const ValidatedOp&) const override { return std::nullopt; }
  void run(const ValidatedOp& op, const ExecuteBuffers& buffers) override;
};

}  // namespace dmlbits

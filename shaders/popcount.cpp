// popcount: the number of set bits of each element's encoding, written as 8- or 32-bit counts.
// A 64-bit element's count is countbits(lo) + countbits(hi).
#include "kernel_writer.hpp"

namespace dmlbits::gpu::shader {
namespace {

class Popcount final : public Family {
 public:
  explicit Popcount(const KernelKey& key) : bits_(key.in_bits) {}

  unsigned inputs() const override { return 1; }

  void element(ProgramBuilder& b, const Value& a, const Value&, const Value& out) const override {
    if (bits_ == 64) {
      const Reg high = b.scalar();
      b.countbits(high, a.hi);
      b.countbits(out.lo, a.lo);
      b.iadd(out.lo, out.lo, high);
    } else {
      b.countbits(out.lo, a.lo);  // narrow elements arrive zero-extended
    }
  }

 private:
  unsigned bits_;
};

}  // namespace

dxbc::Program popcount_kernel(const KernelKey& key) { return write_kernel(key, Popcount(key)); }

std::unique_ptr<Family> popcount_family(const KernelKey& key) { return std::make_unique<Popcount>(key); }

}  // namespace dmlbits::gpu::shader

// and, or, xor, not: the logic ops act on bits, so a packed word of 8- or 16-bit elements is
// combined whole, and a 64-bit element is its two words combined separately.
#include "dmlbits/error.hpp"
#include "kernel_writer.hpp"

namespace dmlbits::gpu::shader {
namespace {

class Logic final : public Family {
 public:
  explicit Logic(const KernelKey& key) : op_(key.op), bits_(key.in_bits) {}

  unsigned inputs() const override { return static_cast<unsigned>(op_info(op_).arity); }

  void element(ProgramBuilder& b, const Value& a, const Value& bv, const Value& out) const override {
    apply(b, out.lo, a.lo, bv.lo);
    if (bits_ == 64) apply(b, out.hi, a.hi, bv.hi);
  }

  bool word(ProgramBuilder& b, Reg a, Reg bw, Reg out) const override {
    apply(b, out, a, bw);
    return true;
  }

 private:
  void apply(ProgramBuilder& b, Reg d, Reg a, Reg bv) const {
    switch (op_) {
      case OpKind::bit_and:
        b.and_(d, a, bv);
        return;
      case OpKind::bit_or:
        b.or_(d, a, bv);
        return;
      case OpKind::bit_xor:
        b.xor_(d, a, bv);
        return;
      case OpKind::bit_not:
        b.not_(d, a);
        return;  // bits above a narrow element are dropped by bfi
      case OpKind::shl:
      case OpKind::shr:
      case OpKind::popcount:
        break;  // other families (OpInfo::shader)
    }
    throw Error(Errc::internal, "bitwise kernel for a non-logic op");
  }

  OpKind op_;
  unsigned bits_;
};

}  // namespace

dxbc::Program bitwise_kernel(const KernelKey& key) { return write_kernel(key, Logic(key)); }

std::unique_ptr<Family> bitwise_family(const KernelKey& key) { return std::make_unique<Logic>(key); }

}  // namespace dmlbits::gpu::shader

// What every dmlbits compute kernel shares: the bindings and root constants of gpu_kernel.hpp,
// the thread -> output unit mapping, element addressing (packed or strided), element fetches,
// the tail of the last word, and the store. A kernel family supplies only the per-element
// computation (and optionally a whole-word one); see README.md for the mapping.
#pragma once

#include <memory>
#include <functional>
#include <span>

#include "dxbc.hpp"
#include "gpu_kernel.hpp"

namespace dmlbits::gpu::shader {

using dxbc::imm;
using dxbc::ProgramBuilder;
using dxbc::Reg;
using dxbc::Src;

// One element's value: `lo` holds elements of up to 32 bits (zero-extended); a 64-bit element
// is the word pair lo (bits 0..31), hi (bits 32..63).
struct Value {
  Reg lo;
  Reg hi;
};

// A kernel family: how one output element is computed from the input elements.
class Family {
 public:
  virtual ~Family() = default;
  virtual unsigned inputs() const = 0;  // 1 (not, popcount) or 2
  // Writes the result for input values a (and b) into `out` (out.hi only for 64-bit outputs).
  virtual void element(ProgramBuilder& b, const Value& a, const Value& bv, const Value& out) const = 0;
  // Optionally computes a whole packed output word from whole input words at once (the logic
  // ops act on words as they act on elements). Returns false to fall back to element().
  virtual bool word(ProgramBuilder&, Reg /*a_word*/, Reg /*b_word*/, Reg /*out*/) const { return false; }
};

// The root constant at 32-bit word `word` of KernelConstants: cb0[word / 4].xyzw[word % 4].
Src constant(unsigned word);
inline constexpr unsigned kCountWord = 0, kThreadsWord = 1, kBaseWord = 2, kSizesWord = 4, kStridesWord = 12;

// The loop every kernel runs around its unit's body (gpu_kernel.hpp: thread x writes units x,
// x + threads, ...): `unit` starts at the thread's id and steps by the threads root constant
// while below `units`.
void grid_stride_loop(ProgramBuilder& b, Reg unit, Reg units, const std::function<void()>& body);

// Assembles the whole kernel for `key` around `family`.
dxbc::Program write_kernel(const KernelKey& key, const Family& family);

// Families (one source file each).
dxbc::Program bitwise_kernel(const KernelKey& key);   // and, or, xor, not
dxbc::Program shift_kernel(const KernelKey& key);     // shl, shr
dxbc::Program popcount_kernel(const KernelKey& key);  // popcount
// The same families alone, for programs that compute several operators element by element
// (graph_kernel.cpp): `key` picks the operator and widths (strided is ignored).
std::unique_ptr<Family> bitwise_family(const KernelKey& key);
std::unique_ptr<Family> shift_family(const KernelKey& key);
std::unique_ptr<Family> popcount_family(const KernelKey& key);
// The family of key.op (throws Errc::internal for an operator without one).
std::unique_ptr<Family> make_family(const KernelKey& key);

}  // namespace dmlbits::gpu::shader

// The GPU kernels (shaders/): the key catalogue, the contract's arithmetic, the containers, and
// what the bytecode computes. The last is checked without a GPU: a small interpreter decodes
// each kernel's SHEX tokens (independently of the encoder) and executes them with Shader Model 5
// semantics over test buffers, thread by thread, on a dispatch grid built as gpu_kernel.hpp
// prescribes. It is stricter than a GPU where vkd3d 1.2 is fragile: a shift count >= 32, an
// imul high half, a udiv writing a register it reads, a bit field past bit 31, or any read or
// write outside a buffer fails the test. Expected values come from the scalar semantics in
// cpu_reference.hpp (reference_binary / reference_not / reference_popcount).
#include <gtest/gtest.h>

#include <bit>
#include <cstring>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "cpu_reference.hpp"
#include "dxbc.hpp"
#include "dmlbits/error.hpp"
#include "gpu_kernel.hpp"
#include "graph_kernel.hpp"

namespace dmlbits::gpu {
namespace {

// ---------------------------------------------------------------------------------------------
// Decoding

struct DOperand {
  unsigned type = 0;
  unsigned components = 0;  // 0, 1, 4
  unsigned selection = 0;   // 0 mask, 1 swizzle, 2 select1
  unsigned mask = 0;
  unsigned swz[4]{0, 1, 2, 3};
  unsigned dims = 0;
  std::uint32_t index[3]{};
  std::uint32_t imm[4]{};
};

struct DInstruction {
  unsigned opcode = 0;
  std::uint32_t token = 0;
  std::vector<DOperand> ops;
  std::vector<std::uint32_t> rest;  // declaration words after the operands
};

struct Decoded {
  std::uint32_t version = 0;
  std::vector<DInstruction> code;
  std::map<unsigned, std::vector<DInstruction>> decls;  // by opcode
};

// Operands per opcode (destinations included), for the instructions the kernels may use.
int operand_count(unsigned op) {
  switch (op) {
    case 0x3e:
    case 0x12:
    case 0x15:
    case 0x16:
    case 0x30:
      return 0;  // ret else endif endloop loop
    case 0x1f:
    case 0x03:
      return 1;  // if breakc
    case 0x36:
    case 0x3b:
    case 0x86:
      return 2;  // mov not countbits
    case 0x01:
    case 0x3c:
    case 0x57:
    case 0x1e:
    case 0x29:
    case 0x55:  // and or xor iadd ishl ushr
    case 0x20:
    case 0x27:
    case 0x4f:
    case 0x50:
    case 0xa5:
    case 0xa6:
      return 3;  // ieq ine ult uge ld_raw store_raw
    case 0x37:
    case 0x26:
    case 0x4e:
    case 0x8a:
      return 4;  // movc imul udiv ubfe
    case 0x8c:
      return 5;  // bfi
    default:
      return -1;
  }
}

DOperand decode_operand(const std::vector<std::uint32_t>& w, std::size_t& p) {
  DOperand o;
  const std::uint32_t t = w.at(p++);
  if (t & 0x80000000u) throw std::runtime_error("extended operand token");
  const unsigned nc = t & 3;
  o.components = nc == 0 ? 0 : nc == 1 ? 1 : nc == 2 ? 4 : 99;
  if (o.components == 99) throw std::runtime_error("N-component operand");
  o.type = (t >> 12) & 0xff;
  o.dims = (t >> 20) & 3;
  if (((t >> 22) & 0x1ff) != 0) throw std::runtime_error("non-immediate index representation");
  if (o.components == 4 && o.type != 4) {
    o.selection = (t >> 2) & 3;
    if (o.selection == 0) o.mask = (t >> 4) & 0xf;
    if (o.selection == 1)
      for (unsigned i = 0; i < 4; ++i) o.swz[i] = (t >> (4 + 2 * i)) & 3;
    if (o.selection == 2) o.swz[0] = o.swz[1] = o.swz[2] = o.swz[3] = (t >> 4) & 3;
  }
  for (unsigned i = 0; i < o.dims; ++i) o.index[i] = w.at(p++);
  if (o.type == 4)
    for (unsigned i = 0; i < o.components; ++i) o.imm[i] = w.at(p++);
  return o;
}

Decoded decode(const std::vector<std::uint8_t>& container) {
  // Find SHEX through the chunk table.
  auto word = [&](std::size_t off) {
    std::uint32_t v;
    std::memcpy(&v, container.data() + off, 4);
    return v;
  };
  std::vector<std::uint32_t> w;
  for (std::uint32_t c = 0; c < word(28); ++c) {
    const std::uint32_t at = word(32 + 4 * c);
    if (word(at) == 0x58454853u) {
      const std::uint32_t size = word(at + 4);
      w.resize(size / 4);
      std::memcpy(w.data(), container.data() + at + 8, size);
    }
  }
  if (w.size() < 2 || w[1] != w.size()) throw std::runtime_error("no SHEX chunk or wrong length token");
  Decoded d;
  d.version = w[0];
  for (std::size_t p = 2; p < w.size();) {
    const std::uint32_t tok = w[p];
    const unsigned op = tok & 0x7ff;
    const std::size_t len = (tok >> 24) & 0x7f;
    if (len == 0 || p + len > w.size()) throw std::runtime_error("bad instruction length");
    const std::size_t end = p + len;
    std::size_t q = p + 1;
    if (tok & 0x80000000u) throw std::runtime_error("unexpected extended opcode token");
    DInstruction ins;
    ins.opcode = op;
    ins.token = tok;
    const bool decl = op == 0x59 || op == 0x5f || op == 0x68 || op == 0x6a || op == 0x9b || op == 0x9d || op == 0xa1;
    if (decl) {
      if (op == 0x59 || op == 0x5f || op == 0x9d || op == 0xa1) ins.ops.push_back(decode_operand(w, q));
      while (q < end) ins.rest.push_back(w[q++]);
      d.decls[op].push_back(ins);
    } else {
      const int n = operand_count(op);
      if (n < 0) throw std::runtime_error("opcode " + std::to_string(op) + " outside the kernels' set");
      for (int i = 0; i < n; ++i) ins.ops.push_back(decode_operand(w, q));
      d.code.push_back(ins);
    }
    if (q != end) throw std::runtime_error("operands do not fill opcode " + std::to_string(op) + "'s length");
    p = end;
  }
  return d;
}

// ---------------------------------------------------------------------------------------------
// Execution

struct Buffers {
  std::vector<std::uint8_t> t[kGraphMaxBuffers];  // t0, t1 (graph kernels: up to t7)
  std::vector<std::uint8_t> u0;
};

class Interpreter {
 public:
  explicit Interpreter(const Decoded& d) : d_(d) {
    const auto& temps = d.decls.find(0x68);
    temps_ = temps == d.decls.end() ? 0 : temps->second.at(0).rest.at(0);
    // Match the structured control flow once.
    std::vector<std::size_t> stack;
    for (std::size_t i = 0; i < d.code.size(); ++i) {
      const unsigned op = d.code[i].opcode;
      if (op == 0x1f || op == 0x30) stack.push_back(i);
      if (op == 0x12) {
        target_[stack.back()] = i;  // if -> else
        stack.back() = i;
      }
      if (op == 0x15 || op == 0x16) {
        target_[stack.back()] = i;  // if/else -> endif, loop -> endloop
        if (op == 0x16) target_[i] = stack.back();
        stack.pop_back();
      }
    }
  }

  // Runs one thread; returns problems found (empty when fine).
  void run(std::uint32_t tid_x, std::uint32_t tid_y, const std::uint32_t* constants, Buffers& b,
           std::vector<std::string>& problems) {
    std::vector<std::array<std::uint32_t, 4>> r(temps_, {0xdeadbeefu, 0xdeadbeefu, 0xdeadbeefu, 0xdeadbeefu});
    auto fail = [&](const std::string& m) {
      if (problems.size() < 5) problems.push_back(m);
    };
    auto src = [&](const DOperand& o) {
      std::array<std::uint32_t, 4> base{};
      switch (o.type) {
        case 0:
          base = r.at(o.index[0]);
          break;
        case 4:
          return o.components == 1 ? std::array<std::uint32_t, 4>{o.imm[0], o.imm[0], o.imm[0], o.imm[0]}
                                   : std::array<std::uint32_t, 4>{o.imm[0], o.imm[1], o.imm[2], o.imm[3]};
        case 8:
          if (o.index[0] != 0 || o.index[1] >= 7) fail("constant buffer index out of range");
          for (unsigned i = 0; i < 4; ++i) base[i] = constants[(o.index[1] % 7) * 4 + i];
          break;
        case 32:
          base = {tid_x, tid_y, 0, 0};
          break;
        default:
          fail("source type " + std::to_string(o.type));
      }
      return std::array<std::uint32_t, 4>{base[o.swz[0]], base[o.swz[1]], base[o.swz[2]], base[o.swz[3]]};
    };
    auto write = [&](const DOperand& o, const std::array<std::uint32_t, 4>& v) {
      if (o.type == 13) return;
      if (o.type != 0 || o.selection != 0) {
        fail("destination type " + std::to_string(o.type));
        return;
      }
      for (unsigned i = 0; i < 4; ++i)
        if (o.mask & (1u << i)) r.at(o.index[0])[i] = v[i];
    };
    auto map2 = [&](const DInstruction& ins, auto f) {
      const auto a = src(ins.ops[1]), c = src(ins.ops[2]);
      std::array<std::uint32_t, 4> v{};
      for (unsigned i = 0; i < 4; ++i) v[i] = f(a[i], c[i]);
      write(ins.ops[0], v);
    };
    auto shift_count = [&](std::uint32_t c) {
      if (c >= 32) fail("shift count " + std::to_string(c) + " >= 32 (vkd3d does not mask it)");
      return c & 31;
    };
    auto field = [&](std::uint32_t w, std::uint32_t o) {
      if ((w & 31) + (o & 31) > 32) fail("bit field past bit 31 (undefined in SPIR-V)");
    };
    auto load = [&](int t, std::uint32_t address) -> std::uint32_t {
      const auto& buf = b.t[t];
      if (address % 4 != 0 || std::uint64_t{address} + 4 > buf.size()) {
        fail("t" + std::to_string(t) + " read at byte " + std::to_string(address) + " of " +
             std::to_string(buf.size()));
        return 0;
      }
      std::uint32_t v;
      std::memcpy(&v, buf.data() + address, 4);
      return v;
    };
    std::size_t pc = 0;
    std::uint64_t steps = 0;
    while (pc < d_.code.size()) {
      if (++steps > 100000) {
        fail("runaway thread");
        return;
      }
      const DInstruction& ins = d_.code[pc];
      const bool nz = (ins.token >> 18) & 1;
      switch (ins.opcode) {
        case 0x3e:
          return;     // ret
        case 0x1f: {  // if
          const bool c = src(ins.ops[0])[0] != 0;
          if (c != nz) {
            const std::size_t t = target_.at(pc);
            pc = t + 1;  // past else or endif
            continue;
          }
          break;
        }
        case 0x12:
          pc = target_.at(pc) + 1;
          continue;  // else reached from the if branch
        case 0x15:
          break;
        case 0x30:
          break;
        case 0x16:
          pc = target_.at(pc) + 1;
          continue;  // endloop
        case 0x03: {
          const bool c = src(ins.ops[0])[0] != 0;
          if (c == nz) {
            // breakc: to the end of the innermost loop.
            std::size_t depth = 0, i = pc + 1;
            for (; i < d_.code.size(); ++i) {
              if (d_.code[i].opcode == 0x30) ++depth;
              if (d_.code[i].opcode == 0x16) {
                if (depth == 0) break;
                --depth;
              }
            }
            pc = i + 1;
            continue;
          }
          break;
        }
        case 0x36:
          write(ins.ops[0], src(ins.ops[1]));
          break;
        case 0x3b: {
          auto v = src(ins.ops[1]);
          for (auto& x : v) x = ~x;
          write(ins.ops[0], v);
          break;
        }
        case 0x86: {
          auto v = src(ins.ops[1]);
          for (auto& x : v) x = static_cast<std::uint32_t>(std::popcount(x));
          write(ins.ops[0], v);
          break;
        }
        case 0x01:
          map2(ins, [](std::uint32_t a, std::uint32_t c) { return a & c; });
          break;
        case 0x3c:
          map2(ins, [](std::uint32_t a, std::uint32_t c) { return a | c; });
          break;
        case 0x57:
          map2(ins, [](std::uint32_t a, std::uint32_t c) { return a ^ c; });
          break;
        case 0x1e:
          map2(ins, [](std::uint32_t a, std::uint32_t c) { return a + c; });
          break;
        case 0x29:
          map2(ins, [&](std::uint32_t a, std::uint32_t c) { return a << shift_count(c); });
          break;
        case 0x55:
          map2(ins, [&](std::uint32_t a, std::uint32_t c) { return a >> shift_count(c); });
          break;
        case 0x20:
          map2(ins, [](std::uint32_t a, std::uint32_t c) { return a == c ? ~0u : 0u; });
          break;
        case 0x27:
          map2(ins, [](std::uint32_t a, std::uint32_t c) { return a != c ? ~0u : 0u; });
          break;
        case 0x4f:
          map2(ins, [](std::uint32_t a, std::uint32_t c) { return a < c ? ~0u : 0u; });
          break;
        case 0x50:
          map2(ins, [](std::uint32_t a, std::uint32_t c) { return a >= c ? ~0u : 0u; });
          break;
        case 0x37: {
          const auto c = src(ins.ops[1]), a = src(ins.ops[2]), e = src(ins.ops[3]);
          std::array<std::uint32_t, 4> v{};
          for (unsigned i = 0; i < 4; ++i) v[i] = c[i] ? a[i] : e[i];
          write(ins.ops[0], v);
          break;
        }
        case 0x26: {
          if (ins.ops[0].type != 13) fail("imul with a high destination (vkd3d miscompiles it)");
          const auto a = src(ins.ops[2]), c = src(ins.ops[3]);
          std::array<std::uint32_t, 4> v{};
          for (unsigned i = 0; i < 4; ++i) v[i] = a[i] * c[i];
          write(ins.ops[1], v);
          break;
        }
        case 0x4e: {
          // vkd3d stores the quotient before it reloads the sources for the remainder.
          const unsigned written = ins.ops[0].mask | ins.ops[1].mask;
          for (unsigned k = 0; k < 2; ++k)
            for (unsigned s = 2; s < 4; ++s) {
              const DOperand &dst = ins.ops[k], &sv = ins.ops[s];
              if (dst.type != 0 || sv.type != 0 || dst.index[0] != sv.index[0]) continue;
              for (unsigned i = 0; i < 4; ++i)
                if ((written & (1u << i)) && (dst.mask & (1u << sv.swz[i]))) fail("udiv writes a component it reads");
            }
          const auto a = src(ins.ops[2]), c = src(ins.ops[3]);
          std::array<std::uint32_t, 4> q{}, m{};
          for (unsigned i = 0; i < 4; ++i) {
            q[i] = c[i] ? a[i] / c[i] : ~0u;
            m[i] = c[i] ? a[i] % c[i] : ~0u;
          }
          write(ins.ops[0], q);
          write(ins.ops[1], m);
          break;
        }
        case 0x8a: {
          const auto wd = src(ins.ops[1]), of = src(ins.ops[2]), a = src(ins.ops[3]);
          std::array<std::uint32_t, 4> v{};
          for (unsigned i = 0; i < 4; ++i) {
            field(wd[i], of[i]);
            const std::uint32_t w = wd[i] & 31, o = of[i] & 31;
            v[i] = w == 0 ? 0 : (a[i] >> o) & ((1u << w) - 1);
          }
          write(ins.ops[0], v);
          break;
        }
        case 0x8c: {
          const auto wd = src(ins.ops[1]), of = src(ins.ops[2]), in = src(ins.ops[3]), base = src(ins.ops[4]);
          std::array<std::uint32_t, 4> v{};
          for (unsigned i = 0; i < 4; ++i) {
            field(wd[i], of[i]);
            const std::uint32_t w = wd[i] & 31, o = of[i] & 31;
            const std::uint32_t mask = ((w == 0 ? 0u : (1u << w) - 1)) << o;
            v[i] = ((in[i] << o) & mask) | (base[i] & ~mask);
          }
          write(ins.ops[0], v);
          break;
        }
        case 0xa5: {  // ld_raw dst, address, t#.swizzle
          const std::uint32_t address = src(ins.ops[1])[0];
          const DOperand& res = ins.ops[2];
          if (res.type != 7 || res.index[0] >= kGraphMaxBuffers) {
            fail("ld_raw from a register other than t0..t7");
            break;
          }
          std::array<std::uint32_t, 4> v{};
          for (unsigned i = 0; i < 4; ++i)
            if (ins.ops[0].mask & (1u << i)) v[i] = load(static_cast<int>(res.index[0]), address + 4 * res.swz[i]);
          write(ins.ops[0], v);
          break;
        }
        case 0xa6: {  // store_raw u0.mask, address, value
          const DOperand& dst = ins.ops[0];
          if (dst.type != 30 || dst.index[0] != 0) {
            fail("store_raw to a register other than u0");
            break;
          }
          const std::uint32_t address = src(ins.ops[1])[0];
          const auto v = src(ins.ops[2]);
          for (unsigned i = 0; i < 4; ++i) {
            if (!(dst.mask & (1u << i))) continue;
            const std::uint64_t at = std::uint64_t{address} + 4 * i;
            if (at % 4 != 0 || at + 4 > b.u0.size()) {
              fail("u0 write at byte " + std::to_string(at) + " of " + std::to_string(b.u0.size()));
              continue;
            }
            std::memcpy(b.u0.data() + at, &v[i], 4);
          }
          break;
        }
        default:
          fail("opcode " + std::to_string(ins.opcode));
      }
      ++pc;
    }
    fail("fell off the end without ret");
  }

 private:
  const Decoded& d_;
  std::uint32_t temps_ = 0;
  std::map<std::size_t, std::size_t> target_;
};

// Runs `key`'s kernel over `count` elements the way the backend dispatches it
// (dispatch_grid), or with `force_groups` groups, so that each thread loops over several units.
std::vector<std::string> dispatch(const KernelKey& key, KernelConstants c, Buffers& b, unsigned force_groups = 0) {
  const Decoded d = decode(build_kernel(key));
  Interpreter in(d);
  DispatchGrid grid = dispatch_grid(key, c.count);
  if (force_groups) grid = {force_groups, force_groups * kThreadGroupSize};
  c.threads = grid.threads;
  std::uint32_t words[kConstantWords];
  std::memcpy(words, &c, sizeof words);
  std::vector<std::string> problems;
  for (std::uint32_t x = 0; x < grid.groups * kThreadGroupSize; ++x) in.run(x, 0, words, b, problems);
  return problems;
}

// ---------------------------------------------------------------------------------------------
// Expected results

std::uint64_t get(const std::vector<std::uint8_t>& buf, std::uint64_t index, unsigned bits) {
  std::uint64_t v = 0;
  std::memcpy(&v, buf.data() + index * bits / 8, bits / 8);
  return v;
}

void put(std::vector<std::uint8_t>& buf, std::uint64_t index, unsigned bits, std::uint64_t v) {
  std::memcpy(buf.data() + index * bits / 8, &v, bits / 8);
}

template <class T>
std::uint64_t binary_as(OpKind op, std::uint64_t a, std::uint64_t b, ShiftOverflow m) {
  return reference_binary<T>(op, static_cast<T>(a), static_cast<T>(b), m);
}

std::uint64_t expected_element(const KernelKey& key, std::uint64_t a, std::uint64_t b) {
  if (key.op == OpKind::popcount) return std::popcount(a);  // a holds only in_bits bits
  if (key.op == OpKind::bit_not) {
    switch (key.in_bits) {
      case 8:
        return reference_not<std::uint8_t>(static_cast<std::uint8_t>(a));
      case 16:
        return reference_not<std::uint16_t>(static_cast<std::uint16_t>(a));
      case 32:
        return reference_not<std::uint32_t>(static_cast<std::uint32_t>(a));
      default:
        return reference_not<std::uint64_t>(a);
    }
  }
  switch (key.in_bits) {
    case 8:
      return binary_as<std::uint8_t>(key.op, a, b, key.shift_overflow);
    case 16:
      return binary_as<std::uint16_t>(key.op, a, b, key.shift_overflow);
    case 32:
      return binary_as<std::uint32_t>(key.op, a, b, key.shift_overflow);
    default:
      return binary_as<std::uint64_t>(key.op, a, b, key.shift_overflow);
  }
}

bool is_binary(OpKind op) { return op != OpKind::bit_not && op != OpKind::popcount; }
bool is_shift(OpKind op) { return op == OpKind::shl || op == OpKind::shr; }

// One case: `sizes` (outermost first, at most 8) and per-input strides (empty: packed), bases.
struct Case {
  std::vector<std::uint32_t> sizes;
  std::vector<std::uint32_t> strides[2];
  std::uint32_t base[2]{};
};

std::string run_case(const KernelKey& key, const Case& cs, std::mt19937& rng, unsigned force_groups = 0) {
  const unsigned rank = static_cast<unsigned>(cs.sizes.size());
  std::uint64_t count = 1;
  for (auto s : cs.sizes) count *= s;
  KernelConstants c;
  c.count = static_cast<std::uint32_t>(count);
  c.base[0] = cs.base[0];
  c.base[1] = cs.base[1];
  for (unsigned i = 0; i < kMaxRank; ++i) c.sizes[i] = 1;
  std::vector<std::uint32_t> strides[2];
  for (unsigned t = 0; t < 2; ++t) {
    strides[t] = cs.strides[t];
    if (strides[t].empty()) {  // packed row-major
      strides[t].assign(rank, 1);
      for (unsigned d = rank; d-- > 1;) strides[t][d - 1] = strides[t][d] * cs.sizes[d];
    }
  }
  for (unsigned d = 0; d < rank; ++d) {
    c.sizes[kMaxRank - rank + d] = cs.sizes[d];
    for (unsigned t = 0; t < 2; ++t) c.strides[t][kMaxRank - rank + d] = strides[t][d];
  }
  // Element index in input t of each output element.
  auto offset = [&](unsigned t, std::uint64_t flat) {
    std::uint64_t off = cs.base[t];
    for (unsigned d = rank; d-- > 0;) {
      off += (flat % cs.sizes[d]) * strides[t][d];
      flat /= cs.sizes[d];
    }
    return off;
  };
  const unsigned inputs = is_binary(key.op) ? 2 : 1;
  Buffers b;
  for (unsigned t = 0; t < inputs; ++t) {
    std::uint64_t extent = cs.base[t];
    for (std::uint64_t e = 0; e < count; ++e) extent = std::max(extent, offset(t, e) + 1);
    std::uint64_t bytes = (extent * key.in_bits / 8 + 3) / 4 * 4;
    // Packed kernels read whole units: the contract's size, past the data (gpu_kernel.hpp).
    if (!key.strided)
      bytes = std::max<std::uint64_t>(bytes, std::uint64_t{cs.base[t]} * key.in_bits / 8 +
                                                 std::uint64_t{output_units(key, c.count)} * unit_input_bytes(key));
    b.t[t].resize(bytes);
    for (auto& x : b.t[t]) x = static_cast<std::uint8_t>(rng());  // bytes past the data included
    if (t == 1 && is_shift(key.op)) {
      // Counts around the width; around 32 and its multiples, where the directml mode's 32-bit
      // lane wraps; all ones; for 64-bit, counts with a nonzero high word or a large low word.
      const std::uint64_t all_ones = ~0ull >> (64 - key.in_bits);
      for (std::uint64_t e = 0; e < extent; ++e) {
        std::uint64_t v = rng() % (key.in_bits + 4);
        switch (rng() % 8) {
          case 0:
            v = all_ones;
            break;
          case 1:
            v = rng() % 100;
            break;
          case 2:
            v = key.in_bits == 64 ? (std::uint64_t{rng()} << 32) | (rng() % 8) : v;
            break;
          case 3:
            v = (std::uint64_t{rng()} << 32 | rng()) & all_ones;
            break;
          default:
            break;
        }
        put(b.t[1], e, key.in_bits, v);
      }
    }
  }
  const std::uint64_t units = output_units(key, c.count);
  b.u0.assign(units * unit_bytes(key), 0x5a);  // every byte must be written
  std::vector<std::uint8_t> want(units * unit_bytes(key), 0);
  for (std::uint64_t e = 0; e < count; ++e) {
    const std::uint64_t a = get(b.t[0], offset(0, e), key.in_bits);
    const std::uint64_t bv = inputs == 2 ? get(b.t[1], offset(1, e), key.in_bits) : 0;
    put(want, e, key.out_bits, expected_element(key, a, bv));
  }
  const auto problems = dispatch(key, c, b, force_groups);
  std::string report;
  for (const auto& p : problems) report += p + "; ";
  if (b.u0 != want) {
    for (std::uint64_t i = 0; i < want.size(); ++i)
      if (b.u0[i] != want[i]) {
        report += "output byte " + std::to_string(i) + " is " + std::to_string(b.u0[i]) + ", expected " +
                  std::to_string(want[i]);
        break;
      }
  }
  return report;
}

// ---------------------------------------------------------------------------------------------
// Tests

TEST(GpuKernelTest, KeysCoverTheSupportTable) {
  const auto keys = all_kernel_keys();
  // and/or/xor/not and shl/shr (3 overflow modes) at 4 widths, popcount at 4 widths x 2
  // outputs; each packed and strided.
  EXPECT_EQ(keys.size(), (4 * 4 + 2 * 3 * 4 + 4 * 2) * 2u);
  std::set<KernelKey> unique(keys.begin(), keys.end());
  EXPECT_EQ(unique.size(), keys.size());
  std::set<std::string> names;
  for (const auto& k : keys) names.insert(to_string(k));
  EXPECT_EQ(names.size(), keys.size());
  // Every operator with a shader, at every width: an operator with output types of its own at
  // each of them, strided; the others packed and strided, a shift in each overflow mode.
  for (const OpInfo& info : op_table()) {
    if (info.shader == ShaderFamily::none) continue;
    const OpKind op = info.kind;
    for (unsigned bits : {8u, 16u, 32u, 64u}) {
      if (!info.output_dtype_is_input_dtype()) {
        for (const DTypeInfo& out : dtype_table()) {
          if (!info.tiers.back().outputs.contains(out.dtype)) continue;
          EXPECT_TRUE(unique.count({op, bits, out.bits(), ShiftOverflow::zero, true})) << info.verb << bits;
        }
        continue;
      }
      for (bool strided : {false, true}) {
        EXPECT_TRUE(unique.count({op, bits, bits, ShiftOverflow::zero, strided})) << info.verb << bits;
        if (is_shift(op)) {
          EXPECT_TRUE(unique.count({op, bits, bits, ShiftOverflow::wrap, strided}));
          EXPECT_TRUE(unique.count({op, bits, bits, ShiftOverflow::directml, strided}));
        }
      }
    }
  }
}

TEST(GpuKernelTest, NamesReadAsKeys) {
  EXPECT_EQ(to_string({OpKind::shl, 16, 16, ShiftOverflow::wrap, true}), "shl_u16_wrap_strided");
  EXPECT_EQ(to_string({OpKind::shr, 64, 64, ShiftOverflow::zero, false}), "shr_u64_zero");
  EXPECT_EQ(to_string({OpKind::shl, 8, 8, ShiftOverflow::directml, false}), "shl_u8_directml");
  EXPECT_EQ(to_string({OpKind::bit_and, 8, 8, ShiftOverflow::zero, false}), "and_u8");
  EXPECT_EQ(to_string({OpKind::popcount, 64, 8, ShiftOverflow::zero, true}), "popcount_u64_to_u8_strided");
}

TEST(GpuKernelTest, OutputUnitsAreSixteenBytesPackedAndOneWordStrided) {
  const auto packed = [](OpKind op, unsigned in, unsigned out) {
    return KernelKey{op, in, out, ShiftOverflow::zero, false};
  };
  const auto strided = [](OpKind op, unsigned in, unsigned out) {
    return KernelKey{op, in, out, ShiftOverflow::zero, true};
  };
  // Packed: 16 bytes of output per unit (16 / 8 / 4 / 2 elements of 8 / 16 / 32 / 64 bits).
  // Strided: one word, or one 64-bit element.
  EXPECT_EQ(unit_bytes(packed(OpKind::bit_and, 8, 8)), 16u);
  EXPECT_EQ(unit_bytes(packed(OpKind::bit_and, 64, 64)), 16u);
  EXPECT_EQ(unit_bytes(strided(OpKind::bit_and, 8, 8)), 4u);
  EXPECT_EQ(unit_bytes(strided(OpKind::bit_and, 64, 64)), 8u);
  EXPECT_EQ(unit_bytes(strided(OpKind::popcount, 64, 32)), 4u);
  // Input bytes a packed unit reads.
  EXPECT_EQ(unit_input_bytes(packed(OpKind::bit_and, 32, 32)), 16u);
  EXPECT_EQ(unit_input_bytes(packed(OpKind::popcount, 64, 8)), 128u);
  EXPECT_EQ(unit_input_bytes(packed(OpKind::popcount, 8, 32)), 4u);
  struct Row {
    KernelKey key;
    std::uint32_t count, units;
  };
  const Row rows[] = {
      {packed(OpKind::bit_and, 8, 8), 0, 0},
      {packed(OpKind::bit_and, 8, 8), 1, 1},
      {packed(OpKind::bit_and, 8, 8), 16, 1},
      {packed(OpKind::bit_and, 8, 8), 17, 2},
      {packed(OpKind::bit_and, 16, 16), 9, 2},
      {packed(OpKind::bit_and, 32, 32), 4, 1},
      {packed(OpKind::bit_and, 32, 32), 7, 2},
      {packed(OpKind::bit_and, 64, 64), 3, 2},
      {packed(OpKind::popcount, 64, 8), 16, 1},
      {packed(OpKind::popcount, 8, 32), 5, 2},
      {packed(OpKind::bit_and, 8, 8), 0xffffffffu, 0x10000000u},
      {strided(OpKind::bit_and, 8, 8), 0, 0},
      {strided(OpKind::bit_and, 8, 8), 4, 1},
      {strided(OpKind::bit_and, 8, 8), 5, 2},
      {strided(OpKind::bit_and, 16, 16), 3, 2},
      {strided(OpKind::bit_and, 32, 32), 7, 7},
      {strided(OpKind::bit_and, 64, 64), 7, 7},
      {strided(OpKind::popcount, 64, 8), 5, 2},
      {strided(OpKind::popcount, 8, 32), 5, 5},
      {strided(OpKind::bit_and, 16, 16), 0xffffffffu, 0x80000000u},
  };
  for (const Row& r : rows)
    EXPECT_EQ(output_units(r.key, r.count), r.units) << to_string(r.key) << " count " << r.count;
}

TEST(GpuKernelTest, TheGridCoversTheUnitsUpToTheGroupLimit) {
  const KernelKey key{OpKind::bit_and, 32, 32, ShiftOverflow::zero, false};
  const auto grid = [&](std::uint32_t count) {
    const DispatchGrid g = dispatch_grid(key, count);
    EXPECT_EQ(g.threads, g.groups * kThreadGroupSize);
    return g.groups;
  };
  EXPECT_EQ(grid(0), 1u);  // D3D12 takes no empty dispatch; the one group finds no unit
  EXPECT_EQ(grid(4 * kThreadGroupSize), 1u);
  EXPECT_EQ(grid(4 * kThreadGroupSize + 1), 2u);
  EXPECT_EQ(grid(4 * kThreadGroupSize * kMaxGroups), kMaxGroups);
  EXPECT_EQ(grid(0xffffffffu), kMaxGroups);  // the threads loop over the rest
}

// Packed kernels move 16 bytes per access: one store_raw of four words per unit, and their
// inputs read with ld_raw of four words wherever a unit covers four or more input words; they
// have no `if`.
TEST(GpuKernelTest, PackedKernelsLoadAndStoreFourWordsAtOnceWithoutBranches) {
  for (const auto& key : all_kernel_keys()) {
    SCOPED_TRACE(to_string(key));
    const Decoded d = decode(build_kernel(key));
    unsigned stores = 0, wide_loads = 0;
    for (const auto& ins : d.code) {
      if (ins.opcode == 0xa6) {
        ++stores;
        EXPECT_EQ(ins.ops[0].mask, key.strided ? (key.out_bits == 64 ? 3u : 1u) : 15u);
      }
      if (ins.opcode == 0xa5 && ins.ops[0].mask == 15u) ++wide_loads;
      // lavapipe runs both sides of a branch under a mask: only the units' loop.
      if (!key.strided) {
        EXPECT_NE(ins.opcode, 0x1fu) << "if in a packed kernel";
      }
    }
    EXPECT_EQ(stores, 1u);
    const unsigned in_words = 4 * key.in_bits / key.out_bits;  // of each input, per packed unit
    const unsigned inputs = is_binary(key.op) ? 2 : 1;
    EXPECT_EQ(wide_loads, key.strided || in_words < 4 ? 0u : inputs * in_words / 4);
  }
}

TEST(GpuKernelTest, InvalidKeyIsAnInternalError) {
  for (KernelKey k : {KernelKey{OpKind::bit_and, 12, 12}, KernelKey{OpKind::bit_and, 8, 32},
                      KernelKey{OpKind::popcount, 8, 16}, KernelKey{OpKind::bit_xor, 8, 8, ShiftOverflow::wrap}}) {
    try {
      (void)build_kernel(k);
      ADD_FAILURE() << "built a kernel for an invalid key";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::internal);
    }
  }
}

TEST(GpuKernelTest, EveryKernelIsAValidContainerWithTheContractsBindings) {
  for (const auto& key : all_kernel_keys()) {
    SCOPED_TRACE(to_string(key));
    const auto bytes = build_kernel(key);
    ASSERT_GT(bytes.size(), 32u);
    EXPECT_EQ(std::memcmp(bytes.data(), "DXBC", 4), 0);
    const auto sum = dxbc::dxbc_checksum(bytes);
    EXPECT_EQ(std::memcmp(bytes.data() + 4, sum.data(), 16), 0);
    std::uint32_t total;
    std::memcpy(&total, bytes.data() + 24, 4);
    EXPECT_EQ(total, bytes.size());
    const Decoded d = decode(bytes);
    EXPECT_EQ(d.version, 0x00050050u);  // cs_5_0
    ASSERT_EQ(d.decls.count(0x9b), 1u);
    EXPECT_EQ(d.decls.at(0x9b)[0].rest, (std::vector<std::uint32_t>{kThreadGroupSize, 1, 1}));
    ASSERT_EQ(d.decls.count(0x59), 1u);
    EXPECT_EQ(d.decls.at(0x59)[0].ops[0].index[0], 0u);  // cb0
    EXPECT_EQ(d.decls.at(0x59)[0].ops[0].index[1], kConstantWords / 4);
    EXPECT_EQ(d.decls.at(0xa1).size(), is_binary(key.op) ? 2u : 1u);  // t0 (t1)
    EXPECT_EQ(d.decls.at(0x9d).size(), 1u);                           // u0
    EXPECT_EQ(d.decls.at(0x5f)[0].ops[0].type, 32u);                  // vThreadID
    EXPECT_EQ(kernel_listing(key).rfind("cs_5_0\n", 0), 0u);
  }
}

// Elements of one unit of `key` (gpu_kernel.hpp).
std::uint32_t unit_elements(const KernelKey& key) { return unit_bytes(key) * 8 / key.out_bits; }

TEST(GpuKernelTest, PackedKernelsComputeTheReferenceSemantics) {
  std::mt19937 rng(1234);
  for (const auto& key : all_kernel_keys()) {
    if (key.strided) continue;
    // Empty, one element, around one 16-byte unit, and around one group's units.
    const std::uint32_t e = unit_elements(key), g = kThreadGroupSize * e;
    for (std::uint32_t count : {0u, 1u, 3u, e - 1, e, e + 1, 2 * e + 3, g - 1, g, g + 1}) {
      Case cs{{count}, {}, {0, 0}};
      EXPECT_EQ(run_case(key, cs, rng), "") << to_string(key) << " count " << count;
    }
    // Inputs starting past element 0, on a word (the contract); the bytes past the data are
    // random, so that an element read past `count` and kept would show.
    for (std::uint32_t count : {3u, 9u, e + 5}) {
      Case aligned{{count}, {}, {8, 4}};
      EXPECT_EQ(run_case(key, aligned, rng), "") << to_string(key) << " count " << count << " bases 8, 4";
    }
  }
}

TEST(GpuKernelTest, StridedKernelsComputeTheReferenceSemantics) {
  std::mt19937 rng(99);
  for (const auto& key : all_kernel_keys()) {
    if (!key.strided) continue;
    const std::vector<Case> cases = {
        {{5}, {}, {0, 0}},                            // packed, through the strided path
        {{2, 3, 5}, {{1, 2, 6}, {0, 1, 0}}, {0, 0}},  // A transposed, B broadcast over two dims
        {{3, 1, 7}, {{7, 0, 1}, {1, 0, 0}}, {2, 5}},  // bases, a size-1 dim, B a column
        {{2, 1, 1, 1, 1, 1, 3, 2}, {{6, 6, 6, 6, 6, 6, 2, 1}, {0, 0, 0, 0, 0, 0, 0, 1}}, {1, 0}},  // rank 8
    };
    for (std::size_t i = 0; i < cases.size(); ++i)
      EXPECT_EQ(run_case(key, cases[i], rng), "") << to_string(key) << " case " << i;
  }
}

TEST(GpuKernelTest, ThreadsLoopOverUnitsPastTheGrid) {
  // One group for more than two groups' units: each thread writes units x, x + threads, ...
  std::mt19937 rng(7);
  for (const auto& key : all_kernel_keys()) {
    Case cs{{(2 * kThreadGroupSize + 1) * unit_elements(key) + 1}, {}, {0, 0}};
    EXPECT_EQ(run_case(key, cs, rng, 1), "") << to_string(key);
  }
}

// ---------------------------------------------------------------------------------------------
// Graph kernels (graph_kernel.hpp)

// popcount(a ^ b) & s: a, b 32-bit buffers, s an 8-bit scalar, 8-bit counts.
GraphKernelKey popcount_xor_key() {
  GraphKernelKey k;
  k.leaves = {{32, false}, {32, false}, {8, true}};
  k.nodes = {{OpKind::bit_xor, 32, 32, ShiftOverflow::zero, {{{false, 0}, {false, 1}}}},
             {OpKind::popcount, 32, 8, ShiftOverflow::zero, {{{true, 0}, {}}}},
             {OpKind::bit_and, 8, 8, ShiftOverflow::zero, {{{true, 1}, {false, 2}}}}};
  return k;
}

// (a << n) ^ ~c on 16 bits (wrap mode) and on 64 bits (zero mode): a, c buffers, n a scalar.
GraphKernelKey shift_not_key(unsigned bits, ShiftOverflow mode) {
  GraphKernelKey k;
  k.leaves = {{bits, false}, {bits, true}, {bits, false}};
  k.nodes = {{OpKind::shl, bits, bits, mode, {{{false, 0}, {false, 1}}}},
             {OpKind::bit_not, bits, bits, ShiftOverflow::zero, {{{false, 2}, {}}}},
             {OpKind::bit_xor, bits, bits, ShiftOverflow::zero, {{{true, 0}, {true, 1}}}}};
  return k;
}

TEST(GpuKernelTest, GraphKernelsAssembleAndList) {
  for (const GraphKernelKey& key :
       {popcount_xor_key(), shift_not_key(16, ShiftOverflow::wrap), shift_not_key(64, ShiftOverflow::zero)}) {
    SCOPED_TRACE(to_string(key));
    EXPECT_EQ(graph_kernel_refusal(key), "");
    const auto bytes = build_graph_kernel(key);
    ASSERT_GT(bytes.size(), 32u);
    EXPECT_EQ(std::memcmp(bytes.data(), "DXBC", 4), 0);
    const auto sum = dxbc::dxbc_checksum(bytes);
    EXPECT_EQ(std::memcmp(bytes.data() + 4, sum.data(), 16), 0);
    const Decoded d = decode(bytes);
    EXPECT_EQ(d.version, 0x00050050u);  // cs_5_0
    EXPECT_EQ(d.decls.at(0x59)[0].ops[0].index[1], kConstantWords / 4);
    EXPECT_EQ(d.decls.at(0xa1).size(), graph_buffer_count(key));  // a buffer per array leaf
    EXPECT_EQ(d.decls.at(0x9d).size(), 1u);                       // u0
    const std::string listing = graph_kernel_listing(key);
    EXPECT_EQ(listing.rfind("cs_5_0\n", 0), 0u);
    EXPECT_NE(listing.find("dcl_resource_raw t1"), std::string::npos) << listing;
    EXPECT_NE(listing.find("store_raw u0.xyzw"), std::string::npos) << listing;
    EXPECT_NE(listing.find(key.nodes.size() == 3 && key.nodes[1].op == OpKind::popcount ? "countbits" : "ishl"),
              std::string::npos)
        << listing;
  }
  EXPECT_EQ(to_string(popcount_xor_key()), "graph_3n_2b1s_u8");
  // The examples that tests/cli/shader_bytecode.sh hands to vkd3d-compiler.
  for (const GraphKernelKey& key : example_graph_kernel_keys()) {
    SCOPED_TRACE(to_string(key));
    ASSERT_EQ(graph_kernel_refusal(key), "");
    const Decoded d = decode(build_graph_kernel(key));
    EXPECT_EQ(d.decls.count(0xa1) ? d.decls.at(0xa1).size() : 0u, graph_buffer_count(key));
  }
}

TEST(GpuKernelTest, GraphKernelsRefuseWhatTheyCannotBind) {
  GraphKernelKey nine;
  for (unsigned i = 0; i < 9; ++i) nine.leaves.push_back({32, false});
  nine.nodes.push_back({OpKind::bit_xor, 32, 32, ShiftOverflow::zero, {{{false, 0}, {false, 1}}}});
  for (std::uint32_t i = 2; i < 9; ++i)
    nine.nodes.push_back({OpKind::bit_xor, 32, 32, ShiftOverflow::zero, {{{true, i - 2}, {false, i}}}});
  EXPECT_NE(graph_kernel_refusal(nine).find("9 input buffers"), std::string::npos) << graph_kernel_refusal(nine);
  try {
    (void)build_graph_kernel(nine);
    ADD_FAILURE() << "nine buffers assembled";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::internal);
  }
  GraphKernelKey scalars;  // 14 64-bit scalars: 28 words of root constants, 26 fit
  scalars.leaves.assign(14, {64, true});
  scalars.nodes.push_back({OpKind::bit_xor, 64, 64, ShiftOverflow::zero, {{{false, 0}, {false, 1}}}});
  EXPECT_NE(graph_kernel_refusal(scalars), "");
  GraphKernelKey ahead = popcount_xor_key();  // a node reading a later node
  ahead.nodes[0].args[1] = {true, 2};
  EXPECT_NE(graph_kernel_refusal(ahead), "");
  GraphKernelKey widths = popcount_xor_key();  // the and reads 32-bit counts as 8-bit ones
  widths.nodes[1].out_bits = 32;
  EXPECT_NE(graph_kernel_refusal(widths), "");
}

// The graph kernels run in the interpreter against the graphs worked out by hand, on sizes
// around a unit and a group, with random bytes past the data.
TEST(GpuKernelTest, GraphKernelsComputeTheirGraphs) {
  std::mt19937_64 rng(46);
  struct Graph {
    GraphKernelKey key;
    // Element i of the output from the elements of the array leaves and the scalar.
    std::uint64_t (*expected)(std::uint64_t a, std::uint64_t c, std::uint64_t s, unsigned bits);
  };
  const Graph graphs[] = {
      {popcount_xor_key(),
       [](std::uint64_t a, std::uint64_t b, std::uint64_t s, unsigned) -> std::uint64_t {
         return static_cast<std::uint64_t>(std::popcount(a ^ b)) & s;
       }},
      {shift_not_key(16, ShiftOverflow::wrap),
       [](std::uint64_t a, std::uint64_t c, std::uint64_t n, unsigned) -> std::uint64_t {
         return ((a << (n % 16)) ^ ~c) & 0xffff;
       }},
      {shift_not_key(64, ShiftOverflow::zero),
       [](std::uint64_t a, std::uint64_t c, std::uint64_t n, unsigned) -> std::uint64_t {
         return (n >= 64 ? 0 : a << n) ^ ~c;
       }},
  };
  for (const Graph& g : graphs) {
    const unsigned out_bits = graph_out_bits(g.key), out_bytes = out_bits / 8;
    const unsigned in_bytes = g.key.leaves[0].bits / 8;
    const unsigned per_unit = 128 / out_bits, group = kThreadGroupSize * per_unit;
    for (std::uint32_t count : {0u, 1u, per_unit - 1, per_unit, per_unit + 1, group + 1}) {
      for (std::uint64_t scalar : std::vector<std::uint64_t>{3, 9, 17, 70, ~std::uint64_t{0}}) {
        SCOPED_TRACE(to_string(g.key) + " count " + std::to_string(count) + " scalar " + std::to_string(scalar));
        Buffers b;
        const std::uint32_t units = graph_output_units(g.key, count);
        for (unsigned t = 0; t < 2; ++t) {
          b.t[t].resize(std::max<std::size_t>(units * per_unit * in_bytes, 4));
          for (auto& x : b.t[t]) x = static_cast<std::uint8_t>(rng());
        }
        b.u0.assign(std::max<std::uint32_t>(units, 1) * 16, 0xee);
        GraphConstants c;
        c.count = count;
        const DispatchGrid grid = graph_dispatch_grid(g.key, count);
        c.threads = grid.threads;
        const unsigned scalar_bits = g.key.leaves[1].scalar ? g.key.leaves[1].bits : g.key.leaves[2].bits;
        const std::uint64_t sv = scalar_bits == 64 ? scalar : scalar & ((1ull << scalar_bits) - 1);
        c.scalars[0] = static_cast<std::uint32_t>(sv);
        c.scalars[1] = static_cast<std::uint32_t>(sv >> 32);
        const Decoded d = decode(build_graph_kernel(g.key));
        Interpreter in(d);
        std::uint32_t words[kConstantWords];
        std::memcpy(words, &c, sizeof words);
        std::vector<std::string> problems;
        for (std::uint32_t x = 0; x < grid.threads; ++x) in.run(x, 0, words, b, problems);
        ASSERT_EQ(problems, std::vector<std::string>{});
        for (std::uint32_t i = 0; i < count; ++i) {
          std::uint64_t a = 0, other = 0, got = 0;
          std::memcpy(&a, &b.t[0][i * in_bytes], in_bytes);
          std::memcpy(&other, &b.t[1][i * in_bytes], in_bytes);
          std::memcpy(&got, &b.u0[i * out_bytes], out_bytes);
          const std::uint64_t want = g.expected(a, other, sv, out_bits);
          ASSERT_EQ(got, out_bits == 64 ? want : want & ((1ull << out_bits) - 1)) << "element " << i;
        }
      }
    }
  }
}

}  // namespace
}  // namespace dmlbits::gpu

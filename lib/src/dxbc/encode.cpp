// The tokenized program format (SHEX): operand tokens, instruction tokens, the program header.
#include <string>

#include "dxbc.hpp"
#include "dmlbits/error.hpp"

namespace dmlbits::dxbc {
namespace {

[[noreturn]] void bad(const std::string& what) { throw Error(Errc::internal, "DXBC encoder: " + what); }

constexpr unsigned kMaxInstructionWords = 127;  // the length field has 7 bits

}  // namespace

std::uint32_t encode_operand_token(const Operand& o) {
  std::uint32_t t = 0;
  switch (o.components) {
    case 0:
      t = 0;
      break;
    case 1:
      t = 1;
      break;
    case 4:
      t = 2;
      break;
    default:
      bad("operand with " + std::to_string(o.components) + " components");
  }
  // Immediates of four values carry no selection mode (fxc writes 0 there).
  if (o.components == 4 && o.type != OperandType::immediate32) {
    t |= static_cast<std::uint32_t>(o.selection) << 2;
    switch (o.selection) {
      case Selection::mask:
        if (o.mask.bits > 15) bad("write mask out of range");
        t |= static_cast<std::uint32_t>(o.mask.bits) << 4;
        break;
      case Selection::swizzle:
        for (unsigned i = 0; i < 4; ++i) {
          if (o.swizzle.c[i] > 3) bad("swizzle component out of range");
          t |= static_cast<std::uint32_t>(o.swizzle.c[i]) << (4 + 2 * i);
        }
        break;
      case Selection::select1:
        if (o.swizzle.c[0] > 3) bad("selected component out of range");
        t |= static_cast<std::uint32_t>(o.swizzle.c[0]) << 4;
        break;
    }
  }
  t |= static_cast<std::uint32_t>(o.type) << 12;
  if (o.index_dims > 3) bad("operand with more than 3 index dimensions");
  t |= static_cast<std::uint32_t>(o.index_dims) << 20;
  // Index representations (bits 22..30) stay 0: every index is an immediate 32-bit value.
  return t;
}

void encode_operand(const Operand& o, std::vector<std::uint32_t>& out) {
  out.push_back(encode_operand_token(o));
  for (unsigned i = 0; i < o.index_dims; ++i) out.push_back(o.index[i]);
  if (o.type == OperandType::immediate32) {
    if (o.index_dims != 0) bad("indexed immediate");
    for (unsigned i = 0; i < o.components; ++i) out.push_back(o.imm[i]);
  }
}

std::vector<std::uint32_t> encode_instruction(const Instruction& ins) {
  if (ins.controls & ~0x00fff800u) bad("opcode controls outside bits 11..23");
  std::vector<std::uint32_t> out{0};
  for (std::size_t i = 0; i < ins.extended.size(); ++i) {
    const bool chained = (ins.extended[i] & 0x80000000u) != 0;
    if (chained != (i + 1 < ins.extended.size())) bad("extended opcode tokens chained wrongly");
    out.push_back(ins.extended[i]);
  }
  for (const Operand& o : ins.operands) encode_operand(o, out);
  out.insert(out.end(), ins.trailing.begin(), ins.trailing.end());
  if (out.size() > kMaxInstructionWords) bad("instruction longer than 127 words");
  out[0] = static_cast<std::uint32_t>(ins.opcode) | ins.controls | (static_cast<std::uint32_t>(out.size()) << 24) |
           (ins.extended.empty() ? 0u : 0x80000000u);
  return out;
}

std::vector<std::uint32_t> encode_shex(const Program& p) {
  if (p.major > 15 || p.minor > 15) bad("shader model out of range");
  std::vector<std::uint32_t> out{(static_cast<std::uint32_t>(p.type) << 16) | (p.major << 4) | p.minor, 0};
  for (const Instruction& ins : p.instructions) {
    const auto words = encode_instruction(ins);
    out.insert(out.end(), words.begin(), words.end());
  }
  out[1] = static_cast<std::uint32_t>(out.size());
  return out;
}

}  // namespace dmlbits::dxbc

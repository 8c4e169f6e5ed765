// The listing printer: a Program as fxc's /Fc output prints it.
#include <cstdio>
#include <string>

#include "dxbc.hpp"
#include "dmlbits/error.hpp"

namespace dmlbits::dxbc {
namespace {

constexpr char kComponentNames[] = "xyzw";

std::string opcode_name(Opcode op) {
  switch (op) {
    case Opcode::and_:
      return "and";
    case Opcode::breakc:
      return "breakc";
    case Opcode::else_:
      return "else";
    case Opcode::endif:
      return "endif";
    case Opcode::endloop:
      return "endloop";
    case Opcode::iadd:
      return "iadd";
    case Opcode::if_:
      return "if";
    case Opcode::ieq:
      return "ieq";
    case Opcode::imul:
      return "imul";
    case Opcode::ine:
      return "ine";
    case Opcode::ishl:
      return "ishl";
    case Opcode::loop:
      return "loop";
    case Opcode::mov:
      return "mov";
    case Opcode::movc:
      return "movc";
    case Opcode::not_:
      return "not";
    case Opcode::or_:
      return "or";
    case Opcode::ret:
      return "ret";
    case Opcode::udiv:
      return "udiv";
    case Opcode::ult:
      return "ult";
    case Opcode::uge:
      return "uge";
    case Opcode::ushr:
      return "ushr";
    case Opcode::xor_:
      return "xor";
    case Opcode::dcl_constant_buffer:
      return "dcl_constantbuffer";
    case Opcode::dcl_input:
      return "dcl_input";
    case Opcode::dcl_temps:
      return "dcl_temps";
    case Opcode::dcl_global_flags:
      return "dcl_globalFlags";
    case Opcode::countbits:
      return "countbits";
    case Opcode::ubfe:
      return "ubfe";
    case Opcode::bfi:
      return "bfi";
    case Opcode::dcl_thread_group:
      return "dcl_thread_group";
    case Opcode::dcl_uav_raw:
      return "dcl_uav_raw";
    case Opcode::dcl_resource_raw:
      return "dcl_resource_raw";
    case Opcode::ld_raw:
      return "ld_raw";
    case Opcode::store_raw:
      return "store_raw";
  }
  throw Error(Errc::internal, "DXBC listing: unknown opcode " + std::to_string(static_cast<unsigned>(op)));
}

// fxc shows the immediates of bitwise instructions in hex and the others in decimal.
bool hex_immediates(Opcode op) {
  switch (op) {
    case Opcode::and_:
    case Opcode::or_:
    case Opcode::xor_:
    case Opcode::not_:
      return true;
    default:
      return false;
  }
}

std::string register_name(OperandType t) {
  switch (t) {
    case OperandType::temp:
      return "r";
    case OperandType::resource:
      return "t";
    case OperandType::constant_buffer:
      return "cb";
    case OperandType::uav:
      return "u";
    case OperandType::thread_id:
      return "vThreadID";
    case OperandType::thread_group_id:
      return "vThreadGroupID";
    case OperandType::thread_id_in_group:
      return "vThreadIDInGroup";
    case OperandType::thread_id_in_group_flattened:
      return "vThreadIDInGroupFlattened";
    case OperandType::null:
      return "null";
    case OperandType::immediate32:
      return "l";
  }
  throw Error(Errc::internal, "DXBC listing: unknown operand type " + std::to_string(static_cast<unsigned>(t)));
}

std::string immediate_text(std::uint32_t v, bool hex) {
  char buf[16];
  if (hex) {
    std::snprintf(buf, sizeof buf, "0x%08x", v);
  } else {
    std::snprintf(buf, sizeof buf, "%d", static_cast<std::int32_t>(v));
  }
  return buf;
}

std::string components_text(const Operand& o) {
  if (o.components != 4) return "";
  std::string s = ".";
  switch (o.selection) {
    case Selection::mask:
      for (unsigned i = 0; i < 4; ++i)
        if (o.mask.bits & (1u << i)) s += kComponentNames[i];
      break;
    case Selection::swizzle:
      for (unsigned i = 0; i < 4; ++i) s += kComponentNames[o.swizzle.c[i] & 3];
      break;
    case Selection::select1:
      s += kComponentNames[o.swizzle.c[0] & 3];
      break;
  }
  return s;
}

}  // namespace

std::string operand_text(const Operand& o, bool hex) {
  if (o.type == OperandType::null) return "null";
  if (o.type == OperandType::immediate32) {
    std::string s = "l(";
    for (unsigned i = 0; i < o.components; ++i) {
      if (i) s += ", ";
      s += immediate_text(o.imm[i], hex);
    }
    return s + ")";
  }
  std::string s = register_name(o.type);
  if (o.index_dims >= 1) s += std::to_string(o.index[0]);
  for (unsigned i = 1; i < o.index_dims; ++i) s += "[" + std::to_string(o.index[i]) + "]";
  return s + components_text(o);
}

std::string listing(const Program& p) {
  static constexpr const char* kPrefix[] = {"ps", "vs", "gs", "hs", "ds", "cs"};
  const auto type = static_cast<unsigned>(p.type);
  if (type > 5) throw Error(Errc::internal, "DXBC listing: unknown program type");
  std::string out = std::string(kPrefix[type]) + "_" + std::to_string(p.major) + "_" + std::to_string(p.minor) + "\n";
  unsigned depth = 0;
  for (const Instruction& ins : p.instructions) {
    std::string line;
    switch (ins.opcode) {
      case Opcode::dcl_global_flags:
        line = "dcl_globalFlags";
        if (ins.controls & kRefactoringAllowed) line += " refactoringAllowed";
        break;
      case Opcode::dcl_constant_buffer: {
        const Operand& o = ins.operands.at(0);
        line = "dcl_constantbuffer CB" + std::to_string(o.index[0]) + "[" + std::to_string(o.index[1]) + "], " +
               ((ins.controls & kDynamicIndexed) ? "dynamicIndexed" : "immediateIndexed");
        break;
      }
      case Opcode::dcl_temps:
        line = "dcl_temps " + std::to_string(ins.trailing.at(0));
        break;
      case Opcode::dcl_thread_group:
        line = "dcl_thread_group " + std::to_string(ins.trailing.at(0)) + ", " + std::to_string(ins.trailing.at(1)) +
               ", " + std::to_string(ins.trailing.at(2));
        break;
      default: {
        if (ins.opcode == Opcode::else_ || ins.opcode == Opcode::endif || ins.opcode == Opcode::endloop) {
          if (depth > 0) --depth;
        }
        line = opcode_name(ins.opcode);
        if (ins.opcode == Opcode::if_ || ins.opcode == Opcode::breakc)
          line += (ins.controls & kTestNonZero) ? "_nz" : "_z";
        if (ins.opcode == Opcode::ld_raw && !ins.extended.empty())
          line += "_indexable(raw_buffer)(mixed,mixed,mixed,mixed)";
        if (ins.operands.empty()) line += ' ';  // fxc prints "ret ", "endif ", "loop "
        const bool hex = hex_immediates(ins.opcode);
        for (std::size_t i = 0; i < ins.operands.size(); ++i) {
          line += i == 0 ? " " : ", ";
          line += operand_text(ins.operands[i], hex);
        }
        line.insert(0, 2 * depth, ' ');
        if (ins.opcode == Opcode::if_ || ins.opcode == Opcode::else_ || ins.opcode == Opcode::loop) ++depth;
        break;
      }
    }
    out += line;
    out += '\n';
  }
  return out;
}

}  // namespace dmlbits::dxbc

// The expression language of `dmlbits eval`, manifests' "expression" cases and Python's
// dmlbits.evaluate(): one grammar for every face, over the operator table (ops.hpp). This layer
// is syntax only: it turns text into a graph of named operands, literals and operator nodes,
// shared subexpressions merged. Types, shapes and feature levels are the ops layer's (each node
// is validated there as DirectML validates that operator); literals stay text here and are read
// there as an operand literal on the command line is, with the dtype the node gives them.
//
// The grammar (C's precedence, loosest first; every binary operator left-associative):
//
//   expression := or
//   or         := xor ( '|' xor )*
//   xor        := and ( '^' and )*
//   and        := shift ( '&' shift )*
//   shift      := unary ( ( '<<' | '>>' ) unary )*
//   unary      := '~' unary | primary
//   primary    := '(' expression ')' | call | NAME | literal
//   call       := FUNCTION '(' expression ( ',' expression )* ( ',' 'out_dtype' '=' DTYPE )? ')'
//   literal    := integer (decimal, 0x hex, 0b binary, optionally '-'), float (1.5, 1e3, inf, nan,
//                 nan(0x...)), or a JSON-style list '[' ... ']' of those, nested
//
// FUNCTION is any name find_op() knows (the verbs, their aliases) or an operator's python_name or
// python_alias, and takes the operator's arity of arguments; `out_dtype=` is popcount's output
// dtype for that node (uint8 or uint32, as --out-dtype). A symbol maps to the operator whose
// OpInfo::symbol it is. NAME is [A-Za-z_][A-Za-z0-9_]*, an identifier not followed by '('.
//
// Contract: parse_expression() throws Error(Errc::usage) for text outside the grammar or past
// the limits below, with a message that quotes the expression and puts a caret under the column
// (caret_message()); it never reads a file or the environment.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dmlbits/dtype.hpp"
#include "dmlbits/ops.hpp"

namespace dmlbits::expr {

// Documented limits (dmlbits(1), EXPRESSIONS): past them an expression is refused.
inline constexpr std::size_t kMaxExpressionBytes = 64 * 1024;
inline constexpr std::size_t kMaxExpressionNodes = 256;  // after shared subexpressions are merged
inline constexpr std::size_t kMaxExpressionDepth = 64;   // nesting of operators and parentheses

// Where a node's text is in the expression: byte offset (0-based) and length.
struct Span {
  std::uint32_t offset = 0;
  std::uint32_t length = 0;
};

enum class NodeKind : std::uint8_t {
  name,     // an operand bound by name (NAME=INPUT on the command line, a dict key in Python)
  literal,  // a constant, as its text
  op,       // an operator of the table
};

struct Node {
  NodeKind kind = NodeKind::name;
  OpKind op{};                               // op
  std::array<std::int32_t, 2> args{-1, -1};  // op: earlier nodes' indices, op_info(op).arity of them
  std::optional<DType> out_dtype;            // op: `out_dtype=` where given (popcount only)
  std::string name;                          // name: the operand's name
  std::string literal;                       // literal: its text, trimmed, as the command line takes it
  Span span;                                 // where the node first appears in the text
};

struct Expression {
  std::string text;
  // Topological: every node's arguments come before it. Structurally equal subexpressions (the
  // same operator, arguments and out_dtype; the same name; the same literal text) are one node.
  std::vector<Node> nodes;
  std::int32_t root = -1;
  // The operand names, in order of first appearance.
  std::vector<std::string> names;

  // The node's text as written at its first appearance: "a ^ b".
  std::string_view node_text(std::int32_t node) const;
  // 1-based column of the node in the text, for messages.
  std::size_t column(std::int32_t node) const { return nodes[static_cast<std::size_t>(node)].span.offset + 1; }
};

Expression parse_expression(std::string_view text);

// The canonical text of the expression: every operator node in function form with its verb
// ("popcount(xor(a, b))", "popcount(a, out_dtype=uint32)"), names and literals as written.
// parse_expression(to_canonical_text(e)) is e up to spans.
std::string to_canonical_text(const Expression& e);

// "expression: PROBLEM (column C)\n  TEXT\n  ^^^" with the carets under `span` (at least one):
// the message of every syntax error, and of the ops layer's refusals of a node.
std::string caret_message(std::string_view text, Span span, std::string_view problem);

}  // namespace dmlbits::expr

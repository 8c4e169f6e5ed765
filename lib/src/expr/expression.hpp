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
// python_alias, in any case as the command line takes its commands (`AND`, `Bit_Xor`), and
// takes the operator's arity of arguments; `out_dtype=` is popcount's output dtype for that node
// (uint8 or uint32, as --out-dtype; any of the dtype table's names for them). A symbol maps to
// the operator whose OpInfo::symbol it is. NAME is [A-Za-z_][A-Za-z0-9_]*, an identifier not
// followed by '(' (spaces between allowed), and names are case-sensitive; a word followed by
// '(' is a FUNCTION, and there it may also join words with '-', as the aliases do (`bit-and(`).
// `inf`, `infinity` and `nan` in any case are float literals, never names; `nan(0x7f)` (no
// space before its '(') is one literal. '-' begins a negative literal only: there is no minus.
// A list's extent is its matching ']' (strings skipped whole); its elements are the ops layer's
// to read. Spaces (and tabs and newlines) separate tokens anywhere but inside one.
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
// Nesting, two ways, each at most this: operators in operators (the longest chain of operator
// nodes from the root down, `a | b | c` being two), and parentheses, calls and '~' in one
// another in the text (`((a))` being two), which bounds the parser's recursion.
inline constexpr std::size_t kMaxExpressionDepth = 64;

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
  // 1-based column of the node in the text (its byte offset + 1; caret_message() counts a
  // UTF-8 character as one column, which is the same for ASCII text).
  std::size_t column(std::int32_t node) const { return nodes[static_cast<std::size_t>(node)].span.offset + 1; }
};

Expression parse_expression(std::string_view text);

// The canonical text of the expression: every operator node in function form with its verb
// ("popcount(xor(a, b))", "popcount(a, out_dtype=uint32)"), names and literals as written.
// parse_expression(to_canonical_text(e)) is e up to spans (and but for kMaxExpressionBytes: the
// function form can be several times longer than infix text). Throws Error(Errc::internal) for
// a graph that is not topological, or whose text would pass 16 times kMaxExpressionBytes (a graph
// built by hand with much sharing; a parsed one stays far below).
std::string to_canonical_text(const Expression& e);

// "expression: PROBLEM (column C)\n  TEXT\n  ^^^" with the carets under `span` (at least one):
// the message of every syntax error, and of the ops layer's refusals of a node. C and the
// carets count characters (a UTF-8 sequence is one; a control byte shows as a space, a byte
// that is not UTF-8 as '?'); a text longer than a line is shown as a window around the span,
// cut with "...". A span past the text's end puts the caret just after it.
std::string caret_message(std::string_view text, Span span, std::string_view problem);

}  // namespace dmlbits::expr

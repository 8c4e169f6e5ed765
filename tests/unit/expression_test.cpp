// The expression language's syntax (lib/src/expr/expression.hpp): C's precedence, every
// function name and symbol of the operator table, literals kept as their text, out_dtype=,
// shared subexpressions merged, every refusal with its message and caret, the limits, and the
// canonical text's round trip. Expected trees are written by hand in function form.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <fmt/format.h>

#include "dmlbits/error.hpp"
#include "dmlbits/ops.hpp"
#include "expression.hpp"

namespace dmlbits::expr {
namespace {

std::string canonical(std::string_view text) { return to_canonical_text(parse_expression(text)); }

bool same_node(const Node& a, const Node& b) {
  return a.kind == b.kind && a.op == b.op && a.args == b.args && a.out_dtype == b.out_dtype && a.name == b.name &&
         a.literal == b.literal;
}

void expect_same_graph(const Expression& a, const Expression& b) {
  ASSERT_EQ(a.nodes.size(), b.nodes.size()) << a.text << " vs " << b.text;
  for (std::size_t i = 0; i < a.nodes.size(); ++i)
    EXPECT_TRUE(same_node(a.nodes[i], b.nodes[i])) << "node " << i << " of " << a.text << " vs " << b.text;
  EXPECT_EQ(a.root, b.root);
  EXPECT_EQ(a.names, b.names);
}

TEST(ExpressionTest, InfixFollowsCsPrecedenceAndAssociativity) {
  // C: << >> bind tighter than &, then ^, then |; all left-associative; ~ binds tightest.
  EXPECT_EQ(canonical("a | b ^ c & d << e"), "or(a, xor(b, and(c, shl(d, e))))");
  EXPECT_EQ(canonical("a << b & c ^ d | e"), "or(xor(and(shl(a, b), c), d), e)");
  EXPECT_EQ(canonical("a & b | c & d"), "or(and(a, b), and(c, d))");
  EXPECT_EQ(canonical("a ^ b ^ c"), "xor(xor(a, b), c)");
  EXPECT_EQ(canonical("a << b >> c"), "shr(shl(a, b), c)");
  EXPECT_EQ(canonical("a >> b << c"), "shl(shr(a, b), c)");
  EXPECT_EQ(canonical("a|b|c|d"), "or(or(or(a, b), c), d)");
  EXPECT_EQ(canonical("~a & b"), "and(not(a), b)");
  EXPECT_EQ(canonical("~(a & b)"), "not(and(a, b))");
  EXPECT_EQ(canonical("~~a"), "not(not(a))");
  EXPECT_EQ(canonical("~a << ~b"), "shl(not(a), not(b))");
  EXPECT_EQ(canonical("(a | b) & c"), "and(or(a, b), c)");
  EXPECT_EQ(canonical("a ^ (b ^ c)"), "xor(a, xor(b, c))");
  EXPECT_EQ(canonical("((a))"), "a");
  EXPECT_EQ(canonical("popcount(a ^ b) << 2 | c"), "or(shl(popcount(xor(a, b)), 2), c)");
  EXPECT_EQ(canonical(" \t\na\n^\tb "), "xor(a, b)");
}

TEST(ExpressionTest, EveryFunctionNameOfTheTableCallsItsOperator) {
  for (const OpInfo& op : op_table()) {
    std::vector<std::string> names{std::string(op.verb)};
    for (const auto& alias : op.aliases()) names.push_back(alias);
    if (!op.python_name.empty()) names.emplace_back(op.python_name);
    if (!op.python_alias.empty()) names.emplace_back(op.python_alias);
    const std::string args = op.arity == 2 ? "a, b" : "a";
    for (const std::string& name : names) {
      std::string upper = name;
      for (auto& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      for (const std::string& spelling : {name, upper}) {
        const std::string text = spelling + "(" + args + ")";
        SCOPED_TRACE(text);
        const Expression e = parse_expression(text);
        ASSERT_EQ(e.nodes.size(), static_cast<std::size_t>(op.arity) + 1);
        const Node& root = e.nodes[static_cast<std::size_t>(e.root)];
        EXPECT_EQ(root.kind, NodeKind::op);
        EXPECT_EQ(root.op, op.kind);
        EXPECT_EQ(e.names, (op.arity == 2 ? std::vector<std::string>{"a", "b"} : std::vector<std::string>{"a"}));
        EXPECT_EQ(to_canonical_text(e), std::string(op.verb) + "(" + args + ")");
        EXPECT_EQ(e.node_text(e.root), text);
        // A space before '(' keeps it a call.
        EXPECT_EQ(canonical(spelling + " (" + args + ")"), std::string(op.verb) + "(" + args + ")");
      }
    }
  }
}

TEST(ExpressionTest, EverySymbolOfTheTableIsItsOperator) {
  std::size_t symbols = 0;
  for (const OpInfo& op : op_table()) {
    if (op.symbol.empty()) continue;
    ++symbols;
    const std::string text = op.arity == 2 ? fmt::format("a {} b", op.symbol) : fmt::format("{}a", op.symbol);
    SCOPED_TRACE(text);
    const Expression e = parse_expression(text);
    const Node& root = e.nodes[static_cast<std::size_t>(e.root)];
    EXPECT_EQ(root.kind, NodeKind::op);
    EXPECT_EQ(root.op, op.kind);
    EXPECT_EQ(e.node_text(e.root), text);
  }
  EXPECT_EQ(symbols, 6u);  // & | ^ ~ << >>
}

TEST(ExpressionTest, LiteralsKeepTheirExactText) {
  for (const char* lit : {"0",
                          "255",
                          "007",
                          "-1",
                          "-0",
                          "18446744073709551616",
                          "0x1F",
                          "0XfF",
                          "-0x1",
                          "0b101",
                          "0B1",
                          "-0b1",
                          "1.5",
                          "-0.0",
                          "1e-05",
                          "1E+3",
                          "2e8",
                          ".5",
                          "1.",
                          "inf",
                          "-inf",
                          "Infinity",
                          "-INF",
                          "nan",
                          "-nan",
                          "NaN",
                          "nan(0x7f)",
                          "-nan(0X1)",
                          "[]",
                          "[1, 2]",
                          "[[1,2],[3,4]]",
                          "[[[0x1], [2]]]",
                          "[ -1 , 1.5e3 ]",
                          R"(["0x1f", "nan", "]"])",
                          R"(["a\"]"])"}) {
    SCOPED_TRACE(lit);
    const Expression alone = parse_expression(lit);
    ASSERT_EQ(alone.nodes.size(), 1u);
    EXPECT_EQ(alone.nodes[0].kind, NodeKind::literal);
    EXPECT_EQ(alone.nodes[0].literal, lit);
    EXPECT_TRUE(alone.names.empty());

    const std::string text = fmt::format("xor(a,{})", lit);
    const Expression e = parse_expression(text);
    ASSERT_EQ(e.nodes.size(), 3u);
    EXPECT_EQ(e.nodes[1].kind, NodeKind::literal);
    EXPECT_EQ(e.nodes[1].literal, lit);
    EXPECT_EQ(e.node_text(1), lit);
    EXPECT_EQ(e.column(1), 7u);
    EXPECT_EQ(to_canonical_text(e), fmt::format("xor(a, {})", lit));
    // As an infix operand too, with no space after it.
    EXPECT_EQ(canonical(fmt::format("a&{}", lit)), fmt::format("and(a, {})", lit));
  }
  // `inf` and `nan` are never names; `nan(` with its payload is one literal, not a call.
  EXPECT_TRUE(parse_expression("a ^ inf").names == std::vector<std::string>{"a"});
  EXPECT_EQ(canonical("shl(nan(0x7f), nan)"), "shl(nan(0x7f), nan)");
  EXPECT_EQ(canonical("infx ^ nan_"), "xor(infx, nan_)");  // longer words are names
}

TEST(ExpressionTest, OutDtypeIsChosenPerNodeWithTheDtypeTablesNames) {
  const Expression e = parse_expression("popcount(a, out_dtype=uint32) | popcount(b)");
  ASSERT_EQ(e.nodes.size(), 5u);
  EXPECT_EQ(e.nodes[1].out_dtype, DType::uint32);
  EXPECT_EQ(e.nodes[3].out_dtype, std::nullopt);
  EXPECT_EQ(to_canonical_text(e), "or(popcount(a, out_dtype=uint32), popcount(b))");
  EXPECT_EQ(e.node_text(1), "popcount(a, out_dtype=uint32)");
  for (const char* name : {"uint8", "u1", "|u1", "UINT8", "DML_TENSOR_DATA_TYPE_UINT8"})
    EXPECT_EQ(canonical(fmt::format("bitwise_count(a , out_dtype = {} )", name)), "popcount(a, out_dtype=uint8)");
  EXPECT_EQ(canonical("popcount(a, out_dtype=<u4)"), "popcount(a, out_dtype=uint32)");
  // The same dtype by two names is one node; no out_dtype is another.
  EXPECT_EQ(parse_expression("popcount(a, out_dtype=u1) ^ popcount(a, out_dtype=uint8)").nodes.size(), 3u);
  EXPECT_EQ(parse_expression("popcount(a, out_dtype=uint8) ^ popcount(a)").nodes.size(), 4u);
  // A name may be called out_dtype where it is no keyword.
  EXPECT_EQ(canonical("xor(out_dtype, a)"), "xor(out_dtype, a)");
}

TEST(ExpressionTest, SharedSubexpressionsAreOneNode) {
  const Expression e = parse_expression("popcount(a ^ b) | (a ^ b)");
  ASSERT_EQ(e.nodes.size(), 5u);  // a, b, xor, popcount, or
  EXPECT_EQ(e.nodes[2].kind, NodeKind::op);
  EXPECT_EQ(e.nodes[2].op, OpKind::bit_xor);
  EXPECT_EQ(e.nodes[2].args, (std::array<std::int32_t, 2>{0, 1}));
  EXPECT_EQ(e.nodes[3].args[0], 2);
  EXPECT_EQ(e.nodes[4].args, (std::array<std::int32_t, 2>{3, 2}));
  EXPECT_EQ(e.root, 4);
  // Spans are the first appearance's.
  EXPECT_EQ(e.node_text(2), "a ^ b");
  EXPECT_EQ(e.column(2), 10u);
  EXPECT_EQ(e.node_text(3), "popcount(a ^ b)");
  EXPECT_EQ(e.node_text(4), "popcount(a ^ b) | (a ^ b)");
  EXPECT_EQ(to_canonical_text(e), "or(popcount(xor(a, b)), xor(a, b))");

  EXPECT_EQ(parse_expression("xor(a, b) & (a ^ b)").nodes.size(), 4u);
  EXPECT_EQ(parse_expression("a & a").nodes.size(), 2u);
  EXPECT_EQ(parse_expression("1 & 1").nodes.size(), 2u);
  EXPECT_EQ(parse_expression("0x1 & 1").nodes.size(), 3u);        // literals are equal as text
  EXPECT_EQ(parse_expression("a ^ b | b ^ a").nodes.size(), 5u);  // structure, not algebra
  EXPECT_EQ(parse_expression("b & a & b").names, (std::vector<std::string>{"b", "a"}));
  EXPECT_EQ(parse_expression("(a & b) | (a & b) ^ ~(a & b)").nodes.size(), 6u);
}

TEST(ExpressionTest, CanonicalTextParsesBackToTheSameGraph) {
  for (const char* text : {"a", "-1", "[[1, 2], [3, 4]]", "a | b ^ c & d << e", "~a >> 0x3 & [1, 2]",
                           "popcount(a ^ b) | (a ^ b)", "popcount(a, out_dtype=u4) ^ bitwise_count(b, out_dtype=UINT8)",
                           "BIT_AND(DML_OPERATOR_ELEMENT_WISE_BIT_NOT(x), bit-or(y, nan(0x7f)))",
                           "left_shift(a, 3) | right_shift(a, -inf)", "invert(invert(a)) & ~~a",
                           "xor(and, or) | not",  // operator names as operand names
                           "(((a & b) | (c & d)) ^ ((a & b) | 1.5e3))"}) {
    SCOPED_TRACE(text);
    const Expression e = parse_expression(text);
    const std::string once = to_canonical_text(e);
    const Expression back = parse_expression(once);
    expect_same_graph(e, back);
    EXPECT_EQ(to_canonical_text(back), once);
  }
  EXPECT_EQ(canonical("xor(and, or) | not"), "or(xor(and, or), not)");
}

}  // namespace
}  // namespace dmlbits::expr

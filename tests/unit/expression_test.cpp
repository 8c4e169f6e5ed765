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

// The message parse_expression refuses `text` with (and that it is a usage error).
std::string refusal(std::string_view text) {
  try {
    (void)parse_expression(text);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::usage) << text;
    return e.what();
  }
  ADD_FAILURE() << "accepted: " << text;
  return {};
}

// The message for `problem` at 1-based `column`, carets `width` wide, under a short ASCII text.
std::string at(std::string_view text, std::size_t column, std::string_view problem, std::size_t width = 1) {
  return fmt::format("expression: {} (column {})\n  {}\n  {}{}", problem, column, text, std::string(column - 1, ' '),
                     std::string(width, '^'));
}

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

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

// A balanced tree of `leaves` distinct names (x0, x1, ...) under '|' and '&' in turn, in infix:
// 2 * leaves - 1 nodes, about log2(leaves) deep.
std::string balanced(std::size_t first, std::size_t leaves, int level = 0) {
  if (leaves == 1) return fmt::format("x{}", first);
  const std::size_t left = leaves / 2;
  return fmt::format("({} {} {})", balanced(first, left, level + 1), level % 2 ? "&" : "|",
                     balanced(first + left, leaves - left, level + 1));
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

TEST(ExpressionTest, SyntaxErrorsQuoteTheTextWithACaret) {
  EXPECT_EQ(refusal("popcount(a ^)"), at("popcount(a ^)", 13, "unexpected ')'"));
  EXPECT_EQ(refusal(""), "expression: empty expression (column 1)\n  \n  ^");
  EXPECT_EQ(refusal(" \t "), "expression: empty expression (column 1)\n  \n  ^");
  EXPECT_EQ(refusal("a b"), at("a b", 3, "unexpected 'b' after a complete expression"));
  EXPECT_EQ(refusal("a ^ b 0x1"), at("a ^ b 0x1", 7, "unexpected '0x1' after a complete expression", 3));
  EXPECT_EQ(refusal("a ^"), at("a ^", 4, "the expression ends where an operand is expected"));
  EXPECT_EQ(refusal("~"), at("~", 2, "the expression ends where an operand is expected"));
  EXPECT_EQ(refusal("a ^ ^ b"), at("a ^ ^ b", 5, "unexpected '^'"));
  EXPECT_EQ(refusal("a = b"), at("a = b", 3, "unexpected '=' after a complete expression"));
  EXPECT_EQ(refusal("xor(a,)"), at("xor(a,)", 7, "unexpected ')'"));
  EXPECT_EQ(refusal("xor(a b)"), at("xor(a b)", 7, "unexpected 'b'"));
  EXPECT_EQ(refusal("a $ b"), at("a $ b", 3, "unexpected character '$'"));
  EXPECT_EQ(refusal("a.npy"), at("a.npy", 2, "unexpected character '.'"));
  EXPECT_EQ(refusal("a - b"),
            at("a - b", 3, "unexpected '-': there is no subtraction or negation ('-' only begins a negative number)"));
  EXPECT_EQ(refusal("-a"),
            at("-a", 1, "unexpected '-': there is no subtraction or negation ('-' only begins a negative number)"));
  EXPECT_EQ(refusal("a -1"), at("a -1", 3,
                                "unexpected '-1' after a complete expression (there is no subtraction: '-' only "
                                "begins a negative number)",
                                2));
  EXPECT_EQ(refusal("(a -0x1)"),
            at("(a -0x1)", 4, "unexpected '-0x1' (there is no subtraction: '-' only begins a negative number)", 4));
  EXPECT_EQ(refusal("a < b"), at("a < b", 3, "unexpected '<' (the shifts are '<<' and '>>')"));
  EXPECT_EQ(refusal("!a"), at("!a", 1, "unexpected '!' (the complement is '~')"));
  EXPECT_EQ(refusal("a && b"), at("a && b", 4, "unexpected '&'"));
  EXPECT_EQ(refusal("a & 0b12"), at("a & 0b12", 5, "'0b12' is not a number", 4));
  EXPECT_EQ(refusal("shl(a, 1e)"), at("shl(a, 1e)", 8, "'1e' is not a number", 2));
  EXPECT_EQ(refusal("3a"), at("3a", 1, "'3a' is not a number", 2));
  EXPECT_EQ(refusal("a ^ 0x"), at("a ^ 0x", 5, "'0x' is not a number", 2));
  EXPECT_EQ(refusal("a ^ nan(7)"),
            at("a ^ nan(7)", 5, "a NaN's payload is written nan(0x...), in hexadecimal digits", 6));
  // Non-ASCII: one column per character, shown as it is; a byte that is not UTF-8 as '?'.
  EXPECT_EQ(refusal("a \xe2\x88\xa7 b"),
            "expression: unexpected character '\xe2\x88\xa7' (column 3)\n"
            "  a \xe2\x88\xa7 b\n    ^");
  EXPECT_EQ(refusal("\xc3\xa9 ^ \xff"),
            "expression: unexpected character '\xc3\xa9' (column 1)\n"
            "  \xc3\xa9 ^ ?\n  ^");
  EXPECT_EQ(refusal("a ^ \xff"), "expression: unexpected byte 0xff (column 5)\n  a ^ ?\n      ^");
  EXPECT_EQ(refusal("a [\"\n\xff\"]"),
            "expression: unexpected '[\" ?\"]' after a complete expression (column 3)\n"
            "  a [\" ?\"]\n    ^^^^^^");
  EXPECT_EQ(refusal("a ^ \xc2\x85"), "expression: unexpected byte 0xc2 (column 5)\n  a ^ ??\n      ^");  // U+0085
  EXPECT_EQ(refusal("popcount(a, out_dtype=u\x01)"),
            "expression: unknown dtype 'u' (popcount's out_dtype is uint8 or uint32) (column 23)\n"
            "  popcount(a, out_dtype=u )\n                        ^");
  EXPECT_EQ(refusal("a ^\x01"), "expression: unexpected byte 0x01 (column 4)\n  a ^\n     ^");
}

TEST(ExpressionTest, UnbalancedParenthesesAndBrackets) {
  EXPECT_EQ(refusal("(a"), at("(a", 1, "unclosed '('"));
  EXPECT_EQ(refusal("((a) ^ b"), at("((a) ^ b", 1, "unclosed '('"));
  EXPECT_EQ(refusal("xor(a, b"), at("xor(a, b", 4, "unclosed '('"));
  EXPECT_EQ(refusal("a )"), at("a )", 3, "unmatched ')'"));
  EXPECT_EQ(refusal("(a))"), at("(a))", 4, "unmatched ')'"));
  EXPECT_EQ(refusal(")"), at(")", 1, "unmatched ')'"));
  EXPECT_EQ(refusal("[1, 2"), at("[1, 2", 1, "unclosed '['"));
  EXPECT_EQ(refusal("a ^ [[1], [2]"), at("a ^ [[1], [2]", 5, "unclosed '['"));
  EXPECT_EQ(refusal("a ]"), at("a ]", 3, "unmatched ']'"));
  EXPECT_EQ(refusal("popcount([1, 2)"), at("popcount([1, 2)", 15, "unexpected ')' in the list opened at column 10"));
  EXPECT_EQ(refusal("[1 ^ 2]"), at("[1 ^ 2]", 4, "unexpected '^' in the list opened at column 1"));
  EXPECT_EQ(refusal("[1,\x02]"), "expression: unexpected byte 0x02 (column 4)\n  [1, ]\n     ^");
  EXPECT_EQ(refusal(R"(["0x1)"), at(R"(["0x1)", 2, "unclosed '\"' in a list"));
}

TEST(ExpressionTest, UnknownFunctionsAndArgumentCounts) {
  EXPECT_EQ(refusal("popcnt(a)"), at("popcnt(a)", 1, "unknown function 'popcnt' (did you mean 'popcount'?)", 6));
  EXPECT_EQ(refusal("a ^ bitwise_xorr(a, b)"),
            at("a ^ bitwise_xorr(a, b)", 5, "unknown function 'bitwise_xorr' (did you mean 'bitwise_xor'?)", 12));
  EXPECT_EQ(refusal("frobnicate(a)"),
            at("frobnicate(a)", 1,
               "unknown function 'frobnicate' (the functions are shl, shr, and, or, xor, not or popcount)", 10));
  EXPECT_EQ(refusal("xor(a)"), at("xor(a)", 1, "xor takes 2 arguments, given 1", 6));
  EXPECT_EQ(refusal("a | popcount(a, b)"), at("a | popcount(a, b)", 5, "popcount takes 1 argument, given 2", 14));
  EXPECT_EQ(refusal("not()"), at("not()", 1, "not takes 1 argument, given 0", 5));
  EXPECT_EQ(refusal("bit-and(a, b, c)"), at("bit-and(a, b, c)", 1, "bit-and takes 2 arguments, given 3", 16));
  // A '-' joins words only in call position: elsewhere it is no operator.
  EXPECT_EQ(
      refusal("bit-and"),
      at("bit-and", 4, "unexpected '-': there is no subtraction or negation ('-' only begins a negative number)"));
}

TEST(ExpressionTest, OutDtypeRefusals) {
  EXPECT_EQ(refusal("xor(a, b, out_dtype=uint8)"),
            at("xor(a, b, out_dtype=uint8)", 11,
               "xor has no out_dtype= (its result has its operands' dtype; popcount chooses its own)", 9));
  EXPECT_EQ(refusal("popcount(a, out_dtype=int8)"),
            at("popcount(a, out_dtype=int8)", 23, "popcount's out_dtype is uint8 or uint32, not int8", 4));
  EXPECT_EQ(refusal("popcount(a, out_dtype=uint16)"),
            at("popcount(a, out_dtype=uint16)", 23, "popcount's out_dtype is uint8 or uint32, not uint16", 6));
  EXPECT_EQ(refusal("popcount(a, out_dtype=u3)"),
            at("popcount(a, out_dtype=u3)", 23, "unknown dtype 'u3' (popcount's out_dtype is uint8 or uint32)", 2));
  EXPECT_EQ(refusal("popcount(a, out_dtype=)"),
            at("popcount(a, out_dtype=)", 23, "out_dtype= needs a dtype (uint8 or uint32)"));
  EXPECT_EQ(refusal("popcount(out_dtype=uint8)"),
            at("popcount(out_dtype=uint8)", 10, "out_dtype= comes after popcount's operands", 9));
  EXPECT_EQ(refusal("shl(a, 1, overflow=wrap)"),
            at("shl(a, 1, overflow=wrap)", 11, "unknown keyword 'overflow=' (the one keyword is out_dtype=)", 8));
  EXPECT_EQ(refusal("popcount(a, out_dtype=uint8, out_dtype=uint8)"),
            at("popcount(a, out_dtype=uint8, out_dtype=uint8)", 28, "unexpected ','"));
}

TEST(ExpressionTest, LimitsHoldAtTheirValueAndRefuseOnePast) {
  // Bytes.
  const std::string longest = "a" + std::string(kMaxExpressionBytes - 1, ' ');
  EXPECT_EQ(canonical(longest), "a");
  const std::string too_long = longest + " ";
  const std::string message = refusal(too_long);
  EXPECT_TRUE(message.starts_with("expression: 65537 bytes long, past the limit of 64 KiB (column 65537)\n"))
      << message;

  // Nodes: a balanced tree of 128 names has 255; one '~' more is 256, two are 257.
  const std::string tree = balanced(0, 128);
  EXPECT_EQ(parse_expression(tree).nodes.size(), 255u);
  EXPECT_EQ(parse_expression("~" + tree).nodes.size(), kMaxExpressionNodes);
  const std::string many = "~~" + tree;
  EXPECT_EQ(first_line(refusal(many)),
            "expression: more than 256 operators, names and literals (the limit; a repeated subexpression counts "
            "once) (column 1)");
  // Repeated, the tree counts once: 255 nodes and the '&'.
  EXPECT_EQ(parse_expression(tree + " & " + tree).nodes.size(), kMaxExpressionNodes);

  const std::string depth_problem = "more than 64 nested operators and parentheses (the limit)";
  // Complements in complements.
  EXPECT_EQ(parse_expression(std::string(64, '~') + "a").nodes.size(), 65u);
  const std::string tildes = std::string(65, '~') + "a";
  EXPECT_EQ(refusal(tildes), at(tildes, 65, depth_problem));
  // Parentheses.
  EXPECT_EQ(canonical(std::string(64, '(') + "a" + std::string(64, ')')), "a");
  const std::string parens = std::string(65, '(') + "a" + std::string(65, ')');
  EXPECT_EQ(first_line(refusal(parens)), first_line(at(parens, 65, depth_problem)));
  // Calls in calls.
  std::string calls = "a";
  for (int i = 0; i < 64; ++i) calls = "not(" + calls + ")";
  EXPECT_EQ(parse_expression(calls).nodes.size(), 65u);
  calls = "not(" + calls + ")";
  EXPECT_EQ(first_line(refusal(calls)), first_line(at(calls, 257, depth_problem)));
  // A chain of infix operators nests without parentheses: a0 | a1 | ... is 64 deep at 64 '|'.
  std::string chain = "a0";
  for (int i = 1; i <= 64; ++i) chain += fmt::format(" | a{}", i);
  EXPECT_EQ(parse_expression(chain).nodes.size(), 129u);
  chain += " | a65";
  EXPECT_EQ(first_line(refusal(chain)), first_line(at(chain, chain.rfind('|') + 1, depth_problem)));
  // Far past the depth: refused at the limit, not by overflowing the stack.
  const std::string deep = std::string(60000, '(');
  EXPECT_EQ(first_line(refusal(deep)), first_line(at(deep, 65, depth_problem)));
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

TEST(ExpressionTest, CaretMessagesShowALongTextAsAWindow) {
  const std::string text(200, 'x');
  EXPECT_EQ(caret_message(text, {150, 1}, "p"),
            "expression: p (column 151)\n  ..." + std::string(76, 'x') + "...\n  " + std::string(33, ' ') + "^");
  EXPECT_EQ(caret_message(text, {0, 500}, "p"),
            "expression: p (column 1)\n  " + std::string(76, 'x') + "...\n  " + std::string(76, '^'));
  EXPECT_EQ(caret_message("ab", {2, 1}, "p"), "expression: p (column 3)\n  ab\n    ^");
  EXPECT_EQ(caret_message("ab", {0, 0}, "p"), "expression: p (column 1)\n  ab\n  ^");
}

}  // namespace
}  // namespace dmlbits::expr

// Placeholder until the parser lands (issue #46): the helpers the graph's messages need, and a
// parse_expression() that refuses every text, so that the ops layer links.
#include "expression.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "dmlbits/error.hpp"

namespace dmlbits::expr {

std::string_view Expression::node_text(std::int32_t node) const {
  const Span s = nodes[static_cast<std::size_t>(node)].span;
  return std::string_view(text).substr(std::min<std::size_t>(s.offset, text.size()), s.length);
}

std::string caret_message(std::string_view text, Span span, std::string_view problem) {
  const std::size_t length = std::max<std::size_t>(span.length, 1);
  return fmt::format("expression: {} (column {})\n  {}\n  {}{}", problem, span.offset + 1, text,
                     std::string(span.offset, ' '), std::string(length, '^'));
}

Expression parse_expression(std::string_view text) {
  throw Error(Errc::usage, caret_message(text, {0, 0}, "expressions are not parsed yet"));
}

std::string to_canonical_text(const Expression& e) { return e.text; }

}  // namespace dmlbits::expr

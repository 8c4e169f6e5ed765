#include "expression.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "dmlbits/error.hpp"
#include "dmlbits/front_end.hpp"

namespace dmlbits::expr {

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_word_start(char c) { return is_alpha(c) || c == '_'; }
bool is_word_char(char c) { return is_word_start(c) || is_digit(c); }
bool is_hex_digit(char c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// The length of the valid UTF-8 sequence at s[i] of a printable character, or 0 where there is
// none (a stray byte, or a C1 control character).
std::size_t utf8_length(std::string_view s, std::size_t i) {
  const auto b = static_cast<unsigned char>(s[i]);
  std::size_t n = 0;
  std::uint32_t min = 0;
  if (b < 0x80) return 1;
  if ((b & 0xe0) == 0xc0) n = 2, min = 0x80;
  else if ((b & 0xf0) == 0xe0) n = 3, min = 0x800;
  else if ((b & 0xf8) == 0xf0) n = 4, min = 0x10000;
  else return 0;
  if (i + n > s.size()) return 0;
  std::uint32_t cp = b & (0x7f >> n);
  for (std::size_t k = 1; k < n; ++k) {
    const auto c = static_cast<unsigned char>(s[i + k]);
    if ((c & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (c & 0x3f);
  }
  // C1 control characters (U+0080 to U+009F) are control bytes to a terminal: not shown.
  if (cp < min || cp < 0xa0 || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return n;
}

// The number grammar of the command line's literals (io/operand.cpp, json_tensor.cpp), without
// the sign: 0x hex, 0b binary, decimal integers, and decimal floats with an optional exponent.
bool is_number(std::string_view s) {
  const auto all = [](std::string_view d, auto pred) { return !d.empty() && std::all_of(d.begin(), d.end(), pred); };
  if (s.size() >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) return all(s.substr(2), is_hex_digit);
  if (s.size() >= 2 && s[0] == '0' && (s[1] == 'b' || s[1] == 'B'))
    return all(s.substr(2), [](char c) { return c == '0' || c == '1'; });
  std::size_t i = 0, mantissa_digits = 0;
  while (i < s.size() && is_digit(s[i])) ++i, ++mantissa_digits;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && is_digit(s[i])) ++i, ++mantissa_digits;
  }
  if (mantissa_digits == 0) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (i == s.size()) return false;
    while (i < s.size() && is_digit(s[i])) ++i;
  }
  return i == s.size();
}

bool is_float_word(std::string_view word) {
  const std::string l = lower(word);
  return l == "inf" || l == "infinity" || l == "nan";
}

// `s` as one line: a control byte as a space, a byte that is not UTF-8 as '?'.
std::string printable(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = utf8_length(s, i);
    const auto b = static_cast<unsigned char>(s[i]);
    if (n == 0) out += '?';
    else if (n == 1 && (b < 0x20 || b == 0x7f)) out += ' ';
    else out += s.substr(i, n);
    i += std::max<std::size_t>(n, 1);
  }
  return out;
}

// Every name an operator is called by: the verb, its aliases, its Python names.
template <class F>
void for_each_function_name(const OpInfo& op, F&& f) {
  f(std::string(op.verb));
  for (const auto& alias : op.aliases()) f(alias);
  if (!op.python_name.empty()) f(std::string(op.python_name));
  if (!op.python_alias.empty()) f(std::string(op.python_alias));
}

// The operator a function name calls: exactly as the table spells it, or else in any case, as
// the command line takes its commands (`AND`, `Bit_Xor`).
const OpInfo* find_function(std::string_view word) {
  if (const OpInfo* op = find_op(word)) return op;
  const std::string l = lower(word);
  for (const auto& op : op_table()) {
    bool found = false;
    for_each_function_name(op, [&](const std::string& name) { found = found || lower(name) == l; });
    if (found) return &op;
  }
  return nullptr;
}

// The function name nearest to a mistyped one, if one is near enough to be a likely typo (the
// command line's rule for a mistyped command, app/main.cpp): edit distance, doubled, plus one
// where the first letter differs.
std::string nearest_function(std::string_view word) {
  const std::string l = lower(word);
  std::string best;
  std::size_t best_score = 2 * (std::max<std::size_t>(2, l.size() / 3) + 1);
  for (const auto& op : op_table())
    for_each_function_name(op, [&](const std::string& name) {
      const std::string n = lower(name);
      const std::size_t score = 2 * edit_distance(l, n) + (!l.empty() && l[0] != n[0] ? 1 : 0);
      if (score < best_score) {
        best_score = score;
        best = name;
      }
    });
  return best;
}

// "a, b or c"
std::string join_or(const std::vector<std::string>& words) {
  std::string out;
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (i > 0) out += i + 1 == words.size() ? " or " : ", ";
    out += words[i];
  }
  return out;
}

// The dtypes `out_dtype=` may choose for `op`: every tier's output types.
DTypeSet out_dtypes_of(const OpInfo& op) {
  DTypeSet set;
  for (const auto& tier : op.tiers) set = set | tier.outputs;
  return set;
}

std::string dtype_names(DTypeSet set) {
  std::vector<std::string> names;
  for (const auto& info : dtype_table())
    if (set.contains(info.dtype)) names.emplace_back(info.numpy_name);
  return join_or(names);
}

// C's precedence of the infix symbols, loosest first; each level is left-associative.
constexpr std::array<std::array<std::string_view, 2>, 4> kBinaryLevels{{{"|", ""}, {"^", ""}, {"&", ""}, {"<<", ">>"}}};
constexpr std::string_view kComplement = "~";
constexpr std::string_view kOutDtype = "out_dtype";

enum class Tok : std::uint8_t { end, word, literal, symbol, lparen, rparen, comma, equals };

struct Token {
  Tok kind = Tok::end;
  std::uint32_t begin = 0, end = 0;
  bool call = false;  // word: followed by '(' (after spaces)
};

class Parser {
 public:
  explicit Parser(Expression& e) : e_(e), text_(e.text) {}

  void parse() {
    if (text_.size() > kMaxExpressionBytes)
      fail({static_cast<std::uint32_t>(kMaxExpressionBytes), 1},
           fmt::format("{} bytes long, past the limit of {}", text_.size(), format_byte_size(kMaxExpressionBytes)));
    if (peek().kind == Tok::end) fail({0, 1}, "empty expression");
    const Sub root = parse_binary(0);
    const Token t = peek();
    if (t.kind == Tok::rparen) fail(span_of(t), "unmatched ')'");
    if (t.kind != Tok::end) fail(span_of(t), unexpected(t, " after a complete expression"));
    e_.root = root.node;
  }

 private:
  // A parsed operand: its node and its text's extent, parentheses included.
  struct Sub {
    std::int32_t node;
    std::uint32_t begin, end;
  };

  [[noreturn]] void fail(Span span, std::string_view problem) const {
    throw Error(Errc::usage, caret_message(text_, span, problem));
  }

  static Span span_of(const Token& t) { return {t.begin, std::max<std::uint32_t>(t.end - t.begin, 1)}; }
  std::string_view text_of(const Token& t) const { return text_.substr(t.begin, t.end - t.begin); }

  // A token quoted for a message on one line: a list may hold newlines, and its strings any
  // byte, which are shown as caret_message() shows them.
  std::string describe(const Token& t) const {
    if (t.kind == Tok::end) return "end of the expression";
    const std::string_view s = text_of(t);
    const bool cut = s.size() > 24;
    return fmt::format("'{}{}'", printable(cut ? s.substr(0, 20) : s), cut ? "..." : "");
  }

  // "unexpected 'b'"; where the token is a negative number after an operand (`a -1`), what
  // was likely meant is a subtraction, which the language does not have.
  std::string unexpected(const Token& t, std::string_view where = "") const {
    const bool negative = t.kind == Tok::literal && text_[t.begin] == '-';
    return fmt::format("unexpected {}{}{}", describe(t), where,
                       negative ? " (there is no subtraction: '-' only begins a negative number)" : "");
  }

  // ---- Lexer ------------------------------------------------------------------------------

  std::size_t skip_spaces(std::size_t p) const {
    while (p < text_.size() && is_space(text_[p])) ++p;
    return p;
  }

  Token peek() {
    if (!peeked_) {
      next_ = lex();
      peeked_ = true;
    }
    return next_;
  }

  Token take() {
    const Token t = peek();
    peeked_ = false;
    pos_ = t.end;
    return t;
  }

  [[noreturn]] void fail_character(std::size_t p) const {
    const char c = text_[p];
    const std::uint32_t at = static_cast<std::uint32_t>(p);
    if (c == '-')
      fail({at, 1}, "unexpected '-': there is no subtraction or negation ('-' only begins a negative number)");
    if (c == '<' || c == '>') fail({at, 1}, fmt::format("unexpected '{}' (the shifts are '<<' and '>>')", c));
    if (c == '!') fail({at, 1}, "unexpected '!' (the complement is '~')");
    if (c == ']') fail({at, 1}, "unmatched ']'");
    const auto b = static_cast<unsigned char>(c);
    if (b >= 0x21 && b < 0x7f) fail({at, 1}, fmt::format("unexpected character '{}'", c));
    const std::size_t n = b >= 0x80 ? utf8_length(text_, p) : 0;
    if (n > 0) fail({at, static_cast<std::uint32_t>(n)}, fmt::format("unexpected character '{}'", text_.substr(p, n)));
    fail({at, 1}, fmt::format("unexpected byte 0x{:02x}", b));
  }

  Token make(Tok kind, std::size_t begin, std::size_t end, bool call = false) const {
    return {kind, static_cast<std::uint32_t>(begin), static_cast<std::uint32_t>(end), call};
  }

  Token lex() {
    const std::size_t p = skip_spaces(pos_);
    if (p >= text_.size()) return make(Tok::end, text_.size(), text_.size());
    const char c = text_[p];
    switch (c) {
      case '(':
        return make(Tok::lparen, p, p + 1);
      case ')':
        return make(Tok::rparen, p, p + 1);
      case ',':
        return make(Tok::comma, p, p + 1);
      case '=':
        return make(Tok::equals, p, p + 1);
      case '[':
        return make(Tok::literal, p, list_end(p));
      case '|':
      case '^':
      case '&':
      case '~':
        return make(Tok::symbol, p, p + 1);
      case '<':
      case '>':
        if (p + 1 < text_.size() && text_[p + 1] == c) return make(Tok::symbol, p, p + 2);
        fail_character(p);
      default:
        break;
    }
    const bool negative = c == '-';
    const std::size_t q = negative ? p + 1 : p;
    if (q < text_.size() && (is_digit(text_[q]) || (text_[q] == '.' && q + 1 < text_.size() && is_digit(text_[q + 1]))))
      return make(Tok::literal, p, number_end(p, q));
    if (q < text_.size() && is_word_start(text_[q])) {
      std::size_t w = q;
      while (w < text_.size() && is_word_char(text_[w])) ++w;
      const std::string_view word = text_.substr(q, w - q);
      if (is_float_word(word)) return make(Tok::literal, p, nan_payload_end(p, q, w));
      if (!negative) return word_token(p, w);
    }
    fail_character(p);
  }

  // A word; in call position its '-' joined parts too (`bit-and(`), since an alias has them.
  Token word_token(std::size_t begin, std::size_t end) const {
    std::size_t dashed = end;
    while (dashed + 1 < text_.size() && text_[dashed] == '-' && is_word_char(text_[dashed + 1])) {
      ++dashed;
      while (dashed < text_.size() && is_word_char(text_[dashed])) ++dashed;
    }
    const auto called = [&](std::size_t e) {
      const std::size_t n = skip_spaces(e);
      return n < text_.size() && text_[n] == '(';
    };
    if (dashed != end && called(dashed)) return make(Tok::word, begin, dashed, true);
    return make(Tok::word, begin, end, called(end));
  }

  // The end of the number whose digits start at q (after an optional '-' at p): the longest run
  // of what could belong to it, which must then be a number as a whole ('0b12', '1e', '3a' are
  // refused here rather than read as a number and a name).
  std::size_t number_end(std::size_t p, std::size_t q) const {
    const bool prefixed = q + 1 < text_.size() && text_[q] == '0' && std::strchr("xXbB", text_[q + 1]) != nullptr;
    std::size_t e = q;
    while (e < text_.size()) {
      const char ch = text_[e];
      if (is_word_char(ch) || ch == '.') ++e;
      else if ((ch == '+' || ch == '-') && !prefixed && (text_[e - 1] == 'e' || text_[e - 1] == 'E')) ++e;
      else break;
    }
    if (!is_number(text_.substr(q, e - q)))
      fail({static_cast<std::uint32_t>(p), static_cast<std::uint32_t>(e - p)},
           fmt::format("'{}' is not a number", text_.substr(p, e - p)));
    return e;
  }

  // inf, nan, and a NaN with its payload: nan(0x7f).
  std::size_t nan_payload_end(std::size_t p, std::size_t q, std::size_t w) const {
    if (w >= text_.size() || text_[w] != '(' || lower(text_.substr(q, w - q)) != "nan") return w;
    std::size_t e = w + 1;
    const bool hex = e + 1 < text_.size() && text_[e] == '0' && (text_[e + 1] == 'x' || text_[e + 1] == 'X');
    std::size_t d = hex ? e + 2 : e;
    while (d < text_.size() && is_hex_digit(text_[d])) ++d;
    if (hex && d > e + 2 && d < text_.size() && text_[d] == ')') return d + 1;
    std::size_t bad = e;
    while (bad < text_.size() && is_word_char(text_[bad])) ++bad;
    if (bad < text_.size() && text_[bad] == ')') ++bad;
    fail({static_cast<std::uint32_t>(p), static_cast<std::uint32_t>(bad - p)},
         "a NaN's payload is written nan(0x...), in hexadecimal digits");
  }

  // A JSON-style list's extent: its matching ']', strings skipped whole. Its elements are read
  // by the ops layer; here only what can never be in one ends it with an error.
  std::size_t list_end(std::size_t open) const {
    std::size_t depth = 0;
    for (std::size_t i = open; i < text_.size(); ++i) {
      const char ch = text_[i];
      if (ch == '[') {
        ++depth;
      } else if (ch == ']') {
        if (--depth == 0) return i + 1;
      } else if (ch == '"') {
        std::size_t j = i + 1;
        while (j < text_.size() && text_[j] != '"') j += text_[j] == '\\' ? 2 : 1;
        if (j >= text_.size()) fail({static_cast<std::uint32_t>(i), 1}, "unclosed '\"' in a list");
        i = j;
      } else if (!(is_space(ch) || is_word_char(ch) || ch == ',' || ch == '.' || ch == '+' || ch == '-')) {
        if (static_cast<unsigned char>(ch) > 0x20 && static_cast<unsigned char>(ch) < 0x7f)
          fail({static_cast<std::uint32_t>(i), 1},
               fmt::format("unexpected '{}' in the list opened at column {}", ch, column_of(open)));
        fail_character(i);
      }
    }
    fail({static_cast<std::uint32_t>(open), 1}, "unclosed '['");
  }

  std::size_t column_of(std::size_t offset) const {
    std::size_t col = 1;
    for (std::size_t i = 0; i < offset;) {
      const std::size_t n = utf8_length(text_, i);
      i += n == 0 ? 1 : n;
      ++col;
    }
    return col;
  }

  // ---- Parser -----------------------------------------------------------------------------

  // One more level of parentheses, call or '~' around what is parsed next; the recursion stays
  // within kMaxExpressionDepth levels, whatever the text.
  struct Nested {
    Parser& p;
    Nested(Parser& parser, const Token& at) : p(parser) {
      if (++p.nesting_ > kMaxExpressionDepth) p.fail(span_of(at), p.depth_problem());
    }
    ~Nested() { --p.nesting_; }
    Nested(const Nested&) = delete;
    Nested& operator=(const Nested&) = delete;
  };

  static std::string depth_problem() {
    return fmt::format("more than {} nested operators and parentheses (the limit)", kMaxExpressionDepth);
  }

  Sub parse_binary(std::size_t level) {
    if (level == kBinaryLevels.size()) return parse_unary();
    Sub left = parse_binary(level + 1);
    for (;;) {
      const Token t = peek();
      if (t.kind != Tok::symbol) return left;
      const std::string_view symbol = text_of(t);
      if (symbol != kBinaryLevels[level][0] && symbol != kBinaryLevels[level][1]) return left;
      take();
      const Sub right = parse_binary(level + 1);
      const OpInfo& op = op_for_symbol(t, 2);
      left = {add_op(op, {left.node, right.node}, std::nullopt, {left.begin, right.end - left.begin}, span_of(t)),
              left.begin, right.end};
    }
  }

  Sub parse_unary() {
    const Token t = peek();
    if (t.kind == Tok::symbol && text_of(t) == kComplement) {
      take();
      const OpInfo& op = op_for_symbol(t, 1);
      const Nested nested(*this, t);
      const Sub operand = parse_unary();
      return {add_op(op, {operand.node, -1}, std::nullopt, {t.begin, operand.end - t.begin}, span_of(t)), t.begin,
              operand.end};
    }
    return parse_primary();
  }

  const OpInfo& op_for_symbol(const Token& t, int arity) const {
    const std::string_view symbol = text_of(t);
    for (const auto& op : op_table())
      if (op.symbol == symbol && op.arity == arity) return op;
    fail(span_of(t), fmt::format("no operator is written '{}'", symbol));
  }

  Sub parse_primary() {
    const Token t = peek();
    switch (t.kind) {
      case Tok::lparen: {
        take();
        const Nested nested(*this, t);
        ++pending_open_;
        const Sub inner = parse_binary(0);
        --pending_open_;
        const Token close = expect_close(t);
        return {inner.node, t.begin, close.end};
      }
      case Tok::word: {
        take();
        if (t.call) return parse_call(t);
        return {add_name(t), t.begin, t.end};
      }
      case Tok::literal:
        take();
        return {add_literal(t), t.begin, t.end};
      case Tok::end:
        fail(span_of(t), "the expression ends where an operand is expected");
      case Tok::rparen:
        fail(span_of(t), pending_open_ ? "unexpected ')'" : "unmatched ')'");
      default:
        fail(span_of(t), unexpected(t));
    }
  }

  // The ')' closing `open`, or the error for what is there instead.
  Token expect_close(const Token& open) {
    const Token t = peek();
    if (t.kind == Tok::rparen) return take();
    if (t.kind == Tok::end) fail(span_of(open), "unclosed '('");
    fail(span_of(t), unexpected(t));
  }

  Sub parse_call(const Token& name) {
    const std::string_view word = text_of(name);
    const OpInfo* op = find_function(word);
    if (!op) {
      const std::string near = nearest_function(word);
      std::vector<std::string> verbs;
      for (const auto& o : op_table()) verbs.emplace_back(o.verb);
      fail(span_of(name), near.empty()
                              ? fmt::format("unknown function '{}' (the functions are {})", word, join_or(verbs))
                              : fmt::format("unknown function '{}' (did you mean '{}'?)", word, near));
    }
    const Token open = take();  // '(' (Token::call)
    const Nested nested(*this, name);
    ++pending_open_;
    std::vector<Sub> args;
    std::optional<DType> out_dtype;
    if (peek().kind != Tok::rparen) {
      for (;;) {
        const Token t = peek();
        if (t.kind == Tok::word && !t.call && next_is_equals(t)) {
          out_dtype = parse_keyword(*op, word, t, args.empty());
          break;
        }
        args.push_back(parse_binary(0));
        if (peek().kind != Tok::comma) break;
        take();
      }
    }
    --pending_open_;
    const Token close = expect_close(open);
    const Span whole{name.begin, close.end - name.begin};
    if (args.size() != static_cast<std::size_t>(op->arity))
      fail(whole,
           fmt::format("{} takes {} argument{}, given {}", word, op->arity, op->arity == 1 ? "" : "s", args.size()));
    std::array<std::int32_t, 2> nodes{-1, -1};
    for (std::size_t i = 0; i < args.size(); ++i) nodes[i] = args[i].node;
    return {add_op(*op, nodes, out_dtype, whole, span_of(name)), name.begin, close.end};
  }

  bool next_is_equals(const Token& word) const {
    const std::size_t n = skip_spaces(word.end);
    return n < text_.size() && text_[n] == '=';
  }

  // `out_dtype=DTYPE`: the dtype it names, which `op` must be able to give.
  DType parse_keyword(const OpInfo& op, std::string_view function, const Token& key, bool first) {
    take();
    take();  // '='
    const std::string_view keyword = text_of(key);
    if (keyword != kOutDtype)
      fail(span_of(key), fmt::format("unknown keyword '{}=' (the one keyword is {}=)", keyword, kOutDtype));
    if (first) fail(span_of(key), fmt::format("{}= comes after {}'s operands", kOutDtype, function));
    const DTypeSet allowed = out_dtypes_of(op);
    if (allowed.empty()) {
      std::vector<std::string> takers;
      for (const auto& o : op_table())
        if (!out_dtypes_of(o).empty()) takers.emplace_back(o.verb);
      fail(span_of(key), fmt::format("{} has no {}= (its result has its operands' dtype; {} chooses its own)", function,
                                     kOutDtype, join_or(takers)));
    }
    // The dtype's name runs to the next ',', ')' or space: NumPy's spellings have '<', '=' and '|'.
    const std::size_t begin = skip_spaces(pos_);
    std::size_t end = begin;
    while (end < text_.size() && text_[end] > ' ' && text_[end] < 0x7f && !std::strchr(",()", text_[end])) ++end;
    const Span span{static_cast<std::uint32_t>(begin), static_cast<std::uint32_t>(end - begin)};
    if (end == begin)
      fail({static_cast<std::uint32_t>(begin), 1},
           fmt::format("{}= needs a dtype ({})", kOutDtype, dtype_names(allowed)));
    const std::string_view name = text_.substr(begin, end - begin);
    const std::optional<DType> dtype = parse_dtype_name(name);
    if (!dtype)
      fail(span, fmt::format("unknown dtype '{}' ({}'s {} is {})", name, function, kOutDtype, dtype_names(allowed)));
    if (!allowed.contains(*dtype))
      fail(span, fmt::format("{}'s {} is {}, not {}", function, kOutDtype, dtype_names(allowed),
                             dtype_info(*dtype).numpy_name));
    pos_ = end;
    peeked_ = false;
    return *dtype;
  }

  // ---- Nodes, shared ----------------------------------------------------------------------

  std::int32_t add(Node node, std::string key, Span at) {
    const auto found = index_.find(key);
    if (found != index_.end()) return found->second;
    if (e_.nodes.size() == kMaxExpressionNodes)
      fail(at, fmt::format("more than {} operators, names and literals (the limit; a repeated subexpression "
                           "counts once)",
                           kMaxExpressionNodes));
    const auto index = static_cast<std::int32_t>(e_.nodes.size());
    e_.nodes.push_back(std::move(node));
    index_.emplace(std::move(key), index);
    return index;
  }

  std::int32_t add_name(const Token& t) {
    Node n;
    n.kind = NodeKind::name;
    n.name = std::string(text_of(t));
    n.span = span_of(t);
    const std::size_t before = e_.nodes.size();
    const std::int32_t index = add(std::move(n), "n" + std::string(text_of(t)), span_of(t));
    if (e_.nodes.size() != before) {
      e_.names.push_back(e_.nodes.back().name);
      depth_.push_back(0);
    }
    return index;
  }

  std::int32_t add_literal(const Token& t) {
    Node n;
    n.kind = NodeKind::literal;
    n.literal = std::string(text_of(t));
    n.span = span_of(t);
    const std::size_t before = e_.nodes.size();
    const std::int32_t index = add(std::move(n), "l" + std::string(text_of(t)), span_of(t));
    if (e_.nodes.size() != before) depth_.push_back(0);
    return index;
  }

  // `at` is where a refusal points: the operator's symbol or function name.
  std::int32_t add_op(const OpInfo& op, std::array<std::int32_t, 2> args, std::optional<DType> out_dtype, Span span,
                      Span at) {
    std::size_t depth = 0;
    for (int i = 0; i < op.arity; ++i) depth = std::max(depth, depth_[static_cast<std::size_t>(args[i])] + 1);
    if (depth > kMaxExpressionDepth) fail(at, depth_problem());
    Node n;
    n.kind = NodeKind::op;
    n.op = op.kind;
    n.args = args;
    n.out_dtype = out_dtype;
    n.span = span;
    const std::string key = fmt::format("o{} {} {} {}", static_cast<int>(op.kind), args[0], args[1],
                                        out_dtype ? static_cast<int>(*out_dtype) : -1);
    const std::size_t before = e_.nodes.size();
    const std::int32_t index = add(std::move(n), key, at);
    if (e_.nodes.size() != before) depth_.push_back(depth);
    return index;
  }

  Expression& e_;
  std::string_view text_;
  std::size_t pos_ = 0;
  bool peeked_ = false;
  Token next_;
  std::size_t nesting_ = 0;
  std::size_t pending_open_ = 0;                         // parentheses and calls whose ')' is still to come
  std::vector<std::size_t> depth_;                       // per node: the longest chain of operators down from it
  std::unordered_map<std::string, std::int32_t> index_;  // a node's structure -> its index
};

}  // namespace

std::string_view Expression::node_text(std::int32_t node) const {
  const Span s = nodes.at(static_cast<std::size_t>(node)).span;
  if (s.offset > text.size()) return {};
  return std::string_view(text).substr(s.offset, s.length);
}

Expression parse_expression(std::string_view text) {
  Expression e;
  e.text = std::string(text);
  Parser(e).parse();
  return e;
}

std::string to_canonical_text(const Expression& e) {
  if (e.root < 0 || static_cast<std::size_t>(e.root) >= e.nodes.size())
    throw Error(Errc::internal, fmt::format("expression root {} of {} nodes", e.root, e.nodes.size()));
  // Each node's text once, from its arguments' (which come before it): linear in the output.
  // A graph built by hand may share so much that its text would be enormous; one parsed from
  // text has at most a few times the text's length.
  constexpr std::size_t kMaxCanonicalBytes = 16 * kMaxExpressionBytes;
  std::vector<std::string> texts(e.nodes.size());
  for (std::size_t i = 0; i < e.nodes.size(); ++i) {
    const Node& n = e.nodes[i];
    switch (n.kind) {
      case NodeKind::name:
        texts[i] = n.name;
        break;
      case NodeKind::literal:
        texts[i] = n.literal;
        break;
      case NodeKind::op: {
        const OpInfo& op = op_info(n.op);
        std::string s(op.verb);
        s += '(';
        for (int a = 0; a < op.arity; ++a) {
          const std::int32_t arg = n.args[static_cast<std::size_t>(a)];
          if (arg < 0 || static_cast<std::size_t>(arg) >= i)
            throw Error(Errc::internal, fmt::format("expression node {}: argument {} is not an earlier node", i, arg));
          if (a > 0) s += ", ";
          s += texts[static_cast<std::size_t>(arg)];
        }
        if (n.out_dtype) s += fmt::format(", {}={}", kOutDtype, dtype_info(*n.out_dtype).numpy_name);
        s += ')';
        if (s.size() > kMaxCanonicalBytes)
          throw Error(Errc::internal, fmt::format("expression node {}: canonical text past {}", i,
                                                  format_byte_size(kMaxCanonicalBytes)));
        texts[i] = std::move(s);
        break;
      }
    }
  }
  return std::move(texts[static_cast<std::size_t>(e.root)]);
}

std::string caret_message(std::string_view text, Span span, std::string_view problem) {
  // The text as one line of characters (a UTF-8 sequence is one; a control byte shows as a
  // space and a stray byte as '?'), and each byte's column, so that the carets line up in a
  // terminal whatever the text holds.
  std::vector<std::string> shown;
  std::vector<std::size_t> column_at(text.size() + 1);
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = utf8_length(text, i);
    const auto b = static_cast<unsigned char>(text[i]);
    for (std::size_t k = 0; k < std::max<std::size_t>(n, 1); ++k) column_at[i + k] = shown.size();
    if (n == 0) shown.emplace_back("?");
    else if (n == 1 && (b < 0x20 || b == 0x7f)) shown.emplace_back(" ");
    else shown.emplace_back(text.substr(i, n));
    i += std::max<std::size_t>(n, 1);
  }
  column_at[text.size()] = shown.size();
  const auto column = [&](std::size_t offset) {
    return offset <= text.size() ? column_at[offset] : shown.size() + (offset - text.size());
  };
  const std::size_t first = column(span.offset);
  const std::size_t last =
      std::max(first + 1, column(std::min<std::size_t>(std::size_t{span.offset} + span.length, text.size() + 1)));
  // A long text is shown as a window around the span's start.
  constexpr std::size_t kWidth = 76, kBefore = 30;
  const std::size_t total = std::max(shown.size(), first + 1);
  std::size_t from = 0, to = total;
  if (total > kWidth) {
    from = first > kBefore ? first - kBefore : 0;
    to = std::min(total, from + kWidth);
    if (to - from < kWidth) from = to - kWidth;
  }
  std::string line = from > 0 ? "..." : "";
  std::size_t indent = line.size();
  for (std::size_t c = from; c < to && c < shown.size(); ++c) line += shown[c];
  if (to < shown.size()) line += "...";
  while (!line.empty() && line.back() == ' ') line.pop_back();
  indent += first - from;
  const std::size_t carets = std::min(last, to) - first;
  return fmt::format("expression: {} (column {})\n  {}\n  {}{}", problem, first + 1, line, std::string(indent, ' '),
                     std::string(carets, '^'));
}

}  // namespace dmlbits::expr

#pragma once
// Internal to bootstorm::sim_prometheus: PromQL's tokens as the parser (promql.cpp) reads them, Prometheus'
// own lexical rules (identifiers, label and metric names, Go-quoted strings with their escapes, durations,
// numbers including hex, Inf and NaN), and the names and bounds the parser's messages use.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/expected.hpp"
#include "simulator/prometheus/promql.hpp"

namespace bootstorm::sim::prometheus::detail {

enum class Tok {
  end,
  ident,
  string,
  number,
  lbrace,
  rbrace,
  lparen,
  rparen,
  lbracket,
  rbracket,
  comma,
  eq,
  neq,
  re,
  nre,
  binary_op,
  at,
  invalid
};

struct Token {
  Tok kind = Tok::end;
  std::size_t pos = 0;
  std::string_view text;  // as written
  std::string value;      // a string literal's value; an invalid token's error message
};

inline std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

inline bool one_of(std::string_view list, std::string_view s) {
  return list.find(" " + std::string(s) + " ") != std::string_view::npos;
}

inline bool is_ident_start(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == ':';
}
inline bool is_ident_char(char c) {
  return is_ident_start(c) || std::isdigit(static_cast<unsigned char>(c));
}

inline bool valid_label_name(std::string_view s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

inline bool valid_metric_name(std::string_view s) {
  if (s.empty() || !is_ident_start(s[0])) return false;
  return std::all_of(s.begin(), s.end(), is_ident_char);
}

inline int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

inline void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xc0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xe0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  }
}

class Lexer {
 public:
  explicit Lexer(std::string_view q) : q_(q) {}

  std::size_t offset() const { return pos_; }

  void skip_space() {
    while (pos_ < q_.size() && (q_[pos_] == ' ' || q_[pos_] == '\t' || q_[pos_] == '\n' || q_[pos_] == '\r'))
      ++pos_;
  }

  // The raw text of a duration inside "[...]": the run of letters and digits (and dots, so that "1.5m" is
  // reported whole).
  Token duration() {
    skip_space();
    const std::size_t start = pos_;
    while (pos_ < q_.size() && (std::isalnum(static_cast<unsigned char>(q_[pos_])) || q_[pos_] == '.'))
      ++pos_;
    return Token{Tok::number, start, q_.substr(start, pos_ - start), {}};
  }

  Token next() {
    skip_space();
    const std::size_t start = pos_;
    if (pos_ >= q_.size()) return Token{Tok::end, start, {}, {}};
    const char c = q_[pos_];
    auto single = [&](Tok kind, std::size_t len = 1) {
      pos_ += len;
      return Token{kind, start, q_.substr(start, len), {}};
    };
    const char c2 = pos_ + 1 < q_.size() ? q_[pos_ + 1] : '\0';
    if (std::isdigit(static_cast<unsigned char>(c)) ||
        (c == '.' && std::isdigit(static_cast<unsigned char>(c2)))) {
      while (pos_ < q_.size() &&
             (std::isalnum(static_cast<unsigned char>(q_[pos_])) || q_[pos_] == '.' || q_[pos_] == '_')) {
        const char e = q_[pos_];
        ++pos_;
        if ((e == 'e' || e == 'E') && pos_ < q_.size() && (q_[pos_] == '+' || q_[pos_] == '-')) ++pos_;
      }
      return Token{Tok::number, start, q_.substr(start, pos_ - start), {}};
    }
    if (is_ident_start(c)) {
      while (pos_ < q_.size() && is_ident_char(q_[pos_])) ++pos_;
      return Token{Tok::ident, start, q_.substr(start, pos_ - start), {}};
    }
    switch (c) {
      case '"':
      case '\'':
      case '`':
        return string_literal();
      case '{':
        return single(Tok::lbrace);
      case '}':
        return single(Tok::rbrace);
      case '(':
        return single(Tok::lparen);
      case ')':
        return single(Tok::rparen);
      case '[':
        return single(Tok::lbracket);
      case ']':
        return single(Tok::rbracket);
      case ',':
        return single(Tok::comma);
      case '@':
        return single(Tok::at);
      case '=':
        if (c2 == '=') return single(Tok::binary_op, 2);
        if (c2 == '~') return single(Tok::re, 2);
        return single(Tok::eq);
      case '!':
        if (c2 == '=') return single(Tok::neq, 2);
        if (c2 == '~') return single(Tok::nre, 2);
        return invalid(start, "unexpected character after '!': " + go_quote(q_.substr(pos_ + 1, 1)));
      case '<':
      case '>':
        return single(Tok::binary_op, c2 == '=' ? 2 : 1);
      case '+':
      case '-':
      case '*':
      case '/':
      case '%':
      case '^':
        return single(Tok::binary_op);
      default:
        break;
    }
    return invalid(start, "unexpected character: " + go_quote(q_.substr(start, 1)));
  }

 private:
  Token invalid(std::size_t at, std::string message) {
    pos_ = q_.size();
    return Token{Tok::invalid, at, q_.substr(at, 1), std::move(message)};
  }

  // Go's quoting rules as Prometheus applies them: \a \b \f \n \r \t \v \\, the quote itself, \xHH, \ooo,
  // \uHHHH and \UHHHHHHHH; a raw string (backquotes) has no escapes; no newline in a quoted string.
  Token string_literal() {
    const std::size_t start = pos_;
    const char quote_char = q_[pos_++];
    std::string value;
    if (quote_char == '`') {
      const std::size_t close = q_.find('`', pos_);
      if (close == std::string_view::npos) return invalid(start, "unterminated raw string");
      value.assign(q_.substr(pos_, close - pos_));
      pos_ = close + 1;
      return Token{Tok::string, start, q_.substr(start, pos_ - start), std::move(value)};
    }
    while (true) {
      if (pos_ >= q_.size() || q_[pos_] == '\n') return invalid(start, "unterminated quoted string");
      const char c = q_[pos_++];
      if (c == quote_char) break;
      if (c != '\\') {
        value += c;
        continue;
      }
      if (pos_ >= q_.size()) return invalid(start, "unterminated quoted string");
      const std::size_t esc = pos_ - 1;
      const char e = q_[pos_++];
      static constexpr std::string_view simple_from = "abfnrtv\\", simple_to = "\a\b\f\n\r\t\v\\";
      if (auto k = simple_from.find(e); k != std::string_view::npos) {
        value += simple_to[k];
      } else if (e == quote_char) {
        value += e;
      } else if (e == 'x' || e == 'u' || e == 'U') {
        const std::size_t digits = e == 'x' ? 2 : e == 'u' ? 4 : 8;
        std::uint32_t cp = 0;
        for (std::size_t i = 0; i < digits; ++i) {
          const int h = pos_ < q_.size() ? hex_value(q_[pos_]) : -1;
          if (h < 0)
            return invalid(esc, "invalid escape sequence in string: " + go_quote(q_.substr(esc, 2 + i)));
          cp = cp * 16 + static_cast<std::uint32_t>(h);
          ++pos_;
        }
        if (e == 'x') {
          value += static_cast<char>(cp);
        } else if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
          return invalid(esc,
                         "invalid Unicode code point in string: " + go_quote(q_.substr(esc, pos_ - esc)));
        } else {
          append_utf8(value, cp);
        }
      } else if (e >= '0' && e <= '7') {
        unsigned v = static_cast<unsigned>(e - '0');
        for (int i = 0; i < 2; ++i) {
          if (pos_ >= q_.size() || q_[pos_] < '0' || q_[pos_] > '7')
            return invalid(esc, "invalid escape sequence in string: " + go_quote(q_.substr(esc, pos_ - esc)));
          v = v * 8 + static_cast<unsigned>(q_[pos_++] - '0');
        }
        if (v > 255)
          return invalid(esc, "octal escape value > 255 in string: " + go_quote(q_.substr(esc, 4)));
        value += static_cast<char>(v);
      } else {
        return invalid(esc, "unknown escape sequence in string: " + go_quote(q_.substr(esc, 2)));
      }
    }
    return Token{Tok::string, start, q_.substr(start, pos_ - start), std::move(value)};
  }

  std::string_view q_;
  std::size_t pos_ = 0;
};

inline std::string describe(const Token& t) {
  switch (t.kind) {
    case Tok::end:
      return "end of input";
    case Tok::ident:
      return "identifier " + go_quote(t.text);
    case Tok::string:
      return "string " + go_quote(t.text);
    case Tok::number:
      return "number " + go_quote(t.text);
    default:
      return go_quote(t.text);
  }
}

}  // namespace bootstorm::sim::prometheus::detail

#pragma once
// HTTP header text, for the client, the server and the providers' statistics alike: names compare without
// regard to ASCII case (RFC 9110 5.1), Retry-After's delta-seconds form, and the texts of a Warning header.
#include <charconv>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace bootstorm {

inline bool equals_ignoring_ascii_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

// Retry-After's delta-seconds ("120"), surrounding spaces allowed; nullopt for anything else (the HTTP-date
// form is not used by the APIs bootstorm talks to).
inline std::optional<long long> retry_after_delta_seconds(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  long long seconds = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), seconds);
  if (ec != std::errc() || ptr != text.data() + text.size() || seconds < 0) return std::nullopt;
  return seconds;
}

// The texts of a Warning header's values (RFC 7234 5.5: `299 - "text"`, values separated by commas, an
// optional quoted date after each text), unescaped; kube-apiserver sends a field validation's findings and
// deprecations this way. A value that is not of that form is skipped.
inline std::vector<std::string> warning_texts(std::string_view value) {
  std::vector<std::string> out;
  std::size_t i = 0;
  // One quoted-string from `i` (at its opening quote); nullopt when it does not close.
  const auto quoted = [&value, &i]() -> std::optional<std::string> {
    std::string text;
    for (++i; i < value.size(); ++i) {
      if (value[i] == '\\' && i + 1 < value.size()) {
        text += value[++i];
      } else if (value[i] == '"') {
        ++i;
        return text;
      } else {
        text += value[i];
      }
    }
    return std::nullopt;
  };
  while (i < value.size()) {
    // warn-code SP warn-agent SP: everything up to the text's opening quote.
    const std::size_t open = value.find('"', i);
    if (open == std::string_view::npos) break;
    i = open;
    auto text = quoted();
    if (!text) break;
    out.push_back(std::move(*text));
    // An optional warn-date, then the comma before the next value.
    while (i < value.size() && value[i] == ' ') ++i;
    if (i < value.size() && value[i] == '"' && !quoted()) break;
    const std::size_t comma = value.find(',', i);
    if (comma == std::string_view::npos) break;
    i = comma + 1;
  }
  return out;
}

}  // namespace bootstorm

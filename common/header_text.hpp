#pragma once
// HTTP header text, for the client, the server and the providers' statistics alike: names compare without
// regard to ASCII case (RFC 9110 5.1), and Retry-After's delta-seconds form.
#include <charconv>
#include <optional>
#include <string_view>

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

}  // namespace bootstorm

#include "common/quantity.hpp"

#include <cctype>
#include <charconv>
#include <system_error>

namespace bootstorm {

std::optional<double> parse_quantity(std::string_view text) {
  if (text.empty()) return std::nullopt;
  std::size_t end = 0;
  while (end < text.size() && (std::isdigit(static_cast<unsigned char>(text[end])) || text[end] == '.'))
    ++end;
  if (end == 0) return std::nullopt;
  double number = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + end, number);
  if (ec != std::errc() || ptr != text.data() + end) return std::nullopt;
  const std::string_view suffix = text.substr(end);
  struct Unit {
    std::string_view suffix;
    double factor;
  };
  static constexpr Unit kUnits[] = {{"", 1},
                                    {"m", 1e-3},
                                    {"k", 1e3},
                                    {"M", 1e6},
                                    {"G", 1e9},
                                    {"T", 1e12},
                                    {"P", 1e15},
                                    {"Ki", 1024.0},
                                    {"Mi", 1048576.0},
                                    {"Gi", 1073741824.0},
                                    {"Ti", 1099511627776.0},
                                    {"Pi", 1125899906842624.0}};
  for (const auto& unit : kUnits) {
    if (suffix == unit.suffix) return number * unit.factor;
  }
  return std::nullopt;
}

}  // namespace bootstorm

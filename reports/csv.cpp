#include "reports/csv.hpp"

#include <fmt/format.h>

namespace bootstorm::reports {

std::string csv_field(std::string_view value) {
  const bool needs_quotes = value.find_first_of(",\"\r\n") != std::string_view::npos ||
                            (!value.empty() && (value.front() == ' ' || value.back() == ' '));
  if (!needs_quotes) return std::string(value);
  std::string out = "\"";
  for (char c : value) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

Expected<std::vector<std::vector<std::string>>> parse_csv(std::string_view text) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row;
  std::string field;
  bool in_quotes = false, field_was_quoted = false, row_has_content = false;
  int line = 1;
  auto end_field = [&] {
    row.push_back(std::move(field));
    field.clear();
    field_was_quoted = false;
  };
  auto end_row = [&] {
    end_field();
    rows.push_back(std::move(row));
    row.clear();
    row_has_content = false;
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_quotes) {
      if (c == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          field += '"';
          ++i;
        } else {
          in_quotes = false;
        }
      } else {
        if (c == '\n') ++line;
        field += c;
      }
      continue;
    }
    switch (c) {
      case '"':
        if (!field.empty() || field_was_quoted)
          return make_error(ErrorKind::invalid_input,
                            fmt::format("CSV line {}: quote inside an unquoted field", line),
                            "quote the whole field and double the quotes inside it");
        in_quotes = true;
        field_was_quoted = true;
        row_has_content = true;
        break;
      case ',':
        end_field();
        row_has_content = true;
        break;
      case '\r':
        break;  // CRLF: the LF ends the row
      case '\n':
        if (row_has_content || !field.empty()) end_row();
        ++line;
        break;
      default:
        field += c;
        row_has_content = true;
    }
  }
  if (in_quotes)
    return make_error(ErrorKind::invalid_input, fmt::format("CSV line {}: unterminated quoted field", line),
                      "the file is truncated or not a CSV written by bootstorm");
  if (row_has_content || !field.empty()) end_row();
  return rows;
}

}  // namespace bootstorm::reports

#pragma once
// RFC 4180 CSV: quoting for writers and a parser for readers of vms.csv (bootstorm compare).
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.hpp"

namespace bootstorm::reports {

// A field as written: quoted (with "" for ") when it contains a comma, quote, CR, LF or leading/trailing
// space; as is otherwise.
std::string csv_field(std::string_view value);

// Parses CSV text into rows of fields (quoted fields may contain commas, quotes and line breaks; CRLF and
// LF line ends). Fails with invalid_input on an unterminated quote or a quote inside an unquoted field.
Expected<std::vector<std::vector<std::string>>> parse_csv(std::string_view text);

}  // namespace bootstorm::reports

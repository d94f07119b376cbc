#pragma once
// Text building blocks of every report bootstorm writes (the run report, compare, the migration report):
// escaping for HTML/XML and Markdown, seconds, percentages, numbers, times, scenario labels.
#include <optional>
#include <string>
#include <string_view>

#include "common/xml_text.hpp"

namespace bootstorm::reports {

// HTML/XML text and attribute values: bootstorm::escape_xml (common/xml_text.hpp).
// Escapes a Markdown table cell: | and newlines, and < > & so that no HTML reaches a renderer.
std::string escape_md(std::string_view text);
// Seconds for people: "31.20 s", or "—" when absent.
std::string seconds(const std::optional<double>& v, int decimals = 2);
std::string percent(double fraction, int decimals = 0);  // 0.9583 -> "96 %"
// A number in the shortest form with at most `decimals` decimals ("31.2", "0.000125", "24").
std::string number(double v, int decimals = 6);
// RFC 3339 UTC with milliseconds from unix seconds ("2026-11-30T10:00:00.123Z"); empty for 0.
std::string utc_iso(double unix_s);
// "name" or "name #2" when the run has several repeats.
std::string scenario_label(std::string_view name, int repeat, bool several_repeats);

}  // namespace bootstorm::reports

#pragma once
// summary.json, schema version 1 (DESIGN.md "The run directory"): a Summary written and read back.
#include <nlohmann/json.hpp>
#include <string>

#include "common/expected.hpp"
#include "results/summary.hpp"

namespace bootstorm::results {

// Keys in the documented order; seconds rounded to microseconds.
nlohmann::ordered_json summary_to_json(const Summary& summary);
std::string summary_to_json_text(const Summary& summary);  // 2-space indented, trailing newline

// Reads summary.json back (boot_times_s stays empty: it lives in vms.csv). Fails with invalid_input when the
// document is not a schema-1 summary.
Expected<Summary> summary_from_json(const nlohmann::json& document);

}  // namespace bootstorm::results

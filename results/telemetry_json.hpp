#pragma once
// A storm's storage telemetry (api::TelemetryReport) as JSON: one form for the journal's `telemetry` event,
// from which `bootstorm report` re-renders the samples, and for telemetry.csv's source.
#include <nlohmann/json_fwd.hpp>
#include <optional>

#include "providers/api/storage_telemetry.hpp"

namespace bootstorm::results {

nlohmann::json telemetry_json(const api::TelemetryReport& report);
// Reads what telemetry_json wrote; nullopt when it is not such an object. Unknown subject kinds are skipped.
std::optional<api::TelemetryReport> telemetry_from_json(const nlohmann::json& j);

// Adds another shard's telemetry of the same storm: its VMs' samples and totals join, a host's samples of the
// same interval add up where the figures are made (storage_figures.hpp), the window spans both.
void merge_telemetry(api::TelemetryReport& into, api::TelemetryReport other);

}  // namespace bootstorm::results

#pragma once
// What `bootstorm capacity` writes and prints: capacity.json, capacity.md, capacity.html's view (the curve of
// desktops per host against P50 / P95 / ready fraction, the knee, the capacity with its uncertainty, what
// bound it) and the terminal's summary. Labelled predicted, simulated lab or measured, as the steps were.
// Pure.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "orchestrator/sizing/capacity.hpp"
#include "reports/capacity_html.hpp"

namespace bootstorm::sizing {

struct CapacityContext {
  std::string plan;
  std::string platform;  // vsphere | kubevirt
  std::string endpoint;
  std::string source;                  // predicted | simulated | measured
  std::string lab;                     // the lab profile (predicted, simulated)
  std::vector<std::string> overrides;  // --set, as given
  std::string started_at;              // RFC 3339
  std::string ended_at;
};

nlohmann::ordered_json capacity_json(const CapacityContext& context, const CapacityResult& result);
std::string capacity_markdown(const CapacityContext& context, const CapacityResult& result);
// What capacity.html shows (reports/capacity_html.hpp renders it).
reports::CapacityView capacity_view(const CapacityContext& context, const CapacityResult& result);
// The verdict in one or two lines: "capacity: 384 desktops per host (...)", what bound it.
std::vector<std::string> capacity_verdict(const CapacityContext& context, const CapacityResult& result);

}  // namespace bootstorm::sizing

#pragma once
// A run in progress as others may watch it (`run --metrics-listen`): the journal folded so far, the running
// scenario's API account (the journal records it at the scenario's end), and whether the run still goes on.
// Read on the engine's executor only: whatever serves it runs there too, so nothing locks.
#include <optional>
#include <string>

#include "protocol/http/api_stats.hpp"
#include "results/run_record.hpp"

namespace bootstorm::engine {

class LiveRun {
 public:
  struct ScenarioApi {
    std::string scenario;
    int repeat = 1;
    http::ApiStats stats;  // since the scenario started; frozen where scenario_ended will take it
  };

  virtual ~LiveRun() = default;
  virtual results::RunRecord record() const = 0;
  virtual std::optional<ScenarioApi> scenario_api() const = 0;
  virtual bool running() const = 0;
};

}  // namespace bootstorm::engine

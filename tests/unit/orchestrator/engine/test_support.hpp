#pragma once
// Helpers shared by the engine tests: a small plan for the fake platform, the suite's scratch directory.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "orchestrator/plan/plan.hpp"
#include "tests/support/scratch_dir.hpp"

namespace bootstorm::test {

inline plan::StormPlan small_plan(int vms_per_host = 3, int hosts = 2) {
  plan::StormPlan p;
  p.name = "unit-plan";
  p.platform.kind = "fake";
  p.platform.endpoint = "https://fake.example";
  p.platform.api_budget.max_concurrent = 64;
  plan::Scenario s;
  s.name = "Fake Scenario #1";
  for (int h = 1; h <= hosts; ++h) s.placement.push_back({"host-0" + std::to_string(h), vms_per_host});
  p.scenarios.push_back(s);
  p.storm.timeout = std::chrono::milliseconds(3000);
  p.ready.signal = "guest_agent";
  p.cleanup = "always";
  return p;
}

// The suite's temporary directory (tests/support/scratch_dir.hpp).
using ScratchDir = test_support::ScratchDir;

inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace bootstorm::test

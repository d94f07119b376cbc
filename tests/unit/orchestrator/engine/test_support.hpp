#pragma once
// Helpers shared by the engine tests: a small plan for the fake platform and a scratch directory.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "orchestrator/plan/plan.hpp"

namespace bootstorm::test {

inline plan::StormPlan small_plan(int vms_per_host = 3, int hosts = 2) {
  plan::StormPlan p;
  p.name = "unit-plan";
  p.platform.kind = "fake";
  p.platform.endpoint = "https://fake.example";
  p.platform.api_budget.max_concurrent = 64;
  p.golden.vm = "golden";
  plan::Scenario s;
  s.name = "Fake Scenario #1";
  for (int h = 1; h <= hosts; ++h) s.placement.push_back({"host-0" + std::to_string(h), vms_per_host});
  p.scenarios.push_back(s);
  p.storm.timeout = std::chrono::milliseconds(3000);
  p.ready.signal = "guest_agent";
  p.cleanup = "always";
  return p;
}

class ScratchDir {
 public:
  ScratchDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "bootstorm-engine-test-XXXXXX").string();
    path_ = ::mkdtemp(tmpl.data());
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace bootstorm::test

#pragma once
// Shared helpers of the plan tests: where the plans live and how to list them.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace bootstorm::plan::testing {

inline std::filesystem::path example_plans_dir() {
  return std::filesystem::path(BOOTSTORM_SOURCE_DIR) / "plans";
}
inline std::filesystem::path valid_plans_dir() {
  return std::filesystem::path(BOOTSTORM_TEST_DATA) / "plans/valid";
}
inline std::filesystem::path invalid_plans_dir() {
  return std::filesystem::path(BOOTSTORM_TEST_DATA) / "plans/invalid";
}

// StormPlan files (.yaml, .yml, .json) of a directory, sorted by name. MigrationPlans (`kind:
// MigrationPlan`, e.g. plans/migrate-vsphere-to-openshift.yaml) have their own loader and tests
// (tests/unit/orchestrator/migrate), so they are left out here. Fewer than `at_least` fails the calling test:
// a loop over a moved or emptied folder must not pass by checking nothing.
inline std::vector<std::filesystem::path> plan_files(const std::filesystem::path& dir, std::size_t at_least) {
  std::vector<std::filesystem::path> out;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    auto ext = entry.path().extension().string();
    if (ext != ".yaml" && ext != ".yml" && ext != ".json") continue;
    std::ifstream in(entry.path());
    bool migration_plan = false;
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("kind:", 0) == 0 && line.find("MigrationPlan") != std::string::npos)
        migration_plan = true;
    }
    if (!migration_plan) out.push_back(entry.path());
  }
  std::sort(out.begin(), out.end());
  if (out.size() < at_least)
    ADD_FAILURE() << dir << " holds " << out.size() << " StormPlan files, expected at least " << at_least;
  return out;
}

inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

inline std::vector<std::string> read_lines(const std::filesystem::path& path) {
  std::vector<std::string> lines;
  std::istringstream in(read_text(path));
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) lines.push_back(line);
  }
  return lines;
}

}  // namespace bootstorm::plan::testing

#include "orchestrator/engine/naming.hpp"

#include <gtest/gtest.h>

#include <regex>

#include "common/rfc3339.hpp"
#include "providers/api/provider.hpp"

namespace bootstorm::engine {

TEST(Naming, SlugLowercasesAndCollapsesNonAlphanumerics) {
  EXPECT_EQ(scenario_slug("4x R740 16GFC"), "4x-r740-16gfc");
  EXPECT_EQ(scenario_slug("  --Hello,,  World!! "), "hello-world");
  EXPECT_EQ(scenario_slug("1x R7625 64GFC"), "1x-r7625-64gfc");
  EXPECT_EQ(scenario_slug("???"), "s");
}

TEST(Naming, SlugIsBoundedAndNeverEndsWithDash) {
  auto slug = scenario_slug("a very long scenario name with many words");
  EXPECT_LE(slug.size(), 20u);
  EXPECT_NE(slug.back(), '-');
  EXPECT_EQ(slug, "a-very-long-scenario");
  EXPECT_EQ(scenario_slug("abcdefghijklmnopqrs tuv"), "abcdefghijklmnopqrs");
}

TEST(Naming, VmNamesCarryTheRunId) {
  auto name = vm_name("3f9a2c", "4x-r740-16gfc", 7);
  EXPECT_EQ(name, "bs-3f9a2c-4x-r740-16gfc-007");
  EXPECT_TRUE(api::name_carries_run_id(name, "3f9a2c"));
  EXPECT_FALSE(api::name_carries_run_id(name, "3f9a2d"));
  EXPECT_EQ(vm_name("abcdef", "s", 1234), "bs-abcdef-s-1234");
}

TEST(Naming, RunIdIsSixHex) {
  std::regex hex6("^[0-9a-f]{6}$");
  for (int i = 0; i < 20; ++i) EXPECT_TRUE(std::regex_match(new_run_id(), hex6));
}

TEST(Naming, RunDirectoryAndTimestamps) {
  std::chrono::system_clock::time_point t{
      std::chrono::milliseconds(1796032800123LL)};  // 2026-11-30T10:00:00.123Z
  EXPECT_EQ(format_rfc3339(t), "2026-11-30T10:00:00.123Z");
  EXPECT_EQ(run_directory_name("consolidation/4x", t, "3f9a2c"), "consolidation-4x-20261130T100000-3f9a2c");
  EXPECT_DOUBLE_EQ(unix_seconds(t), 1796032800.123);
}

}  // namespace bootstorm::engine

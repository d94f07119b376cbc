// Naming what bound a layout: from the lab's limits, and on a real platform from the run.
#include "orchestrator/sizing/binding.hpp"

#include <gtest/gtest.h>

namespace bootstorm::sizing {
namespace {

namespace model = sim::model;

model::BootLimits limits(std::vector<model::BootLimit> list) {
  model::BootLimits l;
  l.limits = std::move(list);
  return l;
}

TEST(Binding, MemoryRefusalsComeFirst) {
  auto l = limits({{model::LimitKind::host_link, "h1", 1600, 500, 1.0}});
  l.memory_refusals = {{"h1", 3}, {"h2", 1}};
  const Binding b = binding_from_limits(l, "lab model");
  EXPECT_EQ(b.resource, "memory");
  EXPECT_EQ(b.on, "h1");
  EXPECT_NE(b.detail.find("4 power-on(s) refused"), std::string::npos) << b.detail;
}

TEST(Binding, TheLimitThatHeldTheBootsLongestSummedOverItsHosts) {
  // Four links at 100 flow-seconds each outweigh one datastore at 300 and the latency caps at 50.
  const Binding b =
      binding_from_limits(limits({{model::LimitKind::host_link, "r740-01", 1600, 100, 1.0},
                                  {model::LimitKind::host_link, "r740-02", 1600, 110, 1.0},
                                  {model::LimitKind::host_link, "r740-03", 1600, 100, 1.0},
                                  {model::LimitKind::host_link, "r740-04", 1600, 90, 1.0},
                                  {model::LimitKind::datastore_bandwidth, "ds", 12000, 300, 1.0},
                                  {model::LimitKind::per_io_latency, "", 0, 50, 0}}),
                          "lab model");
  EXPECT_EQ(b.resource, "link");
  EXPECT_EQ(b.on, "r740-02");
  ASSERT_TRUE(b.share);
  EXPECT_NEAR(*b.share, 400.0 / 750.0, 1e-12);
  EXPECT_NE(b.detail.find("like 3 other(s)"), std::string::npos) << b.detail;
}

TEST(Binding, ArrayCpuAndPerIoLatency) {
  EXPECT_EQ(
      binding_from_limits(limits({{model::LimitKind::datastore_iops, "ds", 1e6, 10, 1.0}}), "x").resource,
      "array");
  EXPECT_EQ(binding_from_limits(limits({{model::LimitKind::host_cpu, "h", 64, 10, 1.0}}), "x").resource,
            "CPU");
  const Binding latency = binding_from_limits(limits({{model::LimitKind::per_io_latency, "", 0, 10, 0},
                                                      {model::LimitKind::host_link, "h", 1600, 1, 0.2}}),
                                              "x");
  EXPECT_EQ(latency.resource, "per-I/O latency");
  EXPECT_TRUE(latency.on.empty());
  EXPECT_FALSE(binding_from_limits(limits({}), "x").share);
}

TEST(Binding, AddingStormsSumsTimeAndKeepsThePeak) {
  auto a = limits({{model::LimitKind::host_link, "h", 1600, 10, 0.5}});
  auto b = limits({{model::LimitKind::host_link, "h", 1600, 5, 0.9}});
  b.memory_refusals = {{"h", 2}};
  const auto sum = add_limits({a, b});
  EXPECT_DOUBLE_EQ(sum.limits[0].flow_seconds, 15);
  EXPECT_DOUBLE_EQ(sum.limits[0].peak_utilisation, 0.9);
  EXPECT_EQ(sum.memory_refusals.at("h"), 2);
}

TEST(Binding, OnARealPlatformFromMemoryFailuresAndAFullLink) {
  results::ScenarioSummary s;
  s.failures = {{"bs-1", "power on failed: InsufficientMemoryResourcesFault: ..."}};
  EXPECT_EQ(binding_from_storms({s}).resource, "memory");

  results::ScenarioSummary t;
  results::StorageFigures f;
  f.hosts = {{"esx-1", 1.5e9, 1.6e9, 0.94, 0}, {"esx-2", 0.5e9, 1.6e9, 0.31, 0}};
  t.storage = f;
  const Binding link = binding_from_storms({t});
  EXPECT_EQ(link.resource, "link");
  EXPECT_EQ(link.on, "esx-1");
  EXPECT_EQ(link.source, "telemetry");

  f.hosts = {{"esx-1", 0.5e9, 1.6e9, 0.31, 0}};
  t.storage = f;
  const Binding unknown = binding_from_storms({t});
  EXPECT_TRUE(unknown.resource.empty());
  EXPECT_NE(unknown.detail.find("peaked at 31 %"), std::string::npos) << unknown.detail;
  EXPECT_NE(binding_from_storms({results::ScenarioSummary{}}).detail.find("no storage telemetry"),
            std::string::npos);
}

}  // namespace
}  // namespace bootstorm::sizing

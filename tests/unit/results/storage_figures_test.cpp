// The storage figures of a storm from its telemetry: the series summed per interval (datastore where the
// source has it, else hosts), peaks, means from the exact totals, IOPS per desktop, latency percentiles,
// link utilisation, the JSON of summary.json and the journal, and two shards' telemetry merged.
#include "results/storage_figures.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "results/telemetry_json.hpp"

namespace bootstorm::results {
namespace {

api::StorageSample sample(api::StorageSubject kind, std::string subject, double from, double to,
                          double read_bps, double read_iops, std::optional<double> latency = std::nullopt) {
  api::StorageSample s;
  s.kind = kind;
  s.subject = std::move(subject);
  s.from = from;
  s.to = to;
  s.rates.read_bytes_per_s = read_bps;
  s.rates.read_iops = read_iops;
  if (latency) s.rates.read_latency_s = latency;
  return s;
}

// Two hosts reading one datastore over two 20 s intervals (vCenter's shape).
api::TelemetryReport vsphere_report() {
  using K = api::StorageSubject;
  api::TelemetryReport r;
  r.source = "vsphere-perf";
  r.resolution_s = 20;
  r.from = 1000;
  r.to = 1040;
  r.samples = {sample(K::datastore, "h1/ds", 1000, 1020, 100e6, 1000, 0.002),
               sample(K::datastore, "h2/ds", 1000, 1020, 300e6, 3000, 0.004),
               sample(K::datastore, "h1/ds", 1020, 1040, 50e6, 500, 0.001),
               sample(K::datastore, "h2/ds", 1020, 1040, 50e6, 500, 0.001),
               sample(K::host, "h1", 1000, 1020, 100e6, 1000),
               sample(K::host, "h2", 1000, 1020, 300e6, 3000),
               sample(K::host, "h1", 1020, 1040, 50e6, 500),
               sample(K::host, "h2", 1020, 1040, 50e6, 500),
               sample(K::vm, "vm-1", 1000, 1020, 10e6, 100, 0.001),
               sample(K::vm, "vm-2", 1000, 1020, 10e6, 100, 0.003),
               sample(K::vm, "vm-3", 1020, 1040, 10e6, 100, 0.010)};
  r.link_capacity_bytes_per_s = {{"h1", 1600e6}, {"h2", 6400e6}};
  return r;
}

TEST(StorageFigures, TheDatastoreSeriesIsSummedPerIntervalAndPeaksAndMeansFollow) {
  const StorageFigures f = storage_figures(vsphere_report(), 4);
  EXPECT_EQ(f.series, "datastore");
  ASSERT_EQ(f.points.size(), 2u);
  EXPECT_DOUBLE_EQ(f.points[0].bytes_per_s, 400e6);
  EXPECT_DOUBLE_EQ(f.points[0].iops, 4000);
  EXPECT_DOUBLE_EQ(*f.points[0].read_latency_s, (0.002 * 1000 + 0.004 * 3000) / 4000);  // read-weighted
  EXPECT_DOUBLE_EQ(f.peak_bytes_per_s, 400e6);
  EXPECT_DOUBLE_EQ(f.peak_iops, 4000);
  EXPECT_DOUBLE_EQ(f.peak_iops_per_desktop, 1000);
  // No VM totals: the series integrated over the 40 s window.
  EXPECT_DOUBLE_EQ(f.bytes, 400e6 * 20 + 100e6 * 20);
  EXPECT_DOUBLE_EQ(f.mean_bytes_per_s, f.bytes / 40);
  EXPECT_DOUBLE_EQ(f.mean_iops_per_desktop, (4000 * 20 + 1000 * 20) / 40.0 / 4);
  ASSERT_TRUE(f.read_latency_p50_s && f.read_latency_p95_s);
  EXPECT_DOUBLE_EQ(*f.read_latency_p50_s, 0.003);
  EXPECT_GT(*f.read_latency_p95_s, 0.009);
  ASSERT_EQ(f.hosts.size(), 2u);
  EXPECT_DOUBLE_EQ(f.hosts[1].peak_bytes_per_s, 300e6);
  EXPECT_DOUBLE_EQ(*f.hosts[0].peak_utilisation, 100e6 / 1600e6);
  EXPECT_DOUBLE_EQ(*f.hosts[1].capacity_bytes_per_s, 6400e6);
}

TEST(StorageFigures, WithoutDatastoresTheHostsAreTheSeriesAndVmTotalsAreExact) {
  api::TelemetryReport r = vsphere_report();
  std::erase_if(r.samples, [](const auto& s) { return s.kind == api::StorageSubject::datastore; });
  r.totals = {{api::StorageSubject::vm, "vm-1", 7e6, 1e6, 70, 10, 0.001},
              {api::StorageSubject::vm, "vm-2", 3e6, 0, 30, 0, 0.002},
              {api::StorageSubject::host, "h1", 10e6, 1e6, 100, 10, 0.001}};
  const StorageFigures f = storage_figures(r, 2);
  EXPECT_EQ(f.series, "hosts");
  EXPECT_DOUBLE_EQ(f.peak_bytes_per_s, 400e6);
  EXPECT_DOUBLE_EQ(f.bytes, 11e6);  // the VMs' totals, not the hosts'
  EXPECT_DOUBLE_EQ(f.ios, 110);
}

TEST(StorageFigures, DatastoreAndHostSeriesOfZerosGiveWayToTheVmsSoThePeakIsNeverBelowTheMean) {
  // govmomi's simulator: datastore and host series answered, all zeros; only its VMs write.
  api::TelemetryReport r = vsphere_report();
  for (auto& s : r.samples) {
    if (s.kind != api::StorageSubject::vm) s.rates = {};
  }
  const StorageFigures f = storage_figures(r, 3);
  EXPECT_EQ(f.series, "vms");
  EXPECT_DOUBLE_EQ(f.peak_bytes_per_s, 20e6);  // vm-1 + vm-2 in the first interval
  EXPECT_GE(f.peak_bytes_per_s, f.mean_bytes_per_s);
  // No data anywhere: the datastore series, as before (all zeros).
  for (auto& s : r.samples) s.rates = {};
  EXPECT_EQ(storage_figures(r, 3).series, "datastore");
}

TEST(StorageFigures, SummaryJsonRoundTripsAndTheJournalsTelemetryToo) {
  const StorageFigures f = storage_figures(vsphere_report(), 4);
  auto back = storage_figures_from_json(storage_figures_json(f));
  ASSERT_TRUE(back.has_value());
  // summary.json rounds MB/s to the kB/s and latency to the microsecond.
  EXPECT_EQ(back->source, f.source);
  EXPECT_EQ(back->series, f.series);
  EXPECT_NEAR(back->peak_bytes_per_s, f.peak_bytes_per_s, 1e3);
  EXPECT_NEAR(back->mean_bytes_per_s, f.mean_bytes_per_s, 1e3);
  EXPECT_NEAR(*back->read_latency_p95_s, *f.read_latency_p95_s, 1e-6);
  ASSERT_EQ(back->points.size(), f.points.size());
  EXPECT_NEAR(*back->points[0].read_latency_s, *f.points[0].read_latency_s, 1e-6);
  ASSERT_EQ(back->hosts.size(), 2u);
  EXPECT_NEAR(*back->hosts[0].peak_utilisation, *f.hosts[0].peak_utilisation, 1e-4);
  EXPECT_NEAR(*back->hosts[1].capacity_bytes_per_s, 6400e6, 1e3);
  EXPECT_FALSE(storage_figures_from_json(nlohmann::json::array()).has_value());
  const api::TelemetryReport r = vsphere_report();
  auto report = telemetry_from_json(telemetry_json(r));
  ASSERT_TRUE(report.has_value());
  EXPECT_EQ(report->samples.size(), r.samples.size());
  EXPECT_EQ(report->samples[1].subject, "h2/ds");
  EXPECT_EQ(*report->samples[1].rates.read_latency_s, 0.004);
  EXPECT_EQ(report->link_capacity_bytes_per_s, r.link_capacity_bytes_per_s);
  EXPECT_EQ(storage_figures(*report, 4), f);
}

TEST(StorageFigures, TwoShardsOfOneStormAddUpOnTheirCommonHost) {
  api::TelemetryReport a = vsphere_report(), b = vsphere_report();
  a.totals = {{api::StorageSubject::host, "h1", 100, 0, 10, 0, 0.001}};
  b.totals = {{api::StorageSubject::host, "h1", 300, 0, 30, 0, 0.003}};
  b.to = 1060;
  merge_telemetry(a, b);
  EXPECT_DOUBLE_EQ(a.to, 1060);
  ASSERT_EQ(a.totals.size(), 1u);
  EXPECT_DOUBLE_EQ(a.totals[0].read_bytes, 400);
  EXPECT_DOUBLE_EQ(*a.totals[0].read_latency_s, (0.001 * 10 + 0.003 * 30) / 40);
  const StorageFigures f = storage_figures(a, 8);
  EXPECT_DOUBLE_EQ(f.hosts[1].peak_bytes_per_s, 600e6);  // h2's first interval from both shards
  EXPECT_DOUBLE_EQ(f.peak_bytes_per_s, 800e6);
}

}  // namespace
}  // namespace bootstorm::results

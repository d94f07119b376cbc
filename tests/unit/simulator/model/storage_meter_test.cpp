// The lab's storage counters in virtual time: what a boot reads, where it is counted, how the latency follows
// from the queue, the sampling grid, the series of each boot, and the truth's "storage" section.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "tests/unit/simulator/model/lab_test_support.hpp"

namespace bootstorm::sim::model {
namespace {

using namespace bootstorm::sim::model::testing;

double total_mb_read(const GuestProfile& profile) {
  double mb = 0;
  for (const auto& phase : profile.phases) mb += phase.mb_read;
  return mb;
}

const VmIoSeries* series_of(const StorageTelemetry& t, const std::string& name) {
  const VmIoSeries* found = nullptr;
  for (const auto& s : t.vms) {
    if (s.name == name) found = &s;  // the last boot
  }
  return found;
}

IoCounters last(const IoHistory& history) {
  return history.samples.empty() ? IoCounters{} : history.samples.back().total;
}

TEST(StorageMeter, AnUncontendedBootReadsItsProfileAtTheLatencyOfItsPath) {
  const LabSpec spec = simple_spec();
  Lab lab(spec, virtual_options());
  const std::string id = clone_to(lab, "gold", "vm-a", "h1");
  storm(lab, {id});
  lab.advance(20);
  const StorageTelemetry& t = lab.storage_telemetry();
  EXPECT_DOUBLE_EQ(t.step, 5.0);  // gcd(15 s scrapes, 20 s vCenter samples)
  const GuestProfile& p = spec.profiles.front();
  const VmIoSeries* vm = series_of(t, "vm-a");
  ASSERT_NE(vm, nullptr);
  const IoCounters c = last(vm->history);
  const double bytes = total_mb_read(p) * 1e6;
  EXPECT_NEAR(c.read_bytes, bytes, bytes * 1e-9);
  // Alone, the guest runs at its cap: every I/O takes the host's plus the array's latency (0.5 + 0.5 ms).
  EXPECT_NEAR(c.read_seconds / c.read_ios, 0.001, 1e-9);
  EXPECT_NEAR(c.read_ios, bytes / (p.io_size_kb * 1e3), 1e-6);
  EXPECT_EQ(c.write_bytes, 0);
  // The host's link and the datastore saw the boot's reads and the linked clone's delta written before it.
  // Counted per class, the link and the array agree with the VM within the clock's resolution (unix
  // seconds in a double: ~0.2 us).
  const IoCounters link = last(t.host_links[0]);
  EXPECT_NEAR(link.read_bytes, bytes, bytes * 1e-6);
  EXPECT_NEAR(link.write_bytes, p.linked_delta_mb * 1e6, p.linked_delta_mb * 1e6 * 1e-6);
  const IoCounters ds = last(t.datastores[0]);
  EXPECT_NEAR(ds.read_bytes, bytes, bytes * 1e-6);
  EXPECT_NEAR(ds.write_bytes, p.linked_delta_mb * 1e6, p.linked_delta_mb * 1e6 * 1e-6);
  EXPECT_EQ(last(t.host_datastores[0]), link);
  // Samples sit on the grid, and no interval is faster than the guest's cap (38 MB/s).
  for (std::size_t i = 0; i < vm->history.samples.size(); ++i) {
    const IoSample& s = vm->history.samples[i];
    EXPECT_NEAR(std::remainder(s.at, t.step), 0.0, 1e-6) << s.at;
    if (i == 0) continue;
    const IoSample& before = vm->history.samples[i - 1];
    EXPECT_LE((s.total.read_bytes - before.total.read_bytes) / (s.at - before.at), 38e6 * (1 + 1e-6));
  }
  EXPECT_GE(vm->history.samples.front().at, vm->begin);
}

TEST(StorageMeter, ASaturatedLinkQueuesTheGuestsAndTheHostAndVmCountsAgree) {
  const LabSpec spec = simple_spec(/*hosts=*/1, /*link_mbps=*/200);
  Lab lab(spec, virtual_options());
  std::vector<std::string> ids;
  for (int i = 0; i < 20; ++i) ids.push_back(clone_to(lab, "gold", "vm-" + std::to_string(i), "h1"));
  storm(lab, ids);
  lab.advance(20);
  const StorageTelemetry& t = lab.storage_telemetry();
  IoCounters vms;
  for (const auto& s : t.vms) vms += last(s.history);
  const IoCounters link = last(t.host_links[0]);
  // Two ways of counting: per class on the link, per flow for each VM.
  EXPECT_NEAR(vms.read_bytes, link.read_bytes, link.read_bytes * 1e-6);
  EXPECT_NEAR(vms.read_ios, link.read_ios, link.read_ios * 1e-6);
  EXPECT_NEAR(vms.read_seconds, link.read_seconds, link.read_seconds * 1e-6);
  EXPECT_NEAR(vms.read_bytes, 20 * total_mb_read(spec.profiles.front()) * 1e6, 1e-3);
  // 20 guests would read at 760 MB/s: the 200 MB/s link holds them, and the latency grows with the queue.
  EXPECT_GT(link.read_seconds / link.read_ios, 0.003);
  double peak = 0;
  const auto& samples = t.host_links[0].samples;
  for (std::size_t i = 1; i < samples.size(); ++i) {
    const double rate =
        (samples[i].total.read_bytes - samples[i - 1].total.read_bytes) / (samples[i].at - samples[i - 1].at);
    EXPECT_LE(rate, 200e6 * (1 + 1e-6));
    peak = std::max(peak, rate);
  }
  EXPECT_NEAR(peak, 200e6, 200) << "a whole grid interval at the link's capacity";
}

TEST(StorageMeter, EachBootIsASeriesFromRunningToPowerOffAndDeletionEndsIt) {
  const LabSpec spec = simple_spec();
  Lab lab(spec, virtual_options());
  const std::string id = clone_to(lab, "gold", "vm-a", "h1");
  storm(lab, {id});
  ASSERT_TRUE(lab.power_off(id, nullptr).has_value());
  ASSERT_TRUE(lab.run_until_idle(lab.now() + 60));
  storm(lab, {id});
  lab.advance(10);
  ASSERT_TRUE(lab.delete_vm(id).has_value());
  lab.advance(10);
  const StorageTelemetry& t = lab.storage_telemetry();
  ASSERT_EQ(t.vms.size(), 2u);
  const VmIoSeries& first = t.vms[0];
  const VmIoSeries& second = t.vms[1];
  ASSERT_TRUE(first.end && second.end);
  EXPECT_FALSE(first.deleted);
  EXPECT_TRUE(second.deleted);
  EXPECT_LT(*first.end, second.begin);
  // The second boot's counters start from zero: both boots read the same profile.
  EXPECT_NEAR(last(first.history).read_bytes, last(second.history).read_bytes, 1);
  EXPECT_EQ(first.vm_id, id);
  EXPECT_EQ(second.host_id, first.host_id);
}

TEST(StorageMeter, TheGridHoldsBothScrapeIntervalsAndAnIdleLabAddsNoSamples) {
  LabSpec spec = simple_spec();
  spec.telemetry.scrape_interval_s = 8;
  Lab lab(spec, virtual_options());
  EXPECT_DOUBLE_EQ(lab.storage_telemetry().step, 4.0);
  const std::string id = clone_to(lab, "gold", "vm-a", "h1");
  storm(lab, {id});
  lab.advance(8);
  const std::size_t samples = lab.storage_telemetry().host_links[0].samples.size();
  lab.advance(3600);
  const StorageTelemetry& t = lab.storage_telemetry();
  EXPECT_EQ(t.host_links[0].samples.size(), samples);
  EXPECT_NEAR(t.sampled_until, std::floor(lab.now() / 4.0) * 4.0, 1e-6);
  EXPECT_EQ(t.host_links[0].at(lab.now()), t.host_links[0].samples.back().total);
  EXPECT_EQ(t.host_links[0].at(t.host_links[0].samples.front().at - 1), IoCounters{});
}

TEST(StorageMeter, ACsiCloneIsCountedOnTheArrayAloneAndATransferOnItsHosts) {
  LabSpec spec = simple_spec(/*hosts=*/2);
  // An array of a real speed: at the helper's 1 TB/s, a step of the clock's resolution moves 0.2 MB.
  spec.datastores[0].mbps = 2000;
  GoldenImageSpec image;
  image.name = "win";
  image.namespace_ = "images";
  image.profile = "g";
  image.datastore = "ds";
  spec.golden_images.push_back(image);
  Lab lab(spec, virtual_options());
  VolumeCloneRequest clone;
  clone.kind = CloneKind::cdi_csi_clone;
  clone.source_image = "win";
  clone.source_image_namespace = "images";
  clone.size_gb = 1;
  bool cloned = false;
  ASSERT_TRUE(lab.clone_volume(clone, [&](Expected<void> r) { cloned = r.has_value(); }).has_value());
  ASSERT_TRUE(lab.run_until_idle(lab.now() + 3600));
  ASSERT_TRUE(cloned);
  Lab::DataFlowRequest transfer;
  transfer.host_ids = {"h1", "h2"};
  transfer.datastore_ids = {"ds", "ds"};
  transfer.mb = 300;
  ASSERT_TRUE(lab.start_data_flow(transfer, nullptr).has_value());
  ASSERT_TRUE(lab.run_until_idle(lab.now() + 3600));
  lab.advance(10);
  const StorageTelemetry& t = lab.storage_telemetry();
  const IoCounters ds = last(t.datastores[0]);
  EXPECT_NEAR(ds.read_bytes, 1300e6, 1300);   // the clone's copy read, the transfer's read
  EXPECT_NEAR(ds.write_bytes, 1300e6, 1300);  // and both written back
  EXPECT_NEAR(last(t.host_links[0]).read_bytes, 300e6, 300);
  EXPECT_EQ(last(t.host_links[0]).write_bytes, 0);
  EXPECT_NEAR(last(t.host_links[1]).write_bytes, 300e6, 300);
  EXPECT_NEAR(ds.read_ios, 1300, 1300e-6);  // 1 MB I/Os
  EXPECT_TRUE(t.vms.empty());
}

TEST(StorageMeter, TheTruthCarriesTheSamplesInItsColumns) {
  const LabSpec spec = simple_spec();
  Lab lab(spec, virtual_options());
  const std::string id = clone_to(lab, "gold", "vm-a", "h1");
  storm(lab, {id});
  lab.advance(10);
  const auto truth = nlohmann::json::parse(lab.truth_json());
  const auto& storage = truth.at("storage");
  EXPECT_EQ(storage.at("columns")[1], "readBytes");
  const StorageTelemetry& t = lab.storage_telemetry();
  EXPECT_DOUBLE_EQ(storage.at("step").get<double>(), t.step);
  const auto& host = storage.at("hosts")[0];
  EXPECT_EQ(host.at("name"), "h1");
  EXPECT_DOUBLE_EQ(host.at("linkMBps").get<double>(), 1000);
  ASSERT_EQ(host.at("link").size(), t.host_links[0].samples.size());
  EXPECT_DOUBLE_EQ(host.at("link").back()[1].get<double>(), t.host_links[0].samples.back().total.read_bytes);
  EXPECT_TRUE(host.at("datastores").contains("ds"));
  const auto& vm = storage.at("vms")[0];
  EXPECT_EQ(vm.at("name"), "vm-a");
  EXPECT_EQ(vm.at("host"), "h1");
  EXPECT_EQ(vm.at("datastore"), "ds");
  EXPECT_FALSE(vm.contains("end"));
  EXPECT_DOUBLE_EQ(vm.at("samples").back()[3].get<double>(), t.vms[0].history.samples.back().total.read_ios);
}

TEST(StorageMeter, TheScrapeIntervalIsReadFromTheProfileAndChecked) {
  const std::string base =
      "name: t\nhosts: [{name: h}]\ndatastores: [{name: d}]\nprofiles: [{name: p, phases: [{name: "
      "agent_start}, {name: services}]}]\n";
  auto spec = parse_lab_spec(base + "telemetry: {scrapeIntervalS: 2}\n", "t.yaml");
  ASSERT_TRUE(spec.has_value()) << spec.error().what();
  EXPECT_DOUBLE_EQ(spec->telemetry.scrape_interval_s, 2);
  auto fast = parse_lab_spec(base + "telemetry: {scrapeIntervalS: 0.5}\n", "t.yaml");
  ASSERT_FALSE(fast.has_value());
  EXPECT_NE(std::string(fast.error().what()).find("at least 1 s"), std::string::npos) << fast.error().what();
  auto unknown = parse_lab_spec(base + "telemetry: {scrape: 2}\n", "t.yaml");
  ASSERT_FALSE(unknown.has_value());
}

}  // namespace
}  // namespace bootstorm::sim::model

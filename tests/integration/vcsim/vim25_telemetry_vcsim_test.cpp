// The vim25 provider's storage telemetry (Vim25PerfSource) against govmomi's vCenter simulator (vcsim
// v0.56.0, tests/support/vcsim) over verified TLS: the PerformanceManager's perfCounter has every counter the
// source reads, and QueryPerf answers with synthetic samples. What vcsim does differently from a vCenter, and
// what this test therefore cannot show:
//  * its synthetic data covers virtualDisk.read and virtualDisk.write of VMs only; every other storage
//    counter (storageAdapter.*, datastore.*, the VMs' I/O counts and latencies) is all zeros;
//  * its XML encoder drops zero values from a series (PerfMetricIntSeries.value is `omitempty`): an all-zero
//    series arrives empty (no value), and virtualDisk.read, whose data holds zeros, arrives with fewer
//    values than samples and cannot be matched to them (the source leaves it out with a warning). So the
//    VMs' samples carry virtualDisk.write only, and the hosts have no samples at all (the report says so);
//  * it echoes the instance asked for ("*") instead of one instance per disk, HBA or datastore;
//  * it answers nothing without maxSample (the source always sets it) and writes samples newest first;
//  * its samples end at the query's endTime instead of on vCenter's 20 s grid;
//  * its hosts have no Fibre Channel HBA, so there is no link capacity;
//  * it never faults a deleted VM in QueryPerf (the unit test plays ManagedObjectNotFound).
// The host arithmetic is covered by tests/unit/providers/vsphere/vim25_provider/telemetry_test.cpp.
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "providers/vsphere/transport.hpp"
#include "providers/vsphere/vim25_provider/vim25_provider.hpp"
#include "providers/vsphere/vim25_provider/vim25_telemetry.hpp"
#include "tests/support/run_task.hpp"
#include "tests/support/scratch_dir.hpp"
#include "tests/support/vcsim_process.hpp"

namespace {

using namespace bootstorm;
using namespace bootstorm::vsphere::vim25;
using bootstorm::testing::run_task;

class VcsimTelemetry : public ::testing::Test {
 protected:
  void SetUp() override {
    vcsim_ = std::make_unique<test_support::VcsimProcess>(
        BOOTSTORM_VCSIM, dir_.path(), std::vector<std::string>{"-cluster", "1", "-hosts", "2", "-vms", "3"});
    ASSERT_TRUE(vcsim_->ready()) << vcsim_->why_not();
    info_ = vcsim_->info();
    api::ProviderConfig config;
    config.kind = "vsphere";
    config.endpoint = vcsim_->endpoint();
    config.ca_file = info_.at("caFile");
    config.username = info_.at("username");
    config.password = info_.at("password");
    config.max_concurrent = 8;
    config.request_timeout = std::chrono::seconds(30);
    provider_ = std::make_unique<Vim25Provider>(io_.get_executor(), config,
                                                vsphere::make_http_transport(io_.get_executor(), config));
    auto connected = run_task(io_, provider_->connect());
    ASSERT_TRUE(connected) << connected.error().what();
  }
  void TearDown() override {
    if (provider_) run_task(io_, provider_->disconnect());
    provider_.reset();
    vcsim_.reset();
  }
  std::vector<std::string> names(const char* key) const {
    std::vector<std::string> out;
    for (const auto& o : info_.at(key)) out.push_back(o.at("name"));
    return out;
  }

  boost::asio::io_context io_;
  test_support::ScratchDir dir_{"vcsim-perf"};
  std::unique_ptr<test_support::VcsimProcess> vcsim_;
  nlohmann::json info_;
  std::unique_ptr<Vim25Provider> provider_;
};

TEST_F(VcsimTelemetry, SamplesForEveryVmAt20SecondsAndHostsAsked) {
  api::TelemetrySettings settings;  // auto
  auto source = provider_->telemetry_source(settings);
  ASSERT_TRUE(source) << source.error().what();
  EXPECT_EQ((*source)->name(), "vsphere-perf");
  const double now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  api::TelemetryRequest request;
  request.from = now - 120;
  request.to = now;
  request.vm_names = names("vms");
  request.hosts = names("hosts");
  ASSERT_EQ(request.vm_names.size(), 3u);
  ASSERT_EQ(request.hosts.size(), 2u);

  auto report = run_task(io_, (*source)->collect(request));
  ASSERT_TRUE(report) << report.error().what();
  for (const auto& w : report->warnings) std::cout << "warning: " << w << "\n";
  EXPECT_EQ(report->source, "vsphere-perf");
  EXPECT_EQ(report->resolution_s, 20);
  EXPECT_EQ(report->endpoint, vcsim_->endpoint());
  std::map<std::string, int> vm_samples, host_samples;
  for (const auto& s : report->samples) {
    EXPECT_DOUBLE_EQ(s.to - s.from, 20) << s.subject;
    EXPECT_GT(s.to, request.from) << s.subject;
    EXPECT_LE(s.to, request.to + 1e-3) << s.subject;
    if (s.kind == api::StorageSubject::vm) ++vm_samples[s.subject];
    if (s.kind == api::StorageSubject::host) ++host_samples[s.subject];
    EXPECT_GE(s.rates.read_bytes_per_s, 0);
    EXPECT_GE(s.rates.read_iops, 0);
  }
  // 120 s of 20 s samples ending at `to`: six overlap the window. vcsim's VMs write something.
  for (const auto& vm : request.vm_names) EXPECT_EQ(vm_samples[vm], 6) << vm;
  for (const auto& s : report->samples) EXPECT_GT(s.rates.write_bytes_per_s, 0) << s.subject;
  // Its hosts were asked about (their storageAdapter and datastore series came back empty: all zeros).
  EXPECT_TRUE(host_samples.empty());
  auto warned = [&](const std::string& text) {
    for (const auto& w : report->warnings)
      if (w.find(text) != std::string::npos) return true;
    return false;
  };
  EXPECT_TRUE(warned("no real-time storageAdapter samples in the window for 2 of 2 hosts"));
  // The totals are the samples' rates x 20 s.
  for (const auto& t : report->totals) {
    double sum = 0;
    for (const auto& s : report->samples)
      if (s.kind == t.kind && s.subject == t.subject) sum += s.rates.write_bytes_per_s * 20;
    EXPECT_DOUBLE_EQ(t.write_bytes, sum) << t.subject;
  }
  EXPECT_TRUE(report->link_capacity_bytes_per_s.empty());  // no FC HBA in vcsim's hosts
}

TEST_F(VcsimTelemetry, AVmDeletedBeforeTheReadIsAWarning) {
  auto source = provider_->telemetry_source(api::TelemetrySettings{"vsphere-perf", {}, {}, {}, {}});
  ASSERT_TRUE(source) << source.error().what();
  const double now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  api::TelemetryRequest request{now - 40, now, {names("vms").front(), "bs-000000-gone-001"}, {}, {}};
  auto report = run_task(io_, (*source)->collect(request));
  ASSERT_TRUE(report) << report.error().what();
  bool warned = false;
  for (const auto& w : report->warnings) warned |= w.find("bs-000000-gone-001") != std::string::npos;
  EXPECT_TRUE(warned);
  EXPECT_FALSE(report->samples.empty());
}

}  // namespace

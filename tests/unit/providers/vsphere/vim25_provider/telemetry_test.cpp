// Vim25PerfSource: the arithmetic of vCenter's real-time storage statistics (disks summed per VM without the
// aggregate instance, adapters summed per host, I/O-weighted latencies, -1 as "no value", the window, totals
// as rate x 20 s, datastore UUIDs named, FC link capacity), and the source driven through the vim25 provider
// over a scripted /sdk: the QueryPerf it sends, a VM vanishing between the name lookup and the query,
// counters vCenter lacks, NoPermission and timeouts as Errors, and which telemetry sources the provider
// offers.
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "common/rfc3339.hpp"
#include "providers/vsphere/vim25_provider/vim25_provider.hpp"
#include "providers/vsphere/vim25_provider/vim25_telemetry.hpp"
#include "tests/support/run_task.hpp"

namespace {

namespace asio = boost::asio;
using namespace bootstorm;
using namespace bootstorm::vsphere::vim25;
using bootstorm::testing::run_task;

constexpr double kFrom = 1'700'000'000;  // 2023-11-14T22:13:20Z

// vCenter's storage counters with the keys govmomi's simulator gives them.
PerfCounterMap storage_counters(const std::set<std::string>& leave_out = {}) {
  PerfCounterMap out;
  const std::vector<std::pair<std::string, int>> groups{
      {"virtualDisk", 171}, {"datastore", 178}, {"storageAdapter", 162}};
  const char* units[] = {"number",      "number",     "kiloBytesPerSecond", "kiloBytesPerSecond",
                         "millisecond", "millisecond"};
  for (const auto& [group, first] : groups) {
    for (std::size_t q = 0; q < kStorageQuantities; ++q) {
      const std::string name =
          group + "." + std::string(counter_name(static_cast<StorageQuantity>(q))) + ".average";
      if (!leave_out.count(name)) out[name] = PerfCounter{first + static_cast<int>(q), units[q], "rate"};
    }
  }
  return out;
}

StorageCounters resolved(const std::set<std::string>& leave_out = {}) {
  std::vector<std::string> missing;
  return resolve_storage_counters(storage_counters(leave_out), missing);
}

PerfSample at(double t) {
  return {from_unix_seconds(t), 20};
}

const api::StorageSample* find(const api::TelemetryReport& r, api::StorageSubject kind,
                               const std::string& subject, double to) {
  for (const auto& s : r.samples)
    if (s.kind == kind && s.subject == subject && s.to == to) return &s;
  return nullptr;
}

const api::StorageTotals* totals(const api::TelemetryReport& r, api::StorageSubject kind,
                                 const std::string& subject) {
  for (const auto& t : r.totals)
    if (t.kind == kind && t.subject == subject) return &t;
  return nullptr;
}

TEST(Vim25Telemetry, CountersResolveByNameWithTheirUnits) {
  auto known = storage_counters({"datastore.totalWriteLatency.average"});
  known["virtualDisk.read.average"].unit = "megaBytesPerSecond";
  known["storageAdapter.totalReadLatency.average"].unit = "microsecond";
  known["storageAdapter.write.average"].unit = "percent";
  std::vector<std::string> missing;
  const StorageCounters c = resolve_storage_counters(known, missing);
  EXPECT_EQ(missing, (std::vector<std::string>{"datastore.totalWriteLatency.average",
                                               "storageAdapter.write.average (in percent)"}));
  ASSERT_TRUE(c.virtual_disk[StorageQuantity::reads]);
  EXPECT_EQ(c.virtual_disk[StorageQuantity::reads]->key, 171);
  EXPECT_EQ(c.virtual_disk[StorageQuantity::reads]->scale, 1.0);
  EXPECT_EQ(c.virtual_disk[StorageQuantity::read_bytes]->scale, 1024.0 * 1024.0);
  EXPECT_EQ(c.virtual_disk[StorageQuantity::write_bytes]->scale, 1024.0);
  EXPECT_EQ(c.virtual_disk[StorageQuantity::read_latency]->scale, 1e-3);
  EXPECT_EQ(c.storage_adapter[StorageQuantity::read_latency]->scale, 1e-6);
  EXPECT_FALSE(c.storage_adapter[StorageQuantity::write_bytes]);
  EXPECT_FALSE(c.datastore[StorageQuantity::write_latency]);
  EXPECT_TRUE(c.datastore.any());
  std::vector<std::string> all_missing;
  EXPECT_FALSE(resolve_storage_counters({}, all_missing).virtual_disk.any());
  EXPECT_EQ(all_missing.size(), 18u);
}

TEST(Vim25Telemetry, DatastoreUuidsAndFibreChannelCapacity) {
  EXPECT_EQ(datastore_instance_of_url("ds:///vmfs/volumes/5f1a2b3c-11d2e3f4-aa55-0050569a0001/"),
            "5f1a2b3c-11d2e3f4-aa55-0050569a0001");
  EXPECT_EQ(datastore_instance_of_url("ds:///vmfs/volumes/vsan:52a1b2c3d4e5f607-1122334455667788/"),
            "vsan:52a1b2c3d4e5f607-1122334455667788");
  EXPECT_EQ(datastore_instance_of_url("/tmp/govcsim-DC0-LocalDS_0-123"), "govcsim-DC0-LocalDS_0-123");
  EXPECT_EQ(datastore_instance_of_url(""), "");
  // 16GFC carries 1,600 MB/s per direction, whether ESXi says 16 (Gbit) or 16e9 (bit/s).
  EXPECT_DOUBLE_EQ(fc_usable_bytes_per_s(16), 1.6e9);
  EXPECT_DOUBLE_EQ(fc_usable_bytes_per_s(16'000'000'000), 1.6e9);
  EXPECT_DOUBLE_EQ(fc_usable_bytes_per_s(32), 3.2e9);
  EXPECT_EQ(fc_usable_bytes_per_s(0), 0);
  EXPECT_EQ(fc_usable_bytes_per_s(-1), 0);
}

PerfEntityMetric vm_metric() {
  // Samples newest first (the order must not matter); the one at kFrom covers [kFrom - 20, kFrom], before the
  // window.
  PerfEntityMetric m;
  m.entity = {"VirtualMachine", "vm-1"};
  m.samples = {at(kFrom + 40), at(kFrom), at(kFrom + 20)};
  m.series = {
      {{171, "scsi0:0"}, {100, 5, 100}},   {{171, "scsi0:1"}, {300, 5, 300}},
      {{171, ""}, {400, 10, 400}},  // the aggregate of the two disks: never added to them
      {{173, "scsi0:0"}, {1000, 1, 1000}}, {{173, "scsi0:1"}, {3000, 1, -1}},  // -1: no value
      {{173, ""}, {4000, 2, 4000}},        {{175, "scsi0:0"}, {2, 0, 2}},
      {{175, "scsi0:1"}, {6, 0, 6}},       {{172, "scsi0:0"}, {0, 0, 10}},
      {{172, "scsi0:1"}, {0, 0, 0}},       {{176, "scsi0:0"}, {0, 0, 1}},
      {{176, "scsi0:1"}, {0, 0, 3}},
  };
  return m;
}

PerfEntityMetric host_metric() {
  PerfEntityMetric m;
  m.entity = {"HostSystem", "host-1"};
  m.samples = {at(kFrom + 20), at(kFrom + 40)};
  m.series = {
      {{162, "vmhba0"}, {50, 0}},   {{162, "vmhba1"}, {150, 0}},  {{164, "vmhba0"}, {500, 0}},
      {{164, "vmhba1"}, {1500, 0}}, {{166, "vmhba0"}, {4, 0}},    {{166, "vmhba1"}, {8, 0}},
      {{163, "vmhba0"}, {0, 20}},   {{165, "vmhba0"}, {0, 200}},  {{167, "vmhba0"}, {0, 3}},
      {{178, "uuid-a"}, {200, 0}},  {{180, "uuid-a"}, {2000, 0}}, {{182, "uuid-a"}, {7, 0}},
      {{178, "uuid-x"}, {0, 0}},    {{178, ""}, {200, 0}},  // an aggregate is not a datastore
  };
  return m;
}

PerfSubjects subjects() {
  PerfSubjects s;
  s.vms = {{"vm-1", "bs-1-a"}, {"vm-2", "bs-1-b"}};
  s.hosts = {{"host-1", "esx-1"}};
  s.datastores = {{"uuid-a", "ds-a"}};
  return s;
}

TEST(Vim25Telemetry, VmDisksAreSummedWithoutTheAggregateAndLatencyIsWeightedByIos) {
  const auto r = build_storage_report({vm_metric()}, resolved(), subjects(), kFrom, kFrom + 40);
  EXPECT_EQ(r.source, "vsphere-perf");
  EXPECT_EQ(r.resolution_s, 20);
  const auto* first = find(r, api::StorageSubject::vm, "bs-1-a", kFrom + 20);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->from, kFrom);
  EXPECT_DOUBLE_EQ(first->rates.read_iops, 400);
  EXPECT_DOUBLE_EQ(first->rates.read_bytes_per_s, 1000 * 1024.0);  // scsi0:1 had no value
  ASSERT_TRUE(first->rates.read_latency_s);
  EXPECT_NEAR(*first->rates.read_latency_s, (2 * 100 + 6 * 300) / 400.0 / 1000, 1e-12);
  EXPECT_DOUBLE_EQ(first->rates.write_iops, 10);
  ASSERT_TRUE(first->rates.write_latency_s);  // the disk without writes does not dilute it
  EXPECT_NEAR(*first->rates.write_latency_s, 0.001, 1e-12);
  const auto* second = find(r, api::StorageSubject::vm, "bs-1-a", kFrom + 40);
  ASSERT_NE(second, nullptr);
  EXPECT_DOUBLE_EQ(second->rates.read_bytes_per_s, 4000 * 1024.0);
  EXPECT_FALSE(second->rates.write_latency_s);                            // nothing written
  EXPECT_EQ(find(r, api::StorageSubject::vm, "bs-1-a", kFrom), nullptr);  // before the window
  const auto* t = totals(r, api::StorageSubject::vm, "bs-1-a");
  ASSERT_NE(t, nullptr);
  EXPECT_DOUBLE_EQ(t->read_bytes, (1000 + 4000) * 1024.0 * 20);
  EXPECT_DOUBLE_EQ(t->read_ios, 800 * 20);
  EXPECT_DOUBLE_EQ(t->write_ios, 10 * 20);
  EXPECT_DOUBLE_EQ(t->write_bytes, 0);
  ASSERT_TRUE(t->read_latency_s);
  EXPECT_NEAR(*t->read_latency_s, 0.005, 1e-12);
  // bs-1-b and esx-1 were asked about and have nothing.
  ASSERT_EQ(r.warnings.size(), 2u);
  EXPECT_NE(r.warnings[0].find("1 of 2 VMs (bs-1-b)"), std::string::npos) << r.warnings[0];
  EXPECT_NE(r.warnings[1].find("1 of 1 hosts (esx-1)"), std::string::npos) << r.warnings[1];
}

TEST(Vim25Telemetry, TheAggregateInstanceCountsWhenItIsTheOnlyOne) {
  PerfEntityMetric m;
  m.entity = {"VirtualMachine", "vm-2"};
  m.samples = {at(kFrom + 20)};
  m.series = {{{171, ""}, {40}}, {{173, ""}, {80}}};
  const auto r = build_storage_report({m}, resolved(), subjects(), kFrom, kFrom + 20);
  const auto* s = find(r, api::StorageSubject::vm, "bs-1-b", kFrom + 20);
  ASSERT_NE(s, nullptr);
  EXPECT_DOUBLE_EQ(s->rates.read_iops, 40);
  EXPECT_DOUBLE_EQ(s->rates.read_bytes_per_s, 80 * 1024.0);
  EXPECT_FALSE(s->rates.read_latency_s);  // not measured
}

TEST(Vim25Telemetry, SeriesThatDoNotMatchTheirSamplesAreLeftOut) {
  PerfEntityMetric m;
  m.entity = {"VirtualMachine", "vm-1"};
  m.samples = {at(kFrom + 20), at(kFrom + 40)};
  // One value for two samples: which sample it belongs to is unknown. An empty series has no values.
  m.series = {{{173, "*"}, {7}}, {{174, "*"}, {3, 4}}, {{171, "*"}, {}}};
  const auto r = build_storage_report({m}, resolved(), subjects(), kFrom, kFrom + 40);
  const auto* s = find(r, api::StorageSubject::vm, "bs-1-a", kFrom + 40);
  ASSERT_NE(s, nullptr);
  EXPECT_DOUBLE_EQ(s->rates.write_bytes_per_s, 4 * 1024.0);
  EXPECT_DOUBLE_EQ(s->rates.read_bytes_per_s, 0);
  EXPECT_DOUBLE_EQ(s->rates.read_iops, 0);
  bool warned = false;
  for (const auto& w : r.warnings)
    warned |= w.find(
                  "1 series whose values do not match their samples one to one (e.g. "
                  "virtualDisk.read.average instance \"*\" of bs-1-a: 1 values for 2 samples)") !=
              std::string::npos;
  EXPECT_TRUE(warned);
}

TEST(Vim25Telemetry, HostsSumTheirAdaptersAndDatastoresAreNamed) {
  const auto r = build_storage_report({host_metric()}, resolved(), subjects(), kFrom, kFrom + 40);
  const auto* host = find(r, api::StorageSubject::host, "esx-1", kFrom + 20);
  ASSERT_NE(host, nullptr);
  EXPECT_DOUBLE_EQ(host->rates.read_iops, 200);
  EXPECT_DOUBLE_EQ(host->rates.read_bytes_per_s, 2000 * 1024.0);
  ASSERT_TRUE(host->rates.read_latency_s);
  EXPECT_NEAR(*host->rates.read_latency_s, (4 * 50 + 8 * 150) / 200.0 / 1000, 1e-12);
  EXPECT_FALSE(host->rates.write_latency_s);
  const auto* later = find(r, api::StorageSubject::host, "esx-1", kFrom + 40);
  ASSERT_NE(later, nullptr);
  EXPECT_FALSE(later->rates.read_latency_s);  // nothing read
  EXPECT_DOUBLE_EQ(later->rates.write_bytes_per_s, 200 * 1024.0);
  EXPECT_NEAR(*later->rates.write_latency_s, 0.003, 1e-12);
  const auto* ds = find(r, api::StorageSubject::datastore, "esx-1/ds-a", kFrom + 20);
  ASSERT_NE(ds, nullptr);
  EXPECT_DOUBLE_EQ(ds->rates.read_bytes_per_s, 2000 * 1024.0);
  EXPECT_NEAR(*ds->rates.read_latency_s, 0.007, 1e-12);
  EXPECT_NE(find(r, api::StorageSubject::datastore, "esx-1/uuid-x", kFrom + 40), nullptr);  // unnamed
  for (const auto& s : r.samples)
    EXPECT_NE(s.subject, "esx-1/") << "the aggregate instance became a datastore";
  const auto* t = totals(r, api::StorageSubject::host, "esx-1");
  ASSERT_NE(t, nullptr);
  EXPECT_DOUBLE_EQ(t->read_bytes, 2000 * 1024.0 * 20);
  EXPECT_DOUBLE_EQ(t->write_ios, 20 * 20);
  EXPECT_NEAR(*t->read_latency_s, 0.007, 1e-12);
  // The samples are ordered by kind, subject and time.
  for (std::size_t i = 1; i < r.samples.size(); ++i)
    EXPECT_LE(std::tie(r.samples[i - 1].kind, r.samples[i - 1].subject, r.samples[i - 1].from),
              std::tie(r.samples[i].kind, r.samples[i].subject, r.samples[i].from));
}

TEST(Vim25Telemetry, AWildcardDatastoreInstanceIsNotADatastore) {
  PerfEntityMetric m = host_metric();
  m.series = {{{178, "*"}, {1, 1}}, {{162, "*"}, {5, 5}}};
  const auto r = build_storage_report({m}, resolved(), subjects(), kFrom, kFrom + 40);
  EXPECT_NE(find(r, api::StorageSubject::host, "esx-1", kFrom + 20), nullptr);
  for (const auto& s : r.samples) EXPECT_NE(s.kind, api::StorageSubject::datastore);
  bool warned = false;
  for (const auto& w : r.warnings) warned |= w.find("wildcard instance") != std::string::npos;
  EXPECT_TRUE(warned);
}

// ---- the source through the provider, over a scripted /sdk ----

std::string envelope(const std::string& body) {
  return R"(<?xml version="1.0" encoding="UTF-8"?><soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" )"
         R"(xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><soapenv:Body>)" +
         body + "</soapenv:Body></soapenv:Envelope>";
}

std::string fault(const std::string& type, const std::string& fields) {
  return envelope("<soapenv:Fault><faultcode>ServerFaultCode</faultcode><faultstring>" + type +
                  "</faultstring><detail><" + type + "Fault xmlns=\"urn:vim25\" xsi:type=\"" + type + "\">" +
                  fields + "</" + type + "Fault></detail></soapenv:Fault>");
}

std::string objects(const std::string& content) {
  return envelope(R"(<RetrievePropertiesExResponse xmlns="urn:vim25"><returnval>)" + content +
                  "</returnval></RetrievePropertiesExResponse>");
}

std::string named(const std::string& type, const std::string& id, const std::string& name) {
  return "<objects><obj type=\"" + type + "\">" + id +
         "</obj><propSet><name>name</name><val xsi:type=\"xsd:string\">" + name +
         "</val></propSet></objects>";
}

std::string hba(const std::string& type, const std::string& device, const std::string& speed = "") {
  std::string out = "<HostHostBusAdapter xsi:type=\"" + type + "\"><key>key-" + device + "</key><device>" +
                    device + "</device><bus>0</bus><status>online</status><model>m</model>";
  if (!speed.empty())
    out +=
        "<portWorldWideName>1</portWorldWideName><nodeWorldWideName>2</nodeWorldWideName><portType>fabric"
        "</portType><speed>" +
        speed + "</speed>";
  return out + "</HostHostBusAdapter>";
}

struct Series {
  int counter;
  std::string instance;
  std::vector<long> values;
};

std::string entity_metric(const std::string& type, const std::string& id, const std::vector<double>& times,
                          const std::vector<Series>& series) {
  std::string out =
      "<returnval xsi:type=\"PerfEntityMetric\"><entity type=\"" + type + "\">" + id + "</entity>";
  for (double t : times)
    out += "<sampleInfo><timestamp>" + format_rfc3339(from_unix_seconds(t), Rfc3339Fraction::seconds) +
           "</timestamp><interval>20</interval></sampleInfo>";
  for (const auto& s : series) {
    out += "<value xsi:type=\"PerfMetricIntSeries\"><id><counterId>" + std::to_string(s.counter) +
           "</counterId><instance>" + s.instance + "</instance></id>";
    for (long v : s.values) out += "<value>" + std::to_string(v) + "</value>";
    out += "</value>";
  }
  return out + "</returnval>";
}

class FakeVcenter final : public vsphere::Transport {
 public:
  std::vector<std::string> query_perf_bodies;
  int perf_counter_reads = 0;
  std::set<std::string> leave_out_counters{"datastore.totalWriteLatency.average"};
  // The answer to the n-th QueryPerf (0-based): a fault body, or nullopt for the default answer.
  std::function<std::optional<std::string>(int)> query_perf_fault;
  bool query_perf_times_out = false;

  asio::awaitable<Expected<http::Response>> send(http::Request req) override {
    http::Response r;
    r.status = 200;
    const std::string& b = req.body;
    auto has = [&](const char* s) { return b.find(s) != std::string::npos; };
    if (has("<RetrieveServiceContent ")) {
      r.body = envelope(
          R"(<RetrieveServiceContentResponse xmlns="urn:vim25"><returnval><rootFolder type="Folder">group-d1</rootFolder>)"
          R"(<propertyCollector type="PropertyCollector">propertyCollector</propertyCollector>)"
          R"(<viewManager type="ViewManager">ViewManager</viewManager><about><fullName>VMware vCenter Server 8.0</fullName>)"
          R"(<apiType>VirtualCenter</apiType><apiVersion>8.0.2.0</apiVersion></about>)"
          R"(<sessionManager type="SessionManager">SessionManager</sessionManager>)"
          R"(<perfManager type="PerformanceManager">PerfMgr</perfManager></returnval></RetrieveServiceContentResponse>)");
    } else if (has("<Login ")) {
      r.headers.emplace_back("Set-Cookie", "vmware_soap_session=\"s1\"; Path=/; HttpOnly; Secure;");
      r.body =
          envelope(R"(<LoginResponse xmlns="urn:vim25"><returnval><key>k</key></returnval></LoginResponse>)");
    } else if (has("<CreateContainerView ")) {
      r.body = envelope(
          R"(<CreateContainerViewResponse xmlns="urn:vim25"><returnval type="ContainerView">session[1]view-1</returnval></CreateContainerViewResponse>)");
    } else if (has("<QueryPerf ")) {
      const int n = static_cast<int>(query_perf_bodies.size());
      query_perf_bodies.push_back(b);
      if (query_perf_times_out) co_return make_error(ErrorKind::timeout, "no answer within 60 s");
      if (auto f = query_perf_fault ? query_perf_fault(n) : std::nullopt) {
        r.status = 500;
        r.body = *f;
      } else {
        r.body =
            envelope(R"(<QueryPerfResponse xmlns="urn:vim25">)" + perf_answer() + "</QueryPerfResponse>");
      }
    } else if (has("<RetrievePropertiesEx ")) {
      r.body = properties(b);
    } else {
      r.body = envelope(R"(<DestroyViewResponse xmlns="urn:vim25"/>)");
    }
    co_return r;
  }
  asio::awaitable<Expected<void>> prewarm(std::size_t) override { co_return Expected<void>{}; }
  void close_idle() override {}

 private:
  std::string properties(const std::string& b) {
    auto has = [&](const char* s) { return b.find(s) != std::string::npos; };
    if (has("<type>PerformanceManager</type>")) {
      ++perf_counter_reads;
      std::string list;
      for (const auto& [name, c] : storage_counters(leave_out_counters)) {
        const auto dot = name.find('.'), last = name.rfind('.');
        auto description = [](const char* element, const std::string& key) {
          return "<" + std::string(element) + "><label>" + key + "</label><summary>" + key +
                 "</summary><key>" + key + "</key></" + element + ">";
        };
        list += "<PerfCounterInfo xsi:type=\"PerfCounterInfo\"><key>" + std::to_string(c.key) + "</key>" +
                description("nameInfo", name.substr(dot + 1, last - dot - 1)) +
                description("groupInfo", name.substr(0, dot)) + description("unitInfo", c.unit) +
                "<rollupType>average</rollupType><statsType>rate</statsType></PerfCounterInfo>";
      }
      return objects(
          R"(<objects><obj type="PerformanceManager">PerfMgr</obj><propSet><name>perfCounter</name>)"
          R"(<val xsi:type="ArrayOfPerfCounterInfo">)" +
          list + "</val></propSet></objects>");
    }
    if (has("<type>VirtualMachine</type>"))
      return objects(named("VirtualMachine", "vm-1", "bs-1-a") +
                     named("VirtualMachine", "vm-9", "bs-1-gone") +
                     named("VirtualMachine", "vm-100", "golden"));
    if (has("<type>HostSystem</type>") && has("hostBusAdapter")) {
      return objects(
          R"(<objects><obj type="HostSystem">host-1</obj><propSet><name>config.storageDevice.hostBusAdapter</name>)"
          R"(<val xsi:type="ArrayOfHostHostBusAdapter">)" +
          hba("HostParallelScsiHba", "vmhba0") + hba("HostFibreChannelHba", "vmhba2", "16") +
          hba("HostFibreChannelHba", "vmhba3", "8") + hba("HostFibreChannelHba", "vmhba4", "0") +
          R"(</val></propSet><propSet><name>datastore</name><val xsi:type="ArrayOfManagedObjectReference">)"
          R"(<ManagedObjectReference type="Datastore" xsi:type="ManagedObjectReference">datastore-11</ManagedObjectReference>)"
          R"(</val></propSet></objects>)");
    }
    if (has("<type>HostSystem</type>"))
      return objects(named("HostSystem", "host-1", "esx-1") + named("HostSystem", "host-2", "esx-2"));
    if (has("<type>Datastore</type>")) {
      return objects(R"(<objects><obj type="Datastore">datastore-11</obj><propSet><name>name</name>)"
                     R"(<val xsi:type="xsd:string">ds-a</val></propSet><propSet><name>summary.url</name>)"
                     R"(<val xsi:type="xsd:string">ds:///vmfs/volumes/uuid-a/</val></propSet></objects>)");
    }
    return objects("");
  }

  std::string perf_answer() const {
    return entity_metric("VirtualMachine", "vm-1", {kFrom + 20},
                         {{171, "scsi0:0", {10}}, {173, "scsi0:0", {100}}}) +
           entity_metric("HostSystem", "host-1", {kFrom + 20},
                         {{164, "vmhba2", {1000}}, {164, "vmhba3", {500}}, {180, "uuid-a", {1500}}});
  }
};

class Vim25TelemetrySource : public ::testing::Test {
 protected:
  void SetUp() override {
    api::ProviderConfig config;
    config.kind = "vsphere";
    config.endpoint = "https://vc.example.com";
    config.username = "administrator@vsphere.local";
    config.password = "secret";
    config.requests_per_second = 1000;
    config.request_timeout = std::chrono::seconds(5);
    auto transport = std::make_unique<FakeVcenter>();
    vc = transport.get();
    provider = std::make_unique<Vim25Provider>(io.get_executor(), config, std::move(transport));
    auto connected = run_task(io, provider->connect());
    ASSERT_TRUE(connected) << connected.error().what();
  }
  std::unique_ptr<api::TelemetrySource> source(const std::string& kind = "auto") {
    api::TelemetrySettings settings;
    settings.source = kind;
    auto made = provider->telemetry_source(settings);
    EXPECT_TRUE(made) << made.error().what();
    return made ? std::move(*made) : nullptr;
  }
  static api::TelemetryRequest request() {
    return {kFrom, kFrom + 40, {"bs-1-a", "bs-1-gone", "bs-1-deleted"}, {"esx-1"}};
  }

  asio::io_context io;
  FakeVcenter* vc = nullptr;
  std::unique_ptr<Vim25Provider> provider;
};

bool any_warning(const api::TelemetryReport& r, const std::string& text) {
  for (const auto& w : r.warnings)
    if (w.find(text) != std::string::npos) return true;
  return false;
}

TEST_F(Vim25TelemetrySource, ReadsTheWindowAndRequeriesWithoutAVanishedVm) {
  vc->query_perf_fault = [](int n) -> std::optional<std::string> {
    if (n == 0) return fault("ManagedObjectNotFound", R"(<obj type="VirtualMachine">vm-9</obj>)");
    return std::nullopt;
  };
  auto s = source();
  ASSERT_TRUE(s);
  EXPECT_EQ(s->name(), "vsphere-perf");
  auto report = run_task(io, s->collect(request()));
  ASSERT_TRUE(report) << report.error().what();
  EXPECT_EQ(report->source, "vsphere-perf");
  EXPECT_EQ(report->endpoint, "https://vc.example.com");
  EXPECT_EQ(report->resolution_s, 20);
  EXPECT_EQ(report->from, kFrom);
  EXPECT_EQ(report->to, kFrom + 40);

  // The first QueryPerf: every VM found and the host, from - 20 s (exclusive) to `to`, real-time, every
  // instance of each counter.
  ASSERT_EQ(vc->query_perf_bodies.size(), 2u);
  const std::string& first = vc->query_perf_bodies[0];
  EXPECT_NE(first.find("<entity type=\"VirtualMachine\">vm-1</entity>"), std::string::npos) << first;
  EXPECT_NE(first.find("<entity type=\"VirtualMachine\">vm-9</entity>"), std::string::npos) << first;
  EXPECT_NE(first.find("<entity type=\"HostSystem\">host-1</entity>"), std::string::npos) << first;
  EXPECT_EQ(first.find("vm-100"), std::string::npos) << "a VM outside the window was asked about";
  EXPECT_NE(first.find("<startTime>2023-11-14T22:13:00.000Z</startTime><endTime>2023-11-14T22:14:00.000Z"
                       "</endTime>"),
            std::string::npos)
      << first;
  EXPECT_NE(first.find("<intervalId>20</intervalId><format>normal</format>"), std::string::npos);
  EXPECT_NE(first.find("<metricId><counterId>173</counterId><instance>*</instance></metricId>"),
            std::string::npos);
  EXPECT_NE(first.find("<counterId>164</counterId><instance>*</instance>"), std::string::npos);
  EXPECT_EQ(first.find("<counterId>183</counterId>"), std::string::npos) << "a counter vCenter lacks";
  // The second without the vanished VM.
  EXPECT_EQ(vc->query_perf_bodies[1].find("vm-9"), std::string::npos);
  EXPECT_NE(vc->query_perf_bodies[1].find("vm-1<"), std::string::npos);

  const auto* vm = find(*report, api::StorageSubject::vm, "bs-1-a", kFrom + 20);
  ASSERT_NE(vm, nullptr);
  EXPECT_DOUBLE_EQ(vm->rates.read_iops, 10);
  EXPECT_DOUBLE_EQ(vm->rates.read_bytes_per_s, 100 * 1024.0);
  const auto* host = find(*report, api::StorageSubject::host, "esx-1", kFrom + 20);
  ASSERT_NE(host, nullptr);
  EXPECT_DOUBLE_EQ(host->rates.read_bytes_per_s, 1500 * 1024.0);
  EXPECT_NE(find(*report, api::StorageSubject::datastore, "esx-1/ds-a", kFrom + 20), nullptr);
  EXPECT_EQ(report->link_capacity_bytes_per_s.at("esx-1"), (16 + 8) * 1e8);
  const auto* t = totals(*report, api::StorageSubject::vm, "bs-1-a");
  ASSERT_NE(t, nullptr);
  EXPECT_DOUBLE_EQ(t->read_bytes, 100 * 1024.0 * 20);

  EXPECT_TRUE(any_warning(*report, "VM bs-1-gone vanished")) << report->warnings.size();
  EXPECT_TRUE(any_warning(*report, "bs-1-deleted"));
  EXPECT_TRUE(any_warning(*report, "datastore.totalWriteLatency.average"));

  // The counters are read once per source.
  vc->query_perf_fault = nullptr;
  auto again = run_task(io, s->collect(request()));
  ASSERT_TRUE(again) << again.error().what();
  EXPECT_EQ(vc->perf_counter_reads, 1);
}

TEST_F(Vim25TelemetrySource, NoPermissionNamesThePrivilege) {
  vc->query_perf_fault = [](int) -> std::optional<std::string> {
    return fault("NoPermission",
                 R"(<object type="VirtualMachine">vm-1</object><privilegeId>System.Read</privilegeId>)");
  };
  auto s = source("vsphere-perf");
  ASSERT_TRUE(s);
  auto report = run_task(io, s->collect(request()));
  ASSERT_FALSE(report);
  EXPECT_EQ(report.error().kind, ErrorKind::auth);
  EXPECT_NE(report.error().message.find("System.Read on VirtualMachine:vm-1"), std::string::npos)
      << report.error().what();
  EXPECT_NE(report.error().message.find("https://vc.example.com"), std::string::npos);
  EXPECT_NE(report.error().hint.find("System.View"), std::string::npos) << report.error().what();
}

TEST_F(Vim25TelemetrySource, ATimeoutSaysWhatToDo) {
  vc->query_perf_times_out = true;
  auto s = source();
  ASSERT_TRUE(s);
  auto report = run_task(io, s->collect(request()));
  ASSERT_FALSE(report);
  EXPECT_EQ(report.error().kind, ErrorKind::timeout);
  EXPECT_NE(report.error().message.find("reading storage telemetry from vCenter"), std::string::npos)
      << report.error().what();
  EXPECT_NE(report.error().hint.find("telemetry.source: none"), std::string::npos) << report.error().what();
}

TEST_F(Vim25TelemetrySource, TheProviderOffersVspherePerfOnly) {
  api::TelemetrySettings settings;
  settings.source = "prometheus";
  auto prometheus = provider->telemetry_source(settings);
  ASSERT_FALSE(prometheus);
  EXPECT_NE(prometheus.error().hint.find("vsphere-perf"), std::string::npos) << prometheus.error().what();
  settings.source = "none";
  auto none = provider->telemetry_source(settings);
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message.find("telemetry off"), std::string::npos);
  settings.source = "graphite";
  auto other = provider->telemetry_source(settings);
  ASSERT_FALSE(other);
  EXPECT_EQ(other.error().kind, ErrorKind::invalid_input);
}

TEST_F(Vim25TelemetrySource, ASourceThatOutlivesItsProviderFails) {
  auto s = source();
  ASSERT_TRUE(s);
  provider.reset();
  auto report = run_task(io, s->collect(request()));
  ASSERT_FALSE(report);
  EXPECT_EQ(report.error().kind, ErrorKind::internal);
  EXPECT_NE(report.error().message.find("after its vSphere provider was destroyed"), std::string::npos);
}

}  // namespace

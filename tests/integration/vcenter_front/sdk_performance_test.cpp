// The lab's PerformanceManager (simulator/vcenter/sdk_performance.cpp) driven by bootstorm's vim25 client:
// a virtual-time lab whose vCenter front answers in-process (the client's transport calls the front's
// handler, no sockets), so that the storm is deterministic and QueryPerf's answers can be checked against
// the model's storage telemetry (Lab::storage_telemetry()) computed here: IOPS, KBps and latency within
// rounding, 20 s sample times, the VM, host and datastore instances, maxSample, startTime exclusive and
// endTime inclusive, csv, and the faults for a destroyed VM and an unknown counter; and the identities a
// client maps instances with (datastore urls and VMFS uuids, the host's HBA and its speed).
#include <gtest/gtest.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/rfc3339.hpp"
#include "protocol/vim25/decode.hpp"
#include "providers/vsphere/transport.hpp"
#include "providers/vsphere/vim25/session.hpp"
#include "simulator/model/lab.hpp"
#include "simulator/vcenter/vcenter_front.hpp"
#include "tests/support/run_task.hpp"
#include "tests/support/vim25_driver.hpp"

namespace bootstorm::sim {
namespace {

namespace asio = boost::asio;
namespace vim25 = vsphere::vim25;
using bootstorm::testing::run_task;

constexpr double kT0 = 1'800'000'000.0;  // virtual start, unix seconds (a multiple of 20)
const vim25::MoRef kPerfMgr{"PerformanceManager", "PerfMgr"};

// The vim25 client's transport onto the front's handler, on the test's io_context.
class HandlerTransport final : public vsphere::Transport {
 public:
  explicit HandlerTransport(http::Handler handler) : handler_(std::move(handler)) {}
  asio::awaitable<Expected<http::Response>> send(http::Request request) override {
    http::ServerRequest req;
    req.method = request.method;
    req.target = request.target;
    req.path = request.target.substr(0, request.target.find('?'));
    req.headers = request.headers;
    req.body = request.body;
    req.remote_address = "127.0.0.1:40000";
    http::ServerResponse answer = co_await handler_(req);
    http::Response out;
    out.status = answer.status;
    out.headers = std::move(answer.headers);
    out.body = std::move(answer.body);
    co_return out;
  }
  asio::awaitable<Expected<void>> prewarm(std::size_t) override { co_return Expected<void>{}; }
  void close_idle() override {}

 private:
  http::Handler handler_;
};

// The small lab with vCenter's 20 s real-time interval, storage slow enough that boots span several samples
// and have latencies of milliseconds, and two HBA speeds (16 and 64 Gbit/s FC).
model::LabSpec storage_bound_spec() {
  auto spec = model::load_lab_spec("small");
  if (!spec) throw std::runtime_error(spec.error().what());
  spec->telemetry.vcenter_interval_s = 20;
  spec->hosts[0].link_mbps = 1600;
  spec->hosts[1].link_mbps = 6400;
  spec->datastores[0].mbps = 600;
  spec->datastores[0].latency_ms = 2;
  auto& profile = spec->profiles.front();
  profile.io_size_kb = 256;
  profile.phases[1].mb_read = 6000;  // os_load
  return *spec;
}

std::string timestamp(double t) {
  return format_rfc3339(from_unix_seconds(t), Rfc3339Fraction::seconds);
}

double unix_of(const std::string& text) {
  auto t = parse_rfc3339(text);
  EXPECT_TRUE(t) << text;
  return t ? std::chrono::duration<double>(t->time_since_epoch()).count() : 0;
}

// A PerfQuerySpec (elements in the schema's order).
struct Spec {
  vim25::MoRef entity;
  std::vector<std::pair<int, std::string>> metrics;
  std::optional<double> start, end;
  std::optional<int> max_sample;
  std::optional<int> interval = 20;
  std::string format = "normal";

  std::string xml() const {
    std::string s = "<querySpec><entity type=\"" + entity.type + "\">" + entity.value + "</entity>";
    if (start) s += "<startTime>" + timestamp(*start) + "</startTime>";
    if (end) s += "<endTime>" + timestamp(*end) + "</endTime>";
    if (max_sample) s += "<maxSample>" + std::to_string(*max_sample) + "</maxSample>";
    for (const auto& [counter, instance] : metrics)
      s += "<metricId><counterId>" + std::to_string(counter) + "</counterId><instance>" + instance +
           "</instance></metricId>";
    if (interval) s += "<intervalId>" + std::to_string(*interval) + "</intervalId>";
    return s + "<format>" + format + "</format></querySpec>";
  }
};

std::string perf_call(const std::string& method, const std::string& arguments) {
  return "<" + method + " xmlns=\"urn:vim25\"><_this type=\"PerformanceManager\">PerfMgr</_this>" +
         arguments + "</" + method + ">";
}

// One PerfEntityMetric of an answer: its samples and its series by (counter, instance).
struct EntityMetric {
  std::string entity;
  std::vector<double> times;
  std::vector<int> intervals;
  std::map<std::pair<int, std::string>, std::vector<long long>> series;
};

std::vector<EntityMetric> read_entity_metrics(const vim25::XmlNode& response) {
  std::vector<EntityMetric> out;
  for (const auto& r : response.children("returnval")) {
    EntityMetric m;
    EXPECT_EQ(r.type_name(), "PerfEntityMetric");
    m.entity = r.child_text("entity").value_or("");
    for (const auto& info : r.children("sampleInfo")) {
      m.times.push_back(unix_of(info.child_text("timestamp").value_or("")));
      m.intervals.push_back(std::stoi(info.child_text("interval").value_or("0")));
    }
    for (const auto& v : r.children("value")) {
      EXPECT_EQ(v.type_name(), "PerfMetricIntSeries");
      const vim25::XmlNode id = v.child("id");
      auto& values = m.series[{std::stoi(id.child_text("counterId").value_or("0")),
                               id.child_text("instance").value_or("?")}];
      for (const auto& x : v.children("value")) values.push_back(std::stoll(x.text()));
      EXPECT_EQ(values.size(), m.times.size());
    }
    out.push_back(std::move(m));
  }
  return out;
}

// What a counter measures, recomputed from the telemetry: the unrounded value of the sample at t.
double expected_value(int counter, const std::vector<const model::IoHistory*>& sources, double t,
                      double interval = 20) {
  model::IoCounters end, start;
  for (const auto* h : sources) {
    end += h->at(t + 1e-6);
    start += h->at(t - interval + 1e-6);
  }
  const double read_ios = end.read_ios - start.read_ios, write_ios = end.write_ios - start.write_ios;
  switch (counter) {
    case 162:
    case 171:
    case 178:
      return read_ios / interval;
    case 163:
    case 172:
    case 179:
      return write_ios / interval;
    case 164:
    case 173:
    case 180:
      return (end.read_bytes - start.read_bytes) / 1024 / interval;
    case 165:
    case 174:
    case 181:
      return (end.write_bytes - start.write_bytes) / 1024 / interval;
    case 166:
    case 175:
    case 182:
      return read_ios > 0 ? (end.read_seconds - start.read_seconds) / read_ios * 1000 : 0;
    case 167:
    case 176:
    case 183:
      return write_ios > 0 ? (end.write_seconds - start.write_seconds) / write_ios * 1000 : 0;
    default:
      ADD_FAILURE() << "counter " << counter;
      return -1;
  }
}

class SdkPerformance : public ::testing::Test {
 protected:
  void SetUp() override { start(storage_bound_spec()); }

  void start(model::LabSpec spec) {
    TearDown();
    model::LabOptions options;
    options.mode = model::LabOptions::TimeMode::virtual_time;
    options.virtual_start = kT0;
    lab_ = std::make_unique<model::Lab>(std::move(spec), options);
    front_ = std::make_unique<vcenter::VcenterFront>(*lab_, io_.get_executor());
    transport_ = std::make_unique<HandlerTransport>(front_->handler());
    session_ = std::make_unique<vim25::Session>(
        io_.get_executor(), *transport_,
        vsphere::SessionSettings{"https://lab.invalid", lab_->spec().vcenter.username,
                                 lab_->spec().vcenter.password, std::chrono::seconds(10)});
    auto login = run_task(io_, session_->login());
    ASSERT_TRUE(login) << login.error().what();
    driver_ = std::make_unique<test_support::Vim25Driver>(io_, *session_);
  }

  void TearDown() override {
    driver_.reset();
    session_.reset();
    transport_.reset();
    front_.reset();
    lab_.reset();
  }

  std::string clone(const std::string& name, const std::string& host) {
    model::CloneRequest request;
    request.source_vm_id = lab_->find_vm_by_name("tiny-golden")->id;
    request.name = name;
    request.host_id = lab_->find_host(host)->id;
    std::string id;
    auto op = lab_->clone_vm(request, [&](Expected<std::string> r) { id = r ? *r : ""; });
    EXPECT_TRUE(op) << (op ? "" : op.error().what());
    EXPECT_TRUE(lab_->run_until_idle(lab_->now() + 60));
    EXPECT_FALSE(id.empty());
    return id;
  }
  void power_on(const std::string& id) { ASSERT_TRUE(lab_->power_on(id, nullptr)); }
  void power_off(const std::string& id) { ASSERT_TRUE(lab_->power_off(id, nullptr)); }

  vim25::SoapReply call(const std::string& method, const std::string& arguments) {
    vim25::CallOptions options;
    options.keep_fault = true;
    auto reply = run_task(io_, session_->call(method, perf_call(method, arguments), options));
    if (!reply) throw std::runtime_error(reply.error().what());
    return std::move(*reply);
  }
  std::vector<EntityMetric> query(const std::vector<Spec>& specs) {
    std::string arguments;
    for (const auto& s : specs) arguments += s.xml();
    auto reply = call("QueryPerf", arguments);
    EXPECT_FALSE(reply.is_fault()) << reply.fault().type << ": " << reply.fault().message;
    return reply.is_fault() ? std::vector<EntityMetric>{} : read_entity_metrics(reply.response());
  }

  // The histories a (counter, instance) of an answer adds up.
  using SourcesOf =
      std::function<std::vector<const model::IoHistory*>(int counter, const std::string& instance)>;

  // Every value of `m` against the telemetry.
  void expect_values(const EntityMetric& m, const SourcesOf& sources_of, double interval = 20) {
    for (const auto& [id, values] : m.series) {
      const auto sources = sources_of(id.first, id.second);
      EXPECT_FALSE(sources.empty()) << "counter " << id.first << " instance '" << id.second << "'";
      for (std::size_t i = 0; i < values.size(); ++i) {
        const double expected = expected_value(id.first, sources, m.times[i], interval);
        EXPECT_NEAR(static_cast<double>(values[i]), expected, 0.5 + 1e-6)
            << "counter " << id.first << " '" << id.second << "' at " << timestamp(m.times[i]);
        EXPECT_GE(values[i], 0);
      }
    }
  }

  asio::io_context io_;
  std::unique_ptr<model::Lab> lab_;
  std::unique_ptr<vcenter::VcenterFront> front_;
  std::unique_ptr<HandlerTransport> transport_;
  std::unique_ptr<vim25::Session> session_;
  std::unique_ptr<test_support::Vim25Driver> driver_;
};

TEST_F(SdkPerformance, CountersIntervalsAndTheStorageIdentitiesClientsMapInstancesWith) {
  auto manager = driver_->properties({kPerfMgr}, "PerformanceManager", {"perfCounter", "historicalInterval"});
  ASSERT_EQ(manager.size(), 1u);
  std::map<int, std::string> names;  // key -> group.name.rollup
  for (const auto* c : manager[0].prop("perfCounter")->all("PerfCounterInfo")) {
    names[std::stoi(c->field_text("key"))] = c->field("groupInfo")->field_text("key") + "." +
                                             c->field("nameInfo")->field_text("key") + "." +
                                             c->field_text("rollupType");
    EXPECT_EQ(c->field_text("statsType"),
              c->field("unitInfo")->field_text("key") == "millisecond" ? "absolute" : "rate");
  }
  EXPECT_EQ(names.size(), 18u);
  EXPECT_EQ(names[171], "virtualDisk.numberReadAveraged.average");
  EXPECT_EQ(names[173], "virtualDisk.read.average");
  EXPECT_EQ(names[176], "virtualDisk.totalWriteLatency.average");
  EXPECT_EQ(names[180], "datastore.read.average");
  EXPECT_EQ(names[182], "datastore.totalReadLatency.average");
  EXPECT_EQ(names[162], "storageAdapter.numberReadAveraged.average");
  EXPECT_EQ(names[167], "storageAdapter.totalWriteLatency.average");
  std::vector<std::string> periods;
  for (const auto* i : manager[0].prop("historicalInterval")->all("PerfInterval"))
    periods.push_back(i->field_text("samplingPeriod") + "/" + i->field_text("length"));
  EXPECT_EQ(periods,
            (std::vector<std::string>{"300/86400", "1800/604800", "7200/2592000", "86400/31536000"}));

  // Datastores: the url names the VMFS uuid that datastore.* instances carry.
  const std::regex uuid("[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{12}");
  for (const auto& ds :
       driver_->objects("Datastore", {"name", "summary.url", "info.url", "info.vmfs.uuid"})) {
    const std::string id = ds.prop("info.vmfs.uuid")->text;
    EXPECT_TRUE(std::regex_match(id, uuid)) << id;
    EXPECT_EQ(ds.prop("summary.url")->text, "ds:///vmfs/volumes/" + id + "/");
    EXPECT_EQ(ds.prop("info.url")->text, ds.prop("summary.url")->text);
  }
  // Hosts: one Fibre Channel HBA whose speed (Gbit/s) is the model's link.
  std::map<std::string, std::string> speeds;
  for (const auto& h : driver_->objects("HostSystem", {"name", "config.storageDevice.hostBusAdapter"})) {
    const auto adapters = h.prop("config.storageDevice.hostBusAdapter")->all("HostHostBusAdapter");
    ASSERT_EQ(adapters.size(), 1u);
    EXPECT_EQ(adapters[0]->xsi_type, "HostFibreChannelHba");
    EXPECT_EQ(adapters[0]->field_text("device"), "vmhba1");
    EXPECT_EQ(adapters[0]->field_text("status"), "online");
    speeds[h.prop("name")->text] = adapters[0]->field_text("speed");
  }
  EXPECT_EQ(speeds["host-01"], "16");
  EXPECT_EQ(speeds["host-02"], "64");
  EXPECT_EQ(speeds["host-03"], "1000");  // the small lab's 100,000 MB/s links

  // QueryPerfCounter leaves unknown ids out; QueryPerfCounterByLevel(1) has the level-1 counters only.
  auto some = call("QueryPerfCounter", "<counterId>173</counterId><counterId>9999</counterId>");
  ASSERT_FALSE(some.is_fault());
  ASSERT_EQ(some.response().children("returnval").size(), 1u);
  EXPECT_EQ(some.returnval().child_text("key"), "173");
  auto level1 = call("QueryPerfCounterByLevel", "<level>1</level>");
  for (const auto& c : level1.response().children("returnval")) EXPECT_EQ(c.child_text("level"), "1");
  EXPECT_EQ(level1.response().children("returnval").size(), 8u);
  EXPECT_EQ(call("QueryPerfCounterByLevel", "<level>5</level>").fault().type, "InvalidArgument");
}

TEST_F(SdkPerformance, QueryPerfMatchesTheStorageTelemetry) {
  const std::string a = clone("perf-a", "host-01"), b = clone("perf-b", "host-01"),
                    c = clone("perf-c", "host-02"), idle = clone("perf-idle", "host-02");
  lab_->run_until(kT0 + 5);
  for (const auto& id : {a, b, c}) power_on(id);
  lab_->run_until(kT0 + 45);
  power_off(b);  // b boots twice: (5, 45] and from 85
  lab_->run_until(kT0 + 85);
  power_on(b);
  lab_->run_until(kT0 + 200);
  const model::StorageTelemetry& t = lab_->storage_telemetry();
  ASSERT_GE(t.sampled_until, kT0 + 200 - 1e-6);

  const vim25::MoRef vm_a{"VirtualMachine", a}, vm_b{"VirtualMachine", b};
  auto vm_sources = [&](const std::string& id) {
    std::vector<const model::IoHistory*> s;
    for (const auto& series : t.vms)
      if (series.vm_id == id) s.push_back(&series.history);
    return s;
  };
  // Every virtualDisk counter, every instance: "scsi0:0" and the aggregate "".
  std::vector<std::pair<int, std::string>> disk;
  for (int counter = 171; counter <= 176; ++counter) disk.emplace_back(counter, "*");
  auto metrics = query({Spec{vm_a, disk}, Spec{vm_b, disk}});
  ASSERT_EQ(metrics.size(), 2u);
  for (const auto& m : metrics) {
    EXPECT_EQ(m.series.size(), 12u);
    for (std::size_t i = 0; i < m.times.size(); ++i) {
      EXPECT_EQ(std::fmod(m.times[i], 20.0), 0.0);
      EXPECT_EQ(m.intervals[i], 20);
      EXPECT_LE(m.times[i], t.sampled_until);
      if (i > 0) {
        EXPECT_GT(m.times[i], m.times[i - 1]);
      }
    }
    expect_values(m, [&](int, const std::string& instance) {
      EXPECT_TRUE(instance == "scsi0:0" || instance.empty()) << instance;
      return vm_sources(m.entity);
    });
    EXPECT_EQ(m.series.at({173, "scsi0:0"}), m.series.at({173, ""}));
  }
  // a ran from 5 s on: samples 20 .. 200; it read at hundreds of MB/s, at milliseconds per read.
  EXPECT_EQ(metrics[0].times.front(), kT0 + 20);
  EXPECT_EQ(metrics[0].times.back(), kT0 + 200);
  const auto& kbps = metrics[0].series.at({173, "scsi0:0"});
  EXPECT_GT(*std::max_element(kbps.begin(), kbps.end()), 100'000);
  const auto& latency = metrics[0].series.at({175, "scsi0:0"});
  EXPECT_GE(*std::max_element(latency.begin(), latency.end()), 2);
  // b's two boots: samples of (5, 45] and of 85 on, none for 80 (it was off all through (60, 80]).
  std::vector<double> b_times = metrics[1].times;
  EXPECT_EQ(std::count(b_times.begin(), b_times.end(), kT0 + 80), 0);
  EXPECT_EQ(std::count(b_times.begin(), b_times.end(), kT0 + 60), 1);
  EXPECT_EQ(b_times[b_times.size() - 6], kT0 + 100);

  // A host: datastore.* per mounted datastore (its VMFS uuid) and the aggregate, storageAdapter.* on vmhba1.
  const model::Host* host01 = lab_->find_host("host-01");
  const auto h = static_cast<std::size_t>(host01 - lab_->hosts().data());
  std::map<std::string, const model::IoHistory*> by_uuid;  // as a client maps them: info.vmfs.uuid
  for (const auto& ds : driver_->objects("Datastore", {"name", "info.vmfs.uuid"})) {
    const model::Datastore* d = lab_->find_datastore(ds.prop("name")->text);
    const auto index = static_cast<std::size_t>(d - lab_->datastores().data());
    by_uuid[ds.prop("info.vmfs.uuid")->text] = &t.host_datastores[h * lab_->datastores().size() + index];
  }
  ASSERT_EQ(by_uuid.size(), 2u);  // the host mounts every datastore of the lab
  const vim25::MoRef host{"HostSystem", host01->id};
  auto host_metrics =
      query({Spec{host, {{180, "*"}, {182, "*"}, {178, ""}, {164, ""}, {162, "vmhba1"}, {166, "*"}}}});
  ASSERT_EQ(host_metrics.size(), 1u);
  const EntityMetric& hm = host_metrics[0];
  EXPECT_EQ(hm.times.front(), kT0 + 20);  // the front's statistics begin with it
  EXPECT_EQ(hm.times.back(), kT0 + 200);
  EXPECT_EQ(hm.series.size(), 3u + 3u + 1u + 1u + 1u + 2u);  // 2 datastores and "", twice; the adapter
  expect_values(hm, [&](int counter, const std::string& instance) -> std::vector<const model::IoHistory*> {
    if (counter < 171) {  // storageAdapter: the link, alone or as the aggregate
      EXPECT_TRUE(instance == "vmhba1" || instance.empty()) << instance;
      return {&t.host_links[h]};
    }
    if (!instance.empty()) {
      if (!by_uuid.count(instance)) return {};
      return {by_uuid.at(instance)};
    }
    std::vector<const model::IoHistory*> all;
    for (const auto& [uuid, io] : by_uuid) all.push_back(io);
    return all;
  });
  const auto& host_kbps = hm.series.at({180, ""});
  EXPECT_GT(*std::max_element(host_kbps.begin(), host_kbps.end()), 100'000);

  // QueryAvailablePerfMetric: what the host and the VM have.
  auto available = call("QueryAvailablePerfMetric",
                        "<entity type=\"HostSystem\">" + host.value + "</entity><intervalId>20</intervalId>");
  std::set<std::pair<std::string, std::string>> ids;
  for (const auto& r : available.response().children("returnval"))
    ids.insert({r.child_text("counterId").value_or(""), r.child_text("instance").value_or("?")});
  EXPECT_TRUE(ids.count({"164", "vmhba1"}));
  EXPECT_TRUE(ids.count({"180", ""}));
  EXPECT_EQ(ids.size(), 6u * 2 + 6u * 3);
  auto summary = call("QueryPerfProviderSummary", "<entity type=\"VirtualMachine\">" + a + "</entity>");
  EXPECT_EQ(summary.returnval().child_text("currentSupported"), "true");
  EXPECT_EQ(summary.returnval().child_text("refreshRate"), "20");

  // maxSample: the most recent samples; startTime exclusive, endTime inclusive.
  auto last_two = query({Spec{vm_a, {{173, ""}}, std::nullopt, std::nullopt, 2}});
  ASSERT_EQ(last_two.size(), 1u);
  EXPECT_EQ(last_two[0].times, (std::vector<double>{kT0 + 180, kT0 + 200}));
  auto window = query({Spec{vm_a, {{173, ""}}, kT0 + 40, kT0 + 100}});
  ASSERT_EQ(window.size(), 1u);
  EXPECT_EQ(window[0].times, (std::vector<double>{kT0 + 60, kT0 + 80, kT0 + 100}));
  EXPECT_EQ(window[0].series.at({173, ""}), std::vector<long long>(kbps.begin() + 2, kbps.begin() + 5));

  // csv: the same samples and values, as text.
  Spec csv{vm_a, {{173, "scsi0:0"}}, kT0 + 40, kT0 + 100};
  csv.format = "csv";
  auto reply = call("QueryPerf", csv.xml());
  ASSERT_FALSE(reply.is_fault());
  EXPECT_EQ(reply.returnval().type_name(), "PerfEntityMetricCSV");
  EXPECT_EQ(reply.returnval().child_text("sampleInfoCSV"),
            "20," + timestamp(kT0 + 60) + ",20," + timestamp(kT0 + 80) + ",20," + timestamp(kT0 + 100));
  EXPECT_EQ(reply.returnval().child("value").child_text("value"),
            std::to_string(kbps[2]) + "," + std::to_string(kbps[3]) + "," + std::to_string(kbps[4]));

  // A VM never powered on has no statistics yet; a historical interval holds nothing in the lab.
  EXPECT_TRUE(query({Spec{{"VirtualMachine", idle}, disk}}).empty());
  Spec historical{vm_a, disk};
  historical.interval = 300;
  EXPECT_TRUE(query({historical}).empty());

  // A destroyed VM: vCenter drops its statistics with it.
  power_off(c);
  lab_->run_until(kT0 + 210);
  ASSERT_TRUE(lab_->delete_vm(c));
  auto gone = call("QueryPerf", Spec{{"VirtualMachine", c}, disk}.xml());
  ASSERT_TRUE(gone.is_fault());
  EXPECT_EQ(gone.fault().type, "ManagedObjectNotFound");
  // An unknown counter, and a format vCenter does not know: InvalidArgument.
  auto unknown = call("QueryPerf", Spec{vm_a, {{9999, ""}}}.xml());
  ASSERT_TRUE(unknown.is_fault());
  EXPECT_EQ(unknown.fault().type, "InvalidArgument");
  EXPECT_NE(unknown.fault().message.find("9999"), std::string::npos) << unknown.fault().message;
  Spec xml{vm_a, disk};
  xml.format = "xml";
  EXPECT_EQ(call("QueryPerf", xml.xml()).fault().type, "InvalidArgument");
}

// A lab that shortens vCenter's real-time interval (telemetry.vcenterIntervalS, for quick tests): the
// provider's refreshRate, the samples and the rates follow it.
TEST_F(SdkPerformance, TheRealTimeIntervalIsTheLabs) {
  model::LabSpec spec = storage_bound_spec();
  spec.telemetry.vcenter_interval_s = 5;
  start(std::move(spec));
  const std::string id = clone("perf-quick", "host-02");
  lab_->run_until(kT0 + 3);
  power_on(id);
  lab_->run_until(kT0 + 60);
  const vim25::MoRef vm{"VirtualMachine", id};
  auto summary = call("QueryPerfProviderSummary", "<entity type=\"VirtualMachine\">" + id + "</entity>");
  EXPECT_EQ(summary.returnval().child_text("refreshRate"), "5");

  Spec as_sampled{vm, {{171, ""}, {173, "scsi0:0"}, {175, "scsi0:0"}}};
  as_sampled.interval.reset();  // no intervalId: the statistics as sampled
  auto metrics = query({as_sampled});
  ASSERT_EQ(metrics.size(), 1u);
  ASSERT_EQ(metrics[0].times.size(), 12u);  // 5 .. 60
  for (std::size_t i = 0; i < metrics[0].times.size(); ++i) {
    EXPECT_EQ(metrics[0].times[i], kT0 + 5 * static_cast<double>(i + 1));
    EXPECT_EQ(metrics[0].intervals[i], 5);
  }
  const model::StorageTelemetry& t = lab_->storage_telemetry();
  expect_values(
      metrics[0],
      [&](int, const std::string&) {
        std::vector<const model::IoHistory*> s;
        for (const auto& series : t.vms)
          if (series.vm_id == id) s.push_back(&series.history);
        return s;
      },
      5);
  const auto& kbps = metrics[0].series.at({173, "scsi0:0"});
  EXPECT_GT(*std::max_element(kbps.begin(), kbps.end()), 100'000);
  // 20 s is neither this lab's real-time interval nor a historical one.
  EXPECT_EQ(call("QueryPerf", Spec{vm, {{173, ""}}}.xml()).fault().type, "InvalidArgument");
}

}  // namespace
}  // namespace bootstorm::sim

// PerformanceManager's pure half: QueryPerf / QueryPerfCounter bodies and the perfCounter spec, and the
// decoders of perfCounter, QueryPerfCounter and QueryPerf answers shaped as vim.wsdl declares them (and as
// govmomi's simulator writes them), CSV answers refused, malformed ones named.
#include "protocol/vim25/performance.hpp"

#include <gtest/gtest.h>

#include <string>

#include "common/rfc3339.hpp"
#include "protocol/vim25/decode.hpp"
#include "protocol/vim25/soap.hpp"

namespace {

using namespace bootstorm;
using namespace bootstorm::vsphere::vim25;

std::string vcenter(const std::string& body) {
  return R"(<?xml version="1.0" encoding="UTF-8"?>)"
         R"(<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" )"
         R"(xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">)"
         R"(<soapenv:Body>)" +
         body + "</soapenv:Body></soapenv:Envelope>";
}

std::string vcsim(const std::string& body) {
  return R"(<?xml version="1.0" encoding="UTF-8"?><soapenv:Envelope )"
         R"(xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" xmlns:xsd="http://www.w3.org/2001/XMLSchema" )"
         R"(xmlns:XMLSchema-instance="http://www.w3.org/2001/XMLSchema-instance"><soapenv:Body>)" +
         body + "</soapenv:Body></soapenv:Envelope>";
}

std::string counter_info(int key, const std::string& group, const std::string& name, const std::string& unit,
                         const std::string& rollup = "average") {
  auto description = [&](const std::string& element, const std::string& k) {
    return "<" + element + "><label>" + k + "</label><summary>" + k + "</summary><key>" + k + "</key></" +
           element + ">";
  };
  return "<key>" + std::to_string(key) + "</key>" + description("nameInfo", name) +
         description("groupInfo", group) + description("unitInfo", unit) + "<rollupType>" + rollup +
         "</rollupType><statsType>rate</statsType><level>2</level><perDeviceLevel>3</perDeviceLevel>";
}

Expected<SoapReply> reply(const std::string& body) {
  return SoapReply::parse(200, body, "vim25 QueryPerf at https://vc/sdk");
}

const MoRef kPerfManager{"PerformanceManager", "PerfMgr"};

TEST(Vim25Performance, QueryPerfCarriesEachSpecInSchemaOrder) {
  PerfQuerySpec vm;
  vm.entity = {"VirtualMachine", "vm-42"};
  vm.start_time = *parse_rfc3339("2024-05-01T10:19:40Z");
  vm.end_time = *parse_rfc3339("2024-05-01T10:25:00.250Z");
  vm.max_sample = 18;
  vm.metric_ids = {{173, "*"}, {174, ""}};
  PerfQuerySpec host;
  host.entity = {"HostSystem", "host-12"};
  host.metric_ids = {{164, "vmhba<1>"}};
  host.interval_id.reset();
  host.format.clear();
  const std::string body = query_perf(kPerfManager, {vm, host});
  EXPECT_NE(body.find("<_this type=\"PerformanceManager\">PerfMgr</_this>"), std::string::npos) << body;
  EXPECT_NE(body.find("<querySpec><entity type=\"VirtualMachine\">vm-42</entity>"
                      "<startTime>2024-05-01T10:19:40.000Z</startTime>"
                      "<endTime>2024-05-01T10:25:00.250Z</endTime><maxSample>18</maxSample>"
                      "<metricId><counterId>173</counterId><instance>*</instance></metricId>"
                      "<metricId><counterId>174</counterId><instance></instance></metricId>"
                      "<intervalId>20</intervalId><format>normal</format></querySpec>"),
            std::string::npos)
      << body;
  EXPECT_NE(body.find("<querySpec><entity type=\"HostSystem\">host-12</entity><metricId><counterId>164</"
                      "counterId><instance>vmhba&lt;1&gt;</instance></metricId></querySpec>"),
            std::string::npos)
      << body;
  const std::string counters = query_perf_counter(kPerfManager, {6, 173});
  EXPECT_NE(counters.find("<counterId>6</counterId><counterId>173</counterId>"), std::string::npos)
      << counters;
  const PropertyFilterSpec spec = perf_counter_spec(kPerfManager);
  ASSERT_EQ(spec.prop_set.size(), 1u);
  EXPECT_EQ(spec.prop_set[0].type, "PerformanceManager");
  EXPECT_EQ(spec.prop_set[0].paths, std::vector<std::string>{"perfCounter"});
  ASSERT_EQ(spec.object_set.size(), 1u);
  EXPECT_EQ(spec.object_set[0].obj, kPerfManager);
}

TEST(Vim25Performance, PerfCounterPropertyByGroupNameRollup) {
  const std::string body = vcenter(
      R"(<RetrievePropertiesExResponse xmlns="urn:vim25"><returnval><objects><obj type="PerformanceManager">PerfMgr</obj>)"
      R"(<propSet><name>perfCounter</name><val xsi:type="ArrayOfPerfCounterInfo">)"
      R"(<PerfCounterInfo xsi:type="PerfCounterInfo">)" +
      counter_info(173, "virtualDisk", "read", "kiloBytesPerSecond") +
      R"(</PerfCounterInfo><PerfCounterInfo xsi:type="PerfCounterInfo">)" +
      counter_info(175, "virtualDisk", "totalReadLatency", "millisecond") +
      R"(</PerfCounterInfo><PerfCounterInfo xsi:type="PerfCounterInfo">)" +
      counter_info(1, "cpu", "usage", "percent", "none") +
      R"(</PerfCounterInfo><PerfCounterInfo xsi:type="PerfCounterInfo">)" +
      counter_info(999, "virtualDisk", "read", "kiloBytesPerSecond") +
      R"(</PerfCounterInfo></val></propSet></objects></returnval></RetrievePropertiesExResponse>)");
  auto r = reply(body);
  ASSERT_TRUE(r) << r.error().what();
  auto result = decode_retrieve_result(r->response());
  ASSERT_TRUE(result) << result.error().what();
  ASSERT_EQ(result->objects.size(), 1u);
  const Value* list = result->objects[0].prop("perfCounter");
  ASSERT_NE(list, nullptr);
  auto counters = decode_perf_counters(*list);
  ASSERT_TRUE(counters) << counters.error().what();
  ASSERT_EQ(counters->size(), 3u);
  EXPECT_EQ(counters->at("virtualDisk.read.average").key, 173);  // the first of a name listed twice
  EXPECT_EQ(counters->at("virtualDisk.read.average").unit, "kiloBytesPerSecond");
  EXPECT_EQ(counters->at("virtualDisk.read.average").stats_type, "rate");
  EXPECT_EQ(counters->at("virtualDisk.totalReadLatency.average").unit, "millisecond");
  EXPECT_EQ(counters->at("cpu.usage.none").key, 1);
}

TEST(Vim25Performance, QueryPerfCounterAnswer) {
  auto r = reply(vcsim(R"(<QueryPerfCounterResponse xmlns="urn:vim25"><returnval>)" +
                       counter_info(164, "storageAdapter", "read", "kiloBytesPerSecond") +
                       R"(</returnval><returnval>)" +
                       counter_info(162, "storageAdapter", "numberReadAveraged", "number") +
                       R"(</returnval></QueryPerfCounterResponse>)"));
  ASSERT_TRUE(r) << r.error().what();
  auto counters = decode_query_perf_counter(r->response());
  ASSERT_TRUE(counters) << counters.error().what();
  EXPECT_EQ(counters->at("storageAdapter.read.average").key, 164);
  EXPECT_EQ(counters->at("storageAdapter.numberReadAveraged.average").unit, "number");
}

TEST(Vim25Performance, ACounterWithoutKeyOrNameIsMalformed) {
  Value info;
  info.fields.push_back({"nameInfo", Value{}});
  Value list;
  list.fields.push_back({"PerfCounterInfo", info});
  auto no_key = decode_perf_counters(list);
  ASSERT_FALSE(no_key);
  EXPECT_EQ(no_key.error().kind, ErrorKind::protocol);
  EXPECT_NE(no_key.error().message.find("no integer key"), std::string::npos) << no_key.error().what();
  list.fields[0].value.fields.push_back({"key", Value{"xsd:int", "7", "", {}}});
  auto no_name = decode_perf_counters(list);
  ASSERT_FALSE(no_name);
  EXPECT_NE(no_name.error().message.find("counter 7 has no nameInfo.key"), std::string::npos)
      << no_name.error().what();
}

const std::string kVcenterAnswer =
    R"(<QueryPerfResponse xmlns="urn:vim25"><returnval xsi:type="PerfEntityMetric">)"
    R"(<entity type="VirtualMachine">vm-42</entity>)"
    R"(<sampleInfo><timestamp>2024-05-01T10:20:00Z</timestamp><interval>20</interval></sampleInfo>)"
    R"(<sampleInfo><timestamp>2024-05-01T10:20:20Z</timestamp><interval>20</interval></sampleInfo>)"
    R"(<value xsi:type="PerfMetricIntSeries"><id><counterId>173</counterId><instance>scsi0:0</instance></id>)"
    R"(<value>1200</value><value>-1</value></value>)"
    R"(<value xsi:type="PerfMetricIntSeries"><id><counterId>173</counterId><instance></instance></id>)"
    R"(<value>1200</value><value>0</value></value>)"
    R"(</returnval><returnval xsi:type="PerfEntityMetric"><entity type="HostSystem">host-12</entity>)"
    R"(<sampleInfo><timestamp>2024-05-01T10:20:20.000+00:00</timestamp><interval>20</interval></sampleInfo>)"
    R"(<value xsi:type="PerfMetricIntSeries"><id><counterId>164</counterId><instance>vmhba1</instance></id>)"
    R"(<value> 9223372036854775807 </value></value></returnval></QueryPerfResponse>)";

TEST(Vim25Performance, QueryPerfAnswerPerEntitySamplesAndSeries) {
  auto r = reply(vcenter(kVcenterAnswer));
  ASSERT_TRUE(r) << r.error().what();
  auto metrics = decode_query_perf(r->response());
  ASSERT_TRUE(metrics) << metrics.error().what();
  ASSERT_EQ(metrics->size(), 2u);
  const PerfEntityMetric& vm = (*metrics)[0];
  EXPECT_EQ(vm.entity, (MoRef{"VirtualMachine", "vm-42"}));
  ASSERT_EQ(vm.samples.size(), 2u);
  EXPECT_EQ(vm.samples[0].timestamp, *parse_rfc3339("2024-05-01T10:20:00Z"));
  EXPECT_EQ(vm.samples[1].interval_s, 20);
  ASSERT_EQ(vm.series.size(), 2u);
  EXPECT_EQ(vm.series[0].id, (PerfMetricId{173, "scsi0:0"}));
  EXPECT_EQ(vm.series[0].values, (std::vector<std::int64_t>{1200, -1}));
  EXPECT_EQ(vm.series[1].id, (PerfMetricId{173, ""}));
  const PerfEntityMetric& host = (*metrics)[1];
  EXPECT_EQ(host.entity.type, "HostSystem");
  ASSERT_EQ(host.series.size(), 1u);
  EXPECT_EQ(host.series[0].values, (std::vector<std::int64_t>{9223372036854775807}));
}

TEST(Vim25Performance, SimulatorShapedAnswerAndEmptyAnswer) {
  // govmomi's simulator: its own xsi prefix, samples newest first, fractional seconds.
  auto r = reply(vcsim(
      R"(<QueryPerfResponse xmlns="urn:vim25"><returnval XMLSchema-instance:type="PerfEntityMetric">)"
      R"(<entity type="VirtualMachine">vm-54</entity>)"
      R"(<sampleInfo><timestamp>2024-05-01T10:20:40.123456789Z</timestamp><interval>20</interval></sampleInfo>)"
      R"(<sampleInfo><timestamp>2024-05-01T10:20:20.123456789Z</timestamp><interval>20</interval></sampleInfo>)"
      R"(<value XMLSchema-instance:type="PerfMetricIntSeries"><id><counterId>171</counterId><instance>*</instance>)"
      R"(</id><value>3</value><value>5</value></value></returnval></QueryPerfResponse>)"));
  ASSERT_TRUE(r) << r.error().what();
  auto metrics = decode_query_perf(r->response());
  ASSERT_TRUE(metrics) << metrics.error().what();
  ASSERT_EQ(metrics->size(), 1u);
  EXPECT_GT((*metrics)[0].samples[0].timestamp, (*metrics)[0].samples[1].timestamp);
  EXPECT_EQ((*metrics)[0].series[0].id.instance, "*");
  auto empty = reply(vcenter(R"(<QueryPerfResponse xmlns="urn:vim25"/>)"));
  ASSERT_TRUE(empty);
  auto none = decode_query_perf(empty->response());
  ASSERT_TRUE(none) << none.error().what();
  EXPECT_TRUE(none->empty());
}

TEST(Vim25Performance, CsvAnswersAreRefused) {
  auto r = reply(vcenter(
      R"(<QueryPerfResponse xmlns="urn:vim25"><returnval xsi:type="PerfEntityMetricCSV">)"
      R"(<entity type="VirtualMachine">vm-42</entity><sampleInfoCSV>20,2024-05-01T10:20:00Z</sampleInfoCSV>)"
      R"(<value><id><counterId>173</counterId><instance></instance></id><value>12</value></value>)"
      R"(</returnval></QueryPerfResponse>)"));
  ASSERT_TRUE(r);
  auto metrics = decode_query_perf(r->response());
  ASSERT_FALSE(metrics);
  EXPECT_EQ(metrics.error().kind, ErrorKind::protocol);
  EXPECT_NE(metrics.error().message.find("CSV"), std::string::npos) << metrics.error().what();
  EXPECT_NE(metrics.error().message.find("\"normal\""), std::string::npos) << metrics.error().what();
}

TEST(Vim25Performance, MalformedAnswersAreNamed) {
  struct Case {
    std::string returnval, expected;
  };
  const std::vector<Case> cases{
      {R"(<sampleInfo><timestamp>x</timestamp><interval>20</interval></sampleInfo>)", "no entity"},
      {R"(<entity type="VirtualMachine">vm-1</entity><sampleInfo><interval>20</interval></sampleInfo>)",
       "without timestamp"},
      {R"(<entity type="VirtualMachine">vm-1</entity><sampleInfo><timestamp>yesterday</timestamp>)"
       R"(<interval>20</interval></sampleInfo>)",
       "not an xsd:dateTime"},
      {R"(<entity type="VirtualMachine">vm-1</entity><sampleInfo><timestamp>2024-05-01T10:20:00Z</timestamp>)"
       R"(</sampleInfo>)",
       "integer interval"},
      {R"(<entity type="VirtualMachine">vm-1</entity><value><id><instance/></id></value>)", "id.counterId"},
      {R"(<entity type="VirtualMachine">vm-1</entity><value><id><counterId>1</counterId></id>)"
       R"(<value>12x</value></value>)",
       "not an xsd:long"},
      {R"(<entity type="VirtualMachine">vm-1</entity><value><id><counterId>1</counterId></id>)"
       R"(<value>99999999999999999999</value></value>)",
       "not an xsd:long"},
      {R"(<entity type="VirtualMachine">vm-1</entity><value xsi:type="PerfMetricSeriesCSV"><id>)"
       R"(<counterId>1</counterId></id><value>1,2</value></value>)",
       "CSV series"},
  };
  for (const Case& c : cases) {
    auto r = reply(vcenter(R"(<QueryPerfResponse xmlns="urn:vim25"><returnval xsi:type="PerfEntityMetric">)" +
                           c.returnval + "</returnval></QueryPerfResponse>"));
    ASSERT_TRUE(r) << c.returnval;
    auto metrics = decode_query_perf(r->response());
    ASSERT_FALSE(metrics) << c.returnval;
    EXPECT_EQ(metrics.error().kind, ErrorKind::protocol);
    EXPECT_NE(metrics.error().message.find(c.expected), std::string::npos) << metrics.error().what();
  }
}

}  // namespace

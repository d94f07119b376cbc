// Objects the provider sends, validated against the published KubeVirt and CDI OpenAPI definitions.
#include "providers/kubevirt/kube_objects.hpp"

#include <gtest/gtest.h>

#include "providers/kubevirt/vmi_tracker.hpp"
#include "tests/unit/providers/kubevirt/swagger_validator.hpp"

namespace bootstorm::kubevirt {
namespace {
using nlohmann::json;

const testing::SwaggerValidator& kubevirt_spec() {
  static testing::SwaggerValidator v(std::string(BOOTSTORM_API_SPECS) + "/kubevirt/kubevirt-swagger.json");
  return v;
}
const testing::SwaggerValidator& cdi_spec() {
  static testing::SwaggerValidator v(std::string(BOOTSTORM_API_SPECS) + "/kubevirt/cdi-swagger.json");
  return v;
}

std::string joined(const std::vector<std::string>& problems) {
  std::string out;
  for (const auto& p : problems) out += p + "\n";
  return out;
}

VmBuild sample_build() {
  VmBuild b;
  b.name = "bs-3f9a2c-1x-r7625-64gfc-001";
  b.namespace_ = "bootstorm";
  b.run_id = "3f9a2c";
  b.scenario = "1x R7625 64GFC";
  b.host = "r7625-01";
  b.datasource_name = "win10";
  b.datasource_namespace = "golden";
  b.clone_strategy = "csi-clone";
  b.beacon_url = "http://10.0.0.5:8081/beacon";
  b.beacon_token = "tok-abcdef";
  return b;
}

TEST(KubeObjects, ValidatorRejectsWhatIsWrong) {
  // The validator must catch a misspelt field, a wrong type and a missing required field.
  json vm = build_virtual_machine(sample_build());
  vm["spec"]["runStartegy"] = "Halted";
  vm["spec"]["template"]["spec"]["domain"]["cpu"]["cores"] = "two";
  vm["spec"]["dataVolumeTemplates"][0].erase("spec");
  auto problems = kubevirt_spec().validate(vm, "v1.VirtualMachine");
  std::string text = joined(problems);
  EXPECT_NE(text.find("runStartegy: unknown property"), std::string::npos) << text;
  EXPECT_NE(text.find("cores: expected type"), std::string::npos) << text;
  EXPECT_NE(text.find("missing required \"spec\""), std::string::npos) << text;
}

TEST(KubeObjects, VirtualMachineConformsAndCarriesRunLabelsPlacementAndBeacon) {
  VmBuild b = sample_build();
  json vm = build_virtual_machine(b);
  auto problems = kubevirt_spec().validate(vm, "v1.VirtualMachine");
  EXPECT_TRUE(problems.empty()) << joined(problems);

  EXPECT_EQ(vm["apiVersion"], "kubevirt.io/v1");
  EXPECT_EQ(vm["kind"], "VirtualMachine");
  EXPECT_EQ(vm["spec"]["runStrategy"], "Halted");
  EXPECT_FALSE(vm["spec"].contains("running"));
  for (const json* labels : {&vm["metadata"]["labels"], &vm["spec"]["template"]["metadata"]["labels"],
                             &vm["spec"]["dataVolumeTemplates"][0]["metadata"]["labels"]}) {
    EXPECT_EQ((*labels)[kRunLabel], "3f9a2c");
    EXPECT_EQ((*labels)[kScenarioLabel], "1x-r7625-64gfc");
  }
  EXPECT_EQ(vm["metadata"]["annotations"][kScenarioNameAnnotation], "1x R7625 64GFC");
  EXPECT_EQ(vm["spec"]["template"]["spec"]["nodeSelector"][kHostnameLabel], "r7625-01");
  const json& dv = vm["spec"]["dataVolumeTemplates"][0];
  EXPECT_EQ(dv["metadata"]["name"], datavolume_name(b.name));
  EXPECT_EQ(dv["spec"]["sourceRef"],
            (json{{"kind", "DataSource"}, {"name", "win10"}, {"namespace", "golden"}}));
  // The root disk is that DataVolume; cloud-init carries the beacon.
  bool dv_volume = false, cloud_init = false;
  for (const auto& vol : vm["spec"]["template"]["spec"]["volumes"]) {
    if (vol.contains("dataVolume")) dv_volume = vol["dataVolume"]["name"] == datavolume_name(b.name);
    if (vol.contains("cloudInitNoCloud")) {
      std::string ud = vol["cloudInitNoCloud"]["userData"];
      cloud_init = ud.rfind("#cloud-config\n", 0) == 0 &&
                   ud.find("BOOTSTORM_BEACON_URL=http://10.0.0.5:8081/beacon") != std::string::npos &&
                   ud.find("BOOTSTORM_BEACON_TOKEN=tok-abcdef") != std::string::npos &&
                   ud.find("BOOTSTORM_VM_NAME=" + b.name) != std::string::npos;
    }
  }
  EXPECT_TRUE(dv_volume);
  EXPECT_TRUE(cloud_init);

  // The DataVolume the template creates conforms to CDI's own definition.
  json full_dv = {{"apiVersion", "cdi.kubevirt.io/v1beta1"},
                  {"kind", "DataVolume"},
                  {"metadata", dv["metadata"]},
                  {"spec", dv["spec"]}};
  auto cdi_problems = cdi_spec().validate(full_dv, "v1beta1.DataVolume");
  EXPECT_TRUE(cdi_problems.empty()) << joined(cdi_problems);
}

TEST(KubeObjects, PvcSourceAndNoBeacon) {
  VmBuild b = sample_build();
  b.datasource_name.clear();
  b.pvc = "golden/win10-pvc";
  b.beacon_url.clear();
  b.host.clear();
  json vm = build_virtual_machine(b);
  auto problems = kubevirt_spec().validate(vm, "v1.VirtualMachine");
  EXPECT_TRUE(problems.empty()) << joined(problems);
  const json& spec = vm["spec"]["dataVolumeTemplates"][0]["spec"];
  EXPECT_EQ(spec["source"]["pvc"], (json{{"namespace", "golden"}, {"name", "win10-pvc"}}));
  EXPECT_FALSE(spec.contains("sourceRef"));
  EXPECT_FALSE(vm["spec"]["template"]["spec"].contains("nodeSelector"));
  EXPECT_EQ(cloud_init_user_data(b).find("BEACON"), std::string::npos);
}

TEST(KubeObjects, SubresourceBodiesConform) {
  auto p1 = kubevirt_spec().validate(start_options(), "v1.StartOptions");
  EXPECT_TRUE(p1.empty()) << joined(p1);
  auto p2 = kubevirt_spec().validate(stop_options(), "v1.StopOptions");
  EXPECT_TRUE(p2.empty()) << joined(p2);
  auto p3 = kubevirt_spec().validate(delete_options(), "k8s.io.apimachinery.pkg.apis.meta.v1.DeleteOptions");
  EXPECT_TRUE(p3.empty()) << joined(p3);
  EXPECT_EQ(delete_options()["propagationPolicy"], "Foreground");
  json ns = build_namespace("bootstorm", "3f9a2c");
  auto p4 = kubevirt_spec().validate(ns["metadata"], "k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta");
  EXPECT_TRUE(p4.empty()) << joined(p4);
}

TEST(KubeObjects, PathsExistInTheSpec) {
  std::ifstream in(std::string(BOOTSTORM_API_SPECS) + "/kubevirt/kubevirt-swagger.json");
  json doc = json::parse(in);
  EXPECT_TRUE(doc["paths"].contains(
      "/apis/subresources.kubevirt.io/v1/namespaces/{namespace}/virtualmachines/{name}/start"));
  EXPECT_EQ(vm_subresource_path("ns", "vm", "start"),
            "/apis/subresources.kubevirt.io/v1/namespaces/ns/virtualmachines/vm/start");
  EXPECT_TRUE(doc["paths"].contains("/apis/kubevirt.io/v1/namespaces/{namespace}/virtualmachineinstances"));
  EXPECT_EQ(vmis_path("ns"), "/apis/kubevirt.io/v1/namespaces/ns/virtualmachineinstances");
  EXPECT_TRUE(doc["paths"].contains("/apis/kubevirt.io/v1/namespaces/{namespace}/virtualmachines/{name}"));
  EXPECT_EQ(vm_path("ns", "vm"), "/apis/kubevirt.io/v1/namespaces/ns/virtualmachines/vm");
}

TEST(KubeObjects, LabelSlugAndSelector) {
  EXPECT_EQ(label_slug("4x R740 16GFC"), "4x-r740-16gfc");
  EXPECT_EQ(label_slug("  --Weird__Name!!  "), "weird-name");
  EXPECT_EQ(label_slug(std::string(100, 'a')).size(), 63u);
  EXPECT_EQ(run_selector_query("3f9a2c"), "bootstorm.io%2Frun%3D3f9a2c");
}

TEST(KubeObjects, DataVolumeState) {
  auto failed = datavolume_state(json::parse(R"({"status":{"phase":"Failed","progress":"12.5%","conditions":[
      {"type":"Running","status":"False","reason":"Error","message":"clone source PVC golden/win10 not found"},
      {"type":"Ready","status":"False"}]}})"));
  EXPECT_TRUE(failed.failed);
  EXPECT_FALSE(failed.succeeded);
  EXPECT_NE(failed.detail.find("Running=False Error: clone source PVC golden/win10 not found"),
            std::string::npos)
      << failed.detail;
  EXPECT_NE(failed.detail.find("progress 12.5%"), std::string::npos);
  EXPECT_TRUE(datavolume_state(json::parse(R"({"status":{"phase":"Succeeded"}})")).succeeded);
  EXPECT_EQ(datavolume_state(json::parse(R"({"metadata":{}})")).phase, "");
}

// The scanner of protocol/kube keeps exactly what the KubeVirt observers read.
TEST(WatchLines, MilestoneFieldsKeepWhatObserversReadAndSkipTheRest) {
  const std::string line =
      R"({"type":"MODIFIED","object":{"kind":"VirtualMachineInstance","apiVersion":"kubevirt.io/v1",)"
      R"("metadata":{"name":"a","namespace":"ns","resourceVersion":"18","labels":{"x":"a \"quoted\" } ]"}},)"
      R"("spec":{"domain":{"devices":{"disks":[{"name":"d","bus":"virtio"}]}},"nested":[[1,2],{"k":[]}]},)"
      R"("status":{"phase":"Running","nodeName":"worker-1","guestOSInfo":{"id":"fedora"},)"
      R"("conditions":[{"type":"AgentConnected","status":"True"}],"interfaces":[{"ipAddress":"10.0.0.7"}],)"
      R"("phaseTransitionTimestamps":[{"phase":"Running","phaseTransitionTimestamp":"2026-11-30T10:00:05Z"}]}}})";
  auto full = kube::decode_watch_line(line);
  auto slim = kube::decode_watch_line(line, kube::WatchDecode::milestone_fields);
  ASSERT_TRUE(full);
  ASSERT_TRUE(slim);
  EXPECT_EQ(slim->type, kube::WatchEvent::Type::modified);
  EXPECT_EQ(slim->resource_version(), "18");
  EXPECT_EQ(slim->object["kind"], "VirtualMachineInstance");
  EXPECT_EQ(slim->object["metadata"]["name"], "a");
  EXPECT_EQ(slim->object["metadata"]["namespace"], "ns");
  EXPECT_FALSE(slim->object["metadata"].contains("labels"));
  EXPECT_FALSE(slim->object.contains("spec"));
  EXPECT_FALSE(slim->object["status"].contains("guestOSInfo"));
  for (const char* key : {"phase", "nodeName", "conditions", "interfaces", "phaseTransitionTimestamps"}) {
    EXPECT_EQ(slim->object["status"][key], full->object["status"][key]) << key;
  }
  // What the tracker sees is the same either way.
  EXPECT_EQ(view_vmi(slim->object).ip, "10.0.0.7");
  EXPECT_TRUE(view_vmi(slim->object).agent_connected);
  EXPECT_EQ(view_vmi(slim->object).running_at, view_vmi(full->object).running_at);
  // ERROR events (a Status), malformed lines and unknown types take the full parser: same answers as before.
  auto gone = kube::decode_watch_line(R"({"type":"ERROR","object":{"kind":"Status","code":410}})",
                                      kube::WatchDecode::milestone_fields);
  ASSERT_TRUE(gone);
  EXPECT_EQ(gone->error_code, 410);
  EXPECT_FALSE(kube::decode_watch_line("{\"type\":\"ADDED\"}", kube::WatchDecode::milestone_fields));
  EXPECT_FALSE(
      kube::decode_watch_line("{\"type\":\"WHAT\",\"object\":{}}", kube::WatchDecode::milestone_fields));
  EXPECT_FALSE(kube::decode_watch_line(R"({"type":"ADDED","object":{"metadata":{"name":"a"}}} trailing)",
                                       kube::WatchDecode::milestone_fields));
  EXPECT_FALSE(kube::decode_watch_line(R"({"type":"ADDED","object":{"metadata":{"name":"a")",
                                       kube::WatchDecode::milestone_fields));
  // An escaped key is not compared raw: the full parser takes the line and keeps everything.
  auto escaped = kube::decode_watch_line(R"({"type":"ADDED","object":{"metad\u0061ta":{"name":"b"}}})",
                                         kube::WatchDecode::milestone_fields);
  ASSERT_TRUE(escaped);
  EXPECT_EQ(escaped->object["metadata"]["name"], "b");
}

TEST(ListResponses, MilestoneFieldsAgreeWithTheFullParser) {
  const std::string body =
      R"({"kind":"VirtualMachineInstanceList","apiVersion":"kubevirt.io/v1",)"
      R"("metadata":{"resourceVersion":"4711","continue":""},"items":[)"
      R"({"kind":"VirtualMachineInstance","metadata":{"name":"a","namespace":"ns","labels":{"l":"]}"}},)"
      R"("spec":{"domain":{}},"status":{"phase":"Running","nodeName":"worker-0","guestOSInfo":{},)"
      R"("conditions":[{"type":"AgentConnected","status":"True"}]}},)"
      R"({"metadata":{"name":"b"},"status":{"phase":"Scheduling"}}]})";
  auto full = kube::decode_list(body);
  auto slim = kube::decode_list(body, kube::WatchDecode::milestone_fields);
  ASSERT_TRUE(full) << full.error().what();
  ASSERT_TRUE(slim) << slim.error().what();
  EXPECT_EQ(full->resource_version, "4711");
  EXPECT_EQ(slim->resource_version, "4711");
  ASSERT_EQ(full->items.size(), 2u);
  ASSERT_EQ(slim->items.size(), 2u);
  EXPECT_TRUE(full->items[0].contains("spec"));
  EXPECT_FALSE(slim->items[0].contains("spec"));
  EXPECT_FALSE(slim->items[0]["metadata"].contains("labels"));
  EXPECT_FALSE(slim->items[0]["status"].contains("guestOSInfo"));
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(slim->items[i]["metadata"]["name"], full->items[i]["metadata"]["name"]);
    EXPECT_EQ(view_vmi(slim->items[i]).phase, view_vmi(full->items[i]).phase);
    EXPECT_EQ(view_vmi(slim->items[i]).agent_connected, view_vmi(full->items[i]).agent_connected);
    EXPECT_EQ(datavolume_state(slim->items[i]).detail, datavolume_state(full->items[i]).detail);
  }
  // An empty or missing items list is an empty list, in both modes.
  for (auto mode : {kube::WatchDecode::full, kube::WatchDecode::milestone_fields}) {
    auto empty = kube::decode_list(R"({"metadata":{"resourceVersion":"9"},"items":[]})", mode);
    ASSERT_TRUE(empty);
    EXPECT_EQ(empty->resource_version, "9");
    EXPECT_TRUE(empty->items.empty());
    auto none = kube::decode_list(R"({"metadata":{"resourceVersion":"9"},"items":null})", mode);
    ASSERT_TRUE(none);
    EXPECT_TRUE(none->items.empty());
  }
  // What the scanner cannot follow falls back to the full parser; what is not JSON is an error in both.
  auto escaped =
      kube::decode_list(R"({"metad\u0061ta":{"resourceVersion":"3"},"items":[{"metadata":{"name":"c"}}]})",
                        kube::WatchDecode::milestone_fields);
  ASSERT_TRUE(escaped);
  EXPECT_EQ(escaped->resource_version, "3");
  ASSERT_EQ(escaped->items.size(), 1u);
  EXPECT_EQ(escaped->items[0]["metadata"]["name"], "c");
  for (auto mode : {kube::WatchDecode::full, kube::WatchDecode::milestone_fields}) {
    EXPECT_FALSE(kube::decode_list("<html>502 Bad Gateway</html>", mode));
    EXPECT_FALSE(kube::decode_list(R"({"items":[{"metadata":{"name":"a"}})", mode));
    EXPECT_FALSE(kube::decode_list("[1,2]", mode));
    EXPECT_FALSE(kube::decode_list(R"({"items":[{"metadata":{"name":"a"}},7]})", mode));
  }
}

}  // namespace
}  // namespace bootstorm::kubevirt

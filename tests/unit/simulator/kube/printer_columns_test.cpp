// Server-side printing: content negotiation, the JSONPath subset of printer columns, apimachinery's
// HumanDuration, and the Tables `kubectl get` receives for KubeVirt's, CDI's and core types.
#include "simulator/kube/printer_columns.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "simulator/kube/api_objects.hpp"

namespace bootstorm::sim::kube {
namespace {

using json = nlohmann::json;

TEST(QueryBool, ReadsBooleansAsTheApiServerDoes) {
  EXPECT_FALSE(query_bool(std::nullopt));
  for (const char* no : {"false", "False", "FALSE", "0"}) EXPECT_FALSE(query_bool(std::string(no))) << no;
  for (const char* yes : {"true", "True", "1", "", "yes", "2"})
    EXPECT_TRUE(query_bool(std::string(yes))) << yes;
}

TEST(Negotiate, PlainJsonTablesAndPartialMetadata) {
  EXPECT_EQ(negotiate_response("")->as, ResponseShape::As::object);
  EXPECT_EQ(negotiate_response("application/json")->as, ResponseShape::As::object);
  EXPECT_EQ(negotiate_response("*/*")->as, ResponseShape::As::object);
  // kubectl get's header: the first acceptable type wins.
  auto kubectl = negotiate_response(
      "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,"
      "application/json");
  ASSERT_TRUE(kubectl);
  EXPECT_EQ(kubectl->as, ResponseShape::As::table);
  EXPECT_EQ(kubectl->version, "v1");
  auto beta = negotiate_response("application/json;as=Table;v=v1beta1;g=meta.k8s.io");
  ASSERT_TRUE(beta);
  EXPECT_EQ(beta->version, "v1beta1");
  EXPECT_EQ(negotiate_response("application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io")->as,
            ResponseShape::As::partial_metadata);
  // An unknown rendering falls through to the next offer, and with none left nothing is acceptable.
  EXPECT_EQ(negotiate_response("application/json;as=Unknown;v=v1;g=meta.k8s.io, application/json")->as,
            ResponseShape::As::object);
  EXPECT_FALSE(negotiate_response("application/json;as=Table;v=v2;g=meta.k8s.io"));
  EXPECT_FALSE(negotiate_response("application/vnd.kubernetes.protobuf"));
  EXPECT_FALSE(negotiate_response("text/html"));
}

TEST(IncludeObject, ParsesTheThreeValues) {
  EXPECT_EQ(parse_include_object(""), IncludeObject::metadata);
  EXPECT_EQ(parse_include_object("Metadata"), IncludeObject::metadata);
  EXPECT_EQ(parse_include_object("None"), IncludeObject::none);
  EXPECT_EQ(parse_include_object("Object"), IncludeObject::object);
  EXPECT_FALSE(parse_include_object("object"));
}

TEST(JsonPath, FieldsIndexesAndFilters) {
  json vmi = json::parse(R"({"status": {"phase": "Running", "interfaces": [{"ipAddress": "10.0.0.7"}],
      "conditions": [{"type": "LiveMigratable", "status": "False"}, {"type": "Ready", "status": "True"}]}})");
  EXPECT_EQ(json_path_value(vmi, ".status.phase"), "Running");
  EXPECT_EQ(json_path_value(vmi, "{.status.phase}"), "Running");
  EXPECT_EQ(json_path_value(vmi, ".status.interfaces[0].ipAddress"), "10.0.0.7");
  EXPECT_EQ(json_path_value(vmi, ".status.conditions[?(@.type=='Ready')].status"), "True");
  EXPECT_EQ(json_path_value(vmi, R"(.status.conditions[?(@.type=="LiveMigratable")].status)"), "False");
  EXPECT_TRUE(json_path_value(vmi, ".status.conditions[?(@.type=='Paused')].status").is_null());
  EXPECT_TRUE(json_path_value(vmi, ".status.interfaces[3].ipAddress").is_null());
  EXPECT_TRUE(json_path_value(vmi, ".status.nodeName").is_null());
  EXPECT_TRUE(json_path_value(vmi, ".status.phase.deeper").is_null());
}

TEST(HumanDuration, MatchesApimachinery) {
  EXPECT_EQ(human_duration(-5), "<invalid>");
  EXPECT_EQ(human_duration(-0.5), "0s");
  EXPECT_EQ(human_duration(0), "0s");
  EXPECT_EQ(human_duration(119.9), "119s");
  EXPECT_EQ(human_duration(120), "2m");
  EXPECT_EQ(human_duration(200), "3m20s");
  EXPECT_EQ(human_duration(600), "10m");
  EXPECT_EQ(human_duration(3 * 3600 - 1), "179m");
  EXPECT_EQ(human_duration(3 * 3600), "3h");
  EXPECT_EQ(human_duration(5 * 3600 + 180), "5h3m");
  EXPECT_EQ(human_duration(30 * 3600), "30h");
  EXPECT_EQ(human_duration(52 * 3600), "2d4h");
  EXPECT_EQ(human_duration(10 * 86400), "10d");
  EXPECT_EQ(human_duration((3 * 365 + 12) * 86400.0), "3y12d");
  EXPECT_EQ(human_duration(9 * 365 * 86400.0), "9y");
}

std::vector<std::string> column_names(const json& table) {
  std::vector<std::string> names;
  for (const auto& c : table["columnDefinitions"]) names.push_back(c["name"].get<std::string>());
  return names;
}

constexpr double kNow = 1796119200;  // 2026-12-01T10:00:00Z

TEST(Table, VirtualMachinesShowKubeVirtsColumns) {
  json vm = json::parse(R"({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
      "metadata": {"name": "desk-001", "namespace": "vdi", "creationTimestamp": "2026-12-01T09:55:00Z",
                   "resourceVersion": "42"},
      "status": {"printableStatus": "Running", "conditions": [{"type": "Ready", "status": "True"}]}})");
  ResponseShape shape{ResponseShape::As::table, "v1"};
  json table = make_table(Kind::virtual_machines, {&vm}, {{"resourceVersion", "42"}}, shape,
                          IncludeObject::metadata, kNow);
  EXPECT_EQ(table["kind"], "Table");
  EXPECT_EQ(table["apiVersion"], "meta.k8s.io/v1");
  EXPECT_EQ(column_names(table), (std::vector<std::string>{"Name", "Age", "Status", "Ready"}));
  EXPECT_EQ(table["columnDefinitions"][0]["format"], "name");
  ASSERT_EQ(table["rows"].size(), 1u);
  EXPECT_EQ(table["rows"][0]["cells"], json::parse(R"(["desk-001", "5m", "Running", "True"])"));
  EXPECT_EQ(table["rows"][0]["object"]["kind"], "PartialObjectMetadata");
  EXPECT_EQ(table["rows"][0]["object"]["metadata"]["resourceVersion"], "42");
  // A VM that has no status yet: null cells (kubectl prints <none>).
  json bare = {{"metadata", {{"name", "new"}, {"creationTimestamp", "2026-12-01T10:00:00Z"}}}};
  json t2 = make_table(Kind::virtual_machines, {&bare}, json::object(), shape, IncludeObject::none, kNow);
  EXPECT_EQ(t2["rows"][0]["cells"], json::parse(R"(["new", "0s", null, null])"));
  EXPECT_FALSE(t2["rows"][0].contains("object"));
}

TEST(Table, InstancesDataVolumesAndWideColumns) {
  json vmi = json::parse(R"({"metadata": {"name": "desk-001", "creationTimestamp": "2026-12-01T09:00:00Z"},
      "status": {"phase": "Running", "nodeName": "node-1", "interfaces": [{"ipAddress": "10.0.0.7"}],
                 "conditions": [{"type": "Ready", "status": "True"}]}})");
  ResponseShape shape{ResponseShape::As::table, "v1"};
  json t =
      make_table(Kind::virtual_machine_instances, {&vmi}, json::object(), shape, IncludeObject::object, kNow);
  EXPECT_EQ(column_names(t), (std::vector<std::string>{"Name", "Age", "Phase", "IP", "NodeName", "Ready",
                                                       "Live-Migratable", "Paused"}));
  EXPECT_EQ(t["columnDefinitions"][6]["priority"], 1);
  EXPECT_EQ(t["rows"][0]["cells"], json::parse(R"(["desk-001", "60m", "Running", "10.0.0.7", "node-1", "True",
                                                   null, null])"));
  EXPECT_EQ(t["rows"][0]["object"], vmi);
  json dv = json::parse(R"({"metadata": {"name": "disk", "creationTimestamp": "2026-12-01T09:59:00Z"},
      "status": {"phase": "CloneInProgress", "progress": "42.0%", "restartCount": 1}})");
  json d = make_table(Kind::data_volumes, {&dv}, json::object(), shape, IncludeObject::none, kNow);
  EXPECT_EQ(column_names(d), (std::vector<std::string>{"Name", "Phase", "Progress", "Restarts", "Age"}));
  EXPECT_EQ(d["rows"][0]["cells"], json::parse(R"(["disk", "CloneInProgress", "42.0%", 1, "60s"])"));
}

TEST(Table, CoreTypesUseTheBuiltInPrinters) {
  ResponseShape shape{ResponseShape::As::table, "v1"};
  json node = json::parse(R"({"metadata": {"name": "node-1", "creationTimestamp": "2026-11-30T10:00:00Z",
        "labels": {"node-role.kubernetes.io/worker": "", "node-role.kubernetes.io/master": ""}},
      "spec": {"unschedulable": true},
      "status": {"conditions": [{"type": "Ready", "status": "True"}], "nodeInfo": {"kubeletVersion": "v1.31.4"},
                 "addresses": [{"type": "InternalIP", "address": "192.0.2.10"}]}})");
  json n = make_table(Kind::nodes, {&node}, json::object(), shape, IncludeObject::none, kNow);
  EXPECT_EQ(n["rows"][0]["cells"][0], "node-1");
  EXPECT_EQ(n["rows"][0]["cells"][1], "Ready,SchedulingDisabled");
  EXPECT_EQ(n["rows"][0]["cells"][2], "master,worker");
  EXPECT_EQ(n["rows"][0]["cells"][3], "24h");
  EXPECT_EQ(n["rows"][0]["cells"][4], "v1.31.4");
  EXPECT_EQ(n["rows"][0]["cells"][5], "192.0.2.10");
  json pvc = json::parse(R"({"metadata": {"name": "disk"}, "spec": {"volumeName": "pv-1",
      "storageClassName": "lab-rbd"}, "status": {"phase": "Bound", "capacity": {"storage": "30Gi"},
      "accessModes": ["ReadWriteOnce", "ReadWriteMany"]}})");
  json p =
      make_table(Kind::persistent_volume_claims, {&pvc}, json::object(), shape, IncludeObject::none, kNow);
  EXPECT_EQ(p["rows"][0]["cells"],
            json::parse(R"(["disk", "Bound", "pv-1", "30Gi", "RWO,RWX", "lab-rbd", "<unset>", "<unknown>",
                            "<unset>"])"));
  json secret =
      json::parse(R"({"metadata": {"name": "creds"}, "type": "Opaque", "data": {"a": "", "b": ""}})");
  json s = make_table(Kind::secrets, {&secret}, json::object(), shape, IncludeObject::none, kNow);
  EXPECT_EQ(s["rows"][0]["cells"], json::parse(R"(["creds", "Opaque", 2, "<unknown>"])"));
  json event = json::parse(R"({"metadata": {"name": "e1"}, "type": "Normal", "reason": "Started",
      "involvedObject": {"kind": "VirtualMachine", "name": "desk-001"}, "message": "VMI started",
      "lastTimestamp": "2026-12-01T09:59:30Z", "count": 3})");
  json e = make_table(Kind::events, {&event}, json::object(), shape, IncludeObject::none, kNow);
  EXPECT_EQ(column_names(e).front(), "Last Seen");
  EXPECT_EQ(e["rows"][0]["cells"][0], "30s");
  EXPECT_EQ(e["rows"][0]["cells"][3], "virtualmachine/desk-001");
  EXPECT_EQ(e["rows"][0]["cells"][6], "VMI started");
}

TEST(Table, ForkliftColumnsComeFromItsCrds) {
  json plan = json::parse(R"({"metadata": {"name": "p"}, "status": {"conditions": [
      {"type": "Ready", "status": "True"}, {"type": "Succeeded", "status": "True"}]}})");
  ResponseShape shape{ResponseShape::As::table, "v1"};
  json t = make_table(Kind::forklift_plans, {&plan}, json::object(), shape, IncludeObject::none, kNow);
  EXPECT_EQ(column_names(t),
            (std::vector<std::string>{"Name", "READY", "EXECUTING", "SUCCEEDED", "FAILED", "AGE"}));
  EXPECT_EQ(t["rows"][0]["cells"], json::parse(R"(["p", "True", null, "True", null, null])"));
}

TEST(PartialMetadata, ListAndSingleObject) {
  json a = {{"metadata", {{"name", "a"}, {"uid", "u1"}}}, {"spec", {{"x", 1}}}};
  json b = {{"metadata", {{"name", "b"}}}};
  ResponseShape shape{ResponseShape::As::partial_metadata, "v1"};
  json list = render_shaped(Kind::virtual_machines, {&a, &b}, {{"resourceVersion", "7"}}, shape,
                            IncludeObject::metadata, kNow, true);
  EXPECT_EQ(list["kind"], "PartialObjectMetadataList");
  EXPECT_EQ(list["metadata"]["resourceVersion"], "7");
  ASSERT_EQ(list["items"].size(), 2u);
  EXPECT_EQ(list["items"][0], json::parse(R"({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                                              "metadata": {"name": "a", "uid": "u1"}})"));
  json one = render_shaped(Kind::virtual_machines, {&a}, json::object(), shape, IncludeObject::metadata, kNow,
                           false);
  EXPECT_EQ(one["kind"], "PartialObjectMetadata");
  EXPECT_FALSE(one.contains("spec"));
}

}  // namespace
}  // namespace bootstorm::sim::kube

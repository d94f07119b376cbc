// Every Forklift object bootstorm sends, validated against the CRD schemas of tests/data/api-specs/forklift
// (openAPIV3Schema of forklift.konveyor.io/v1beta1), plus the builders' content and the dry-run calls.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <charconv>

#include "common/base64.hpp"
#include "orchestrator/migrate/forklift_objects.hpp"
#include "orchestrator/migrate/migrate.hpp"
#include "tests/support/swagger/swagger_validator.hpp"

namespace bootstorm::migrate {
namespace {
using nlohmann::json;

json to_json(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Map: {
      json o = json::object();
      for (auto it = n.begin(); it != n.end(); ++it) o[it->first.Scalar()] = to_json(it->second);
      return o;
    }
    case YAML::NodeType::Sequence: {
      json a = json::array();
      for (const auto& item : n) a.push_back(to_json(item));
      return a;
    }
    case YAML::NodeType::Scalar: {
      const std::string& s = n.Scalar();
      if (n.Tag() == "!") return s;  // quoted: a string
      if (s == "true") return true;
      if (s == "false") return false;
      long long i = 0;
      auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), i);
      if (ec == std::errc() && end == s.data() + s.size()) return i;
      return s;
    }
    default:
      return nullptr;
  }
}

// The openAPIV3Schema of forklift.konveyor.io_<plural>.yaml.
const json& crd_schema(const std::string& plural) {
  static std::map<std::string, json> cache;
  auto it = cache.find(plural);
  if (it != cache.end()) return it->second;
  YAML::Node crd =
      YAML::LoadFile(std::string(BOOTSTORM_API_SPECS) + "/forklift/forklift.konveyor.io_" + plural + ".yaml");
  json doc = to_json(crd);
  json schema;
  for (const auto& v : doc["spec"]["versions"])
    if (v["name"] == "v1beta1") schema = v["schema"]["openAPIV3Schema"];
  return cache[plural] = schema;
}

std::vector<std::string> validate(const json& object, const std::string& plural) {
  testing::SwaggerSpec spec(json::object());
  return spec.validate_schema(object, crd_schema(plural));
}

const Ref kSource{"bs-abc123-vsphere", "openshift-mtv"}, kHost{"host", "openshift-mtv"};

TEST(ForkliftObjects, CrdSchemasLoad) {
  for (const char* plural : {"providers", "networkmaps", "storagemaps", "plans", "migrations"}) {
    const json& s = crd_schema(plural);
    ASSERT_TRUE(s.is_object()) << plural;
    EXPECT_TRUE(s["properties"].contains("spec")) << plural;
  }
  // The validator is not vacuous: a Provider without its required spec.type is rejected.
  json bad = {{"apiVersion", kForkliftGroupVersion},
              {"kind", "Provider"},
              {"metadata", {{"name", "x"}}},
              {"spec", {{"url", "https://vc/sdk"}, {"secret", json::object()}}}};
  EXPECT_FALSE(validate(bad, "providers").empty());
  json wrong_type = {{"spec", {{"type", "vsphere"}, {"secret", json::object()}, {"url", 5}}}};
  EXPECT_FALSE(validate(wrong_type, "providers").empty());
}

TEST(ForkliftObjects, ProviderValidatesAndPointsAtTheSdk) {
  ProviderBuild b{
      "bs-abc123-vsphere", "openshift-mtv", "abc123", "vsphere", vsphere_sdk_url("https://127.0.0.1:8443"),
      "bs-abc123-vsphere", "openshift-mtv"};
  json p = build_provider(b);
  EXPECT_EQ(validate(p, "providers"), std::vector<std::string>{});
  EXPECT_EQ(p["spec"]["url"], "https://127.0.0.1:8443/sdk");
  EXPECT_EQ(p["spec"]["type"], "vsphere");
  EXPECT_EQ(p["spec"]["secret"]["name"], "bs-abc123-vsphere");
  EXPECT_EQ(p["metadata"]["labels"][kRunLabel], "abc123");
  json host =
      build_provider(ProviderBuild{"bs-abc123-host", "openshift-mtv", "abc123", "openshift", "", "", ""});
  EXPECT_EQ(validate(host, "providers"), std::vector<std::string>{});
  EXPECT_EQ(host["spec"]["url"], "");
}

TEST(ForkliftObjects, SdkUrlKeepsNonDefaultPortsOnly) {
  EXPECT_EQ(vsphere_sdk_url("https://vcenter.example.com"), "https://vcenter.example.com/sdk");
  EXPECT_EQ(vsphere_sdk_url("https://vcenter.example.com:443/"), "https://vcenter.example.com/sdk");
  EXPECT_EQ(vsphere_sdk_url("https://10.0.0.5:8443/api"), "https://10.0.0.5:8443/sdk");
}

TEST(ForkliftObjects, SecretCarriesForkliftKeysBase64) {
  SecretBuild b;
  b.name = "bs-abc123-vsphere";
  b.namespace_ = "openshift-mtv";
  b.run_id = "abc123";
  b.user = "administrator@vsphere.local";
  b.password = "s3cret!";
  b.ca_pem = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
  json s = build_secret(b);
  EXPECT_EQ(s["kind"], "Secret");
  EXPECT_EQ(base64_decode(s["data"]["user"].get<std::string>()), std::optional<std::string>(b.user));
  EXPECT_EQ(base64_decode(s["data"]["password"].get<std::string>()), std::optional<std::string>(b.password));
  EXPECT_EQ(base64_decode(s["data"]["cacert"].get<std::string>()), std::optional<std::string>(b.ca_pem));
  EXPECT_EQ(base64_decode(s["data"]["insecureSkipVerify"].get<std::string>()),
            std::optional<std::string>("false"));
  EXPECT_EQ(s["metadata"]["labels"][kRunLabel], "abc123");
  b.ca_pem.clear();
  b.insecure_skip_verify = true;
  s = build_secret(b);
  EXPECT_FALSE(s["data"].contains("cacert"));
  EXPECT_EQ(base64_decode(s["data"]["insecureSkipVerify"].get<std::string>()),
            std::optional<std::string>("true"));
}

TEST(ForkliftObjects, MapsValidateAndDistinguishIdsFromNames) {
  std::vector<NetworkMapping> nets = {{"VM Network", "pod", "", ""},
                                      {"network-12", "multus", "vlan10", "nets"},
                                      {"dvportgroup-3", "ignored", "", ""}};
  json nm = build_network_map("bs-abc123-m", "openshift-mtv", "abc123", kSource, kHost, nets);
  EXPECT_EQ(validate(nm, "networkmaps"), std::vector<std::string>{});
  EXPECT_EQ(nm["spec"]["map"][0]["source"], json({{"name", "VM Network"}}));
  EXPECT_EQ(nm["spec"]["map"][1]["source"], json({{"id", "network-12"}}));
  EXPECT_EQ(nm["spec"]["map"][1]["destination"],
            json({{"type", "multus"}, {"name", "vlan10"}, {"namespace", "nets"}}));
  EXPECT_EQ(nm["spec"]["map"][2]["destination"], json({{"type", "ignored"}}));
  EXPECT_EQ(nm["spec"]["provider"]["source"],
            json({{"name", kSource.name}, {"namespace", kSource.namespace_}}));
  std::vector<StorageMapping> ds = {{"tolly-aff-ds01", "rbd", "", ""},
                                    {"datastore-7", "ceph", "ReadWriteMany", "Block"}};
  json sm = build_storage_map("bs-abc123-m", "openshift-mtv", "abc123", kSource, kHost, ds);
  EXPECT_EQ(validate(sm, "storagemaps"), std::vector<std::string>{});
  EXPECT_EQ(sm["spec"]["map"][0]["source"], json({{"name", "tolly-aff-ds01"}}));
  EXPECT_EQ(sm["spec"]["map"][1]["source"], json({{"id", "datastore-7"}}));
  EXPECT_EQ(sm["spec"]["map"][1]["destination"],
            json({{"storageClass", "ceph"}, {"accessMode", "ReadWriteMany"}, {"volumeMode", "Block"}}));
}

TEST(ForkliftObjects, PlanAndMigrationValidate) {
  PlanBuild b;
  b.name = "bs-abc123-m";
  b.namespace_ = "openshift-mtv";
  b.run_id = "abc123";
  b.source = kSource;
  b.destination = kHost;
  b.network_map = b.storage_map = {"bs-abc123-m", "openshift-mtv"};
  b.target_namespace = "migrated";
  b.vm_names = {"desk-01", "desk-02"};
  b.description = "test";
  json plan = build_plan(b);
  EXPECT_EQ(validate(plan, "plans"), std::vector<std::string>{});
  EXPECT_EQ(plan["spec"]["type"], "cold");
  EXPECT_EQ(plan["spec"]["warm"], false);
  EXPECT_EQ(plan["spec"]["targetPowerState"], "off");
  EXPECT_EQ(plan["spec"]["targetLabels"][kRunLabel], "abc123");
  EXPECT_EQ(plan["spec"]["vms"], json::parse(R"([{"name":"desk-01"},{"name":"desk-02"}])"));
  b.warm = true;
  plan = build_plan(b);
  EXPECT_EQ(validate(plan, "plans"), std::vector<std::string>{});
  EXPECT_EQ(plan["spec"]["type"], "warm");
  json m = build_migration("bs-abc123-m", "openshift-mtv", "abc123", Ref{"bs-abc123-m", "openshift-mtv"});
  EXPECT_EQ(validate(m, "migrations"), std::vector<std::string>{});
  EXPECT_EQ(m["spec"]["plan"]["name"], "bs-abc123-m");
}

TEST(ForkliftObjects, EveryDryRunObjectValidatesAndNoSecretLeaks) {
  auto loaded = load_migration_plan_file(std::string(BOOTSTORM_SOURCE_DIR) +
                                         "/plans/migrate-vsphere-to-openshift.yaml");
  ASSERT_TRUE(loaded.plan);
  auto calls = dry_run_calls(*loaded.plan, "abc123");
  std::map<std::string, std::string> kinds = {{"/secrets", ""},
                                              {"/providers", "providers"},
                                              {"/networkmaps", "networkmaps"},
                                              {"/storagemaps", "storagemaps"},
                                              {"/plans", "plans"},
                                              {"/migrations", "migrations"}};
  int posts = 0;
  for (const auto& c : calls) {
    if (c.rfind("POST /apis/forklift", 0) != 0 &&
        c.rfind("POST /api/v1/namespaces/openshift-mtv/secrets", 0) != 0)
      continue;
    auto space = c.find(' ', 5);
    auto brace = c.find('{');
    ASSERT_NE(brace, std::string::npos) << c;
    std::string path = c.substr(5, space - 5);
    std::string body = c.substr(brace);
    if (auto extra = body.rfind(" ("); extra != std::string::npos && body.back() == ')')
      body = body.substr(0, extra);
    json obj = json::parse(body);
    ++posts;
    EXPECT_EQ(obj["metadata"]["labels"][kRunLabel], "abc123") << c;
    for (const auto& [suffix, plural] : kinds) {
      if (path.size() >= suffix.size() &&
          path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0 && !plural.empty()) {
        EXPECT_EQ(validate(obj, plural), std::vector<std::string>{}) << c;
      }
    }
  }
  EXPECT_EQ(posts, 7);  // Secret, vsphere Provider, host Provider, NetworkMap, StorageMap, Plan, Migration
  std::string all;
  for (const auto& c : calls) all += c + "\n";
  EXPECT_NE(all.find("<redacted>"), std::string::npos);
  // fromStorm: the Plan names the clones the vSphere storm will create.
  EXPECT_NE(all.find("bs-abc123-vsphere-desktops-001"), std::string::npos);
  EXPECT_NE(all.find("https://<embedded vCenter>/sdk"), std::string::npos);
}

TEST(ForkliftObjects, ObjectNamesCarryTheRunId) {
  EXPECT_EQ(object_name("abc123", "vsphere"), "bs-abc123-vsphere");
  EXPECT_EQ(forklift_object("ns", "plans", "p"), "/apis/forklift.konveyor.io/v1beta1/namespaces/ns/plans/p");
  EXPECT_EQ(vm_path("t", "v"), "/apis/kubevirt.io/v1/namespaces/t/virtualmachines/v");
}

}  // namespace
}  // namespace bootstorm::migrate

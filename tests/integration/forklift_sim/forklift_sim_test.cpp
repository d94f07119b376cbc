// The simulator's Forklift controller end to end: a LabServer (vCenter + Kubernetes fronts over HTTPS on
// loopback, port 0, real time) with the "small" lab slowed down so that disk transfers take about a second.
// Objects are created with raw HTTP (protocol/http client) and with kubectl apply; every Forklift status
// body is validated against the CRD schemas in api-specs/forklift.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/base64.hpp"
#include "protocol/http/client.hpp"
#include "simulator/kube/kube_front.hpp"
#include "simulator/lab/lab_server.hpp"
#include "tests/integration/kube_front/kube_test_support.hpp"
#include "tests/support/scratch_dir.hpp"
#include "tests/support/swagger/swagger_validator.hpp"
#include "tests/support/tools.hpp"

namespace bootstorm::sim {
namespace {

namespace asio = boost::asio;
using json = nlohmann::json;
using namespace std::chrono_literals;

constexpr double kDiskUsedGb = 0.2;    // 200 MB moved per VM
constexpr double kTargetDsMBps = 200;  // the destination datastore: the transfers' bottleneck

// YAML (a CRD) -> JSON, keeping quoted scalars as strings.
json to_json(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map: {
      json out = json::object();
      for (const auto& entry : node) out[entry.first.Scalar()] = to_json(entry.second);
      return out;
    }
    case YAML::NodeType::Sequence: {
      json out = json::array();
      for (const auto& item : node) out.push_back(to_json(item));
      return out;
    }
    case YAML::NodeType::Scalar: {
      const std::string& s = node.Scalar();
      if (node.Tag() == "!") return s;
      if (s == "true") return true;
      if (s == "false") return false;
      if (!s.empty() && s.find_first_not_of("0123456789-") == std::string::npos) {
        try {
          return std::stoll(s);
        } catch (...) {
          return s;
        }
      }
      return s;
    }
    default:
      return nullptr;
  }
}

// The openAPIV3Schema of a Forklift CRD.
json crd_schema(const std::string& plural) {
  std::string path = std::string(BOOTSTORM_API_SPECS) + "/forklift/forklift.konveyor.io_" + plural + ".yaml";
  YAML::Node crd = YAML::LoadFile(path);
  return to_json(crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]);
}

std::string schema_problems(const json& object, const std::string& plural) {
  static std::map<std::string, json> cache;
  auto it = cache.find(plural);
  if (it == cache.end()) it = cache.emplace(plural, crd_schema(plural)).first;
  bootstorm::testing::SwaggerSpec spec(json{{"definitions", json::object()}});
  return bootstorm::testing::join(spec.validate_schema(object, it->second));
}

// A nested member, or null when any step is missing (the const operator[] asserts on missing keys).
const json& dig(const json& object, std::initializer_list<const char*> path) {
  static const json kNull;
  const json* node = &object;
  for (const char* key : path) {
    if (!node->is_object() || !node->contains(key)) return kNull;
    node = &(*node)[key];
  }
  return *node;
}

// The kube front's own contract checker for the KubeVirt and CDI swaggers (tests/integration/kube_front).
kube::testing::SwaggerValidator& kubevirt_spec() {
  static kube::testing::SwaggerValidator spec(std::string(BOOTSTORM_API_SPECS) +
                                              "/kubevirt/kubevirt-swagger.json");
  return spec;
}

kube::testing::SwaggerValidator& cdi_spec() {
  static kube::testing::SwaggerValidator spec(std::string(BOOTSTORM_API_SPECS) +
                                              "/kubevirt/cdi-swagger.json");
  return spec;
}

const json* find_condition(const json& object, const std::string& type) {
  if (!object.is_object() || !object.contains("status") || !object["status"].contains("conditions"))
    return nullptr;
  const json& conditions = object["status"]["conditions"];
  if (!conditions.is_array()) return nullptr;
  for (const auto& c : conditions) {
    if (c.value("type", "") == type) return &c;
  }
  return nullptr;
}

bool has_true(const json& object, const std::string& type) {
  const json* c = find_condition(object, type);
  return c && c->value("status", "") == "True";
}

const json* find_vm(const json& vms, const std::string& name) {
  for (const auto& vm : vms) {
    if (vm.value("name", "") == name) return &vm;
  }
  return nullptr;
}

class ForkliftSimTest : public ::testing::Test {
 protected:
  void SetUp() override { start({}); }

  void TearDown() override { server_.reset(); }

  void start(const std::function<void(model::LabSpec&)>& tweak) {
    auto spec = model::load_lab_spec("small");
    ASSERT_TRUE(spec) << spec.error().what();
    for (auto& profile : spec->profiles) profile.disk_used_gb = kDiskUsedGb;
    for (auto& ds : spec->datastores) {
      if (ds.name == spec->kube.datastore) ds.mbps = kTargetDsMBps;
    }
    if (tweak) tweak(*spec);
    LabServerOptions options;
    options.spec = *spec;
    kube::KubeFrontOptions kube_options;
    kube_options.progress_interval_s = 0.1;
    kube_options.forklift_max_vm_inflight = max_inflight_;
    // A handler-owned front: the lab server destroys it with its kube server, before the lab.
    options.kube_handler_factory = [kube_options](model::Lab& lab) {
      return kube::make_kube_handler(lab, kube_options);
    };
    server_.reset();
    vc_session_.clear();
    auto server = LabServer::start(options);
    ASSERT_TRUE(server) << server.error().what();
    server_ = std::move(*server);
  }

  http::Response call(const std::string& base, const std::string& method, const std::string& target,
                      const std::string& body, const http::Headers& headers,
                      const std::string& content_type = "application/json") {
    asio::io_context io;
    http::ClientOptions options;
    options.base_url = base;
    options.tls.ca_data = server_->endpoints().ca_pem;
    options.retry.max_attempts = 1;
    http::Client client(io.get_executor(), options);
    http::Request request(method, target, body);
    request.headers = headers;
    if (!body.empty()) request.headers.emplace_back("Content-Type", content_type);
    request.headers.emplace_back("Accept", "application/json");
    std::optional<Expected<http::Response>> out;
    asio::co_spawn(
        io, [&]() -> asio::awaitable<void> { out.emplace(co_await client.request(request)); },
        asio::detached);
    io.run();
    if (!out || !out->has_value()) {
      ADD_FAILURE() << method << " " << target << ": " << (out ? out->error().what() : "no result");
      return {};
    }
    return std::move(**out);
  }

  http::Response kube(const std::string& method, const std::string& target, const std::string& body = "",
                      const std::string& content_type = "application/json") {
    return call(server_->endpoints().kube_url, method, target, body,
                {{"Authorization", "Bearer " + server_->endpoints().kube_token}}, content_type);
  }

  json get(const std::string& target) {
    auto response = kube("GET", target);
    EXPECT_EQ(response.status, 200) << target << ": " << response.body;
    return json::parse(response.body, nullptr, false);
  }

  void post(const std::string& collection, const json& object) {
    auto response = kube("POST", collection, object.dump());
    ASSERT_EQ(response.status, 201) << collection << ": " << response.body;
  }

  json wait_for(const std::string& target, const std::function<bool(const json&)>& pred,
                std::chrono::milliseconds timeout = 30s) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    json last;
    while (std::chrono::steady_clock::now() < deadline) {
      auto response = kube("GET", target);
      last = json::parse(response.body, nullptr, false);
      if (response.status == 200 && pred(last)) return last;
      std::this_thread::sleep_for(50ms);
    }
    ADD_FAILURE() << "timed out waiting on " << target << "; last: " << last.dump().substr(0, 3000);
    return last;
  }

  // A vCenter REST call with a session (logged in on first use).
  http::Response vcenter(const std::string& method, const std::string& target, const std::string& body = "") {
    const auto& ep = server_->endpoints();
    if (vc_session_.empty()) {
      auto login = call(ep.vcenter_url, "POST", "/api/session", "",
                        {{"Authorization", "Basic " + base64_encode(ep.username + ":" + ep.password)}});
      EXPECT_EQ(login.status, 201) << login.body;
      vc_session_ = json::parse(login.body).get<std::string>();
    }
    return call(ep.vcenter_url, method, target, body, {{"vmware-api-session-id", vc_session_}});
  }

  std::string vcenter_vm_id(const std::string& name) {
    auto found = vcenter("GET", "/api/vcenter/vm?names=" + name);
    EXPECT_EQ(found.status, 200);
    json list = json::parse(found.body);
    return list.empty() ? std::string() : list[0]["vm"].get<std::string>();
  }

  // Clones source VMs through the vCenter REST front, like a previous bootstorm run does.
  void clone_source_vms(const std::vector<std::string>& names) {
    std::string golden_id = vcenter_vm_id("tiny-golden");
    for (const auto& name : names) {
      auto clone =
          vcenter("POST", "/api/vcenter/vm?action=clone", json{{"source", golden_id}, {"name", name}}.dump());
      ASSERT_EQ(clone.status, 200) << clone.body;
    }
  }

  // Secret, vsphere Provider, host Provider, NetworkMap and StorageMap in `ns` (created when missing).
  void create_providers_and_maps(const std::string& ns) {
    const auto& ep = server_->endpoints();
    if (kube("GET", "/api/v1/namespaces/" + ns).status == 404) {
      post("/api/v1/namespaces", {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", ns}}}});
    }
    post("/api/v1/namespaces/" + ns + "/secrets",
         {{"apiVersion", "v1"},
          {"kind", "Secret"},
          {"metadata", {{"name", "vcenter-creds"}, {"namespace", ns}}},
          {"type", "Opaque"},
          {"data",
           {{"user", base64_encode(ep.username)},
            {"password", base64_encode(ep.password)},
            {"cacert", base64_encode(ep.ca_pem)}}}});
    std::string api = "/apis/forklift.konveyor.io/v1beta1/namespaces/" + ns;
    post(api + "/providers", {{"apiVersion", "forklift.konveyor.io/v1beta1"},
                              {"kind", "Provider"},
                              {"metadata", {{"name", "vcenter"}, {"namespace", ns}}},
                              {"spec",
                               {{"type", "vsphere"},
                                {"url", ep.vcenter_url + "/sdk"},
                                {"secret", {{"name", "vcenter-creds"}, {"namespace", ns}}}}}});
    post(api + "/providers", {{"apiVersion", "forklift.konveyor.io/v1beta1"},
                              {"kind", "Provider"},
                              {"metadata", {{"name", "host"}, {"namespace", ns}}},
                              {"spec", {{"type", "openshift"}, {"url", ""}, {"secret", json::object()}}}});
    json providers = {{"source", {{"name", "vcenter"}, {"namespace", ns}}},
                      {"destination", {{"name", "host"}, {"namespace", ns}}}};
    post(api + "/networkmaps",
         {{"apiVersion", "forklift.konveyor.io/v1beta1"},
          {"kind", "NetworkMap"},
          {"metadata", {{"name", "net"}, {"namespace", ns}}},
          {"spec",
           {{"provider", providers},
            {"map",
             json::array({{{"source", {{"name", "VM Network"}}}, {"destination", {{"type", "pod"}}}}})}}}});
    post(api + "/storagemaps",
         {{"apiVersion", "forklift.konveyor.io/v1beta1"},
          {"kind", "StorageMap"},
          {"metadata", {{"name", "storage"}, {"namespace", ns}}},
          {"spec",
           {{"provider", providers},
            {"map", json::array({{{"source", {{"name", "lab-ds01"}}},
                                  {"destination", {{"storageClass", "lab-rbd"}}}}})}}}});
  }

  void create_plan(const std::string& ns, const std::string& name, const json& vms,
                   const std::string& target_ns = "migrated") {
    post("/apis/forklift.konveyor.io/v1beta1/namespaces/" + ns + "/plans",
         {{"apiVersion", "forklift.konveyor.io/v1beta1"},
          {"kind", "Plan"},
          {"metadata", {{"name", name}, {"namespace", ns}, {"labels", {{"bootstorm.io/run", "run-42"}}}}},
          {"spec",
           {{"targetNamespace", target_ns},
            {"type", "cold"},
            {"provider",
             {{"source", {{"name", "vcenter"}, {"namespace", ns}}},
              {"destination", {{"name", "host"}, {"namespace", ns}}}}},
            {"map",
             {{"network", {{"name", "net"}, {"namespace", ns}}},
              {"storage", {{"name", "storage"}, {"namespace", ns}}}}},
            {"vms", vms}}}});
  }

  void create_migration(const std::string& ns, const std::string& name, const std::string& plan) {
    post("/apis/forklift.konveyor.io/v1beta1/namespaces/" + ns + "/migrations",
         {{"apiVersion", "forklift.konveyor.io/v1beta1"},
          {"kind", "Migration"},
          {"metadata", {{"name", name}, {"namespace", ns}}},
          {"spec", {{"plan", {{"name", plan}, {"namespace", ns}}}}}});
  }

  std::string forklift(const std::string& ns, const std::string& plural, const std::string& name) {
    return "/apis/forklift.konveyor.io/v1beta1/namespaces/" + ns + "/" + plural + "/" + name;
  }

  json truth_migration(const std::string& key) {
    json truth = json::parse(call(server_->endpoints().kube_url, "GET", "/_lab/truth", "", {}).body);
    for (const auto& m : truth["migrations"]) {
      if (m.value("migration", "") == key) return m;
    }
    ADD_FAILURE() << "no truth for " << key << ": " << truth.dump().substr(0, 2000);
    return json::object();
  }

  std::size_t max_inflight_ = 20;
  std::string vc_session_;
  std::unique_ptr<LabServer> server_;
};

// Every pipeline step of a VM in order, started after the previous one completed, times monotonic.
void expect_ordered_steps(const json& truth_vm, std::size_t count = 4) {
  static const char* kOrder[] = {"Initialize", "DiskTransfer", "ImageConversion", "VirtualMachineCreation"};
  const json& steps = truth_vm["steps"];
  ASSERT_EQ(steps.size(), count) << truth_vm.dump();
  double previous = truth_vm.value("started", 0.0);
  for (std::size_t i = 0; i < steps.size(); ++i) {
    EXPECT_EQ(steps[i]["name"], kOrder[i]);
    double started = steps[i]["started"].get<double>();
    double completed = steps[i]["completed"].get<double>();
    EXPECT_GE(started, previous - 1e-9) << steps[i].dump();
    EXPECT_GE(completed, started) << steps[i].dump();
    previous = completed;
  }
  EXPECT_GE(truth_vm.value("completed", 0.0), previous - 1e-9);
}

TEST_F(ForkliftSimTest, ProvidersReportConnectionAndSecretProblemsLikeForklift) {
  const auto& ep = server_->endpoints();
  create_providers_and_maps("mtv");
  json vcenter =
      wait_for(forklift("mtv", "providers", "vcenter"), [](const json& p) { return has_true(p, "Ready"); });
  for (const char* type : {"ConnectionTestSucceeded", "InventoryCreated", "Validated", "Ready"}) {
    EXPECT_TRUE(has_true(vcenter, type)) << type << ": " << vcenter["status"].dump();
  }
  EXPECT_EQ(vcenter["status"]["phase"], "Ready");
  EXPECT_EQ(find_condition(vcenter, "ConnectionTestSucceeded")->value("category", ""), "Required");
  EXPECT_EQ(find_condition(vcenter, "Validated")->value("message", ""), "Validation has been completed.");
  EXPECT_EQ(schema_problems(vcenter, "providers"), "");
  json tampered = vcenter;  // the check has teeth: an undeclared field and a wrong type are reported
  tampered["status"]["bogus"] = 1;
  tampered["status"]["conditions"][0]["status"] = true;
  EXPECT_NE(schema_problems(tampered, "providers"), "");
  json host =
      wait_for(forklift("mtv", "providers", "host"), [](const json& p) { return has_true(p, "Ready"); });
  EXPECT_EQ(schema_problems(host, "providers"), "");

  // Wrong password: ConnectionAuthFailed (Critical), phase ConnectionFailed, never Ready.
  auto secret = [&](const std::string& name, const json& data) {
    post("/api/v1/namespaces/mtv/secrets",
         {{"apiVersion", "v1"}, {"kind", "Secret"}, {"metadata", {{"name", name}}}, {"stringData", data}});
  };
  auto provider = [&](const std::string& name, const std::string& secret_name) {
    post("/apis/forklift.konveyor.io/v1beta1/namespaces/mtv/providers",
         {{"apiVersion", "forklift.konveyor.io/v1beta1"},
          {"kind", "Provider"},
          {"metadata", {{"name", name}}},
          {"spec",
           {{"type", "vsphere"},
            {"url", ep.vcenter_url + "/sdk"},
            {"secret", {{"name", secret_name}, {"namespace", "mtv"}}}}}});
  };
  secret("bad-password", {{"user", ep.username}, {"password", "nope"}, {"insecureSkipVerify", "true"}});
  provider("bad-password", "bad-password");
  json bad = wait_for(forklift("mtv", "providers", "bad-password"),
                      [](const json& p) { return find_condition(p, "ConnectionAuthFailed") != nullptr; });
  EXPECT_EQ(bad["status"]["phase"], "ConnectionFailed");
  EXPECT_EQ(find_condition(bad, "ConnectionAuthFailed")->value("category", ""), "Critical");
  EXPECT_FALSE(has_true(bad, "Ready"));
  EXPECT_TRUE(has_true(bad, "ConnectionInsecure"));  // insecureSkipVerify: the Warn condition
  EXPECT_EQ(schema_problems(bad, "providers"), "");

  // A secret without the password and without cacert (and not insecure): SecretNotValid DataErr naming them.
  secret("incomplete", {{"user", ep.username}});
  provider("incomplete", "incomplete");
  json incomplete = wait_for(forklift("mtv", "providers", "incomplete"),
                             [](const json& p) { return find_condition(p, "SecretNotValid") != nullptr; });
  const json* invalid = find_condition(incomplete, "SecretNotValid");
  EXPECT_EQ(invalid->value("reason", ""), "DataErr");
  EXPECT_EQ(invalid->at("items"), json::array({"password", "cacert"}));
  EXPECT_EQ(incomplete["status"]["phase"], "ValidationFailed");

  // A missing secret: NotFound; creating it later makes the provider Ready.
  provider("late", "late-secret");
  json late = wait_for(forklift("mtv", "providers", "late"),
                       [](const json& p) { return find_condition(p, "SecretNotValid") != nullptr; });
  EXPECT_EQ(find_condition(late, "SecretNotValid")->value("reason", ""), "NotFound");
  secret("late-secret", {{"user", ep.username}, {"password", ep.password}, {"cacert", ep.ca_pem}});
  wait_for(forklift("mtv", "providers", "late"), [](const json& p) { return has_true(p, "Ready"); });

  // Maps resolve their sources against the lab inventory.
  json net =
      wait_for(forklift("mtv", "networkmaps", "net"), [](const json& m) { return has_true(m, "Ready"); });
  EXPECT_EQ(net["status"]["references"][0]["id"], "network-1");
  EXPECT_EQ(schema_problems(net, "networkmaps"), "");
  json storage =
      wait_for(forklift("mtv", "storagemaps", "storage"), [](const json& m) { return has_true(m, "Ready"); });
  EXPECT_EQ(schema_problems(storage, "storagemaps"), "");
}

TEST_F(ForkliftSimTest, MigrationRunsThePipelineAndCreatesBootableVms) {
  clone_source_vms({"desk-a", "desk-b", "desk-c"});
  create_providers_and_maps("mtv");
  create_plan("mtv", "wave1",
              json::array({{{"name", "desk-a"}}, {{"name", "desk-b"}}, {{"name", "desk-c"}}}));
  json plan = wait_for(forklift("mtv", "plans", "wave1"), [](const json& p) { return has_true(p, "Ready"); });
  EXPECT_EQ(find_condition(plan, "Ready")->value("message", ""), "The migration plan is ready.");
  create_migration("mtv", "wave1-1", "wave1");

  // While it runs: Executing on the plan, progress in MB on DiskTransfer.
  json running = wait_for(forklift("mtv", "plans", "wave1"), [](const json& p) {
    const json& vms = dig(p, {"status", "migration", "vms"});
    if (!vms.is_array() || vms.empty()) return false;
    const json& step = vms[0]["pipeline"][1];
    return step["phase"] == "Running" && step["progress"]["completed"].get<long long>() > 0;
  });
  EXPECT_TRUE(has_true(running, "Executing"));
  EXPECT_EQ(running["status"]["migration"]["vms"][0]["pipeline"][1]["annotations"]["unit"], "MB");
  EXPECT_EQ(running["status"]["migration"]["vms"][0]["pipeline"][1]["progress"]["total"], 200);
  EXPECT_EQ(schema_problems(running, "plans"), "");

  json done =
      wait_for(forklift("mtv", "plans", "wave1"), [](const json& p) { return has_true(p, "Succeeded"); });
  EXPECT_FALSE(has_true(done, "Executing"));
  EXPECT_EQ(find_condition(done, "Succeeded")->value("message", ""), "The plan execution has SUCCEEDED.");
  EXPECT_EQ(schema_problems(done, "plans"), "");
  const json& vms = done["status"]["migration"]["vms"];
  ASSERT_EQ(vms.size(), 3u);
  for (const auto& vm : vms) {
    EXPECT_EQ(vm["phase"], "Completed");
    EXPECT_EQ(vm["conditions"][0]["type"], "Succeeded");
    ASSERT_EQ(vm["pipeline"].size(), 4u);
    for (const auto& step : vm["pipeline"]) {
      EXPECT_EQ(step["phase"], "Completed") << step.dump();
      EXPECT_EQ(step["progress"]["completed"], step["progress"]["total"]);
    }
    EXPECT_EQ(vm["pipeline"][1]["tasks"][0]["name"],
              "[lab-ds01] " + vm["name"].get<std::string>() + "/" + vm["name"].get<std::string>() + ".vmdk");
  }
  json migration = get(forklift("mtv", "migrations", "wave1-1"));
  EXPECT_TRUE(has_true(migration, "Succeeded"));
  EXPECT_EQ(migration["status"]["vms"].size(), 3u);
  EXPECT_EQ(schema_problems(migration, "migrations"), "");

  // Ground truth: steps in order; the three transfers share the destination datastore, so each takes about
  // 3 x 200 MB / 200 MB/s.
  json truth = truth_migration("mtv/wave1-1");
  EXPECT_EQ(truth["result"], "Succeeded");
  ASSERT_EQ(truth["vms"].size(), 3u);
  for (const auto& vm : truth["vms"]) {
    expect_ordered_steps(vm);
    const json& transfer = vm["steps"][1];
    double seconds = transfer["completed"].get<double>() - transfer["started"].get<double>();
    double expected = 3 * kDiskUsedGb * 1000 / kTargetDsMBps;
    EXPECT_NEAR(seconds, expected, expected * 0.2) << vm.dump();
    EXPECT_EQ(transfer["mb"], 200);
  }

  // The VMs exist in the target namespace with the plan's labels, Halted (the sources were off), their
  // volumes populated; one of them starts and boots with the source's guest profile.
  json target = get("/apis/kubevirt.io/v1/namespaces/migrated/virtualmachines");
  ASSERT_EQ(target["items"].size(), 3u);
  for (const auto& vm : target["items"]) {
    EXPECT_EQ(vm["metadata"]["labels"]["bootstorm.io/run"], "run-42");
    EXPECT_EQ(vm["metadata"]["labels"]["plan"], done["metadata"]["uid"]);
    EXPECT_EQ(vm["spec"]["runStrategy"], "Halted");
    std::string claim = vm["spec"]["template"]["spec"]["volumes"][0]["persistentVolumeClaim"]["claimName"];
    json pvc = get("/api/v1/namespaces/migrated/persistentvolumeclaims/" + claim);
    EXPECT_EQ(pvc["status"]["phase"], "Bound");
    json dv = get("/apis/cdi.kubevirt.io/v1beta1/namespaces/migrated/datavolumes/" + claim);
    EXPECT_EQ(dv["status"]["phase"], "Succeeded");
    // What the controller creates conforms to the KubeVirt and CDI APIs.
    EXPECT_EQ(kube::testing::join_errors(kubevirt_spec().validate(vm, "v1.VirtualMachine")), "");
    EXPECT_EQ(kube::testing::join_errors(cdi_spec().validate(dv, "v1beta1.DataVolume")), "");
  }
  ASSERT_EQ(
      kube("PUT", "/apis/subresources.kubevirt.io/v1/namespaces/migrated/virtualmachines/desk-a/start", "{}")
          .status,
      202);
  wait_for("/apis/kubevirt.io/v1/namespaces/migrated/virtualmachineinstances/desk-a", [](const json& vmi) {
    return dig(vmi, {"status", "phase"}) == "Running";
  });
  std::string profile = server_->run_on_lab([](model::Lab& lab) {
    const model::Vm* vm = lab.find_vm_by_name("desk-a", "migrated");
    return vm ? vm->profile : std::string();
  });
  EXPECT_EQ(profile, "tiny");
  // The source VMs stay on vCenter.
  EXPECT_TRUE(
      server_->run_on_lab([](model::Lab& lab) { return lab.find_vm_by_name("desk-a", "") != nullptr; }));
}

TEST_F(ForkliftSimTest, DiskTransferFaultFailsOneVmAndTheOthersComplete) {
  clone_source_vms({"desk-a", "desk-b", "desk-c"});
  auto faults = call(
      server_->endpoints().kube_url, "POST", "/_lab/faults",
      json{{"migrationFailures",
            json::array(
                {{{"vm", "desk-b"}, {"step", "DiskTransfer"}, {"reason", "VDDK read error: sector 4096"}}})}}
          .dump(),
      {});
  ASSERT_EQ(faults.status, 200) << faults.body;
  EXPECT_EQ(json::parse(faults.body)["migrationFailures"][0]["step"], "DiskTransfer");
  auto bad_fault =
      call(server_->endpoints().kube_url, "POST", "/_lab/faults",
           json{{"migrationFailures", json::array({{{"vm", "x"}, {"step", "Copy"}}})}}.dump(), {});
  EXPECT_EQ(bad_fault.status, 400);

  create_providers_and_maps("mtv");
  create_plan("mtv", "wave", json::array({{{"name", "desk-a"}}, {{"name", "desk-b"}}, {{"name", "desk-c"}}}));
  wait_for(forklift("mtv", "plans", "wave"), [](const json& p) { return has_true(p, "Ready"); });
  create_migration("mtv", "wave-1", "wave");
  json done = wait_for(forklift("mtv", "migrations", "wave-1"),
                       [](const json& m) { return has_true(m, "Failed") || has_true(m, "Succeeded"); });
  EXPECT_TRUE(has_true(done, "Failed"));
  EXPECT_EQ(schema_problems(done, "migrations"), "");
  const json* failed = find_vm(done["status"]["vms"], "desk-b");
  ASSERT_NE(failed, nullptr);
  EXPECT_EQ(failed->at("conditions")[0]["type"], "Failed");
  EXPECT_EQ(failed->at("error")["phase"], "CopyDisks");
  EXPECT_EQ(failed->at("error")["reasons"][0], "VDDK read error: sector 4096");
  const json& transfer = failed->at("pipeline")[1];
  EXPECT_EQ(transfer["name"], "DiskTransfer");
  EXPECT_EQ(transfer["error"]["reasons"][0], "VDDK read error: sector 4096");
  EXPECT_EQ(transfer["progress"]["completed"], 100);  // half-way through the copy
  EXPECT_EQ(failed->at("pipeline")[2]["phase"], "Pending");
  for (const char* name : {"desk-a", "desk-c"}) {
    const json* vm = find_vm(done["status"]["vms"], name);
    ASSERT_NE(vm, nullptr);
    EXPECT_EQ(vm->at("conditions")[0]["type"], "Succeeded") << name;
  }
  json plan = get(forklift("mtv", "plans", "wave"));
  EXPECT_EQ(find_condition(plan, "Failed")->value("message", ""), "The plan execution has FAILED.");
  EXPECT_EQ(schema_problems(plan, "plans"), "");
  EXPECT_EQ(kube("GET", "/apis/kubevirt.io/v1/namespaces/migrated/virtualmachines/desk-b").status, 404);
  EXPECT_EQ(kube("GET", "/apis/kubevirt.io/v1/namespaces/migrated/virtualmachines/desk-a").status, 200);
  json truth = truth_migration("mtv/wave-1");
  for (const auto& vm : truth["vms"]) {
    if (vm["name"] == "desk-b") {
      ASSERT_EQ(vm["steps"].size(), 2u);
      EXPECT_EQ(vm["steps"][1]["error"], "VDDK read error: sector 4096");
      EXPECT_EQ(vm["result"], "Failed");
    } else {
      expect_ordered_steps(vm);
    }
  }
}

TEST_F(ForkliftSimTest, CancelStopsTheListedVmOnly) {
  clone_source_vms({"desk-a", "desk-b"});
  create_providers_and_maps("mtv");
  create_plan("mtv", "wave", json::array({{{"name", "desk-a"}}, {{"name", "desk-b"}}}));
  wait_for(forklift("mtv", "plans", "wave"), [](const json& p) { return has_true(p, "Ready"); });
  create_migration("mtv", "wave-1", "wave");
  wait_for(forklift("mtv", "migrations", "wave-1"), [](const json& m) {
    const json& vms = dig(m, {"status", "vms"});
    return vms.is_array() && !vms.empty() && vms[0]["pipeline"][1]["phase"] == "Running";
  });
  auto patched = kube("PATCH", forklift("mtv", "migrations", "wave-1"),
                      json{{"spec", {{"cancel", json::array({{{"name", "desk-a"}}})}}}}.dump(),
                      "application/merge-patch+json");
  ASSERT_EQ(patched.status, 200) << patched.body;
  json done = wait_for(forklift("mtv", "migrations", "wave-1"), [](const json& m) {
    return !dig(m, {"status", "completed"}).is_null();
  });
  EXPECT_EQ(schema_problems(done, "migrations"), "");
  const json* canceled = find_vm(done["status"]["vms"], "desk-a");
  ASSERT_NE(canceled, nullptr);
  EXPECT_EQ(canceled->at("conditions")[0]["type"], "Canceled");
  EXPECT_EQ(canceled->at("phase"), "Completed");
  EXPECT_LT(canceled->at("pipeline")[1]["progress"]["completed"].get<long long>(), 200);
  EXPECT_EQ(find_vm(done["status"]["vms"], "desk-b")->at("conditions")[0]["type"], "Succeeded");
  EXPECT_TRUE(has_true(done, "Succeeded"));
  EXPECT_EQ(kube("GET", "/apis/kubevirt.io/v1/namespaces/migrated/virtualmachines/desk-a").status, 404);
  EXPECT_EQ(kube("GET", "/apis/kubevirt.io/v1/namespaces/migrated/virtualmachines/desk-b").status, 200);
  json truth = truth_migration("mtv/wave-1");
  for (const auto& vm : truth["vms"]) {
    if (vm["name"] == "desk-a") {
      EXPECT_EQ(vm["result"], "Canceled");
    }
  }
}

TEST_F(ForkliftSimTest, DeletingTheMigrationStopsIt) {
  clone_source_vms({"desk-a", "desk-b"});
  create_providers_and_maps("mtv");
  create_plan("mtv", "wave", json::array({{{"name", "desk-a"}}, {{"name", "desk-b"}}}));
  wait_for(forklift("mtv", "plans", "wave"), [](const json& p) { return has_true(p, "Ready"); });
  create_migration("mtv", "wave-1", "wave");
  wait_for(forklift("mtv", "migrations", "wave-1"), [](const json& m) {
    const json& vms = dig(m, {"status", "vms"});
    return vms.is_array() && !vms.empty() && vms[0]["pipeline"][1]["phase"] == "Running";
  });
  ASSERT_EQ(kube("DELETE", forklift("mtv", "migrations", "wave-1")).status, 200);
  json plan =
      wait_for(forklift("mtv", "plans", "wave"), [](const json& p) { return has_true(p, "Canceled"); });
  EXPECT_FALSE(has_true(plan, "Executing"));
  EXPECT_EQ(schema_problems(plan, "plans"), "");
  // The transfers would have finished 2 s after they started: nothing completes after the deletion.
  std::this_thread::sleep_for(2500ms);
  EXPECT_EQ(get("/apis/kubevirt.io/v1/namespaces/migrated/virtualmachines")["items"].size(), 0u);
  json truth = truth_migration("mtv/wave-1");
  EXPECT_EQ(truth["result"], "Canceled");
  for (const auto& vm : truth["vms"]) EXPECT_EQ(vm["result"], "Canceled");
}

TEST_F(ForkliftSimTest, PlanWithUnknownVmNamesItAndMigrationWaits) {
  clone_source_vms({"desk-a"});
  create_providers_and_maps("mtv");
  create_plan("mtv", "broken", json::array({{{"name", "desk-a"}}, {{"name", "no-such-vm"}}}));
  json plan = wait_for(forklift("mtv", "plans", "broken"),
                       [](const json& p) { return find_condition(p, "VMNotFound") != nullptr; });
  const json* not_found = find_condition(plan, "VMNotFound");
  EXPECT_EQ(not_found->value("category", ""), "Critical");
  EXPECT_EQ(not_found->value("message", ""), "VM not found.");
  ASSERT_EQ(not_found->at("items").size(), 1u);
  EXPECT_NE(not_found->at("items")[0].get<std::string>().find("name:'no-such-vm'"), std::string::npos);
  EXPECT_FALSE(has_true(plan, "Ready"));
  EXPECT_EQ(schema_problems(plan, "plans"), "");
  create_migration("mtv", "broken-1", "broken");
  json migration = wait_for(forklift("mtv", "migrations", "broken-1"),
                            [](const json& m) { return find_condition(m, "PlanNotReady") != nullptr; });
  EXPECT_TRUE(dig(migration, {"status", "vms"}).is_null());
  EXPECT_EQ(schema_problems(migration, "migrations"), "");
  // Cloning the missing VM on vCenter makes the plan valid.
  clone_source_vms({"no-such-vm"});
  wait_for(forklift("mtv", "plans", "broken"), [](const json& p) { return has_true(p, "Ready"); });
}

TEST_F(ForkliftSimTest, InFlightLimitQueuesVmsAndPoweredOnSourcesArePoweredOffThenRestored) {
  max_inflight_ = 1;
  start({});
  clone_source_vms({"desk-a", "desk-b"});
  std::string desk_b = vcenter_vm_id("desk-b");
  ASSERT_EQ(vcenter("POST", "/api/vcenter/vm/" + desk_b + "/power?action=start").status, 204);
  create_providers_and_maps("mtv");
  create_plan("mtv", "wave", json::array({{{"name", "desk-a"}}, {{"name", "desk-b"}}}));
  wait_for(forklift("mtv", "plans", "wave"), [](const json& p) { return has_true(p, "Ready"); });
  create_migration("mtv", "wave-1", "wave");
  json done = wait_for(forklift("mtv", "migrations", "wave-1"),
                       [](const json& m) { return has_true(m, "Succeeded"); });
  EXPECT_EQ(find_vm(done["status"]["vms"], "desk-a")->at("restorePowerState"), "Off");
  EXPECT_EQ(find_vm(done["status"]["vms"], "desk-b")->at("restorePowerState"), "On");
  // Cold migration powered the source off; the target gets its power state back (targetPowerState auto).
  auto power = vcenter("GET", "/api/vcenter/vm/" + desk_b + "/power");
  EXPECT_EQ(json::parse(power.body)["state"], "POWERED_OFF");
  EXPECT_EQ(get("/apis/kubevirt.io/v1/namespaces/migrated/virtualmachines/desk-b")["spec"]["runStrategy"],
            "Always");
  EXPECT_EQ(get("/apis/kubevirt.io/v1/namespaces/migrated/virtualmachines/desk-a")["spec"]["runStrategy"],
            "Halted");
  wait_for("/apis/kubevirt.io/v1/namespaces/migrated/virtualmachineinstances/desk-b", [](const json& vmi) {
    return dig(vmi, {"status", "phase"}) == "Running";
  });
  json truth = truth_migration("mtv/wave-1");
  ASSERT_EQ(truth["vms"].size(), 2u);
  // One at a time: the second starts when the first completes, and each transfer runs alone.
  EXPECT_GE(truth["vms"][1]["started"].get<double>(), truth["vms"][0]["completed"].get<double>() - 1e-9);
  for (const auto& vm : truth["vms"]) {
    const json& transfer = vm["steps"][1];
    double seconds = transfer["completed"].get<double>() - transfer["started"].get<double>();
    double expected = kDiskUsedGb * 1000 / kTargetDsMBps;
    EXPECT_NEAR(seconds, expected, expected * 0.25);
  }
}

// kubectl apply of the same objects, with the first kubectl on PATH.
TEST_F(ForkliftSimTest, KubectlApplyDrivesAMigration) {
  const auto kubectl_path = test_support::find_kubectl();
  if (!kubectl_path) BOOTSTORM_MISSING_KUBECTL("");
  const std::string kubectl_bin = kubectl_path->string();
  clone_source_vms({"desk-k"});
  const test_support::ScratchDir scratch("forklift-sim");
  const std::string dir = scratch.string();
  ASSERT_TRUE(server_->write_state(dir));
  const auto& ep = server_->endpoints();
  std::string manifest = dir + "/mtv.yaml";
  {
    std::ofstream out(manifest);
    out << "apiVersion: v1\nkind: Namespace\nmetadata: {name: mtv}\n---\n"
        << "apiVersion: v1\nkind: Secret\nmetadata: {name: creds, namespace: mtv}\nstringData:\n  user: "
        << ep.username << "\n  password: '" << ep.password << "'\n  insecureSkipVerify: 'true'\n---\n"
        << "apiVersion: forklift.konveyor.io/v1beta1\nkind: Provider\nmetadata: {name: vcenter, namespace: "
           "mtv}\n"
        << "spec: {type: vsphere, url: '" << ep.vcenter_url
        << "/sdk', secret: {name: creds, namespace: mtv}}\n---\n"
        << "apiVersion: forklift.konveyor.io/v1beta1\nkind: Provider\nmetadata: {name: host, namespace: "
           "mtv}\n"
        << "spec: {type: openshift, url: '', secret: {}}\n---\n"
        << "apiVersion: forklift.konveyor.io/v1beta1\nkind: NetworkMap\nmetadata: {name: net, namespace: "
           "mtv}\n"
        << "spec:\n  provider: {source: {name: vcenter, namespace: mtv}, destination: {name: host, "
           "namespace: mtv}}\n"
        << "  map: [{source: {id: network-1}, destination: {type: pod}}]\n---\n"
        << "apiVersion: forklift.konveyor.io/v1beta1\nkind: StorageMap\nmetadata: {name: storage, namespace: "
           "mtv}\n"
        << "spec:\n  provider: {source: {name: vcenter, namespace: mtv}, destination: {name: host, "
           "namespace: mtv}}\n"
        << "  map: [{source: {name: lab-ds01}, destination: {storageClass: lab-rbd}}]\n---\n"
        << "apiVersion: forklift.konveyor.io/v1beta1\nkind: Plan\nmetadata: {name: kplan, namespace: mtv}\n"
        << "spec:\n  targetNamespace: migrated\n  provider: {source: {name: vcenter, namespace: mtv}, "
        << "destination: {name: host, namespace: mtv}}\n  map: {network: {name: net, namespace: mtv}, "
        << "storage: {name: storage, namespace: mtv}}\n  vms: [{name: desk-k}]\n---\n"
        << "apiVersion: forklift.konveyor.io/v1beta1\nkind: Migration\nmetadata: {name: kplan-1, namespace: "
           "mtv}\n"
        << "spec: {plan: {name: kplan, namespace: mtv}}\n";
  }
  auto kubectl = [&](std::vector<std::string> args) {
    std::vector<std::string> all = {kubectl_bin, "--kubeconfig=" + dir + "/kubeconfig",
                                    "--cache-dir=" + dir + "/cache", "--request-timeout=20s"};
    all.insert(all.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : all) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::string output = dir + "/out.txt";
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, output.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    std::vector<std::string> env_strings = {"HOME=" + dir, "PATH=/usr/bin:/bin"};
    std::vector<char*> envp;
    for (auto& e : env_strings) envp.push_back(e.data());
    envp.push_back(nullptr);
    pid_t pid = 0;
    EXPECT_EQ(posix_spawn(&pid, kubectl_bin.c_str(), &actions, nullptr, argv.data(), envp.data()), 0);
    posix_spawn_file_actions_destroy(&actions);
    int status = 0;
    waitpid(pid, &status, 0);
    std::ifstream in(output);
    std::stringstream ss;
    ss << in.rdbuf();
    return std::make_pair(WIFEXITED(status) ? WEXITSTATUS(status) : -1, ss.str());
  };
  auto [rc, out] = kubectl({"apply", "-f", manifest});
  EXPECT_EQ(rc, 0) << out;
  // Applied in one go, the Migration is created before the Plan is Ready; it starts once the plan is.
  json done =
      wait_for(forklift("mtv", "plans", "kplan"), [](const json& p) { return has_true(p, "Succeeded"); });
  EXPECT_EQ(schema_problems(done, "plans"), "");
  auto [get_rc, table] = kubectl({"get", "plans.forklift.konveyor.io", "-n", "mtv"});
  EXPECT_EQ(get_rc, 0) << table;
  EXPECT_NE(table.find("kplan"), std::string::npos) << table;
  EXPECT_EQ(kube("GET", "/apis/kubevirt.io/v1/namespaces/migrated/virtualmachines/desk-k").status, 200);
}

}  // namespace
}  // namespace bootstorm::sim

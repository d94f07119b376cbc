#pragma once
// Shared by the fault suite, the safety-interlock tests and the secrets test: a `bootstorm lab serve` child
// on ephemeral loopback ports, the real `bootstorm` CLI as further children, and independent checks of what
// happened through the lab's own endpoints (/_lab/truth, /_lab/stats, /_lab/faults) and its platform APIs
// (vCenter REST, Kubernetes), spoken with the project's plain HTTP client (no provider code involved).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/base64.hpp"
#include "common/rfc3339.hpp"
#include "protocol/http/client.hpp"
#include "tests/support/lab_fixture.hpp"
#include "tests/support/plan_yaml.hpp"

extern char** environ;

namespace bootstorm::lab_harness {

namespace fs = std::filesystem;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

using test_support::Child;
using test_support::LabCliTest;
using test_support::read_file;
using test_support::write_file;

using CliResult = test_support::CliRun;

struct HttpResult {
  int status = 0;  // 0: no response (see error)
  std::string body;
  std::string error;
  json json_body() const { return json::parse(body, nullptr, false); }
};

// Blocking HTTPS requests to one origin of the lab, trusting the lab's CA. No retries: the tests read the
// lab as it is (faults never apply to /_lab, and the tests clear faults before reading the platform APIs).
class HttpsClient {
 public:
  HttpsClient(const std::string& base_url, const std::string& ca_file) {
    http::ClientOptions options;
    options.base_url = base_url;
    options.tls.ca_file = ca_file;
    options.max_connections = 4;
    options.retry.max_attempts = 1;
    client_ = std::make_unique<http::Client>(io_.get_executor(), options);
  }
  ~HttpsClient() {
    client_.reset();
    io_.restart();
    io_.poll();
  }

  HttpResult request(const std::string& method, const std::string& target, const std::string& body = {},
                     http::Headers headers = {}) {
    http::Request req(method, target, body);
    req.headers = std::move(headers);
    if (!body.empty()) req.headers.emplace_back("Content-Type", "application/json");
    req.timeout = std::chrono::seconds(30);
    HttpResult result;
    auto task = [&]() -> boost::asio::awaitable<void> {
      auto resp = co_await client_->request(std::move(req));
      if (resp) {
        result.status = resp->status;
        result.body = resp->body;
      } else {
        result.error = resp.error().what();
      }
    };
    io_.restart();
    boost::asio::co_spawn(io_, task(), boost::asio::detached);
    io_.run();
    return result;
  }

 private:
  boost::asio::io_context io_;
  std::unique_ptr<http::Client> client_;
};

// Knobs of the lab profile the tests write: the `small` lab with longer phases where a fault must hit a
// storm or a provisioning that is still under way, and unique credentials for the secrets test.
struct LabKnobs {
  double firmware_s = 0.004;        // fixed time of the first boot phase (small lab: 4 ms)
  double clone_overhead_s = 0.005;  // task overhead of every clone
  std::string vcenter_password;     // empty: the small lab's
  std::string kube_token;           // empty: the small lab's
  std::string faults_yaml;          // appended as `faults:` when not empty
};

inline std::string replace_once(std::string text, const std::string& from, const std::string& to) {
  auto pos = text.find(from);
  if (pos == std::string::npos) throw std::runtime_error("lab template has no '" + from + "'");
  return text.replace(pos, from.size(), to);
}

inline std::string lab_profile(const LabKnobs& knobs) {
  std::string lab = read_file(fs::path(BOOTSTORM_SOURCE_DIR) / "simulator/labs/small.yaml");
  lab = replace_once(lab, "fixedS: 0.004", "fixedS: " + std::to_string(knobs.firmware_s));
  lab =
      replace_once(lab, "cloneOverheadS: 0.005", "cloneOverheadS: " + std::to_string(knobs.clone_overhead_s));
  if (!knobs.vcenter_password.empty())
    lab = replace_once(lab, "password: small-lab-password", "password: " + knobs.vcenter_password);
  if (!knobs.kube_token.empty())
    lab = replace_once(lab, "token: small-lab-kube-token-0123456789", "token: " + knobs.kube_token);
  if (!knobs.faults_yaml.empty()) lab += "\nfaults: " + knobs.faults_yaml + "\n";
  return lab;
}

// Milestones the providers observe themselves (the others come from the engine: beacon, port probe).
inline const std::set<std::string>& provider_milestones(const std::string& platform) {
  static const std::set<std::string> vsphere = {"running", "guest_agent", "ip_assigned"};
  static const std::set<std::string> kubevirt = {"scheduled", "running", "guest_agent", "ip_assigned"};
  return platform == "vsphere" ? vsphere : kubevirt;
}

struct PlanKnobs {
  std::string platform = "vsphere";  // vsphere | kubevirt
  std::string name = "faults";
  int hosts = 2;
  int vms_per_host = 2;
  std::string timeout = "30s";
  std::string settle = "0s";
  std::string cleanup = "always";
  std::string ready = "{signal: guest_agent}";
  std::string endpoint;     // empty: lab:<state dir>
  std::string credentials;  // `credentials:` value, empty: none
  std::string tls;          // `tls:` value, empty: none
  std::string api_budget = "{requestsPerSecond: 1000, maxConcurrent: 32}";
};

inline constexpr const char* kNamespace = "bootstorm-faults";
inline constexpr const char* kForeignVm = "foreign-desktop";

inline int total_vms(const PlanKnobs& k) {
  return k.hosts * k.vms_per_host;
}

// The lab (a `bootstorm lab serve` child) and the helpers every test of these suites uses.
class LabFixture : public LabCliTest {
 protected:
  LabFixture() : LabCliTest("lab-harness") {}

  // Starts `bootstorm lab serve` on a profile written from `knobs`; fatal failure when it does not listen.
  void start_lab(const LabKnobs& knobs = {}) {
    const fs::path lab_file = dir_ / "lab.yaml";
    write_file(lab_file, lab_profile(knobs));
    LabCliTest::start_lab(lab_file.string());
    if (HasFatalFailure()) return;
    vcenter_ = std::make_unique<HttpsClient>(endpoints_["vcenter"].get<std::string>(),
                                             endpoints_["caFile"].get<std::string>());
    kube_ = std::make_unique<HttpsClient>(endpoints_["kube"].get<std::string>(),
                                          endpoints_["caFile"].get<std::string>());
  }

  HttpsClient& front(const std::string& platform) { return platform == "vsphere" ? *vcenter_ : *kube_; }

  json lab_get(const std::string& platform, const std::string& path) {
    HttpResult r = front(platform).request("GET", path);
    EXPECT_EQ(r.status, 200) << path << ": " << r.error << r.body;
    return r.json_body();
  }

  json set_faults(const std::string& platform, const json& faults) {
    HttpResult r = front(platform).request("POST", "/_lab/faults", faults.dump());
    EXPECT_EQ(r.status, 200) << r.error << r.body;
    return r.json_body();
  }

  void clear_faults(const std::string& platform) {
    set_faults(platform, {{"errorRate", 0.0},
                          {"latencyMs", 0.0},
                          {"latencyJitterMs", 0.0},
                          {"watchDropAfterS", 0.0},
                          {"expireSessions", false},
                          {"forceGoneRate", 0.0},
                          {"neverBootRate", 0.0},
                          {"neverBootVms", json::array()},
                          {"paths", json::array()}});
  }

  // ---------------------------------------------------------------------------------------- vCenter API
  std::string vcenter_session() {
    const std::string basic = base64_encode(endpoints_["username"].get<std::string>() + ":" +
                                            endpoints_["password"].get<std::string>());
    HttpResult r = vcenter_->request("POST", "/api/session", {}, {{"Authorization", "Basic " + basic}});
    EXPECT_EQ(r.status, 201) << r.error << r.body;
    json token = r.json_body();
    return token.is_string() ? token.get<std::string>() : std::string();
  }

  HttpResult vcenter_call(const std::string& method, const std::string& target,
                          const std::string& body = {}) {
    if (vcenter_token_.empty()) vcenter_token_ = vcenter_session();
    HttpResult r = vcenter_->request(method, target, body, {{"vmware-api-session-id", vcenter_token_}});
    if (r.status == 401) {  // the session-expiry fault drops every session, the test's too
      vcenter_token_ = vcenter_session();
      r = vcenter_->request(method, target, body, {{"vmware-api-session-id", vcenter_token_}});
    }
    return r;
  }

  // name -> {vm, name, power_state} of every VM vCenter lists.
  std::map<std::string, json> vcenter_vms() {
    std::map<std::string, json> out;
    HttpResult r = vcenter_call("GET", "/api/vcenter/vm");
    EXPECT_EQ(r.status, 200) << r.error << r.body;
    json list = r.json_body();
    if (list.is_array())
      for (const auto& vm : list) out[vm.value("name", "")] = vm;
    return out;
  }

  // ---------------------------------------------------------------------------------------- Kubernetes API
  HttpResult kube_call(const std::string& method, const std::string& target, const std::string& body = {}) {
    return kube_->request(method, target, body,
                          {{"Authorization", "Bearer " + endpoints_["kubeToken"].get<std::string>()}});
  }

  std::map<std::string, json> kube_list(const std::string& path) {
    std::map<std::string, json> out;
    HttpResult r = kube_call("GET", path);
    EXPECT_EQ(r.status, 200) << path << ": " << r.error << r.body;
    json list = r.json_body();
    if (list.is_object() && list.contains("items"))
      for (const auto& item : list["items"]) out[item["metadata"]["name"].get<std::string>()] = item;
    return out;
  }

  std::map<std::string, json> kube_vms() {
    return kube_list(std::string("/apis/kubevirt.io/v1/namespaces/") + kNamespace + "/virtualmachines");
  }

  // Every object in the run's namespace, by "kind/name": VMs, VMIs and DataVolumes.
  std::map<std::string, json> kube_objects() {
    std::map<std::string, json> out;
    const std::string ns = kNamespace;
    for (const auto& [kind, path] : std::vector<std::pair<std::string, std::string>>{
             {"VirtualMachine", "/apis/kubevirt.io/v1/namespaces/" + ns + "/virtualmachines"},
             {"VirtualMachineInstance", "/apis/kubevirt.io/v1/namespaces/" + ns + "/virtualmachineinstances"},
             {"DataVolume", "/apis/cdi.kubevirt.io/v1beta1/namespaces/" + ns + "/datavolumes"}})
      for (auto& [name, obj] : kube_list(path)) out[kind + "/" + name] = obj;
    return out;
  }

  // ---------------------------------------------------------------------------------------- foreign VM
  // A VM the run did not create (no run label, no run id in its name), next to the run's VMs: on vSphere a
  // clone of the golden VM on host-02, on Kubernetes a Halted VirtualMachine in the run's namespace.
  void create_foreign_vm(const std::string& platform) {
    if (platform == "vsphere") {
      HttpResult golden = vcenter_call("GET", "/api/vcenter/vm?names=tiny-golden");
      ASSERT_EQ(golden.status, 200) << golden.body;
      json list = golden.json_body();
      ASSERT_EQ(list.size(), 1u) << golden.body;
      HttpResult host = vcenter_call("GET", "/api/vcenter/host?names=host-02");
      ASSERT_EQ(host.status, 200) << host.body;
      const std::string host_id = host.json_body()[0]["host"].get<std::string>();
      json spec = {{"source", list[0]["vm"]}, {"name", kForeignVm}, {"placement", {{"host", host_id}}}};
      HttpResult clone = vcenter_call("POST", "/api/vcenter/vm?action=clone", spec.dump());
      ASSERT_EQ(clone.status, 200) << clone.body;
    } else {
      json ns = {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", kNamespace}}}};
      HttpResult created_ns = kube_call("POST", "/api/v1/namespaces", ns.dump());
      ASSERT_TRUE(created_ns.status == 201 || created_ns.status == 409) << created_ns.body;
      json vm = {
          {"apiVersion", "kubevirt.io/v1"},
          {"kind", "VirtualMachine"},
          {"metadata", {{"name", kForeignVm}, {"namespace", kNamespace}, {"labels", {{"app", "desktop"}}}}},
          {"spec",
           {{"runStrategy", "Halted"},
            {"template",
             {{"spec",
               {{"domain",
                 {{"devices", json::object()}, {"resources", {{"requests", {{"memory", "256Mi"}}}}}}}}}}}}}};
      HttpResult created =
          kube_call("POST", std::string("/apis/kubevirt.io/v1/namespaces/") + kNamespace + "/virtualmachines",
                    vm.dump());
      ASSERT_EQ(created.status, 201) << created.body;
    }
    foreign_before_ = foreign_vm(platform);
    ASSERT_FALSE(foreign_before_.is_null());
  }

  json foreign_vm(const std::string& platform) {
    if (platform == "vsphere") {
      auto vms = vcenter_vms();
      auto it = vms.find(kForeignVm);
      return it == vms.end() ? json() : it->second;
    }
    HttpResult r = kube_call("GET", std::string("/apis/kubevirt.io/v1/namespaces/") + kNamespace +
                                        "/virtualmachines/" + kForeignVm);
    return r.status == 200 ? r.json_body() : json();
  }

  // The foreign VM is still there, unchanged (same id and power state; on Kubernetes the same uid and
  // resourceVersion: not even a label was written).
  void expect_foreign_vm_untouched(const std::string& platform) {
    json now = foreign_vm(platform);
    ASSERT_FALSE(now.is_null()) << "the VM the run did not create was deleted";
    if (platform == "vsphere") {
      EXPECT_EQ(now["vm"], foreign_before_["vm"]);
      EXPECT_EQ(now["power_state"], foreign_before_["power_state"]);
    } else {
      EXPECT_EQ(now["metadata"]["uid"], foreign_before_["metadata"]["uid"]);
      EXPECT_EQ(now["metadata"]["resourceVersion"], foreign_before_["metadata"]["resourceVersion"])
          << "the foreign VM was modified: " << now.dump();
    }
  }

  // Nothing the platform lists carries the run id: no VM (vSphere), no VM, VMI or DataVolume (Kubernetes).
  void expect_nothing_of_run_left(const std::string& platform, const std::string& run_id) {
    ASSERT_EQ(run_id.size(), 6u);
    const std::string prefix = "bs-" + run_id + "-";
    if (platform == "vsphere") {
      for (const auto& [name, vm] : vcenter_vms())
        EXPECT_NE(name.rfind(prefix, 0), 0u) << "left behind: " << name;
    } else {
      for (const auto& [key, obj] : kube_objects()) {
        const std::string name = key.substr(key.find('/') + 1);
        EXPECT_NE(name.rfind(prefix, 0), 0u) << "left behind: " << key;
        const json labels = obj["metadata"].value("labels", json::object());
        EXPECT_NE(labels.value("bootstorm.io/run", ""), run_id) << "left behind: " << key;
      }
    }
  }

  // ---------------------------------------------------------------------------------------- the CLI
  std::string plan_text(const PlanKnobs& k, const fs::path& out) const {
    const bool vsphere = k.platform == "vsphere";
    test_support::PlanYaml p{
        .name = k.name,
        .platform = {.kind = k.platform,
                     .endpoint = k.endpoint.empty() ? "lab:" + state_.string() : k.endpoint},
        .golden = vsphere ? "{vm: tiny-golden, clone: linked}"
                          : "{dataSource: {name: fedora-golden, namespace: golden}, clone: auto}",
        .ns = vsphere ? "" : kNamespace,
        .scenarios = {{"faults", {}}},
        .storm = "{mode: simultaneous, timeout: " + k.timeout + ", settle: " + k.settle + "}",
        .ready = k.ready,
        .cleanup = k.cleanup,
        .output = out.string(),
        .extra = {"repeat: 1"}};
    if (!k.credentials.empty()) p.platform.extra.push_back("credentials: " + k.credentials);
    if (!k.tls.empty()) p.platform.extra.push_back("tls: " + k.tls);
    p.platform.extra.push_back("apiBudget: " + k.api_budget);
    for (int h = 0; h < k.hosts; ++h) {
      const std::string host = vsphere ? "host-0" + std::to_string(h + 1) : "worker-" + std::to_string(h);
      p.scenarios[0].placement.push_back({host, k.vms_per_host});
    }
    return p.text();
  }

  fs::path write_plan(const PlanKnobs& k, const fs::path& out) {
    const fs::path plan = dir_ / ("plan" + std::to_string(counter_++) + ".yaml");
    write_file(plan, plan_text(k, out));
    return plan;
  }

  static std::string run_id_of(const fs::path& run_dir) {
    const std::string name = run_dir.filename().string();
    return name.substr(name.rfind('-') + 1);
  }

  // journal.jsonl as events; a torn last line (what SIGKILL or a full disk may leave) is skipped.
  static std::vector<json> journal(const fs::path& run_dir) {
    std::vector<json> events;
    std::istringstream in(read_file(run_dir / "journal.jsonl"));
    for (std::string line; std::getline(in, line);) {
      if (line.empty()) continue;
      json e = json::parse(line, nullptr, false);
      if (!e.is_discarded()) events.push_back(std::move(e));
    }
    return events;
  }

  static std::size_t count_events(const std::vector<json>& events, const std::string& type) {
    std::size_t n = 0;
    for (const auto& e : events) n += e.value("type", "") == type;
    return n;
  }

  // Waits until `pred(journal events)` holds, the child exits (fatal), or the timeout.
  template <class Pred>
  bool wait_for_journal(Child& child, const fs::path& out, Pred pred, std::chrono::seconds timeout,
                        fs::path& run_dir) {
    const auto deadline = Clock::now() + timeout;
    while (Clock::now() < deadline) {
      if (child.wait_for(std::chrono::milliseconds(0))) return false;
      if (run_dir.empty()) run_dir = run_dir_in(out);
      if (!run_dir.empty() && pred(journal(run_dir))) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    return false;
  }

  // ---------------------------------------------------------------------------------------- truth
  // The simulator's truth for the run's VMs, by name.
  std::map<std::string, json> truth_of_run(const std::string& platform, const std::string& run_id) {
    std::map<std::string, json> out;
    json truth = lab_get(platform, "/_lab/truth");
    for (const auto& vm : truth.value("vms", json::array())) {
      const std::string name = vm.value("name", "");
      if (name.rfind("bs-" + run_id + "-", 0) == 0) out[name] = vm;
    }
    return out;
  }

  // No milestone that happened is lost, and none is invented. For every VM of the run that the simulator
  // saw start, every provider-observed milestone that happened before `cutoff(vm)` (unix seconds) is in the
  // journal; every milestone in the journal happened (truth has it) and was not observed earlier than it
  // happened (causality, allowing the stated resolution and 3 ms of rounding). Returns the number of
  // milestones compared.
  template <class Cutoff>
  int expect_no_milestone_lost(const std::string& platform, const std::vector<json>& events,
                               const std::map<std::string, json>& truth, Cutoff cutoff) {
    std::map<std::string, std::map<std::string, json>> journaled;  // vm -> milestone -> event
    for (const auto& e : events)
      if (e.value("type", "") == "milestone") journaled[e.value("vm", "")][e.value("milestone", "")] = e;
    int compared = 0;
    const auto& observed = provider_milestones(platform);
    for (const auto& [vm, t] : truth) {
      const double start = t.value("startReceived", 0.0);
      const double limit = cutoff(vm);
      const json milestones = t.value("milestones", json::object());
      for (const auto& [milestone, when] : milestones.items()) {
        if (!observed.count(milestone)) continue;
        const double at = when.template get<double>();
        if (at >= limit) continue;
        ++compared;
        auto vm_it = journaled.find(vm);
        const bool found = vm_it != journaled.end() && vm_it->second.count(milestone);
        EXPECT_TRUE(found) << vm << ": " << milestone << " happened " << (at - start)
                           << " s after its start but is not in the journal (lost)";
      }
    }
    for (const auto& [vm, milestones] : journaled) {
      auto t = truth.find(vm);
      for (const auto& [milestone, e] : milestones) {
        if (!observed.count(milestone)) continue;
        if (t == truth.end()) {
          ADD_FAILURE() << vm << ": journal has " << milestone << " but the lab never started it";
          continue;
        }
        const json tm = t->second.value("milestones", json::object());
        if (!tm.contains(milestone)) {
          ADD_FAILURE() << vm << ": journal has " << milestone << " which never happened";
          continue;
        }
        const double true_offset =
            tm[milestone].template get<double>() - t->second.value("startReceived", 0.0);
        EXPECT_GE(e.value("offsetS", 0.0), true_offset - e.value("resolutionS", 0.0) - 0.003)
            << vm << ": " << milestone << " observed before it happened";
      }
    }
    return compared;
  }

  std::unique_ptr<HttpsClient> vcenter_;
  std::unique_ptr<HttpsClient> kube_;
  std::string vcenter_token_;
  json foreign_before_;
};

// Unix seconds of a journal time; 0 when it is not RFC 3339.
inline double unix_of_rfc3339(const std::string& s) {
  auto t = bootstorm::parse_rfc3339(s);
  return t ? std::chrono::duration<double>(t->time_since_epoch()).count() : 0;
}

inline double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace bootstorm::lab_harness

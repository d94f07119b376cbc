// deploy/kubernetes: every manifest parses and is a well-formed object; the Jobs, Service, PVC and RBAC refer
// to each other correctly; the Indexed Job passes its completion index as --shard; the RBAC rules use no
// wildcards and allow exactly the API calls the providers make — collected from the lab simulator's
// /_lab/stats "byAuthorization" after a real KubeVirt storm, a `bootstorm cleanup` and a `bootstorm migrate`
// against `bootstorm lab serve` (subprocesses).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/plan_yaml.hpp"
#include "tests/support/tools.hpp"

extern char** environ;

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

const fs::path kManifests = fs::path(BOOTSTORM_SOURCE_DIR) / "deploy" / "kubernetes";
const std::string kBinary = std::string(BOOTSTORM_BINARY_DIR) + "/bootstorm";

struct Doc {
  std::string file;
  YAML::Node node;
  std::string kind() const { return node["kind"].as<std::string>(""); }
  std::string name() const { return node["metadata"]["name"].as<std::string>(""); }
  std::string ns() const { return node["metadata"]["namespace"].as<std::string>(""); }
};

std::vector<Doc> load_all() {
  std::vector<Doc> docs;
  for (const auto& entry : fs::directory_iterator(kManifests)) {
    if (entry.path().extension() != ".yaml") continue;
    for (const auto& node : YAML::LoadAllFromFile(entry.path().string()))
      if (node && !node.IsNull()) docs.push_back({entry.path().filename().string(), node});
  }
  return docs;
}

std::vector<const Doc*> of_kind(const std::vector<Doc>& docs, const std::string& kind) {
  std::vector<const Doc*> out;
  for (const auto& d : docs)
    if (d.kind() == kind) out.push_back(&d);
  return out;
}

const Doc* find(const std::vector<Doc>& docs, const std::string& kind, const std::string& name) {
  for (const auto& d : docs)
    if (d.kind() == kind && d.name() == name) return &d;
  return nullptr;
}

std::vector<std::string> strings(const YAML::Node& seq) {
  std::vector<std::string> out;
  if (seq && seq.IsSequence())
    for (const auto& n : seq) out.push_back(n.as<std::string>());
  return out;
}

TEST(DeployManifests, EveryManifestParsesAsKubernetesObjects) {
  std::vector<Doc> docs;
  ASSERT_NO_THROW(docs = load_all());
  std::set<std::string> files;
  for (const auto& d : docs) files.insert(d.file);
  for (const char* f : {"namespace.yaml", "rbac.yaml", "beacon-service.yaml", "job.yaml", "sharded-job.yaml",
                        "merge-job.yaml", "runs-pvc.yaml", "metrics-service.yaml", "servicemonitor.yaml"})
    EXPECT_TRUE(files.count(f)) << f << " is missing or empty";
  const std::set<std::string> cluster_scoped = {"Namespace", "ClusterRole", "ClusterRoleBinding"};
  for (const auto& d : docs) {
    SCOPED_TRACE(d.file + ": " + d.kind() + " " + d.name());
    ASSERT_TRUE(d.node.IsMap());
    EXPECT_FALSE(d.node["apiVersion"].as<std::string>("").empty());
    EXPECT_FALSE(d.kind().empty());
    ASSERT_TRUE(d.node["metadata"].IsMap());
    EXPECT_FALSE(d.name().empty());
    if (cluster_scoped.count(d.kind()))
      EXPECT_TRUE(d.ns().empty()) << "cluster-scoped objects have no namespace";
    else
      EXPECT_FALSE(d.ns().empty()) << "namespaced objects name their namespace";
  }
}

TEST(DeployManifests, JobsServiceAndVolumesReferToEachOther) {
  const auto docs = load_all();
  const auto jobs = of_kind(docs, "Job");
  ASSERT_GE(jobs.size(), 3u);
  std::map<std::string, std::string> pod_labels;  // label -> value, over every Job's pod template
  for (const Doc* job : jobs) {
    SCOPED_TRACE(job->file);
    const YAML::Node pod = job->node["spec"]["template"]["spec"];
    ASSERT_TRUE(pod.IsMap());
    EXPECT_EQ(pod["restartPolicy"].as<std::string>(""), "Never");
    EXPECT_TRUE(pod["securityContext"]["runAsNonRoot"].as<bool>(false));
    if (auto sa = pod["serviceAccountName"]) {
      EXPECT_NE(find(docs, "ServiceAccount", sa.as<std::string>()), nullptr) << sa.as<std::string>();
    }
    for (const auto& volume : pod["volumes"])
      if (auto claim = volume["persistentVolumeClaim"]) {
        EXPECT_NE(find(docs, "PersistentVolumeClaim", claim["claimName"].as<std::string>()), nullptr)
            << claim["claimName"].as<std::string>();
      }
    ASSERT_TRUE(pod["containers"].IsSequence());
    for (const auto& c : pod["containers"]) {
      EXPECT_FALSE(c["image"].as<std::string>("").empty());
      EXPECT_FALSE(c["securityContext"]["allowPrivilegeEscalation"].as<bool>(true));
    }
    for (const auto& l : job->node["spec"]["template"]["metadata"]["labels"])
      pod_labels[l.first.as<std::string>()] = l.second.as<std::string>();
  }
  // The beacon Service selects pods of the runner Job.
  const Doc* service = find(docs, "Service", "bootstorm-beacon");
  ASSERT_NE(service, nullptr);
  const Doc* runner = find(docs, "Job", "bootstorm-run");
  ASSERT_NE(runner, nullptr);
  for (const auto& sel : service->node["spec"]["selector"])
    EXPECT_EQ(
        runner->node["spec"]["template"]["metadata"]["labels"][sel.first.as<std::string>()].as<std::string>(
            ""),
        sel.second.as<std::string>())
        << sel.first.as<std::string>();
  // The PVC is shared by the shards: ReadWriteMany.
  const Doc* pvc = find(docs, "PersistentVolumeClaim", "bootstorm-runs");
  ASSERT_NE(pvc, nullptr);
  EXPECT_EQ(strings(pvc->node["spec"]["accessModes"]), std::vector<std::string>{"ReadWriteMany"});
}

TEST(DeployManifests, StormJobsServeLiveMetricsThatTheServiceMonitorScrapes) {
  const auto docs = load_all();
  const Doc* service = find(docs, "Service", "bootstorm-metrics");
  ASSERT_NE(service, nullptr);
  const Doc* monitor = find(docs, "ServiceMonitor", "bootstorm");
  ASSERT_NE(monitor, nullptr);
  EXPECT_EQ(monitor->node["apiVersion"].as<std::string>(""), "monitoring.coreos.com/v1");
  // The ServiceMonitor selects the Service and scrapes its named port at /metrics.
  for (const auto& l : monitor->node["spec"]["selector"]["matchLabels"])
    EXPECT_EQ(service->node["metadata"]["labels"][l.first.as<std::string>()].as<std::string>(""),
              l.second.as<std::string>())
        << l.first.as<std::string>();
  ASSERT_TRUE(monitor->node["spec"]["endpoints"].IsSequence());
  const YAML::Node endpoint = monitor->node["spec"]["endpoints"][0];
  EXPECT_EQ(endpoint["port"].as<std::string>(""), "metrics");
  EXPECT_EQ(endpoint["path"].as<std::string>(""), "/metrics");
  std::string service_port;
  for (const auto& p : service->node["spec"]["ports"])
    if (p["name"].as<std::string>("") == "metrics") service_port = p["targetPort"].as<std::string>("");
  EXPECT_EQ(service_port, "metrics");

  // The Jobs that storm listen where their container port says, and their pods are the Service's; the
  // merge Job serves nothing and is not.
  for (const char* name : {"bootstorm-run", "bootstorm-shards"}) {
    SCOPED_TRACE(name);
    const Doc* job = find(docs, "Job", name);
    ASSERT_NE(job, nullptr);
    const YAML::Node container = job->node["spec"]["template"]["spec"]["containers"][0];
    const auto args = strings(container["args"]);
    const auto listen = std::find(args.begin(), args.end(), "--metrics-listen");
    ASSERT_NE(listen, args.end());
    ASSERT_NE(listen + 1, args.end());
    EXPECT_EQ(listen[1].rfind("0.0.0.0:", 0), 0u) << listen[1] << ": a pod is scraped on its own address";
    int port = 0;
    for (const auto& p : container["ports"])
      if (p["name"].as<std::string>("") == "metrics") port = p["containerPort"].as<int>(0);
    EXPECT_EQ(listen[1], "0.0.0.0:" + std::to_string(port));
    EXPECT_NE(std::find(args.begin(), args.end(), "--metrics-linger"), args.end())
        << "the last scrape must see the final figures";
    for (const auto& sel : service->node["spec"]["selector"])
      EXPECT_EQ(
          job->node["spec"]["template"]["metadata"]["labels"][sel.first.as<std::string>()].as<std::string>(
              ""),
          sel.second.as<std::string>());
  }
  const Doc* merge = find(docs, "Job", "bootstorm-merge");
  ASSERT_NE(merge, nullptr);
  for (const auto& sel : service->node["spec"]["selector"])
    EXPECT_NE(
        merge->node["spec"]["template"]["metadata"]["labels"][sel.first.as<std::string>()].as<std::string>(
            ""),
        sel.second.as<std::string>());
}

TEST(DeployManifests, IndexedJobShardsByCompletionIndexAndTheMergeJobCombinesThem) {
  const auto docs = load_all();
  const Doc* shards = find(docs, "Job", "bootstorm-shards");
  ASSERT_NE(shards, nullptr);
  const YAML::Node spec = shards->node["spec"];
  EXPECT_EQ(spec["completionMode"].as<std::string>(""), "Indexed");
  const int completions = spec["completions"].as<int>(0);
  EXPECT_GT(completions, 1);
  EXPECT_EQ(spec["parallelism"].as<int>(0), completions) << "every shard must run at the start instant";
  EXPECT_EQ(spec["backoffLimit"].as<int>(-1), 0) << "a retried shard would have missed --start-at";
  const YAML::Node container = spec["template"]["spec"]["containers"][0];
  std::map<std::string, YAML::Node> env;
  for (const auto& e : container["env"]) env[e["name"].as<std::string>()] = static_cast<const YAML::Node&>(e);
  ASSERT_TRUE(env.count("BOOTSTORM_SHARDS"));
  EXPECT_EQ(env["BOOTSTORM_SHARDS"]["value"].as<std::string>(), std::to_string(completions));
  ASSERT_TRUE(env.count("BOOTSTORM_START_AT"));
  EXPECT_EQ(env["BOOTSTORM_START_AT"]["valueFrom"]["configMapKeyRef"]["key"].as<std::string>(""), "startAt");
  const auto args = strings(container["args"]);
  auto after = [&](const std::string& flag) {
    for (std::size_t i = 0; i + 1 < args.size(); ++i)
      if (args[i] == flag) return args[i + 1];
    return std::string();
  };
  ASSERT_FALSE(args.empty());
  EXPECT_EQ(args[0], "run");
  EXPECT_EQ(after("--shard"), "$(JOB_COMPLETION_INDEX)/$(BOOTSTORM_SHARDS)");
  EXPECT_EQ(after("--start-at"), "$(BOOTSTORM_START_AT)");
  EXPECT_EQ(after("--run-id"), "$(BOOTSTORM_RUN_ID)");
  const std::string out = after("--out");
  EXPECT_EQ(out.rfind("/runs/", 0), 0u) << "run directories go to the shared volume";

  const Doc* merge = find(docs, "Job", "bootstorm-merge");
  ASSERT_NE(merge, nullptr);
  const YAML::Node mc = merge->node["spec"]["template"]["spec"]["containers"][0];
  std::string command;
  for (const auto& s : strings(mc["command"])) command += s + " ";
  for (const auto& s : strings(mc["args"])) command += s + " ";
  EXPECT_NE(command.find("bootstorm merge " + out + "/"), std::string::npos) << command;
  EXPECT_NE(command.find("--out"), std::string::npos) << command;
  EXPECT_FALSE(merge->node["spec"]["template"]["spec"]["automountServiceAccountToken"].as<bool>(true))
      << "merge needs no API access";
}

// ------------------------------------------------------------------------------------------------ RBAC

struct Rule {
  std::set<std::string> groups, resources, verbs;
};

std::vector<Rule> rbac_rules(const std::vector<Doc>& docs) {
  std::vector<Rule> rules;
  for (const auto& d : docs) {
    if (d.kind() != "ClusterRole" && d.kind() != "Role") continue;
    for (const auto& r : d.node["rules"]) {
      Rule rule;
      for (auto& g : strings(r["apiGroups"])) rule.groups.insert(g.empty() ? "core" : g);
      for (auto& s : strings(r["resources"])) rule.resources.insert(s);
      for (auto& v : strings(r["verbs"])) rule.verbs.insert(v);
      rules.push_back(rule);
    }
  }
  return rules;
}

// "verb group resource[/subresource]" as the simulator counts requests.
bool allowed(const std::vector<Rule>& rules, const std::string& request) {
  std::istringstream in(request);
  std::string verb, group, resource;
  in >> verb >> group >> resource;
  for (const auto& r : rules)
    if (r.verbs.count(verb) && r.groups.count(group) && r.resources.count(resource)) return true;
  return false;
}

std::set<std::string> granted(const std::vector<Rule>& rules) {
  std::set<std::string> out;
  for (const auto& r : rules)
    for (const auto& v : r.verbs)
      for (const auto& g : r.groups)
        for (const auto& s : r.resources) out.insert(v + " " + g + " " + s);
  return out;
}

TEST(DeployRbac, NoWildcardsNoEscalationAndBindingsResolve) {
  const auto docs = load_all();
  const std::set<std::string> plain_verbs = {"get", "list", "watch", "create", "update", "patch", "delete"};
  int rules = 0;
  for (const auto& d : docs) {
    if (d.kind() != "ClusterRole" && d.kind() != "Role") continue;
    ASSERT_TRUE(d.node["rules"].IsSequence()) << d.name();
    for (const auto& r : d.node["rules"]) {
      ++rules;
      for (const char* key : {"apiGroups", "resources", "verbs", "resourceNames", "nonResourceURLs"})
        for (const auto& v : strings(r[key]))
          EXPECT_EQ(v.find('*'), std::string::npos) << d.name() << " " << key << ": " << v;
      EXPECT_FALSE(strings(r["resources"]).empty()) << d.name() << ": a rule without resources";
      for (const auto& v : strings(r["verbs"]))
        EXPECT_TRUE(plain_verbs.count(v)) << d.name() << ": verb " << v << " (escalate/bind/impersonate/"
                                          << "deletecollection are never needed)";
      for (const auto& s : strings(r["resources"]))
        EXPECT_FALSE(s == "roles" || s == "clusterroles" || s == "rolebindings" || s == "clusterrolebindings")
            << d.name() << " must not manage RBAC";
    }
  }
  EXPECT_GT(rules, 0);
  for (const auto& d : docs) {
    if (d.kind() != "ClusterRoleBinding" && d.kind() != "RoleBinding") continue;
    const std::string role_kind = d.node["roleRef"]["kind"].as<std::string>("");
    const std::string role = d.node["roleRef"]["name"].as<std::string>("");
    // OpenShift's own read-only role for cluster metrics (storage telemetry through Thanos Querier): the
    // one role the manifests bind without defining it.
    if (role_kind == "ClusterRole" && role == "cluster-monitoring-view") continue;
    const Doc* target = find(docs, role_kind, role);
    ASSERT_NE(target, nullptr) << d.name() << " binds a missing " << role_kind << " " << role;
    if (role_kind == "Role") {
      EXPECT_EQ(target->ns(), d.ns()) << d.name();
    }
    for (const auto& s : d.node["subjects"])
      if (s["kind"].as<std::string>("") == "ServiceAccount") {
        EXPECT_NE(find(docs, "ServiceAccount", s["name"].as<std::string>("")), nullptr) << d.name();
      }
  }
}

// A child process with output to files; killed and reaped on destruction.
class Child {
 public:
  Child(const std::vector<std::string>& argv, const fs::path& out, const fs::path& err)
      : out_(out), err_(err) {
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0644);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0644);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    if (posix_spawn(&pid_, args[0], &actions, nullptr, args.data(), environ) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&actions);
  }
  ~Child() {
    if (pid_ > 0 && !status_) {
      ::kill(pid_, SIGKILL);
      int s = 0;
      ::waitpid(pid_, &s, 0);
    }
  }
  std::optional<int> wait_for(std::chrono::seconds timeout) {
    const auto deadline = Clock::now() + timeout;
    while (!status_ && pid_ > 0) {
      int s = 0;
      if (::waitpid(pid_, &s, WNOHANG) == pid_) {
        status_ = WIFEXITED(s) ? WEXITSTATUS(s) : -WTERMSIG(s);
        break;
      }
      if (Clock::now() >= deadline) return std::nullopt;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return status_;
  }
  bool running() { return pid_ > 0 && !wait_for(std::chrono::seconds(0)); }
  std::string out() const { return slurp(out_); }
  std::string err() const { return slurp(err_); }
  static std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
  }

 private:
  pid_t pid_ = -1;
  std::optional<int> status_;
  fs::path out_, err_;
};

class DeployRbacOnLab : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto kubectl = bootstorm::test_support::find_kubectl();
    if (!kubectl) BOOTSTORM_MISSING_KUBECTL("it reads /_lab/stats");
    kubectl_ = kubectl->string();
    dir_ = fs::temp_directory_path() / ("bootstorm-deploy-rbac-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    lab_ = std::make_unique<Child>(std::vector<std::string>{kBinary, "lab", "serve", "--lab", "small",
                                                            "--state-dir", (dir_ / "lab").string()},
                                   dir_ / "lab.out", dir_ / "lab.err");
    const auto deadline = Clock::now() + std::chrono::seconds(30);
    while (Clock::now() < deadline && !fs::exists(dir_ / "lab" / "endpoints.json")) {
      ASSERT_TRUE(lab_->running()) << lab_->err();
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ASSERT_TRUE(fs::exists(dir_ / "lab" / "endpoints.json")) << lab_->err();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // endpoints.json completely written
  }
  void TearDown() override {
    lab_.reset();
    if (!HasFailure()) fs::remove_all(dir_);
  }
  int run(std::vector<std::string> argv, std::string* out = nullptr,
          std::chrono::seconds timeout = std::chrono::seconds(180)) {
    const std::string tag = std::to_string(counter_++);
    Child c(argv, dir_ / ("c" + tag + ".out"), dir_ / ("c" + tag + ".err"));
    auto rc = c.wait_for(timeout);
    if (out) *out = c.out() + c.err();
    return rc ? *rc : -1000;
  }
  json lab_stats() {
    std::string out;
    const std::string tag = std::to_string(counter_++);
    Child c({kubectl_, "--kubeconfig", (dir_ / "lab" / "kubeconfig").string(), "get", "--raw", "/_lab/stats"},
            dir_ / ("k" + tag + ".out"), dir_ / ("k" + tag + ".err"));
    EXPECT_EQ(c.wait_for(std::chrono::seconds(60)), 0) << c.err();
    return json::parse(c.out(), nullptr, false);
  }
  std::string kubectl_;
  fs::path dir_;
  std::unique_ptr<Child> lab_;
  int counter_ = 0;
};

void write(const fs::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary) << text;
}

TEST_F(DeployRbacOnLab, RbacAllowsExactlyTheCallsTheProvidersMake) {
  const fs::path lab = dir_ / "lab";
  // A KubeVirt storm that keeps its VMs, then `bootstorm cleanup` (listing by label, stop/delete).
  bootstorm::test_support::PlanYaml{
      .name = "rbac-storm",
      .platform = {.kind = "kubevirt", .endpoint = "lab:" + lab.string()},
      .golden = "{dataSource: {name: fedora-golden, namespace: golden}, clone: auto}",
      .ns = "bootstorm-rbac",
      .scenarios = {{"storm", {{"worker-0", 3}, {"worker-1", 3}}}},
      .storm = "{mode: simultaneous, timeout: 2m}",
      .ready = "{signal: guest_agent}",
      .cleanup = "never",
      .output = (dir_ / "runs").string()}
      .write(dir_ / "storm.yaml");
  std::string out;
  ASSERT_EQ(run({kBinary, "run", (dir_ / "storm.yaml").string(), "--yes"}, &out), 0) << out;
  std::vector<fs::path> runs;
  for (const auto& e : fs::directory_iterator(dir_ / "runs")) runs.push_back(e.path());
  ASSERT_EQ(runs.size(), 1u);
  ASSERT_EQ(run({kBinary, "cleanup", runs[0].string()}, &out), 0) << out;
  EXPECT_NE(out.find("deleted 6 VMs"), std::string::npos) << out;

  // `bootstorm migrate` (Forklift objects, the source credentials Secret, its cleanup): the calls it makes
  // count whether or not this lab's migration completes.
  bool migrated = false;
  write(dir_ / "migrate.yaml",
        "apiVersion: bootstorm.io/v1\nkind: MigrationPlan\nname: rbac-migrate\n"
        "source: {endpoint: 'lab:" +
            lab.string() +
            "'}\n"
            "destination: {endpoint: 'lab:" +
            lab.string() +
            "', namespace: openshift-mtv}\n"
            "vms: {fromStorm: {golden: {vm: tiny-golden, clone: linked}, placement: [{host: host-01, vms: "
            "2}]}}\n"
            "networkMap: [{source: VM Network, destination: {type: pod}}]\n"
            "storageMap: [{source: lab-ds01, destination: {storageClass: standard}}]\n"
            "targetNamespace: migrated-desktops\nready: {signal: guest_agent}\n"
            "storm: {mode: simultaneous, timeout: 2m}\ntimeout: 5m\n"
            "output: " +
            (dir_ / "migrations").string() + "\n");
  std::string validate_out;
  if (run({kBinary, "migrate", "--help"}, &validate_out) == 0) {
    run({kBinary, "migrate", (dir_ / "migrate.yaml").string(), "--yes"}, &out, std::chrono::seconds(300));
    if (fs::exists(dir_ / "migrations")) {
      for (const auto& e : fs::directory_iterator(dir_ / "migrations"))
        run({kBinary, "cleanup", e.path().string()}, &out);
      migrated = true;
    }
  }

  const json stats = lab_stats();
  ASSERT_TRUE(stats.contains("byAuthorization")) << stats.dump();
  const auto docs = load_all();
  const auto rules = rbac_rules(docs);
  std::set<std::string> observed;
  for (auto it = stats["byAuthorization"].begin(); it != stats["byAuthorization"].end(); ++it) {
    observed.insert(it.key());
    EXPECT_TRUE(allowed(rules, it.key())) << "the providers made " << it.value() << " request(s) '"
                                          << it.key() << "' that deploy/kubernetes/rbac.yaml does not allow";
  }
  // The storm itself must have been seen (the check above is only as good as what was observed).
  for (const char* must :
       {"create kubevirt.io virtualmachines", "update subresources.kubevirt.io virtualmachines/start",
        "watch kubevirt.io virtualmachineinstances", "delete kubevirt.io virtualmachines", "list core nodes"})
    EXPECT_TRUE(observed.count(must)) << must;
  if (migrated) {
    EXPECT_TRUE(observed.count("create forklift.konveyor.io providers"));
  }

  // Least privilege: a permission nobody used here must be one of these, each needed by a code path this lab
  // run does not reach.
  std::set<std::string> justified = {
      "create cdi.kubevirt.io datavolumes/source",  // CDI's clone authorization (SubjectAccessReview)
      "get core persistentvolumeclaims",            // golden image given as a PVC
      "list core resourcequotas",  // the quota check reads an existing namespace's (this run's is new)
      "update subresources.kubevirt.io virtualmachines/stop",  // stopping running desktops
      "list cdi.kubevirt.io datasources",                      // DataSource lookup fallback
      "get cdi.kubevirt.io datavolumes",                       // a DataVolume read when its watch lags
      "list cdi.kubevirt.io datavolumes",   // the DataVolume list+watch runs only while clones are
      "watch cdi.kubevirt.io datavolumes",  // still in progress (a fast lab may finish them first)
      "patch kubevirt.io virtualmachines",  // migrate labels the migrated VMs
      "get kubevirt.io virtualmachines",
      "list kubevirt.io virtualmachines",
  };
  // The Forklift steps after the Plan is Ready (Migration created, watched, cancelled) only run when the
  // lab's migration gets that far.
  for (const char* verb : {"get", "list", "watch", "create", "patch", "delete"})
    justified.insert(std::string(verb) + " forklift.konveyor.io migrations");
  for (const char* res : {"providers", "networkmaps", "storagemaps", "plans"})
    for (const char* verb : {"get", "list", "watch", "create", "delete"})
      if (!migrated) justified.insert(std::string(verb) + " forklift.konveyor.io " + res);
  for (const char* verb : {"get", "list", "create", "delete"})
    if (!migrated) justified.insert(std::string(verb) + " core secrets");
  justified.insert("watch forklift.konveyor.io networkmaps");
  justified.insert("watch forklift.konveyor.io storagemaps");
  for (const auto& g : granted(rules))
    EXPECT_TRUE(observed.count(g) || justified.count(g))
        << "rbac.yaml grants '" << g << "' but no provider call used it: remove it or say why it is needed";
}

}  // namespace

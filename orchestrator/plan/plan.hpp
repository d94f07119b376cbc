#pragma once
// Plan format v1 (DESIGN.md "Plan format"): the model, loaded from YAML or JSON by load_plan() and validated
// strictly before anything touches a platform. Every field has its default filled in after loading.
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "common/diagnostic.hpp"
#include "common/expected.hpp"
#include "providers/api/kind_settings.hpp"

namespace bootstorm::plan {

// Where a value was written in its plan file, so that a check made after loading (plan/size_bounds.hpp)
// still points at the line to edit; plans that differ only there compare equal.
using SourcePos = yaml::SourcePos;

// platform.credentials: the keys of both credential forms (api::CredentialForm); a kind's descriptor says
// which it accepts, and the engine resolves them.
struct Credentials {
  std::string username_env;  // username_password
  std::string password_env;
  std::string file;        // username_password: a file with "username: ...\npassword: ..." (YAML)
  std::string kubeconfig;  // kubeconfig
  std::string context;

  bool operator==(const Credentials&) const = default;
};

struct Tls {
  std::string ca_file;
  bool insecure_skip_verify = false;

  bool operator==(const Tls&) const = default;
};

// The most VMs one scenario places (on all its hosts together), and a whole plan (its scenarios one after
// another): beyond any storm a platform holds, and far beyond what a command creates or models without
// --max-vms (plan/size_bounds.hpp). Within them every count of a plan is an int.
constexpr int kMaxScenarioVms = 1'000'000;
constexpr int kMaxPlanVms = 10'000'000;

// Deeper pipelines only make the last start of each connection wait longer behind the others.
constexpr int kMaxStartsPerConnection = 1000;

struct ApiBudget {
  double requests_per_second = 50;
  int max_concurrent = 64;
  // KubeVirt: start requests written back to back on one connection (HTTP/1.1 pipelining), so that a burst of
  // maxConcurrent starts holds maxConcurrent / startsPerConnection connections. 0 (absent): automatic, one
  // start per connection up to api::kAutoStartConnections, then as many per connection as keep the
  // connection count there.
  int starts_per_connection = 0;

  bool operator==(const ApiBudget&) const = default;
};

struct Platform {
  std::string kind;                   // a registered platform kind (providers/<kind>/descriptor.cpp)
  std::string endpoint = "embedded";  // embedded | https://... | kubeconfig | in-cluster | lab:<state-dir>
  std::string lab;                    // embedded only: name in simulator/labs or a path
  Credentials credentials;
  Tls tls;
  ApiBudget api_budget;
  // The kind's own part of the plan (its golden image, its options), read and typed by the kind's descriptor.
  api::PlatformSettings settings;
  SourcePos lab_at;

  bool operator==(const Platform&) const = default;
};

struct Placement {
  std::string host;
  int vms = 0;
  SourcePos host_at;
  SourcePos vms_at;

  bool operator==(const Placement&) const = default;
};

struct Scenario {
  std::string name;
  std::vector<Placement> placement;
  int total_vms() const {
    int n = 0;
    for (auto& p : placement) n += p.vms;
    return n;
  }

  bool operator==(const Scenario&) const = default;
};

struct Storm {
  std::string mode = "simultaneous";  // simultaneous | ramp
  double ramp_per_second = 0;         // ramp only
  std::chrono::milliseconds timeout{std::chrono::minutes(10)};
  std::chrono::milliseconds settle{0};
  // Start requests in flight at once during the burst; 0 (the default) = as the platform sends a burst:
  // KubeVirt every start at once (pipelined), vim25 one PowerOnMultiVM, REST within vCenter's operation
  // limit.
  int start_concurrency = 0;

  bool operator==(const Storm&) const = default;
};

struct Beacon {
  bool enabled = false;
  std::string listen = "127.0.0.1:0";
  std::string advertise_url;  // URL guests call; default http://<listen>

  bool operator==(const Beacon&) const = default;
};

struct Ready {
  std::string
      signal;    // start_acknowledged | scheduled | running | guest_agent | ip_assigned | port_open | beacon
  int port = 0;  // TCP probe port (0: no probe)
  Beacon beacon;

  bool operator==(const Ready&) const = default;
};

struct Slo {
  std::string milestone = "ready";  // "ready" or a milestone name
  std::string stat;     // mean | p50 | p90 | p95 | p99 | max | min | time_to_all_ready | ready_fraction
  double max = 0;       // seconds (or a fraction for ready_fraction)
  bool is_min = false;  // ready_fraction uses `min:` instead of `max:`

  bool operator==(const Slo&) const = default;
};

// What the platform's monitoring measured of the storage during each storm (providers/api/telemetry.hpp).
struct Telemetry {
  std::string source = "auto";            // auto | none | the platform's: vsphere-perf, prometheus
  std::chrono::milliseconds interval{0};  // 0: the source's own step (scrape interval, vCenter's 20 s)
  std::string endpoint;                   // prometheus: the query API, where the cluster has no Route to it
  std::string token_file;                 // prometheus: a bearer token, when the kubeconfig has none
  std::string ca_file;                    // prometheus: the CA of the query API's certificate

  bool operator==(const Telemetry&) const = default;
};

struct StormPlan {
  std::string api_version = "bootstorm.io/v1";
  std::string kind = "StormPlan";
  std::string name;
  Platform platform;
  std::vector<Scenario> scenarios;
  Storm storm;
  Ready ready;
  int repeat = 1;
  std::vector<Slo> slo;
  Telemetry telemetry;
  std::string cleanup = "always";  // always | on-success | never
  std::string output = "runs";

  std::string source_path;  // file it was loaded from
  int total_vms() const {
    int n = 0;
    for (auto& s : scenarios) n += s.total_vms();
    return n;
  }

  bool operator==(const StormPlan&) const = default;
};

// One problem found in a plan: file:line:col: message.
using Diagnostic = yaml::Diagnostic;

struct LoadResult {
  std::optional<StormPlan> plan;        // set when there are no diagnostics
  std::vector<Diagnostic> diagnostics;  // every problem of the file, in file order
};

// Loads and validates a plan (YAML or JSON, chosen by content). Never throws on bad input.
LoadResult load_plan_file(const std::string& path);
LoadResult load_plan_text(const std::string& text, const std::string& path_for_messages);

// The resolved plan with every default filled in, as YAML (validate --print, the run directory's plan.yaml).
std::string to_yaml(const StormPlan& plan);

}  // namespace bootstorm::plan

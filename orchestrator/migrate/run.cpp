// `bootstorm migrate` orchestration (see migrate.hpp).
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/use_future.hpp>
#include <csignal>
#include <fstream>
#include <iostream>
#include <sstream>

#include "common/log.hpp"
#include "common/rfc3339.hpp"
#include "orchestrator/engine/journal.hpp"
#include "orchestrator/engine/naming.hpp"
#include "orchestrator/engine/platform.hpp"
#include "orchestrator/engine/run_engine.hpp"
#include "orchestrator/migrate/adopt_provider.hpp"
#include "orchestrator/migrate/forklift_objects.hpp"
#include "orchestrator/migrate/kube_api.hpp"
#include "orchestrator/migrate/migrate.hpp"
#include "orchestrator/migrate/migrate_internal.hpp"
#include "providers/http/types.hpp"
#include "reports/compare.hpp"

namespace bootstorm::migrate {
namespace asio = boost::asio;
using asio::awaitable;
using nlohmann::json;
using std::chrono::steady_clock;
using std::chrono::system_clock;

namespace {

// Scenario names of the two storms: distinct, so that the compare report says which side is which.
constexpr const char* kStormScenario = "vSphere desktops";
constexpr const char* kDestinationScenario = "OpenShift desktops";
constexpr auto kBlockedGrace = std::chrono::seconds(5);

double now_unix() {
  return std::chrono::duration<double>(system_clock::now().time_since_epoch()).count();
}

// The StormPlan of a storm on the source vCenter (fromStorm) — same endpoint, lab, credentials and budget.
plan::StormPlan source_storm_plan(const MigrationPlan& p, const std::filesystem::path& run_dir) {
  plan::StormPlan s;
  s.name = p.name + "-vsphere";
  s.platform.kind = "vsphere";
  s.platform.endpoint = p.source.endpoint;
  s.platform.lab = p.source.lab;
  s.platform.credentials = p.source.credentials;
  s.platform.tls = p.source.tls;
  s.platform.api_budget = p.source.api_budget;
  if (p.vms.from_storm) s.golden = p.vms.from_storm->golden;
  s.scenarios.push_back(plan::Scenario{
      kStormScenario, p.vms.from_storm ? p.vms.from_storm->placement : std::vector<plan::Placement>{}});
  s.storm = p.storm;
  s.ready = p.ready;
  s.cleanup = "never";  // these clones are the VMs to migrate
  s.output = run_dir.string();
  return s;
}

// The StormPlan of the storm of the migrated VMs on the destination (--then-storm).
plan::StormPlan destination_storm_plan(const MigrationPlan& p, const std::filesystem::path& run_dir,
                                       const std::string& scenario, int vms) {
  plan::StormPlan s;
  s.name = p.name + "-openshift";
  s.platform.kind = "kubevirt";
  s.platform.endpoint = p.destination.endpoint == "embedded" ? "embedded" : p.destination.endpoint;
  s.platform.lab = p.source.lab;
  s.platform.credentials = p.destination.credentials;
  s.platform.tls = p.destination.tls;
  s.namespace_ = p.target_namespace;
  s.golden.clone = "auto";
  s.scenarios.push_back(plan::Scenario{scenario, {plan::Placement{"forklift", vms}}});
  s.storm = p.storm;
  s.ready = p.ready;
  s.cleanup = "never";  // the migration's cleanup removes the migrated VMs
  s.output = run_dir.string();
  return s;
}

std::string dns_name(const std::string& name) {
  std::string out;
  for (char c : name) {
    char l = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    bool ok = (l >= 'a' && l <= 'z') || (l >= '0' && l <= '9') || l == '-' || l == '.';
    out += ok ? l : '-';
  }
  while (!out.empty() && (out.front() == '-' || out.front() == '.')) out.erase(out.begin());
  while (!out.empty() && (out.back() == '-' || out.back() == '.')) out.pop_back();
  return out.substr(0, 63);
}

class Flow {
 public:
  Flow(const MigrationPlan& plan, std::string run_id, ResolvedEndpoints& ep, engine::Journal* journal,
       MigrationRecord& record, std::ostream& out, CancelSignal interrupt)
      : plan_(plan),
        run_id_(std::move(run_id)),
        ep_(ep),
        journal_(journal),
        record_(record),
        out_(out),
        interrupt_(std::move(interrupt)) {}

  std::vector<std::string> vm_names;
  std::vector<AdoptedVm> migrated;

  awaitable<Expected<void>> run(asio::any_io_executor executor, std::chrono::milliseconds ready_timeout) {
    api_ = std::make_unique<KubeApi>(executor, ep_.kube);
    const std::string ns = plan_.destination.namespace_;
    auto connected = co_await api_->connect("/apis/forklift.konveyor.io/v1beta1",
                                            "the Forklift API (forklift.konveyor.io/v1beta1)");
    if (!connected) co_return connected.error();
    std::vector<std::string> namespaces;
    namespaces.push_back(ns);
    namespaces.push_back(plan_.target_namespace);
    for (const std::string& n : namespaces) {
      auto ok = co_await ensure_namespace(n);
      if (!ok) co_return ok.error();
    }

    // Providers: reuse one for the same vCenter; otherwise Secret + Provider of this run.
    const std::string sdk_url = vsphere_sdk_url(ep_.vcenter_url);
    auto providers =
        co_await api_->list(forklift_collection(ns, "providers"), "", "listing Providers in " + ns);
    if (!providers) co_return providers.error();
    std::string source_provider, host_provider;
    for (const auto& p : (*providers)["items"]) {
      const json spec = p.value("spec", json::object());
      const std::string name = p["metadata"].value("name", "");
      if (spec.value("type", "") == "vsphere" && spec.value("url", "") == sdk_url && source_provider.empty())
        source_provider = name;
      if (spec.value("type", "") == "openshift" && spec.value("url", "").empty() && host_provider.empty())
        host_provider = name;
    }
    if (!source_provider.empty()) {
      out_ << fmt::format("reusing Provider {}/{} for {}\n", ns, source_provider, sdk_url);
      journal("object_reused", {{"kind", "Provider"}, {"namespace", ns}, {"name", source_provider}});
    } else {
      SecretBuild sb;
      sb.name = object_name(run_id_, "vsphere");
      sb.namespace_ = ns;
      sb.run_id = run_id_;
      sb.user = ep_.vcenter_user;
      sb.password = ep_.vcenter_password;
      sb.ca_pem = ep_.vcenter_ca_pem;
      sb.insecure_skip_verify = ep_.vcenter_insecure;
      sb.url = sdk_url;
      auto s = co_await create_object("Secret", secrets_path(ns), build_secret(sb));
      if (!s) co_return s.error();
      ProviderBuild pb;
      pb.name = object_name(run_id_, "vsphere");
      pb.namespace_ = ns;
      pb.run_id = run_id_;
      pb.type = "vsphere";
      pb.url = sdk_url;
      pb.secret_name = sb.name;
      pb.secret_namespace = ns;
      auto p = co_await create_object("Provider", forklift_collection(ns, "providers"), build_provider(pb));
      if (!p) co_return p.error();
      source_provider = pb.name;
    }
    if (!host_provider.empty()) {
      journal("object_reused", {{"kind", "Provider"}, {"namespace", ns}, {"name", host_provider}});
    } else {
      ProviderBuild hb;
      hb.name = object_name(run_id_, "host");
      hb.namespace_ = ns;
      hb.run_id = run_id_;
      hb.type = "openshift";
      auto p = co_await create_object("Provider", forklift_collection(ns, "providers"), build_provider(hb));
      if (!p) co_return p.error();
      host_provider = hb.name;
    }
    std::vector<std::string> to_wait;
    to_wait.push_back(source_provider);
    to_wait.push_back(host_provider);
    for (const std::string& name : to_wait) {
      auto ready = co_await wait_ready("providers", "Provider", name, ready_timeout);
      if (!ready) co_return ready.error();
    }

    const Ref src{source_provider, ns}, dst{host_provider, ns};
    const std::string map_name = object_name(run_id_, plan_.name.substr(0, 30));
    auto nm = co_await create_object("NetworkMap", forklift_collection(ns, "networkmaps"),
                                     build_network_map(map_name, ns, run_id_, src, dst, plan_.network_map));
    if (!nm) co_return nm.error();
    auto sm = co_await create_object("StorageMap", forklift_collection(ns, "storagemaps"),
                                     build_storage_map(map_name, ns, run_id_, src, dst, plan_.storage_map));
    if (!sm) co_return sm.error();
    PlanBuild pb;
    pb.name = map_name;
    pb.namespace_ = ns;
    pb.run_id = run_id_;
    pb.source = src;
    pb.destination = dst;
    pb.network_map = {map_name, ns};
    pb.storage_map = {map_name, ns};
    pb.target_namespace = plan_.target_namespace;
    pb.warm = plan_.warm;
    pb.vm_names = vm_names;
    pb.description = "bootstorm run " + run_id_ + " (" + plan_.name + ")";
    auto created_plan = co_await create_object("Plan", forklift_collection(ns, "plans"), build_plan(pb));
    if (!created_plan) co_return created_plan.error();
    auto plan_ready = co_await wait_ready("plans", "Plan", map_name, ready_timeout);
    if (!plan_ready) {
      // The maps' own conditions name the root cause (e.g. which datastore the vCenter lacks).
      Error e = plan_ready.error();
      std::vector<std::pair<std::string, std::string>> maps;
      maps.emplace_back("networkmaps", "NetworkMap");
      maps.emplace_back("storagemaps", "StorageMap");
      for (const auto& [plural, kind] : maps) {
        auto got =
            co_await api_->get(forklift_object(ns, plural, map_name), "reading " + kind + " " + map_name);
        if (!got || !got->has_value()) continue;
        const Readiness r = readiness_of(**got);
        for (const auto& c : r.blocking) e.message += "\n  " + kind + " " + map_name + ": " + c.to_string();
      }
      co_return e;
    }

    // Named first: g++ 12 miscompiles aggregate temporaries inside a co_await expression.
    const Ref plan_ref{map_name, ns};
    json migration_object = build_migration(map_name, ns, run_id_, plan_ref);
    auto mig = co_await create_object("Migration", forklift_collection(ns, "migrations"), migration_object);
    if (!mig) co_return mig.error();
    record_.migration_started_s = now_unix();
    journal("migration_started", {{"plan", map_name}, {"vms", vm_names.size()}});
    out_ << fmt::format("migrating {} VMs ({} migration) with Plan {}/{}\n", vm_names.size(),
                        std::string_view(plan_.warm ? "warm" : "cold"), ns, map_name);

    // One list + watch of the Plan until every VM is done.
    MigrationTracker tracker(vm_names);
    const auto deadline = steady_clock::now() + plan_.timeout;
    auto watched = co_await api_->watch_until(
        forklift_collection(ns, "plans"), "fieldSelector=" + http::url_encode("metadata.name=" + map_name),
        [&](const json& obj) { observe_plan(tracker, obj); }, [&] { return tracker.all_done(); }, deadline,
        interrupt_, "watching Plan " + ns + "/" + map_name);
    if (!watched) {
      const bool interrupted = watched.error().kind == ErrorKind::cancelled;
      std::string reason;
      if (interrupted) {
        reason = std::string("interrupted before the migration finished");
      } else if (watched.error().kind == ErrorKind::timeout) {
        reason = fmt::format("the migration did not finish within {} s",
                             std::chrono::duration_cast<std::chrono::seconds>(plan_.timeout).count());
      } else {
        reason = std::string("lost track of the migration: ") + watched.error().what();
      }
      for (const auto& name : tracker.give_up(reason, now_unix())) journal_vm(*tracker.find(name));
      // Ask Forklift to stop what is still running: Migration spec.cancel lists the VMs.
      json cancel = json::array();
      for (const auto& v : tracker.vms())
        if (v.reason == reason) cancel.push_back({{"name", v.name}});
      if (!cancel.empty()) {
        json cancel_patch = json::object();
        cancel_patch["spec"]["cancel"] = cancel;
        auto c = co_await api_->merge_patch(forklift_object(ns, "migrations", map_name), cancel_patch,
                                            "canceling Migration " + map_name);
        if (!c) spdlog::warn("{}", c.error().what());
      }
      if (interrupted) {
        record_.outcome = std::string("interrupted");
      } else if (watched.error().kind == ErrorKind::timeout) {
        record_.outcome = std::string("timeout");
      } else {
        record_.outcome = std::string("error");
      }
    }
    record_.migration_ended_s = now_unix();
    record_.vms = tracker.vms();

    // Label the migrated VMs with the run (targetLabels asks Forklift to; this makes sure, also for the VMI
    // template the storm's watch selects on) and remember them for cleanup and the storm.
    for (const auto& v : tracker.vms()) {
      if (v.status != "succeeded") continue;
      std::string target = dns_name(v.target_name.empty() ? v.name : v.target_name);
      json labels = {{kRunLabel, run_id_}};
      json patch = {{"metadata", {{"labels", labels}, {"annotations", {{kMigratedFromAnnotation, v.name}}}}},
                    {"spec", {{"template", {{"metadata", {{"labels", labels}}}}}}}};
      auto labelled = co_await api_->merge_patch(
          vm_path(plan_.target_namespace, target), patch,
          "labelling migrated VirtualMachine " + plan_.target_namespace + "/" + target);
      if (!labelled) {
        spdlog::warn("{}", labelled.error().what());
        continue;
      }
      journal("vm_migrated", {{"vm", v.name}, {"namespace", plan_.target_namespace}, {"name", target}});
      for (auto& r : record_.vms)
        if (r.name == v.name) r.target_name = target;
      migrated.push_back(AdoptedVm{target, plan_.target_namespace + "/" + target, ""});
    }
    co_return Expected<void>();
  }

  std::uint64_t requests() const { return api_ ? api_->requests() : 0; }

 private:
  const MigrationPlan& plan_;
  std::string run_id_;
  ResolvedEndpoints& ep_;
  engine::Journal* journal_;
  MigrationRecord& record_;
  std::ostream& out_;
  CancelSignal interrupt_;
  std::unique_ptr<KubeApi> api_;

  void journal(std::string_view type, json payload) {
    if (journal_) journal_->write(type, std::move(payload));
  }
  void journal_vm(const VmMigrationRecord& v) { journal("migration_vm", to_json(v)); }

  void observe_plan(MigrationTracker& tracker, const json& obj) {
    std::map<std::string, VmMigrationRecord> before;
    for (const auto& v : tracker.vms()) before[v.name] = v;
    const double t0 = record_.migration_started_s.value_or(now_unix());
    for (const auto& name : tracker.update(vm_statuses(obj), now_unix())) {
      const VmMigrationRecord& v = *tracker.find(name);
      journal_vm(v);
      const VmMigrationRecord& old = before[name];
      for (const auto& s : v.steps) {
        const StepRecord* prev = old.step(s.name);
        if (s.completed_s && (prev == nullptr || !prev->completed_s) && s.error.empty())
          out_ << fmt::format("[{:7.1f} s] {} {} done in {:.1f} s\n", now_unix() - t0, v.name, s.name,
                              s.duration_s().value_or(0));
      }
      if (v.status != old.status && v.status != "pending") {
        if (v.status == "succeeded") {
          out_ << fmt::format("[{:7.1f} s] {} migrated in {:.1f} s\n", now_unix() - t0, v.name,
                              v.total_s().value_or(0));
        } else {
          out_ << fmt::format("[{:7.1f} s] {} {} in {}: {}\n", now_unix() - t0, v.name, v.status,
                              v.failed_step, v.reason);
        }
      }
      out_.flush();
    }
  }

  awaitable<Expected<void>> ensure_namespace(const std::string& name) {
    auto got = co_await api_->get(namespace_path(name), "reading namespace " + name);
    if (!got) co_return got.error();
    if (got->has_value()) co_return Expected<void>();
    json ns = {{"apiVersion", "v1"},
               {"kind", "Namespace"},
               {"metadata", {{"name", name}, {"labels", {{kRunLabel, run_id_}}}}}};
    auto created = co_await api_->create("/api/v1/namespaces", ns, "creating namespace " + name);
    if (!created) {
      // Created by someone else between the GET and the POST: not this run's, so cleanup leaves it alone.
      if (created.error().kind == ErrorKind::conflict) co_return Expected<void>();
      co_return created.error();
    }
    // Only the namespaces this run created are journaled: `bootstorm cleanup` deletes exactly these (when
    // they still carry the run label), never one that existed before the run.
    journal("object_created",
            {{"kind", "Namespace"}, {"namespace", ""}, {"name", name}, {"path", namespace_path(name)}});
    co_return Expected<void>();
  }

  awaitable<Expected<json>> create_object(const std::string& kind, const std::string& collection,
                                          const json& obj) {
    const std::string name = obj["metadata"].value("name", "");
    const std::string ns = obj["metadata"].value("namespace", "");
    auto created = co_await api_->create(collection, obj, "creating " + kind + " " + ns + "/" + name);
    if (!created) co_return created.error();
    journal("object_created",
            {{"kind", kind}, {"namespace", ns}, {"name", name}, {"path", collection + "/" + name}});
    spdlog::info("created {} {}/{}", kind, ns, name);
    co_return created;
  }

  // Waits (list + watch of the one object) until Ready=True; fails with the validation conditions verbatim
  // when Forklift reports a Critical/Error condition, or at the timeout with the last conditions seen.
  awaitable<Expected<void>> wait_ready(const std::string& plural, const std::string& kind,
                                       const std::string& name, std::chrono::milliseconds timeout) {
    const std::string ns = plan_.destination.namespace_;
    Readiness last;
    bool seen = false;
    auto watched = co_await api_->watch_until(
        forklift_collection(ns, plural), "fieldSelector=" + http::url_encode("metadata.name=" + name),
        [&](const json& obj) {
          seen = true;
          last = readiness_of(obj);
        },
        [&] { return last.ready || last.blocked; }, steady_clock::now() + timeout, interrupt_,
        "waiting for " + kind + " " + ns + "/" + name + " to become Ready");
    if (watched && last.blocked && !last.ready) {
      // Forklift re-validates as the objects it refers to settle (a Plan created right after its maps may
      // first say NetworkMapNotReady): a blocking condition counts once it has held for a few seconds.
      auto settled = co_await api_->watch_until(
          forklift_collection(ns, plural), "fieldSelector=" + http::url_encode("metadata.name=" + name),
          [&](const json& obj) { last = readiness_of(obj); }, [&] { return last.ready; },
          steady_clock::now() + kBlockedGrace, interrupt_, "waiting for " + kind + " " + ns + "/" + name);
      if (!settled && settled.error().kind == ErrorKind::cancelled) co_return settled.error();
    }
    auto conditions_text = [](const std::vector<Condition>& cs) {
      std::string t;
      for (const auto& c : cs) t += "\n  " + c.to_string();
      return t.empty() ? std::string("\n  (no conditions)") : t;
    };
    if (last.blocked) {
      journal("not_ready", {{"kind", kind}, {"name", name}, {"conditions", conditions_text(last.blocking)}});
      co_return make_error(ErrorKind::api,
                           kind + " " + ns + "/" + name + " is not Ready:" + conditions_text(last.blocking),
                           "fix what the conditions name (see `kubectl describe " +
                               plural.substr(0, plural.size() - 1) + " " + name + " -n " + ns +
                               "`) and run again; `bootstorm cleanup` removes this run's "
                               "objects");
    }
    if (last.ready) {
      journal("ready", {{"kind", kind}, {"name", name}});
      co_return Expected<void>();
    }
    if (!watched) {
      Error e = watched.error();
      if (e.kind == ErrorKind::timeout)
        e.message = kind + " " + ns + "/" + name + " did not become Ready within " +
                    std::to_string(std::chrono::duration_cast<std::chrono::seconds>(timeout).count()) + " s" +
                    (seen ? ":" + conditions_text(last.all) : " (never seen)");
      co_return e;
    }
    co_return make_error(ErrorKind::internal, kind + " " + name + ": readiness wait ended early");
  }
};

}  // namespace

std::vector<std::string> dry_run_calls(const MigrationPlan& p, const std::string& run_id) {
  std::vector<std::string> calls;
  const std::string ns = p.destination.namespace_;
  const std::string vcenter = p.source.endpoint.rfind("https://", 0) == 0
                                  ? p.source.endpoint
                                  : "https://<" + p.source.endpoint + " vCenter>";
  const std::string sdk =
      p.source.endpoint.rfind("https://", 0) == 0 ? vsphere_sdk_url(vcenter) : vcenter + "/sdk";
  std::vector<std::string> names = p.vms.names;
  if (p.vms.from_storm) {
    int total = 0;
    for (auto& pl : p.vms.from_storm->placement) total += pl.vms;
    calls.push_back(fmt::format(
        "vSphere storm {}-vsphere on {}: clone {} VMs from {} ({}), power them on at once, "
        "keep them (cleanup: never)",
        p.name, p.source.endpoint, total, p.vms.from_storm->golden.vm, p.vms.from_storm->golden.clone));
    for (int i = 1; i <= total; ++i)
      names.push_back(engine::vm_name(run_id, engine::scenario_slug(kStormScenario), i));
  }
  if (!p.vms.from_run.empty()) {
    auto contents = engine::read_journal(std::filesystem::path(p.vms.from_run) / "journal.jsonl");
    if (contents) {
      for (auto& h : contents->undeleted) names.push_back(h.name);
    } else {
      calls.push_back("(cannot read " + p.vms.from_run + ": " + contents.error().what() + ")");
    }
  }
  calls.push_back("GET /apis/forklift.konveyor.io/v1beta1");
  calls.push_back("GET " + namespace_path(ns) + " (POST /api/v1/namespaces when missing)");
  calls.push_back("GET " + namespace_path(p.target_namespace) + " (POST /api/v1/namespaces when missing)");
  calls.push_back("GET " + forklift_collection(ns, "providers") + " (reuse a vsphere Provider with url " +
                  sdk + ")");
  SecretBuild sb;
  sb.name = object_name(run_id, "vsphere");
  sb.namespace_ = ns;
  sb.run_id = run_id;
  sb.user = "<user>";
  sb.password = "<password>";
  sb.insecure_skip_verify = p.source.tls.insecure_skip_verify;
  sb.url = sdk;
  json secret = build_secret(sb);
  secret["data"]["password"] = "<redacted>";
  calls.push_back("POST " + secrets_path(ns) + " " + secret.dump());
  ProviderBuild pb{sb.name, ns, run_id, "vsphere", sdk, sb.name, ns};
  calls.push_back("POST " + forklift_collection(ns, "providers") + " " + build_provider(pb).dump());
  ProviderBuild hb{object_name(run_id, "host"), ns, run_id, "openshift", "", "", ""};
  calls.push_back("POST " + forklift_collection(ns, "providers") + " " + build_provider(hb).dump() +
                  " (only when no host Provider exists)");
  calls.push_back("WATCH " + forklift_collection(ns, "providers") + " until both Providers are Ready");
  const std::string name = object_name(run_id, p.name.substr(0, 30));
  const Ref src{pb.name, ns}, dst{hb.name, ns};
  calls.push_back("POST " + forklift_collection(ns, "networkmaps") + " " +
                  build_network_map(name, ns, run_id, src, dst, p.network_map).dump());
  calls.push_back("POST " + forklift_collection(ns, "storagemaps") + " " +
                  build_storage_map(name, ns, run_id, src, dst, p.storage_map).dump());
  PlanBuild plb;
  plb.name = name;
  plb.namespace_ = ns;
  plb.run_id = run_id;
  plb.source = src;
  plb.destination = dst;
  plb.network_map = plb.storage_map = {name, ns};
  plb.target_namespace = p.target_namespace;
  plb.warm = p.warm;
  plb.vm_names = names;
  plb.description = "bootstorm run " + run_id + " (" + p.name + ")";
  calls.push_back("POST " + forklift_collection(ns, "plans") + " " + build_plan(plb).dump());
  calls.push_back("WATCH " + forklift_collection(ns, "plans") + " until the Plan is Ready");
  calls.push_back("POST " + forklift_collection(ns, "migrations") + " " +
                  build_migration(name, ns, run_id, Ref{name, ns}).dump());
  calls.push_back("WATCH " + forklift_collection(ns, "plans") + "?fieldSelector=metadata.name%3D" + name +
                  " until every VM is done");
  calls.push_back("PATCH " + vms_path(p.target_namespace) + "/<each migrated VM> (label " + kRunLabel + "=" +
                  run_id + ")");
  return calls;
}

MigrateResult run_migration(const MigrationPlan& plan, const MigrateOptions& options,
                            const engine::EngineHooks& hooks, std::ostream& out) {
  MigrateResult result;
  const std::string run_id = options.run_id.empty() ? engine::new_run_id() : options.run_id;
  if (options.dry_run) {
    out << "dry run: nothing is sent; bootstorm migrate would make these calls (run id " << run_id << "):\n";
    for (const auto& c : dry_run_calls(plan, run_id)) out << "  " << c << "\n";
    if (options.then_storm)
      out << "  then: boot-storm the migrated VMs on " << plan.destination.endpoint << " in namespace "
          << plan.target_namespace << " (ready: " << plan.ready.signal
          << ") and write compare.md/compare.html\n";
    result.exit_code = 0;
    result.outcome = "dry-run";
    return result;
  }

  asio::io_context io;
  CancelSignal interrupt = options.interrupt;
  std::optional<asio::signal_set> signals;
  if (options.handle_signals) {
    signals.emplace(io, SIGINT, SIGTERM);
    signals->async_wait([interrupt](const boost::system::error_code& ec, int) mutable {
      if (!ec) interrupt.cancel();
    });
  }

  const auto started = system_clock::now();
  const std::filesystem::path out_dir =
      options.out_dir.empty() ? std::filesystem::path(plan.output) : options.out_dir;
  result.run_dir = out_dir / engine::run_directory_name(plan.name, started, run_id);
  std::error_code ec;
  std::filesystem::create_directories(result.run_dir, ec);
  if (ec) {
    result.error = make_error(
        ErrorKind::io, "cannot create the run directory " + result.run_dir.string() + ": " + ec.message());
    result.exit_code = 1;
    result.outcome = "error";
    return result;
  }
  {
    std::ofstream f(result.run_dir / "plan.yaml");
    f << to_yaml(plan);
  }
  auto journal_opened = engine::Journal::open(result.run_dir / "journal.jsonl");
  if (!journal_opened) {
    result.error = journal_opened.error();
    result.exit_code = 1;
    result.outcome = "error";
    return result;
  }
  std::unique_ptr<engine::Journal> journal = std::move(*journal_opened);

  MigrationRecord& record = result.record;
  record.run_id = run_id;
  record.plan_name = plan.name;
  record.simulated = engine::is_simulated_endpoint(plan.source.endpoint);
  record.lab = plan.source.lab;
  record.forklift_namespace = plan.destination.namespace_;
  record.target_namespace = plan.target_namespace;
  record.warm = plan.warm;
  record.started_at = format_rfc3339(started);

  auto finish = [&](int code, std::string outcome, std::optional<Error> error) {
    if (record.outcome.empty()) record.outcome = outcome;
    result.outcome = record.outcome;
    if (error) {
      result.error = error;
      journal->write("error", {{"message", error->what()}});
    }
    if (record.migration_started_s)
      journal->write(
          "migration_window",
          {{"startedS", *record.migration_started_s},
           {"endedS", record.migration_ended_s ? json(*record.migration_ended_s) : json(nullptr)}});
    journal->write("run_ended", {{"outcome", record.outcome}});
    journal->sync();
    auto w = write_migration_outputs(result.run_dir, record);
    if (!w) spdlog::warn("{}", w.error().what());
    result.exit_code = code;
    return result;
  };

  auto resolved = resolve_endpoints(plan, hooks, io.get_executor());
  if (!resolved) {
    journal->write("run_started", run_started_payload(plan, record, ""));
    return finish(resolved.error().kind == ErrorKind::invalid_input ? 2 : 1, "error", resolved.error());
  }
  ResolvedEndpoints& ep = *resolved;
  record.source_url = ep.vcenter_url;
  record.destination = ep.kube.server;
  if (record.simulated && record.lab.empty()) record.lab = ep.lab;
  record.started_at = journal->write("run_started", run_started_payload(plan, record, to_yaml(plan)))
                          .value("t", record.started_at);
  out << "run directory: " << result.run_dir.string() << "\n";
  if (record.simulated) out << "(simulated lab " << record.lab << ": not a hardware measurement)\n";

  // Hooks of the nested storms: the same lab as the migration.
  engine::EngineHooks storm_hooks = hooks;
  if (ep.shared_lab) {
    auto lab = *ep.shared_lab;
    storm_hooks.start_embedded_lab =
        [lab](asio::any_io_executor, const std::string&) -> Expected<engine::EmbeddedLab> { return lab; };
  }

  // Which VMs.
  std::vector<std::string> names = plan.vms.names;
  const std::string scenario = kDestinationScenario;
  if (plan.vms.from_storm) {
    out << "vSphere storm of the source desktops (cloned from " << plan.vms.from_storm->golden.vm << ")...\n";
    plan::StormPlan sp = source_storm_plan(plan, result.run_dir);
    engine::RunOptions ro;
    ro.run_id = run_id;
    ro.plan_yaml = plan::to_yaml(sp);
    ro.handle_signals = options.handle_signals;
    ro.interrupt = interrupt;
    engine::RunResult sr = engine::RunEngine(sp, ro, storm_hooks).run();
    result.vsphere_run = sr.run_dir;
    journal->write("source_storm", {{"runDir", sr.run_dir.string()},
                                    {"outcome", sr.outcome},
                                    {"vmsReady", sr.vms_ready},
                                    {"vmsTotal", sr.vms_total}});
    if (sr.error) return finish(sr.exit_code == 2 ? 2 : 1, "error", *sr.error);
    if (sr.exit_code == 130) return finish(130, "interrupted", std::nullopt);
    for (const auto& vm : sr.record.vms)
      if (!vm.id.empty()) names.push_back(vm.name);
    out << fmt::format("vSphere storm: {}/{} desktops ready ({})\n", sr.vms_ready, sr.vms_total,
                       sr.run_dir.string());
  } else if (!plan.vms.from_run.empty()) {
    auto contents = engine::read_journal(std::filesystem::path(plan.vms.from_run) / "journal.jsonl");
    if (!contents) return finish(2, "error", contents.error());
    if (contents->record.platform != "vsphere")
      return finish(
          2, "error",
          make_error(ErrorKind::invalid_input,
                     plan.vms.from_run + " is a " + contents->record.platform + " run, not a vSphere run",
                     "fromRun names the run directory of a vSphere storm"));
    for (const auto& h : contents->undeleted) {
      names.push_back(h.name);
    }
    if (names.empty())
      return finish(2, "error",
                    make_error(ErrorKind::invalid_input,
                               "run " + plan.vms.from_run + " kept no VMs (its cleanup deleted them)",
                               "run the vSphere plan again with cleanup: never, or name the VMs in vms"));
    result.vsphere_run = plan.vms.from_run;
  }
  if (names.empty()) return finish(1, "error", make_error(ErrorKind::invalid_input, "no VM to migrate"));
  journal->write("vms_selected", {{"vms", names}});
  for (const auto& n : names) {
    VmMigrationRecord r;
    r.name = n;
    record.vms.push_back(r);
  }

  Flow flow(plan, run_id, ep, journal.get(), record, out, interrupt);
  flow.vm_names = names;
  std::optional<Expected<void>> flow_result;
  asio::co_spawn(io, flow.run(io.get_executor(), options.ready_timeout),
                 [&](std::exception_ptr e, Expected<void> r) {
                   if (e) std::rethrow_exception(e);
                   flow_result = std::move(r);
                   if (signals) signals->cancel();
                 });
  io.run();
  io.restart();
  if (!flow_result || !*flow_result) {
    Error e =
        flow_result ? flow_result->error() : make_error(ErrorKind::internal, "the migration did not run");
    const bool interrupted = e.kind == ErrorKind::cancelled;
    return finish(interrupted ? 130 : (e.kind == ErrorKind::invalid_input ? 2 : 1),
                  interrupted ? "interrupted" : "error", e);
  }
  const MigrationSummary summary = summarize(record);
  if (record.outcome.empty()) record.outcome = summary.failed == 0 ? "completed" : "failed";
  out << fmt::format("migration {}: {}/{} VMs migrated; per VM mean {} P95 {} max {}, wall time {}\n",
                     record.outcome, summary.succeeded, summary.vms,
                     summary.mean_s ? fmt::format("{:.1f} s", *summary.mean_s) : "-",
                     summary.p95_s ? fmt::format("{:.1f} s", *summary.p95_s) : "-",
                     summary.max_s ? fmt::format("{:.1f} s", *summary.max_s) : "-",
                     summary.wall_s ? fmt::format("{:.1f} s", *summary.wall_s) : "-");
  for (const auto& v : record.vms)
    if (v.status != "succeeded")
      out << "  " << v.name << " " << v.status << " in " << v.failed_step << ": " << v.reason << "\n";
  out << "migration report: " << (result.run_dir / "migration.md").string() << "\n";
  if (record.outcome == "interrupted") return finish(130, "interrupted", std::nullopt);

  int code = summary.failed == 0 && record.outcome == "completed" ? 0 : 1;
  if (options.then_storm && !flow.migrated.empty()) {
    out << "boot storm of the " << flow.migrated.size() << " migrated desktops on "
        << plan.destination.endpoint << "...\n";
    plan::StormPlan sp =
        destination_storm_plan(plan, result.run_dir, scenario, static_cast<int>(flow.migrated.size()));
    engine::EngineHooks adopt_hooks = storm_hooks;
    auto inner_make = storm_hooks.make_provider;
    auto migrated = flow.migrated;
    adopt_hooks.make_provider = [inner_make, migrated](
                                    asio::any_io_executor ex,
                                    const api::ProviderConfig& c) -> std::unique_ptr<api::Provider> {
      std::unique_ptr<api::Provider> inner =
          inner_make ? inner_make(ex, c) : api::create_provider(c.kind, ex, c);
      return make_adopting_provider(std::move(inner), migrated);
    };
    engine::RunOptions ro;
    ro.run_id = run_id;
    ro.plan_yaml = plan::to_yaml(sp);
    ro.handle_signals = options.handle_signals;
    ro.interrupt = interrupt;
    engine::RunResult sr = engine::RunEngine(sp, ro, adopt_hooks).run();
    result.openshift_run = sr.run_dir;
    journal->write("destination_storm", {{"runDir", sr.run_dir.string()},
                                         {"outcome", sr.outcome},
                                         {"vmsReady", sr.vms_ready},
                                         {"vmsTotal", sr.vms_total}});
    out << fmt::format("OpenShift storm: {}/{} desktops ready ({})\n", sr.vms_ready, sr.vms_total,
                       sr.run_dir.string());
    if (sr.error) out << "storm error: " << sr.error->what() << "\n";
    if (sr.exit_code != 0) code = sr.exit_code == 130 ? 130 : 1;
    if (!result.vsphere_run.empty() && !sr.run_dir.empty()) {
      reports::CompareOptions co;
      co.runs = {result.vsphere_run, sr.run_dir};
      co.out_dir = result.run_dir;
      std::ostringstream err;
      int rc = reports::run_compare(co, out, err);
      if (rc == 0) {
        result.compared = true;
        journal->write("compared", {{"runs", {result.vsphere_run.string(), sr.run_dir.string()}}});
        out << "compare report: " << (result.run_dir / "compare.md").string() << "\n";
      } else {
        out << "compare failed: " << err.str();
        code = 1;
      }
    } else {
      out << "no vSphere storm of these desktops to compare with (use vms.fromStorm or vms.fromRun)\n";
    }
  } else if (options.then_storm) {
    out << "no migrated VM to storm\n";
  }
  return finish(code, record.outcome, std::nullopt);
}

}  // namespace bootstorm::migrate

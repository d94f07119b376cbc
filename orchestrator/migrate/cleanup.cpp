// `bootstorm cleanup RUN` for migration runs (see migrate.hpp): the run's Forklift objects and migrated VMs,
// found in the journal and by the run label, deleted newest first, then the namespaces the run created (the
// journal names them; one that existed before the run is never there). Source VMs are never touched: cleanup
// only talks to the destination cluster.
#include <spdlog/spdlog.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <fstream>
#include <set>

#include "orchestrator/engine/journal.hpp"
#include "orchestrator/migrate/detail/migrate_internal.hpp"
#include "orchestrator/migrate/forklift_objects.hpp"
#include "orchestrator/migrate/migrate.hpp"
#include "protocol/kube/object_calls.hpp"
#include "providers/kubevirt/kube_objects.hpp"

namespace bootstorm::migrate {
namespace asio = boost::asio;
using asio::awaitable;
using nlohmann::json;

namespace {

struct Target {
  std::string kind;  // Migration, Plan, NetworkMap, StorageMap, Provider, Secret, VirtualMachine, Namespace
  std::string namespace_;  // empty for a Namespace
  std::string name;
  std::string path;
  std::string label() const { return kind + " " + (namespace_.empty() ? "" : namespace_ + "/") + name; }
};

// Deletion order: what refers to others goes first (Migration -> Plan -> maps -> Providers -> Secrets), then
// the migrated VMs, and the namespaces last, once what the run put in them is gone.
int rank(const std::string& kind) {
  static const std::vector<std::string> order = {"Migration", "Plan",   "NetworkMap",     "StorageMap",
                                                 "Provider",  "Secret", "VirtualMachine", "Namespace"};
  for (std::size_t i = 0; i < order.size(); ++i)
    if (order[i] == kind) return static_cast<int>(i);
  return 100;
}

std::string run_label_of(const json& obj) {
  try {
    return obj.at("metadata").at("labels").value(kRunLabel, "");
  } catch (const json::exception&) {
    return {};
  }
}

std::string plural_of(const std::string& kind) {
  if (kind == "Migration") return "migrations";
  if (kind == "Plan") return "plans";
  if (kind == "NetworkMap") return "networkmaps";
  if (kind == "StorageMap") return "storagemaps";
  if (kind == "Provider") return "providers";
  return {};
}

awaitable<void> pause(asio::any_io_executor ex, std::chrono::milliseconds d) {
  asio::steady_timer t(ex, d);
  co_await t.async_wait(asio::as_tuple(asio::use_awaitable));
}

// Waits until each deleted object is gone (a VM with its DataVolumes and VMI, a namespace with its content),
// so that the run leaves nothing behind and a namespace is not still terminating when a next run wants it.
awaitable<void> wait_gone(asio::any_io_executor ex, kube::KubeApi& api, const std::vector<Target>& deleted,
                          MigrateCleanupReport& report) {
  for (const auto& t : deleted) {
    for (int attempt = 1; attempt <= 120; ++attempt) {
      auto still = co_await kube::get_object(api, t.path, "reading " + t.label());
      if (!still || !still->has_value()) break;
      co_await pause(ex, std::chrono::milliseconds(std::min(250 * attempt, 2000)));
      if (attempt == 120) report.failed.push_back(t.label() + ": still present 2 minutes after the delete");
    }
  }
}

awaitable<Expected<void>> cleanup_flow(asio::any_io_executor ex, kube::KubeApi& api,
                                       const MigrationPlan& plan, const std::string& run_id,
                                       std::vector<Target> from_journal, std::set<std::string> reused,
                                       engine::Journal* journal, bool dry_run, MigrateCleanupReport& report) {
  const kube::ConnectProbe probe{
      "/api/v1", "the Kubernetes API",
      "check that the context points at the right cluster"};  // named: see forklift_migration.cpp
  auto connected = co_await api.connect(probe);
  if (!connected) co_return connected.error();
  const std::string ns = plan.destination.namespace_;
  const std::string selector = "labelSelector=" + kubevirt::run_selector_query(run_id);
  std::vector<Target> targets = std::move(from_journal);
  auto add = [&](Target t) {
    for (const auto& x : targets)
      if (x.kind == t.kind && x.namespace_ == t.namespace_ && x.name == t.name) return;
    targets.push_back(std::move(t));
  };
  // The platform's view: everything still labelled with the run.
  for (const std::string& kind :
       std::vector<std::string>{"Migration", "Plan", "NetworkMap", "StorageMap", "Provider"}) {
    auto listed = co_await kube::list_objects(api, forklift_collection(ns, plural_of(kind)), selector,
                                              "listing " + kind + "s of run " + run_id);
    if (!listed) {
      if (listed.error().status == 404) continue;  // Forklift not installed (any more)
      co_return listed.error();
    }
    for (const auto& item : listed->items) {
      std::string name = item["metadata"].value("name", "");
      add(Target{kind, ns, name, forklift_object(ns, plural_of(kind), name)});
    }
  }
  if (auto listed =
          co_await kube::list_objects(api, secrets_path(ns), selector, "listing Secrets of run " + run_id);
      listed) {
    for (const auto& item : listed->items) {
      std::string name = item["metadata"].value("name", "");
      add(Target{"Secret", ns, name, secrets_path(ns) + "/" + name});
    }
  }
  if (auto listed = co_await kube::list_objects(api, vms_path(plan.target_namespace), selector,
                                                "listing VirtualMachines of run " + run_id);
      listed) {
    for (const auto& item : listed->items) {
      std::string name = item["metadata"].value("name", "");
      add(Target{"VirtualMachine", plan.target_namespace, name, vm_path(plan.target_namespace, name)});
    }
  }
  std::stable_sort(targets.begin(), targets.end(),
                   [](const Target& a, const Target& b) { return rank(a.kind) < rank(b.kind); });

  std::vector<Target> deleted_vms;
  std::vector<Target> deleted_namespaces;
  bool vms_gone = false;
  for (const auto& t : targets) {
    if (t.kind == "Namespace" && !vms_gone) {
      co_await wait_gone(ex, api, deleted_vms, report);
      vms_gone = true;
    }
    if (reused.count(t.kind + "/" + t.namespace_ + "/" + t.name)) {
      report.kept.push_back(t.label() + " (reused, not created by this run)");
      continue;
    }
    auto current = co_await kube::get_object(api, t.path, "reading " + t.label());
    if (!current) {
      report.failed.push_back(current.error().what());
      continue;
    }
    if (!current->has_value()) continue;  // already gone
    // The interlock: only objects that carry this run's label.
    if (run_label_of(**current) != run_id) {
      report.refused.push_back("refusing to delete " + t.label() + ": its label " + kRunLabel + " is \"" +
                               run_label_of(**current) + "\", not this run's \"" + run_id + "\"");
      continue;
    }
    if (dry_run) {
      report.deleted.push_back(t.label());
      continue;
    }
    // Already being deleted (an interrupted cleanup): Kubernetes refuses a second delete of a terminating
    // namespace, so only wait for it.
    if (t.kind == "Namespace" && (**current)["metadata"].contains("deletionTimestamp")) {
      deleted_namespaces.push_back(t);
      continue;
    }
    auto removed = co_await kube::delete_object(api, t.path, "deleting " + t.label());
    if (!removed) {
      report.failed.push_back(removed.error().what());
      if (journal)
        journal->write("object_delete_failed", {{"kind", t.kind},
                                                {"namespace", t.namespace_},
                                                {"name", t.name},
                                                {"reason", removed.error().what()}});
      continue;
    }
    report.deleted.push_back(t.label());
    if (journal)
      journal->write("object_deleted", {{"kind", t.kind}, {"namespace", t.namespace_}, {"name", t.name}});
    if (t.kind == "VirtualMachine") deleted_vms.push_back(t);
    if (t.kind == "Namespace") deleted_namespaces.push_back(t);
  }
  if (!vms_gone) co_await wait_gone(ex, api, deleted_vms, report);
  co_await wait_gone(ex, api, deleted_namespaces, report);
  co_return Expected<void>();
}

}  // namespace

Expected<MigrateCleanupReport> cleanup_migration(const std::filesystem::path& run_dir,
                                                 const engine::EngineHooks& hooks, bool dry_run) {
  MigrateCleanupReport report;
  auto loaded = load_migration_plan_file((run_dir / "plan.yaml").string());
  if (!loaded.plan) {
    std::string msg;
    for (const auto& d : loaded.diagnostics) msg += (msg.empty() ? "" : "\n") + d.to_string();
    return make_error(ErrorKind::invalid_input,
                      msg + "\n" + run_dir.string() + ": cannot read the run's plan, nothing was deleted");
  }
  const MigrationPlan& plan = *loaded.plan;
  // The journal: what the run created, what it reused (kept), which VMs it migrated.
  std::vector<Target> from_journal;
  std::set<std::string> reused;
  std::ifstream in(run_dir / "journal.jsonl");
  std::string line;
  while (std::getline(in, line)) {
    json e = json::parse(line, nullptr, false);
    if (!e.is_object()) continue;
    const std::string type = e.value("type", "");
    if (type == "run_started") report.run_id = e.value("runId", "");
    const std::string kind = e.value("kind", ""), ns = e.value("namespace", ""), name = e.value("name", "");
    if (type == "object_created") {
      std::string path = e.value("path", "");
      from_journal.push_back(Target{kind, ns, name, path});
    } else if (type == "object_reused") {
      reused.insert(kind + "/" + ns + "/" + name);
    } else if (type == "vm_migrated") {
      from_journal.push_back(Target{"VirtualMachine", ns, name, vm_path(ns, name)});
    } else if (type == "vms_selected" && e.contains("vms")) {
      for (const auto& v : e["vms"])
        if (v.is_string())
          report.kept.push_back("source VM " + v.get<std::string>() + " (vSphere: never deleted)");
    }
  }
  if (report.run_id.empty())
    return make_error(ErrorKind::invalid_input,
                      (run_dir / "journal.jsonl").string() + " has no run_started event",
                      "nothing was deleted");

  asio::io_context io;
  auto ep = resolve_endpoints(plan, hooks, io.get_executor());
  if (!ep) return ep.error();
  if (ep->shared_lab)
    report.note = "the embedded lab of the run ended with it: a fresh lab holds nothing of this run";
  std::unique_ptr<engine::Journal> journal;
  if (!dry_run) {
    auto opened = engine::Journal::open(run_dir / "journal.jsonl");
    if (opened) journal = std::move(*opened);
  }
  auto api = make_destination_api(io.get_executor(), ep->kube);
  std::optional<Expected<void>> done;
  asio::co_spawn(io,
                 cleanup_flow(io.get_executor(), *api, plan, report.run_id, from_journal, reused,
                              journal.get(), dry_run, report),
                 [&](std::exception_ptr e, Expected<void> r) {
                   if (e) std::rethrow_exception(e);
                   done = std::move(r);
                 });
  io.run();
  if (journal) journal->sync();
  if (!done) return make_error(ErrorKind::internal, "cleanup did not run");
  if (!*done) return done->error();
  return report;
}

}  // namespace bootstorm::migrate

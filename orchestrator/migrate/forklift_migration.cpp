// One migration through Forklift (see detail/forklift_migration.hpp): the Migration of the Plan, the list +
// watch of the Plan until every VM is done (each VM's steps journaled and printed as they complete), and the
// labelling of the migrated VMs for the storm and for cleanup.
#include "orchestrator/migrate/detail/forklift_migration.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cctype>
#include <map>
#include <optional>
#include <utility>

#include "common/rfc3339.hpp"
#include "orchestrator/migrate/forklift_objects.hpp"
#include "protocol/http/types.hpp"
#include "protocol/kube/object_calls.hpp"

namespace bootstorm::migrate {
namespace asio = boost::asio;
using asio::awaitable;
using nlohmann::json;
using std::chrono::system_clock;

namespace {

double now_unix() {
  return unix_seconds(system_clock::now());
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

}  // namespace

ForkliftMigration::ForkliftMigration(const MigrationPlan& plan, std::string run_id, ResolvedEndpoints& ep,
                                     engine::Journal* journal, MigrationRecord& record, std::ostream& out,
                                     CancelSignal interrupt)
    : plan_(plan),
      run_id_(std::move(run_id)),
      ep_(ep),
      journal_(journal),
      record_(record),
      out_(out),
      interrupt_(std::move(interrupt)) {}

awaitable<Expected<void>> ForkliftMigration::run(asio::any_io_executor executor,
                                                 std::chrono::milliseconds ready_timeout) {
  api_ = make_destination_api(executor, ep_.kube);
  const std::string ns = plan_.destination.namespace_;
  auto plan_name = co_await set_up_plan(ready_timeout);
  if (!plan_name) co_return plan_name.error();
  const std::string map_name = *plan_name;

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
  const auto deadline = std::chrono::steady_clock::now() + plan_.timeout;
  auto watched = co_await watch_objects(
      *api_, forklift_collection(ns, "plans"),
      "fieldSelector=" + http::url_encode("metadata.name=" + map_name),
      [&](const json& obj) { observe_plan(tracker, obj); }, [&] { return tracker.all_done(); }, deadline,
      interrupt_, "Plan " + ns + "/" + map_name);
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
      auto c = co_await kube::merge_patch_object(*api_, forklift_object(ns, "migrations", map_name),
                                                 cancel_patch, "canceling Migration " + map_name);
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
  co_await label_migrated(tracker);
  co_return Expected<void>();
}

void ForkliftMigration::journal(std::string_view type, json payload) {
  if (journal_) journal_->write(type, std::move(payload));
}

void ForkliftMigration::journal_vm(const VmMigrationRecord& v) {
  journal("migration_vm", to_json(v));
}

void ForkliftMigration::observe_plan(MigrationTracker& tracker, const json& obj) {
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
        out_ << fmt::format("[{:7.1f} s] {} {} in {}: {}\n", now_unix() - t0, v.name, v.status, v.failed_step,
                            v.reason);
      }
    }
    out_.flush();
  }
}

awaitable<void> ForkliftMigration::label_migrated(const MigrationTracker& tracker) {
  // Label the migrated VMs with the run (targetLabels asks Forklift to; this makes sure, also for the VMI
  // template the storm's watch selects on) and remember them for cleanup and the storm.
  for (const auto& v : tracker.vms()) {
    if (v.status != "succeeded") continue;
    std::string target = dns_name(v.target_name.empty() ? v.name : v.target_name);
    json labels = {{kRunLabel, run_id_}};
    json patch = {{"metadata", {{"labels", labels}, {"annotations", {{kMigratedFromAnnotation, v.name}}}}},
                  {"spec", {{"template", {{"metadata", {{"labels", labels}}}}}}}};
    auto labelled = co_await kube::merge_patch_object(
        *api_, vm_path(plan_.target_namespace, target), patch,
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
}

}  // namespace bootstorm::migrate

// `bootstorm migrate` (see migrate.hpp): the run directory and journal, the VMs to migrate (a vSphere storm
// of fresh clones, a previous run's kept VMs or named VMs), the migration through Forklift
// (detail/forklift_migration.hpp), then optionally the storm of the migrated VMs and the compare report.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <csignal>
#include <exception>
#include <fstream>
#include <memory>
#include <optional>
#include <ostream>
#include <sstream>

#include "common/rfc3339.hpp"
#include "orchestrator/engine/journal.hpp"
#include "orchestrator/engine/naming.hpp"
#include "orchestrator/engine/platform.hpp"
#include "orchestrator/engine/preflight.hpp"
#include "orchestrator/engine/run_engine.hpp"
#include "orchestrator/migrate/adopt_provider.hpp"
#include "orchestrator/migrate/detail/forklift_migration.hpp"
#include "orchestrator/migrate/detail/migrate_internal.hpp"
#include "orchestrator/migrate/migrate.hpp"
#include "reports/compare.hpp"

namespace bootstorm::migrate {
namespace asio = boost::asio;
using nlohmann::json;
using std::chrono::system_clock;

namespace {

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

}  // namespace

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

  // The migration's own checks, before anything is made (the storms it runs ask their own).
  if (!options.skip_checks) {
    std::vector<api::CheckResult> checks;
    {
      std::shared_ptr<kube::KubeApi> api = make_destination_api(io.get_executor(), ep.kube);
      auto checked = [&]() -> asio::awaitable<void> {
        checks = co_await check_migration(*api, plan, ep);
        api->close();
      };
      bool done = false;
      asio::co_spawn(io, checked(), [&done](std::exception_ptr e) {
        done = true;
        if (e) std::rethrow_exception(e);
      });
      // Until the checks are answered, not until io runs out of work: the Ctrl-C handler stays armed.
      while (!done && io.run_one() > 0) {
      }
    }
    journal->write("checks", {{"results", engine::checks_json(checks)}});
    out << "checks before the migration:\n" << engine::check_table(checks);
    if (auto failed = engine::first_failure(checks)) return finish(1, "error", *failed);
    if (interrupt.cancelled()) return finish(130, "interrupted", std::nullopt);
  } else {
    out << "warning: --skip-checks: the destination was not checked before the migration\n";
    journal->write("checks_skipped", json::object());
  }

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

  ForkliftMigration forklift(plan, run_id, ep, journal.get(), record, out, interrupt);
  forklift.vm_names = names;
  std::optional<Expected<void>> migration_result;
  asio::co_spawn(io, forklift.run(io.get_executor(), options.ready_timeout),
                 [&](std::exception_ptr e, Expected<void> r) {
                   if (e) std::rethrow_exception(e);
                   migration_result = std::move(r);
                   if (signals) signals->cancel();
                 });
  io.run();
  io.restart();
  if (!migration_result || !*migration_result) {
    Error e = migration_result ? migration_result->error()
                               : make_error(ErrorKind::internal, "the migration did not run");
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
  if (options.then_storm && !forklift.migrated.empty()) {
    out << "boot storm of the " << forklift.migrated.size() << " migrated desktops on "
        << plan.destination.endpoint << "...\n";
    plan::StormPlan sp =
        destination_storm_plan(plan, result.run_dir, scenario, static_cast<int>(forklift.migrated.size()));
    engine::EngineHooks adopt_hooks = storm_hooks;
    auto inner_make = storm_hooks.make_provider;
    auto migrated = forklift.migrated;
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

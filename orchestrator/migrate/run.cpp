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
#include "orchestrator/engine/journal_fold.hpp"
#include "orchestrator/engine/naming.hpp"
#include "orchestrator/engine/platform.hpp"
#include "orchestrator/engine/preflight.hpp"
#include "orchestrator/engine/run_engine.hpp"
#include "orchestrator/migrate/adopt_provider.hpp"
#include "orchestrator/migrate/detail/forklift_migration.hpp"
#include "orchestrator/migrate/detail/migrate_internal.hpp"
#include "orchestrator/migrate/migrate.hpp"
#include "providers/kubevirt/settings.hpp"
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
  s.platform.settings = api::make_settings(p.vms.from_storm ? p.vms.from_storm->golden : vsphere::Settings{});
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
  kubevirt::Settings destination;
  destination.namespace_ = p.target_namespace;
  destination.clone = "auto";
  s.platform.settings = api::make_settings(std::move(destination));
  s.scenarios.push_back(plan::Scenario{scenario, {plan::Placement{"forklift", vms}}});
  s.storm = p.storm;
  s.ready = p.ready;
  s.cleanup = "never";  // the migration's cleanup removes the migrated VMs
  s.output = run_dir.string();
  return s;
}

// One `bootstorm migrate` run, stage by stage; each stage that ends the run returns its result (finish()).
class MigrationRun {
 public:
  MigrationRun(const MigrationPlan& plan, const MigrateOptions& options, const engine::EngineHooks& hooks,
               std::ostream& out)
      : plan_(plan),
        options_(options),
        hooks_(hooks),
        out_(out),
        run_id_(options.run_id.empty() ? engine::new_run_id() : options.run_id),
        interrupt_(options.interrupt) {}

  MigrateResult run() {
    if (options_.dry_run) return dry_run();
    arm_signals();
    if (auto failed = open_run_directory()) return *failed;
    if (auto ended = connect()) return *ended;
    if (auto ended = check()) return *ended;
    storm_hooks_ = hooks_;
    if (ep_->shared_lab) {
      // The nested storms use the same lab as the migration.
      auto lab = *ep_->shared_lab;
      storm_hooks_.start_embedded_lab =
          [lab](asio::any_io_executor, const std::string&) -> Expected<engine::EmbeddedLab> { return lab; };
    }
    if (auto ended = select_vms()) return *ended;
    if (auto ended = migrate()) return *ended;
    int code = report_migration();
    if (record().outcome == "interrupted") return finish(130, "interrupted", std::nullopt);
    if (options_.then_storm) code = storm_migrated(code);
    return finish(code, record().outcome, std::nullopt);
  }

 private:
  MigrationRecord& record() { return result_.record; }

  MigrateResult dry_run() {
    out_ << "dry run: nothing is sent; bootstorm migrate would make these calls (run id " << run_id_
         << "):\n";
    for (const auto& c : dry_run_calls(plan_, run_id_)) out_ << "  " << c << "\n";
    if (options_.then_storm)
      out_ << "  then: boot-storm the migrated VMs on " << plan_.destination.endpoint << " in namespace "
           << plan_.target_namespace << " (ready: " << plan_.ready.signal
           << ") and write compare.md/compare.html\n";
    result_.exit_code = 0;
    result_.outcome = "dry-run";
    return result_;
  }

  void arm_signals() {
    if (!options_.handle_signals) return;
    signals_.emplace(io_, SIGINT, SIGTERM);
    signals_->async_wait([interrupt = interrupt_](const boost::system::error_code& ec, int) mutable {
      if (!ec) interrupt.cancel();
    });
  }

  // The run directory with plan.yaml and the journal; the record's identity.
  std::optional<MigrateResult> open_run_directory() {
    const auto started = system_clock::now();
    const std::filesystem::path out_dir =
        options_.out_dir.empty() ? std::filesystem::path(plan_.output) : options_.out_dir;
    result_.run_dir = out_dir / engine::run_directory_name(plan_.name, started, run_id_);
    std::error_code ec;
    std::filesystem::create_directories(result_.run_dir, ec);
    if (ec) {
      result_.error = make_error(
          ErrorKind::io, "cannot create the run directory " + result_.run_dir.string() + ": " + ec.message());
      result_.exit_code = 1;
      result_.outcome = "error";
      return result_;
    }
    {
      std::ofstream f(result_.run_dir / "plan.yaml");
      f << to_yaml(plan_);
    }
    auto journal_opened = engine::Journal::open(result_.run_dir / "journal.jsonl");
    if (!journal_opened) {
      result_.error = journal_opened.error();
      result_.exit_code = 1;
      result_.outcome = "error";
      return result_;
    }
    journal_ = std::move(*journal_opened);
    MigrationRecord& r = record();
    r.run_id = run_id_;
    r.plan_name = plan_.name;
    r.simulated = engine::is_simulated_endpoint(plan_.source.endpoint);
    r.lab = plan_.source.lab;
    r.forklift_namespace = plan_.destination.namespace_;
    r.target_namespace = plan_.target_namespace;
    r.warm = plan_.warm;
    r.started_at = format_rfc3339(started);
    return std::nullopt;
  }

  // The end of the run: its outcome and error journaled, migration.md/.html and the record written.
  MigrateResult finish(int code, std::string outcome, std::optional<Error> error) {
    MigrationRecord& r = record();
    if (r.outcome.empty()) r.outcome = outcome;
    result_.outcome = r.outcome;
    if (error) {
      result_.error = error;
      journal_->write("error", {{"message", error->what()}});
    }
    if (r.migration_started_s)
      journal_->write("migration_window",
                      {{"startedS", *r.migration_started_s},
                       {"endedS", r.migration_ended_s ? json(*r.migration_ended_s) : json(nullptr)}});
    journal_->write("run_ended", {{"outcome", r.outcome}});
    journal_->sync();
    auto w = write_migration_outputs(result_.run_dir, r);
    if (!w) spdlog::warn("{}", w.error().what());
    result_.exit_code = code;
    return result_;
  }

  // Both platforms' endpoints (the embedded lab started if the plan asks for it); run_started.
  std::optional<MigrateResult> connect() {
    auto resolved = resolve_endpoints(plan_, hooks_, io_.get_executor());
    if (!resolved) {
      journal_->write("run_started", run_started_payload(plan_, record(), ""));
      return finish(resolved.error().kind == ErrorKind::invalid_input ? 2 : 1, "error", resolved.error());
    }
    ep_ = std::move(*resolved);
    MigrationRecord& r = record();
    r.source_url = ep_->vcenter_url;
    r.destination = ep_->kube.server;
    if (r.simulated && r.lab.empty()) r.lab = ep_->lab;
    r.started_at = journal_->write("run_started", run_started_payload(plan_, r, to_yaml(plan_)))
                       .value("t", r.started_at);
    out_ << "run directory: " << result_.run_dir.string() << "\n";
    if (r.simulated) out_ << "(simulated lab " << r.lab << ": not a hardware measurement)\n";
    return std::nullopt;
  }

  // The migration's own checks, before anything is made (the storms it runs ask their own).
  std::optional<MigrateResult> check() {
    if (options_.skip_checks) {
      out_ << "warning: --skip-checks: the destination was not checked before the migration\n";
      journal_->write("checks_skipped", json::object());
      return std::nullopt;
    }
    std::vector<api::CheckResult> checks;
    {
      std::shared_ptr<kube::KubeApi> api = make_destination_api(io_.get_executor(), ep_->kube);
      auto checked = [&]() -> asio::awaitable<void> {
        checks = co_await check_migration(*api, plan_, *ep_);
        api->close();
      };
      bool done = false;
      asio::co_spawn(io_, checked(), [&done](std::exception_ptr e) {
        done = true;
        if (e) std::rethrow_exception(e);
      });
      // Until the checks are answered, not until io runs out of work: the Ctrl-C handler stays armed.
      while (!done && io_.run_one() > 0) {
      }
    }
    journal_->write("checks", {{"results", engine::checks_json(checks)}});
    out_ << "checks before the migration:\n" << engine::check_table(checks);
    if (auto failed = engine::first_failure(checks)) return finish(1, "error", *failed);
    if (interrupt_.cancelled()) return finish(130, "interrupted", std::nullopt);
    return std::nullopt;
  }

  // Which VMs: the plan's names, a vSphere storm's fresh clones (fromStorm) or a run's kept VMs (fromRun).
  std::optional<MigrateResult> select_vms() {
    names_ = plan_.vms.names;
    if (plan_.vms.from_storm) {
      if (auto ended = storm_source()) return ended;
    } else if (!plan_.vms.from_run.empty()) {
      if (auto ended = adopt_run()) return ended;
    }
    if (names_.empty()) return finish(1, "error", make_error(ErrorKind::invalid_input, "no VM to migrate"));
    journal_->write("vms_selected", {{"vms", names_}});
    for (const auto& n : names_) {
      VmMigrationRecord r;
      r.name = n;
      record().vms.push_back(r);
    }
    return std::nullopt;
  }

  std::optional<MigrateResult> storm_source() {
    out_ << "vSphere storm of the source desktops (cloned from " << plan_.vms.from_storm->golden.vm
         << ")...\n";
    plan::StormPlan sp = source_storm_plan(plan_, result_.run_dir);
    engine::RunResult sr = engine::RunEngine(sp, storm_options(sp), storm_hooks_).run();
    result_.vsphere_run = sr.run_dir;
    journal_->write("source_storm", {{"runDir", sr.run_dir.string()},
                                     {"outcome", sr.outcome},
                                     {"vmsReady", sr.vms_ready},
                                     {"vmsTotal", sr.vms_total}});
    if (sr.error) return finish(sr.exit_code == 2 ? 2 : 1, "error", *sr.error);
    if (sr.exit_code == 130) return finish(130, "interrupted", std::nullopt);
    for (const auto& vm : sr.record.vms)
      if (!vm.id.empty()) names_.push_back(vm.name);
    out_ << fmt::format("vSphere storm: {}/{} desktops ready ({})\n", sr.vms_ready, sr.vms_total,
                        sr.run_dir.string());
    return std::nullopt;
  }

  std::optional<MigrateResult> adopt_run() {
    auto contents = engine::read_journal(std::filesystem::path(plan_.vms.from_run) / "journal.jsonl");
    if (!contents) return finish(2, "error", contents.error());
    if (contents->record.platform != "vsphere")
      return finish(
          2, "error",
          make_error(ErrorKind::invalid_input,
                     plan_.vms.from_run + " is a " + contents->record.platform + " run, not a vSphere run",
                     "fromRun names the run directory of a vSphere storm"));
    for (const auto& h : contents->undeleted) names_.push_back(h.name);
    if (names_.empty())
      return finish(2, "error",
                    make_error(ErrorKind::invalid_input,
                               "run " + plan_.vms.from_run + " kept no VMs (its cleanup deleted them)",
                               "run the vSphere plan again with cleanup: never, or name the VMs in vms"));
    result_.vsphere_run = plan_.vms.from_run;
    return std::nullopt;
  }

  engine::RunOptions storm_options(const plan::StormPlan& sp) const {
    engine::RunOptions ro;
    ro.run_id = run_id_;
    ro.plan_yaml = plan::to_yaml(sp);
    ro.handle_signals = options_.handle_signals;
    ro.interrupt = interrupt_;
    return ro;
  }

  // The migration through Forklift, until every VM has migrated or failed.
  std::optional<MigrateResult> migrate() {
    forklift_.emplace(plan_, run_id_, *ep_, journal_.get(), record(), out_, interrupt_);
    forklift_->vm_names = names_;
    std::optional<Expected<void>> migration_result;
    asio::co_spawn(io_, forklift_->run(io_.get_executor(), options_.ready_timeout),
                   [&](std::exception_ptr e, Expected<void> r) {
                     if (e) std::rethrow_exception(e);
                     migration_result = std::move(r);
                     if (signals_) signals_->cancel();
                   });
    io_.run();
    io_.restart();
    if (!migration_result || !*migration_result) {
      Error e = migration_result ? migration_result->error()
                                 : make_error(ErrorKind::internal, "the migration did not run");
      const bool interrupted = e.kind == ErrorKind::cancelled;
      return finish(interrupted ? 130 : (e.kind == ErrorKind::invalid_input ? 2 : 1),
                    interrupted ? "interrupted" : "error", e);
    }
    return std::nullopt;
  }

  // The migration's figures on the terminal; the exit code they make (0 when every VM migrated).
  int report_migration() {
    MigrationRecord& r = record();
    const MigrationSummary summary = summarize(r);
    if (r.outcome.empty()) r.outcome = summary.failed == 0 ? "completed" : "failed";
    out_ << fmt::format("migration {}: {}/{} VMs migrated; per VM mean {} P95 {} max {}, wall time {}\n",
                        r.outcome, summary.succeeded, summary.vms,
                        summary.mean_s ? fmt::format("{:.1f} s", *summary.mean_s) : "-",
                        summary.p95_s ? fmt::format("{:.1f} s", *summary.p95_s) : "-",
                        summary.max_s ? fmt::format("{:.1f} s", *summary.max_s) : "-",
                        summary.wall_s ? fmt::format("{:.1f} s", *summary.wall_s) : "-");
    for (const auto& v : r.vms)
      if (v.status != "succeeded")
        out_ << "  " << v.name << " " << v.status << " in " << v.failed_step << ": " << v.reason << "\n";
    out_ << "migration report: " << (result_.run_dir / "migration.md").string() << "\n";
    return summary.failed == 0 && r.outcome == "completed" ? 0 : 1;
  }

  // --then-storm: the migrated desktops booted on the destination (adopted, not cloned), then compared with
  // the source storm. Returns the exit code, `code` unless the storm or the comparison failed.
  int storm_migrated(int code) {
    if (forklift_->migrated.empty()) {
      out_ << "no migrated VM to storm\n";
      return code;
    }
    out_ << "boot storm of the " << forklift_->migrated.size() << " migrated desktops on "
         << plan_.destination.endpoint << "...\n";
    plan::StormPlan sp = destination_storm_plan(plan_, result_.run_dir, kDestinationScenario,
                                                static_cast<int>(forklift_->migrated.size()));
    engine::EngineHooks adopt_hooks = storm_hooks_;
    auto inner_make = storm_hooks_.make_provider;
    auto migrated = forklift_->migrated;
    adopt_hooks.make_provider = [inner_make, migrated](
                                    asio::any_io_executor ex,
                                    const api::ProviderConfig& c) -> std::unique_ptr<api::Provider> {
      std::unique_ptr<api::Provider> inner =
          inner_make ? inner_make(ex, c) : api::create_provider(c.kind, ex, c);
      return make_adopting_provider(std::move(inner), migrated);
    };
    engine::RunResult sr = engine::RunEngine(sp, storm_options(sp), adopt_hooks).run();
    result_.openshift_run = sr.run_dir;
    journal_->write("destination_storm", {{"runDir", sr.run_dir.string()},
                                          {"outcome", sr.outcome},
                                          {"vmsReady", sr.vms_ready},
                                          {"vmsTotal", sr.vms_total}});
    out_ << fmt::format("OpenShift storm: {}/{} desktops ready ({})\n", sr.vms_ready, sr.vms_total,
                        sr.run_dir.string());
    if (sr.error) out_ << "storm error: " << sr.error->what() << "\n";
    if (sr.exit_code != 0) code = sr.exit_code == 130 ? 130 : 1;
    if (result_.vsphere_run.empty() || sr.run_dir.empty()) {
      out_ << "no vSphere storm of these desktops to compare with (use vms.fromStorm or vms.fromRun)\n";
      return code;
    }
    reports::CompareOptions co;
    co.runs = {result_.vsphere_run, sr.run_dir};
    co.out_dir = result_.run_dir;
    std::ostringstream err;
    if (reports::run_compare(co, out_, err) != 0) {
      out_ << "compare failed: " << err.str();
      return 1;
    }
    result_.compared = true;
    journal_->write("compared", {{"runs", {result_.vsphere_run.string(), sr.run_dir.string()}}});
    out_ << "compare report: " << (result_.run_dir / "compare.md").string() << "\n";
    return code;
  }

  const MigrationPlan& plan_;
  const MigrateOptions& options_;
  const engine::EngineHooks& hooks_;
  std::ostream& out_;
  const std::string run_id_;
  asio::io_context io_;
  CancelSignal interrupt_;
  std::optional<asio::signal_set> signals_;
  MigrateResult result_;
  std::unique_ptr<engine::Journal> journal_;
  std::optional<ResolvedEndpoints> ep_;
  engine::EngineHooks storm_hooks_;
  std::vector<std::string> names_;
  std::optional<ForkliftMigration> forklift_;
};

}  // namespace

MigrateResult run_migration(const MigrationPlan& plan, const MigrateOptions& options,
                            const engine::EngineHooks& hooks, std::ostream& out) {
  return MigrationRun(plan, options, hooks, out).run();
}

}  // namespace bootstorm::migrate

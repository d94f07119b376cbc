// Migration record, tracker and JSON (see migration_record.hpp).
#include "orchestrator/migrate/migration_record.hpp"

#include <algorithm>
#include <chrono>

#include "common/rfc3339.hpp"

namespace bootstorm::migrate {
using nlohmann::json;

namespace {

std::optional<double> unix_of(const std::string& rfc3339) {
  if (rfc3339.empty()) return std::nullopt;
  auto t = parse_rfc3339(rfc3339);
  if (!t) return std::nullopt;
  return unix_seconds(*t);
}

json opt(const std::optional<double>& v) {
  return v ? json(*v) : json(nullptr);
}

std::optional<double> opt_from(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

std::string error_text(const std::string& phase, const std::vector<std::string>& reasons) {
  std::string out;
  for (const auto& r : reasons) out += (out.empty() ? "" : "; ") + r;
  if (out.empty()) out = phase.empty() ? std::string() : "failed in " + phase;
  return out;
}

bool is_completed_phase(const std::string& phase) {
  return phase == "Completed" || phase == "Succeeded";
}

}  // namespace

std::optional<double> StepRecord::duration_s() const {
  if (!started_s || !completed_s) return std::nullopt;
  return std::max(0.0, *completed_s - *started_s);
}

std::optional<double> VmMigrationRecord::total_s() const {
  if (!started_s || !completed_s) return std::nullopt;
  return std::max(0.0, *completed_s - *started_s);
}

const StepRecord* VmMigrationRecord::step(std::string_view n) const {
  for (const auto& s : steps)
    if (s.name == n) return &s;
  return nullptr;
}

double VmMigrationRecord::disk_mb() const {
  const StepRecord* s = step("DiskTransfer");
  if (s == nullptr) return 0;
  double total = static_cast<double>(s->progress_total);
  // Forklift reports DiskTransfer progress in MB (annotation unit: MB); accept GB/KB spellings too.
  if (s->unit == "GB" || s->unit == "GiB") return total * 1000.0;
  if (s->unit == "KB" || s->unit == "KiB") return total / 1000.0;
  return total;
}

std::optional<double> VmMigrationRecord::transfer_mbps() const {
  const StepRecord* s = step("DiskTransfer");
  if (s == nullptr || !s->error.empty()) return std::nullopt;
  auto d = s->duration_s();
  if (!d || *d <= 0 || disk_mb() <= 0 || s->completed_s == std::nullopt) return std::nullopt;
  return disk_mb() / *d;
}

json to_json(const StepRecord& s) {
  return json{{"name", s.name},
              {"phase", s.phase},
              {"startedS", opt(s.started_s)},
              {"completedS", opt(s.completed_s)},
              {"durationS", opt(s.duration_s())},
              {"progress", {{"completed", s.progress_completed}, {"total", s.progress_total}}},
              {"unit", s.unit},
              {"error", s.error}};
}

json to_json(const VmMigrationRecord& v) {
  json steps = json::array();
  for (const auto& s : v.steps) steps.push_back(to_json(s));
  return json{{"vm", v.name},
              {"id", v.id},
              {"targetName", v.target_name},
              {"status", v.status},
              {"phase", v.phase},
              {"startedS", opt(v.started_s)},
              {"completedS", opt(v.completed_s)},
              {"totalS", opt(v.total_s())},
              {"diskMB", v.disk_mb()},
              {"transferMBps", opt(v.transfer_mbps())},
              {"failedStep", v.failed_step},
              {"reason", v.reason},
              {"steps", steps}};
}

VmMigrationRecord vm_record_from_json(const json& j) {
  VmMigrationRecord v;
  if (!j.is_object()) return v;
  v.name = j.value("vm", "");
  v.id = j.value("id", "");
  v.target_name = j.value("targetName", "");
  v.status = j.value("status", "pending");
  v.phase = j.value("phase", "");
  v.started_s = opt_from(j, "startedS");
  v.completed_s = opt_from(j, "completedS");
  v.failed_step = j.value("failedStep", "");
  v.reason = j.value("reason", "");
  if (auto it = j.find("steps"); it != j.end() && it->is_array()) {
    for (const auto& s : *it) {
      if (!s.is_object()) continue;
      StepRecord r;
      r.name = s.value("name", "");
      r.phase = s.value("phase", "");
      r.started_s = opt_from(s, "startedS");
      r.completed_s = opt_from(s, "completedS");
      if (auto p = s.find("progress"); p != s.end() && p->is_object()) {
        r.progress_completed = p->value("completed", 0LL);
        r.progress_total = p->value("total", 0LL);
      }
      r.unit = s.value("unit", "");
      r.error = s.value("error", "");
      v.steps.push_back(std::move(r));
    }
  }
  return v;
}

MigrationTracker::MigrationTracker(std::vector<std::string> vm_names) {
  for (auto& n : vm_names) {
    VmMigrationRecord r;
    r.name = std::move(n);
    vms_.push_back(std::move(r));
  }
}

const VmMigrationRecord* MigrationTracker::find(const std::string& name) const {
  for (const auto& v : vms_)
    if (v.name == name) return &v;
  return nullptr;
}

std::optional<double> MigrationTracker::refine(const std::string& key, const std::string& rfc3339,
                                               double now) {
  auto api = unix_of(rfc3339);
  if (!api) return std::nullopt;
  auto [it, inserted] = first_seen_.emplace(key, now);
  const double seen = it->second;
  // Seen within the API's whole second: the change was pushed to us as it happened.
  if (seen >= *api && seen < *api + 1.0) return seen;
  return api;
}

std::vector<std::string> MigrationTracker::update(const std::vector<VmStatus>& statuses, double now) {
  std::vector<std::string> changed;
  for (const auto& st : statuses) {
    auto it = std::find_if(vms_.begin(), vms_.end(), [&](const VmMigrationRecord& r) {
      return (!st.name.empty() && r.name == st.name) || (!st.id.empty() && r.id == st.id);
    });
    if (it == vms_.end()) continue;  // a VM of an earlier migration of the same plan, or not ours
    const json before = to_json(*it);
    VmMigrationRecord& r = *it;
    if (!st.id.empty()) r.id = st.id;
    r.target_name = st.target_name.empty() ? r.target_name : st.target_name;
    r.phase = st.phase;
    if (auto t = refine(r.name + "//started", st.started, now)) {
      r.started_s = t;
    } else if (!r.started_s && (!st.phase.empty() || !st.pipeline.empty())) {
      r.started_s = now;
    }
    for (const auto& ps : st.pipeline) {
      auto sit = std::find_if(r.steps.begin(), r.steps.end(),
                              [&](const StepRecord& s) { return s.name == ps.name; });
      if (sit == r.steps.end()) {
        r.steps.push_back(StepRecord{});
        sit = std::prev(r.steps.end());
        sit->name = ps.name;
      }
      StepRecord& s = *sit;
      s.phase = ps.phase;
      s.progress_completed = ps.progress_completed;
      s.progress_total = ps.progress_total;
      if (!ps.unit.empty()) s.unit = ps.unit;
      const bool running_or_done = !ps.started.empty() || ps.phase == "Running" ||
                                   is_completed_phase(ps.phase) || !ps.completed.empty() ||
                                   !ps.error_reasons.empty();
      if (auto t = refine(r.name + "/" + ps.name + "/started", ps.started, now)) {
        s.started_s = t;
      } else if (!s.started_s && running_or_done) {
        s.started_s = now;
      }
      if (auto t = refine(r.name + "/" + ps.name + "/completed", ps.completed, now)) {
        s.completed_s = t;
      } else if (!s.completed_s && (is_completed_phase(ps.phase) || !ps.error_reasons.empty())) {
        s.completed_s = now;
      }
      if (!ps.error_reasons.empty() || !ps.error_phase.empty())
        s.error = error_text(ps.error_phase, ps.error_reasons);
    }
    const bool finished = st.done();
    if (finished) {
      if (auto t = refine(r.name + "//completed", st.completed, now)) {
        r.completed_s = t;
      } else if (!r.completed_s) {
        r.completed_s = now;
      }
      if (st.failed) {
        r.status = "failed";
      } else if (st.canceled) {
        r.status = "canceled";
      } else {
        r.status = "succeeded";
      }
    }
    if (st.failed) {
      // The failing step: the VM's error.phase when it names a pipeline step, else the step carrying an
      // error, else the first step that did not complete.
      std::string step;
      for (const auto& s : r.steps)
        if (s.name == st.error_phase) step = s.name;
      if (step.empty())
        for (const auto& s : r.steps)
          if (!s.error.empty()) {
            step = s.name;
            break;
          }
      if (step.empty())
        for (const auto& s : r.steps)
          if (!is_completed_phase(s.phase)) {
            step = s.name;
            break;
          }
      if (step.empty()) step = st.error_phase;
      r.failed_step = step;
      std::string reason = error_text(st.error_phase, st.error_reasons);
      if (reason.empty())
        for (const auto& s : r.steps)
          if (s.name == step && !s.error.empty()) reason = s.error;
      r.reason = reason;
    }
    if (to_json(r) != before) changed.push_back(r.name);
  }
  return changed;
}

std::vector<std::string> MigrationTracker::give_up(const std::string& reason, double now) {
  std::vector<std::string> changed;
  for (auto& r : vms_) {
    if (r.status != "pending") continue;
    r.status = "failed";
    r.reason = reason;
    for (const auto& s : r.steps)
      if (!s.completed_s) {
        r.failed_step = s.name;
        break;
      }
    if (r.started_s) r.completed_s = now;
    changed.push_back(r.name);
  }
  return changed;
}

bool MigrationTracker::all_done() const {
  return std::all_of(vms_.begin(), vms_.end(),
                     [](const VmMigrationRecord& r) { return r.status != "pending"; });
}

}  // namespace bootstorm::migrate

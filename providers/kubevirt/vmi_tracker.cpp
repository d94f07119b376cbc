// VMI state -> milestone reconciliation (see vmi_tracker.hpp for the timing rules).
#include "providers/kubevirt/vmi_tracker.hpp"

#include <algorithm>

#include "protocol/kube/kube_config.hpp"

namespace bootstorm::kubevirt {
using api::Milestone;
using nlohmann::json;

namespace {

std::size_t slot(Milestone m) {
  switch (m) {
    case Milestone::scheduled:
      return 0;
    case Milestone::running:
      return 1;
    case Milestone::guest_agent:
      return 2;
    case Milestone::ip_assigned:
      return 3;
    default:
      return 0;
  }
}

double seconds_between(std::chrono::system_clock::time_point a, std::chrono::system_clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

}  // namespace

VmiStatusView view_vmi(const json& vmi) {
  VmiStatusView v;
  if (!vmi.is_object()) return v;
  if (auto md = vmi.find("metadata"); md != vmi.end() && md->is_object()) v.name = md->value("name", "");
  auto st_it = vmi.find("status");
  if (st_it == vmi.end() || !st_it->is_object()) return v;
  const json& st = *st_it;
  v.phase = st.value("phase", "");
  if (auto n = st.find("nodeName"); n != st.end() && n->is_string()) v.node = n->get<std::string>();
  const bool past_scheduling = v.phase == "Scheduled" || v.phase == "Running" || v.phase == "Succeeded";
  v.scheduled = past_scheduling || (!v.node.empty() && v.phase != "Pending" && v.phase != "Scheduling" &&
                                    v.phase != "Failed" && v.phase != "");
  v.running = v.phase == "Running" || v.phase == "Succeeded";
  if (auto pts = st.find("phaseTransitionTimestamps"); pts != st.end() && pts->is_array()) {
    for (const auto& t : *pts) {
      if (!t.is_object()) continue;
      std::string phase = t.value("phase", "");
      auto ts_it = t.find("phaseTransitionTimestamp");
      if (ts_it == t.end() || !ts_it->is_string()) continue;
      auto ts = parse_rfc3339(ts_it->get<std::string>());
      if (!ts) continue;
      if (phase == "Scheduled") v.scheduled_at = *ts;
      if (phase == "Running") v.running_at = *ts;
    }
  }
  if (auto conds = st.find("conditions"); conds != st.end() && conds->is_array()) {
    for (const auto& c : *conds) {
      if (!c.is_object()) continue;
      if (c.value("type", "") == "PodScheduled" && c.value("status", "") == "False" &&
          c.value("reason", "") == "Unschedulable") {
        v.unschedulable = c.value("message", "");
        if (v.unschedulable.empty()) v.unschedulable = "Unschedulable";
      }
      if (c.value("type", "") != "AgentConnected") continue;
      if (c.value("status", "") != "True") continue;
      v.agent_connected = true;
      if (auto lt = c.find("lastTransitionTime"); lt != c.end() && lt->is_string()) {
        auto at = parse_rfc3339(lt->get<std::string>());
        v.agent_at = at ? std::make_optional(*at) : std::nullopt;
      }
    }
  }
  if (auto ifaces = st.find("interfaces"); ifaces != st.end() && ifaces->is_array()) {
    for (const auto& i : *ifaces) {
      if (!i.is_object()) continue;
      std::string ip = i.value("ipAddress", "");
      if (ip.empty()) {
        if (auto ips = i.find("ipAddresses");
            ips != i.end() && ips->is_array() && !ips->empty() && ips->front().is_string()) {
          ip = ips->front().get<std::string>();
        }
      }
      if (!ip.empty()) {
        v.ip = ip;
        break;
      }
    }
  }
  return v;
}

VmiTracker::VmiTracker(const std::vector<std::string>& vms, ClientInstant since) : last_alive_(since) {
  for (const auto& name : vms) tracked_[name] = {false, false, false, false};
}

std::size_t VmiTracker::reached(const std::string& name) const {
  auto it = tracked_.find(name);
  if (it == tracked_.end()) return 0;
  return static_cast<std::size_t>(std::count(it->second.begin(), it->second.end(), true));
}

std::vector<api::MilestoneEvent> VmiTracker::on_watch_object(const json& vmi, ClientInstant at, bool catch_up,
                                                             double lateness_bound_s) {
  auto events = apply(vmi, at, catch_up, lateness_bound_s);
  last_alive_ = at;
  return events;
}

std::vector<api::MilestoneEvent> VmiTracker::on_listed_object(const json& vmi, ClientInstant at) {
  return apply(vmi, at, true, 0);
}

std::vector<api::MilestoneEvent> VmiTracker::apply(const json& vmi, ClientInstant at, bool late,
                                                   double lateness_bound_s) {
  std::vector<api::MilestoneEvent> out;
  VmiStatusView v = view_vmi(vmi);
  auto it = tracked_.find(v.name);
  if (it == tracked_.end()) return out;
  auto& reached = it->second;
  if (!v.unschedulable.empty() && !v.scheduled) {
    unschedulable_[v.name] = v.unschedulable;
  } else {
    unschedulable_.erase(v.name);
  }
  auto emit = [&](Milestone m, bool now_reached, std::optional<std::chrono::system_clock::time_point> stamp,
                  std::string detail) {
    if (!now_reached || reached[slot(m)]) return;
    reached[slot(m)] = true;
    ++reached_count_;
    api::MilestoneEvent ev;
    ev.vm = v.name;
    ev.milestone = m;
    ev.detail = std::move(detail);
    if (!late) {
      ev.observed_mono = at.mono;
      ev.observed_wall = at.wall;
      ev.resolution_s = std::max(kWatchResolutionS, lateness_bound_s);
      ev.source = api::Source::watch;
    } else if (stamp) {
      // Truncated to the second by the API: it happened in [T, T+1 s), and no later than now.
      auto latest = std::min(*stamp + std::chrono::seconds(1), at.wall);
      ev.observed_wall = latest;
      ev.observed_mono =
          at.mono - std::chrono::duration_cast<std::chrono::steady_clock::duration>(at.wall - latest);
      ev.resolution_s = std::clamp(seconds_between(*stamp, latest), kWatchResolutionS, kTimestampResolutionS);
      ev.source = api::Source::recovered;
    } else {
      ev.observed_mono = at.mono;
      ev.observed_wall = at.wall;
      ev.resolution_s =
          std::max(kWatchResolutionS, std::chrono::duration<double>(at.mono - last_alive_.mono).count());
      ev.source = api::Source::recovered;
    }
    out.push_back(std::move(ev));
  };
  emit(Milestone::scheduled, v.scheduled, v.scheduled_at, v.node);
  emit(Milestone::running, v.running, v.running_at, v.node);
  emit(Milestone::guest_agent, v.agent_connected, v.agent_at, {});
  emit(Milestone::ip_assigned, !v.ip.empty(), std::nullopt, v.ip);
  if ((v.phase == "Failed" || v.phase == "Succeeded") && reached_count_ < tracked_.size() * 4) {
    if (std::count(reached.begin(), reached.end(), true) < 4) failed_.insert(v.name);
  }
  return out;
}

}  // namespace bootstorm::kubevirt

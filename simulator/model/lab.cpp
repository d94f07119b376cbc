// The Lab facade: construction from the spec, the names of the model's enums, faults and the fronts' seeded
// RNG. The rest of the API is implemented by the part of the model it belongs to (see detail/lab_impl.hpp).
#include "simulator/model/lab.hpp"

#include <algorithm>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <string_view>

#include "common/milestone_names.hpp"
#include "common/rfc3339.hpp"
#include "simulator/model/detail/keyed_random.hpp"
#include "simulator/model/detail/lab_impl.hpp"

namespace bootstorm::sim::model {

namespace {

// The lab times milestones from `scheduled` on: its Milestone is the tail of the shared list of names.
constexpr std::size_t kFirstLabMilestone = 2;
static_assert(std::string_view(kMilestoneNames[kFirstLabMilestone]) == "scheduled");
static_assert(kFirstLabMilestone + kMilestoneCount == kMilestoneNames.size());

}  // namespace

const char* to_string(Milestone milestone) noexcept {
  const auto index = static_cast<std::size_t>(milestone);
  return index < kMilestoneCount ? milestone_name(kFirstLabMilestone + index) : "unknown";
}

const char* to_string(PowerState state) noexcept {
  switch (state) {
    case PowerState::powered_off:
      return "POWERED_OFF";
    case PowerState::powered_on:
      return "POWERED_ON";
    case PowerState::suspended:
      return "SUSPENDED";
  }
  return "POWERED_OFF";
}

const char* to_string(ToolsState state) noexcept {
  return state == ToolsState::running ? "RUNNING" : "NOT_RUNNING";
}

const char* to_string(CloneKind kind) noexcept {
  switch (kind) {
    case CloneKind::full:
      return "full";
    case CloneKind::linked:
      return "linked";
    case CloneKind::instant:
      return "instant";
    case CloneKind::cdi_copy:
      return "copy";
    case CloneKind::cdi_snapshot:
      return "snapshot";
    case CloneKind::cdi_csi_clone:
      return "csi-clone";
  }
  return "full";
}

Lab::Lab(LabSpec spec, LabOptions options) : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.spec = std::move(spec);
  m.options = std::move(options);
  m.virtual_mode = m.options.mode == LabOptions::TimeMode::virtual_time;
  m.seed = m.options.seed.value_or(m.spec.seed);
  m.rng.seed(splitmix64(m.seed ^ 0xFA175));
  m.faults = m.spec.faults;
  m.anchor = std::chrono::steady_clock::now();
  const double wall = unix_seconds(std::chrono::system_clock::now());
  m.start_unix = wall;
  m.now_ = m.virtual_mode ? m.options.virtual_start.value_or(wall) : wall;
  m.settled_at = m.now_;
  m.limits_since = m.now_;
  if (!m.virtual_mode) {
    if (!m.options.executor) throw std::invalid_argument("Lab: real time mode needs an executor");
    m.timer = std::make_unique<boost::asio::steady_timer>(m.options.executor);
  }
  m.build_inventory();
  m.meter_start(m.now_);
}

Lab::~Lab() {
  shutdown();
}

const LabSpec& Lab::spec() const {
  return impl_->spec;
}
bool Lab::virtual_time() const {
  return impl_->virtual_mode;
}

Faults& Lab::faults() {
  return impl_->faults;
}
const Faults& Lab::faults() const {
  return impl_->faults;
}

double Lab::random_uniform() {
  return static_cast<double>(impl_->rng() >> 11) * 0x1.0p-53;
}

bool Lab::front_fault_applies(std::string_view path) const {
  const auto& paths = impl_->faults.paths;
  if (paths.empty()) return true;
  return std::any_of(paths.begin(), paths.end(),
                     [&](const std::string& p) { return path.substr(0, p.size()) == p; });
}

}  // namespace bootstorm::sim::model

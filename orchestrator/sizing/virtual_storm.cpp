// One scenario's storm in the lab model's virtual time (see the header).
#include "orchestrator/sizing/virtual_storm.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <functional>
#include <memory>

#include "common/async/token_bucket.hpp"
#include "common/kubevirt_rate_limits.hpp"
#include "simulator/model/admission_queue.hpp"
#include "simulator/model/model_bounds.hpp"

namespace bootstorm::sizing {

namespace model = sim::model;

namespace {

constexpr double kProvisionDeadlineS = 24 * 3600;

model::CloneKind cdi_kind(const model::KubeSpec& kube) {
  if (kube.clone_strategy == "copy") return model::CloneKind::cdi_copy;
  if (kube.clone_strategy == "snapshot") {
    // Without a VolumeSnapshotClass CDI falls back to a host-assisted copy.
    return kube.snapshot_class.empty() ? model::CloneKind::cdi_copy : model::CloneKind::cdi_snapshot;
  }
  return model::CloneKind::cdi_csi_clone;
}

async::TokenBucket::Clock::time_point bucket_time(double unix_s) {
  using Clock = async::TokenBucket::Clock;
  return Clock::time_point(
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(unix_s)));
}

// What the lab's callbacks reach. Shared with them: a callback the lab runs after the storm returned (a boot
// still going at the timeout, run on by delete_vms) finds it alive.
struct StormState {
  StormState(model::Lab& l, VirtualStormOptions o)
      : lab(l),
        options(std::move(o)),
        admission(l.spec().vcenter.max_concurrent_operations, l.spec().vcenter.host_cost_units) {}
  model::Lab& lab;
  VirtualStormOptions options;
  model::AdmissionQueue admission;
  std::optional<async::TokenBucket> launches;
  std::vector<VirtualVm> vms;
};

// Provisioning: clones in flight up to the client's concurrency, each admitted by vCenter's queue on vSphere.
class Provisioner : public std::enable_shared_from_this<Provisioner> {
 public:
  explicit Provisioner(std::shared_ptr<StormState> state)
      : state_(std::move(state)),
        lab_(state_->lab),
        options_(state_->options),
        admission_(state_->admission),
        vms_(state_->vms) {}

  Expected<void> run() {
    const model::Vm* golden = nullptr;
    if (options_.front == api::LabFront::vcenter) {
      golden = lab_.find_vm_by_name(options_.golden_vm);
      if (!golden) {
        return make_error(ErrorKind::not_found,
                          fmt::format("The lab has no golden VM '{}' to clone.", options_.golden_vm),
                          "Name one of the lab profile's goldenVMs as the plan's golden image.");
      }
      golden_id_ = golden->id;
      if (options_.clone_kind == model::CloneKind::instant &&
          golden->power != model::PowerState::powered_on) {
        // An instant clone forks a running source: power it on first, as the engine would find it.
        auto on = lab_.power_on(golden_id_, nullptr);
        if (!on) return on.error();
        lab_.run_until_idle(lab_.now() + kProvisionDeadlineS);
      }
    } else {
      if (lab_.golden_images().empty()) {
        return make_error(ErrorKind::not_found, "The lab has no golden image to clone.",
                          "Add goldenImages to the lab profile.");
      }
      const auto& image = lab_.golden_images().front().spec;
      image_ = image.name;
      image_namespace_ = image.namespace_;
      kind_ = cdi_kind(lab_.spec().kube);
    }
    for (std::size_t i = 0; i < vms_.size(); ++i) pending_.push_back(i);
    launch();
    lab_.run_until_idle(lab_.now() + kProvisionDeadlineS);
    return {};
  }

 private:
  // Iterative: a clone the lab refuses at once (a full datastore) finishes inside clone() and calls launch()
  // again; the nested call only notes that more may start, so a long run of refusals does not grow the stack.
  void launch() {
    if (launching_) {
      relaunch_ = true;
      return;
    }
    launching_ = true;
    do {
      relaunch_ = false;
      launch_some();
    } while (relaunch_);
    launching_ = false;
  }

  void launch_some() {
    while (in_flight_ < std::max(1, options_.max_concurrent) && !pending_.empty()) {
      const std::size_t index = pending_.front();
      pending_.pop_front();
      ++in_flight_;
      VirtualVm& vm = vms_[index];
      const model::Host* host = lab_.find_host(vm.host);
      const std::string host_id = host ? host->id : std::string();
      const double asked = lab_.now();
      auto start = [self = shared_from_this(), index, host_id, asked] { self->clone(index, host_id, asked); };
      if (options_.front != api::LabFront::vcenter ||
          admission_.admit(host_id, lab_.spec().vcenter.clone_cost, start)) {
        start();
      }
    }
  }

  void clone(std::size_t index, const std::string& host_id, double asked) {
    VirtualVm& vm = vms_[index];
    model::CloneRequest request;
    request.name = vm.model_name;
    if (options_.front == api::LabFront::vcenter) {
      request.kind = options_.clone_kind;
      request.source_vm_id = golden_id_;
      request.host_id = host_id;
    } else {
      request.kind = kind_;
      request.source_image = image_;
      request.source_image_namespace = image_namespace_;
      request.namespace_ = options_.namespace_;
      request.created_by_front = "kube";
    }
    vm.clone_method = model::to_string(request.kind);
    auto finished = [this, self = shared_from_this(), index, host_id, asked](Expected<std::string> result) {
      VirtualVm& done = vms_[index];
      if (result) {
        done.id = *result;
        done.clone_s = lab_.now() - asked;
      } else {
        done.failure = "the clone failed: " + result.error().message;
      }
      if (options_.front == api::LabFront::vcenter)
        admission_.release(host_id, lab_.spec().vcenter.clone_cost);
      --in_flight_;
      launch();
    };
    auto op = lab_.clone_vm(request, finished);
    if (!op) finished(op.error());
  }

  std::shared_ptr<StormState> state_;
  model::Lab& lab_;
  const VirtualStormOptions& options_;
  model::AdmissionQueue& admission_;
  std::vector<VirtualVm>& vms_;
  std::deque<std::size_t> pending_;
  int in_flight_ = 0;
  bool launching_ = false;
  bool relaunch_ = false;
  std::string golden_id_;
  std::string image_, image_namespace_;
  model::CloneKind kind_ = model::CloneKind::cdi_csi_clone;
};

// One VM's start request: through vCenter's admission (a power-on holds its host cost until the VM runs) or
// virt-controller's launch limiter (19 writes per launch, as the lab's controller is paced).
void start_vm(const std::shared_ptr<StormState>& state, std::size_t i) {
  model::Lab& lab = state->lab;
  VirtualVm& vm = state->vms[i];
  vm.start = lab.now();
  vm.milestones[api::Milestone::start_requested] = lab.now();
  vm.milestones[api::Milestone::start_acknowledged] = lab.now();
  if (state->options.front == api::LabFront::vcenter) {
    const model::Vm* model_vm = lab.find_vm(vm.id);
    const std::string host_id = model_vm ? model_vm->host_id : std::string();
    const int cost = lab.spec().vcenter.power_cost;
    auto power = [state, i, host_id, cost] {
      auto on = state->lab.power_on(state->vms[i].id, [state, host_id, cost](Expected<void>) {
        state->admission.release(host_id, cost);
      });
      if (!on) {
        state->vms[i].failure = "the power-on failed: " + on.error().message;
        state->admission.release(host_id, cost);
      }
    };
    if (state->admission.admit(host_id, cost, power)) power();
    return;
  }
  model::PowerOnOptions on;
  on.node = vm.host;
  std::chrono::steady_clock::duration wait{};
  for (int w = 0; w < kubevirt_limits::kVirtControllerWritesPerLaunch; ++w) {
    wait = state->launches->reserve(bucket_time(lab.now()));
  }
  on.control_plane_wait_s = std::chrono::duration<double>(wait).count();
  if (auto started = lab.power_on(vm.id, nullptr, on); !started) {
    vm.failure = "the start failed: " + started.error().message;
  }
}

}  // namespace

Expected<model::CloneKind> vcenter_clone_kind(const std::string& clone) {
  if (clone == "full") return model::CloneKind::full;
  if (clone == "linked") return model::CloneKind::linked;
  if (clone == "instant") return model::CloneKind::instant;
  return make_error(
      ErrorKind::invalid_input,
      fmt::format("golden.clone '{}' is not a clone kind of the lab's vCenter (full, linked, instant).",
                  clone));
}

Expected<VirtualStorm> run_virtual_storm(model::Lab& lab, const std::vector<VirtualVmSpec>& specs,
                                         const VirtualStormOptions& options) {
  if (!lab.virtual_time()) {
    return make_error(ErrorKind::internal, "a virtual storm needs a lab in virtual time");
  }
  if (specs.size() > model::kMaxLabVms) {
    return make_error(ErrorKind::invalid_input,
                      fmt::format("A storm of {} VMs is more than the lab model represents ({}).",
                                  specs.size(), model::kMaxLabVms),
                      "Model a smaller storm, or several smaller scenarios.");
  }
  auto state = std::make_shared<StormState>(lab, options);
  state->vms.reserve(specs.size());
  for (const auto& spec : specs) {
    const bool vcenter = options.front == api::LabFront::vcenter;
    if (vcenter ? lab.find_host(spec.host) == nullptr : lab.find_node(spec.host) == nullptr) {
      return make_error(ErrorKind::invalid_input,
                        fmt::format("The plan places VMs on '{}', which the lab has no {} of.", spec.host,
                                    vcenter ? "host" : "node"),
                        "Use the lab profile's host and node names in the plan's placement.");
    }
    VirtualVm vm;
    vm.name = spec.name;
    vm.model_name = spec.model_name.empty() ? spec.name : spec.model_name;
    vm.host = spec.host;
    state->vms.push_back(std::move(vm));
  }
  VirtualStorm storm;
  storm.provision_begin = lab.now();
  auto provisioner = std::make_shared<Provisioner>(state);
  if (auto provisioned = provisioner->run(); !provisioned) return provisioned.error();
  storm.provision_end = lab.now();
  if (options.settle_s > 0) lab.advance(options.settle_s);

  // The storm: every start requested at one instant (or on the ramp), through vCenter's admission on
  // vSphere and virt-controller's launch limiter on KubeVirt.
  storm.fired_at = lab.now();
  const auto limit = lab.spec().kube.virt_controller.value_or(kubevirt_limits::kVirtControllerDefault);
  state->launches.emplace(limit.qps, limit.burst, bucket_time(storm.fired_at));
  std::vector<std::uint64_t> ramp;
  std::size_t order = 0;
  for (std::size_t i = 0; i < state->vms.size(); ++i) {
    if (state->vms[i].id.empty()) continue;
    const bool ramped = options.ramp_mode == "ramp" && options.ramp_per_second > 0;
    const double delay = ramped ? static_cast<double>(order) / options.ramp_per_second : 0;
    ++order;
    auto start = [state, i] { start_vm(state, i); };
    if (delay > 0) {
      ramp.push_back(lab.schedule(delay, start));
    } else {
      start();
    }
  }
  const double deadline = storm.fired_at + options.timeout_s;
  lab.run_until_idle(deadline);
  for (auto handle : ramp) lab.cancel_scheduled(handle);  // starts the timeout came before
  storm.ended_at = std::min(lab.now(), deadline);
  storm.peak_operations_queued = state->admission.peak_queued();

  for (auto& vm : state->vms) {
    const model::Vm* model_vm = vm.id.empty() ? nullptr : lab.find_vm(vm.id);
    if (!model_vm) continue;
    if (options.front == api::LabFront::kubernetes && !model_vm->node.empty()) vm.host = model_vm->node;
    for (std::size_t m = 0; m < model::kMilestoneCount; ++m) {
      const auto& at = model_vm->milestones[m];
      if (!at || *at > deadline) continue;
      if (auto milestone = api::milestone_from_string(model::to_string(static_cast<model::Milestone>(m)))) {
        vm.milestones[*milestone] = *at;
      }
    }
  }
  storm.vms = state->vms;
  return storm;
}

void delete_vms(model::Lab& lab, const VirtualStorm& storm) {
  for (const auto& vm : storm.vms) {
    if (!vm.id.empty()) (void)lab.delete_vm(vm.id);
  }
  lab.run_until_idle(lab.now() + kProvisionDeadlineS);
}

}  // namespace bootstorm::sizing

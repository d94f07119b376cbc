#pragma once
// Internal to bootstorm::sim_kube: virt-controller's VirtualMachine controller against the lab model. It
// follows each VirtualMachine's run strategy and start/stop requests, creates its DataVolumes and its
// VirtualMachineInstance (powering the lab VM on), stops it, and writes the VirtualMachine's status. It owns
// the per-VirtualMachine state that is not part of the API object, which admission, the garbage collector,
// virt-handler and the subresources reach through it.
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>

#include "common/async/token_bucket.hpp"
#include "common/kubevirt_rate_limits.hpp"
#include "simulator/kube/detail/event_recorder.hpp"
#include "simulator/kube/detail/lifetime.hpp"
#include "simulator/kube/detail/object_publisher.hpp"
#include "simulator/kube/object_store.hpp"
#include "simulator/model/lab.hpp"

namespace bootstorm::sim::kube {

class CdiController;

// spec.runStrategy, or what the deprecated spec.running stands for.
std::string run_strategy_of(const nlohmann::json& vm);

class VmController {
 public:
  VmController(ObjectStore& store, model::Lab& lab, ObjectPublisher& publisher, EventRecorder& events,
               const Lifetime& lifetime, CdiController& cdi);

  // Admission created lab VM `model_id` for the VirtualMachine ns/name.
  void track(const std::string& ns, const std::string& name, const std::string& model_id);
  // The VirtualMachine ns/name is being deleted: forgets it and deletes its lab VM.
  void release(const std::string& ns, const std::string& name);
  bool tracks(const std::string& ns, const std::string& name) const;
  // The lab VM behind the VirtualMachine ns/name; nullopt when there is none.
  std::optional<std::string> model_id(const std::string& ns, const std::string& name) const;
  // The VirtualMachine ("ns", "name") behind lab VM `model_id`; nullopt when there is none.
  std::optional<std::pair<std::string, std::string>> vm_of(const std::string& model_id) const;

  // The start, stop and restart subresources: the next reconcile starts or stops the VMI.
  void request_start(const std::string& ns, const std::string& name);
  void request_stop(const std::string& ns, const std::string& name);
  // `running`: the current VMI has not reached a final phase and is stopped first.
  void request_restart(const std::string& ns, const std::string& name, bool running);
  // The VirtualMachineInstance ns/name is being deleted: powers its lab VM off, and reconciles the
  // VirtualMachine again once it is off.
  void power_off_deleted_vmi(const std::string& ns, const std::string& name);

  void reconcile(const std::string& ns, const std::string& name);
  void update_status(const std::string& ns, const std::string& name);

 private:
  struct Runtime {
    std::string model_id;          // lab VM id
    bool start_requested = false;  // start/restart subresource (Manual, RerunOnFailure)
    bool stop_requested = false;   // stop subresource
    bool once_started = false;     // runStrategy Once: started already
    bool stopping = false;         // power-off in flight
  };

  void create_vmi(const std::string& ns, const std::string& name);
  // virt-controller's client rate limiter: how long the writes of one VMI launch asked now wait for their
  // tokens. The limit is the KubeVirt CR's as it stands now (a changed CR resets the bucket, full).
  double launch_wait_s();
  void stop_vmi(const std::string& ns, const std::string& name);
  void delete_vmi_object(const std::string& ns, const std::string& name);

  ObjectStore& store_;
  model::Lab& lab_;
  ObjectPublisher& publisher_;
  EventRecorder& events_;
  const Lifetime& lifetime_;
  CdiController& cdi_;
  std::map<std::string, Runtime> vms_;                 // "ns/name" of VirtualMachines
  std::map<std::string, std::string> vm_by_model_id_;  // lab VM id -> "ns/name"
  std::optional<async::TokenBucket> launch_bucket_;    // on the lab's clock (unix seconds)
  kubevirt_limits::TokenBucketLimit launch_limit_;
};

}  // namespace bootstorm::sim::kube

// Provider decorator adopting existing VMs (see adopt_provider.hpp).
#include "orchestrator/migrate/adopt_provider.hpp"

#include "providers/api/forwarding_provider.hpp"

namespace bootstorm::migrate {
namespace {
using boost::asio::awaitable;

// The platform's provider for everything but making, deleting and listing the VMs (api::ForwardingProvider).
class AdoptingProvider final : public api::ForwardingProvider {
 public:
  AdoptingProvider(std::unique_ptr<api::Provider> inner, std::vector<AdoptedVm> vms)
      : ForwardingProvider(std::move(inner)), vms_(std::move(vms)) {}

  // The platform's read-only questions are about a golden image and clones; here the VMs exist already.
  awaitable<std::vector<api::CheckResult>> check(const api::CheckRequest& request) override {
    co_return co_await api::Provider::check(request);
  }

  awaitable<Expected<void>> check_inventory(const api::InventoryRequest& request) override {
    if (request.total_vms > vms_.size())
      co_return make_error(ErrorKind::invalid_input, "the storm needs " + std::to_string(request.total_vms) +
                                                         " VMs but only " + std::to_string(vms_.size()) +
                                                         " migrated VMs are available");
    co_return Expected<void>();
  }

  awaitable<Expected<api::VmHandle>> provision(const api::VmSpec& spec) override {
    if (spec.index < 1 || static_cast<std::size_t>(spec.index) > vms_.size())
      co_return make_error(ErrorKind::invalid_input, "no migrated VM number " + std::to_string(spec.index) +
                                                         " to adopt (have " + std::to_string(vms_.size()) +
                                                         ")");
    const AdoptedVm& vm = vms_[static_cast<std::size_t>(spec.index - 1)];
    api::VmHandle handle;
    handle.name = vm.name;
    handle.id = vm.id.empty() ? vm.name : vm.id;
    handle.host = vm.host.empty() ? spec.host : vm.host;
    handle.scenario = spec.scenario;
    co_return handle;
  }

  // The VM exists and is stopped: Forklift created it with targetPowerState off.
  awaitable<Expected<void>> wait_startable(const api::VmHandle&, std::chrono::milliseconds) override {
    co_return Expected<void>();
  }
  // Adopted VMs are not the storm's to delete: stop them, the migration's cleanup removes them.
  awaitable<Expected<void>> destroy(const api::VmHandle& vm) override { co_return co_await stop(vm); }
  awaitable<Expected<std::vector<api::VmHandle>>> list_run_vms(const std::string&) override {
    co_return std::vector<api::VmHandle>{};
  }
  // Nothing of the run's own to remove; the storm of adopted VMs reads no telemetry, states no facts and
  // made no clones.
  awaitable<Expected<void>> remove_run_artifacts(const std::string&) override { co_return Expected<void>(); }
  api::PlatformFacts facts() const override { return {}; }
  std::string clone_method(const api::VmHandle&) const override { return {}; }
  Expected<std::unique_ptr<api::TelemetrySource>> telemetry_source(
      const api::TelemetrySettings& settings) override {
    return api::Provider::telemetry_source(settings);
  }

 private:
  std::vector<AdoptedVm> vms_;
};

}  // namespace

std::unique_ptr<api::Provider> make_adopting_provider(std::unique_ptr<api::Provider> inner,
                                                      std::vector<AdoptedVm> vms) {
  if (!inner) return nullptr;
  return std::make_unique<AdoptingProvider>(std::move(inner), std::move(vms));
}

}  // namespace bootstorm::migrate

// Provider decorator adopting existing VMs (see adopt_provider.hpp).
#include "orchestrator/migrate/adopt_provider.hpp"

namespace bootstorm::migrate {
namespace {
using boost::asio::awaitable;

class AdoptingProvider : public api::Provider {
 public:
  AdoptingProvider(std::unique_ptr<api::Provider> inner, std::vector<AdoptedVm> vms)
      : inner_(std::move(inner)), vms_(std::move(vms)) {}

  api::Capabilities capabilities() const override { return inner_->capabilities(); }
  awaitable<Expected<void>> connect() override { co_return co_await inner_->connect(); }

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
  awaitable<Expected<void>> prepare_storm(std::size_t expected_starts) override {
    co_return co_await inner_->prepare_storm(expected_starts);
  }
  awaitable<Expected<api::StartResult>> start(const api::VmHandle& vm) override {
    co_return co_await inner_->start(vm);
  }
  awaitable<void> observe(std::vector<api::VmHandle> vms, api::MilestoneSink sink,
                          CancelSignal stop) override {
    co_await inner_->observe(std::move(vms), std::move(sink), std::move(stop));
  }
  awaitable<Expected<void>> stop(const api::VmHandle& vm) override { co_return co_await inner_->stop(vm); }
  // Adopted VMs are not the storm's to delete: stop them, the migration's cleanup removes them.
  awaitable<Expected<void>> destroy(const api::VmHandle& vm) override { co_return co_await inner_->stop(vm); }
  awaitable<Expected<std::vector<api::VmHandle>>> list_run_vms(const std::string&) override {
    co_return std::vector<api::VmHandle>{};
  }
  awaitable<void> disconnect() override { co_await inner_->disconnect(); }
  api::ApiStats stats() const override { return inner_->stats(); }

 private:
  std::unique_ptr<api::Provider> inner_;
  std::vector<AdoptedVm> vms_;
};

}  // namespace

std::unique_ptr<api::Provider> make_adopting_provider(std::unique_ptr<api::Provider> inner,
                                                      std::vector<AdoptedVm> vms) {
  if (!inner) return nullptr;
  return std::make_unique<AdoptingProvider>(std::move(inner), std::move(vms));
}

}  // namespace bootstorm::migrate

#pragma once
// FakeProvider: an in-memory api::Provider for the engine's unit tests. Everything is virtual time on the
// real steady clock (milliseconds), configurable per VM: clone delay and failures, a start call that blocks
// (like vCenter's power start) or fails, the milestones a VM reaches after its start request, VMs that never
// boot, foreign objects returned by list_run_vms. It records every call so tests can assert on them.
#include <boost/asio/any_io_executor.hpp>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "providers/api/provider.hpp"

namespace bootstorm::test {

struct FakeBehaviour {
  std::chrono::milliseconds provision_delay{5};
  std::set<std::string> provision_fail;            // VM names whose clone fails
  std::chrono::milliseconds start_write_delay{0};  // before the request counts as written
  std::chrono::milliseconds start_block{0};        // written -> acknowledged (vCenter blocks until on)
  std::set<std::string> start_fail;                // VM names whose start fails
  // Milestones reached after start_requested (ms), for every VM unless overridden in per_vm.
  std::map<api::Milestone, std::chrono::milliseconds> milestones = {
      {api::Milestone::running, std::chrono::milliseconds(20)},
      {api::Milestone::guest_agent, std::chrono::milliseconds(40)},
      {api::Milestone::ip_assigned, std::chrono::milliseconds(50)}};
  std::map<std::string, std::map<api::Milestone, std::chrono::milliseconds>> per_vm;
  std::set<std::string> never_boot;  // VMs that reach no milestone at all
  std::string ip = "127.0.0.1";      // detail of ip_assigned
  double resolution_s = 0.01;
  std::chrono::milliseconds observe_poll{5};
  bool observe_ignores_stop = false;         // misbehaving provider: observe never returns by itself
  std::vector<api::VmHandle> extra_run_vms;  // list_run_vms returns these on top of the live VMs
  std::function<void(const std::string& vm)> on_start;  // called when a start request is written
  bool fail_connect = false;
  bool fail_inventory = false;
};

struct FakeRecord {
  std::vector<std::string> calls;  // "connect", "provision bs-..", "start bs-..", ...
  std::map<std::string, std::chrono::steady_clock::time_point> written;   // start written per VM
  std::map<std::string, std::chrono::steady_clock::time_point> released;  // start() entered per VM
  std::set<std::string> live;  // VMs that exist on the fake platform
  std::vector<std::string> destroyed;
  std::size_t starts_in_flight = 0;
  std::size_t peak_starts_in_flight = 0;
  std::size_t observe_calls = 0;
  std::size_t observe_returned = 0;
  bool disconnected = false;
  std::size_t prepare_storm_expected = 0;
};

class FakeProvider final : public api::Provider {
 public:
  FakeProvider(boost::asio::any_io_executor executor, api::ProviderConfig config, FakeBehaviour behaviour,
               std::shared_ptr<FakeRecord> record);

  api::Capabilities capabilities() const override;
  boost::asio::awaitable<Expected<void>> connect() override;
  boost::asio::awaitable<Expected<void>> check_inventory(const api::InventoryRequest& request) override;
  boost::asio::awaitable<Expected<api::VmHandle>> provision(const api::VmSpec& spec) override;
  boost::asio::awaitable<Expected<void>> wait_startable(const api::VmHandle& vm,
                                                        std::chrono::milliseconds timeout) override;
  boost::asio::awaitable<Expected<void>> prepare_storm(std::size_t expected_starts) override;
  boost::asio::awaitable<Expected<api::StartResult>> start(const api::VmHandle& vm) override;
  boost::asio::awaitable<void> observe(std::vector<api::VmHandle> vms, api::MilestoneSink sink,
                                       CancelSignal stop) override;
  boost::asio::awaitable<Expected<void>> stop(const api::VmHandle& vm) override;
  boost::asio::awaitable<Expected<void>> destroy(const api::VmHandle& vm) override;
  boost::asio::awaitable<Expected<std::vector<api::VmHandle>>> list_run_vms(
      const std::string& run_id) override;
  boost::asio::awaitable<void> disconnect() override;
  http::ApiStats stats() const override;

  const api::ProviderConfig& config() const { return config_; }

 private:
  boost::asio::awaitable<void> sleep(std::chrono::milliseconds d);

  boost::asio::any_io_executor executor_;
  api::ProviderConfig config_;
  FakeBehaviour b_;
  std::shared_ptr<FakeRecord> rec_;
  http::ApiStats stats_;
  std::map<std::string, api::VmHandle> handles_;
};

// Registers kind "fake" (and returns a factory) that creates FakeProviders sharing `record`.
std::function<std::unique_ptr<api::Provider>(boost::asio::any_io_executor, const api::ProviderConfig&)>
fake_factory(FakeBehaviour behaviour, std::shared_ptr<FakeRecord> record);

}  // namespace bootstorm::test

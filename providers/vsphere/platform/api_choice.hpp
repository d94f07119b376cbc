#pragma once
// Platform kind "vsphere": which vCenter API a run speaks (platform.api), and the provider that speaks it.
//
//   vim25  the SOAP API at /sdk (providers/vsphere/vim25_provider): linked and instant clones,
//          PowerOnMultiVM, milestones pushed through the PropertyCollector;
//   rest   the REST API at /api or /rest (providers/vsphere): full clones only, polled milestones;
//   auto   vim25 when /sdk answers RetrieveServiceContent, else REST. A vCenter that cannot be reached at
//          all is an error either way, not a reason to fall back.
//
// The choice is made at connect() and stated in capabilities().api, which the engine journals and the report
// shows.
#include <boost/asio/any_io_executor.hpp>
#include <memory>
#include <string>

#include "providers/api/provider.hpp"

namespace bootstorm::vsphere {

// Registers kind "vsphere" (descriptor.hpp) with a factory that makes an ApiChoosingProvider.
void register_provider();

class ApiChoosingProvider final : public api::Provider {
 public:
  ApiChoosingProvider(boost::asio::any_io_executor executor, api::ProviderConfig config);
  ~ApiChoosingProvider() override;

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
  boost::asio::awaitable<Expected<void>> remove_run_artifacts(const std::string& run_id) override;
  boost::asio::awaitable<void> disconnect() override;
  api::ApiStats stats() const override;
  api::PlatformFacts facts() const override;
  std::string clone_method(const api::VmHandle& vm) const override;
  Expected<std::unique_ptr<api::TelemetrySource>> telemetry_source(
      const api::TelemetrySettings& settings) override;
  boost::asio::awaitable<std::vector<api::CheckResult>> check(const api::CheckRequest& request) override;

 private:
  // Picks the API (auto: probes /sdk) and makes the provider; an unreachable vCenter is an error.
  boost::asio::awaitable<Expected<void>> choose();
  Error not_connected() const;

  boost::asio::any_io_executor executor_;
  api::ProviderConfig config_;
  std::unique_ptr<api::Provider> chosen_;
  std::string why_;  // how the API was chosen, for capabilities().api
};

}  // namespace bootstorm::vsphere

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

#include "providers/api/forwarding_provider.hpp"
#include "providers/vsphere/settings.hpp"

namespace bootstorm::vsphere {

// Registers kind "vsphere" (descriptor.hpp) with a factory that makes an ApiChoosingProvider.
void register_provider();

// Every call but the two below goes to the provider of the chosen API (api::ForwardingProvider).
class ApiChoosingProvider final : public api::ForwardingProvider {
 public:
  ApiChoosingProvider(boost::asio::any_io_executor executor, api::ProviderConfig config);
  ~ApiChoosingProvider() override;

  api::Capabilities capabilities() const override;
  boost::asio::awaitable<Expected<void>> connect() override;

 private:
  // Picks the API (auto: probes /sdk) and makes the provider; an unreachable vCenter is an error.
  boost::asio::awaitable<Expected<void>> choose();
  Error missing_target() const override;

  boost::asio::any_io_executor executor_;
  api::ProviderConfig config_;
  Settings settings_;  // the kind's own part of the plan (config_.settings, typed)
  std::string why_;    // how the API was chosen, for capabilities().api
};

}  // namespace bootstorm::vsphere

#pragma once
// A Provider that passes every call on to another one, its target, for the providers that change only a few
// calls of another: the vSphere kind's API choice (the target is made at connect(), once the API is known)
// and the migration's provider that adopts migrated VMs instead of cloning. Said once here, so that a new
// Provider call is forwarded by both.
//
// Before there is a target, calls fail with missing_target(); observe() and disconnect() do nothing.
#include <memory>

#include "providers/api/provider.hpp"

namespace bootstorm::api {

class ForwardingProvider : public Provider {
 public:
  Capabilities capabilities() const override;
  boost::asio::awaitable<Expected<void>> connect() override;
  boost::asio::awaitable<Expected<void>> check_inventory(const InventoryRequest& request) override;
  boost::asio::awaitable<std::vector<CheckResult>> check(const CheckRequest& request) override;
  boost::asio::awaitable<Expected<VmHandle>> provision(const VmSpec& spec) override;
  boost::asio::awaitable<Expected<void>> wait_startable(const VmHandle& vm,
                                                        std::chrono::milliseconds timeout) override;
  boost::asio::awaitable<Expected<void>> prepare_storm(std::size_t expected_starts) override;
  boost::asio::awaitable<Expected<StartResult>> start(const VmHandle& vm) override;
  boost::asio::awaitable<void> observe(std::vector<VmHandle> vms, MilestoneSink sink,
                                       CancelSignal stop) override;
  boost::asio::awaitable<Expected<void>> stop(const VmHandle& vm) override;
  boost::asio::awaitable<Expected<void>> destroy(const VmHandle& vm) override;
  boost::asio::awaitable<Expected<std::vector<VmHandle>>> list_run_vms(const std::string& run_id) override;
  boost::asio::awaitable<Expected<void>> remove_run_artifacts(const std::string& run_id) override;
  boost::asio::awaitable<void> disconnect() override;
  http::ApiStats stats() const override;
  PlatformFacts facts() const override;
  std::string clone_method(const VmHandle& vm) const override;
  Expected<std::unique_ptr<TelemetrySource>> telemetry_source(const TelemetrySettings& settings) override;

 protected:
  explicit ForwardingProvider(std::unique_ptr<Provider> target = nullptr) : target_(std::move(target)) {}

  Provider* target() const { return target_.get(); }
  void set_target(std::unique_ptr<Provider> target) { target_ = std::move(target); }
  // What a call made before there is a target answers.
  virtual Error missing_target() const;

 private:
  std::unique_ptr<Provider> target_;
};

}  // namespace bootstorm::api

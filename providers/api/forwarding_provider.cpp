#include "providers/api/forwarding_provider.hpp"

namespace bootstorm::api {

namespace asio = boost::asio;

Error ForwardingProvider::missing_target() const {
  return make_error(ErrorKind::internal, "the provider was used before connect()");
}

Capabilities ForwardingProvider::capabilities() const {
  return target_ ? target_->capabilities() : Capabilities{};
}

asio::awaitable<Expected<void>> ForwardingProvider::connect() {
  if (!target_) co_return missing_target();
  co_return co_await target_->connect();
}

asio::awaitable<Expected<void>> ForwardingProvider::check_inventory(const InventoryRequest& request) {
  if (!target_) co_return missing_target();
  co_return co_await target_->check_inventory(request);
}

asio::awaitable<std::vector<CheckResult>> ForwardingProvider::check(const CheckRequest& request) {
  if (!target_) co_return std::vector<CheckResult>{failed_check("API", missing_target())};
  co_return co_await target_->check(request);
}

asio::awaitable<Expected<VmHandle>> ForwardingProvider::provision(const VmSpec& spec) {
  if (!target_) co_return missing_target();
  co_return co_await target_->provision(spec);
}

asio::awaitable<Expected<void>> ForwardingProvider::wait_startable(const VmHandle& vm,
                                                                   std::chrono::milliseconds timeout) {
  if (!target_) co_return missing_target();
  co_return co_await target_->wait_startable(vm, timeout);
}

asio::awaitable<Expected<void>> ForwardingProvider::prepare_storm(std::size_t expected_starts) {
  if (!target_) co_return missing_target();
  co_return co_await target_->prepare_storm(expected_starts);
}

asio::awaitable<Expected<StartResult>> ForwardingProvider::start(const VmHandle& vm) {
  if (!target_) co_return missing_target();
  co_return co_await target_->start(vm);
}

asio::awaitable<void> ForwardingProvider::observe(std::vector<VmHandle> vms, MilestoneSink sink,
                                                  CancelSignal stop) {
  if (!target_) co_return;
  co_await target_->observe(std::move(vms), std::move(sink), std::move(stop));
}

asio::awaitable<Expected<void>> ForwardingProvider::stop(const VmHandle& vm) {
  if (!target_) co_return missing_target();
  co_return co_await target_->stop(vm);
}

asio::awaitable<Expected<void>> ForwardingProvider::destroy(const VmHandle& vm) {
  if (!target_) co_return missing_target();
  co_return co_await target_->destroy(vm);
}

asio::awaitable<Expected<std::vector<VmHandle>>> ForwardingProvider::list_run_vms(const std::string& run_id) {
  if (!target_) co_return missing_target();
  co_return co_await target_->list_run_vms(run_id);
}

asio::awaitable<Expected<void>> ForwardingProvider::remove_run_artifacts(const std::string& run_id) {
  if (!target_) co_return missing_target();
  co_return co_await target_->remove_run_artifacts(run_id);
}

asio::awaitable<void> ForwardingProvider::disconnect() {
  if (target_) co_await target_->disconnect();
}

http::ApiStats ForwardingProvider::stats() const {
  return target_ ? target_->stats() : http::ApiStats{};
}

PlatformFacts ForwardingProvider::facts() const {
  return target_ ? target_->facts() : PlatformFacts{};
}

std::string ForwardingProvider::clone_method(const VmHandle& vm) const {
  return target_ ? target_->clone_method(vm) : std::string();
}

Expected<std::unique_ptr<TelemetrySource>> ForwardingProvider::telemetry_source(
    const TelemetrySettings& settings) {
  if (!target_) return missing_target();
  return target_->telemetry_source(settings);
}

}  // namespace bootstorm::api

// KubeVirt provider: connection, capabilities and the api::Provider façade (see kubevirt_provider.hpp).
#include "providers/kubevirt/kubevirt_provider.hpp"

#include <spdlog/spdlog.h>

#include "common/log.hpp"
#include "protocol/kube/http_kube_api.hpp"
#include "providers/kube/client_config.hpp"
#include "providers/kubevirt/detail/provider_impl.hpp"
#include "providers/kubevirt/vmi_tracker.hpp"

namespace bootstorm::kubevirt {
namespace asio = boost::asio;
using asio::awaitable;
using nlohmann::json;

namespace detail {

ProviderImpl::ProviderImpl(asio::any_io_executor executor, api::ProviderConfig config,
                           std::shared_ptr<kube::KubeApi> api)
    : executor_(std::move(executor)),
      config_(std::move(config)),
      settings_(settings_of(config_.settings)),
      api_(std::move(api)) {
  log::register_secret(config_.password);
  if (api_) server_ = api_->server();
}

api::Capabilities ProviderImpl::capabilities() const {
  api::Capabilities caps;
  caps.observed = {{api::Milestone::scheduled, kWatchResolutionS},
                   {api::Milestone::running, kWatchResolutionS},
                   {api::Milestone::guest_agent, kWatchResolutionS},
                   {api::Milestone::ip_assigned, kWatchResolutionS}};
  caps.start_blocks_until_powered_on = false;
  return caps;
}

http::ApiStats ProviderImpl::stats() const {
  return api_ ? api_->stats() : http::ApiStats{};
}

awaitable<Expected<void>> ProviderImpl::connect() {
  if (!api_) {
    auto resolved = kube::resolve_client_config(config_);
    if (!resolved) co_return resolved.error();
    if (settings_.namespace_.empty()) {
      settings_.namespace_ = resolved->default_namespace.empty() ? "default" : resolved->default_namespace;
    }
    kube::HttpKubeOptions options;
    options.requests_per_second = config_.requests_per_second;
    // At most one second of budget at once: a burst of maxConcurrent (10,000 in a scale run) sent every
    // create at the same instant, whatever requestsPerSecond said.
    options.burst =
        std::min<double>(std::max(1, config_.max_concurrent), std::max(1.0, config_.requests_per_second));
    // One connection per concurrent call, except that pipelined starts share theirs (start_depth()).
    options.max_connections =
        start_connections(static_cast<std::size_t>(std::max(1, config_.max_concurrent)));
    options.watch_connections = 4;
    options.request_timeout = config_.request_timeout;
    options.user_agent = "bootstorm/kubevirt";
    options.dry_run = config_.dry_run;
    options.on_gone = config_.platform_gone;
    api_ = std::make_shared<kube::HttpKubeApi>(executor_, std::move(*resolved), std::move(options));
    server_ = api_->server();
  } else if (settings_.namespace_.empty()) {
    settings_.namespace_ = "default";
  }
  // Named first: g++ 12 miscompiles aggregate temporaries inside a co_await expression.
  const kube::ConnectProbe probe{
      "/apis/kubevirt.io/v1", "kubevirt.io/v1",
      "install KubeVirt / OpenShift Virtualization, or check that the context points at the right cluster"};
  auto connected = co_await api_->connect(probe);
  if (!connected) co_return connected.error();
  datavolumes_ = std::make_shared<DataVolumeWaiter>(executor_, api_, settings_.namespace_, config_.run_id);
  spdlog::info("connected to {}, namespace {}", server_, settings_.namespace_);
  co_await learn_platform();
  co_return Expected<void>();
}

awaitable<void> ProviderImpl::disconnect() {
  shutdown();
  if (api_) api_->close();
  co_return;
}

void ProviderImpl::shutdown() {
  if (datavolumes_) datavolumes_->shutdown();
}

awaitable<Expected<http::Response>> ProviderImpl::call(std::string method, std::string target,
                                                       std::string body, std::string what,
                                                       kube::Budget budget) {
  if (!api_) co_return make_error(ErrorKind::internal, what + ": not connected");
  kube::ApiCall call{std::move(method), std::move(target), std::move(body)};
  call.budget = budget;
  co_return co_await api_->call(std::move(call), std::move(what));
}

}  // namespace detail

namespace {

class KubevirtProvider final : public api::Provider {
 public:
  KubevirtProvider(asio::any_io_executor executor, const api::ProviderConfig& config,
                   std::shared_ptr<kube::KubeApi> api)
      : impl_(std::make_shared<detail::ProviderImpl>(std::move(executor), config, std::move(api))) {}
  ~KubevirtProvider() override { impl_->shutdown(); }

  api::Capabilities capabilities() const override { return impl_->capabilities(); }
  // Each operation holds the implementation for as long as its coroutine runs.
  awaitable<Expected<void>> connect() override {
    auto impl = impl_;
    co_return co_await impl->connect();
  }
  awaitable<Expected<void>> check_inventory(const api::InventoryRequest& request) override {
    auto impl = impl_;
    co_return co_await impl->check_inventory(request);
  }
  awaitable<Expected<api::VmHandle>> provision(const api::VmSpec& spec) override {
    auto impl = impl_;
    co_return co_await impl->provision(spec);
  }
  awaitable<Expected<void>> wait_startable(const api::VmHandle& vm,
                                           std::chrono::milliseconds timeout) override {
    auto impl = impl_;
    co_return co_await impl->wait_startable(vm, timeout);
  }
  awaitable<Expected<void>> prepare_storm(std::size_t expected_starts) override {
    auto impl = impl_;
    co_return co_await impl->prepare_storm(expected_starts);
  }
  awaitable<Expected<api::StartResult>> start(const api::VmHandle& vm) override {
    auto impl = impl_;
    co_return co_await impl->start(vm);
  }
  awaitable<void> observe(std::vector<api::VmHandle> vms, api::MilestoneSink sink,
                          CancelSignal stop) override {
    auto impl = impl_;
    co_await impl->observe(std::move(vms), std::move(sink), std::move(stop));
  }
  awaitable<Expected<void>> stop(const api::VmHandle& vm) override {
    auto impl = impl_;
    co_return co_await impl->stop(vm);
  }
  awaitable<Expected<void>> destroy(const api::VmHandle& vm) override {
    auto impl = impl_;
    co_return co_await impl->destroy(vm);
  }
  awaitable<Expected<std::vector<api::VmHandle>>> list_run_vms(const std::string& run_id) override {
    auto impl = impl_;
    co_return co_await impl->list_run_vms(run_id);
  }
  awaitable<void> disconnect() override {
    auto impl = impl_;
    co_await impl->disconnect();
  }
  http::ApiStats stats() const override { return impl_->stats(); }
  api::PlatformFacts facts() const override { return impl_->facts(); }
  std::string clone_method(const api::VmHandle& vm) const override { return impl_->clone_method(vm); }
  Expected<std::unique_ptr<api::TelemetrySource>> telemetry_source(
      const api::TelemetrySettings& settings) override {
    return impl_->telemetry_source(settings);
  }
  awaitable<std::vector<api::CheckResult>> check(const api::CheckRequest& request) override {
    auto impl = impl_;
    co_return co_await impl->check(request);
  }

 private:
  std::shared_ptr<detail::ProviderImpl> impl_;
};

}  // namespace

std::unique_ptr<api::Provider> make_provider(asio::any_io_executor executor,
                                             const api::ProviderConfig& config,
                                             std::shared_ptr<kube::KubeApi> api) {
  return std::make_unique<KubevirtProvider>(std::move(executor), config, std::move(api));
}

std::unique_ptr<api::Provider> make_provider(asio::any_io_executor executor,
                                             const api::ProviderConfig& config) {
  return make_provider(std::move(executor), config, nullptr);
}

void register_provider() {
  api::register_platform(descriptor(), [](asio::any_io_executor executor, const api::ProviderConfig& config) {
    return make_provider(std::move(executor), config);
  });
}

}  // namespace bootstorm::kubevirt

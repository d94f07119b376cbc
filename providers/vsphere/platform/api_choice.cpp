// Platform kind "vsphere": the API choice and the delegation to the chosen provider (see api_choice.hpp).
#include "providers/vsphere/platform/api_choice.hpp"

#include <spdlog/spdlog.h>

#include "providers/vsphere/descriptor.hpp"
#include "providers/vsphere/transport.hpp"
#include "providers/vsphere/vim25/session.hpp"
#include "providers/vsphere/vim25_provider/vim25_provider.hpp"
#include "providers/vsphere/vsphere_provider.hpp"

namespace bootstorm::vsphere {

namespace asio = boost::asio;

void register_provider() {
  api::register_platform(descriptor(), [](asio::any_io_executor executor, const api::ProviderConfig& config) {
    std::unique_ptr<api::Provider> provider = std::make_unique<ApiChoosingProvider>(executor, config);
    return provider;
  });
}

ApiChoosingProvider::ApiChoosingProvider(asio::any_io_executor executor, api::ProviderConfig config)
    : executor_(std::move(executor)), config_(std::move(config)) {}

ApiChoosingProvider::~ApiChoosingProvider() = default;

asio::awaitable<Expected<void>> ApiChoosingProvider::choose() {
  std::string api = config_.vsphere_api.empty() ? std::string("auto") : config_.vsphere_api;
  if (api == "auto") {
    // RetrieveServiceContent needs no session: whether /sdk speaks vim25 at all.
    auto transport = make_http_transport(executor_, config_);
    vim25::Session probe(
        executor_, *transport,
        SessionSettings{config_.endpoint, config_.username, config_.password, config_.request_timeout});
    auto content = co_await probe.probe();
    if (content) {
      api = "vim25";
      why_ = "platform.api auto: " + config_.endpoint + "/sdk answered vim25 " + content->about.api_version;
    } else if (content.error().kind == ErrorKind::http_status ||
               content.error().kind == ErrorKind::protocol) {
      api = "rest";
      why_ = "platform.api auto: " + config_.endpoint + "/sdk does not answer vim25 (" +
             content.error().message + ")";
    } else {
      co_return content.error();  // unreachable, TLS, timeout: the same for both APIs
    }
    if (api == "vim25") {
      spdlog::info("{}; using the vim25 (SOAP) API", why_);
    } else {
      spdlog::warn(
          "{}; using the REST API: clones are full copies (no linked clones) and Tools and IP are "
          "polled within the request budget. Set platform.api: vim25 to insist on /sdk",
          why_);
    }
  } else {
    why_ = "platform.api " + api;
  }
  if (api == "vim25") {
    chosen_ =
        std::make_unique<vim25::Vim25Provider>(executor_, config_, make_http_transport(executor_, config_));
  } else {
    chosen_ = std::make_unique<VsphereProvider>(executor_, config_, make_http_transport(executor_, config_));
  }
  co_return Expected<void>{};
}

Error ApiChoosingProvider::not_connected() const {
  return make_error(ErrorKind::internal, "the vSphere provider was used before connect()");
}

api::Capabilities ApiChoosingProvider::capabilities() const {
  if (!chosen_) {
    // Before connect(): what every vSphere API observes (the descriptor's list).
    api::Capabilities c;
    for (const auto& name : descriptor().observed_milestones)
      if (auto m = api::milestone_from_string(name)) c.observed[*m] = 1.0;
    c.start_blocks_until_powered_on = true;
    return c;
  }
  api::Capabilities c = chosen_->capabilities();
  if (c.api.empty()) c.api = "REST (/api)";
  c.api += " — " + why_;
  return c;
}

asio::awaitable<Expected<void>> ApiChoosingProvider::connect() {
  if (!chosen_) {
    auto chosen = co_await choose();
    if (!chosen) co_return chosen;
  }
  co_return co_await chosen_->connect();
}

asio::awaitable<Expected<void>> ApiChoosingProvider::check_inventory(const api::InventoryRequest& request) {
  if (!chosen_) co_return not_connected();
  co_return co_await chosen_->check_inventory(request);
}

asio::awaitable<Expected<api::VmHandle>> ApiChoosingProvider::provision(const api::VmSpec& spec) {
  if (!chosen_) co_return not_connected();
  co_return co_await chosen_->provision(spec);
}

asio::awaitable<Expected<void>> ApiChoosingProvider::wait_startable(const api::VmHandle& vm,
                                                                    std::chrono::milliseconds timeout) {
  if (!chosen_) co_return not_connected();
  co_return co_await chosen_->wait_startable(vm, timeout);
}

asio::awaitable<Expected<void>> ApiChoosingProvider::prepare_storm(std::size_t expected_starts) {
  if (!chosen_) co_return not_connected();
  co_return co_await chosen_->prepare_storm(expected_starts);
}

asio::awaitable<Expected<api::StartResult>> ApiChoosingProvider::start(const api::VmHandle& vm) {
  if (!chosen_) co_return not_connected();
  co_return co_await chosen_->start(vm);
}

asio::awaitable<void> ApiChoosingProvider::observe(std::vector<api::VmHandle> vms, api::MilestoneSink sink,
                                                   CancelSignal stop) {
  if (!chosen_) co_return;
  co_await chosen_->observe(std::move(vms), std::move(sink), std::move(stop));
}

asio::awaitable<Expected<void>> ApiChoosingProvider::stop(const api::VmHandle& vm) {
  if (!chosen_) co_return not_connected();
  co_return co_await chosen_->stop(vm);
}

asio::awaitable<Expected<void>> ApiChoosingProvider::destroy(const api::VmHandle& vm) {
  if (!chosen_) co_return not_connected();
  co_return co_await chosen_->destroy(vm);
}

asio::awaitable<Expected<std::vector<api::VmHandle>>> ApiChoosingProvider::list_run_vms(
    const std::string& run_id) {
  if (!chosen_) co_return not_connected();
  co_return co_await chosen_->list_run_vms(run_id);
}

asio::awaitable<Expected<void>> ApiChoosingProvider::remove_run_artifacts(const std::string& run_id) {
  if (!chosen_) co_return not_connected();
  co_return co_await chosen_->remove_run_artifacts(run_id);
}

asio::awaitable<void> ApiChoosingProvider::disconnect() {
  if (chosen_) co_await chosen_->disconnect();
}

api::ApiStats ApiChoosingProvider::stats() const {
  return chosen_ ? chosen_->stats() : api::ApiStats{};
}

api::PlatformFacts ApiChoosingProvider::facts() const {
  return chosen_ ? chosen_->facts() : api::PlatformFacts{};
}

std::string ApiChoosingProvider::clone_method(const api::VmHandle& vm) const {
  return chosen_ ? chosen_->clone_method(vm) : std::string();
}

Expected<std::unique_ptr<api::TelemetrySource>> ApiChoosingProvider::telemetry_source(
    const api::TelemetrySettings& settings) {
  if (!chosen_) return not_connected();
  return chosen_->telemetry_source(settings);
}

asio::awaitable<std::vector<api::CheckResult>> ApiChoosingProvider::check(const api::CheckRequest& request) {
  if (!chosen_) co_return std::vector<api::CheckResult>{api::failed_check("API", not_connected())};
  co_return co_await chosen_->check(request);
}

}  // namespace bootstorm::vsphere

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
    : executor_(std::move(executor)), config_(std::move(config)), settings_(settings_of(config_.settings)) {}

ApiChoosingProvider::~ApiChoosingProvider() = default;

asio::awaitable<Expected<void>> ApiChoosingProvider::choose() {
  std::string api = settings_.api.empty() ? std::string("auto") : settings_.api;
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
    set_target(
        std::make_unique<vim25::Vim25Provider>(executor_, config_, make_http_transport(executor_, config_)));
  } else {
    set_target(
        std::make_unique<VsphereProvider>(executor_, config_, make_http_transport(executor_, config_)));
  }
  co_return Expected<void>{};
}

Error ApiChoosingProvider::missing_target() const {
  return make_error(ErrorKind::internal, "the vSphere provider was used before connect()");
}

api::Capabilities ApiChoosingProvider::capabilities() const {
  if (!target()) {
    // Before connect(): what every vSphere API observes (the descriptor's list).
    api::Capabilities c;
    for (const auto& name : descriptor().observed_milestones)
      if (auto m = api::milestone_from_string(name)) c.observed[*m] = 1.0;
    c.start_blocks_until_powered_on = true;
    return c;
  }
  api::Capabilities c = target()->capabilities();
  if (c.api.empty()) c.api = "REST (/api)";
  c.api += " — " + why_;
  return c;
}

asio::awaitable<Expected<void>> ApiChoosingProvider::connect() {
  if (!target()) {
    auto chosen = co_await choose();
    if (!chosen) co_return chosen;
  }
  co_return co_await ForwardingProvider::connect();
}

}  // namespace bootstorm::vsphere

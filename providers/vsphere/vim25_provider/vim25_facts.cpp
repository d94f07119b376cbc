// Vim25Provider's platform facts: what vCenter says it is (ServiceContent.about), whether it says it is a
// simulator, and the placement hosts' ESXi version and CPU model. Best effort throughout: a vCenter that does
// not answer one of these questions leaves that fact empty, and the run goes on.
#include <spdlog/spdlog.h>

#include "common/lab_identity.hpp"
#include "protocol/vim25/decode.hpp"
#include "protocol/vim25/messages.hpp"
#include "providers/vsphere/vim25_provider/vim25_provider.hpp"

namespace bootstorm::vsphere::vim25 {

namespace {

// govmomi's vCenter simulator keeps its own URL among the vCenter settings: the one place it says what it is.
constexpr const char* kVcsimSetting = "vcsim.server.url";

// "bootstorm lab small" out of "VMware vCenter Server 8.0.2.0 build-lab (bootstorm lab small)".
std::string lab_named_in(const std::string& full_name) {
  const auto at = full_name.find("(" + std::string(kLabSimulatorPrefix));
  if (at == std::string::npos) return {};
  const auto end = full_name.find(')', at);
  return end == std::string::npos ? std::string() : full_name.substr(at + 1, end - at - 1);
}

}  // namespace

boost::asio::awaitable<void> Vim25Provider::learn_platform() {
  const AboutInfo& about = session_.service_content().about;
  facts_.product = about.name;
  facts_.version = about.version;
  facts_.build = about.build;
  facts_.simulator = lab_named_in(about.full_name);
  const MoRef& settings = session_.service_content().setting;
  if (!facts_.simulator.empty() || settings.empty()) co_return;
  CallOptions options;
  options.idempotent = true;
  auto reply = co_await session_.call("QueryOptions", query_options(settings, kVcsimSetting), options);
  // A real vCenter has no such setting (InvalidName) or does not let this user read settings.
  if (!reply) {
    spdlog::debug("QueryOptions {} at {}: {}", kVcsimSetting, config_.endpoint, reply.error().what());
    co_return;
  }
  auto values = decode_option_values(reply->response());
  if (!values) co_return;
  for (const auto& [key, value] : *values) {
    if (key == kVcsimSetting) {
      facts_.simulator = "govmomi vcsim";
      spdlog::info("vCenter {} is govmomi's simulator (vcsim), at {}", config_.endpoint, value);
    }
  }
}

boost::asio::awaitable<void> Vim25Provider::learn_hosts() {
  std::vector<MoRef> hosts;
  for (const auto& [name, host] : hosts_) hosts.push_back({"HostSystem", host.id});
  facts_.hosts.clear();
  if (hosts.empty()) co_return;
  // Named first: g++ 12 miscompiles a braced list inside a co_await expression.
  std::vector<std::string> paths{"name", "summary.config.product.fullName", "summary.hardware.cpuModel"};
  auto read_hosts = co_await read(hosts, "HostSystem", std::move(paths));
  if (!read_hosts) {
    spdlog::debug("reading the hosts' ESXi versions at {}: {}", config_.endpoint, read_hosts.error().what());
    for (const auto& [name, host] : hosts_) facts_.hosts.push_back({name, {}, {}});
    co_return;
  }
  for (const auto& h : *read_hosts) {
    api::HostFacts fact;
    if (const Value* n = h.prop("name")) fact.name = n->text;
    if (const Value* v = h.prop("summary.config.product.fullName")) fact.version = v->text;
    if (const Value* c = h.prop("summary.hardware.cpuModel")) fact.cpu_model = c->text;
    facts_.hosts.push_back(std::move(fact));
  }
}

}  // namespace bootstorm::vsphere::vim25

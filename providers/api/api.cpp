#include <map>
#include <mutex>

#include "common/milestone_names.hpp"
#include "providers/api/milestone.hpp"
#include "providers/api/provider.hpp"

namespace bootstorm::api {

static_assert(kMilestoneNames.size() == kMilestoneCount, "one name per api::Milestone, in enum order");

std::string_view to_string(Milestone m) noexcept {
  return milestone_name(static_cast<std::size_t>(m));
}

std::optional<Milestone> milestone_from_string(std::string_view name) noexcept {
  for (auto m : kAllMilestones)
    if (to_string(m) == name) return m;
  return std::nullopt;
}

std::string_view to_string(Source s) noexcept {
  switch (s) {
    case Source::client:
      return "client";
    case Source::api:
      return "api";
    case Source::watch:
      return "watch";
    case Source::poll:
      return "poll";
    case Source::beacon:
      return "beacon";
    case Source::probe:
      return "probe";
    case Source::recovered:
      return "recovered";
  }
  return "unknown";
}

std::optional<Source> source_from_string(std::string_view name) noexcept {
  for (auto s : {Source::client, Source::api, Source::watch, Source::poll, Source::beacon, Source::probe,
                 Source::recovered})
    if (to_string(s) == name) return s;
  return std::nullopt;
}

boost::asio::awaitable<std::vector<CheckResult>> Provider::check(const CheckRequest& request) {
  InventoryRequest inventory;
  for (const auto& [host, vms] : request.vms_per_host) inventory.hosts.push_back(host);
  inventory.total_vms = request.total_vms;
  auto checked = co_await check_inventory(inventory);
  co_return std::vector<CheckResult>{
      checked ? check_result("inventory", CheckStatus::pass,
                             "the placement hosts and the golden image are there and usable")
              : failed_check("inventory", checked.error())};
}

boost::asio::awaitable<Expected<void>> Provider::remove_run_artifacts(const std::string&) {
  co_return Expected<void>{};  // most platforms make nothing but the VMs
}

Expected<std::unique_ptr<TelemetrySource>> Provider::telemetry_source(const TelemetrySettings&) {
  return make_error(ErrorKind::not_found, "this platform's provider reads no storage telemetry");
}

boost::asio::awaitable<Expected<double>> TelemetrySource::sample_step_s(const TelemetryRequest&) {
  co_return 20.0;
}

const char* to_string(StorageSubject subject) noexcept {
  switch (subject) {
    case StorageSubject::vm:
      return "vm";
    case StorageSubject::host:
      return "host";
    case StorageSubject::datastore:
      return "datastore";
  }
  return "vm";
}

std::optional<Error> refuse_unnamed_create(const std::string& name, const std::string& run_id) {
  if (name_carries_run_id(name, run_id)) return std::nullopt;
  return make_error(ErrorKind::invalid_input, "refusing to create VM " + name +
                                                  ": its name does not carry run id " + run_id +
                                                  ", so cleanup could not find it");
}

bool name_carries_run_id(const std::string& name, const std::string& run_id) {
  if (run_id.empty()) return false;
  const std::string prefix = "bs-" + run_id + "-";
  return name.size() > prefix.size() && name.compare(0, prefix.size(), prefix) == 0;
}

namespace {
std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}
std::map<std::string, ProviderFactory>& registry() {
  static std::map<std::string, ProviderFactory> r;
  return r;
}
}  // namespace

void register_provider(const std::string& kind, ProviderFactory factory) {
  std::lock_guard lock(registry_mutex());
  registry()[kind] = std::move(factory);
}

std::unique_ptr<Provider> create_provider(const std::string& kind, boost::asio::any_io_executor executor,
                                          const ProviderConfig& config) {
  ProviderFactory f;
  {
    std::lock_guard lock(registry_mutex());
    auto it = registry().find(kind);
    if (it == registry().end()) return nullptr;
    f = it->second;
  }
  return f(std::move(executor), config);
}

void register_platform(PlatformDescriptor descriptor, ProviderFactory factory) {
  const std::string kind = descriptor.kind;
  register_platform_descriptor(std::move(descriptor));
  register_provider(kind, std::move(factory));
}

std::vector<std::string> registered_providers() {
  std::lock_guard lock(registry_mutex());
  std::vector<std::string> out;
  for (auto& [k, _] : registry()) out.push_back(k);
  return out;
}

}  // namespace bootstorm::api

// VsphereProvider's construction, session (connect, disconnect), the shared vCenter calls (GET of JSON, VM
// ids by name in URL-sized chunks, dry-run logging, the run-id guard) and listing a run's VMs.
#include "providers/vsphere/vsphere_provider.hpp"

#include <algorithm>
#include <boost/asio/use_awaitable.hpp>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/lab_identity.hpp"
#include "common/log.hpp"
#include "providers/vsphere/detail/json_fields.hpp"
#include "providers/vsphere/vcenter_error.hpp"

namespace bootstorm::vsphere {

namespace asio = boost::asio;
using json = nlohmann::json;
using detail::str_field;

VsphereProvider::VsphereProvider(asio::any_io_executor executor, api::ProviderConfig config,
                                 std::unique_ptr<Transport> transport)
    : executor_(executor),
      config_(std::move(config)),
      settings_(settings_of(config_.settings)),
      transport_(std::move(transport)),
      session_(
          executor, *transport_,
          SessionSettings{config_.endpoint, config_.username, config_.password, config_.request_timeout}),
      clone_slots_(executor, static_cast<std::size_t>(std::max(1, config_.max_concurrent))),
      host_clone_slots_(executor) {
  if (config_.requests_per_second <= 0)
    throw std::invalid_argument("vsphere provider: apiBudget.requestsPerSecond must be > 0");
}

VsphereProvider::~VsphereProvider() = default;

api::Capabilities VsphereProvider::capabilities() const {
  api::Capabilities caps;
  // Typical resolutions: power states come from one list call per round (at least every list_interval),
  // Tools and guest identity from per-VM polls whose period is (pending VMs / budget); quoted here for a
  // storm of up to `requests_per_second` VMs, the actual per-event value is in every MilestoneEvent.
  const double per_round = std::max(1.0 / config_.requests_per_second, 0.001);
  caps.observed[api::Milestone::running] =
      std::min(std::chrono::duration<double>(tuning_.list_interval).count(), 2.0 * per_round);
  caps.observed[api::Milestone::guest_agent] = 1.0;
  caps.observed[api::Milestone::ip_assigned] = 1.0;
  caps.start_blocks_until_powered_on = true;
  // vCenter runs about 640 operations at once and queues the rest (VMware's performance blog, "vCenter Limits
  // for Tasks Running at the Same Time"); each REST start holds its connection until its VM is on.
  caps.start_burst_limit = kVcenterConcurrentOperations;
  return caps;
}

Error VsphereProvider::refuse_foreign(const std::string& verb, const std::string& name) const {
  return make_error(
      ErrorKind::invalid_input,
      "refusing to " + verb + " VM " + name + ": its name does not carry run id " + config_.run_id,
      "bootstorm only touches VMs named bs-<run id>-...");
}

void VsphereProvider::log_dry_run(const std::string& method, const std::string& target,
                                  const std::string& body) const {
  spdlog::info("dry run: would {} {}{}{} on vCenter at {}", method, target, body.empty() ? "" : " ", body,
               config_.endpoint);
}

asio::awaitable<Expected<json>> VsphereProvider::get_json(const std::string& target, const std::string& what,
                                                          CallOptions options) {
  auto resp = co_await session_.call("GET", target, {}, options);
  if (!resp) {
    Error e = resp.error();
    e.message = what + " (GET " + target + ") at " + config_.endpoint + " failed: " + e.message;
    co_return e;
  }
  if (resp->status != 200)
    co_return to_error(parse_vcenter_error(resp->status, resp->body), what + " (GET " + target + ")",
                       config_.endpoint);
  auto body = json::parse(resp->body, nullptr, false);
  if (body.is_discarded())
    co_return make_error(ErrorKind::protocol,
                         what + " (GET " + target + ") at " + config_.endpoint + " returned malformed JSON");
  co_return session_.paths().unwrap(body);
}

asio::awaitable<Expected<void>> VsphereProvider::connect() {
  log::register_secret(config_.password);
  auto r = co_await session_.login();
  if (!r) co_return r;
  spdlog::info("connected to vCenter at {} as {} ({} API)", config_.endpoint, config_.username,
               dialect() == Dialect::api ? "/api" : "legacy /rest");
  co_await learn_platform();
  co_return Expected<void>{};
}

asio::awaitable<void> VsphereProvider::learn_platform() {
  facts_ = {};
  // The REST API says neither its version nor its build (the appliance API does, beside it); what it does
  // say, a lab says in a header of every answer.
  facts_.product = "VMware vCenter Server";
  if (dialect() != Dialect::api) co_return;
  CallOptions options;
  options.idempotent = true;
  auto session = co_await session_.call("GET", session_.paths().session(), {}, options);
  if (!session) {
    spdlog::debug("GET {} at {}: {}", session_.paths().session(), config_.endpoint, session.error().what());
    co_return;
  }
  if (auto simulator = session->header(kSimulatorHeader)) facts_.simulator = std::string(*simulator);
}

asio::awaitable<std::vector<api::CheckResult>> VsphereProvider::check(const api::CheckRequest& request) {
  std::vector<api::CheckResult> out;
  out.push_back(
      api::check_result("API", api::CheckStatus::pass,
                        "answered: " + api::describe(facts_) +
                            (dialect() == Dialect::api ? ", REST (/api)" : ", legacy REST (/rest)")));
  api::InventoryRequest inventory;
  for (const auto& [host, vms] : request.vms_per_host) inventory.hosts.push_back(host);
  inventory.total_vms = request.total_vms;
  auto checked = co_await check_inventory(inventory);
  out.push_back(checked ? api::check_result("inventory", api::CheckStatus::pass,
                                            "the placement hosts are connected, the golden VM " +
                                                settings_.vm + " and datastore " + datastore_name_ +
                                                " are there, with room for the clones")
                        : api::failed_check("inventory", checked.error()));
  out.push_back(api::check_result(
      "privileges", api::CheckStatus::unknown, "the REST API cannot ask which privileges the user holds",
      "use platform.api vim25 (or auto) to have them checked before the run; README lists the role"));
  co_return out;
}

api::PlatformFacts VsphereProvider::facts() const {
  api::PlatformFacts facts = facts_;
  // REST shows no host versions or CPU models: the placement hosts by name.
  for (const auto& [name, id] : host_ids_) facts.hosts.push_back({name, {}, {}});
  return facts;
}

asio::awaitable<Expected<std::string>> VsphereProvider::resolve_vm_id(const api::VmHandle& vm) {
  if (!vm.id.empty()) co_return vm.id;
  const std::vector<std::string> names{vm.name};
  auto ids = co_await list_vm_ids(names);
  if (!ids) co_return ids.error();
  auto it = ids->find(vm.name);
  if (it == ids->end()) co_return std::string{};
  co_return it->second;
}

asio::awaitable<Expected<std::map<std::string, std::string>>> VsphereProvider::list_vm_ids(
    const std::vector<std::string>& names) {
  std::map<std::string, std::string> ids;
  for (const auto& chunk : chunk_for_list(names, {}, "names")) {
    const std::string target = session_.paths().vm_list(ListFilter{{"names", chunk}});
    auto list = co_await get_json(target, "looking up VMs by name");
    if (!list) co_return list.error();
    if (list->is_array())
      for (const auto& v : *list) ids[str_field(v, "name")] = str_field(v, "vm");
  }
  co_return ids;
}

std::vector<std::vector<std::string>> VsphereProvider::chunk_for_list(const std::vector<std::string>& values,
                                                                      const ListFilter& extra,
                                                                      const std::string& key) const {
  std::vector<std::vector<std::string>> chunks;
  const std::size_t base = session_.paths().vm_list(extra).size();
  std::vector<std::string> current;
  std::size_t length = base;
  for (const auto& v : values) {
    const std::size_t add =
        key.size() + 14 /* "filter." + ".NNNN" + '=' + '&' */ + encode_query_value(v).size();
    if (!current.empty() &&
        (current.size() >= tuning_.max_ids_per_list || length + add > tuning_.max_target_length)) {
      chunks.push_back(std::move(current));
      current.clear();
      length = base;
    }
    current.push_back(v);
    length += add;
  }
  if (!current.empty()) chunks.push_back(std::move(current));
  return chunks;
}

asio::awaitable<Expected<std::vector<api::VmHandle>>> VsphereProvider::list_run_vms(
    const std::string& run_id) {
  std::vector<api::VmHandle> out;
  auto collect = [&](const json& list, const std::string& host) {
    if (!list.is_array()) return;
    for (const auto& v : list) {
      const auto name = str_field(v, "name");
      if (api::name_carries_run_id(name, run_id)) out.push_back({name, str_field(v, "vm"), host, {}});
    }
  };
  auto all = co_await get_json(session_.paths().vm_list(), "listing VMs");
  if (all) {
    collect(*all, {});
    co_return out;
  }
  // vCenter refuses lists matching more than 4,000 VMs: list host by host instead.
  if (all.error().status != 400 && all.error().status != 500) co_return all.error();
  auto hosts = co_await get_json(session_.paths().host_list(), "listing hosts");
  if (!hosts) co_return hosts.error();
  if (hosts->is_array())
    for (const auto& h : *hosts) {
      const std::string target = session_.paths().vm_list(ListFilter{{"hosts", {str_field(h, "host")}}});
      auto list = co_await get_json(target, "listing VMs of host " + str_field(h, "name"));
      if (!list) co_return list.error();
      collect(*list, str_field(h, "name"));
    }
  co_return out;
}

asio::awaitable<void> VsphereProvider::disconnect() {
  session_.set_limiter(nullptr);
  co_await session_.logout();
  transport_->close_idle();
}

http::ApiStats VsphereProvider::stats() const {
  return session_.stats();
}

}  // namespace bootstorm::vsphere

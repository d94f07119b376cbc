// Vim25Provider: construction, the session, and the helpers every part uses (reads, tasks, the ownership
// proof, start acknowledgements).
#include "providers/vsphere/vim25_provider/vim25_provider.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "common/log.hpp"
#include "protocol/vim25/decode.hpp"
#include "protocol/vim25/messages.hpp"
#include "providers/vsphere/vim25_provider/vim25_telemetry.hpp"

namespace bootstorm::vsphere::vim25 {

namespace asio = boost::asio;

namespace {

// Objects one RetrievePropertiesEx page holds.
constexpr int kPageObjects = 1000;

}  // namespace

Vim25Provider::Vim25Provider(asio::any_io_executor executor, api::ProviderConfig config,
                             std::unique_ptr<Transport> transport)
    : executor_(executor),
      config_(std::move(config)),
      settings_(vsphere::settings_of(config_.settings)),
      transport_(std::move(transport)),
      // Paced at 95 % of the budget, as the REST provider's polls: the storm's starts are urgent (never
      // throttled) but charged.
      limiter_(executor, config_.requests_per_second > 0 ? config_.requests_per_second * 0.95 : 0.0,
               std::max(1.0, config_.requests_per_second)),
      session_(
          executor, *transport_,
          SessionSettings{config_.endpoint, config_.username, config_.password, config_.request_timeout}),
      watcher_(std::make_unique<TaskWatcher>(executor, session_)),
      prepare_mutex_(executor, 1),
      clone_slots_(executor, static_cast<std::size_t>(std::max(1, config_.max_concurrent))),
      host_clone_slots_(executor),
      observation_armed_(executor) {
  session_.set_limiter(&limiter_);
}

Vim25Provider::~Vim25Provider() = default;

api::Capabilities Vim25Provider::capabilities() const {
  api::Capabilities c;
  c.api = "vim25 (SOAP, /sdk)";
  // Pushed through WaitForUpdatesEx: each event states its own resolution; this is the typical one.
  c.observed = {{api::Milestone::running, 0.01},
                {api::Milestone::guest_agent, 0.01},
                {api::Milestone::ip_assigned, 0.01}};
  c.start_blocks_until_powered_on = true;
  c.starts_batched = settings_.power_on == "multi";
  return c;
}

asio::awaitable<Expected<void>> Vim25Provider::connect() {
  auto r = co_await session_.login();
  if (!r) co_return r;
  spdlog::info("vCenter {} ({}), vim25 API {}", config_.endpoint, session_.service_content().about.full_name,
               session_.service_content().about.api_version);
  co_await learn_platform();
  co_return Expected<void>{};
}

asio::awaitable<void> Vim25Provider::disconnect() {
  co_await watcher_->close();
  watcher_ = std::make_unique<TaskWatcher>(executor_, session_);
  co_await session_.logout();
}

http::ApiStats Vim25Provider::stats() const {
  return session_.stats();
}

Expected<std::unique_ptr<api::TelemetrySource>> Vim25Provider::telemetry_source(
    const api::TelemetrySettings& settings) {
  if (settings.source == "auto" || settings.source == kPerfSourceName) {
    if (settings.interval_s && *settings.interval_s != kRealtimeIntervalS)
      spdlog::warn("telemetry.interval {} s: vCenter's real-time statistics come every {} s, and so do these",
                   *settings.interval_s, kRealtimeIntervalS);
    return std::unique_ptr<api::TelemetrySource>(
        std::make_unique<Vim25PerfSource>(*this, std::weak_ptr<const void>(alive_)));
  }
  if (settings.source == "prometheus") {
    return make_error(
        ErrorKind::invalid_input,
        "telemetry.source prometheus: vSphere keeps its storage statistics in vCenter, not in a "
        "Prometheus",
        "vSphere offers telemetry.source: vsphere-perf (vCenter's PerformanceManager), or auto");
  }
  if (settings.source == "none")
    return make_error(ErrorKind::not_found, "telemetry off (telemetry.source: none)");
  return make_error(ErrorKind::invalid_input,
                    "telemetry.source " + settings.source + " is not one vSphere offers",
                    "use auto, vsphere-perf or none");
}

asio::awaitable<Expected<std::vector<ObjectContent>>> Vim25Provider::read(const std::vector<MoRef>& objects,
                                                                          const std::string& type,
                                                                          std::vector<std::string> paths) {
  std::vector<ObjectContent> out;
  if (objects.empty()) co_return out;
  const PropertyFilterSpec spec = objects_filter_spec(objects, type, std::move(paths));
  const MoRef& pc = session_.service_content().property_collector;
  CallOptions options;
  options.idempotent = true;
  std::string method = "RetrievePropertiesEx";
  std::string element = retrieve_properties_ex(pc, {spec}, kPageObjects);
  for (;;) {
    auto reply = co_await session_.call(method, element, options);
    if (!reply) co_return reply.error();
    auto result = decode_retrieve_result(reply->response());
    if (!result) co_return result.error();
    for (auto& o : result->objects) out.push_back(std::move(o));
    if (result->token.empty()) break;
    method = "ContinueRetrievePropertiesEx";
    element = continue_retrieve_properties_ex(pc, result->token);
  }
  co_return out;
}

asio::awaitable<Expected<std::vector<ObjectContent>>> Vim25Provider::read_all(
    const std::string& type, std::vector<std::string> paths) {
  const ServiceContent& sc = session_.service_content();
  const std::string create = "CreateContainerView";
  const std::string create_element = create_container_view(sc.view_manager, sc.root_folder, {type}, true);
  auto view = co_await session_.call(create, create_element);
  if (!view) co_return view.error();
  const MoRef v = decode_moref(view->returnval());
  const PropertyFilterSpec spec = view_filter_spec(v, type, std::move(paths));
  CallOptions options;
  options.idempotent = true;
  std::vector<ObjectContent> out;
  std::string method = "RetrievePropertiesEx";
  std::string element = retrieve_properties_ex(sc.property_collector, {spec}, kPageObjects);
  Expected<void> failed;
  for (;;) {
    auto reply = co_await session_.call(method, element, options);
    if (!reply) {
      failed = reply.error();
      break;
    }
    auto result = decode_retrieve_result(reply->response());
    if (!result) {
      failed = result.error();
      break;
    }
    for (auto& o : result->objects) out.push_back(std::move(o));
    if (result->token.empty()) break;
    method = "ContinueRetrievePropertiesEx";
    element = continue_retrieve_properties_ex(sc.property_collector, result->token);
  }
  const std::string destroy = "DestroyView";
  const std::string destroy_element = destroy_view(v);
  (void)co_await session_.call(destroy, destroy_element);
  if (!failed) co_return failed.error();
  co_return out;
}

asio::awaitable<Expected<TaskOutcome>> Vim25Provider::run_task(std::string method, std::string element,
                                                               std::string what, CallOptions options) {
  auto reply = co_await session_.call(method, element, options);
  if (!reply) {
    Error e = reply.error();
    e.message = what + ": " + e.message;
    co_return e;
  }
  const MoRef task = decode_moref(reply->returnval());
  if (task.empty()) {
    co_return make_error(ErrorKind::protocol, what + ": vCenter at " + config_.endpoint + " answered " +
                                                  method + " without a task");
  }
  co_return co_await watcher_->wait(task, std::chrono::hours(1), what);
}

Error Vim25Provider::refuse_foreign(const std::string& verb, const std::string& name,
                                    const std::string& why) const {
  return make_error(ErrorKind::invalid_input, "refusing to " + verb + " VM " + name + ": " + why,
                    "bootstorm only touches VMs named bs-" + config_.run_id + "-... whose custom attribute " +
                        std::string(kRunField) + " is " + config_.run_id);
}

void Vim25Provider::log_dry_run(const std::string& method, const std::string& detail) const {
  spdlog::info("[dry-run] would call vim25 {} ({})", method, detail);
}

asio::awaitable<Expected<Vim25Provider::Ownership>> Vim25Provider::ownership(const api::VmHandle& vm) {
  Ownership own;
  std::vector<ObjectContent> found;
  const std::vector<MoRef> refs{{"VirtualMachine", vm.id}};
  const std::string type = "VirtualMachine";
  const std::vector<std::string> paths{"name", "customValue", "runtime.powerState", "config.extraConfig"};
  if (!vm.id.empty() && vm.id.rfind("dry-run:", 0) != 0) {
    auto read_one = co_await read(refs, type, paths);
    if (!read_one && read_one.error().kind != ErrorKind::not_found) co_return read_one.error();
    if (read_one) found = std::move(*read_one);
  }
  // By name when the id is unknown or no longer names this VM.
  auto named = [&](const ObjectContent& o) { return o.prop("name") && o.prop("name")->text == vm.name; };
  if (std::none_of(found.begin(), found.end(), named)) {
    auto all = co_await read_all(type, paths);
    if (!all) co_return all.error();
    found = std::move(*all);
  }
  auto it = std::find_if(found.begin(), found.end(), named);
  if (it == found.end()) co_return own;  // gone
  auto key = co_await find_field_key();
  if (!key) co_return key.error();
  own.id = it->obj.value;
  if (const Value* state = it->prop("runtime.powerState")) own.power_state = state->text;
  bool attribute_set = false;
  if (const Value* values = it->prop("customValue")) {
    for (const Value* v : values->all("CustomFieldValue")) {
      if (*key < 0 || v->field_text("key") != std::to_string(*key)) continue;
      attribute_set = true;
      own.found = v->field_text("value");
      own.proven = own.found == config_.run_id;
    }
  }
  // Not tagged yet (the run died between the clone and its tag): the run id its clone spec wrote.
  if (!attribute_set) {
    if (const Value* options = it->prop("config.extraConfig")) {
      for (const Value* o : options->all("OptionValue"))
        if (o->field_text("key") == kRunKey) own.proven = o->field_text("value") == config_.run_id;
    }
  }
  co_return own;
}

Vim25Provider::Ack& Vim25Provider::ack_of(const std::string& vm_id) {
  auto& slot = acks_[vm_id];
  if (!slot) slot = std::make_unique<Ack>(executor_);
  return *slot;
}

void Vim25Provider::acknowledge(const std::string& vm_id, std::chrono::steady_clock::time_point at,
                                std::chrono::system_clock::time_point at_wall) {
  auto it = acks_.find(vm_id);
  if (it == acks_.end() || it->second->at || it->second->error) return;
  it->second->at = at;
  it->second->at_wall = at_wall;
  it->second->timer.cancel();
}

void Vim25Provider::start_call_failed(const std::string& vm_id, Error e,
                                      std::chrono::steady_clock::time_point handed_over,
                                      std::chrono::system_clock::time_point handed_over_wall) {
  Ack& ack = ack_of(vm_id);
  if (!ack.at || ack.error) return refuse_start(vm_id, std::move(e));
  // Its power state came, so the call was written: when is known only to have been after it was handed over.
  ack.written = handed_over;
  ack.written_wall = handed_over_wall;
  ack.timer.cancel();
}

void Vim25Provider::refuse_start(const std::string& vm_id, Error e) {
  Ack& ack = ack_of(vm_id);
  if (ack.at || ack.error) return;
  ack.error = std::move(e);
  ack.timer.cancel();
}

}  // namespace bootstorm::vsphere::vim25

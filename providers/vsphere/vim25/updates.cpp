// Pushed changes and task outcomes from the PropertyCollector (see updates.hpp).
#include "providers/vsphere/vim25/updates.hpp"

#include <spdlog/spdlog.h>

#include <map>

#include "protocol/vim25/decode.hpp"
#include "protocol/vim25/fault.hpp"
#include "protocol/vim25/messages.hpp"

namespace bootstorm::vsphere::vim25 {
namespace asio = boost::asio;

asio::awaitable<Expected<void>> UpdateStream::create(const PropertyFilterSpec& spec, bool partial_updates) {
  const std::string create_method = "CreatePropertyCollector";
  const std::string create_element = create_property_collector(session_.service_content().property_collector);
  auto created = co_await session_.call(create_method, create_element);
  if (!created) co_return created.error();
  collector_ = decode_moref(created->returnval());
  if (collector_.empty()) {
    co_return make_error(ErrorKind::protocol, "vim25 CreatePropertyCollector at " + session_.endpoint() +
                                                  "/sdk answered without the collector's reference");
  }
  const std::string method = "CreateFilter";
  const std::string element = create_filter(collector_, spec, partial_updates);
  auto reply = co_await session_.call(method, element);
  if (!reply) co_return reply.error();
  filter_ = decode_moref(reply->returnval());
  if (filter_.empty()) {
    co_return make_error(ErrorKind::protocol, "vim25 CreateFilter at " + session_.endpoint() +
                                                  "/sdk answered without the filter's reference");
  }
  co_return Expected<void>{};
}

asio::awaitable<Expected<UpdateSet>> UpdateStream::next(WaitOptions options) {
  const std::string method = "WaitForUpdatesEx";
  const std::string element = wait_for_updates_ex(collector_, version_, options);
  CallOptions call;
  call.idempotent = true;  // a repeat from the same version returns the same changes
  call.urgent = urgent_;
  call.keep_fault = true;
  // The server holds the call for up to max_wait_seconds: the deadline leaves it room to answer.
  call.timeout = std::chrono::seconds(options.max_wait_seconds.value_or(600) + 30);
  auto reply = co_await session_.call(method, element, call);
  if (!reply) co_return reply.error();
  bool restarted = false;
  if (reply->is_fault() && reply->fault().is("InvalidCollectorVersion") && !version_.empty()) {
    // vCenter forgot the version (its collector's history was reset): the full state from the start.
    spdlog::warn("{}: vCenter no longer knows collector version {}; reading the full state again",
                 session_.what(method), version_);
    version_.clear();
    restarted = true;
    const std::string again = wait_for_updates_ex(collector_, version_, options);
    reply = co_await session_.call(method, again, call);
    if (!reply) co_return reply.error();
  }
  if (reply->is_fault()) co_return fault_error(reply->fault(), session_.what(method));
  auto set = decode_update_set(reply->response(), version_);
  if (!set) co_return set.error();
  set->received_at = reply->timing.received_at;
  set->restarted = restarted;
  set->resent = reply->attempts > 1;
  version_ = set->version;
  co_return set;
}

asio::awaitable<void> UpdateStream::destroy() {
  if (collector_.empty()) co_return;
  const std::string method = "DestroyPropertyCollector";
  const std::string element = destroy_property_collector(collector_);
  (void)co_await session_.call(method, element);
  collector_ = {};
  filter_ = {};
}

SoapFault fault_of(const Value& lmf) {
  SoapFault f;
  f.message = lmf.field_text("localizedMessage");
  if (const Value* fault = lmf.field("fault")) {
    f.type = fault->xsi_type;
    read_fault_fields(*fault, f);
  }
  return f;
}

asio::awaitable<Expected<std::vector<TaskOutcome>>> wait_for_tasks(Session& session, std::vector<MoRef> tasks,
                                                                   std::chrono::milliseconds timeout,
                                                                   std::string what) {
  std::vector<TaskOutcome> outcomes(tasks.size());
  std::map<MoRef, std::size_t> index;
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    outcomes[i].task = tasks[i];
    index[tasks[i]] = i;
  }
  if (tasks.empty()) co_return outcomes;
  UpdateStream stream(session);
  // Named, not a temporary in the co_await expression (g++ 12 mis-copies those).
  PropertyFilterSpec spec = objects_filter_spec(tasks, "Task", {"info.state", "info.result", "info.error"});
  auto created = co_await stream.create(spec);
  if (!created) co_return created.error();
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::size_t done = 0;
  Expected<std::vector<TaskOutcome>> result = outcomes;
  while (done < tasks.size()) {
    const auto left =
        std::chrono::duration_cast<std::chrono::seconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      result = make_error(
          ErrorKind::timeout,
          what + ": " + std::to_string(tasks.size() - done) + " of " + std::to_string(tasks.size()) +
              " vCenter tasks still running after " + std::to_string(timeout.count() / 1000) + " s",
          "vCenter is slower than the plan allows (see Recent Tasks in the vSphere Client); raise "
          "the plan's timeouts or lower the concurrency");
      break;
    }
    WaitOptions options;
    options.max_wait_seconds = static_cast<int>(std::min<long long>(left.count(), 60));
    auto set = co_await stream.next(options);
    if (!set) {
      result = set.error();
      break;
    }
    for (const auto& filter : set->filters) {
      for (const auto& object : filter.objects) {
        auto it = index.find(object.obj);
        if (it == index.end()) continue;
        TaskOutcome& o = outcomes[it->second];
        const bool was_done = o.state == "success" || o.state == "error";
        for (const auto& change : object.changes) {
          if (!change.value) continue;
          if (change.name == "info.state") o.state = change.value->text;
          if (change.name == "info.result") o.result = *change.value;
          if (change.name == "info.error") o.error = fault_error(fault_of(*change.value), what);
        }
        const bool is_done = o.state == "success" || o.state == "error";
        if (is_done && !was_done) ++done;
      }
    }
  }
  if (result) {
    for (TaskOutcome& o : outcomes) {
      if (o.state == "error" && !o.error)
        o.error = make_error(ErrorKind::api, what + " failed (vCenter gave no reason)");
    }
    result = std::move(outcomes);
  }
  co_await stream.destroy();
  co_return result;
}

}  // namespace bootstorm::vsphere::vim25

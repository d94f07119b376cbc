// Many tasks followed through one collector (see task_watcher.hpp).
#include "providers/vsphere/vim25_provider/task_watcher.hpp"

#include <spdlog/spdlog.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <vector>

#include "common/async/sleep.hpp"
#include "protocol/vim25/decode.hpp"
#include "protocol/vim25/fault.hpp"
#include "protocol/vim25/messages.hpp"

namespace bootstorm::vsphere::vim25 {

namespace asio = boost::asio;

namespace {
// How long one WaitForUpdatesEx may wait on the server before it answers empty. A filter made while a wait
// is pending may not wake it (govmomi's simulator does not, and a task that ended before its filter existed
// changes nothing more): the next wait shows it, so this bounds how late such a task's end is seen.
constexpr int kMaxWaitSeconds = 1;
// Transport failures of the wait in a row before every waiter is failed.
constexpr int kMaxWaitFailures = 5;
// A task still running with no update for this long is read directly: vCenter pushes a task's end within a
// wait, so this only bounds how late a lost push is made good (one read per quiet spell, all quiet tasks
// in it).
constexpr auto kQuietRead = std::chrono::seconds(15);
}  // namespace

TaskWatcher::TaskWatcher(asio::any_io_executor executor, Session& session)
    : executor_(executor), session_(session), collector_mutex_(executor, 1) {}

TaskWatcher::~TaskWatcher() {
  *alive_ = false;
}

asio::awaitable<Expected<void>> TaskWatcher::ensure_collector() {
  auto permit = co_await async::acquire(collector_mutex_);
  if (!collector_.empty()) co_return Expected<void>{};
  const std::string method = "CreatePropertyCollector";
  const std::string element = create_property_collector(session_.service_content().property_collector);
  auto reply = co_await session_.call(method, element);
  if (!reply) co_return reply.error();
  collector_ = decode_moref(reply->returnval());
  version_.clear();
  ++generation_;
  if (collector_.empty()) {
    co_return make_error(ErrorKind::protocol, "vim25 CreatePropertyCollector at " + session_.endpoint() +
                                                  "/sdk answered without the collector's reference");
  }
  co_return Expected<void>{};
}

asio::awaitable<Expected<MoRef>> TaskWatcher::add_filter(const std::vector<MoRef>& tasks) {
  const std::string method = "CreateFilter";
  const std::string element = create_filter(
      collector_, objects_filter_spec(tasks, "Task", {"info.state", "info.result", "info.error"}), false);
  auto reply = co_await session_.call(method, element);
  if (!reply) co_return reply.error();
  co_return decode_moref(reply->returnval());
}

asio::awaitable<Expected<TaskOutcome>> TaskWatcher::wait(MoRef task, std::chrono::milliseconds timeout,
                                                         std::string what,
                                                         std::function<void(const TaskOutcome&)> on_end) {
  std::vector<MoRef> one{task};
  auto all = co_await wait_all(std::move(one), timeout, std::move(what), std::move(on_end));
  if (!all) co_return all.error();
  TaskOutcome outcome = std::move(all->front());
  if (outcome.state == "timeout") co_return *outcome.error;
  co_return outcome;
}

asio::awaitable<Expected<std::vector<TaskOutcome>>> TaskWatcher::wait_all(
    std::vector<MoRef> tasks, std::chrono::milliseconds timeout, std::string what,
    std::function<void(const TaskOutcome&)> on_end) {
  if (closed_) co_return make_error(ErrorKind::cancelled, what + ": the task watcher was closed");
  std::vector<std::shared_ptr<Waiter>> waiters;
  const auto shared_on_end =
      on_end ? std::make_shared<const std::function<void(const TaskOutcome&)>>(std::move(on_end)) : nullptr;
  for (const MoRef& task : tasks) {
    auto waiter = std::make_shared<Waiter>(executor_);
    waiter->outcome.task = task;
    waiter->what = what;
    waiter->on_end = shared_on_end;
    waiter->timer.expires_after(timeout);
    waiters.push_back(std::move(waiter));
  }
  auto ready = co_await ensure_collector();
  if (!ready) co_return ready.error();
  // Before the filter: its first update may come at once.
  for (std::size_t i = 0; i < tasks.size(); ++i) waiters_[tasks[i]] = waiters[i];
  auto added = co_await add_filter(tasks);
  if (!added && added.error().kind == ErrorKind::not_found) {
    // The collector went with an expired session: make it again.
    collector_ = {};
    ready = co_await ensure_collector();
    if (ready) added = co_await add_filter(tasks);
  }
  if (!added) {
    for (const MoRef& task : tasks) waiters_.erase(task);
    co_return added.error();
  }
  const MoRef filter = *added;
  for (auto& waiter : waiters) {
    waiter->filtered_at = waits_sent_;
    waiter->last_news = std::chrono::steady_clock::now();
  }
  if (!polling_) {
    polling_ = true;
    asio::co_spawn(executor_, poll(), asio::detached);
  }
  // One deadline for all: each waiter's timer expires at it.
  boost::system::error_code ec;
  for (auto& waiter : waiters) {
    while (!waiter->done) {
      co_await waiter->timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      if (!waiter->done && !ec) break;  // the deadline, not a wake-up
    }
  }
  if (!filter.empty() && !closed_) {
    const std::string destroy_method = "DestroyPropertyFilter";
    const std::string destroy_element = destroy_property_filter(filter);
    (void)co_await session_.call(destroy_method, destroy_element);  // best effort: the collector takes it too
  }
  std::vector<TaskOutcome> outcomes;
  for (auto& waiter : waiters) {
    if (!waiter->done) {
      waiters_.erase(waiter->outcome.task);
      waiter->outcome.state = "timeout";
      waiter->outcome.error =
          make_error(ErrorKind::timeout,
                     what + ": the vCenter task " + waiter->outcome.task.value + " was still running after " +
                         std::to_string(timeout.count() / 1000) + " s",
                     "vCenter is slower than the plan allows (see Recent Tasks in the vSphere Client); "
                     "raise the plan's timeouts or lower the concurrency");
    } else if (waiter->outcome.state == "error" && !waiter->outcome.error) {
      waiter->outcome.error = make_error(ErrorKind::api, what + " failed (vCenter gave no reason)");
    }
    outcomes.push_back(std::move(waiter->outcome));
  }
  co_return outcomes;
}

void TaskWatcher::apply(Waiter& waiter, const std::string& name, const Value& value) {
  TaskOutcome& o = waiter.outcome;
  if (name == "info.state") {
    o.state = value.text;
    const auto now = std::chrono::steady_clock::now();
    if (o.state == "queued" && !waiter.queued_since) {
      waiter.queued_since = now;
      waiter.was_queued = true;
    } else if (o.state != "queued" && waiter.queued_since) {
      waiter.queued_s += std::chrono::duration<double>(now - *waiter.queued_since).count();
      waiter.queued_since.reset();
    }
  }
  // A property without a value (a task still running has no result and no error; a server may list it
  // with no <val>) says nothing.
  const bool empty = value.xsi_type.empty() && value.text.empty() && value.fields.empty();
  if (name == "info.result" && !empty) o.result = value;
  if (name == "info.error" && !empty) o.error = fault_error(fault_of(value), waiter.what);
}

asio::awaitable<Expected<void>> TaskWatcher::read_directly(std::uint64_t wait) {
  const auto now = std::chrono::steady_clock::now();
  const bool all = reread_all_;
  std::vector<MoRef> unseen;
  for (const auto& [task, waiter] : waiters_) {
    if (waiter->done || waiter->filtered_at >= wait) continue;
    if (all || !waiter->seen || now - waiter->last_news >= kQuietRead) unseen.push_back(task);
  }
  if (unseen.empty()) co_return Expected<void>{};
  const MoRef& pc = session_.service_content().property_collector;
  const PropertyFilterSpec spec =
      objects_filter_spec(unseen, "Task", {"info.state", "info.result", "info.error"});
  CallOptions options;
  options.idempotent = true;
  std::string method = "RetrievePropertiesEx";
  std::string element = retrieve_properties_ex(pc, {spec});
  for (;;) {
    auto reply = co_await session_.call(method, element, options);
    if (!reply) co_return reply.error();
    auto result = decode_retrieve_result(reply->response());
    if (!result) co_return result.error();
    for (const ObjectContent& object : result->objects) {
      auto it = waiters_.find(object.obj);
      if (it == waiters_.end()) continue;
      auto waiter = it->second;
      waiter->last_news = std::chrono::steady_clock::now();
      for (const auto& [name, value] : object.props) apply(*waiter, name, value);
      // Still running: read again after the next wait, unless an update comes first.
      if (waiter->outcome.state == "success" || waiter->outcome.state == "error") finish(object.obj, *waiter);
    }
    if (result->token.empty()) break;
    method = "ContinueRetrievePropertiesEx";
    element = continue_retrieve_properties_ex(pc, result->token);
  }
  if (all) reread_all_ = false;
  co_return Expected<void>{};
}

void TaskWatcher::finish(const MoRef& task, Waiter& waiter) {
  waiter.done = true;
  if (waiter.queued_since) {
    waiter.queued_s +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - *waiter.queued_since).count();
    waiter.queued_since.reset();
  }
  session_.count_task(waiter.was_queued, waiter.queued_s);
  if (waiter.on_end) (*waiter.on_end)(waiter.outcome);
  waiter.timer.cancel();
  waiters_.erase(task);
}

void TaskWatcher::fail_all(const Error& e) {
  auto waiting = std::move(waiters_);
  waiters_.clear();
  for (auto& [task, waiter] : waiting) {
    waiter->outcome.state = "error";
    waiter->outcome.error = e;
    waiter->done = true;
    waiter->timer.cancel();
  }
}

asio::awaitable<void> TaskWatcher::poll() {
  auto alive = alive_;
  int failures = 0;
  while (*alive && !closed_ && !waiters_.empty()) {
    const std::uint64_t generation = generation_;
    const std::uint64_t wait = ++waits_sent_;
    WaitOptions options;
    options.max_wait_seconds = kMaxWaitSeconds;
    const std::string method = "WaitForUpdatesEx";
    const std::string element = wait_for_updates_ex(collector_, version_, options);
    CallOptions call;
    call.idempotent = true;  // a repeat from the same version answers the same changes
    call.timeout = std::chrono::seconds(kMaxWaitSeconds + 30);
    call.keep_fault = true;
    auto reply = co_await session_.call(method, element, call);
    if (!*alive || closed_) co_return;
    if (generation != generation_) continue;  // the collector was made again meanwhile: wait on the new one
    if (reply && reply->is_fault()) {
      if (reply->fault().is("InvalidCollectorVersion") && !version_.empty()) {
        // vCenter forgot the version: from the start, and every task read once (a changed task's end may
        // have been in what was forgotten).
        spdlog::warn("{}: vCenter no longer knows collector version {}; following its tasks from the start",
                     session_.what(method), version_);
        version_.clear();
        reread_all_ = true;
        continue;
      }
      reply = fault_error(reply->fault(), session_.what(method));
    }
    if (!reply) {
      reread_all_ = true;  // the server may have taken changes for the answer that never came
      if (reply.error().kind == ErrorKind::not_found) {
        // The collector is gone (the session was logged in again): a new one, with the tasks still followed.
        collector_ = {};
        auto ready = co_await ensure_collector();
        std::vector<MoRef> pending;
        for (const auto& [task, waiter] : waiters_) pending.push_back(task);
        for (const auto& task : pending) {
          if (!ready) break;
          std::vector<MoRef> one{task};
          auto again = co_await add_filter(one);
          if (!again) ready = again.error();
        }
        if (ready) continue;
        fail_all(ready.error());
        break;
      }
      // Nothing will end while vCenter is gone: say so now, not at the tasks' deadline.
      if (auto gone = session_.gone()) {
        fail_all(make_error(ErrorKind::connect, "the vCenter tasks could not be followed: " + *gone,
                            "the journal is kept: when vCenter is back, `bootstorm cleanup` removes what the "
                            "run created"));
        break;
      }
      if (++failures >= kMaxWaitFailures) {
        fail_all(reply.error());
        break;
      }
      co_await async::sleep_for(std::chrono::milliseconds(200) * failures);
      continue;
    }
    failures = 0;
    if (reply->attempts > 1) reread_all_ = true;  // the first answer was lost on the way
    auto set = decode_update_set(reply->response(), version_);
    if (!set) {
      fail_all(set.error());
      break;
    }
    version_ = set->version;
    for (const auto& filter : set->filters) {
      for (const auto& object : filter.objects) {
        auto it = waiters_.find(object.obj);
        if (it == waiters_.end()) continue;
        auto waiter = it->second;
        waiter->seen = true;
        waiter->last_news = std::chrono::steady_clock::now();
        for (const auto& change : object.changes) {
          if (change.value) apply(*waiter, change.name, *change.value);
        }
        const std::string& state = waiter->outcome.state;
        if (state == "success" || state == "error") finish(object.obj, *waiter);
      }
    }
    if (!set->truncated) {
      // A failed read is tried again after the next wait; the deadline bounds it.
      (void)co_await read_directly(wait);
      if (!*alive || closed_) co_return;
    }
  }
  polling_ = false;
}

asio::awaitable<void> TaskWatcher::close() {
  closed_ = true;
  fail_all(make_error(ErrorKind::cancelled, "the task watcher was closed"));
  if (collector_.empty()) co_return;
  const std::string method = "DestroyPropertyCollector";
  const std::string element = destroy_property_collector(collector_);
  (void)co_await session_.call(method, element);
  collector_ = {};
}

}  // namespace bootstorm::vsphere::vim25

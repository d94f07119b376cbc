#pragma once
// Follows many vCenter tasks through one PropertyCollector of its own: each wait adds a filter for its task
// (info.state, info.result, info.error) and one long-poll loop (WaitForUpdatesEx) hands every task's end to
// its waiter; the filter goes when its task has ended (a collector's every wait costs the server all of its
// filters: vcsim slowed to a clone a second at 200 kept filters). A storm's clones and power-ons cost one
// CreateFilter each and share the waits, instead of a collector, a filter and a wait loop per task
// (wait_for_tasks, which suits a handful of tasks at once).
//
// A filter's first update carries its task's state as it is. govmomi's simulator sends it only when some
// object changes after the filter was made, so a task that had ended before its filter existed would never
// be seen there; a task whose first update did not come with a wait sent after its filter is read directly
// (RetrievePropertiesEx), which a vCenter, whose first update always comes, never needs.
//
// A wait whose answer was lost (the connection failed and the wait was sent again, or it failed outright) is
// safe on vCenter, which answers a repeated version with the same changes. govmomi's simulator keeps no
// versions: the changes it had taken for the lost answer are gone (it drops the connection when a filter
// is destroyed during a wait). After such a wait every task followed is read directly once, and a task with
// no news for kQuietRead is read too, so that no lost push leaves a waiter until its deadline.
//
// The session may be logged in again (an expired session): its collectors are gone with it. The loop then
// makes a new collector and filters for the tasks still followed, and reads them from the start.
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "common/async/semaphore.hpp"
#include "common/expected.hpp"
#include "providers/vsphere/vim25/session.hpp"
#include "providers/vsphere/vim25/updates.hpp"

namespace bootstorm::vsphere::vim25 {

class TaskWatcher {
 public:
  TaskWatcher(boost::asio::any_io_executor executor, Session& session);
  ~TaskWatcher();
  TaskWatcher(const TaskWatcher&) = delete;
  TaskWatcher& operator=(const TaskWatcher&) = delete;

  // Follows `task` until it ends (success or error) or `timeout` passes (ErrorKind::timeout naming `what`).
  // `on_end` (optional) runs when the end is seen, before the waiter resumes (the moment it was pushed).
  boost::asio::awaitable<Expected<TaskOutcome>> wait(MoRef task, std::chrono::milliseconds timeout,
                                                     std::string what,
                                                     std::function<void(const TaskOutcome&)> on_end = {});
  // Follows `tasks` together through one filter (a storm's PowerOnVM tasks: one CreateFilter for all). Their
  // outcomes in order; a task still running at the deadline has state "timeout" and the error saying so.
  // `on_end` runs for each as its end is seen.
  boost::asio::awaitable<Expected<std::vector<TaskOutcome>>> wait_all(
      std::vector<MoRef> tasks, std::chrono::milliseconds timeout, std::string what,
      std::function<void(const TaskOutcome&)> on_end = {});
  // Stops following and destroys the collector with its filters (best effort).
  boost::asio::awaitable<void> close();

 private:
  struct Waiter {
    explicit Waiter(const boost::asio::any_io_executor& executor) : timer(executor) {}
    boost::asio::steady_timer timer;
    TaskOutcome outcome;
    std::string what;
    // Shared by the waiters of one wait_all: a callback may hold much (a map of 10,000 tasks to their VMs),
    // and a copy per task made 10,000 waiters hold 10,000 copies (10 GB, 30 s of copying on the loop).
    std::shared_ptr<const std::function<void(const TaskOutcome&)>> on_end;
    bool done = false;
    bool seen = false;  // an update of the task came
    // vCenter's queue: when the task was first seen "queued", and for how long it was seen so in all.
    std::optional<std::chrono::steady_clock::time_point> queued_since;
    bool was_queued = false;
    double queued_s = 0;
    // Waits sent when its filter existed (none counts until CreateFilter has answered).
    std::uint64_t filtered_at = std::numeric_limits<std::uint64_t>::max();
    // When its filter was made, or an update or a read of it last came.
    std::chrono::steady_clock::time_point last_news = std::chrono::steady_clock::now();
  };
  boost::asio::awaitable<Expected<void>> ensure_collector();
  // CreateFilter for `tasks`: its filter's reference.
  boost::asio::awaitable<Expected<MoRef>> add_filter(const std::vector<MoRef>& tasks);
  boost::asio::awaitable<void> poll();
  // Reads directly the tasks followed whose first update should have come with wait number `wait` and did
  // not, those without news for kQuietRead, and all of them after a lost answer (reread_all_).
  boost::asio::awaitable<Expected<void>> read_directly(std::uint64_t wait);
  void apply(Waiter& waiter, const std::string& name, const Value& value);
  void finish(const MoRef& task, Waiter& waiter);
  void fail_all(const Error& e);

  boost::asio::any_io_executor executor_;
  Session& session_;
  MoRef collector_;
  std::string version_;
  std::uint64_t generation_ = 0;  // bumped when the collector is made again
  std::uint64_t waits_sent_ = 0;
  bool polling_ = false;
  bool reread_all_ = false;  // an answer was lost since the last direct read
  bool closed_ = false;
  std::map<MoRef, std::shared_ptr<Waiter>> waiters_;
  async::AsyncSemaphore collector_mutex_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace bootstorm::vsphere::vim25

#pragma once
// Pushed changes from vCenter: one PropertyCollector filter read with WaitForUpdatesEx, and the wait for a
// set of tasks built on it (their info.state is followed, not polled).
//
// Each stream has a PropertyCollector of its own (CreatePropertyCollector), as govmomi's task waiter does:
// the versions of a collector cover all of its filters, so two streams sharing the session's collector
// would take each other's updates.
//
// The version of the last update set is kept, so a call that failed (a dropped connection, a timeout) can be
// repeated from it: vCenter keeps its collector's versions, so nothing is lost or repeated. A server that
// keeps none (govmomi's simulator) counts an answer as delivered once sent, lost or not: a caller that must
// not miss a change starts over with a new stream instead (Vim25Provider::observe does). A truncated set
// (more changes than maxObjectUpdates) is continued at once.
#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "common/expected.hpp"
#include "protocol/vim25/types.hpp"
#include "providers/vsphere/vim25/session.hpp"

namespace bootstorm::vsphere::vim25 {

class UpdateStream {
 public:
  // `urgent`: its waits are charged to the session's budget but never held back by it (the observation of a
  // storm: a wait held back would see every change a token's wait late). Otherwise paced as any call.
  explicit UpdateStream(Session& session, bool urgent = false) : session_(session), urgent_(urgent) {}

  // CreatePropertyCollector, then CreateFilter on it.
  boost::asio::awaitable<Expected<void>> create(const PropertyFilterSpec& spec, bool partial_updates = false);
  // The next update set (WaitForUpdatesEx from the kept version). With options.max_wait_seconds the call
  // returns an empty set when nothing changed in that time.
  boost::asio::awaitable<Expected<UpdateSet>> next(WaitOptions options);
  // DestroyPropertyCollector, which takes the filter with it (best effort).
  boost::asio::awaitable<void> destroy();

  const MoRef& collector() const { return collector_; }
  const MoRef& filter() const { return filter_; }
  const std::string& version() const { return version_; }

 private:
  Session& session_;
  bool urgent_ = false;
  MoRef collector_;
  MoRef filter_;
  std::string version_;
};

// How a task ended: info.state "success" with info.result, or "error" with the fault as an Error.
struct TaskOutcome {
  MoRef task;
  std::string state;  // success, error
  std::optional<Value> result;
  std::optional<Error> error;
};

// Follows `tasks` until each has succeeded or failed, or `timeout` passes (then ErrorKind::timeout naming
// how many were still running). Outcomes in the order of `tasks`. `what` names the operation for errors
// (e.g. "clone bs-3f9a2c-storm-0001").
boost::asio::awaitable<Expected<std::vector<TaskOutcome>>> wait_for_tasks(Session& session,
                                                                          std::vector<MoRef> tasks,
                                                                          std::chrono::milliseconds timeout,
                                                                          std::string what);

// A LocalizedMethodFault (task info.error) as the SoapFault fault_error() explains.
SoapFault fault_of(const Value& localized_method_fault);

}  // namespace bootstorm::vsphere::vim25

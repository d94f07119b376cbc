#pragma once
// vCenter's cost limits on clones, as both vSphere providers (REST and vim25) keep them: vCenter gives a host
// 16 cost units and a datastore 128, and a clone costs 4 of each, so more clones than that at once only
// queue inside vCenter, holding a connection each and counting against the run's timeout.
#include <boost/asio/any_io_executor.hpp>
#include <map>
#include <memory>
#include <string>

#include "common/async/semaphore.hpp"

namespace bootstorm::vsphere {

inline constexpr std::size_t kClonesPerHost = 4;
inline constexpr std::size_t kClonesPerDatastore = 32;

// One semaphore of kClonesPerHost permits per host, made on first use. Take the host's permit before any
// wider one, so that a clone queued behind a busy host holds no slot that clones to other hosts could use.
class HostCloneSlots {
 public:
  explicit HostCloneSlots(boost::asio::any_io_executor executor) : executor_(std::move(executor)) {}
  async::AsyncSemaphore& of(const std::string& host_id);

 private:
  boost::asio::any_io_executor executor_;
  std::map<std::string, std::unique_ptr<async::AsyncSemaphore>> slots_;
};

}  // namespace bootstorm::vsphere

#pragma once
// TCP reachability probe for the port_open milestone: once a VM's IP is known (ip_assigned), connect to
// plan.ready.port from the jump host until it succeeds, with bounded concurrency across VMs and backoff
// between attempts. The milestone's resolution is the gap since the previous attempt (the port opened
// somewhere inside it).
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <memory>
#include <set>
#include <string>

#include "common/async/semaphore.hpp"
#include "common/async/wait_group.hpp"
#include "common/cancel.hpp"
#include "providers/api/provider.hpp"

namespace bootstorm::engine {

struct ProbeOptions {
  unsigned short port = 0;
  std::size_t max_concurrent = 64;
  std::chrono::milliseconds initial_interval{250};
  std::chrono::milliseconds max_interval{2000};
  double backoff = 1.5;
  std::chrono::milliseconds connect_timeout{1000};
};

class PortProber {
 public:
  PortProber(boost::asio::any_io_executor executor, ProbeOptions options, api::MilestoneSink sink,
             CancelSignal stop);

  // Starts probing `vm` at `address` (first address of a list like "10.0.0.5,fe80::1"). Once per VM.
  void probe(const std::string& vm, const std::string& address);
  // Completes when every probe loop ended (succeeded or stopped).
  boost::asio::awaitable<void> wait();
  std::size_t attempts() const { return attempts_; }

 private:
  boost::asio::awaitable<void> run(std::string vm, std::string address);
  boost::asio::awaitable<bool> try_connect(const std::string& address);

  boost::asio::any_io_executor executor_;
  ProbeOptions options_;
  api::MilestoneSink sink_;
  CancelSignal stop_;
  async::AsyncSemaphore slots_;
  async::WaitGroup group_;
  std::set<std::string> started_;
  std::size_t attempts_ = 0;
};

// The first address of a list ("a,b" or "a b"), trimmed.
std::string first_address(const std::string& list);

}  // namespace bootstorm::engine

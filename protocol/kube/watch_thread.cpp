#include "protocol/kube/watch_thread.hpp"

#include <spdlog/spdlog.h>

#include <exception>

namespace bootstorm::kube {

WatchThread::WatchThread(http::ClientOptions options)
    : work_(boost::asio::make_work_guard(io_)),
      client_(std::make_unique<http::Client>(io_.get_executor(), std::move(options))) {
  thread_ = std::thread([this] {
    try {
      io_.run();
    } catch (const std::exception& e) {
      // A handler that throws is a bug; the watch stops and the provider's recovery (re-list) takes over.
      spdlog::error("the watch thread stopped: {}", e.what());
    }
  });
}

WatchThread::~WatchThread() {
  work_.reset();
  io_.stop();
  if (thread_.joinable()) thread_.join();
  // The client's pending operations are destroyed with io_, after this body; closing its idle connections
  // now is safe because the thread has stopped.
  client_.reset();
}

}  // namespace bootstorm::kube

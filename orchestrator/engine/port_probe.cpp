#include "orchestrator/engine/port_probe.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

#include "common/async/for_each.hpp"
#include "common/async/sleep.hpp"
#include "common/log.hpp"

namespace bootstorm::engine {

namespace asio = boost::asio;

std::string first_address(const std::string& list) {
  auto start = list.find_first_not_of(" \t,");
  if (start == std::string::npos) return {};
  auto end = list.find_first_of(" \t,", start);
  return list.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

PortProber::PortProber(asio::any_io_executor executor, ProbeOptions options, api::MilestoneSink sink,
                       CancelSignal stop)
    : executor_(executor),
      options_(options),
      sink_(std::move(sink)),
      stop_(std::move(stop)),
      slots_(executor, options.max_concurrent),
      group_(executor) {}

void PortProber::probe(const std::string& vm, const std::string& address) {
  std::string addr = first_address(address);
  if (addr.empty() || options_.port == 0 || !started_.insert(vm).second) return;
  group_.add();
  asio::co_spawn(executor_, run(vm, addr), [this, vm](std::exception_ptr e) {
    async::log_task_exception(e, "port probe of " + vm);
    group_.done();
  });
}

asio::awaitable<void> PortProber::wait() {
  co_await group_.wait();
}

asio::awaitable<bool> PortProber::try_connect(const std::string& address) {
  boost::system::error_code ec;
  auto ip = asio::ip::make_address(address, ec);
  if (ec) co_return false;
  asio::ip::tcp::socket socket(executor_);
  asio::steady_timer deadline(executor_, options_.connect_timeout);
  bool timed_out = false;
  deadline.async_wait([&](boost::system::error_code wait_ec) {
    if (!wait_ec) {
      timed_out = true;
      boost::system::error_code ignored;
      socket.close(ignored);
    }
  });
  auto [connect_ec] = co_await socket.async_connect(asio::ip::tcp::endpoint(ip, options_.port),
                                                    asio::as_tuple(asio::use_awaitable));
  deadline.cancel();
  // Let the cancelled timer handler run before the socket goes out of scope.
  co_await asio::post(executor_, asio::use_awaitable);
  boost::system::error_code ignored;
  socket.close(ignored);
  co_return !connect_ec && !timed_out;
}

asio::awaitable<void> PortProber::run(std::string vm, std::string address) {
  auto interval = options_.initial_interval;
  std::optional<std::chrono::steady_clock::time_point> previous_attempt;
  while (!stop_.cancelled()) {
    bool open = false;
    const auto attempt_start = std::chrono::steady_clock::now();
    {
      auto permit = co_await async::acquire(slots_);
      if (stop_.cancelled()) co_return;
      ++attempts_;
      open = co_await try_connect(address);
    }
    if (open) {
      api::MilestoneEvent ev;
      ev.vm = vm;
      ev.milestone = api::Milestone::port_open;
      ev.observed_mono = std::chrono::steady_clock::now();
      ev.observed_wall = std::chrono::system_clock::now();
      ev.source = api::Source::probe;
      ev.resolution_s = previous_attempt
                            ? std::chrono::duration<double>(ev.observed_mono - *previous_attempt).count()
                            : std::chrono::duration<double>(options_.initial_interval).count();
      ev.detail = address + ":" + std::to_string(options_.port);
      sink_(std::move(ev));
      co_return;
    }
    previous_attempt = attempt_start;
    if (!co_await async::sleep_for(interval, stop_)) co_return;
    interval = std::min(options_.max_interval,
                        std::chrono::milliseconds(static_cast<long>(interval.count() * options_.backoff)));
  }
}

}  // namespace bootstorm::engine

// The start burst: connections opened ahead, and the starts the StartBarrier releases in one turn of the
// event loop written back to back on them (HTTP/1.1 pipelining) when startsPerConnection asks for it.
#include <spdlog/spdlog.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "providers/kubevirt/detail/provider_impl.hpp"

namespace bootstorm::kubevirt::detail {
namespace asio = boost::asio;
using asio::awaitable;
using nlohmann::json;
using std::chrono::steady_clock;
using std::chrono::system_clock;

namespace {
system_clock::time_point wall_of(steady_clock::time_point mono) {
  return system_clock::now() - std::chrono::duration_cast<system_clock::duration>(steady_clock::now() - mono);
}
}  // namespace

awaitable<Expected<void>> ProviderImpl::prepare_storm(std::size_t expected_starts) {
  if (!api_) co_return make_error(ErrorKind::internal, "prepare_storm before connect");
  if (dv_waiter_count_ == 0) stop_dv_watch();  // provisioning is over
  std::size_t count = start_connections(
      std::min<std::size_t>(expected_starts, static_cast<std::size_t>(std::max(1, config_.max_concurrent))));
  if (start_depth() > 1 && !config_.dry_run && count > 0) {
    spdlog::info("start burst: {} starts per connection (HTTP/1.1 pipelining) over {} connections",
                 start_depth(), count);
  }
  // Also checks the credentials: an expired token fails here, before the barrier, not in every start.
  co_return co_await api_->prewarm(count);
}

// Starts written back to back on one connection (apiBudget.startsPerConnection, or automatic).
int ProviderImpl::start_depth() const {
  return api::starts_per_connection(config_.starts_per_connection, std::max(1, config_.max_concurrent));
}

std::size_t ProviderImpl::start_connections(std::size_t concurrent_starts) const {
  const auto depth = static_cast<std::size_t>(start_depth());
  return (concurrent_starts + depth - 1) / depth;
}

awaitable<Expected<api::StartResult>> ProviderImpl::start(const api::VmHandle& vm) {
  const std::string what = "starting VirtualMachine " + config_.namespace_ + "/" + vm.name;
  const std::string path = vm_subresource_path(config_.namespace_, vm.name, "start");
  Expected<http::Response> resp = make_error(ErrorKind::internal, what + ": not sent");
  if (start_depth() > 1 && !config_.dry_run) {
    resp = co_await start_pipelined(path, what);
  } else {
    resp = co_await call("PUT", path, start_options().dump(), what, kube::Budget::unpaced);
  }
  if (!resp) co_return resp.error();
  api::StartResult result;
  result.written_mono = resp->written_at;
  result.written_wall = resp->written_at_wall;
  result.acknowledged_mono = resp->received_at;
  result.acknowledged_wall = wall_of(resp->received_at);
  result.attempts = resp->attempts;
  if (resp->status == 200 || resp->status == 202 || resp->status == 204) co_return result;
  if (resp->status == 409) {
    Error e = kube::status_error(resp->status, resp->body, what);
    if (e.message.find("already running") != std::string::npos) {
      // A retried start whose first attempt went through, or a VM started behind our back: it runs, so it
      // is treated as started; its timings are then only as good as the first attempt's.
      spdlog::warn("{}: the VM was already running (HTTP 409) — treated as started", what);
      co_return result;
    }
    if (e.message.find("does not support manual start") != std::string::npos && resp->attempts > 1) {
      // A start on a Halted VM switches its runStrategy to Always; when an earlier attempt of this request
      // went through (its answer was lost or was a 5xx), the retry meets Always before the VMI exists.
      spdlog::warn("{}: a retried start found runStrategy Always (HTTP 409) — an earlier attempt started it",
                   what);
      co_return result;
    }
    if (e.message.find("does not support manual start") != std::string::npos) {
      co_return make_error(
          ErrorKind::conflict,
          what + " failed: its runStrategy (Always/Once) refuses start requests (" + e.message + ")",
          "bootstorm creates VMs with runStrategy Halted; something changed it — recreate the VM", 409);
    }
    co_return e;
  }
  co_return kube::status_error(resp->status, resp->body, what);
}

// --- the start burst, pipelined ---
//
// The StartBarrier releases every start in one turn of the event loop. start_pipelined() queues each one and
// the first of them posts flush_starts(), which runs after the whole turn: it cuts the queue into batches of
// start_depth() and hands each batch to KubeApi::pipeline (one write per connection).

struct ProviderImpl::PendingStart {
  PendingStart(asio::any_io_executor executor, kube::PipelinedCall c) : call(std::move(c)), done(executor) {}
  kube::PipelinedCall call;
  asio::steady_timer done;  // cancelled when `response` is set
  std::optional<Expected<http::Response>> response;
};

awaitable<Expected<http::Response>> ProviderImpl::start_pipelined(const std::string& path,
                                                                  const std::string& what) {
  if (!api_) co_return make_error(ErrorKind::internal, what + ": not connected");
  kube::ApiCall call{"PUT", path, start_options().dump()};
  call.budget = kube::Budget::unpaced;
  auto pending = std::make_shared<PendingStart>(executor_, kube::PipelinedCall{std::move(call), what});
  start_queue_.push_back(pending);
  if (!start_flush_posted_) {
    start_flush_posted_ = true;
    asio::post(executor_, [self = shared_from_this()] { self->flush_starts(); });
  }
  pending->done.expires_at(steady_clock::time_point::max());
  while (!pending->response) co_await pending->done.async_wait(asio::as_tuple(asio::use_awaitable));
  co_return std::move(*pending->response);
}

void ProviderImpl::flush_starts() {
  start_flush_posted_ = false;
  auto queue = std::move(start_queue_);
  start_queue_.clear();
  const auto depth = static_cast<std::size_t>(start_depth());
  for (std::size_t first = 0; first < queue.size(); first += depth) {
    std::vector<std::shared_ptr<PendingStart>> batch(
        queue.begin() + static_cast<std::ptrdiff_t>(first),
        queue.begin() + static_cast<std::ptrdiff_t>(std::min(queue.size(), first + depth)));
    asio::co_spawn(executor_, send_start_batch(shared_from_this(), std::move(batch)), asio::detached);
  }
}

awaitable<void> ProviderImpl::send_start_batch(std::shared_ptr<ProviderImpl> self,
                                               std::vector<std::shared_ptr<PendingStart>> batch) {
  std::vector<kube::PipelinedCall> calls;
  calls.reserve(batch.size());
  for (const auto& pending : batch) calls.push_back(std::move(pending->call));  // not needed after
  auto results = co_await self->api_->pipeline(std::move(calls));
  for (std::size_t i = 0; i < batch.size(); ++i) {
    batch[i]->response = i < results.size() ? std::move(results[i])
                                            : make_error(ErrorKind::internal, "pipelined start not answered");
    batch[i]->done.cancel();
  }
}

}  // namespace bootstorm::kubevirt::detail

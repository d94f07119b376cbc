// Pipelined start bursts (see detail/start_pipeline.hpp).
#include "providers/kubevirt/detail/start_pipeline.hpp"

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <optional>

namespace bootstorm::kubevirt::detail {
namespace asio = boost::asio;
using asio::awaitable;

struct StartPipeline::Pending {
  Pending(asio::any_io_executor executor, kube::PipelinedCall c) : call(std::move(c)), done(executor) {}
  kube::PipelinedCall call;
  asio::steady_timer done;  // cancelled when `response` is set
  std::optional<Expected<http::Response>> response;
};

StartPipeline::StartPipeline(asio::any_io_executor executor, std::shared_ptr<kube::KubeApi> api,
                             std::size_t depth)
    : executor_(std::move(executor)), api_(std::move(api)), depth_(std::max<std::size_t>(1, depth)) {}

awaitable<Expected<http::Response>> StartPipeline::send(kube::PipelinedCall call) {
  auto pending = std::make_shared<Pending>(executor_, std::move(call));
  queue_.push_back(pending);
  if (!flush_posted_) {
    flush_posted_ = true;
    asio::post(executor_, [self = shared_from_this()] { self->flush(); });
  }
  pending->done.expires_at(std::chrono::steady_clock::time_point::max());
  while (!pending->response) co_await pending->done.async_wait(asio::as_tuple(asio::use_awaitable));
  co_return std::move(*pending->response);
}

void StartPipeline::flush() {
  flush_posted_ = false;
  auto queue = std::move(queue_);
  queue_.clear();
  if (!queue.empty())
    asio::co_spawn(executor_, send_burst(shared_from_this(), std::move(queue)), asio::detached);
}

awaitable<void> StartPipeline::send_burst(std::shared_ptr<StartPipeline> self,
                                          std::vector<std::shared_ptr<Pending>> burst) {
  std::vector<kube::PipelinedCall> calls;
  calls.reserve(burst.size());
  for (const auto& pending : burst) calls.push_back(std::move(pending->call));  // not needed after
  auto results = co_await self->api_->pipeline(std::move(calls), self->depth_);
  for (std::size_t i = 0; i < burst.size(); ++i) {
    burst[i]->response = i < results.size() ? std::move(results[i])
                                            : make_error(ErrorKind::internal, "pipelined start not answered");
    burst[i]->done.cancel();
  }
}

}  // namespace bootstorm::kubevirt::detail

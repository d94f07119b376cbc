#pragma once
// The start burst, pipelined. The StartBarrier releases every start in one turn of the event loop; send()
// queues each one and the first of them posts the flush, which runs after the whole turn: it hands the queue
// to KubeApi::pipeline, `depth` starts per connection (one write per connection). 10,000 starts
// on one connection each held ~90 KB of TLS state apiece (925 MB); 20 per connection, 140 MB.
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <memory>
#include <vector>

#include "common/expected.hpp"
#include "protocol/kube/kube_api.hpp"

namespace bootstorm::kubevirt::detail {

class StartPipeline : public std::enable_shared_from_this<StartPipeline> {
 public:
  StartPipeline(boost::asio::any_io_executor executor, std::shared_ptr<kube::KubeApi> api, std::size_t depth);

  // The answer to `call`, sent with the other calls queued in the same turn of the loop.
  boost::asio::awaitable<Expected<http::Response>> send(kube::PipelinedCall call);

 private:
  struct Pending;
  void flush();
  static boost::asio::awaitable<void> send_burst(std::shared_ptr<StartPipeline> self,
                                                 std::vector<std::shared_ptr<Pending>> burst);

  boost::asio::any_io_executor executor_;
  std::shared_ptr<kube::KubeApi> api_;
  std::size_t depth_;
  std::vector<std::shared_ptr<Pending>> queue_;
  bool flush_posted_ = false;
};

}  // namespace bootstorm::kubevirt::detail

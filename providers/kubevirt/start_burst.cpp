// The start burst: connections opened ahead, then one start request per VM, written back to back on shared
// connections (StartPipeline) when startsPerConnection asks for it.
#include <spdlog/spdlog.h>

#include "providers/kubevirt/detail/provider_impl.hpp"

namespace bootstorm::kubevirt::detail {
using boost::asio::awaitable;
using std::chrono::steady_clock;
using std::chrono::system_clock;

namespace {
system_clock::time_point wall_of(steady_clock::time_point mono) {
  return system_clock::now() - std::chrono::duration_cast<system_clock::duration>(steady_clock::now() - mono);
}
}  // namespace

awaitable<Expected<void>> ProviderImpl::prepare_storm(std::size_t expected_starts) {
  if (!api_) co_return make_error(ErrorKind::internal, "prepare_storm before connect");
  if (datavolumes_) datavolumes_->stop_if_idle();  // provisioning is over
  burst_starts_ = std::max<std::size_t>(1, expected_starts);
  start_pipeline_.reset();  // its depth was for an earlier burst
  std::size_t count = start_connections(burst_starts_);
  if (start_depth() > 1 && !config_.dry_run && count > 0) {
    spdlog::info("start burst: {} starts per connection (HTTP/1.1 pipelining) over {} connections",
                 start_depth(), count);
  }
  // Also checks the credentials: an expired token fails here, before the barrier, not in every start.
  co_return co_await api_->prewarm(count);
}

// Starts written back to back on one connection (apiBudget.startsPerConnection, or automatic).
int ProviderImpl::start_depth() const {
  const auto concurrent =
      burst_starts_ > 0 ? burst_starts_ : static_cast<std::size_t>(std::max(1, config_.max_concurrent));
  return api::starts_per_connection(config_.starts_per_connection,
                                    static_cast<int>(std::min<std::size_t>(concurrent, 1'000'000'000)));
}

std::size_t ProviderImpl::start_connections(std::size_t concurrent_starts) const {
  const auto depth = static_cast<std::size_t>(start_depth());
  return (concurrent_starts + depth - 1) / depth;
}

awaitable<Expected<api::StartResult>> ProviderImpl::start(const api::VmHandle& vm) {
  const std::string what = "starting VirtualMachine " + settings_.namespace_ + "/" + vm.name;
  const std::string path = vm_subresource_path(settings_.namespace_, vm.name, "start");
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

awaitable<Expected<http::Response>> ProviderImpl::start_pipelined(const std::string& path,
                                                                  const std::string& what) {
  if (!api_) co_return make_error(ErrorKind::internal, what + ": not connected");
  if (!start_pipeline_) {
    start_pipeline_ =
        std::make_shared<StartPipeline>(executor_, api_, static_cast<std::size_t>(start_depth()));
  }
  kube::ApiCall call{"PUT", path, start_options().dump()};
  call.budget = kube::Budget::unpaced;
  kube::PipelinedCall pipelined{std::move(call), what};
  auto pipeline = start_pipeline_;  // held while this start waits
  co_return co_await pipeline->send(std::move(pipelined));
}

}  // namespace bootstorm::kubevirt::detail

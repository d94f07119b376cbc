// The destination cluster's Kubernetes API as the migration uses it (see detail/migrate_internal.hpp).
#include <spdlog/spdlog.h>

#include "orchestrator/migrate/detail/migrate_internal.hpp"
#include "protocol/kube/http_kube_api.hpp"
#include "protocol/kube/list_watch.hpp"

namespace bootstorm::migrate {
namespace asio = boost::asio;
using nlohmann::json;

std::unique_ptr<kube::KubeApi> make_destination_api(asio::any_io_executor executor,
                                                    const kube::KubeClientConfig& config) {
  kube::HttpKubeOptions options;
  options.max_connections = 8;
  options.request_timeout = std::chrono::seconds(60);
  options.user_agent = "bootstorm/migrate";
  return std::make_unique<kube::HttpKubeApi>(std::move(executor), config, std::move(options));
}

asio::awaitable<Expected<void>> watch_objects(kube::KubeApi& api, const std::string& collection,
                                              const std::string& query,
                                              std::function<void(const json&)> on_object,
                                              std::function<bool()> done,
                                              std::chrono::steady_clock::time_point deadline,
                                              CancelSignal cancel, const std::string& what) {
  kube::ListWatchRequest request;
  request.collection = collection;
  request.query = query;
  request.what = what;
  request.page_size = 500;
  // Short watches: a migration's objects change rarely, and each new watch re-checks the deadline.
  request.watch_timeout_seconds = 60;
  request.deadline = deadline;
  request.max_failures = 10;
  kube::ListWatchHandlers handlers;
  handlers.on_list = [on_object](const std::vector<json>& items, kube::ClientInstant, bool) {
    for (const auto& item : items) on_object(item);
  };
  handlers.on_event = [on_object](const kube::WatchEvent& event, kube::ClientInstant, bool, double) {
    if (event.type == kube::WatchEvent::Type::added || event.type == kube::WatchEvent::Type::modified) {
      on_object(event.object);
    }
  };
  handlers.done = std::move(done);
  co_return co_await kube::list_watch(api, std::move(request), std::move(handlers), std::move(cancel));
}

}  // namespace bootstorm::migrate

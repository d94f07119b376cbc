#pragma once
// A small Kubernetes REST client for the migration: create / get / merge-patch / delete / list, and
// list + watch of one collection with resourceVersion resume, bookmarks and 410 Gone relists. Built on
// bootstorm::http::Client and the kubeconfig resolution of providers/kubevirt (credentials kept valid by
// kubevirt::CredentialCache). No Beast here.
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "common/cancel.hpp"
#include "common/expected.hpp"
#include "providers/kubevirt/kube_config.hpp"

namespace bootstorm::migrate {

class KubeApi {
 public:
  // Throws nothing: TLS setup errors come back from connect().
  KubeApi(boost::asio::any_io_executor executor, kubevirt::KubeClientConfig config);
  ~KubeApi();
  KubeApi(const KubeApi&) = delete;
  KubeApi& operator=(const KubeApi&) = delete;

  // Sets up the HTTP client and checks that `probe_path` answers 200 (404 -> not_found naming `what`).
  boost::asio::awaitable<Expected<void>> connect(const std::string& probe_path, const std::string& what);

  // nullopt when 404.
  boost::asio::awaitable<Expected<std::optional<nlohmann::json>>> get(const std::string& path,
                                                                      const std::string& what);
  // POST to a collection; 409 AlreadyExists comes back as ErrorKind::conflict.
  boost::asio::awaitable<Expected<nlohmann::json>> create(const std::string& collection,
                                                          const nlohmann::json& object,
                                                          const std::string& what);
  boost::asio::awaitable<Expected<nlohmann::json>> merge_patch(const std::string& path,
                                                               const nlohmann::json& patch,
                                                               const std::string& what);
  // true: deleted (or deletion started); false: already gone.
  boost::asio::awaitable<Expected<bool>> remove(const std::string& path, const std::string& what);
  // Every item of a collection (follows `continue`); `query` without the leading '?'.
  boost::asio::awaitable<Expected<nlohmann::json>> list(const std::string& collection,
                                                        const std::string& query, const std::string& what);

  // List + watch of `collection` filtered by `query` (labelSelector / fieldSelector), calling `on_object`
  // with every object seen (from the list, then from every ADDED/MODIFIED event) and `on_deleted` for
  // DELETED. Returns when `done()` is true after a callback, when `cancel` fires (Error cancelled) or at
  // `deadline` (Error timeout). Dropped streams resume from the last resourceVersion; 410 Gone relists.
  boost::asio::awaitable<Expected<void>> watch_until(const std::string& collection, const std::string& query,
                                                     std::function<void(const nlohmann::json&)> on_object,
                                                     std::function<bool()> done,
                                                     std::chrono::steady_clock::time_point deadline,
                                                     CancelSignal cancel, const std::string& what);

  const kubevirt::KubeClientConfig& config() const;
  std::uint64_t requests() const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace bootstorm::migrate

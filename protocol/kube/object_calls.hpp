#pragma once
// The object-level calls of the Kubernetes REST API over any KubeApi: read, create, replace, merge-patch,
// delete and list (every page), each answering with the object or a Status error that names what was being
// done.
#include <boost/asio/awaitable.hpp>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "common/expected.hpp"
#include "protocol/kube/kube_api.hpp"

namespace bootstorm::kube {

// nullopt when the object does not exist (404).
boost::asio::awaitable<Expected<std::optional<nlohmann::json>>> get_object(KubeApi& api,
                                                                           const std::string& path,
                                                                           const std::string& what);
// POST to a collection; 409 AlreadyExists comes back as ErrorKind::conflict.
boost::asio::awaitable<Expected<nlohmann::json>> create_object(KubeApi& api, const std::string& collection,
                                                               const nlohmann::json& object,
                                                               const std::string& what);
// PUT of the whole object (or of its /status subresource, `path` ending in /status). Its
// metadata.resourceVersion makes it conditional: an object changed since comes back as ErrorKind::conflict
// (409 Conflict), for the caller to read the newer one and apply its change again, as a controller does.
boost::asio::awaitable<Expected<nlohmann::json>> replace_object(KubeApi& api, const std::string& path,
                                                                const nlohmann::json& object,
                                                                const std::string& what);
// application/merge-patch+json.
boost::asio::awaitable<Expected<nlohmann::json>> merge_patch_object(KubeApi& api, const std::string& path,
                                                                    const nlohmann::json& patch,
                                                                    const std::string& what);
// Background propagation. true: deleted (or deletion started); false: already gone.
boost::asio::awaitable<Expected<bool>> delete_object(KubeApi& api, const std::string& path,
                                                     const std::string& what);
struct ListOptions {
  std::size_t page_size = 500;  // limit/continue pages of this many items; 0 = one request
  WatchDecode decode = WatchDecode::full;
  // Spend a turn of the request budget per page without waiting for it (a list a watch needs at once)
  // rather than wait for the turn.
  bool without_waiting = false;
};
// Every item of a collection (every page) and the resourceVersion to watch from; `query` without '?'.
boost::asio::awaitable<Expected<ObjectList>> list_objects(KubeApi& api, const std::string& collection,
                                                          const std::string& query, const std::string& what,
                                                          ListOptions options = {});

}  // namespace bootstorm::kube

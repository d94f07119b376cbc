// Object-level Kubernetes calls (see object_calls.hpp).
#include "protocol/kube/object_calls.hpp"

#include <iterator>

#include "protocol/http/types.hpp"
#include "protocol/kube/status_error.hpp"

namespace bootstorm::kube {
using boost::asio::awaitable;
using nlohmann::json;

// Every ApiCall is named before its co_await: g++ 12 miscompiles aggregate temporaries inside a co_await
// expression (their destructors run on copies that were never made).

namespace {

Expected<json> parse_object(const std::string& body, const std::string& what) {
  json j = json::parse(body, nullptr, false);
  if (j.is_discarded()) return make_error(ErrorKind::protocol, what + ": the answer is not JSON");
  return j;
}

}  // namespace

awaitable<Expected<std::optional<json>>> get_object(KubeApi& api, const std::string& path,
                                                    const std::string& what) {
  ApiCall call{"GET", path, {}};
  auto resp = co_await api.call(std::move(call), what);
  if (!resp) co_return resp.error();
  if (resp->status == 404) co_return std::optional<json>();
  if (resp->status != 200) co_return status_error(resp->status, resp->body, what);
  auto object = parse_object(resp->body, what);
  if (!object) co_return object.error();
  co_return std::optional<json>(std::move(*object));
}

awaitable<Expected<json>> create_object(KubeApi& api, const std::string& collection, const json& object,
                                        const std::string& what) {
  ApiCall call{"POST", collection, object.dump()};
  auto resp = co_await api.call(std::move(call), what);
  if (!resp) co_return resp.error();
  if (resp->status != 200 && resp->status != 201 && resp->status != 202) {
    co_return status_error(resp->status, resp->body, what);  // 409 is ErrorKind::conflict
  }
  json created = json::parse(resp->body, nullptr, false);
  co_return created.is_discarded() ? object : created;
}

awaitable<Expected<json>> replace_object(KubeApi& api, const std::string& path, const json& object,
                                         const std::string& what) {
  ApiCall call{"PUT", path, object.dump()};
  auto resp = co_await api.call(std::move(call), what);
  if (!resp) co_return resp.error();
  if (resp->status != 200 && resp->status != 201) {
    co_return status_error(resp->status, resp->body, what);  // 409 is ErrorKind::conflict
  }
  auto replaced = parse_object(resp->body, what);
  if (!replaced) co_return replaced.error();
  co_return std::move(*replaced);
}

awaitable<Expected<json>> merge_patch_object(KubeApi& api, const std::string& path, const json& patch,
                                             const std::string& what) {
  ApiCall call{"PATCH", path, patch.dump(), "application/merge-patch+json"};
  auto resp = co_await api.call(std::move(call), what);
  if (!resp) co_return resp.error();
  if (resp->status != 200) co_return status_error(resp->status, resp->body, what);
  json patched = json::parse(resp->body, nullptr, false);
  co_return patched.is_discarded() ? json::object() : patched;
}

awaitable<Expected<bool>> delete_object(KubeApi& api, const std::string& path, const std::string& what) {
  const json options = {{"kind", "DeleteOptions"}, {"apiVersion", "v1"}, {"propagationPolicy", "Background"}};
  ApiCall call{"DELETE", path, options.dump()};
  auto resp = co_await api.call(std::move(call), what);
  if (!resp) co_return resp.error();
  if (resp->status == 404) co_return false;
  if (resp->status != 200 && resp->status != 202) co_return status_error(resp->status, resp->body, what);
  co_return true;
}

awaitable<Expected<ObjectList>> list_objects(KubeApi& api, const std::string& collection,
                                             const std::string& query, const std::string& what,
                                             ListOptions options) {
  ObjectList all;
  std::string next;
  do {
    std::string full_query = query;
    if (options.page_size > 0) {
      full_query += (full_query.empty() ? "limit=" : "&limit=") + std::to_string(options.page_size);
      if (!next.empty()) full_query += "&continue=" + http::url_encode(next);
    }
    ApiCall call{"GET", full_query.empty() ? collection : collection + "?" + full_query, {}};
    if (options.without_waiting) {
      api.charge_budget();
      call.budget = Budget::unpaced;
    }
    auto resp = co_await api.call(std::move(call), what);
    if (!resp) co_return resp.error();
    if (resp->status != 200) co_return status_error(resp->status, resp->body, what);
    auto page = decode_list(resp->body, options.decode);
    if (!page) co_return make_error(ErrorKind::protocol, what + ": " + page.error().message);
    resp->body = std::string();  // a 10,000-object list body is several MB: not kept while decoding the rest
    if (all.items.empty()) {
      all.items = std::move(page->items);
    } else {
      std::move(page->items.begin(), page->items.end(), std::back_inserter(all.items));
    }
    all.resource_version = std::move(page->resource_version);
    next = std::move(page->continue_token);
  } while (!next.empty());
  co_return all;
}

}  // namespace bootstorm::kube

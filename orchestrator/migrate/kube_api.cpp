// Kubernetes REST client of the migration (see kube_api.hpp).
#include "orchestrator/migrate/kube_api.hpp"

#include <spdlog/spdlog.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "common/log.hpp"
#include "providers/http/client.hpp"
#include "providers/kubevirt/kube_objects.hpp"

namespace bootstorm::migrate {
namespace asio = boost::asio;
using asio::awaitable;
using nlohmann::json;
using std::chrono::steady_clock;

namespace {
constexpr auto kUseAwaitable = asio::as_tuple(asio::use_awaitable);
constexpr int kWatchSeconds = 60;
}  // namespace

struct KubeApi::Impl {
  asio::any_io_executor executor;
  kubevirt::KubeClientConfig config;
  std::string prefix;
  std::unique_ptr<http::Client> client;
  std::optional<kubevirt::CredentialCache> creds;
  std::string current_auth;
  std::uint64_t requests = 0;

  Expected<void> refresh_auth() {
    auto auth = creds->authorization(std::chrono::system_clock::now());
    if (!auth) return auth.error();
    if (*auth != current_auth) {
      current_auth = *auth;
      log::register_secret(current_auth);
      client->set_default_header("Authorization", current_auth);
    }
    return {};
  }

  awaitable<Expected<http::Response>> call(const std::string& method, const std::string& target,
                                           std::string body, const std::string& what,
                                           const std::string& content_type = {}) {
    if (!client) co_return make_error(ErrorKind::internal, what + ": not connected");
    for (int attempt = 0;; ++attempt) {
      if (auto a = refresh_auth(); !a) co_return a.error();
      http::Request req(method, prefix + target, body);
      if (!body.empty())
        req.headers.emplace_back("Content-Type", content_type.empty() ? "application/json" : content_type);
      req.timeout = std::chrono::seconds(60);
      ++requests;
      auto resp = co_await client->request(std::move(req));
      if (!resp) {
        Error e = resp.error();
        e.message = what + " (" + config.server + "): " + e.message;
        co_return e;
      }
      if (resp->status == 401 && attempt == 0) {
        creds->invalidate();
        continue;
      }
      co_return resp;
    }
  }
};

KubeApi::KubeApi(asio::any_io_executor executor, kubevirt::KubeClientConfig config)
    : impl_(std::make_shared<Impl>()) {
  impl_->executor = std::move(executor);
  impl_->config = std::move(config);
}

KubeApi::~KubeApi() {
  if (impl_->client) impl_->client->close_idle();
}

const kubevirt::KubeClientConfig& KubeApi::config() const {
  return impl_->config;
}
std::uint64_t KubeApi::requests() const {
  return impl_->requests;
}

awaitable<Expected<void>> KubeApi::connect(const std::string& probe_path, const std::string& what) {
  Impl& d = *impl_;
  auto url = http::parse_url(d.config.server);
  if (!url || url->scheme != "https")
    co_return make_error(
        ErrorKind::invalid_input,
        "the API server URL \"" + d.config.server + "\" of " + d.config.source + " is not an https URL",
        "Kubernetes API servers are reached over https");
  d.prefix = url->target == "/" ? std::string() : url->target;
  while (!d.prefix.empty() && d.prefix.back() == '/') d.prefix.pop_back();
  d.creds.emplace(d.config);
  http::ClientOptions options;
  options.base_url = url->origin();
  options.tls = d.config.tls;
  if (d.config.auth.exec) {
    auto cred = d.creds->exec_credential(std::chrono::system_clock::now());
    if (!cred) co_return cred.error();
    if (!cred->client_certificate_data.empty()) {
      options.tls.client_cert_data = cred->client_certificate_data;
      options.tls.client_key_data = cred->client_key_data;
      options.tls.client_cert_file.clear();
      options.tls.client_key_file.clear();
    }
  }
  if (options.tls.insecure_skip_verify)
    spdlog::warn("TLS verification of {} is disabled (insecure-skip-tls-verify): use it only in a lab",
                 d.config.server);
  options.max_connections = 8;
  options.user_agent = "bootstorm/migrate";
  options.default_headers = {{"Accept", "application/json"}};
  try {
    d.client = std::make_unique<http::Client>(d.executor, std::move(options));
  } catch (const std::exception& e) {
    co_return make_error(ErrorKind::tls, std::string("cannot set up TLS for ") + d.config.server + " (" +
                                             d.config.source + "): " + e.what());
  }
  auto resp = co_await d.call("GET", probe_path, {}, "checking " + what);
  if (!resp) co_return resp.error();
  if (resp->status == 404)
    co_return make_error(
        ErrorKind::not_found,
        "the API server " + d.config.server + " does not serve " + what + " (" + d.config.source + ")",
        "install the Migration Toolkit for Virtualization (Forklift) operator, or check that the "
        "context points at the right cluster");
  if (resp->status != 200) co_return kubevirt::status_error(resp->status, resp->body, "checking " + what);
  co_return Expected<void>();
}

awaitable<Expected<std::optional<json>>> KubeApi::get(const std::string& path, const std::string& what) {
  auto resp = co_await impl_->call("GET", path, {}, what);
  if (!resp) co_return resp.error();
  if (resp->status == 404) co_return std::optional<json>();
  if (resp->status != 200) co_return kubevirt::status_error(resp->status, resp->body, what);
  json j = json::parse(resp->body, nullptr, false);
  if (j.is_discarded()) co_return make_error(ErrorKind::protocol, what + ": the answer is not JSON");
  co_return std::optional<json>(std::move(j));
}

awaitable<Expected<json>> KubeApi::create(const std::string& collection, const json& object,
                                          const std::string& what) {
  auto resp = co_await impl_->call("POST", collection, object.dump(), what);
  if (!resp) co_return resp.error();
  if (resp->status != 200 && resp->status != 201 && resp->status != 202) {
    Error e = kubevirt::status_error(resp->status, resp->body, what);
    if (resp->status == 409) e.kind = ErrorKind::conflict;
    co_return e;
  }
  json j = json::parse(resp->body, nullptr, false);
  co_return j.is_discarded() ? object : j;
}

awaitable<Expected<json>> KubeApi::merge_patch(const std::string& path, const json& patch,
                                               const std::string& what) {
  auto resp = co_await impl_->call("PATCH", path, patch.dump(), what, "application/merge-patch+json");
  if (!resp) co_return resp.error();
  if (resp->status != 200) co_return kubevirt::status_error(resp->status, resp->body, what);
  json j = json::parse(resp->body, nullptr, false);
  co_return j.is_discarded() ? json::object() : j;
}

awaitable<Expected<bool>> KubeApi::remove(const std::string& path, const std::string& what) {
  json options = {{"kind", "DeleteOptions"}, {"apiVersion", "v1"}, {"propagationPolicy", "Background"}};
  auto resp = co_await impl_->call("DELETE", path, options.dump(), what);
  if (!resp) co_return resp.error();
  if (resp->status == 404) co_return false;
  if (resp->status != 200 && resp->status != 202)
    co_return kubevirt::status_error(resp->status, resp->body, what);
  co_return true;
}

awaitable<Expected<json>> KubeApi::list(const std::string& collection, const std::string& query,
                                        const std::string& what) {
  json all = json::array();
  std::string cont;
  std::string rv;
  do {
    std::string target = collection + "?limit=500" + (query.empty() ? "" : "&" + query);
    if (!cont.empty()) target += "&continue=" + http::url_encode(cont);
    auto resp = co_await impl_->call("GET", target, {}, what);
    if (!resp) co_return resp.error();
    if (resp->status != 200) co_return kubevirt::status_error(resp->status, resp->body, what);
    json page = json::parse(resp->body, nullptr, false);
    if (!page.is_object())
      co_return make_error(ErrorKind::protocol, what + ": the list is not a JSON object");
    if (page.contains("items") && page["items"].is_array())
      for (auto& item : page["items"]) all.push_back(std::move(item));
    cont.clear();
    if (page.contains("metadata") && page["metadata"].is_object()) {
      cont = page["metadata"].value("continue", "");
      rv = page["metadata"].value("resourceVersion", rv);
    }
  } while (!cont.empty());
  co_return json{{"items", all}, {"metadata", {{"resourceVersion", rv}}}};
}

awaitable<Expected<void>> KubeApi::watch_until(const std::string& collection, const std::string& query,
                                               std::function<void(const json&)> on_object,
                                               std::function<bool()> done, steady_clock::time_point deadline,
                                               CancelSignal cancel, const std::string& what) {
  Impl& d = *impl_;
  std::string rv;
  bool need_list = true;
  int failures = 0;
  while (true) {
    if (cancel.cancelled()) co_return make_error(ErrorKind::cancelled, what + ": interrupted");
    if (steady_clock::now() >= deadline) co_return make_error(ErrorKind::timeout, what + ": timed out");
    if (need_list) {
      auto listed = co_await list(collection, query, what);
      if (!listed) co_return listed.error();
      for (const auto& item : (*listed)["items"]) on_object(item);
      rv = (*listed)["metadata"].value("resourceVersion", "");
      need_list = false;
      if (done()) co_return Expected<void>();
    }
    auto remaining = std::chrono::duration_cast<std::chrono::seconds>(deadline - steady_clock::now()).count();
    long long seconds = std::max<long long>(1, std::min<long long>(kWatchSeconds, remaining + 1));
    std::string target = d.prefix + collection +
                         "?watch=true&allowWatchBookmarks=true&timeoutSeconds=" + std::to_string(seconds) +
                         (query.empty() ? "" : "&" + query) +
                         (rv.empty() ? "" : "&resourceVersion=" + http::url_encode(rv));
    if (auto a = d.refresh_auth(); !a) co_return a.error();
    http::Request req("GET", target);
    req.timeout = std::chrono::seconds(30);
    ++d.requests;
    CancelSignal stream_cancel;
    auto executor = d.executor;
    auto cancel_subscription = cancel.subscribe([stream_cancel, executor]() mutable {
      asio::post(executor, [stream_cancel]() mutable { stream_cancel.cancel(); });
    });
    auto timer = std::make_shared<asio::steady_timer>(d.executor, deadline);
    timer->async_wait([stream_cancel](boost::system::error_code ec) mutable {
      if (!ec) stream_cancel.cancel();
    });
    int status = 0;
    bool gone = false;
    bool finished = false;
    Error stream_error;
    bool has_stream_error = false;
    std::string error_body;
    auto result = co_await d.client->stream(
        std::move(req), [&](int s, const http::Headers&) { status = s; },
        [&](std::string_view line) {
          if (finished) return;
          if (status != 200) {
            error_body.append(line);
            return;
          }
          if (line.empty()) return;
          auto ev = kubevirt::decode_watch_line(line);
          if (!ev) {
            stream_error = ev.error();
            has_stream_error = true;
            return;
          }
          using T = kubevirt::WatchEvent::Type;
          if (ev->type == T::error) {
            if (ev->error_code == 410) gone = true;
            finished = true;
            stream_cancel.cancel();
            return;
          }
          std::string v = ev->resource_version();
          if (!v.empty()) rv = v;
          if (ev->type == T::added || ev->type == T::modified) on_object(ev->object);
          if (done()) {
            finished = true;
            stream_cancel.cancel();
          }
        },
        stream_cancel);
    timer->cancel();
    if (finished && !gone) co_return Expected<void>();
    if (done()) co_return Expected<void>();
    if (gone || status == 410) {
      need_list = true;
      continue;
    }
    if (status != 0 && status != 200) {
      Error e = kubevirt::status_error(status, error_body, what);
      if (++failures > 5) co_return e;
      spdlog::warn("{} (retrying)", e.what());
    } else if (!result && result.error().kind != ErrorKind::cancelled) {
      if (++failures > 10) co_return result.error();
      spdlog::debug("{}: watch dropped ({}), resuming", what, result.error().what());
    } else if (has_stream_error) {
      spdlog::warn("{}: {}", what, stream_error.what());
      need_list = true;
    } else {
      failures = 0;
    }
    if (failures > 0) {
      asio::steady_timer wait(d.executor, std::chrono::milliseconds(200) * std::min(failures, 10));
      co_await wait.async_wait(kUseAwaitable);
    }
  }
}

}  // namespace bootstorm::migrate

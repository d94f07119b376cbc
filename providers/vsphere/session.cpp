#include "providers/vsphere/session.hpp"

#include <nlohmann/json.hpp>

#include "common/log.hpp"
#include "providers/vsphere/vcenter_error.hpp"

namespace bootstorm::vsphere {

namespace asio = boost::asio;

Session::Session(asio::any_io_executor executor, Transport& transport, SessionSettings settings)
    : transport_(transport),
      endpoint_(std::move(settings.endpoint)),
      username_(std::move(settings.username)),
      password_(std::move(settings.password)),
      default_timeout_(settings.default_timeout),
      login_mutex_(std::move(executor), 1) {
  log::register_secret(password_);
  log::register_secret(base64_encode(username_ + ":" + password_));
}

Error Session::credentials_rejected() const {
  return make_error(ErrorKind::auth,
                    "vCenter at " + endpoint_ + " rejected the credentials of " + username_ +
                        ": check VSPHERE_USER/VSPHERE_PASSWORD",
                    {}, 401);
}

asio::awaitable<Expected<void>> Session::login_at(Dialect dialect, bool* not_found) {
  Paths paths(dialect);
  http::Request req;
  req.method = "POST";
  req.target = paths.session();
  req.headers.emplace_back("Authorization", "Basic " + base64_encode(username_ + ":" + password_));
  req.headers.emplace_back("Accept", "application/json");
  req.timeout = default_timeout_;
  req.idempotent = false;
  if (limiter_) co_await limiter_->acquire();
  ++stats_.requests;
  auto resp = co_await transport_.send(std::move(req));
  if (!resp) {
    ++stats_.errors;
    Error e = resp.error();
    e.message = "login to vCenter at " + endpoint_ + " failed: " + e.message;
    co_return e;
  }
  if (resp->status == 404 && not_found) {
    *not_found = true;
    co_return make_error(ErrorKind::not_found, "no session service at " + endpoint_ + paths.session());
  }
  if (resp->status == 401 || resp->status == 403) {
    ++stats_.errors;
    co_return credentials_rejected();
  }
  if (resp->status != 200 && resp->status != 201) {
    ++stats_.errors;
    co_return to_error(parse_vcenter_error(resp->status, resp->body), "login (POST " + paths.session() + ")",
                       endpoint_);
  }
  auto json = nlohmann::json::parse(resp->body, nullptr, false);
  auto payload = paths.unwrap(json);
  if (!payload.is_string() || payload.get<std::string>().empty()) {
    ++stats_.errors;
    co_return make_error(ErrorKind::protocol,
                         "login to vCenter at " + endpoint_ + " returned no session token (POST " +
                             paths.session() + " answered HTTP " + std::to_string(resp->status) + ")",
                         "check that the endpoint is a vCenter Server");
  }
  token_ = payload.get<std::string>();
  log::register_secret(token_);
  paths_ = paths;
  dialect_known_ = true;
  ++generation_;
  ++logins_;
  co_return Expected<void>{};
}

asio::awaitable<Expected<void>> Session::login() {
  if (dialect_known_) co_return co_await login_at(paths_.dialect(), nullptr);
  bool not_found = false;
  auto r = co_await login_at(Dialect::api, &not_found);
  if (r || !not_found) co_return r;
  // vSphere before 7.0U2 has no /api: use the deprecated /rest dialect.
  spdlog::info("vCenter at {} has no /api/session (HTTP 404): using the legacy /rest API (vSphere 6.7-7.0U1)",
               endpoint_);
  co_return co_await login_at(Dialect::rest, nullptr);
}

asio::awaitable<Expected<void>> Session::relogin(std::uint64_t seen_generation) {
  auto permit = co_await async::acquire(login_mutex_);
  if (generation_ != seen_generation) co_return Expected<void>{};  // someone else already logged in again
  spdlog::info("vCenter session at {} expired (HTTP 401): logging in again", endpoint_);
  token_.clear();
  co_return co_await login();
}

asio::awaitable<Expected<http::Response>> Session::send_once(const std::string& method,
                                                             const std::string& target,
                                                             const std::string& body,
                                                             const CallOptions& options) {
  http::Request req;
  req.method = method;
  req.target = target;
  req.headers.emplace_back("vmware-api-session-id", token_);
  req.headers.emplace_back("Accept", "application/json");
  if (!body.empty()) req.headers.emplace_back("Content-Type", "application/json");
  req.body = body;
  req.timeout = options.timeout.value_or(default_timeout_);
  req.idempotent = options.idempotent;
  const async::CallPacing pacing = options;
  auto resp = co_await send_counted(transport_, std::move(req), limiter_, pacing, stats_);
  if (resp && resp->status >= 400) ++stats_.errors;
  co_return resp;
}

asio::awaitable<Expected<http::Response>> Session::call(std::string method, std::string target,
                                                        std::string body, CallOptions options) {
  if (token_.empty()) {
    auto r = co_await relogin(generation_);
    if (!r) co_return r.error();
  }
  const auto generation = generation_;
  auto resp = co_await send_once(method, target, body, options);
  if (!resp || resp->status != 401) co_return resp;
  auto r = co_await relogin(generation);
  if (!r) co_return r.error();
  ++stats_.retries;
  resp = co_await send_once(method, target, body, options);
  if (resp && resp->status == 401) co_return credentials_rejected();
  co_return resp;
}

asio::awaitable<void> Session::logout() {
  if (token_.empty()) co_return;
  http::Request req;
  req.method = "DELETE";
  req.target = paths_.session();
  req.headers.emplace_back("vmware-api-session-id", token_);
  req.timeout = std::min(default_timeout_, std::chrono::milliseconds(10000));
  ++stats_.requests;
  auto resp = co_await transport_.send(std::move(req));
  token_.clear();
  if (!resp) {
    ++stats_.errors;
    spdlog::warn("logout from vCenter at {} failed: {} (the session expires on its own)", endpoint_,
                 resp.error().what());
  } else if (resp->status >= 300 && resp->status != 401) {
    ++stats_.errors;
    spdlog::warn("logout from vCenter at {} answered HTTP {}", endpoint_, resp->status);
  }
}

}  // namespace bootstorm::vsphere

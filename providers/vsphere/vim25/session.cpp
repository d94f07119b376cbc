// One vim25 session (see session.hpp).
#include "providers/vsphere/vim25/session.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>

#include "common/async/sleep.hpp"
#include "common/log.hpp"
#include "protocol/vim25/decode.hpp"
#include "protocol/vim25/fault.hpp"
#include "protocol/vim25/messages.hpp"

namespace bootstorm::vsphere::vim25 {
namespace asio = boost::asio;

namespace {

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

}  // namespace

std::string lower_version(const std::string& a, std::string_view b) {
  auto parts = [](std::string_view v) {
    std::vector<long> out;
    std::size_t i = 0;
    while (i < v.size()) {
      long n = 0;
      bool digits = false;
      while (i < v.size() && std::isdigit(static_cast<unsigned char>(v[i]))) {
        n = n * 10 + (v[i++] - '0');
        digits = true;
      }
      if (!digits) break;
      out.push_back(n);
      if (i < v.size() && v[i] == '.') ++i;
    }
    return out;
  };
  if (a.empty()) return std::string(b);
  return parts(a) < parts(b) ? a : std::string(b);
}

Session::Session(asio::any_io_executor executor, Transport& transport, SessionSettings settings)
    : transport_(transport), settings_(std::move(settings)), login_mutex_(std::move(executor), 1) {
  log::register_secret(settings_.password);
}

std::string Session::what(const std::string& method) const {
  return "vim25 " + method + " at " + settings_.endpoint + std::string(kSdkPath);
}

void Session::take_cookie(const http::Response& response) {
  for (const auto& [name, value] : response.headers) {
    if (!iequals(name, "Set-Cookie")) continue;
    std::string_view v = value;
    if (v.rfind("vmware_soap_session=", 0) != 0) continue;
    cookie_ = std::string(v.substr(0, v.find(';')));
    log::register_secret(cookie_.substr(cookie_.find('=') + 1));
  }
}

asio::awaitable<Expected<SoapReply>> Session::send_once(const std::string& method, const std::string& element,
                                                        const CallOptions& options) {
  http::Request req("POST", std::string(kSdkPath), soap_envelope(element));
  req.headers.emplace_back("Content-Type", "text/xml; charset=utf-8");
  req.headers.emplace_back("SOAPAction",
                           "\"urn:vim25/" + (api_version_.empty() ? "5.5" : api_version_) + "\"");
  if (!cookie_.empty()) req.headers.emplace_back("Cookie", cookie_);
  req.timeout = options.timeout.value_or(settings_.default_timeout);
  req.idempotent = options.idempotent;
  req.cancel = options.cancel;
  const async::CallPacing pacing = options;
  auto resp = co_await send_counted(transport_, req, limiter_, pacing, stats_);
  // HTTP 503 comes from vCenter's reverse proxy before the call reached the service (busy, or restarting):
  // nothing was done, so any call, a clone included, is sent again after a backoff.
  int written = resp ? resp->attempts : 1;
  for (int attempt = 1; resp && resp->status == 503 && attempt < kBusyAttempts; ++attempt) {
    ++stats_.retries;
    spdlog::debug("{}: vCenter answered 503, sending it again (attempt {} of {})", what(method), attempt + 1,
                  kBusyAttempts);
    co_await async::sleep_for(std::chrono::milliseconds(200) * (1 << std::min(attempt - 1, 3)));
    resp = co_await send_counted(transport_, req, limiter_, pacing, stats_);
    if (resp) written += resp->attempts;
  }
  if (!resp) {
    Error e = resp.error();
    e.message = what(method) + " failed: " + e.message;
    co_return e;
  }
  take_cookie(*resp);
  auto reply = SoapReply::parse(resp->status, resp->body, what(method));
  if (!reply || reply->is_fault()) ++stats_.errors;
  if (reply) {
    reply->timing = {resp->written_at, resp->written_at_wall, resp->received_at};
    reply->attempts = std::max(1, written);
  }
  co_return reply;
}

asio::awaitable<Expected<ServiceContent>> Session::probe() {
  // Named arguments, not temporaries in the co_await expression (g++ 12 mis-copies those).
  const std::string method = "RetrieveServiceContent";
  const std::string element = retrieve_service_content();
  CallOptions options;
  options.idempotent = true;
  auto reply = co_await send_once(method, element, options);
  if (!reply) co_return reply.error();
  if (reply->is_fault()) co_return fault_error(reply->fault(), what("RetrieveServiceContent"));
  auto content = decode_service_content(reply->returnval());
  if (!content) co_return content.error();
  content_ = *content;
  have_content_ = true;
  api_version_ = lower_version(content_.about.api_version, kClientApiVersion);
  co_return *content;
}

asio::awaitable<Expected<void>> Session::login() {
  if (!have_content_) {
    auto content = co_await probe();
    if (!content) co_return content.error();
  }
  const std::string method = "Login";
  const std::string element = vim25::login(content_.session_manager, settings_.username, settings_.password);
  CallOptions options;
  options.keep_fault = true;
  auto reply = co_await send_once(method, element, options);
  if (!reply) co_return reply.error();
  if (reply->is_fault()) {
    Error e = fault_error(reply->fault(), what("Login") + " as " + settings_.username);
    co_return e;
  }
  auto session = decode_user_session(reply->returnval());
  if (!session) co_return session.error();
  if (cookie_.empty()) {
    co_return make_error(ErrorKind::protocol,
                         what("Login") + " answered without a vmware_soap_session cookie",
                         "the endpoint does not keep sessions as vCenter does; check platform.endpoint");
  }
  session_key_ = session->key;
  ++generation_;
  ++logins_;
  spdlog::debug("vim25 session at {}{} for {} (API {}, {})", settings_.endpoint, kSdkPath, session->user_name,
                api_version_, content_.about.full_name);
  co_return Expected<void>{};
}

asio::awaitable<Expected<void>> Session::relogin(std::uint64_t seen_generation) {
  auto permit = co_await async::acquire(login_mutex_);
  if (generation_ != seen_generation) co_return Expected<void>{};  // another call already logged in again
  if (logins_ > 0) {
    spdlog::info("vim25 session at {}{} is no longer authenticated: logging in again", settings_.endpoint,
                 kSdkPath);
  }
  cookie_.clear();
  co_return co_await login();
}

asio::awaitable<Expected<SoapReply>> Session::call(std::string method, std::string element,
                                                   CallOptions options) {
  if (cookie_.empty()) {
    auto r = co_await relogin(generation_);
    if (!r) co_return r.error();
  }
  const auto generation = generation_;
  auto reply = co_await send_once(method, element, options);
  if (reply && reply->is_fault() && reply->fault().is("NotAuthenticated")) {
    auto r = co_await relogin(generation);
    if (!r) co_return r.error();
    ++stats_.retries;
    reply = co_await send_once(method, element, options);
  }
  if (!reply) co_return reply;
  if (reply->is_fault() && !options.keep_fault) co_return fault_error(reply->fault(), what(method));
  co_return reply;
}

asio::awaitable<void> Session::logout() {
  if (cookie_.empty()) co_return;
  const std::string method = "Logout";
  const std::string element = vim25::logout(content_.session_manager);
  CallOptions options;
  options.timeout = std::min(settings_.default_timeout, std::chrono::milliseconds(10000));
  auto reply = co_await send_once(method, element, options);
  cookie_.clear();
  if (!reply) {
    spdlog::warn("{} (the session expires on its own)", reply.error().what());
  } else if (reply->is_fault()) {
    spdlog::warn("{} (the session expires on its own)", fault_error(reply->fault(), what("Logout")).what());
  }
}

}  // namespace bootstorm::vsphere::vim25

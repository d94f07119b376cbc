#pragma once
// One vim25 session over the provider's Transport: POST /sdk with SOAP envelopes.
//
// login(): RetrieveServiceContent (no session needed), then SessionManager.Login. vCenter answers with the
// session in the `vmware_soap_session` cookie, sent back on every later call. A NotAuthenticated fault (the
// session expired or was terminated) triggers one re-login, shared by every call that saw it, and one resend;
// a second NotAuthenticated is a clear auth failure. logout() ends the session. The password and the cookie
// are registered as log secrets.
//
// SOAPAction names the API version the client speaks: the server's own, capped at kClientApiVersion (the
// newest whose methods this client sends: InstantClone_Task is 6.7).
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <optional>
#include <string>

#include "common/async/semaphore.hpp"
#include "common/async/token_bucket.hpp"
#include "common/cancel.hpp"
#include "common/expected.hpp"
#include "protocol/vim25/soap.hpp"
#include "protocol/vim25/types.hpp"
#include "providers/api/provider.hpp"
#include "providers/vsphere/session_settings.hpp"
#include "providers/vsphere/transport.hpp"

namespace bootstorm::vsphere::vim25 {

inline constexpr std::string_view kClientApiVersion = "6.7";
inline constexpr std::string_view kSdkPath = "/sdk";
// Sends of one call while vCenter answers HTTP 503 (backoff 0.2, 0.4, 0.8, then 1.6 s: about 8 s in all). A
// vCenter shedding one request in five then fails a call about once in 400,000.
inline constexpr int kBusyAttempts = 8;

struct CallOptions : async::CallPacing {  // urgent / prepaid: how the call meets the session's limiter
  std::optional<std::chrono::milliseconds> timeout;  // nullopt: the session's default
  // Whether a resend after a lost connection is safe (reads are; a clone or power-on is not).
  bool idempotent = false;
  // Hand a fault back as a SoapReply (is_fault()) instead of an Error, for callers that act on its type.
  bool keep_fault = false;
  // Ctrl-C: the call ends at once (ErrorKind::cancelled). Only for calls that change nothing.
  std::optional<CancelSignal> cancel;
};

class Session {
 public:
  Session(boost::asio::any_io_executor executor, Transport& transport, SessionSettings settings);

  // RetrieveServiceContent and Login. Errors name the endpoint and what to fix (wrong password, no /sdk).
  boost::asio::awaitable<Expected<void>> login();
  // RetrieveServiceContent alone: whether `endpoint` answers vim25 at /sdk (platform.api: auto).
  boost::asio::awaitable<Expected<ServiceContent>> probe();
  // One call of `method` (the element's name, for errors) with the element from messages.hpp.
  boost::asio::awaitable<Expected<SoapReply>> call(std::string method, std::string element,
                                                   CallOptions options = {});
  // Logout (best effort, never fails); the session needs login() again afterwards.
  boost::asio::awaitable<void> logout();

  bool logged_in() const { return !cookie_.empty(); }
  const ServiceContent& service_content() const { return content_; }
  const std::string& endpoint() const { return settings_.endpoint; }
  const std::string& username() const { return settings_.username; }
  // The logged-in session's key (UserSession.key): AuthorizationManager asks which session it is about.
  const std::string& session_key() const { return session_key_; }
  // The API version in SOAPAction ("" before the first RetrieveServiceContent).
  const std::string& api_version() const { return api_version_; }

  void set_limiter(async::RateLimiter* limiter) { limiter_ = limiter; }
  async::RateLimiter* limiter() const { return limiter_; }
  http::ApiStats stats() const { return stats_; }
  // Why vCenter is gone (Transport::gone), nullopt while it answers.
  std::optional<std::string> gone() const { return transport_.gone(); }
  // A task followed to its end, and how long it was seen waiting in vCenter's queue (info.state "queued").
  void count_task(bool queued, double queued_s) {
    ++stats_.tasks;
    if (queued) {
      ++stats_.tasks_queued;
      stats_.task_queue_s += queued_s;
    }
  }
  std::uint64_t logins() const { return logins_; }
  // A call named for messages: "vim25 <method> at <endpoint>/sdk".
  std::string what(const std::string& method) const;

 private:
  boost::asio::awaitable<Expected<SoapReply>> send_once(const std::string& method, const std::string& element,
                                                        const CallOptions& options);
  boost::asio::awaitable<Expected<void>> relogin(std::uint64_t seen_generation);
  void take_cookie(const http::Response& response);

  Transport& transport_;
  SessionSettings settings_;
  ServiceContent content_;
  bool have_content_ = false;
  std::string api_version_;
  std::string cookie_;  // `vmware_soap_session="..."`, as the server set it
  std::string session_key_;
  std::uint64_t generation_ = 0;
  std::uint64_t logins_ = 0;
  async::AsyncSemaphore login_mutex_;
  async::RateLimiter* limiter_ = nullptr;
  http::ApiStats stats_;
};

// "6.7.3" vs "6.7": the lower of two dotted versions.
std::string lower_version(const std::string& a, std::string_view b);

}  // namespace bootstorm::vsphere::vim25

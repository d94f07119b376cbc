#pragma once
// One vCenter session for all of a provider's requests.
//
// login(): POST /api/session with HTTP Basic auth (201, the token as a bare JSON string); when vCenter
// answers 404 there (vSphere 6.7 – 7.0U1) it falls back to the legacy POST /rest/com/vmware/cis/session
// ({"value": token}) and switches the dialect of every later path. The token travels in the
// vmware-api-session-id header. A 401 on any call triggers one re-login (shared by every request that saw the
// 401 with the same token) and one resend; a second 401 is a clear auth failure. logout() deletes the
// session. The password and the token are registered as log secrets.
#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "common/async/semaphore.hpp"
#include "common/async/token_bucket.hpp"
#include "common/base64.hpp"
#include "common/expected.hpp"
#include "providers/api/provider.hpp"
#include "providers/vsphere/dialect.hpp"
#include "providers/vsphere/session_settings.hpp"
#include "providers/vsphere/transport.hpp"

namespace bootstorm::vsphere {

// urgent / prepaid (async::CallPacing): while observe's limiter is active, the storm's power starts are
// urgent, and observe's probe scheduler takes each probe's token before it spawns it (prepaid).
struct CallOptions : async::CallPacing {
  std::optional<bool> idempotent;                    // nullopt: from the method
  std::optional<std::chrono::milliseconds> timeout;  // nullopt: the session's default
};

class Session {
 public:
  Session(boost::asio::any_io_executor executor, Transport& transport, SessionSettings settings);

  boost::asio::awaitable<Expected<void>> login();
  // Sends with the session header; handles one re-login on 401. Returns any other status as a Response.
  boost::asio::awaitable<Expected<http::Response>> call(std::string method, std::string target,
                                                        std::string body = {}, CallOptions options = {});
  // DELETE the session (best effort, never throws); the session is unusable afterwards until login().
  boost::asio::awaitable<void> logout();

  bool logged_in() const { return !token_.empty(); }
  const Paths& paths() const { return paths_; }
  const std::string& endpoint() const { return endpoint_; }
  const std::string& username() const { return username_; }

  // The limiter every call waits on (nullptr: none). Set by observe() for its duration.
  void set_limiter(async::RateLimiter* limiter) { limiter_ = limiter; }
  async::RateLimiter* limiter() const { return limiter_; }

  http::ApiStats stats() const { return stats_; }
  void count_retry() { ++stats_.retries; }
  std::uint64_t logins() const { return logins_; }

  Error credentials_rejected() const;

 private:
  boost::asio::awaitable<Expected<http::Response>> send_once(const std::string& method,
                                                             const std::string& target,
                                                             const std::string& body,
                                                             const CallOptions& options);
  boost::asio::awaitable<Expected<void>> login_at(Dialect dialect, bool* not_found);
  boost::asio::awaitable<Expected<void>> relogin(std::uint64_t seen_generation);

  Transport& transport_;
  std::string endpoint_;
  std::string username_;
  std::string password_;
  std::chrono::milliseconds default_timeout_;
  Paths paths_{Dialect::api};
  bool dialect_known_ = false;
  std::string token_;
  std::uint64_t generation_ = 0;  // bumped at every successful login
  std::uint64_t logins_ = 0;
  async::AsyncSemaphore login_mutex_;
  async::RateLimiter* limiter_ = nullptr;
  http::ApiStats stats_;
};

// RFC 4648 base64 (for the Basic authorization header).
using bootstorm::base64_encode;

}  // namespace bootstorm::vsphere

// vCenter sessions: POST /api/session with Basic auth creates one (at most `max_sessions_per_user` a user),
// the vmware-api-session-id header names it, and it expires after `session_idle_timeout_s` unused.
#include <fmt/format.h>

#include "common/base64.hpp"
#include "simulator/vcenter/detail/vapi_responses.hpp"
#include "simulator/vcenter/detail/vcenter_front_impl.hpp"

namespace bootstorm::sim::vcenter {

using http::ServerRequest;
using http::ServerResponse;

std::string VcenterFront::Impl::new_token() {
  return fmt::format("{:016x}{:016x}", token_rng(), token_rng());
}

// The session of the request, or nullopt (expired/unknown/missing).
const Session* VcenterFront::Impl::session_of(const ServerRequest& req) {
  auto token = req.header("vmware-api-session-id");
  if (!token) return nullptr;
  auto it = sessions.find(std::string(*token));
  if (it == sessions.end()) return nullptr;
  const double now = lab.now();
  if (now - it->second.last_used > config().session_idle_timeout_s) {
    sessions.erase(it);
    return nullptr;
  }
  it->second.last_used = now;
  return &it->second;
}

void VcenterFront::Impl::apply_session_expiry_fault() {
  model::Faults& faults = lab.faults();
  if (!faults.expire_sessions) return;
  faults.expire_sessions = false;
  stats.faults_injected += sessions.size();
  for (const auto& [key, session] : sessions) sdk_end_session(key);
  sessions.clear();
}

ServerResponse VcenterFront::Impl::unauthenticated() {
  return api_error(401, "UNAUTHENTICATED", "com.vmware.vapi.endpoint.method.authentication.required",
                   "Authentication required.");
}

ServerResponse VcenterFront::Impl::create_session(const ServerRequest& req) {
  auto auth = req.header("Authorization");
  if (!auth || auth->size() < 6 || auth->substr(0, 6) != "Basic ") return unauthenticated();
  const std::string decoded = base64_decode(auth->substr(6)).value_or("");
  const auto colon = decoded.find(':');
  if (colon == std::string::npos) return unauthenticated();
  const std::string user = decoded.substr(0, colon);
  const std::string password = decoded.substr(colon + 1);
  if (!authenticate(user, password)) return unauthenticated();
  // Drop idle sessions before counting against the cap.
  const double now = lab.now();
  int of_user = 0;
  for (auto it = sessions.begin(); it != sessions.end();) {
    if (now - it->second.last_used > config().session_idle_timeout_s) {
      it = sessions.erase(it);
      continue;
    }
    if (it->second.user == user) ++of_user;
    ++it;
  }
  if (of_user >= config().max_sessions_per_user) {
    return api_error(503, "SERVICE_UNAVAILABLE", "com.vmware.vapi.endpoint.session.limit",
                     fmt::format("The maximum number of sessions ({}) for user {} has been reached.",
                                 config().max_sessions_per_user, user));
  }
  const std::string token = new_token();
  sessions.emplace(token, Session{user, now, now});
  ++stats.sessions_created;
  return json_response(201, json(token));
}

}  // namespace bootstorm::sim::vcenter

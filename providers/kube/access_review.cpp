#include "providers/kube/access_review.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <nlohmann/json.hpp>

#include "protocol/kube/status_error.hpp"

namespace bootstorm::kube {

using nlohmann::json;

std::string Access::what() const {
  std::string r = resource + (subresource.empty() ? "" : "/" + subresource);
  return verb + " " + r + (group.empty() ? "" : "." + group) + (ns.empty() ? "" : " in " + ns);
}

boost::asio::awaitable<api::CheckResult> review_access(KubeApi& api, const std::vector<Access>& needed,
                                                       const std::string& advice) {
  const char* const name = "permissions";
  const char* const later = "a missing permission will show at the first call it refuses";
  std::vector<std::string> denied;
  for (const auto& a : needed) {
    json attributes = {{"verb", a.verb}, {"group", a.group}, {"resource", a.resource}};
    if (!a.subresource.empty()) attributes["subresource"] = a.subresource;
    if (!a.ns.empty()) attributes["namespace"] = a.ns;
    const json review = {{"apiVersion", "authorization.k8s.io/v1"},
                         {"kind", "SelfSubjectAccessReview"},
                         {"spec", {{"resourceAttributes", attributes}}}};
    ApiCall call{"POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", review.dump()};
    auto resp = co_await api.call(std::move(call), "asking whether this user may " + a.what());
    if (!resp || resp->status == 404 || resp->status == 403) {
      co_return api::check_result(name, api::CheckStatus::unknown,
                                  "the API server did not answer SelfSubjectAccessReview (" +
                                      (resp ? "HTTP " + std::to_string(resp->status) : resp.error().message) +
                                      ")",
                                  later);
    }
    if (resp->status != 201 && resp->status != 200) {
      co_return api::check_result(name, api::CheckStatus::unknown,
                                  status_error(resp->status, resp->body, "SelfSubjectAccessReview").message,
                                  later);
    }
    const json answer = json::parse(resp->body, nullptr, false);
    const bool allowed = answer.is_object() && answer.contains("status") && answer["status"].is_object() &&
                         answer["status"].value("allowed", false);
    if (!allowed) denied.push_back(a.what());
  }
  if (!denied.empty()) {
    co_return api::check_result(name, api::CheckStatus::fail,
                                fmt::format("this user may not {}", fmt::join(denied, "; ")), advice);
  }
  co_return api::check_result(name, api::CheckStatus::pass,
                              fmt::format("all {} verbs the run uses are allowed", needed.size()));
}

}  // namespace bootstorm::kube

#include "providers/api/check.hpp"

#include <algorithm>

namespace bootstorm::api {

std::string_view to_string(CheckStatus status) {
  switch (status) {
    case CheckStatus::pass:
      return "pass";
    case CheckStatus::warn:
      return "warn";
    case CheckStatus::fail:
      return "fail";
    case CheckStatus::unknown:
      return "unknown";
  }
  return "unknown";
}

CheckResult check_result(std::string name, CheckStatus status, std::string finding, std::string advice) {
  CheckResult r;
  r.name = std::move(name);
  r.status = status;
  r.finding = std::move(finding);
  r.advice = std::move(advice);
  return r;
}

CheckResult failed_check(std::string name, const Error& error) {
  return check_result(std::move(name), CheckStatus::fail, error.message, error.hint);
}

CheckStatus worst(const std::vector<CheckResult>& results) {
  auto rank = [](CheckStatus s) {
    switch (s) {
      case CheckStatus::pass:
        return 0;
      case CheckStatus::unknown:
        return 1;
      case CheckStatus::warn:
        return 2;
      case CheckStatus::fail:
        return 3;
    }
    return 3;
  };
  CheckStatus out = CheckStatus::pass;
  for (const auto& r : results)
    if (rank(r.status) > rank(out)) out = r.status;
  return out;
}

}  // namespace bootstorm::api

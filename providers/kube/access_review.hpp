#pragma once
// Whether this user may do what a run will do, asked before it does anything: one SelfSubjectAccessReview
// per verb (the API server answers them without storing anything), summed up as the "permissions" check of
// `bootstorm check`. Shared by the KubeVirt provider and the migration's own checks.
#include <boost/asio/awaitable.hpp>
#include <string>
#include <vector>

#include "protocol/kube/kube_api.hpp"
#include "providers/api/check.hpp"

namespace bootstorm::kube {

// One verb on one resource, as a SelfSubjectAccessReview asks it; `ns` empty for a cluster-scoped resource.
struct Access {
  std::string verb, group, resource, subresource, ns;
  // "create virtualmachines.kubevirt.io in desktops"
  std::string what() const;
};

// "permissions": pass when every verb is allowed; fail naming each one denied, with `advice`; unknown when
// the API server does not answer access reviews (the first call it refuses will say so instead).
boost::asio::awaitable<api::CheckResult> review_access(KubeApi& api, const std::vector<Access>& needed,
                                                       const std::string& advice);

}  // namespace bootstorm::kube

// The migration's own checks (`bootstorm migrate` before it creates anything): the destination's API and
// Forklift on it, the namespaces, every verb the migration and its cleanup use (SelfSubjectAccessReview),
// and what only Forklift can answer (whether the cluster reaches the vCenter). Read-only. The storms a
// migration runs (fromStorm, --then-storm) ask their own platform's checks.
#include <fmt/format.h>

#include "orchestrator/migrate/detail/migrate_internal.hpp"
#include "orchestrator/migrate/forklift_objects.hpp"
#include "protocol/kube/object_calls.hpp"
#include "providers/kube/access_review.hpp"

namespace bootstorm::migrate {
namespace asio = boost::asio;

namespace {

constexpr const char* kForklift = "forklift.konveyor.io";

// Every verb the migration (set-up, run, labelling) and its cleanup use.
std::vector<kube::Access> migration_verbs(const MigrationPlan& plan, bool creates_namespaces) {
  const std::string& f = plan.destination.namespace_;
  const std::string& t = plan.target_namespace;
  std::vector<kube::Access> needed = {
      {"create", "", "secrets", "", f},
      {"list", "", "secrets", "", f},
      {"delete", "", "secrets", "", f},
  };
  for (const char* plural : {"providers", "networkmaps", "storagemaps", "plans", "migrations"}) {
    for (const char* verb : {"create", "get", "list", "watch", "delete"})
      needed.push_back({verb, kForklift, plural, "", f});
  }
  needed.push_back({"patch", kForklift, "migrations", "", f});  // cancel on Ctrl-C
  for (const char* verb : {"get", "list", "patch", "delete"})
    needed.push_back({verb, "kubevirt.io", "virtualmachines", "", t});
  if (creates_namespaces) needed.push_back({"create", "", "namespaces", "", ""});
  return needed;
}

}  // namespace

asio::awaitable<std::vector<api::CheckResult>> check_migration(kube::KubeApi& api, const MigrationPlan& plan,
                                                               const ResolvedEndpoints& ep) {
  std::vector<api::CheckResult> out;
  const kube::ConnectProbe probe{"/apis/forklift.konveyor.io/v1beta1",
                                 "the Forklift API (forklift.konveyor.io/v1beta1)",
                                 "install the Migration Toolkit for Virtualization (Forklift) operator, or "
                                 "check that the context points at the right cluster"};
  auto connected = co_await api.connect(probe);
  if (!connected && connected.error().kind != ErrorKind::not_found) {
    out.push_back(api::failed_check("API", connected.error()));
    co_return out;
  }
  out.push_back(api::check_result("API", api::CheckStatus::pass, ep.kube.server + " answers"));
  if (!connected) {
    out.push_back(api::failed_check("Forklift", connected.error()));
  } else {
    out.push_back(api::check_result("Forklift", api::CheckStatus::pass,
                                    "forklift.konveyor.io/v1beta1 is served (MTV is installed)"));
  }

  std::vector<std::string> existing, created;
  for (const std::string& ns : {plan.destination.namespace_, plan.target_namespace}) {
    auto got = co_await kube::get_object(api, namespace_path(ns), "reading namespace " + ns);
    if (!got) {
      out.push_back(api::failed_check("namespaces", got.error()));
      co_return out;
    }
    (got->has_value() ? existing : created).push_back(ns);
  }
  std::string finding;
  for (const auto& ns : existing) finding += (finding.empty() ? "" : "; ") + ns + " exists";
  for (const auto& ns : created) finding += (finding.empty() ? "" : "; ") + ns + " will be created";
  out.push_back(api::check_result("namespaces", api::CheckStatus::pass, finding));

  const std::string advice = "grant them to the kubeconfig's user (Forklift's objects in " +
                             plan.destination.namespace_ + ", virtualmachines in " + plan.target_namespace +
                             ")";
  const std::vector<kube::Access> needed = migration_verbs(plan, !created.empty());
  out.push_back(co_await kube::review_access(api, needed, advice));

  out.push_back(api::check_result(
      "vCenter from the cluster", api::CheckStatus::unknown,
      "Forklift connects to " + vsphere_sdk_url(ep.vcenter_url) + " from the cluster, not from here",
      "the source Provider's Ready condition answers it during the set-up (its reason names what failed)"));
  co_return out;
}

}  // namespace bootstorm::migrate

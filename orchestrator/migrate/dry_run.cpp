// `bootstorm migrate --dry-run` (see migrate.hpp): every call a migration would make, in order, with the
// objects it would create, built by the same forklift_objects functions as a real run. No network.
#include <fmt/format.h>

#include <filesystem>

#include "orchestrator/engine/journal_fold.hpp"
#include "orchestrator/engine/naming.hpp"
#include "orchestrator/migrate/detail/migrate_internal.hpp"
#include "orchestrator/migrate/forklift_objects.hpp"
#include "orchestrator/migrate/migrate.hpp"

namespace bootstorm::migrate {
using nlohmann::json;

std::vector<std::string> dry_run_calls(const MigrationPlan& p, const std::string& run_id) {
  std::vector<std::string> calls;
  const std::string ns = p.destination.namespace_;
  const std::string vcenter = p.source.endpoint.rfind("https://", 0) == 0
                                  ? p.source.endpoint
                                  : "https://<" + p.source.endpoint + " vCenter>";
  const std::string sdk =
      p.source.endpoint.rfind("https://", 0) == 0 ? vsphere_sdk_url(vcenter) : vcenter + "/sdk";
  std::vector<std::string> names = p.vms.names;
  if (p.vms.from_storm) {
    int total = 0;
    for (auto& pl : p.vms.from_storm->placement) total += pl.vms;
    calls.push_back(fmt::format(
        "vSphere storm {}-vsphere on {}: clone {} VMs from {} ({}), power them on at once, "
        "keep them (cleanup: never)",
        p.name, p.source.endpoint, total, p.vms.from_storm->golden.vm, p.vms.from_storm->golden.clone));
    for (int i = 1; i <= total; ++i)
      names.push_back(engine::vm_name(run_id, engine::scenario_slug(kStormScenario), i));
  }
  if (!p.vms.from_run.empty()) {
    auto contents = engine::read_journal(std::filesystem::path(p.vms.from_run) / "journal.jsonl");
    if (contents) {
      for (auto& h : contents->undeleted) names.push_back(h.name);
    } else {
      calls.push_back("(cannot read " + p.vms.from_run + ": " + contents.error().what() + ")");
    }
  }
  calls.push_back("GET /apis/forklift.konveyor.io/v1beta1");
  calls.push_back("GET " + namespace_path(ns) + " (POST /api/v1/namespaces when missing)");
  calls.push_back("GET " + namespace_path(p.target_namespace) + " (POST /api/v1/namespaces when missing)");
  calls.push_back("GET " + forklift_collection(ns, "providers") + " (reuse a vsphere Provider with url " +
                  sdk + ")");
  SecretBuild sb;
  sb.name = object_name(run_id, "vsphere");
  sb.namespace_ = ns;
  sb.run_id = run_id;
  sb.user = "<user>";
  sb.password = "<password>";
  sb.insecure_skip_verify = p.source.tls.insecure_skip_verify;
  sb.url = sdk;
  json secret = build_secret(sb);
  secret["data"]["password"] = "<redacted>";
  calls.push_back("POST " + secrets_path(ns) + " " + secret.dump());
  ProviderBuild pb{sb.name, ns, run_id, "vsphere", sdk, sb.name, ns};
  calls.push_back("POST " + forklift_collection(ns, "providers") + " " + build_provider(pb).dump());
  ProviderBuild hb{object_name(run_id, "host"), ns, run_id, "openshift", "", "", ""};
  calls.push_back("POST " + forklift_collection(ns, "providers") + " " + build_provider(hb).dump() +
                  " (only when no host Provider exists)");
  calls.push_back("WATCH " + forklift_collection(ns, "providers") + " until both Providers are Ready");
  const std::string name = object_name(run_id, p.name.substr(0, 30));
  const Ref src{pb.name, ns}, dst{hb.name, ns};
  calls.push_back("POST " + forklift_collection(ns, "networkmaps") + " " +
                  build_network_map(name, ns, run_id, src, dst, p.network_map).dump());
  calls.push_back("POST " + forklift_collection(ns, "storagemaps") + " " +
                  build_storage_map(name, ns, run_id, src, dst, p.storage_map).dump());
  calls.push_back("POST " + forklift_collection(ns, "plans") + " " +
                  build_plan(plan_build(p, name, run_id, src, dst, names)).dump());
  calls.push_back("WATCH " + forklift_collection(ns, "plans") + " until the Plan is Ready");
  calls.push_back("POST " + forklift_collection(ns, "migrations") + " " +
                  build_migration(name, ns, run_id, Ref{name, ns}).dump());
  calls.push_back("WATCH " + forklift_collection(ns, "plans") + "?fieldSelector=metadata.name%3D" + name +
                  " until every VM is done");
  calls.push_back("PATCH " + vms_path(p.target_namespace) + "/<each migrated VM> (label " + kRunLabel + "=" +
                  run_id + ")");
  return calls;
}

}  // namespace bootstorm::migrate

// Endpoint resolution, the run directory's journal and outputs (migrate.hpp, detail/migrate_internal.hpp).
#include <fstream>
#include <map>
#include <sstream>

#include "common/log.hpp"
#include "orchestrator/engine/journal.hpp"
#include "orchestrator/engine/platform.hpp"
#include "orchestrator/migrate/detail/migrate_internal.hpp"
#include "orchestrator/migrate/migrate.hpp"

namespace bootstorm::migrate {
using nlohmann::json;

namespace {

Expected<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(ErrorKind::not_found, "cannot read " + path);
  std::ostringstream b;
  b << in.rdbuf();
  return b.str();
}

Expected<void> write_file(const std::filesystem::path& file, const std::string& text) {
  std::filesystem::path tmp = file;
  tmp += ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return make_error(ErrorKind::io, "cannot write " + tmp.string());
    out << text;
    if (!out) return make_error(ErrorKind::io, "cannot write " + tmp.string());
  }
  std::error_code ec;
  std::filesystem::rename(tmp, file, ec);
  if (ec) return make_error(ErrorKind::io, "cannot write " + file.string() + ": " + ec.message());
  return {};
}

}  // namespace

Expected<ResolvedEndpoints> resolve_endpoints(const MigrationPlan& plan, const engine::EngineHooks& hooks,
                                              boost::asio::any_io_executor executor) {
  ResolvedEndpoints r;
  const std::string& src = plan.source.endpoint;
  engine::LabEndpoints lab;
  const bool simulated = engine::is_simulated_endpoint(src);
  if (simulated) {
    auto opened = engine::open_lab(src, plan.source.lab, hooks, executor);
    if (!opened) return opened.error();
    lab = opened->endpoints;
    r.lab = opened->name;
    if (opened->embedded) r.shared_lab = engine::EmbeddedLab{opened->endpoints, opened->keepalive};
    if (lab.ca_pem.empty() && !lab.ca_file.empty()) {
      auto ca = read_file(lab.ca_file);
      if (!ca) return ca.error();
      lab.ca_pem = *ca;
    }
    r.vcenter_url = lab.vcenter_url;
    r.vcenter_user = lab.username;
    r.vcenter_password = lab.password;
    r.vcenter_ca_pem = lab.ca_pem;
  } else {
    // A real vCenter: credentials resolved exactly as a vSphere StormPlan resolves them.
    plan::StormPlan sp;
    sp.name = plan.name;
    sp.platform.kind = "vsphere";
    sp.platform.endpoint = src;
    sp.platform.credentials = plan.source.credentials;
    sp.platform.tls = plan.source.tls;
    auto resolved = engine::resolve_platform(sp, "", false, hooks, executor);
    if (!resolved) return resolved.error();
    r.vcenter_url = src;
    r.vcenter_user = resolved->config.username;
    r.vcenter_password = resolved->config.password;
    if (!plan.source.tls.ca_file.empty()) {
      auto ca = read_file(plan.source.tls.ca_file);
      if (!ca) return make_error(ErrorKind::invalid_input, "source.tls.caFile: " + ca.error().message);
      r.vcenter_ca_pem = *ca;
    }
  }
  r.vcenter_insecure = plan.source.tls.insecure_skip_verify;
  log::register_secret(r.vcenter_password);

  api::ProviderConfig kc;
  kc.kind = "kubevirt";
  const std::string& dst = plan.destination.endpoint;
  if (engine::is_simulated_endpoint(dst)) {
    if (!simulated)
      return make_error(ErrorKind::invalid_input,
                        "destination " + dst + " is a lab but the source is " + src);
    if (lab.kube_url.empty()) return make_error(ErrorKind::invalid_input, "the lab has no Kubernetes front");
    kc.endpoint = lab.kube_url;
    kc.password = lab.kube_token;
    kc.ca_data = lab.ca_pem;
  } else {
    kc.endpoint = dst;
    kc.kubeconfig = plan.destination.credentials.kubeconfig;
    kc.context = plan.destination.credentials.context;
  }
  if (!plan.destination.tls.ca_file.empty()) kc.ca_file = plan.destination.tls.ca_file;
  kc.insecure_skip_verify = plan.destination.tls.insecure_skip_verify;
  auto kube = kube::resolve_client_config(kc);
  if (!kube) return kube.error();
  r.kube = *kube;
  return r;
}

json run_started_payload(const MigrationPlan& plan, const MigrationRecord& record,
                         const std::string& plan_yaml) {
  return json{{"runId", record.run_id},
              {"plan", plan.name},
              {"kind", kMigrationPlanKind},
              {"platform", "forklift"},
              {"simulated", record.simulated},
              {"lab", record.lab},
              {"source", record.source_url},
              {"destination", record.destination},
              {"forkliftNamespace", plan.destination.namespace_},
              {"targetNamespace", plan.target_namespace},
              {"warm", plan.warm},
              {"planYaml", plan_yaml}};
}

Expected<MigrationRecord> read_migration_journal(const std::filesystem::path& journal_file) {
  std::ifstream in(journal_file);
  if (!in) return make_error(ErrorKind::not_found, "cannot read " + journal_file.string());
  MigrationRecord r;
  std::vector<std::string> order;
  std::map<std::string, VmMigrationRecord> vms;
  std::string line;
  bool started = false;
  while (std::getline(in, line)) {
    json e = json::parse(line, nullptr, false);
    if (!e.is_object()) continue;  // a truncated last line after a crash
    const std::string type = e.value("type", "");
    if (type == "run_started") {
      started = true;
      r.run_id = e.value("runId", "");
      r.plan_name = e.value("plan", "");
      r.simulated = e.value("simulated", false);
      r.lab = e.value("lab", "");
      r.source_url = e.value("source", "");
      r.destination = e.value("destination", "");
      r.forklift_namespace = e.value("forkliftNamespace", "");
      r.target_namespace = e.value("targetNamespace", "");
      r.warm = e.value("warm", false);
      r.started_at = e.value("t", "");
    } else if (type == "vms_selected" && e.contains("vms") && e["vms"].is_array()) {
      for (const auto& n : e["vms"]) {
        if (!n.is_string() || vms.count(n.get<std::string>())) continue;
        order.push_back(n.get<std::string>());
        vms[order.back()].name = order.back();
      }
    } else if (type == "migration_vm") {
      VmMigrationRecord v = vm_record_from_json(e);
      if (!vms.count(v.name)) order.push_back(v.name);
      vms[v.name] = v;
    } else if (type == "vm_migrated") {
      if (auto it = vms.find(e.value("vm", "")); it != vms.end())
        it->second.target_name = e.value("name", "");
    } else if (type == "migration_window") {
      if (e.contains("startedS") && e["startedS"].is_number())
        r.migration_started_s = e["startedS"].get<double>();
      if (e.contains("endedS") && e["endedS"].is_number()) r.migration_ended_s = e["endedS"].get<double>();
    } else if (type == "run_ended") {
      r.outcome = e.value("outcome", "");
    }
  }
  if (!started)
    return make_error(ErrorKind::invalid_input, journal_file.string() + " has no run_started event");
  for (const auto& n : order) r.vms.push_back(vms[n]);
  return r;
}

Expected<void> write_migration_outputs(const std::filesystem::path& run_dir, const MigrationRecord& record) {
  if (auto w = write_file(run_dir / "migration.md", render_migration_md(record)); !w) return w;
  if (auto w = write_file(run_dir / "migration.json", render_migration_json(record)); !w) return w;
  if (auto w = write_file(run_dir / "migration-vms.csv", render_migration_csv(record)); !w) return w;
  return {};
}

bool is_migration_run(const std::filesystem::path& run_dir) {
  auto text = read_file((run_dir / "plan.yaml").string());
  if (text && is_migration_plan_text(*text)) return true;
  std::ifstream in(run_dir / "journal.jsonl");
  std::string first;
  if (!std::getline(in, first)) return false;
  json e = json::parse(first, nullptr, false);
  return e.is_object() && e.value("kind", "") == kMigrationPlanKind;
}

}  // namespace bootstorm::migrate

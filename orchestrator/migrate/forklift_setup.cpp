// The Forklift objects of a migration (see detail/forklift_migration.hpp): the namespaces, the vsphere and
// host Providers (an existing one for the same vCenter is reused), the NetworkMap, StorageMap and Plan, each
// journaled when created and waited on until Ready.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <string>
#include <utility>
#include <vector>

#include "orchestrator/migrate/detail/forklift_migration.hpp"
#include "orchestrator/migrate/forklift_objects.hpp"
#include "protocol/http/types.hpp"
#include "protocol/kube/object_calls.hpp"

namespace bootstorm::migrate {
namespace asio = boost::asio;
using asio::awaitable;
using nlohmann::json;

namespace {

constexpr auto kBlockedGrace = std::chrono::seconds(5);

}  // namespace

PlanBuild plan_build(const MigrationPlan& plan, const std::string& name, const std::string& run_id,
                     const Ref& source, const Ref& destination, const std::vector<std::string>& vm_names) {
  const std::string& ns = plan.destination.namespace_;
  PlanBuild b;
  b.name = name;
  b.namespace_ = ns;
  b.run_id = run_id;
  b.source = source;
  b.destination = destination;
  b.network_map = b.storage_map = {name, ns};
  b.target_namespace = plan.target_namespace;
  b.warm = plan.warm;
  b.vm_names = vm_names;
  b.description = "bootstorm run " + run_id + " (" + plan.name + ")";
  return b;
}

awaitable<Expected<std::string>> ForkliftMigration::set_up_plan(std::chrono::milliseconds ready_timeout) {
  const std::string ns = plan_.destination.namespace_;
  const kube::ConnectProbe probe{
      "/apis/forklift.konveyor.io/v1beta1", "the Forklift API (forklift.konveyor.io/v1beta1)",
      "install the Migration Toolkit for Virtualization (Forklift) operator, or check that the context "
      "points "
      "at the right cluster"};  // named: see forklift_migration.cpp
  auto connected = co_await api_->connect(probe);
  if (!connected) co_return connected.error();
  std::vector<std::string> namespaces;
  namespaces.push_back(ns);
  namespaces.push_back(plan_.target_namespace);
  for (const std::string& n : namespaces) {
    auto ok = co_await ensure_namespace(n);
    if (!ok) co_return ok.error();
  }

  // Providers: reuse one for the same vCenter; otherwise Secret + Provider of this run.
  const std::string sdk_url = vsphere_sdk_url(ep_.vcenter_url);
  auto providers = co_await kube::list_objects(*api_, forklift_collection(ns, "providers"), "",
                                               "listing Providers in " + ns);
  if (!providers) co_return providers.error();
  std::string source_provider, host_provider;
  for (const auto& p : providers->items) {
    const json spec = p.value("spec", json::object());
    const std::string name = p["metadata"].value("name", "");
    if (spec.value("type", "") == "vsphere" && spec.value("url", "") == sdk_url && source_provider.empty())
      source_provider = name;
    if (spec.value("type", "") == "openshift" && spec.value("url", "").empty() && host_provider.empty())
      host_provider = name;
  }
  if (!source_provider.empty()) {
    out_ << fmt::format("reusing Provider {}/{} for {}\n", ns, source_provider, sdk_url);
    journal("object_reused", {{"kind", "Provider"}, {"namespace", ns}, {"name", source_provider}});
  } else {
    SecretBuild sb;
    sb.name = object_name(run_id_, "vsphere");
    sb.namespace_ = ns;
    sb.run_id = run_id_;
    sb.user = ep_.vcenter_user;
    sb.password = ep_.vcenter_password;
    sb.ca_pem = ep_.vcenter_ca_pem;
    sb.insecure_skip_verify = ep_.vcenter_insecure;
    sb.url = sdk_url;
    auto s = co_await create_object("Secret", secrets_path(ns), build_secret(sb));
    if (!s) co_return s.error();
    ProviderBuild pb;
    pb.name = object_name(run_id_, "vsphere");
    pb.namespace_ = ns;
    pb.run_id = run_id_;
    pb.type = "vsphere";
    pb.url = sdk_url;
    pb.secret_name = sb.name;
    pb.secret_namespace = ns;
    auto p = co_await create_object("Provider", forklift_collection(ns, "providers"), build_provider(pb));
    if (!p) co_return p.error();
    source_provider = pb.name;
  }
  if (!host_provider.empty()) {
    journal("object_reused", {{"kind", "Provider"}, {"namespace", ns}, {"name", host_provider}});
  } else {
    ProviderBuild hb;
    hb.name = object_name(run_id_, "host");
    hb.namespace_ = ns;
    hb.run_id = run_id_;
    hb.type = "openshift";
    auto p = co_await create_object("Provider", forklift_collection(ns, "providers"), build_provider(hb));
    if (!p) co_return p.error();
    host_provider = hb.name;
  }
  std::vector<std::string> to_wait;
  to_wait.push_back(source_provider);
  to_wait.push_back(host_provider);
  for (const std::string& name : to_wait) {
    auto ready = co_await wait_ready("providers", "Provider", name, ready_timeout);
    if (!ready) co_return ready.error();
  }

  const Ref src{source_provider, ns}, dst{host_provider, ns};
  const std::string map_name = object_name(run_id_, plan_.name.substr(0, 30));
  auto nm = co_await create_object("NetworkMap", forklift_collection(ns, "networkmaps"),
                                   build_network_map(map_name, ns, run_id_, src, dst, plan_.network_map));
  if (!nm) co_return nm.error();
  auto sm = co_await create_object("StorageMap", forklift_collection(ns, "storagemaps"),
                                   build_storage_map(map_name, ns, run_id_, src, dst, plan_.storage_map));
  if (!sm) co_return sm.error();
  const PlanBuild pb = plan_build(plan_, map_name, run_id_, src, dst, vm_names);
  auto created_plan = co_await create_object("Plan", forklift_collection(ns, "plans"), build_plan(pb));
  if (!created_plan) co_return created_plan.error();
  auto plan_ready = co_await wait_ready("plans", "Plan", map_name, ready_timeout);
  if (!plan_ready) {
    // The maps' own conditions name the root cause (e.g. which datastore the vCenter lacks).
    Error e = plan_ready.error();
    std::vector<std::pair<std::string, std::string>> maps;
    maps.emplace_back("networkmaps", "NetworkMap");
    maps.emplace_back("storagemaps", "StorageMap");
    for (const auto& [plural, kind] : maps) {
      auto got = co_await kube::get_object(*api_, forklift_object(ns, plural, map_name),
                                           "reading " + kind + " " + map_name);
      if (!got || !got->has_value()) continue;
      const Readiness r = readiness_of(**got);
      for (const auto& c : r.blocking) e.message += "\n  " + kind + " " + map_name + ": " + c.to_string();
    }
    co_return e;
  }
  co_return map_name;
}

awaitable<Expected<void>> ForkliftMigration::ensure_namespace(const std::string& name) {
  auto got = co_await kube::get_object(*api_, namespace_path(name), "reading namespace " + name);
  if (!got) co_return got.error();
  if (got->has_value()) co_return Expected<void>();
  json ns = {{"apiVersion", "v1"},
             {"kind", "Namespace"},
             {"metadata", {{"name", name}, {"labels", {{kRunLabel, run_id_}}}}}};
  auto created = co_await kube::create_object(*api_, "/api/v1/namespaces", ns, "creating namespace " + name);
  if (!created) {
    // Created by someone else between the GET and the POST: not this run's, so cleanup leaves it alone.
    if (created.error().kind == ErrorKind::conflict) co_return Expected<void>();
    co_return created.error();
  }
  // Only the namespaces this run created are journaled: `bootstorm cleanup` deletes exactly these (when
  // they still carry the run label), never one that existed before the run.
  journal("object_created",
          {{"kind", "Namespace"}, {"namespace", ""}, {"name", name}, {"path", namespace_path(name)}});
  co_return Expected<void>();
}

awaitable<Expected<json>> ForkliftMigration::create_object(const std::string& kind,
                                                           const std::string& collection, const json& obj) {
  const std::string name = obj["metadata"].value("name", "");
  const std::string ns = obj["metadata"].value("namespace", "");
  auto created =
      co_await kube::create_object(*api_, collection, obj, "creating " + kind + " " + ns + "/" + name);
  if (!created) co_return created.error();
  journal("object_created",
          {{"kind", kind}, {"namespace", ns}, {"name", name}, {"path", collection + "/" + name}});
  spdlog::info("created {} {}/{}", kind, ns, name);
  co_return created;
}

awaitable<Expected<void>> ForkliftMigration::wait_ready(const std::string& plural, const std::string& kind,
                                                        const std::string& name,
                                                        std::chrono::milliseconds timeout) {
  const std::string ns = plan_.destination.namespace_;
  Readiness last;
  bool seen = false;
  auto watched = co_await watch_objects(
      *api_, forklift_collection(ns, plural), "fieldSelector=" + http::url_encode("metadata.name=" + name),
      [&](const json& obj) {
        seen = true;
        last = readiness_of(obj);
      },
      [&] { return last.ready || last.blocked; }, std::chrono::steady_clock::now() + timeout, interrupt_,
      kind + " " + ns + "/" + name);
  if (watched && last.blocked && !last.ready) {
    // Forklift re-validates as the objects it refers to settle (a Plan created right after its maps may
    // first say NetworkMapNotReady): a blocking condition counts once it has held for a few seconds.
    auto settled = co_await watch_objects(
        *api_, forklift_collection(ns, plural), "fieldSelector=" + http::url_encode("metadata.name=" + name),
        [&](const json& obj) { last = readiness_of(obj); }, [&] { return last.ready; },
        std::chrono::steady_clock::now() + kBlockedGrace, interrupt_, kind + " " + ns + "/" + name);
    if (!settled && settled.error().kind == ErrorKind::cancelled) co_return settled.error();
  }
  auto conditions_text = [](const std::vector<Condition>& cs) {
    std::string t;
    for (const auto& c : cs) t += "\n  " + c.to_string();
    return t.empty() ? std::string("\n  (no conditions)") : t;
  };
  if (last.blocked) {
    journal("not_ready", {{"kind", kind}, {"name", name}, {"conditions", conditions_text(last.blocking)}});
    co_return make_error(ErrorKind::api,
                         kind + " " + ns + "/" + name + " is not Ready:" + conditions_text(last.blocking),
                         "fix what the conditions name (see `kubectl describe " +
                             plural.substr(0, plural.size() - 1) + " " + name + " -n " + ns +
                             "`) and run again; `bootstorm cleanup` removes this run's "
                             "objects");
  }
  if (last.ready) {
    journal("ready", {{"kind", kind}, {"name", name}});
    co_return Expected<void>();
  }
  if (!watched) {
    Error e = watched.error();
    if (e.kind == ErrorKind::timeout)
      e.message = kind + " " + ns + "/" + name + " did not become Ready within " +
                  std::to_string(std::chrono::duration_cast<std::chrono::seconds>(timeout).count()) + " s" +
                  (seen ? ":" + conditions_text(last.all) : " (never seen)");
    co_return e;
  }
  co_return make_error(ErrorKind::internal, kind + " " + name + ": readiness wait ended early");
}

}  // namespace bootstorm::migrate

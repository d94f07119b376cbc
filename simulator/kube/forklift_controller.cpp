// forklift-controller against the lab model. Validation conditions, their types, reasons, categories and
// messages follow kubev2v/forklift (pkg/controller/{provider,map,plan}/validation.go); the cold-migration
// pipeline and VM status follow pkg/controller/plan/migration.go. Data moves as flows of the lab model, so
// transfer times come from the source datastore and host link, the destination node's link and the
// destination datastore, shared with everything else running in the lab.
#include "simulator/kube/forklift_controller.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "common/base64.hpp"
#include "common/log.hpp"
#include "simulator/kube/api_objects.hpp"
#include "simulator/kube/kube_front_impl.hpp"

namespace bootstorm::sim::kube {
namespace {

constexpr const char* kProfileAnnotation = "sim.bootstorm.io/profile";
// The one vSphere network of the lab (what the vCenter front reports as every NIC's backing).
constexpr const char* kSourceNetworkId = "network-1";
constexpr const char* kSourceNetworkName = "VM Network";

enum Step : std::size_t { kInitialize, kDiskTransfer, kImageConversion, kVirtualMachineCreation, kStepCount };
constexpr const char* kStepNames[kStepCount] = {"Initialize", "DiskTransfer", "ImageConversion",
                                                "VirtualMachineCreation"};
constexpr const char* kStepDescriptions[kStepCount] = {"Initialize migration.", "Transfer disks.",
                                                       "Convert image to kubevirt.", "Create VM."};
// The VM's itinerary phase while each step runs (Forklift's VM status `phase`).
constexpr const char* kStepItinerary[kStepCount] = {"Started", "CopyDisks", "ConvertGuest", "CreateVM"};

// A Forklift condition (libcnd.Condition).
struct Cond {
  std::string type;
  std::string reason;
  std::string category;
  std::string message;
  std::vector<std::string> items;
  bool durable = false;
  std::string status = "True";
};

bool blocker(const Cond& c) {
  return c.category == "Critical" || c.category == "Error";
}
bool any_blocker(const std::vector<Cond>& conditions) {
  return std::any_of(conditions.begin(), conditions.end(), blocker);
}
bool has(const std::vector<Cond>& conditions, const std::string& type) {
  return std::any_of(conditions.begin(), conditions.end(), [&](const Cond& c) { return c.type == type; });
}

// Serialises conditions, keeping lastTransitionTime of those whose status did not change.
json conditions_json(const json& old_conditions, const std::vector<Cond>& conditions, const std::string& ts) {
  json out = json::array();
  for (const auto& c : conditions) {
    std::string since = ts;
    if (old_conditions.is_array()) {
      for (const auto& old : old_conditions) {
        if (old.value("type", "") == c.type && old.value("status", "") == c.status) {
          since = old.value("lastTransitionTime", ts);
        }
      }
    }
    json entry = {
        {"type", c.type}, {"status", c.status}, {"category", c.category}, {"lastTransitionTime", since}};
    if (!c.reason.empty()) entry["reason"] = c.reason;
    if (!c.message.empty()) entry["message"] = c.message;
    if (!c.items.empty()) entry["items"] = c.items;
    if (c.durable) entry["durable"] = true;
    out.push_back(std::move(entry));
  }
  return out;
}

bool condition_true(const json& object, const std::string& type) {
  const json& conditions = field(object, {"status", "conditions"});
  if (!conditions.is_array()) return false;
  return std::any_of(conditions.begin(), conditions.end(), [&](const json& c) {
    return c.value("type", "") == type && c.value("status", "") == "True";
  });
}

// Forklift's ref.Ref.String(): "(type) id:<id> name:'<name>' ".
std::string ref_string(const json& ref) {
  std::string out;
  std::string type = ref.value("type", "");
  if (!type.empty()) out = "(" + type + ")";
  return fmt::format("{} id:{} name:'{}' ", out, ref.value("id", ""), ref.value("name", ""));
}

// Kubernetes object reference as Forklift records it in status.migration.history.
json history_ref(const json& object) {
  const json& meta = object["metadata"];
  return {{"name", meta.value("name", "")},
          {"namespace", meta.value("namespace", "")},
          {"uid", meta.value("uid", "")},
          {"generation", meta.value("generation", 1)}};
}

// Forklift changes target names that are not DNS-1123 labels: lower case, invalid characters to '-'.
std::string dns1123_name(const std::string& name) {
  std::string out;
  for (char ch : name) {
    unsigned char c = static_cast<unsigned char>(std::tolower(static_cast<unsigned char>(ch)));
    out.push_back(std::isalnum(c) ? static_cast<char>(c) : '-');
  }
  while (!out.empty() && out.front() == '-') out.erase(out.begin());
  while (!out.empty() && out.back() == '-') out.pop_back();
  if (out.size() > 63) out.resize(63);
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? "vm" : out;
}

struct StepRun {
  std::optional<double> started, completed;
  std::string error;
  double total = 1;  // progress total (DiskTransfer: MB)
  double completed_units = 0;
};

struct VmRun {
  json ref;  // the plan's vms[] entry
  std::string source_id, source_name, target_name, profile;
  std::string source_host_id, source_datastore_id, source_datastore_name;
  double disk_gb = 0;
  bool restore_on = false;
  bool queued = true, active = false, done = false;
  std::string result;  // Succeeded, Failed, Canceled
  std::string itinerary = "Pending";
  std::string error_phase;  // itinerary phase at failure
  std::size_t step = 0;
  std::array<StepRun, kStepCount> steps{};
  std::optional<double> started, completed;
  model::OperationId flow = 0;
  double flow_mb = 0;     // MB the current flow moves
  double flow_scale = 1;  // progress units per MB of the flow
  std::uint64_t timer = 0;
  std::string node, volume_name;
};

struct Run {
  std::string ns, name, uid;
  std::string plan_ns, plan_name, plan_uid;
  json plan;  // the plan as it was at start
  json history;
  std::string target_ns, storage_class, network_type, network_name, provider_url, secret_name;
  std::vector<VmRun> vms;
  std::optional<double> started, completed;
  bool finished = false;
  bool migration_gone = false, plan_gone = false;
  std::string result;
};

class Controller final : public ForkliftController, public std::enable_shared_from_this<Controller> {
 public:
  explicit Controller(KubeFront::Impl& front) : front_(front), lab_(front.lab) {}

  void start() {
    std::weak_ptr<Controller> weak = shared_from_this();
    subscription_ = lab_.subscribe([weak](const model::VmEvent& event) {
      auto self = weak.lock();
      if (!self || !self->alive_) return;
      // A source VM appearing or vanishing (vCenter clone/delete) changes what Plans can reference.
      if (event.vm.namespace_.empty() && event.type != model::VmEvent::Type::modified)
        self->schedule_reconcile();
    });
    lab_.set_truth_section("migrations", [weak]() -> std::string {
      auto self = weak.lock();
      return self ? self->truth().dump() : "[]";
    });
    schedule_reconcile();
  }

  void on_object_changed(Kind kind, const std::string&, const std::string&) override {
    if (!alive_) return;
    switch (kind) {
      case Kind::forklift_providers:
      case Kind::forklift_network_maps:
      case Kind::forklift_storage_maps:
      case Kind::forklift_plans:
      case Kind::forklift_migrations:
      case Kind::secrets:
      case Kind::namespaces:
      case Kind::virtual_machines:
        schedule_reconcile();
        break;
      default:
        break;
    }
  }

  void on_object_deleted(Kind kind, const std::string& ns, const std::string& name) override {
    if (!alive_) return;
    if (kind == Kind::forklift_migrations) {
      auto it = runs_.find(ObjectStore::key(ns, name));
      if (it != runs_.end() && !it->second.finished) {
        it->second.migration_gone = true;
        stop_run(it->second, "The migration was deleted.");
      }
    } else if (kind == Kind::forklift_plans) {
      for (auto& [key, run] : runs_) {
        if (run.plan_ns == ns && run.plan_name == name && !run.finished) {
          run.plan_gone = true;
          stop_run(run, "The plan was deleted.");
        }
      }
    }
    on_object_changed(kind, ns, name);
  }

  void shutdown() override {
    if (!alive_) return;
    alive_ = false;
    lab_.unsubscribe(subscription_);
    lab_.set_truth_section("migrations", {});
    for (auto& [key, run] : runs_) {
      for (auto& vm : run.vms) stop_work(vm);
    }
  }

 private:
  // ---- scheduling ----
  void schedule_reconcile() {
    if (reconcile_pending_ || !alive_) return;
    reconcile_pending_ = true;
    std::weak_ptr<Controller> weak = shared_from_this();
    // The controller reacts to a change shortly after it is stored, like a watch-driven reconciler.
    lab_.schedule(kReconcileDelayS, [weak] {
      auto self = weak.lock();
      if (!self || !self->alive_) return;
      self->reconcile_pending_ = false;
      self->reconcile_all();
    });
  }

  void reconcile_all() {
    for (const auto& p : front_.store.list(Kind::forklift_providers, "").items) reconcile_provider(p);
    for (const auto& m : front_.store.list(Kind::forklift_network_maps, "").items)
      reconcile_map(Kind::forklift_network_maps, m);
    for (const auto& m : front_.store.list(Kind::forklift_storage_maps, "").items)
      reconcile_map(Kind::forklift_storage_maps, m);
    for (const auto& p : front_.store.list(Kind::forklift_plans, "").items) reconcile_plan(p);
    for (const auto& m : front_.store.list(Kind::forklift_migrations, "").items) reconcile_migration(m);
  }

  std::string ts() const { return format_time(front_.now()); }

  void write_conditions(Kind kind, const ObjectPtr& object, const std::vector<Cond>& conditions,
                        const std::function<void(json&)>& more = {}) {
    const json& meta = object->object["metadata"];
    std::string now = ts();
    front_.modify(kind, meta.value("namespace", ""), meta.value("name", ""), [&](json& o) {
      json& status = o["status"];
      if (!status.is_object()) status = json::object();
      status["conditions"] = conditions_json(status.value("conditions", json::array()), conditions, now);
      status["observedGeneration"] = o["metadata"].value("generation", 1);
      if (more) more(status);
    });
  }

  // ---- Provider ----
  std::optional<std::string> secret_value(const json& secret, const std::string& key) {
    const json& string_data = field(secret, {"stringData", key.c_str()});
    if (string_data.is_string()) return string_data.get<std::string>();
    const json& data = field(secret, {"data", key.c_str()});
    if (!data.is_string()) return std::nullopt;
    auto decoded = base64_decode(data.get<std::string>());
    return decoded ? decoded : std::optional<std::string>(std::string());
  }

  void reconcile_provider(const ObjectPtr& provider) {
    const json& o = provider->object;
    std::string type = string_field(o, {"spec", "type"});
    std::string url = string_field(o, {"spec", "url"});
    std::vector<Cond> conditions;
    std::string phase;
    static const std::vector<std::string> kTypes = {"openshift", "vsphere", "ovirt", "openstack", "ova"};
    if (std::find(kTypes.begin(), kTypes.end(), type) == kTypes.end()) {
      phase = "ValidationFailed";
      conditions.push_back({"ProviderTypeNotSupported", "NotSupported", "Critical",
                            "The `type` must be: [openshift vsphere ovirt openstack ova]"});
    }
    const bool host = type == "openshift" && url.empty();
    std::optional<json> secret;
    if (!host && conditions.empty()) {
      if (url.empty()) {
        phase = "ValidationFailed";
        conditions.push_back({"UrlNotValid", "NotSet", "Critical", "The `url` is not valid."});
      }
      Cond secret_cond{"SecretNotValid", "NotSet", "Critical", "The `secret` is not valid."};
      std::string secret_name = string_field(o, {"spec", "secret", "name"});
      std::string secret_ns = string_field(o, {"spec", "secret", "namespace"});
      if (secret_ns.empty()) secret_ns = o["metadata"].value("namespace", "");
      if (secret_name.empty()) {
        phase = "ValidationFailed";
        conditions.push_back(secret_cond);
      } else if (auto stored = front_.store.get(Kind::secrets, secret_ns, secret_name); !stored) {
        phase = "ValidationFailed";
        secret_cond.reason = "NotFound";
        conditions.push_back(secret_cond);
      } else {
        secret = stored->object;
        std::vector<std::string> keys = {"user", "password"};
        bool insecure = false;
        if (auto flag = secret_value(*secret, "insecureSkipVerify")) {
          std::string lower = *flag;
          std::transform(lower.begin(), lower.end(), lower.begin(),
                         [](unsigned char c) { return std::tolower(c); });
          insecure = lower == "true";
        }
        if (type == "vsphere" && insecure) {
          conditions.push_back(
              {"ConnectionInsecure", "SkipTLSVerification", "Warn",
               "TLS is susceptible to machine-in-the-middle attacks when certificate verification "
               "is skipped."});
        }
        if (type == "vsphere" && !insecure) keys.push_back("cacert");
        if (type == "openshift") keys = {"token"};
        for (const auto& key : keys) {
          if (!secret_value(*secret, key)) secret_cond.items.push_back(key);
        }
        if (!secret_cond.items.empty()) {
          phase = "ValidationFailed";
          secret_cond.reason = "DataErr";
          conditions.push_back(secret_cond);
        }
      }
    }
    if (!any_blocker(conditions)) {
      std::string failure;
      bool auth_failed = false;
      if (!host) {
        if (type != "vsphere") {
          failure = "the lab simulates vSphere sources only";
        } else if (!url.starts_with("https://")) {
          failure = fmt::format(
              "Post \"{}\": unsupported protocol scheme; the vCenter SDK URL is https://<vcenter>/sdk", url);
        } else {
          std::string rest = url.substr(8);
          auto slash = rest.find('/');
          std::string hostport = rest.substr(0, slash);
          std::string path = slash == std::string::npos ? "" : rest.substr(slash);
          if (hostport.empty()) {
            failure = fmt::format("parse \"{}\": missing host", url);
          } else if (path != "/sdk" && path != "/sdk/") {
            failure = fmt::format("Post \"{}\": 404 Not Found (the vCenter SDK endpoint is /sdk)", url);
          } else {
            std::string user = secret_value(*secret, "user").value_or("");
            std::string password = secret_value(*secret, "password").value_or("");
            if (!password.empty()) log::register_secret(password);
            std::string cacert = secret_value(*secret, "cacert").value_or("");
            bool insecure = has(conditions, "ConnectionInsecure");
            if (user != lab_.spec().vcenter.username || password != lab_.spec().vcenter.password) {
              auth_failed = true;
              failure = "ServerFaultCode: Cannot complete login due to an incorrect user name or password.";
            } else if (!insecure && cacert.find("-----BEGIN CERTIFICATE-----") == std::string::npos) {
              failure = fmt::format(
                  "Post \"{}\": tls: failed to verify certificate: x509: certificate signed by "
                  "unknown authority (cacert holds no PEM certificate)",
                  url);
            }
          }
        }
      }
      if (auth_failed) {
        phase = "ConnectionFailed";
        conditions.push_back(
            {"ConnectionAuthFailed", "Tested", "Critical", "Connection auth failed, error: " + failure});
      } else if (!failure.empty()) {
        phase = "ConnectionFailed";
        conditions.push_back(
            {"ConnectionTestFailed", "Tested", "Critical", "Connection test, failed: " + failure});
      } else {
        conditions.push_back(
            {"ConnectionTestSucceeded", "Tested", "Required", "Connection test, succeeded."});
        conditions.push_back({"InventoryCreated", "Completed", "Required", "The inventory has been loaded."});
      }
    }
    if (!any_blocker(conditions)) {
      conditions.push_back({"Validated", "Completed", "Advisory", "Validation has been completed."});
      conditions.push_back({"Ready", "", "Required", "The provider is ready."});
      phase = "Ready";
    }
    std::string secret_rv = secret ? string_field(*secret, {"metadata", "resourceVersion"}) : "";
    write_conditions(Kind::forklift_providers, provider, conditions, [&](json& status) {
      status["phase"] = phase;
      if (!secret_rv.empty()) {
        status["secretResourceVersion"] = secret_rv;
      } else {
        status.erase("secretResourceVersion");
      }
      if (!host && phase == "Ready") status["fingerprint"] = fingerprint(url);
    });
  }

  // The SHA-1-style fingerprint Forklift shows for the vCenter certificate: derived from the URL here,
  // stable.
  static std::string fingerprint(const std::string& url) {
    std::uint64_t h1 = 1469598103934665603ULL, h2 = 1099511628211ULL;
    for (unsigned char c : url) {
      h1 = (h1 ^ c) * 1099511628211ULL;
      h2 = (h2 + c) * 6364136223846793005ULL + 1442695040888963407ULL;
    }
    std::string hex = fmt::format("{:016X}{:016X}", h1, h2);
    std::string out;
    for (std::size_t i = 0; i + 1 < 40 && i + 1 < hex.size(); i += 2) {
      if (!out.empty()) out += ':';
      out += hex.substr(i, 2);
    }
    return out;
  }

  // ---- Provider pair (maps and plans) ----
  struct Providers {
    ObjectPtr source, destination;
  };
  Providers validate_providers(const json& object, std::vector<Cond>& conditions) {
    Providers out;
    const std::string own_ns = object["metadata"].value("namespace", "");
    auto check = [&](const char* which, const char* prefix, const char* label) -> ObjectPtr {
      const json& ref = field(object, {"spec", "provider", which});
      std::string name = string_field(ref, {"name"});
      std::string ns = string_field(ref, {"namespace"});
      if (ns.empty()) ns = own_ns;
      Cond invalid{std::string(prefix) + "ProviderNotValid", "NotSet", "Critical",
                   fmt::format("The {} provider is not valid.", label)};
      if (name.empty()) {
        conditions.push_back(invalid);
        return nullptr;
      }
      auto provider = front_.store.get(Kind::forklift_providers, ns, name);
      if (!provider) {
        invalid.reason = "NotFound";
        conditions.push_back(invalid);
        return nullptr;
      }
      if (!condition_true(provider->object, "Ready")) {
        conditions.push_back({std::string(prefix) + "ProviderNotReady", "", "Critical",
                              fmt::format("The {} provider does not have the Ready condition.", label)});
      }
      return provider;
    };
    out.source = check("source", "Source", "source");
    out.destination = check("destination", "Destination", "destination");
    if (out.destination && string_field(out.destination->object, {"spec", "type"}) != "openshift") {
      conditions.push_back({"DestinationProviderNotValid", "TypeNotValid", "Critical",
                            "The destination provider is not valid."});
    }
    return out;
  }

  // ---- NetworkMap / StorageMap ----
  bool known_storage_class(const std::string& name) const {
    if (name == lab_.spec().kube.storage_class) return true;
    for (const auto& image : lab_.golden_images()) {
      if (image.spec.storage_class == name) return true;
    }
    return false;
  }

  void reconcile_map(Kind kind, const ObjectPtr& map) {
    const bool network = kind == Kind::forklift_network_maps;
    const json& o = map->object;
    std::vector<Cond> conditions;
    validate_providers(o, conditions);
    json references = json::array();
    if (!has(conditions, "SourceProviderNotValid") && !has(conditions, "SourceProviderNotReady")) {
      const char* noun = network ? "Network" : "Storage";
      Cond not_set{fmt::format("Source{}NotValid", noun), "NotSet", "Critical",
                   fmt::format("Source {} (reference) not valid.", network ? "network" : "storage")};
      Cond not_found{fmt::format("Source{}NotValid", noun), "NotFound", "Critical",
                     fmt::format("Source {} not found.", network ? "network" : "storage")};
      Cond dest{fmt::format("Destination{}NotValid", noun), "NotFound", "Critical",
                fmt::format("Destination {} not valid.", network ? "network" : "storage")};
      const json& entries = field(o, {"spec", "map"});
      if (entries.is_array()) {
        for (const auto& entry : entries) {
          const json& source = field(entry, {"source"});
          std::string id = string_field(source, {"id"});
          std::string name = string_field(source, {"name"});
          if (id.empty() && name.empty()) {
            if (!has(conditions, not_set.type)) conditions.push_back(not_set);
            continue;
          }
          if (network) {
            if ((id.empty() || id == kSourceNetworkId) && (name.empty() || name == kSourceNetworkName)) {
              references.push_back({{"id", kSourceNetworkId}, {"name", kSourceNetworkName}});
            } else {
              not_found.items.push_back(ref_string(source));
            }
            std::string type = string_field(entry, {"destination", "type"});
            if (type == "multus" && string_field(entry, {"destination", "name"}).empty()) {
              dest.reason = "NotSet";
              dest.items.push_back(ref_string(source));
            } else if (type != "pod" && type != "multus" && type != "ignored") {
              dest.reason = "NotValid";
              dest.items.push_back(ref_string(source));
            }
          } else {
            const model::Datastore* ds = lab_.find_datastore(id.empty() ? name : id);
            if (ds && !name.empty() && ds->spec.name != name) ds = nullptr;
            if (ds) {
              references.push_back({{"id", ds->id}, {"name", ds->spec.name}});
            } else {
              not_found.items.push_back(ref_string(source));
            }
            std::string storage_class = string_field(entry, {"destination", "storageClass"});
            if (!known_storage_class(storage_class)) dest.items.push_back(storage_class);
          }
        }
      }
      if (!not_found.items.empty()) conditions.push_back(not_found);
      if (!dest.items.empty()) conditions.push_back(dest);
    }
    if (!any_blocker(conditions)) conditions.push_back({"Ready", "", "Required", "The map is ready."});
    write_conditions(kind, map, conditions, [&](json& status) {
      if (references.empty()) {
        status.erase("references");
      } else {
        status["references"] = references;
      }
    });
  }

  // ---- Plan ----
  const model::Vm* find_source_vm(const json& ref) const {
    std::string id = ref.value("id", "");
    std::string name = ref.value("name", "");
    const model::Vm* vm = nullptr;
    if (!id.empty()) {
      vm = lab_.find_vm(id);
      if (vm && (!vm->namespace_.empty() || (!name.empty() && vm->name != name))) vm = nullptr;
    } else if (!name.empty()) {
      vm = lab_.find_vm_by_name(name, "");
    }
    return vm;
  }

  ObjectPtr map_of(const json& plan, const char* which, Kind kind) const {
    std::string name = string_field(plan, {"spec", "map", which, "name"});
    std::string ns = string_field(plan, {"spec", "map", which, "namespace"});
    if (ns.empty()) ns = plan["metadata"].value("namespace", "");
    return name.empty() ? nullptr : front_.store.get(kind, ns, name);
  }

  static bool execution_condition(const std::string& type) {
    return type == "Executing" || type == "Succeeded" || type == "Failed" || type == "Canceled";
  }

  void reconcile_plan(const ObjectPtr& plan) {
    const json& o = plan->object;
    std::vector<Cond> conditions;
    validate_providers(o, conditions);
    const bool executing = condition_true(o, "Executing");
    if (!has(conditions, "SourceProviderNotReady")) {
      std::string target_ns = string_field(o, {"spec", "targetNamespace"});
      if (target_ns.empty()) {
        conditions.push_back({"NamespaceNotValid", "NotSet", "Critical", "Target namespace is not valid."});
      } else if (!valid_dns_label(target_ns)) {
        conditions.push_back({"NamespaceNotValid", "NotValid", "Critical", "Target namespace is not valid."});
      }
      struct MapCheck {
        const char* which;
        Kind kind;
        const char* ref_type;
        const char* not_ready_type;
        const char* label;
      };
      for (const MapCheck& check : {MapCheck{"network", Kind::forklift_network_maps, "NetworkMapRefNotValid",
                                             "NetworkMapNotReady", "Network"},
                                    MapCheck{"storage", Kind::forklift_storage_maps, "StorageRefNotValid",
                                             "StorageMapNotReady", "Storage"}}) {
        Cond ref_cond{check.ref_type, "NotSet", "Critical", fmt::format("Map.{} is not valid.", check.label)};
        if (string_field(o, {"spec", "map", check.which, "name"}).empty()) {
          conditions.push_back(ref_cond);
        } else if (auto map = map_of(o, check.which, check.kind); !map) {
          ref_cond.reason = "NotFound";
          conditions.push_back(ref_cond);
        } else if (!condition_true(map->object, "Ready")) {
          conditions.push_back({check.not_ready_type, "", "Critical",
                                fmt::format("Map.{} does not have Ready condition.", check.label)});
        }
      }
      if (!executing) validate_plan_vms(o, conditions);
    }
    if (!any_blocker(conditions))
      conditions.push_back({"Ready", "", "Required", "The migration plan is ready."});
    // The execution conditions belong to the running migration; keep them as they are.
    const json& old = field(o, {"status", "conditions"});
    if (old.is_array()) {
      for (const auto& c : old) {
        std::string type = c.value("type", "");
        if (!execution_condition(type)) continue;
        Cond kept{type, c.value("reason", ""), c.value("category", "Advisory"), c.value("message", "")};
        kept.durable = c.value("durable", false);
        kept.status = c.value("status", "True");
        conditions.push_back(std::move(kept));
      }
    }
    write_conditions(Kind::forklift_plans, plan, conditions);
  }

  void validate_plan_vms(const json& o, std::vector<Cond>& conditions) {
    Cond not_found{"VMNotFound", "NotFound", "Critical", "VM not found."};
    Cond duplicate{"DuplicateVM", "NotUnique", "Critical", "Duplicate (source) VM."};
    Cond name_not_valid{"TargetNameNotValid", "NotValid", "Warn",
                        "Target VM name does not comply with DNS1123 RFC, will be automatically changed."};
    Cond exists{"VMAlreadyExists", "NotUnique", "Critical", "Target VM already exists."};
    Cond networks{"VMNetworksNotMapped", "NotValid", "Critical", "VM has unmapped networks."};
    Cond storage{"VMStorageNotMapped", "NotValid", "Critical", "VM has unmapped storage."};
    Cond cbt{
        "VMMissingChangedBlockTracking", "MissingChangedBlockTracking", "Critical",
        "Changed Block Tracking (CBT) has not been enabled on some VM. This feature is a prerequisite for VM "
        "warm migration."};
    const bool warm = field(o, {"spec", "warm"}) == json(true) || string_field(o, {"spec", "type"}) == "warm";
    auto network_map = map_of(o, "network", Kind::forklift_network_maps);
    auto storage_map = map_of(o, "storage", Kind::forklift_storage_maps);
    std::string target_ns = string_field(o, {"spec", "targetNamespace"});
    std::set<std::string> migrated;
    const json& migrated_vms = field(o, {"status", "migration", "vms"});
    if (migrated_vms.is_array()) {
      for (const auto& vm : migrated_vms) migrated.insert(vm.value("id", ""));
    }
    std::set<std::string> seen;
    const json& vms = field(o, {"spec", "vms"});
    if (!vms.is_array()) return;
    for (const auto& ref : vms) {
      if (ref.value("id", "").empty() && ref.value("name", "").empty()) {
        if (!has(conditions, "VMRefNotValid")) {
          conditions.push_back({"VMRefNotValid", "NotSet", "Critical", "Either `ID` or `Name` required."});
        }
        continue;
      }
      const model::Vm* vm = find_source_vm(ref);
      std::string label = ref_string(ref);
      if (!vm) {
        not_found.items.push_back(label);
        continue;
      }
      if (!seen.insert(vm->id).second) duplicate.items.push_back(label);
      std::string target = ref.value("targetName", "");
      if (target.empty()) {
        target = vm->name;
        if (!valid_dns_label(target)) name_not_valid.items.push_back(label);
        target = dns1123_name(target);
      }
      if (!target_ns.empty() && front_.store.get(Kind::virtual_machines, target_ns, target) &&
          !migrated.count(vm->id)) {
        exists.items.push_back(label);
      }
      if (network_map && !map_references(network_map->object, kSourceNetworkId))
        networks.items.push_back(label);
      if (storage_map && !map_references(storage_map->object, vm->datastore_id))
        storage.items.push_back(label);
      if (warm) cbt.items.push_back(label);
    }
    for (Cond* c : {&not_found, &duplicate, &exists, &name_not_valid, &networks, &storage, &cbt}) {
      if (!c->items.empty()) conditions.push_back(*c);
    }
  }

  static bool map_references(const json& map, const std::string& id) {
    const json& refs = field(map, {"status", "references"});
    if (!refs.is_array()) return false;
    return std::any_of(refs.begin(), refs.end(), [&](const json& r) { return r.value("id", "") == id; });
  }

  // ---- Migration ----
  void reconcile_migration(const ObjectPtr& migration) {
    const json& o = migration->object;
    std::string ns = o["metadata"].value("namespace", "");
    std::string name = o["metadata"].value("name", "");
    std::string key = ObjectStore::key(ns, name);
    auto run_it = runs_.find(key);
    if (run_it != runs_.end()) {
      if (run_it->second.uid == o["metadata"].value("uid", "")) {
        apply_cancel(run_it->second, o);
        return;
      }
      runs_.erase(run_it);  // the name was reused by a new Migration
    }
    if (!field(o, {"status", "completed"}).is_null()) return;
    std::vector<Cond> conditions;
    std::string plan_name = string_field(o, {"spec", "plan", "name"});
    std::string plan_ns = string_field(o, {"spec", "plan", "namespace"});
    if (plan_ns.empty()) plan_ns = ns;
    ObjectPtr plan = plan_name.empty() ? nullptr : front_.store.get(Kind::forklift_plans, plan_ns, plan_name);
    if (!plan) {
      conditions.push_back({"PlanNotValid", plan_name.empty() ? "NotSet" : "NotFound", "Critical",
                            "The `plan` is not valid."});
    } else if (!condition_true(plan->object, "Ready")) {
      conditions.push_back(
          {"PlanNotReady", "NotFound", "Critical", "The `plan` does not have Ready condition."});
    } else if (condition_true(plan->object, "Executing")) {
      conditions.push_back(
          {"PlanNotReady", "Executing", "Critical", "The plan is executing another migration."});
    }
    if (any_blocker(conditions)) {
      write_conditions(Kind::forklift_migrations, migration, conditions);
      return;
    }
    start_run(migration, plan);
  }

  void start_run(const ObjectPtr& migration, const ObjectPtr& plan) {
    const json& m = migration->object;
    const json& p = plan->object;
    Run run;
    run.ns = m["metadata"].value("namespace", "");
    run.name = m["metadata"].value("name", "");
    run.uid = m["metadata"].value("uid", "");
    run.plan_ns = p["metadata"].value("namespace", "");
    run.plan_name = p["metadata"].value("name", "");
    run.plan_uid = p["metadata"].value("uid", "");
    run.plan = p;
    run.target_ns = string_field(p, {"spec", "targetNamespace"});
    run.started = front_.now();
    run.storage_class = lab_.spec().kube.storage_class;
    run.network_type = "pod";
    if (auto storage_map = map_of(p, "storage", Kind::forklift_storage_maps)) {
      const json& entries = field(storage_map->object, {"spec", "map"});
      if (entries.is_array() && !entries.empty()) {
        run.storage_class = string_field(entries[0], {"destination", "storageClass"});
      }
    }
    if (auto network_map = map_of(p, "network", Kind::forklift_network_maps)) {
      const json& entries = field(network_map->object, {"spec", "map"});
      if (entries.is_array() && !entries.empty()) {
        run.network_type = string_field(entries[0], {"destination", "type"});
        std::string nad_ns = string_field(entries[0], {"destination", "namespace"});
        std::string nad = string_field(entries[0], {"destination", "name"});
        run.network_name = nad_ns.empty() ? nad : nad_ns + "/" + nad;
      }
    }
    Providers providers;
    std::vector<Cond> ignored;
    providers = validate_providers(p, ignored);
    if (providers.source) {
      run.provider_url = string_field(providers.source->object, {"spec", "url"});
      run.secret_name = string_field(providers.source->object, {"spec", "secret", "name"});
    }
    json history = {{"conditions", json::array()},
                    {"migration", history_ref(m)},
                    {"plan", history_ref(p)},
                    {"provider", json::object()},
                    {"map", json::object()}};
    json empty_ref = {{"name", ""}, {"namespace", ""}, {"uid", ""}, {"generation", 0}};
    history["provider"]["source"] = providers.source ? history_ref(providers.source->object) : empty_ref;
    history["provider"]["destination"] =
        providers.destination ? history_ref(providers.destination->object) : empty_ref;
    auto network_map = map_of(p, "network", Kind::forklift_network_maps);
    auto storage_map = map_of(p, "storage", Kind::forklift_storage_maps);
    history["map"]["network"] = network_map ? history_ref(network_map->object) : empty_ref;
    history["map"]["storage"] = storage_map ? history_ref(storage_map->object) : empty_ref;
    run.history = history;

    const json& vms = field(p, {"spec", "vms"});
    std::string target_power = string_field(p, {"spec", "targetPowerState"});
    for (const auto& ref : vms.is_array() ? vms : json::array()) {
      const model::Vm* source = find_source_vm(ref);
      if (!source) continue;  // validation guarantees existence; a VM deleted since is skipped
      VmRun vm;
      vm.ref = ref;
      vm.source_id = source->id;
      vm.source_name = source->name;
      vm.target_name = ref.value("targetName", "");
      if (vm.target_name.empty()) vm.target_name = dns1123_name(source->name);
      vm.profile = source->profile;
      vm.source_host_id = source->host_id;
      vm.source_datastore_id = source->datastore_id;
      if (const auto* ds = lab_.find_datastore(source->datastore_id))
        vm.source_datastore_name = ds->spec.name;
      const model::GuestProfile* profile = lab_.find_profile(source->profile);
      vm.disk_gb = profile ? profile->disk_gb : 0;
      vm.steps[kDiskTransfer].total = std::ceil((profile ? profile->disk_used_gb : 0) * 1000);
      std::string power = ref.value("targetPowerState", target_power);
      vm.restore_on = power == "on" ||
                      ((power.empty() || power == "auto") && source->power == model::PowerState::powered_on);
      run.vms.push_back(std::move(vm));
    }
    std::string key = ObjectStore::key(run.ns, run.name);
    auto [it, inserted] = runs_.insert_or_assign(key, std::move(run));
    Run& stored = it->second;
    for (std::size_t i = 0; i < stored.vms.size(); ++i) queue_.emplace_back(key, i);
    // The plan now executes this migration.
    std::string now = ts();
    front_.modify(Kind::forklift_plans, stored.plan_ns, stored.plan_name, [&](json& o) {
      json& status = o["status"];
      json kept = json::array();
      for (const auto& c : status.value("conditions", json::array())) {
        if (!execution_condition(c.value("type", ""))) kept.push_back(c);
      }
      kept.push_back({{"type", "Executing"},
                      {"status", "True"},
                      {"category", "Advisory"},
                      {"message", "The plan is EXECUTING."},
                      {"lastTransitionTime", now},
                      {"durable", true}});
      status["conditions"] = kept;
    });
    std::vector<Cond> conditions = {{"Ready", "", "Required", "The migration is ready."},
                                    {"Running", "", "Required", "The migration is RUNNING."}};
    if (auto migration_now = front_.store.get(Kind::forklift_migrations, stored.ns, stored.name)) {
      write_conditions(Kind::forklift_migrations, migration_now, conditions);
    }
    publish(stored);
    pump();
    if (stored.vms.empty()) finish_run(stored);
  }

  // ---- VM pipeline ----
  void pump() {
    const std::size_t limit = std::max<std::size_t>(1, front_.options.forklift_max_vm_inflight);
    while (inflight_ < limit && !queue_.empty()) {
      auto [key, index] = queue_.front();
      queue_.pop_front();
      auto it = runs_.find(key);
      if (it == runs_.end() || index >= it->second.vms.size()) continue;
      VmRun& vm = it->second.vms[index];
      if (!vm.queued || vm.done) continue;
      vm.queued = false;
      vm.active = true;
      ++inflight_;
      begin_step(it->second, index, kInitialize);
    }
  }

  std::optional<std::string> injected_failure(const VmRun& vm, Step step) const {
    for (const auto& failure : lab_.faults().migration_failures) {
      if ((failure.vm == vm.source_name || failure.vm == vm.source_id) && failure.step == kStepNames[step]) {
        return failure.reason;
      }
    }
    return std::nullopt;
  }

  // Runs `fn(run, vm index)` later if the VM is still in this step of this run.
  std::function<void()> guarded(const std::string& key, const std::string& uid, std::size_t index, Step step,
                                std::function<void(Run&, std::size_t)> fn) {
    std::weak_ptr<Controller> weak = shared_from_this();
    return [weak, key, uid, index, step, fn = std::move(fn)] {
      auto self = weak.lock();
      if (!self || !self->alive_) return;
      auto it = self->runs_.find(key);
      if (it == self->runs_.end() || it->second.uid != uid || index >= it->second.vms.size()) return;
      VmRun& vm = it->second.vms[index];
      if (vm.done || vm.step != step) return;
      fn(it->second, index);
    };
  }

  void begin_step(Run& run, std::size_t index, Step step) {
    VmRun& vm = run.vms[index];
    std::string key = ObjectStore::key(run.ns, run.name);
    double now = front_.now();
    vm.step = step;
    vm.itinerary = kStepItinerary[step];
    if (!vm.started) vm.started = now;
    vm.steps[step].started = now;
    auto failure = injected_failure(vm, step);
    auto then_fail_or = [this, key, uid = run.uid, index, step,
                         failure](std::function<void(Run&, std::size_t)> next) {
      return guarded(key, uid, index, step, [this, step, failure, next](Run& r, std::size_t i) {
        if (failure) {
          fail_step(r, i, step, *failure);
        } else {
          next(r, i);
        }
      });
    };
    switch (step) {
      case kInitialize: {
        // Cold migration: the source is powered off first (its power state is restored on the target).
        const model::Vm* source = lab_.find_vm(vm.source_id);
        auto next = then_fail_or([this](Run& r, std::size_t i) { complete_step(r, i, kInitialize); });
        double delay = lab_.spec().kube.schedule_delay_s;
        if (source && source->power == model::PowerState::powered_on) {
          std::weak_ptr<Controller> weak = shared_from_this();
          auto off = lab_.power_off(vm.source_id, [weak, next, delay](Expected<void>) {
            auto self = weak.lock();
            if (self && self->alive_) self->lab_.schedule(delay, next);
          });
          if (off) break;
        }
        vm.timer = lab_.schedule(delay, next);
        break;
      }
      case kDiskTransfer: {
        create_volume(run, vm);
        publish(run);
        const model::Node* node = lab_.find_node(vm.node);
        const model::Datastore* target_ds = lab_.find_datastore(lab_.spec().kube.datastore);
        model::Lab::DataFlowRequest request;
        request.host_ids = {vm.source_host_id};
        if (node) request.host_ids.push_back(node->host_id);
        request.datastore_ids = {vm.source_datastore_id};
        if (target_ds) request.datastore_ids.push_back(target_ds->id);
        // An injected transfer failure surfaces half-way through the copy, as a broken VDDK read would.
        request.mb = vm.steps[kDiskTransfer].total * (failure ? 0.5 : 1.0);
        vm.flow_mb = request.mb;
        vm.flow_scale = 1;
        auto done = then_fail_or([this](Run& r, std::size_t i) { complete_step(r, i, kDiskTransfer); });
        auto flow = lab_.start_data_flow(request, [done](Expected<void>) { done(); });
        if (!flow) {
          fail_step(run, index, step, flow.error().message);
          return;
        }
        vm.flow = *flow;
        ensure_ticker();
        break;
      }
      case kImageConversion: {
        // virt-v2v: the conversion pod starts, then reads the guest's OS files from the new volume.
        const model::GuestProfile* profile = lab_.find_profile(vm.profile);
        double os_mb = 0;
        if (profile) {
          for (const auto& phase : profile->phases) os_mb += phase.mb_read;
        }
        auto done = then_fail_or([this](Run& r, std::size_t i) { complete_step(r, i, kImageConversion); });
        auto convert = guarded(key, run.uid, index, step, [this, os_mb, done](Run& r, std::size_t i) {
          VmRun& v = r.vms[i];
          const model::Node* node = lab_.find_node(v.node);
          const model::Datastore* target_ds = lab_.find_datastore(lab_.spec().kube.datastore);
          model::Lab::DataFlowRequest request;
          if (node) request.host_ids.push_back(node->host_id);
          if (target_ds) request.datastore_ids.push_back(target_ds->id);
          request.mb = os_mb;
          if (request.host_ids.empty() && request.datastore_ids.empty()) {
            done();
            return;
          }
          auto flow = lab_.start_data_flow(request, [done](Expected<void>) { done(); });
          if (!flow) {
            fail_step(r, i, kImageConversion, flow.error().message);
            return;
          }
          v.flow = *flow;
          v.flow_mb = 0;  // no MB progress on this step
        });
        vm.timer = lab_.schedule(lab_.spec().kube.launcher_start_s, convert);
        break;
      }
      case kVirtualMachineCreation: {
        auto create = then_fail_or([this](Run& r, std::size_t i) {
          std::string error = create_target_vm(r, r.vms[i]);
          if (!error.empty()) {
            fail_step(r, i, kVirtualMachineCreation, error);
          } else {
            complete_step(r, i, kVirtualMachineCreation);
          }
        });
        vm.timer = lab_.schedule(lab_.spec().kube.schedule_delay_s, create);
        break;
      }
      default:
        break;
    }
    publish(run);
  }

  void complete_step(Run& run, std::size_t index, Step step) {
    VmRun& vm = run.vms[index];
    if (vm.flow) lab_.cancel_data_flow(vm.flow);  // already complete: forgets it
    vm.flow = 0;
    vm.timer = 0;
    StepRun& s = vm.steps[step];
    s.completed = front_.now();
    s.completed_units = s.total;
    if (step == kDiskTransfer) finish_volume(run, vm, true, "");
    if (step + 1 < kStepCount) {
      begin_step(run, index, static_cast<Step>(step + 1));
      return;
    }
    finish_vm(run, index, "Succeeded");
  }

  void fail_step(Run& run, std::size_t index, Step step, const std::string& reason) {
    VmRun& vm = run.vms[index];
    if (vm.flow) {
      update_progress(vm);
      lab_.cancel_data_flow(vm.flow);
    }
    vm.flow = 0;
    vm.timer = 0;
    StepRun& s = vm.steps[step];
    s.completed = front_.now();
    s.error = reason;
    vm.error_phase = kStepItinerary[step];
    if (step == kDiskTransfer) finish_volume(run, vm, false, reason);
    finish_vm(run, index, "Failed");
  }

  void finish_vm(Run& run, std::size_t index, const std::string& result) {
    VmRun& vm = run.vms[index];
    vm.done = true;
    vm.result = result;
    vm.itinerary = "Completed";
    vm.completed = front_.now();
    if (vm.active) {
      vm.active = false;
      --inflight_;
    }
    vm.queued = false;
    publish(run);
    if (std::all_of(run.vms.begin(), run.vms.end(), [](const VmRun& v) { return v.done; })) finish_run(run);
    pump();
  }

  void stop_work(VmRun& vm) {
    if (vm.flow) lab_.cancel_data_flow(vm.flow);
    if (vm.timer) lab_.cancel_scheduled(vm.timer);
    vm.flow = 0;
    vm.timer = 0;
  }

  void cancel_vm(Run& run, std::size_t index) {
    VmRun& vm = run.vms[index];
    if (vm.done) return;
    if (vm.flow) update_progress(vm);
    stop_work(vm);
    if (vm.active && vm.steps[vm.step].started && !vm.steps[vm.step].completed) {
      vm.steps[vm.step].completed = front_.now();
    }
    if (vm.active && vm.step == kDiskTransfer) finish_volume(run, vm, false, "canceled");
    finish_vm(run, index, "Canceled");
  }

  void apply_cancel(Run& run, const json& migration) {
    const json& cancel = field(migration, {"spec", "cancel"});
    if (!cancel.is_array() || run.finished) return;
    for (const auto& ref : cancel) {
      std::string id = ref.value("id", "");
      std::string name = ref.value("name", "");
      for (std::size_t i = 0; i < run.vms.size(); ++i) {
        const VmRun& vm = run.vms[i];
        if ((!id.empty() && id == vm.source_id) || (id.empty() && !name.empty() && name == vm.source_name)) {
          cancel_vm(run, i);
        }
      }
    }
  }

  void stop_run(Run& run, const std::string&) {
    for (std::size_t i = 0; i < run.vms.size(); ++i) cancel_vm(run, i);
    if (!run.finished) finish_run(run);
  }

  void finish_run(Run& run) {
    if (run.finished) return;
    run.finished = true;
    run.completed = front_.now();
    int failed = 0, succeeded = 0;
    for (const auto& vm : run.vms) {
      failed += vm.result == "Failed";
      succeeded += vm.result == "Succeeded";
    }
    run.result = failed > 0 ? "Failed" : succeeded > 0 ? "Succeeded" : "Canceled";
    std::string plan_message = run.result == "Failed"      ? "The plan execution has FAILED."
                               : run.result == "Succeeded" ? "The plan execution has SUCCEEDED."
                                                           : "The plan execution has been CANCELED.";
    std::string migration_message = run.result == "Failed"      ? "The migration has FAILED."
                                    : run.result == "Succeeded" ? "The migration has SUCCEEDED."
                                                                : "The migration has been CANCELED.";
    std::string now = ts();
    json plan_condition = {{"type", run.result},      {"status", "True"},          {"category", "Advisory"},
                           {"message", plan_message}, {"lastTransitionTime", now}, {"durable", true}};
    run.history["conditions"] = json::array({plan_condition});
    publish(run);
    if (!run.plan_gone) {
      front_.modify(Kind::forklift_plans, run.plan_ns, run.plan_name, [&](json& o) {
        json& status = o["status"];
        json kept = json::array();
        for (const auto& c : status.value("conditions", json::array())) {
          if (!execution_condition(c.value("type", ""))) kept.push_back(c);
        }
        kept.push_back(plan_condition);
        status["conditions"] = kept;
      });
    }
    if (!run.migration_gone) {
      if (auto migration = front_.store.get(Kind::forklift_migrations, run.ns, run.name)) {
        std::vector<Cond> conditions = {{"Ready", "", "Required", "The migration is ready."},
                                        {run.result, "", "Required", migration_message, {}, true}};
        write_conditions(Kind::forklift_migrations, migration, conditions);
      }
    }
    schedule_reconcile();
  }

  // ---- Volumes and the target VM ----
  void create_volume(Run& run, VmRun& vm) {
    const auto& nodes = lab_.nodes();
    if (!nodes.empty()) vm.node = nodes[node_cursor_++ % nodes.size()].spec.name;
    ensure_namespace(run.target_ns);
    static constexpr char kAlphabet[] = "bcdfghjklmnpqrstvwxz2456789";
    std::string suffix;
    for (int i = 0; i < 5; ++i) suffix.push_back(kAlphabet[front_.rng() % (sizeof(kAlphabet) - 1)]);
    vm.volume_name = fmt::format("{}-{}-{}", run.plan_name, vm.source_id, suffix);
    if (vm.volume_name.size() > 63) vm.volume_name = vm.volume_name.substr(vm.volume_name.size() - 63);
    std::string size = fmt::format("{}Gi", static_cast<long long>(std::ceil(vm.disk_gb)));
    json labels = {{"migration", run.uid}, {"plan", run.plan_uid}, {"vmID", vm.source_id}};
    json dv = {
        {"apiVersion", "cdi.kubevirt.io/v1beta1"},
        {"kind", "DataVolume"},
        {"metadata",
         {{"name", vm.volume_name},
          {"namespace", run.target_ns},
          {"labels", labels},
          {"annotations", {{"cdi.kubevirt.io/storage.bind.immediate.requested", "true"}}}}},
        {"spec",
         {{"source",
           {{"vddk",
             {{"backingFile", backing_file(vm)},
              {"url", run.provider_url},
              {"uuid", vm.source_id},
              {"secretRef", run.secret_name}}}}},
          {"storage",
           {{"resources", {{"requests", {{"storage", size}}}}}, {"storageClassName", run.storage_class}}}}},
        {"status", {{"phase", "ImportInProgress"}, {"progress", "0.00%"}, {"restartCount", 0}}}};
    auto stored = front_.insert(Kind::data_volumes, std::move(dv));
    json owner = {{"apiVersion", "cdi.kubevirt.io/v1beta1"},
                  {"kind", "DataVolume"},
                  {"name", vm.volume_name},
                  {"uid", stored->object["metadata"].value("uid", "")},
                  {"controller", true},
                  {"blockOwnerDeletion", true}};
    json pvc = {{"apiVersion", "v1"},
                {"kind", "PersistentVolumeClaim"},
                {"metadata",
                 {{"name", vm.volume_name},
                  {"namespace", run.target_ns},
                  {"labels", labels},
                  {"annotations", {{kProfileAnnotation, vm.profile}}},
                  {"ownerReferences", json::array({owner})}}},
                {"spec",
                 {{"accessModes", {"ReadWriteMany"}},
                  {"resources", {{"requests", {{"storage", size}}}}},
                  {"storageClassName", run.storage_class},
                  {"volumeMode", "Block"}}},
                {"status", {{"phase", "Pending"}}}};
    if (!front_.store.get(Kind::persistent_volume_claims, run.target_ns, vm.volume_name)) {
      front_.insert(Kind::persistent_volume_claims, std::move(pvc));
    }
  }

  static std::string backing_file(const VmRun& vm) {
    return fmt::format("[{}] {}/{}.vmdk", vm.source_datastore_name, vm.source_name, vm.source_name);
  }

  void finish_volume(Run& run, VmRun& vm, bool ok, const std::string& reason) {
    if (vm.volume_name.empty()) return;
    std::string now = ts();
    front_.modify(Kind::data_volumes, run.target_ns, vm.volume_name, [&](json& o) {
      json& status = o["status"];
      status["phase"] = ok ? "Succeeded" : "Failed";
      if (ok) status["progress"] = "100.0%";
      json conditions = json::array();
      conditions.push_back({{"type", "Bound"},
                            {"status", "True"},
                            {"reason", "Bound"},
                            {"lastTransitionTime", now},
                            {"lastHeartbeatTime", now}});
      conditions.push_back({{"type", "Ready"},
                            {"status", ok ? "True" : "False"},
                            {"reason", ok ? "" : "Error"},
                            {"message", ok ? "" : reason},
                            {"lastTransitionTime", now},
                            {"lastHeartbeatTime", now}});
      conditions.push_back({{"type", "Running"},
                            {"status", "False"},
                            {"reason", ok ? "Completed" : "Error"},
                            {"lastTransitionTime", now},
                            {"lastHeartbeatTime", now}});
      status["conditions"] = conditions;
      status["claimName"] = vm.volume_name;
    });
    if (ok) {
      front_.modify(Kind::persistent_volume_claims, run.target_ns, vm.volume_name, [&](json& o) {
        o["status"]["phase"] = "Bound";
        o["status"]["accessModes"] = o["spec"].value("accessModes", json::array({"ReadWriteMany"}));
        std::string size = string_field(o, {"spec", "resources", "requests", "storage"});
        if (!size.empty()) o["status"]["capacity"] = {{"storage", size}};
      });
    }
  }

  void ensure_namespace(const std::string& ns) {
    if (ns.empty() || front_.store.get(Kind::namespaces, "", ns)) return;
    json object = {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", ns}}}};
    (void)front_.create(Kind::namespaces, "", object.dump(), false);
  }

  // Creates the KubeVirt VirtualMachine; returns an error message when it cannot.
  std::string create_target_vm(Run& run, VmRun& vm) {
    const model::Vm* source = lab_.find_vm(vm.source_id);
    const model::GuestProfile* profile = lab_.find_profile(vm.profile);
    int cpus = source ? source->cpu_count : (profile ? profile->cpu_count : 2);
    int memory_mb = source ? source->memory_mb : (profile ? profile->memory_mb : 4096);
    json labels = json::object();
    const json& plan_labels = field(run.plan, {"metadata", "labels"});
    if (plan_labels.is_object()) labels.update(plan_labels);
    const json& target_labels = field(run.plan, {"spec", "targetLabels"});
    if (target_labels.is_object()) labels.update(target_labels);
    labels["migration"] = run.uid;
    labels["plan"] = run.plan_uid;
    labels["vmID"] = vm.source_id;
    json network = {{"name", "net-0"}};
    json interface = {{"name", "net-0"}, {"model", "virtio"}};
    if (run.network_type == "multus" && !run.network_name.empty()) {
      network["multus"] = {{"networkName", run.network_name}};
      interface["bridge"] = json::object();
    } else {
      network["pod"] = json::object();
      interface["masquerade"] = json::object();
    }
    json domain = {{"cpu", {{"cores", cpus}, {"sockets", 1}, {"threads", 1}}},
                   {"memory", {{"guest", fmt::format("{}Mi", memory_mb)}}},
                   {"machine", {{"type", "q35"}}},
                   {"devices",
                    {{"disks", json::array({{{"name", "vol-0"}, {"disk", {{"bus", "virtio"}}}}})},
                     {"interfaces", json::array({interface})}}}};
    json vm_object = {
        {"apiVersion", "kubevirt.io/v1"},
        {"kind", "VirtualMachine"},
        {"metadata",
         {{"name", vm.target_name},
          {"namespace", run.target_ns},
          {"labels", labels},
          {"annotations",
           {{kProfileAnnotation, vm.profile}, {"forklift.konveyor.io/source-vm-id", vm.source_id}}}}},
        {"spec",
         {{"runStrategy", vm.restore_on ? "Always" : "Halted"},
          {"template",
           {{"metadata", {{"labels", labels}}},
            {"spec",
             {{"domain", domain},
              {"networks", json::array({network})},
              {"volumes", json::array({{{"name", "vol-0"},
                                        {"persistentVolumeClaim", {{"claimName", vm.volume_name}}}}})}}}}}}}};
    auto created = front_.create(Kind::virtual_machines, run.target_ns, vm_object.dump(), false);
    if (failed(created)) {
      const ApiError& error = std::get<ApiError>(created);
      return error.status.value("message", "the VirtualMachine could not be created");
    }
    const ObjectPtr& stored = std::get<ObjectPtr>(created);
    // The volume belongs to the VM now: deleting the VM removes its DataVolume and PVC.
    json owner = {{"apiVersion", "kubevirt.io/v1"},
                  {"kind", "VirtualMachine"},
                  {"name", vm.target_name},
                  {"uid", stored->object["metadata"].value("uid", "")},
                  {"controller", true},
                  {"blockOwnerDeletion", true}};
    front_.modify(Kind::data_volumes, run.target_ns, vm.volume_name,
                  [&](json& o) { o["metadata"]["ownerReferences"] = json::array({owner}); });
    // The disk is the source's: the guest agent configuration baked into it comes along.
    auto model_id = front_.vm_controller.model_id(run.target_ns, vm.target_name);
    if (source && model_id && !source->guestinfo.empty()) {
      auto guestinfo = source->guestinfo;
      lab_.modify_vm(*model_id, [&](model::Vm& target) {
        for (const auto& [k, v] : guestinfo) target.guestinfo.emplace(k, v);
      });
    }
    return {};
  }

  // ---- Progress ----
  void update_progress(VmRun& vm) {
    if (!vm.flow || vm.step != kDiskTransfer) return;
    double moved = lab_.data_flow_done_mb(vm.flow);
    StepRun& s = vm.steps[kDiskTransfer];
    s.completed_units = std::min(s.total, std::floor(moved * vm.flow_scale));
  }

  void ensure_ticker() {
    if (ticker_) return;
    ticker_ = true;
    std::weak_ptr<Controller> weak = shared_from_this();
    lab_.schedule(front_.options.progress_interval_s, [weak] {
      auto self = weak.lock();
      if (self && self->alive_) self->tick();
    });
  }

  void tick() {
    ticker_ = false;
    bool any = false;
    for (auto& [key, run] : runs_) {
      bool changed = false;
      for (auto& vm : run.vms) {
        if (vm.done || vm.step != kDiskTransfer || !vm.flow) continue;
        double before = vm.steps[kDiskTransfer].completed_units;
        update_progress(vm);
        any = true;
        if (vm.steps[kDiskTransfer].completed_units != before) {
          changed = true;
          StepRun& s = vm.steps[kDiskTransfer];
          double percent = s.total > 0 ? 100.0 * s.completed_units / s.total : 0;
          front_.modify(Kind::data_volumes, run.target_ns, vm.volume_name,
                        [&](json& o) { o["status"]["progress"] = fmt::format("{:.2f}%", percent); });
        }
      }
      if (changed) publish(run);
    }
    if (any) ensure_ticker();
  }

  // ---- Status ----
  json step_json(const VmRun& vm, Step step) const {
    const StepRun& s = vm.steps[step];
    std::string phase = !s.started ? "Pending" : (s.completed && s.error.empty() ? "Completed" : "Running");
    if (vm.result == "Canceled" && s.started && s.completed && s.error.empty() &&
        s.completed_units < s.total) {
      phase = "Running";  // interrupted: Forklift leaves the step as it was
    }
    auto total = static_cast<long long>(s.total);
    auto done = static_cast<long long>(s.completed_units);
    json out = {{"name", kStepNames[step]},
                {"description", kStepDescriptions[step]},
                {"phase", phase},
                {"progress", {{"completed", done}, {"total", total}}}};
    if (s.started) out["started"] = format_time(*s.started);
    if (s.completed) out["completed"] = format_time(*s.completed);
    if (!s.error.empty()) out["error"] = {{"phase", "Running"}, {"reasons", {s.error}}};
    if (step == kDiskTransfer) {
      out["annotations"] = {{"unit", "MB"}};
      json task = {{"name", backing_file(vm)},
                   {"phase", phase},
                   {"progress", {{"completed", done}, {"total", total}}},
                   {"annotations", {{"unit", "MB"}}}};
      if (s.started) task["started"] = format_time(*s.started);
      if (s.completed) task["completed"] = format_time(*s.completed);
      if (!s.error.empty()) task["error"] = {{"phase", "Running"}, {"reasons", {s.error}}};
      out["tasks"] = json::array({task});
    }
    return out;
  }

  json vm_json(const VmRun& vm) const {
    json pipeline = json::array();
    for (std::size_t i = 0; i < kStepCount; ++i) pipeline.push_back(step_json(vm, static_cast<Step>(i)));
    json out = {{"id", vm.source_id},
                {"name", vm.source_name},
                {"phase", vm.itinerary},
                {"pipeline", pipeline},
                {"restorePowerState", vm.restore_on ? "On" : "Off"}};
    if (vm.target_name != vm.source_name) out["newName"] = vm.target_name;
    const std::string target_name = vm.ref.value("targetName", "");
    if (!target_name.empty()) out["targetName"] = target_name;
    if (vm.started) out["started"] = format_time(*vm.started);
    if (vm.completed) out["completed"] = format_time(*vm.completed);
    std::string when = vm.completed ? format_time(*vm.completed) : "";
    if (vm.result == "Failed") {
      std::vector<std::string> reasons;
      for (const auto& s : vm.steps) {
        if (!s.error.empty()) reasons.push_back(s.error);
      }
      out["error"] = {{"phase", vm.error_phase}, {"reasons", reasons}};
      out["conditions"] = json::array({{{"type", "Failed"},
                                        {"status", "True"},
                                        {"category", "Advisory"},
                                        {"message", "The VM migration has FAILED."},
                                        {"durable", true},
                                        {"lastTransitionTime", when}}});
    } else if (vm.result == "Succeeded") {
      out["conditions"] = json::array({{{"type", "Succeeded"},
                                        {"status", "True"},
                                        {"category", "Advisory"},
                                        {"message", "The VM migration has SUCCEEDED."},
                                        {"durable", true},
                                        {"lastTransitionTime", when}}});
    } else if (vm.result == "Canceled") {
      out["conditions"] = json::array({{{"type", "Canceled"},
                                        {"status", "True"},
                                        {"category", "Advisory"},
                                        {"reason", "UserRequested"},
                                        {"message", "The migration has been canceled."},
                                        {"durable", true},
                                        {"lastTransitionTime", when}}});
    }
    return out;
  }

  void publish(Run& run) {
    json vms = json::array();
    for (const auto& vm : run.vms) vms.push_back(vm_json(vm));
    std::string started = format_time(run.started.value_or(front_.now()));
    if (!run.plan_gone) {
      front_.modify(Kind::forklift_plans, run.plan_ns, run.plan_name, [&](json& o) {
        if (o["metadata"].value("uid", "") != run.plan_uid) return;
        json& migration = o["status"]["migration"];
        migration["started"] = started;
        if (run.completed) {
          migration["completed"] = format_time(*run.completed);
        } else {
          migration.erase("completed");
        }
        migration["vms"] = vms;
        json history = json::array({run.history});
        migration["history"] = history;
      });
    }
    if (!run.migration_gone) {
      front_.modify(Kind::forklift_migrations, run.ns, run.name, [&](json& o) {
        if (o["metadata"].value("uid", "") != run.uid) return;
        json& status = o["status"];
        status["started"] = started;
        if (run.completed) status["completed"] = format_time(*run.completed);
        status["vms"] = vms;
      });
    }
  }

  // ---- Ground truth ----
  json truth() const {
    json out = json::array();
    for (const auto& [key, run] : runs_) {
      json vms = json::array();
      for (const auto& vm : run.vms) {
        json steps = json::array();
        for (std::size_t i = 0; i < kStepCount; ++i) {
          const StepRun& s = vm.steps[i];
          if (!s.started) continue;
          json step = {{"name", kStepNames[i]}, {"started", *s.started}};
          if (s.completed) step["completed"] = *s.completed;
          if (!s.error.empty()) step["error"] = s.error;
          if (i == kDiskTransfer) step["mb"] = s.completed_units;
          steps.push_back(std::move(step));
        }
        json entry = {{"name", vm.source_name},
                      {"id", vm.source_id},
                      {"targetName", vm.target_name},
                      {"targetNamespace", run.target_ns},
                      {"steps", steps}};
        if (!vm.node.empty()) entry["node"] = vm.node;
        if (vm.started) entry["started"] = *vm.started;
        if (vm.completed) entry["completed"] = *vm.completed;
        if (!vm.result.empty()) entry["result"] = vm.result;
        vms.push_back(std::move(entry));
      }
      json entry = {{"migration", key}, {"plan", ObjectStore::key(run.plan_ns, run.plan_name)}, {"vms", vms}};
      if (run.started) entry["started"] = *run.started;
      if (run.completed) entry["completed"] = *run.completed;
      if (!run.result.empty()) entry["result"] = run.result;
      out.push_back(std::move(entry));
    }
    return out;
  }

  static constexpr double kReconcileDelayS = 0.05;

  KubeFront::Impl& front_;
  model::Lab& lab_;
  bool alive_ = true;
  bool reconcile_pending_ = false;
  bool ticker_ = false;
  model::SubscriptionId subscription_ = 0;
  std::map<std::string, Run> runs_;  // by Migration "ns/name"
  std::deque<std::pair<std::string, std::size_t>> queue_;
  std::size_t inflight_ = 0;
  std::size_t node_cursor_ = 0;
};

}  // namespace

std::shared_ptr<ForkliftController> make_forklift_controller(KubeFront::Impl& front) {
  auto controller = std::make_shared<Controller>(front);
  controller->start();
  return controller;
}

}  // namespace bootstorm::sim::kube

// What a Forklift migration creates in the plan's target namespace: the namespace itself, the DataVolume and
// PVC the disk is copied into (progress and phase as CDI's VDDK importer reports them) and the KubeVirt
// VirtualMachine over that volume.
#include <fmt/format.h>

#include <cmath>
#include <string>
#include <variant>

#include "simulator/kube/api_objects.hpp"
#include "simulator/kube/detail/forklift_migration_runner.hpp"

namespace bootstorm::sim::kube::forklift {
namespace {

constexpr const char* kProfileAnnotation = "sim.bootstorm.io/profile";

}  // namespace

void MigrationRunner::create_volume(Run& run, VmRun& vm) {
  const auto& nodes = lab_.nodes();
  if (!nodes.empty()) vm.node = nodes[node_cursor_++ % nodes.size()].spec.name;
  ensure_namespace(run.target_ns);
  static constexpr char kAlphabet[] = "bcdfghjklmnpqrstvwxz2456789";
  std::string suffix;
  for (int i = 0; i < 5; ++i) suffix.push_back(kAlphabet[cluster_.random() % (sizeof(kAlphabet) - 1)]);
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
  auto stored = cluster_.insert(Kind::data_volumes, std::move(dv));
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
  if (!cluster_.get(Kind::persistent_volume_claims, run.target_ns, vm.volume_name)) {
    cluster_.insert(Kind::persistent_volume_claims, std::move(pvc));
  }
}

std::string backing_file(const VmRun& vm) {
  return fmt::format("[{}] {}/{}.vmdk", vm.source_datastore_name, vm.source_name, vm.source_name);
}

void MigrationRunner::finish_volume(Run& run, VmRun& vm, bool ok, const std::string& reason) {
  if (vm.volume_name.empty()) return;
  std::string now = format_time(cluster_.now());
  cluster_.modify(Kind::data_volumes, run.target_ns, vm.volume_name, [&](json& o) {
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
    cluster_.modify(Kind::persistent_volume_claims, run.target_ns, vm.volume_name, [&](json& o) {
      o["status"]["phase"] = "Bound";
      o["status"]["accessModes"] = o["spec"].value("accessModes", json::array({"ReadWriteMany"}));
      std::string size = string_field(o, {"spec", "resources", "requests", "storage"});
      if (!size.empty()) o["status"]["capacity"] = {{"storage", size}};
    });
  }
}

void MigrationRunner::ensure_namespace(const std::string& ns) {
  if (ns.empty() || cluster_.get(Kind::namespaces, "", ns)) return;
  json object = {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", ns}}}};
  (void)cluster_.create(Kind::namespaces, "", object);
}

// Creates the KubeVirt VirtualMachine; returns an error message when it cannot.
std::string MigrationRunner::create_target_vm(Run& run, VmRun& vm) {
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
  auto created = cluster_.create(Kind::virtual_machines, run.target_ns, vm_object);
  if (std::holds_alternative<ApiError>(created)) {
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
  cluster_.modify(Kind::data_volumes, run.target_ns, vm.volume_name,
                  [&](json& o) { o["metadata"]["ownerReferences"] = json::array({owner}); });
  // The disk is the source's: the guest agent configuration baked into it comes along.
  auto target_id = cluster_.vm_model_id(run.target_ns, vm.target_name);
  if (source && target_id && !source->guestinfo.empty()) {
    auto guestinfo = source->guestinfo;
    lab_.modify_vm(*target_id, [&](model::Vm& target) {
      for (const auto& [k, v] : guestinfo) target.guestinfo.emplace(k, v);
    });
  }
  return {};
}

}  // namespace bootstorm::sim::kube::forklift

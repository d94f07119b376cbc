// virt-handler: the VirtualMachineInstance status each boot milestone of the lab model writes (Scheduled,
// Running with interfaces and volumes, the guest agent's OS info, the IP, readiness by the readiness probe),
// and the "delivered" truth of those versions once a watch writes them.
#include "simulator/kube/detail/virt_handler.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "simulator/kube/api_objects.hpp"
#include "simulator/kube/detail/api_conventions.hpp"

namespace bootstorm::sim::kube {
namespace {

using json = nlohmann::json;

int phase_rank(const std::string& phase) {
  static const char* const kOrder[] = {"",        "Pending",   "Scheduling", "Scheduled",
                                       "Running", "Succeeded", "Failed"};
  for (int i = 0; i < 7; ++i) {
    if (phase == kOrder[i]) return i;
  }
  return 0;
}

// Which model milestone makes condition Ready true: the readiness probe decides (none: the domain running).
model::Milestone ready_milestone(const json& vmi_spec) {
  const json& probe = field(vmi_spec, {"readinessProbe"});
  if (!probe.is_object()) return model::Milestone::running;
  if (probe.contains("tcpSocket") || probe.contains("httpGet")) return model::Milestone::port_open;
  return model::Milestone::guest_agent;
}

json guest_os_info(const std::string& guest_os) {
  std::string upper = guest_os;
  std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return std::toupper(c); });
  if (upper.find("WINDOWS") != std::string::npos) {
    bool server = upper.find("SERVER") != std::string::npos;
    return {{"id", "mswindows"},
            {"kernelRelease", server ? "20348" : "19045"},
            {"kernelVersion", "10.0"},
            {"machine", "x86_64"},
            {"name", server ? "Microsoft Windows Server" : "Microsoft Windows"},
            {"prettyName", server ? "Windows Server 2022 Datacenter" : "Windows 10 Enterprise"},
            {"version", server ? "2022" : "10"},
            {"versionId", server ? "2022" : "10"}};
  }
  return {{"id", "rhel"},
          {"kernelRelease", "5.14.0-427.13.1.el9_4.x86_64"},
          {"kernelVersion", "#1 SMP PREEMPT_DYNAMIC"},
          {"machine", "x86_64"},
          {"name", "Red Hat Enterprise Linux"},
          {"prettyName", "Red Hat Enterprise Linux 9.4 (Plow)"},
          {"version", "9.4 (Plow)"},
          {"versionId", "9.4"}};
}

}  // namespace

VirtHandler::VirtHandler(ObjectStore& store, model::Lab& lab, ObjectPublisher& publisher,
                         EventRecorder& events, VmController& vms, std::mt19937_64& rng)
    : store_(store), lab_(lab), publisher_(publisher), events_(events), vms_(vms), rng_(rng) {}

void VirtHandler::on_lab_event(const model::VmEvent& event) {
  if (event.type == model::VmEvent::Type::deleted || !event.milestone) return;
  auto found = vms_.vm_of(event.vm.id);
  if (!found) return;
  const auto& [ns, name] = *found;
  auto vmi = store_.get(Kind::virtual_machine_instances, ns, name);
  if (!vmi) return;
  const model::Vm& vm = event.vm;
  model::Milestone milestone = *event.milestone;
  double at = vm.milestone(milestone).value_or(publisher_.now());
  std::string ts = format_time(at);
  model::Milestone ready_at = ready_milestone(vmi->object["spec"]);
  // port_open and beacon change the VMI only when they make it Ready: skip the copy-and-compare otherwise.
  if (milestone == model::Milestone::beacon ||
      (milestone == model::Milestone::port_open && ready_at != milestone)) {
    return;
  }

  auto advance_phase = [&](json& status, const std::string& phase) {
    std::string current = status.value("phase", "");
    if (final_phase(current) || phase_rank(phase) <= phase_rank(current)) return;
    enter_phase(status, phase, ts);
  };
  std::string started_event;
  auto updated = publisher_.modify(Kind::virtual_machine_instances, ns, name, [&](json& object) {
    json& status = object["status"];
    if (final_phase(status.value("phase", ""))) return;
    switch (milestone) {
      case model::Milestone::scheduled: {
        advance_phase(status, "Scheduled");
        status["nodeName"] = vm.node;
        object["metadata"]["labels"]["kubevirt.io/nodeName"] = vm.node;
        status["activePods"] = {{object["metadata"].value("uid", ""), vm.node}};
        set_condition(status, "PodScheduled", true, "", "", ts);
        break;
      }
      case model::Milestone::running: {
        if (status.value("phase", "") != "Running") started_event = "Started";
        advance_phase(status, "Running");
        if (!vm.node.empty()) status["nodeName"] = vm.node;
        json interfaces = json::array();
        const json& declared = field(object, {"spec", "domain", "devices", "interfaces"});
        std::vector<std::string> names;
        if (declared.is_array()) {
          for (const auto& i : declared) names.push_back(i.value("name", "default"));
        }
        if (names.empty()) names.push_back("default");
        for (std::size_t i = 0; i < names.size(); ++i) {
          std::string mac = fmt::format("02:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}", (rng_() & 0xFF),
                                        (rng_() & 0xFF), (rng_() & 0xFF), (rng_() & 0xFF), i);
          interfaces.push_back({{"name", names[i]},
                                {"mac", mac},
                                {"infoSource", "domain"},
                                {"queueCount", 1},
                                {"linkState", "up"},
                                {"podInterfaceName", i == 0 ? "eth0" : fmt::format("net{}", i)}});
        }
        status["interfaces"] = interfaces;
        status["migrationMethod"] = "BlockMigration";
        status["migrationTransport"] = "Unix";
        status["volumeStatus"] = json::array();
        const json& vols = field(object, {"spec", "volumes"});
        if (vols.is_array()) {
          for (const auto& volume : vols) {
            json entry = {{"name", volume.value("name", "")}, {"target", ""}};
            if (volume.contains("dataVolume") || volume.contains("persistentVolumeClaim")) {
              std::string claim = volume.contains("dataVolume")
                                      ? string_field(volume, {"dataVolume", "name"})
                                      : string_field(volume, {"persistentVolumeClaim", "claimName"});
              entry["persistentVolumeClaimInfo"] = {
                  {"claimName", claim}, {"accessModes", {"ReadWriteMany"}}, {"volumeMode", "Block"}};
            }
            status["volumeStatus"].push_back(std::move(entry));
          }
        }
        set_condition(status, "LiveMigratable", true, "", "", ts);
        if (ready_at == model::Milestone::running) set_condition(status, "Ready", true, "", "", ts);
        break;
      }
      case model::Milestone::guest_agent: {
        set_condition(status, "AgentConnected", true, "", "", ts);
        status["guestOSInfo"] = guest_os_info(vm.guest_os);
        if (status.contains("interfaces") && status["interfaces"].is_array()) {
          for (std::size_t i = 0; i < status["interfaces"].size(); ++i) {
            status["interfaces"][i]["infoSource"] = "domain, guest-agent";
            status["interfaces"][i]["interfaceName"] = fmt::format("eth{}", i);
          }
        }
        if (ready_at == model::Milestone::guest_agent) set_condition(status, "Ready", true, "", "", ts);
        break;
      }
      case model::Milestone::ip_assigned: {
        if (!status.contains("interfaces") || !status["interfaces"].is_array() ||
            status["interfaces"].empty()) {
          status["interfaces"] = json::array({{{"name", "default"}, {"infoSource", "domain, guest-agent"}}});
        }
        status["interfaces"][0]["ipAddress"] = vm.ip;
        status["interfaces"][0]["ipAddresses"] = {vm.ip};
        break;
      }
      case model::Milestone::port_open: {
        if (ready_at == model::Milestone::port_open) set_condition(status, "Ready", true, "", "", ts);
        break;
      }
      case model::Milestone::beacon:
        break;
    }
  });
  if (updated && updated != vmi) {
    // This version carries the milestone: the watch that first writes it stamps the truth's "delivered".
    if (undelivered_.size() >= kMaxUndelivered) undelivered_.clear();  // nobody watches: do not grow forever
    undelivered_.emplace(updated->resource_version, std::make_pair(vm.id, milestone));
  }
  if (updated && !started_event.empty()) {
    events_.record(updated->object, "Normal", "Started", "VirtualMachineInstance started.", "virt-handler",
                   vm.node);
  }
  vms_.update_status(ns, name);
}

VirtHandler::Delivered VirtHandler::take_milestones(const std::vector<std::uint64_t>& resource_versions) {
  Delivered taken;
  if (undelivered_.empty()) return taken;
  for (std::uint64_t rv : resource_versions) {
    auto it = undelivered_.find(rv);
    if (it == undelivered_.end()) continue;
    taken.push_back(std::move(it->second));
    undelivered_.erase(it);
  }
  return taken;
}

VirtHandler::Delivered VirtHandler::mark_delivered(const std::vector<std::uint64_t>& resource_versions) {
  Delivered stamped = take_milestones(resource_versions);
  const double at = lab_.now();
  for (const auto& [id, milestone] : stamped) lab_.note_milestone_delivered(id, milestone, at);
  return stamped;
}

void VirtHandler::mark_written(const Delivered& delivered) {
  if (delivered.empty()) return;
  const double at = lab_.now();
  for (const auto& [id, milestone] : delivered) lab_.note_milestone_written(id, milestone, at);
}
}  // namespace bootstorm::sim::kube

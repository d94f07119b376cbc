// What vCenter learns from inside the guest: VMware Tools state, guest identity and interfaces (503 until
// Tools runs), and guest customization — validated when set, applied at the next power-on, where the beacon
// settings of its cloud-init user data become the VM's guestinfo.
#include <fmt/format.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "common/rfc3339.hpp"
#include "simulator/vcenter/detail/vapi_responses.hpp"
#include "simulator/vcenter/detail/vcenter_front_impl.hpp"

namespace bootstorm::sim::vcenter {

using http::ServerRequest;
using http::ServerResponse;

namespace {

// What is wrong with a guest.CustomizationSpec (the schema's rules plus the documented "exactly one of"
// windows_config / linux_config / cloud_config and the 512 KiB cloud-init limits); nullopt when valid.
std::optional<std::string> customization_spec_problem(const json& spec) {
  if (!spec.is_object()) return "'spec' must be an object.";
  for (const auto& [key, value] : spec.items()) {
    if (key != "configuration_spec" && key != "global_DNS_settings" && key != "interfaces") {
      return fmt::format("Unexpected field 'spec.{}'.", key);
    }
  }
  if (!spec.contains("configuration_spec") || !spec["configuration_spec"].is_object()) {
    return "'spec.configuration_spec' is required.";
  }
  if (!spec.contains("global_DNS_settings") || !spec["global_DNS_settings"].is_object()) {
    return "'spec.global_DNS_settings' is required.";
  }
  if (!spec.contains("interfaces") || !spec["interfaces"].is_array()) return "'spec.interfaces' is required.";
  const json& config = spec["configuration_spec"];
  int kinds = 0;
  for (const auto& [key, value] : config.items()) {
    if (key != "windows_config" && key != "linux_config" && key != "cloud_config") {
      return fmt::format("Unexpected field 'configuration_spec.{}'.", key);
    }
    if (!value.is_object()) return fmt::format("'configuration_spec.{}' must be an object.", key);
    ++kinds;
  }
  if (kinds != 1) return "Exactly one of windows_config, linux_config and cloud_config must be set.";
  if (config.contains("cloud_config")) {
    const json& cloud = config["cloud_config"];
    if (cloud.value("type", "") != "CLOUDINIT") return "'cloud_config.type' must be CLOUDINIT.";
    if (!cloud.contains("cloudinit") || !cloud["cloudinit"].is_object())
      return "'cloud_config.cloudinit' is required.";
    const json& init = cloud["cloudinit"];
    constexpr std::size_t kMaxBytes = 524288;
    if (!init.contains("metadata") || !init["metadata"].is_string())
      return "'cloudinit.metadata' is required.";
    if (init["metadata"].get_ref<const std::string&>().size() > kMaxBytes)
      return "'cloudinit.metadata' exceeds 524288 bytes.";
    if (init.contains("userdata")) {
      if (!init["userdata"].is_string()) return "'cloudinit.userdata' must be a string.";
      if (init["userdata"].get_ref<const std::string&>().size() > kMaxBytes) {
        return "'cloudinit.userdata' exceeds 524288 bytes.";
      }
    }
  }
  if (config.contains("linux_config")) {
    const json& linux = config["linux_config"];
    if (!linux.contains("hostname") || !linux["hostname"].is_object() ||
        !linux["hostname"].contains("type")) {
      return "'linux_config.hostname' with a type is required.";
    }
    if (!linux.contains("domain") || !linux["domain"].is_string())
      return "'linux_config.domain' is required.";
    if (linux.contains("script_text") && linux["script_text"].is_string() &&
        linux["script_text"].get_ref<const std::string&>().size() > 1500) {
      return "'linux_config.script_text' exceeds 1500 bytes.";
    }
  }
  return std::nullopt;
}

// BOOTSTORM_BEACON_URL=..., BOOTSTORM_BEACON_TOKEN=..., BOOTSTORM_VM_NAME=... lines (the beacon.env the
// user data writes, deploy/guest/linux) -> guestinfo keys.
std::map<std::string, std::string> beacon_guestinfo(std::string_view text) {
  static const std::vector<std::pair<std::string_view, std::string_view>> kKeys = {
      {"BOOTSTORM_BEACON_URL=", model::kBeaconUrlKey},
      {"BOOTSTORM_BEACON_TOKEN=", model::kBeaconTokenKey},
      {"BOOTSTORM_VM_NAME=", model::kBeaconVmKey}};
  std::map<std::string, std::string> out;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
    if (line.rfind("export ", 0) == 0) line.remove_prefix(7);
    for (const auto& [prefix, key] : kKeys) {
      if (line.rfind(prefix, 0) != 0) continue;
      std::string_view value = line.substr(prefix.size());
      if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') &&
          value.back() == value.front()) {
        value = value.substr(1, value.size() - 2);
      }
      out[std::string(key)] = std::string(value);
    }
  }
  if (!out.count(std::string(model::kBeaconUrlKey))) out.clear();
  return out;
}

}  // namespace

std::string guest_family(std::string_view guest_os) {
  if (guest_os.find("WIN") == 0) return "WINDOWS";
  if (guest_os.find("DARWIN") == 0) return "DARWIN";
  if (guest_os.find("SOLARIS") == 0) return "SOLARIS";
  if (guest_os.find("NETWARE") == 0) return "NETWARE";
  if (guest_os == "OTHER" || guest_os == "OTHER_64" || guest_os == "DOS") return "OTHER";
  return "LINUX";
}

std::string mac_for(std::string_view vm_id) {
  std::uint32_t h = 2166136261u;
  for (char c : vm_id) h = (h ^ static_cast<unsigned char>(c)) * 16777619u;
  return fmt::format("00:50:56:{:02x}:{:02x}:{:02x}", (h >> 16) & 0x3F, (h >> 8) & 0xFF, h & 0xFF);
}

json VcenterFront::Impl::tools_info(const model::Vm& vm) const {
  const bool windows = guest_family(vm.guest_os) == "WINDOWS";
  const bool running = vm.power == model::PowerState::powered_on && vm.tools == model::ToolsState::running;
  return json{{"auto_update_supported", false},
              {"install_attempt_count", 0},
              {"version_number", 12352},
              {"version", "12352"},
              {"upgrade_policy", "MANUAL"},
              {"version_status", "CURRENT"},
              {"install_type", windows ? "MSI" : "OPEN_VM_TOOLS"},
              {"run_state", running ? "RUNNING" : "NOT_RUNNING"}};
}

ServerResponse VcenterFront::Impl::tools_not_running(const model::Vm& vm) {
  return api_error(503, "SERVICE_UNAVAILABLE", "com.vmware.api.vcenter.vm.guest.tools_not_running",
                   fmt::format("VMware Tools is not running in virtual machine '{}'.", vm.id), {vm.id});
}

ServerResponse VcenterFront::Impl::guest_identity(const model::Vm& vm) {
  if (vm.power != model::PowerState::powered_on || vm.tools != model::ToolsState::running) {
    return tools_not_running(vm);
  }
  json body{{"name", vm.guest_os},
            {"family", guest_family(vm.guest_os)},
            {"full_name", json{{"id", "vmsg.guestos." + vm.guest_os},
                               {"default_message", vm.guest_os},
                               {"args", json::array()}}},
            {"host_name", vm.host_name.empty() ? vm.name : vm.host_name}};
  if (!vm.ip.empty()) body["ip_address"] = vm.ip;
  return json_response(200, body);
}

ServerResponse VcenterFront::Impl::guest_interfaces(const model::Vm& vm) {
  if (vm.power != model::PowerState::powered_on || vm.tools != model::ToolsState::running) {
    return tools_not_running(vm);
  }
  json addresses = json::array();
  if (!vm.ip.empty()) {
    addresses.push_back(
        json{{"ip_address", vm.ip}, {"prefix_length", 16}, {"origin", "DHCP"}, {"state", "PREFERRED"}});
  }
  return json_response(200, json::array({json{{"nic", "4000"},
                                              {"mac_address", mac_for(vm.id)},
                                              {"ip", json{{"ip_addresses", addresses}}}}}));
}

ServerResponse VcenterFront::Impl::set_customization(const ServerRequest& req, const model::Vm& vm) {
  if (vm.power != model::PowerState::powered_off) {
    return api_error(
        400, "NOT_ALLOWED_IN_CURRENT_STATE", "com.vmware.api.vcenter.vm.guest.customization.powered_on",
        fmt::format("Virtual machine '{}' must be powered off to set a customization.", vm.id), {vm.id});
  }
  const json body = json::parse(req.body, nullptr, false);
  if (body.is_discarded() || !body.is_object())
    return invalid_argument("The request body is not a JSON object.");
  for (const auto& [key, value] : body.items()) {
    if (key != "name" && key != "spec")
      return invalid_argument(fmt::format("Unexpected field '{}' in the set spec.", key));
  }
  if (body.contains("name") && body.contains("spec")) {
    return invalid_argument("Only one of 'name' and 'spec' may be set.");
  }
  if (body.contains("name")) {
    if (!body["name"].is_string()) return invalid_argument("'name' must be a string.");
    // The lab has no customization-spec inventory (/api/vcenter/guest/customization-specs is empty).
    return not_found("customization specification", body["name"].get<std::string>());
  }
  if (!body.contains("spec")) {  // neither: clears any pending customization
    customizations.erase(vm.id);
    return no_content();
  }
  if (auto problem = customization_spec_problem(body["spec"])) return invalid_argument(*problem);
  customizations[vm.id] = Customization{body["spec"]};
  return no_content();
}

// The customization starts with the power-on: the guest's customization engine (cloud-init with the
// VMware datasource, or the Linux customization script) reads it from the VM's configuration and writes the
// bootstorm beacon settings where the agent finds them — modelled as the VM's guestinfo keys that the lab's
// beacon hook reads when the guest reaches logon.
void VcenterFront::Impl::begin_customization(const std::string& vm_id) {
  auto it = customizations.find(vm_id);
  const model::Vm* vm = lab.find_vm(vm_id);
  if (it == customizations.end() || !vm || it->second.status != "PENDING") return;
  Customization& c = it->second;
  c.status = "RUNNING";
  c.start_time = lab.now();
  const json& config = c.spec["configuration_spec"];
  const bool windows = guest_family(vm->guest_os) == "WINDOWS";
  if (windows != config.contains("windows_config")) {
    c.status = "FAILED";
    c.end_time = c.start_time;
    c.error = fmt::format("The customization does not apply to guest OS {}.", vm->guest_os);
    return;
  }
  std::string text;
  if (config.contains("cloud_config")) text = config["cloud_config"]["cloudinit"].value("userdata", "");
  if (config.contains("linux_config")) text = config["linux_config"].value("script_text", "");
  auto keys = beacon_guestinfo(text);
  if (keys.empty()) return;
  lab.modify_vm(vm_id, [&](model::Vm& target) {
    for (auto& [k, v] : keys) target.guestinfo[k] = v;
  });
}

json VcenterFront::Impl::customization_info(const model::Vm& vm) {
  auto it = customizations.find(vm.id);
  if (it == customizations.end()) return json{{"status", "IDLE"}};
  Customization& c = it->second;
  if (c.status == "RUNNING" && vm.milestone(model::Milestone::guest_agent)) {
    c.status = "SUCCEEDED";  // the customization engine reports back through Tools
    c.end_time = *vm.milestone(model::Milestone::guest_agent);
  }
  json info{{"status", c.status}};
  if (c.status != "PENDING") info["start_time"] = format_rfc3339(from_unix_seconds(c.start_time));
  if (c.status == "SUCCEEDED" || c.status == "FAILED")
    info["end_time"] = format_rfc3339(from_unix_seconds(c.end_time));
  if (c.status == "FAILED") info["error"] = c.error;
  return info;
}

}  // namespace bootstorm::sim::vcenter

#include "providers/vsphere/descriptor.hpp"

#include "providers/vsphere/settings.hpp"

namespace bootstorm::vsphere {

api::PlatformDescriptor descriptor() {
  api::PlatformDescriptor d;
  d.kind = "vsphere";
  d.api_name = "vCenter";
  // A vCenter session needs a user and a password; the engine reads them and registers them as secrets.
  d.credential_keys = {"usernameEnv", "passwordEnv", "file"};
  d.credential_form = api::CredentialForm::username_password;
  d.https_endpoint_needs_credentials = "usernameEnv and passwordEnv, or file";
  d.https_endpoint_api_paths = {"/sdk", "/api", "/rest", "/ui"};
  d.endpoint_words = {};
  d.lab_front = api::LabFront::vcenter;
  // vCenter's power start answers only when the VM is on: starts pipelined on one connection would be
  // powered on one after another.
  d.starts_per_connection_refusal =
      "a vCenter power start blocks until the VM is on, so vSphere starts need a connection each";
  d.golden_keys = {"vm", "clone", "datastore", "snapshot"};
  d.required_golden = {{"vm"}, " (the VM or template to clone)"};
  d.clone_kinds = {"full", "linked", "instant"};
  d.default_clone = "linked";
  d.has_namespace = false;
  // vim25 (SOAP, /sdk) or REST (/api); auto: vim25 when /sdk answers (platform/api_choice.hpp).
  d.platform_apis = {"auto", "rest", "vim25"};
  d.default_platform_api = "auto";
  // vim25: one Datacenter.PowerOnMultiVM_Task for the starts that arrive together, or one PowerOnVM_Task
  // each.
  d.power_on_modes = {"multi", "each"};
  d.telemetry_sources = {"vsphere-perf"};
  d.default_power_on = "multi";
  // Power state from a filtered list poll, Tools and guest identity from per-VM polls (vsphere_observe.cpp).
  d.observed_milestones = {"running", "guest_agent", "ip_assigned"};
  d.read_settings = read_settings;
  return d;
}

void register_platform_descriptor() {
  api::register_platform_descriptor(descriptor());
}

}  // namespace bootstorm::vsphere

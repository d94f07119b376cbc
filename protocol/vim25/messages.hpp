#pragma once
// The method elements of the vim25 calls bootstorm makes, one builder per method, in the order of the
// schema's request types (tests/unit/protocol/vim25 validates each against vim.wsdl's types). Each returns
// the element that goes inside soap_envelope().
#include <optional>
#include <string>
#include <vector>

#include "protocol/vim25/types.hpp"

namespace bootstorm::vsphere::vim25 {

// --- session ---
std::string retrieve_service_content();
std::string login(const MoRef& session_manager, const std::string& user, const std::string& password);
std::string logout(const MoRef& session_manager);

// --- views and the PropertyCollector ---
std::string create_container_view(const MoRef& view_manager, const MoRef& container,
                                  const std::vector<std::string>& types, bool recursive);
std::string create_list_view(const MoRef& view_manager, const std::vector<MoRef>& objects);
std::string destroy_view(const MoRef& view);
// A PropertyCollector of one's own: its filters and versions are independent of the session's collector, so
// that two waits (a task wait and the observation) do not take each other's updates.
std::string create_property_collector(const MoRef& property_collector);
std::string destroy_property_collector(const MoRef& collector);
std::string create_filter(const MoRef& property_collector, const PropertyFilterSpec& spec,
                          bool partial_updates);
std::string destroy_property_filter(const MoRef& filter);
std::string wait_for_updates_ex(const MoRef& property_collector, const std::string& version,
                                const WaitOptions& options);
std::string cancel_wait_for_updates(const MoRef& property_collector);
std::string retrieve_properties_ex(const MoRef& property_collector,
                                   const std::vector<PropertyFilterSpec>& specs,
                                   std::optional<int> max_objects = std::nullopt);
std::string continue_retrieve_properties_ex(const MoRef& property_collector, const std::string& token);

// A filter spec for `paths` of every object of `type` in a view (ContainerView or ListView).
PropertyFilterSpec view_filter_spec(const MoRef& view, const std::string& type,
                                    std::vector<std::string> paths);
// A filter spec for `paths` of the given objects themselves.
PropertyFilterSpec objects_filter_spec(const std::vector<MoRef>& objects, const std::string& type,
                                       std::vector<std::string> paths);

// --- provisioning ---
struct RelocateSpec {
  std::optional<MoRef> datastore, pool, host;
  std::string disk_move_type;  // "" (full copy), "createNewChildDiskBacking" (linked), ...
};
struct CloneSpec {
  RelocateSpec location;
  bool template_ = false;
  bool power_on = false;
  std::optional<MoRef> snapshot;                                  // linked clones clone from a snapshot
  std::vector<std::pair<std::string, std::string>> extra_config;  // config.extraConfig
};
std::string clone_vm_task(const MoRef& vm, const MoRef& folder, const std::string& name,
                          const CloneSpec& spec);

struct InstantCloneSpec {
  std::string name;
  RelocateSpec location;
  std::vector<std::pair<std::string, std::string>> config;  // guestinfo.* keys for the clone
};
// vSphere 6.7+; not in the 5.5 schema (tests/data/vim25/instant-clone.xsd declares it).
std::string instant_clone_task(const MoRef& vm, const InstantCloneSpec& spec);

std::string create_snapshot_task(const MoRef& vm, const std::string& name, const std::string& description,
                                 bool memory, bool quiesce);
std::string remove_snapshot_task(const MoRef& snapshot, bool remove_children);
std::string destroy_task(const MoRef& object);

// --- power ---
std::string power_on_multi_vm_task(const MoRef& datacenter, const std::vector<MoRef>& vms,
                                   const std::vector<std::pair<std::string, std::string>>& options = {});
std::string power_on_vm_task(const MoRef& vm, const std::optional<MoRef>& host = std::nullopt);
std::string power_off_vm_task(const MoRef& vm);

// --- custom attributes (the run id a cleanup can prove) ---
std::string add_custom_field_def(const MoRef& custom_fields_manager, const std::string& name,
                                 const std::string& managed_object_type);
std::string set_field(const MoRef& custom_fields_manager, const MoRef& entity, int key,
                      const std::string& value);

// --- privileges ---
// AuthorizationManager.HasPrivilegeOnEntities: whether the session `session_id` (UserSession.key) holds each
// of `privileges` on each entity.
// OptionManager.QueryOptions: the settings named `name` (a trailing dot asks for a subtree).
std::string query_options(const MoRef& option_manager, const std::string& name);
std::string has_privilege_on_entities(const MoRef& authorization_manager, const std::vector<MoRef>& entities,
                                      const std::string& session_id,
                                      const std::vector<std::string>& privileges);

// --- the guest, as a test plays it (vcsim: extraConfig SET.guest.*) ---
std::string reconfig_vm_task_extra_config(
    const MoRef& vm, const std::vector<std::pair<std::string, std::string>>& extra_config);

}  // namespace bootstorm::vsphere::vim25

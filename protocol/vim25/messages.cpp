// The method elements of bootstorm's vim25 calls (see messages.hpp). Field order follows the schema's
// sequences: a server may reject an element out of order, and the schema test does.
#include "protocol/vim25/messages.hpp"

#include "protocol/vim25/xml_writer.hpp"

namespace bootstorm::vsphere::vim25 {
namespace {

XmlWriter call(const char* method, const MoRef& self) {
  XmlWriter w(method);
  w.moref("_this", self);
  return w;
}

std::string simple(const char* method, const MoRef& self) {
  return call(method, self).finish();
}

void write_filter_spec(XmlWriter& w, const char* element, const PropertyFilterSpec& spec) {
  w.open(element);
  for (const PropertySpec& p : spec.prop_set) {
    w.open("propSet").leaf("type", p.type);
    if (p.all) w.leaf("all", true);
    for (const std::string& path : p.paths) w.leaf("pathSet", path);
    w.close();
  }
  for (const ObjectSpec& o : spec.object_set) {
    w.open("objectSet").moref("obj", o.obj);
    if (o.skip) w.leaf("skip", true);
    for (const TraversalSpec& t : o.select_set) {
      w.open("selectSet", "TraversalSpec");
      if (!t.name.empty()) w.leaf("name", t.name);
      w.leaf("type", t.type).leaf("path", t.path).leaf("skip", t.skip);
      w.close();
    }
    w.close();
  }
  if (spec.report_missing_objects) w.leaf("reportMissingObjectsInResults", *spec.report_missing_objects);
  w.close();
}

void write_relocate_spec(XmlWriter& w, const char* element, const RelocateSpec& spec) {
  w.open(element);
  if (spec.datastore) w.moref("datastore", *spec.datastore);
  if (!spec.disk_move_type.empty()) w.leaf("diskMoveType", spec.disk_move_type);
  if (spec.pool) w.moref("pool", *spec.pool);
  if (spec.host) w.moref("host", *spec.host);
  w.close();
}

void write_option_values(XmlWriter& w, const char* element,
                         const std::vector<std::pair<std::string, std::string>>& values) {
  for (const auto& [key, value] : values) {
    w.open(element).leaf("key", key).leaf("value", value, "xsd:string").close();
  }
}

}  // namespace

// --- session ---

std::string retrieve_service_content() {
  return simple("RetrieveServiceContent", MoRef{"ServiceInstance", "ServiceInstance"});
}

std::string login(const MoRef& session_manager, const std::string& user, const std::string& password) {
  return call("Login", session_manager).leaf("userName", user).leaf("password", password).finish();
}

std::string logout(const MoRef& session_manager) {
  return simple("Logout", session_manager);
}

// --- views and the PropertyCollector ---

std::string create_container_view(const MoRef& view_manager, const MoRef& container,
                                  const std::vector<std::string>& types, bool recursive) {
  XmlWriter w = call("CreateContainerView", view_manager);
  w.moref("container", container);
  for (const std::string& t : types) w.leaf("type", t);
  return w.leaf("recursive", recursive).finish();
}

std::string create_list_view(const MoRef& view_manager, const std::vector<MoRef>& objects) {
  XmlWriter w = call("CreateListView", view_manager);
  for (const MoRef& o : objects) w.moref("obj", o);
  return w.finish();
}

std::string destroy_view(const MoRef& view) {
  return simple("DestroyView", view);
}

std::string create_property_collector(const MoRef& property_collector) {
  return simple("CreatePropertyCollector", property_collector);
}

std::string destroy_property_collector(const MoRef& collector) {
  return simple("DestroyPropertyCollector", collector);
}

std::string create_filter(const MoRef& property_collector, const PropertyFilterSpec& spec,
                          bool partial_updates) {
  XmlWriter w = call("CreateFilter", property_collector);
  write_filter_spec(w, "spec", spec);
  return w.leaf("partialUpdates", partial_updates).finish();
}

std::string destroy_property_filter(const MoRef& filter) {
  return simple("DestroyPropertyFilter", filter);
}

std::string wait_for_updates_ex(const MoRef& property_collector, const std::string& version,
                                const WaitOptions& options) {
  XmlWriter w = call("WaitForUpdatesEx", property_collector);
  w.leaf("version", version);
  if (options.max_wait_seconds || options.max_object_updates) {
    w.open("options");
    if (options.max_wait_seconds) w.leaf("maxWaitSeconds", *options.max_wait_seconds);
    if (options.max_object_updates) w.leaf("maxObjectUpdates", *options.max_object_updates);
    w.close();
  }
  return w.finish();
}

std::string cancel_wait_for_updates(const MoRef& property_collector) {
  return simple("CancelWaitForUpdates", property_collector);
}

std::string retrieve_properties_ex(const MoRef& property_collector,
                                   const std::vector<PropertyFilterSpec>& specs,
                                   std::optional<int> max_objects) {
  XmlWriter w = call("RetrievePropertiesEx", property_collector);
  for (const PropertyFilterSpec& spec : specs) write_filter_spec(w, "specSet", spec);
  w.open("options");
  if (max_objects) w.leaf("maxObjects", *max_objects);
  w.close();
  return w.finish();
}

std::string continue_retrieve_properties_ex(const MoRef& property_collector, const std::string& token) {
  return call("ContinueRetrievePropertiesEx", property_collector).leaf("token", token).finish();
}

PropertyFilterSpec view_filter_spec(const MoRef& view, const std::string& type,
                                    std::vector<std::string> paths) {
  PropertyFilterSpec spec;
  spec.prop_set.push_back(PropertySpec{type, std::move(paths), false});
  ObjectSpec object{view, true, {}};
  object.select_set.push_back(TraversalSpec{"", view.type, "view", false});
  spec.object_set.push_back(std::move(object));
  return spec;
}

PropertyFilterSpec objects_filter_spec(const std::vector<MoRef>& objects, const std::string& type,
                                       std::vector<std::string> paths) {
  PropertyFilterSpec spec;
  spec.prop_set.push_back(PropertySpec{type, std::move(paths), false});
  for (const MoRef& o : objects) spec.object_set.push_back(ObjectSpec{o, false, {}});
  return spec;
}

// --- provisioning ---

std::string clone_vm_task(const MoRef& vm, const MoRef& folder, const std::string& name,
                          const CloneSpec& spec) {
  XmlWriter w = call("CloneVM_Task", vm);
  w.moref("folder", folder).leaf("name", name).open("spec");
  write_relocate_spec(w, "location", spec.location);
  w.leaf("template", spec.template_);
  if (!spec.extra_config.empty()) {
    w.open("config");
    write_option_values(w, "extraConfig", spec.extra_config);
    w.close();
  }
  w.leaf("powerOn", spec.power_on);
  if (spec.snapshot) w.moref("snapshot", *spec.snapshot);
  w.close();
  return w.finish();
}

std::string instant_clone_task(const MoRef& vm, const InstantCloneSpec& spec) {
  XmlWriter w = call("InstantClone_Task", vm);
  w.open("spec").leaf("name", spec.name);
  write_relocate_spec(w, "location", spec.location);
  write_option_values(w, "config", spec.config);
  w.close();
  return w.finish();
}

std::string create_snapshot_task(const MoRef& vm, const std::string& name, const std::string& description,
                                 bool memory, bool quiesce) {
  XmlWriter w = call("CreateSnapshot_Task", vm);
  w.leaf("name", name);
  if (!description.empty()) w.leaf("description", description);
  return w.leaf("memory", memory).leaf("quiesce", quiesce).finish();
}

std::string remove_snapshot_task(const MoRef& snapshot, bool remove_children) {
  return call("RemoveSnapshot_Task", snapshot).leaf("removeChildren", remove_children).finish();
}

std::string destroy_task(const MoRef& object) {
  return simple("Destroy_Task", object);
}

// --- power ---

std::string power_on_multi_vm_task(const MoRef& datacenter, const std::vector<MoRef>& vms,
                                   const std::vector<std::pair<std::string, std::string>>& options) {
  XmlWriter w = call("PowerOnMultiVM_Task", datacenter);
  for (const MoRef& vm : vms) w.moref("vm", vm);
  write_option_values(w, "option", options);
  return w.finish();
}

std::string power_on_vm_task(const MoRef& vm, const std::optional<MoRef>& host) {
  XmlWriter w = call("PowerOnVM_Task", vm);
  if (host) w.moref("host", *host);
  return w.finish();
}

std::string power_off_vm_task(const MoRef& vm) {
  return simple("PowerOffVM_Task", vm);
}

// --- custom attributes ---

std::string add_custom_field_def(const MoRef& custom_fields_manager, const std::string& name,
                                 const std::string& managed_object_type) {
  XmlWriter w = call("AddCustomFieldDef", custom_fields_manager);
  w.leaf("name", name);
  if (!managed_object_type.empty()) w.leaf("moType", managed_object_type);
  return w.finish();
}

std::string set_field(const MoRef& custom_fields_manager, const MoRef& entity, int key,
                      const std::string& value) {
  return call("SetField", custom_fields_manager)
      .moref("entity", entity)
      .leaf("key", key)
      .leaf("value", value)
      .finish();
}

std::string query_options(const MoRef& option_manager, const std::string& name) {
  XmlWriter w = call("QueryOptions", option_manager);
  w.leaf("name", name);
  return w.finish();
}

std::string has_privilege_on_entities(const MoRef& authorization_manager, const std::vector<MoRef>& entities,
                                      const std::string& session_id,
                                      const std::vector<std::string>& privileges) {
  XmlWriter w = call("HasPrivilegeOnEntities", authorization_manager);
  for (const MoRef& e : entities) w.moref("entity", e);
  w.leaf("sessionId", session_id);
  for (const auto& p : privileges) w.leaf("privId", p);
  return w.finish();
}

std::string reconfig_vm_task_extra_config(
    const MoRef& vm, const std::vector<std::pair<std::string, std::string>>& extra_config) {
  XmlWriter w = call("ReconfigVM_Task", vm);
  w.open("spec");
  write_option_values(w, "extraConfig", extra_config);
  w.close();
  return w.finish();
}

}  // namespace bootstorm::vsphere::vim25

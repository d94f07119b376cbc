// The lab's CustomFieldsManager: custom attribute definitions (AddCustomFieldDef / RemoveCustomFieldDef, the
// manager's `field`) and their values on entities (SetField, an entity's `customValue`). A value set on a VM
// is pushed to the filters that watch it. Values go with their entity, and with their definition.
#include <fmt/format.h>

#include <algorithm>

#include "common/xml_text.hpp"
#include "protocol/vim25/decode.hpp"
#include "protocol/vim25/xml_writer.hpp"
#include "simulator/vcenter/detail/sdk_faults.hpp"
#include "simulator/vcenter/detail/vcenter_front_impl.hpp"

namespace bootstorm::sim::vcenter {

using http::ServerResponse;
namespace vim25 = vsphere::vim25;

namespace {

std::string field_def(const SdkCustomField& f, std::string_view element) {
  return fmt::format(
      R"(<{0} xsi:type="CustomFieldDef"><key>{1}</key><name>{2}</name><type>string</type>{3})"
      R"(<fieldDefPrivileges xsi:type="PrivilegePolicyDef"><createPrivilege>System.View</createPrivilege>)"
      R"(<readPrivilege>System.View</readPrivilege><updatePrivilege>System.View</updatePrivilege>)"
      R"(</fieldDefPrivileges><fieldInstancePrivileges xsi:type="PrivilegePolicyDef">)"
      R"(<createPrivilege>System.View</createPrivilege><readPrivilege>System.View</readPrivilege>)"
      R"(<updatePrivilege>Global.SetCustomField</updatePrivilege></fieldInstancePrivileges></{0}>)",
      element, f.key, escape_xml(f.name),
      f.managed_object_type.empty()
          ? std::string()
          : "<managedObjectType>" + escape_xml(f.managed_object_type) + "</managedObjectType>");
}

}  // namespace

std::string VcenterFront::Impl::sdk_field_defs(std::string_view managed_object_type) const {
  std::string out = R"(<val xsi:type="ArrayOfCustomFieldDef">)";
  for (const auto& f : sdk_fields) {
    if (managed_object_type.empty() || f.managed_object_type.empty() ||
        f.managed_object_type == managed_object_type)
      out += field_def(f, "CustomFieldDef");
  }
  return out + "</val>";
}

std::string VcenterFront::Impl::sdk_custom_values(const std::string& entity_id) const {
  std::string out = R"(<val xsi:type="ArrayOfCustomFieldValue">)";
  if (auto it = sdk_field_values.find(entity_id); it != sdk_field_values.end()) {
    for (const auto& [key, value] : it->second) {
      out += fmt::format(
          R"(<CustomFieldValue xsi:type="CustomFieldStringValue"><key>{}</key><value>{}</value></CustomFieldValue>)",
          key, escape_xml(value));
    }
  }
  return out + "</val>";
}

ServerResponse VcenterFront::Impl::sdk_add_field(const vim25::XmlNode& call) {
  const vim25::MoRef self = vim25::decode_moref(call.child("_this"));
  if (self.value != "CustomFieldsManager") return sdk_object_not_found(self);
  SdkCustomField f;
  f.name = call.child_text("name").value_or("");
  f.managed_object_type = call.child_text("moType").value_or("");
  if (f.name.empty()) {
    return sdk_fault("InvalidArgument", "A custom attribute needs a name.",
                     "<invalidProperty>name</invalidProperty>");
  }
  // vCenter refuses a second definition of a name for the same (or any) type.
  for (const auto& existing : sdk_fields) {
    if (existing.name == f.name && (existing.managed_object_type == f.managed_object_type ||
                                    existing.managed_object_type.empty() || f.managed_object_type.empty())) {
      return sdk_fault("DuplicateName", fmt::format("The name '{}' already exists.", f.name),
                       "<name>" + escape_xml(f.name) + "</name>" +
                           moref_element("object", {"CustomFieldsManager", "CustomFieldsManager"}));
    }
  }
  f.key = sdk_next_field_key++;
  sdk_fields.push_back(f);
  sdk_changed("CustomFieldsManager");
  return sdk_ok(response_element("AddCustomFieldDefResponse", field_def(f, "returnval")));
}

ServerResponse VcenterFront::Impl::sdk_remove_field(const vim25::XmlNode& call) {
  const vim25::MoRef self = vim25::decode_moref(call.child("_this"));
  if (self.value != "CustomFieldsManager") return sdk_object_not_found(self);
  const int key = std::atoi(call.child_text("key").value_or("0").c_str());
  auto it = std::find_if(sdk_fields.begin(), sdk_fields.end(), [&](const auto& f) { return f.key == key; });
  if (it == sdk_fields.end()) {
    return sdk_fault("InvalidArgument", fmt::format("No custom attribute has key {}.", key),
                     "<invalidProperty>key</invalidProperty>");
  }
  sdk_fields.erase(it);
  for (auto& [entity, values] : sdk_field_values) {
    if (values.erase(key)) sdk_changed(entity);
  }
  sdk_changed("CustomFieldsManager");
  return sdk_ok(vim25::XmlWriter("RemoveCustomFieldDefResponse").finish());
}

ServerResponse VcenterFront::Impl::sdk_set_field(const vim25::XmlNode& call) {
  const vim25::MoRef self = vim25::decode_moref(call.child("_this"));
  if (self.value != "CustomFieldsManager") return sdk_object_not_found(self);
  const vim25::MoRef entity = vim25::decode_moref(call.child("entity"));
  const std::string type = sdk_type_of(entity.value);
  if (type.empty() || type != entity.type) return sdk_object_not_found(entity);
  const int key = std::atoi(call.child_text("key").value_or("0").c_str());
  auto def = std::find_if(sdk_fields.begin(), sdk_fields.end(), [&](const auto& f) { return f.key == key; });
  if (def == sdk_fields.end() || (!def->managed_object_type.empty() && def->managed_object_type != type)) {
    return sdk_fault("InvalidArgument",
                     fmt::format("No custom attribute with key {} applies to a {}.", key, type),
                     "<invalidProperty>key</invalidProperty>");
  }
  const std::string value = call.child_text("value").value_or("");
  if (value.empty()) {
    sdk_field_values[entity.value].erase(key);
  } else {
    sdk_field_values[entity.value][key] = value;
  }
  sdk_changed(entity.value);
  return sdk_ok(vim25::XmlWriter("SetFieldResponse").finish());
}

}  // namespace bootstorm::sim::vcenter

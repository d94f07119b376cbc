#pragma once
// vim25 answers -> the types of types.hpp. Each decoder takes the method's <returnval> (or, for an answer
// without one, the response element) and fails with ErrorKind::protocol naming what was missing.
#include <string>
#include <utility>
#include <vector>

#include "common/expected.hpp"
#include "protocol/vim25/types.hpp"
#include "protocol/vim25/xml.hpp"

namespace bootstorm::vsphere::vim25 {

// Any element as a generic Value (recursively).
Value decode_value(const XmlNode& node);
// <x type="T">v</x>; an empty MoRef when the node is absent or has no type.
MoRef decode_moref(const XmlNode& node);

Expected<ServiceContent> decode_service_content(const XmlNode& returnval);
Expected<UserSession> decode_user_session(const XmlNode& returnval);
// WaitForUpdatesEx: an absent <returnval> (the wait timed out with nothing new) is an empty UpdateSet that
// keeps `version`.
Expected<UpdateSet> decode_update_set(const XmlNode& response, const std::string& version);
// HasPrivilegeOnEntities: one entry per entity asked about.
Expected<std::vector<EntityPrivilege>> decode_entity_privileges(const XmlNode& response);
// QueryOptions answer: each OptionValue's key and its value's text.
Expected<std::vector<std::pair<std::string, std::string>>> decode_option_values(const XmlNode& response);
// RetrievePropertiesEx / ContinueRetrievePropertiesEx: an absent <returnval> is an empty result.
Expected<RetrieveResult> decode_retrieve_result(const XmlNode& response);
// Every snapshot of a VirtualMachineSnapshotInfo (a VM's `snapshot` property), depth first through
// rootSnapshotList and each tree's childSnapshotList.
struct SnapshotEntry {
  std::string name;
  MoRef snapshot;
};
std::vector<SnapshotEntry> snapshots_of(const Value& snapshot_info);

// A PropertyFilterSpec as a request carries it (CreateFilter's spec, RetrievePropertiesEx's specSet): the
// server's side of the PropertyCollector (the lab's /sdk reads requests with it).
PropertyFilterSpec decode_filter_spec(const XmlNode& spec);

}  // namespace bootstorm::vsphere::vim25

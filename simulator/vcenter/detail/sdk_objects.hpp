#pragma once
// Internal to bootstorm::sim::vcenter: the managed objects the lab's vim25 endpoint (/sdk) keeps beside the
// model — tasks, snapshots, custom attributes — and the PropertyCollector state behind WaitForUpdatesEx.
#include <boost/asio/steady_timer.hpp>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "protocol/vim25/types.hpp"

namespace bootstorm::sim::vcenter {

// The root folder's id ("Datacenters"; simulator/model/inventory.cpp), as ServiceContent.rootFolder names it.
inline constexpr std::string_view kRootFolderId = "group-d1";
// The vCenter version the lab answers as, on /sdk (about.version, apiVersion) and on
// /api/appliance/system/version.
inline constexpr std::string_view kVcenterVersion = "7.0.3.0";

// A SOAP fault as the lab raises it: the fault type, the message and the type's fields (XML).
struct SdkFaultInfo {
  std::string type;
  std::string message;
  std::string fields;
};

// A task's result: its xsi:type, the attributes of the element (a reference's type="...") and its content.
struct SdkTaskResult {
  std::string xsi_type;  // "" : no result
  std::string attributes;
  std::string content;
};

// How a task ended: with a result, or with a fault.
struct SdkTaskOutcome {
  SdkTaskResult result;
  std::optional<SdkFaultInfo> fault;
};

// A vCenter task (TaskInfo): queued until admitted, running, then success with a result or error.
struct SdkTask {
  std::string id;              // "task-17"
  std::string description_id;  // "VirtualMachine.clone"
  vsphere::vim25::MoRef entity;
  std::string entity_name;
  std::string user;
  std::string state = "queued";
  SdkTaskResult result;
  std::optional<SdkFaultInfo> error;
  double queue_time = 0;
  std::optional<double> start_time, complete_time;
};

// A VirtualMachineSnapshot: snapshots of one VM form a chain, each the child of the one before.
struct SdkSnapshot {
  std::string id;  // "snapshot-4"
  int number = 0;  // VirtualMachineSnapshotTree.id
  std::string vm_id;
  std::string name, description;
  double created = 0;
  bool memory = false, quiesced = false;
  std::string power_state;  // the VM's power state when taken (poweredOn / poweredOff)
};

// CustomFieldsManager's definitions.
struct SdkCustomField {
  int key = 0;
  std::string name;
  std::string managed_object_type;  // "" : any type
};

// One PropertyFilter: what it watches, and what it last reported of each object (rendered <val> elements, ""
// for a property without a value), so WaitForUpdatesEx sends only what changed since.
struct SdkFilter {
  std::string id;
  vsphere::vim25::PropertyFilterSpec spec;
  struct Reported {
    std::string type;
    std::map<std::string, std::string> values;  // path -> <val>
  };
  std::map<std::string, Reported> reported;    // object id -> what the client holds
  std::vector<vsphere::vim25::MoRef> members;  // the objects the spec names, as last read
  std::unordered_set<std::string> member_ids;  // their ids: whether a change concerns this filter
  bool evaluated = false;

  void set_members(std::vector<vsphere::vim25::MoRef> objects) {
    members = std::move(objects);
    member_ids.clear();
    for (const auto& m : members) member_ids.insert(m.value);
    evaluated = true;
  }
};

// A PropertyCollector: the session's own (ServiceContent.propertyCollector) or one made with
// CreatePropertyCollector. The version counts the update sets it has answered.
struct SdkCollector {
  std::string id;
  std::string session;  // owner session key
  std::map<std::string, SdkFilter> filters;
  std::uint64_t version = 0;
  std::set<std::string> dirty;   // objects changed since the last update set
  bool membership_dirty = true;  // VMs were added or removed: the filters' object sets are read again
  // The last answer and the version it answered: a client that lost it asks again from that version.
  std::string answered_from;
  std::string last_answer;
  // WaitForUpdatesEx calls waiting for a change: their timers are cancelled (they wake) when one arrives.
  std::vector<std::shared_ptr<boost::asio::steady_timer>> waiters;
  bool cancel_requested = false;  // CancelWaitForUpdates: the waiting calls answer RequestCanceled
  // The lab's forgetCollectorVersions fault: the waiting calls, and calls from an earlier version, answer
  // InvalidCollectorVersion until a call starts over (an empty version).
  bool versions_forgotten = false;

  // Whether a change of `object_id` may concern this collector's filters: a change of an object no filter
  // holds neither marks nor wakes it (a filter over 1,000 tasks is not woken by each VM's boot).
  bool watches(const std::string& object_id) const {
    if (membership_dirty) return true;
    for (const auto& [id, filter] : filters)
      if (!filter.evaluated || filter.member_ids.count(object_id)) return true;
    return false;
  }
};

}  // namespace bootstorm::sim::vcenter

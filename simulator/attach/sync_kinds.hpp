#pragma once
// Which side owns what, when the lab acts as a cluster's controllers through another API server (lab attach):
// for each kind the lab serves, whether the lab copies it from the server, takes its clients' changes from
// there, writes it there as its controller, or leaves it alone; where each object lives on that server; and
// the parts of an object that a write sends. Pure logic, no I/O.
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>

#include "simulator/kube/resource_types.hpp"

namespace bootstorm::sim::attach {

using kube::Kind;

enum class Role {
  // Not synced: the server has its own (API Priority and Fairness' objects).
  none,
  // The server's copy is the truth and no controller here changes it: copied in (namespaces, secrets,
  // storage classes). What the lab seeds of it is created on the server when missing.
  mirror,
  // Written by the cluster's clients, whose creates, spec changes and deletes reach the controllers here;
  // the controllers write status back, and spec when they change it (virt-api's start).
  client,
  // Made and written by the controllers here (VMIs, PVCs, Nodes, Events, Routes); a client may delete one.
  controller,
};

Role role_of(Kind kind);
// Whether the server's watch is needed: every mirror and client kind, and the controller kinds a client may
// delete (VMIs, PVCs).
bool watched(Kind kind);
// Whether the server has a status subresource for the kind: on kube-apiserver and upstream's CRDs, a
// VirtualMachineInstance has none (its status is written with the object), nor have Events, Secrets,
// StorageClasses and VolumeSnapshotClasses.
bool server_status_subresource(Kind kind);

// "/apis/kubevirt.io/v1/namespaces/NS/virtualmachines" ("" ns: across namespaces, or a cluster-scoped kind).
std::string collection_path(Kind kind, const std::string& ns);
std::string object_path(Kind kind, const std::string& ns, const std::string& name);
// "VirtualMachine ns/name" ("Node name" for a cluster-scoped object): how logs and errors name an object.
std::string describe(Kind kind, const std::string& ns, const std::string& name);

// The lab's uids of objects it created on the server, mapped to the uids the server gave them.
using UidMap = std::unordered_map<std::string, std::string>;

// The object as a write sends it: kind and apiVersion set, the lab's bookkeeping dropped (resourceVersion,
// uid, creationTimestamp, generation, managedFields, deletion marks), owner and involved-object uids
// translated through `uids` (unknown ones are kept).
nlohmann::json for_server(Kind kind, const nlohmann::json& object, const UidMap& uids);
// What a write of the object itself changes: for_server() without the status, when the server keeps status
// apart (server_status_subresource).
nlohmann::json main_part(Kind kind, const nlohmann::json& object, const UidMap& uids);
// The status (null when none); only meaningful when server_status_subresource(kind).
nlohmann::json status_part(const nlohmann::json& object);

// metadata.resourceVersion as a number (etcd's revision); 0 when absent or not a number.
std::uint64_t resource_version_of(const nlohmann::json& object);

}  // namespace bootstorm::sim::attach

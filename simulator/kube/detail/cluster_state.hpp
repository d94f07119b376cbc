#pragma once
// Internal to bootstorm::sim::kube: what a controller outside the front's core (the Forklift controller) may
// do with the cluster. Reads and writes go through the front, so watches, owner references and the front's
// own controllers see them as they see any client's.
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "simulator/kube/api_objects.hpp"
#include "simulator/kube/kube_front_options.hpp"
#include "simulator/kube/object_store.hpp"
#include "simulator/kube/resource_types.hpp"
#include "simulator/model/lab.hpp"

namespace bootstorm::sim::kube {

class ClusterState {
 public:
  virtual ~ClusterState() = default;

  // The lab model behind the front: the vCenter inventory, the physics, the scheduler, the faults.
  virtual model::Lab& lab() = 0;
  virtual const KubeFrontOptions& options() const = 0;
  // The lab's clock, in Unix seconds.
  virtual double now() const = 0;

  // Every stored object of `kind` in all namespaces, sorted by namespace, then name.
  virtual std::vector<ObjectPtr> list(Kind kind) const = 0;
  // The stored object, or null.
  virtual ObjectPtr get(Kind kind, const std::string& ns, const std::string& name) const = 0;
  // Creates an object as an API client's POST would (admission, defaults, the front's controllers): the
  // stored object or the API error.
  virtual std::variant<ObjectPtr, ApiError> create(Kind kind, const std::string& ns,
                                                   const nlohmann::json& object) = 0;
  // Stores a new object without admission, filling uid, creationTimestamp and generation.
  virtual ObjectPtr insert(Kind kind, nlohmann::json object) = 0;
  // Stores the version `edit` makes of an existing object; returns the current one when nothing changed, null
  // when the object is gone.
  virtual ObjectPtr modify(Kind kind, const std::string& ns, const std::string& name,
                           const std::function<void(nlohmann::json&)>& edit) = 0;

  // The next number of the front's seeded generator (generated names stay reproducible for a lab seed).
  virtual std::uint64_t random() = 0;
  // The lab VM that runs the VirtualMachine `ns`/`name`; nullopt when the front has no runtime for it.
  virtual std::optional<std::string> vm_model_id(const std::string& ns, const std::string& name) const = 0;
};

}  // namespace bootstorm::sim::kube

#pragma once
// Internal to bootstorm::sim_kube: what the controllers share of the front to write objects. The store
// publishes every version written to the watches; the front fills the server-set fields and tells the other
// controllers (Forklift's among them) about changes. An interface so that each controller depends on this
// much of KubeFront::Impl and no more.
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "simulator/kube/object_store.hpp"
#include "simulator/kube/resource_types.hpp"

namespace bootstorm::sim::kube {

class ObjectPublisher {
 public:
  virtual std::string new_uid() = 0;
  virtual double now() const = 0;
  // Stores a new version of an existing object produced by `edit`; no-op (returns current) when nothing
  // changed; null when the object is gone.
  virtual ObjectPtr modify(Kind kind, const std::string& ns, const std::string& name,
                           const std::function<void(nlohmann::json&)>& edit) = 0;
  // Fills uid, creationTimestamp, generation of a new object and stores it.
  virtual ObjectPtr insert(Kind kind, nlohmann::json object) = 0;
  // Deletes a stored object (the watches see it go): the removed version, or null when there was none. Every
  // deletion a controller makes goes through here, so that a publisher can also make it elsewhere.
  virtual ObjectPtr remove(Kind kind, const std::string& ns, const std::string& name) = 0;
  // An object was updated as a client updates it: the controllers react as to an update through the API.
  virtual void after_update(Kind kind, const ObjectPtr& before, const ObjectPtr& after) = 0;
  // An object of a kind no controller here manages was deleted: the Forklift controller may follow it.
  virtual void after_delete(Kind kind, const std::string& ns, const std::string& name) = 0;

 protected:
  ~ObjectPublisher() = default;
};

}  // namespace bootstorm::sim::kube

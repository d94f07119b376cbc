// The clients of another API server (lab attach): their creates, updates and deletes, as that server stored
// them, handed to the same admission and controllers as a request to this front, keeping the identity the
// other server gave each object.
#include "simulator/kube/kube_front.hpp"
#include "simulator/kube/kube_front_impl.hpp"

namespace bootstorm::sim::kube {
namespace {

// What this store assigns itself, or the other server's bookkeeping that means nothing here.
void drop_foreign_bookkeeping(json& object) {
  if (!object.contains("metadata") || !object["metadata"].is_object()) object["metadata"] = json::object();
  json& meta = object["metadata"];
  meta.erase("resourceVersion");
  meta.erase("managedFields");
  meta.erase("selfLink");
}

// Whether `object` (without a resourceVersion of this store) is what `current` already holds.
bool already_stored(const json& object, const ObjectPtr& current) {
  json comparable = object;
  comparable["metadata"]["resourceVersion"] = current->object["metadata"].value("resourceVersion", "");
  return comparable == current->object;
}

std::string name_of(const json& object) {
  return object["metadata"].value("name", "");
}
std::string namespace_of(const json& object) {
  return object["metadata"].value("namespace", "");
}

}  // namespace

std::optional<std::string> KubeFront::client_created(Kind kind, nlohmann::json object) {
  Impl& m = *impl_;
  drop_foreign_bookkeeping(object);
  if (m.store.get(kind, namespace_of(object), name_of(object)))
    return client_updated(kind, std::move(object));
  const ResourceType& type = resource_type(kind);
  // Status is the controllers' to write; what the other server holds of it is theirs to overwrite.
  if (type.status_subresource && kind != Kind::namespaces && kind != Kind::nodes) object.erase("status");
  if (auto refused = m.admission.admit_create(kind, object))
    return refused->status.value("message", "refused");
  ObjectPtr stored = m.insert(kind, std::move(object));
  m.after_create(kind, stored);
  return std::nullopt;
}

std::optional<std::string> KubeFront::client_updated(Kind kind, nlohmann::json object) {
  Impl& m = *impl_;
  drop_foreign_bookkeeping(object);
  const std::string ns = namespace_of(object);
  const std::string name = name_of(object);
  ObjectPtr current = m.store.get(kind, ns, name);
  if (!current) return client_created(kind, std::move(object));
  const ResourceType& type = resource_type(kind);
  json next = std::move(object);
  // The controllers' part stays as they wrote it here.
  if (type.status_subresource) {
    if (current->object.contains("status")) {
      next["status"] = current->object["status"];
    } else {
      next.erase("status");
    }
  }
  json& meta = next["metadata"];
  const json& old_meta = current->object["metadata"];
  for (const char* kept : {"uid", "creationTimestamp", "generation"}) {
    if (old_meta.contains(kept)) meta[kept] = old_meta[kept];
  }
  if (auto refused = m.admission.admit_update(kind, current->object, next))
    return refused->status.value("message", "refused");
  if (already_stored(next, current)) return std::nullopt;
  ObjectPtr stored = m.store.put(kind, std::move(next));
  m.after_update(kind, current, stored);
  return std::nullopt;
}

void KubeFront::client_deleted(Kind kind, const std::string& ns, const std::string& name,
                               bool orphan_dependants) {
  Impl& m = *impl_;
  if (!m.store.get(kind, ns, name)) return;
  (void)m.garbage_collector.delete_object(kind, ns, name,
                                          orphan_dependants ? Propagation::orphan : Propagation::background);
}

void KubeFront::mirrored(Kind kind, nlohmann::json object) {
  Impl& m = *impl_;
  drop_foreign_bookkeeping(object);
  ObjectPtr current = m.store.get(kind, namespace_of(object), name_of(object));
  if (current && already_stored(object, current)) return;
  m.store.put(kind, std::move(object));
}

void KubeFront::mirror_removed(Kind kind, const std::string& ns, const std::string& name) {
  impl_->store.remove(kind, ns, name);
}

std::vector<std::pair<std::string, model::Milestone>> KubeFront::take_milestones(
    const std::vector<std::uint64_t>& resource_versions) {
  return impl_->virt_handler.take_milestones(resource_versions);
}

}  // namespace bootstorm::sim::kube

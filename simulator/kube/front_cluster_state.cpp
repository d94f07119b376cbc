// The Kubernetes front's state behind the ClusterState interface: each operation forwards to
// KubeFront::Impl, so what the Forklift controller writes is admitted, stored and watched like any write.
#include "simulator/kube/detail/front_cluster_state.hpp"

#include "simulator/kube/kube_front_impl.hpp"

namespace bootstorm::sim::kube {
namespace {

class FrontClusterState final : public ClusterState {
 public:
  explicit FrontClusterState(KubeFront::Impl& front) : front_(front) {}

  model::Lab& lab() override { return front_.lab; }
  const KubeFrontOptions& options() const override { return front_.options; }
  double now() const override { return front_.now(); }

  std::vector<ObjectPtr> list(Kind kind) const override { return front_.store.list(kind, "").items; }
  ObjectPtr get(Kind kind, const std::string& ns, const std::string& name) const override {
    return front_.store.get(kind, ns, name);
  }
  std::variant<ObjectPtr, ApiError> create(Kind kind, const std::string& ns, const json& object) override {
    return front_.create(kind, ns, object.dump(), false);
  }
  ObjectPtr insert(Kind kind, json object) override { return front_.insert(kind, std::move(object)); }
  ObjectPtr modify(Kind kind, const std::string& ns, const std::string& name,
                   const std::function<void(json&)>& edit) override {
    return front_.modify(kind, ns, name, edit);
  }

  std::uint64_t random() override { return front_.rng(); }
  std::optional<std::string> vm_model_id(const std::string& ns, const std::string& name) const override {
    return front_.vm_controller.model_id(ns, name);
  }

 private:
  KubeFront::Impl& front_;
};

}  // namespace

std::unique_ptr<ClusterState> make_front_cluster_state(KubeFront::Impl& front) {
  return std::make_unique<FrontClusterState>(front);
}

}  // namespace bootstorm::sim::kube

// forklift-controller against the lab model: reacts to changes of the Forklift objects (and the Secrets,
// Namespaces and VMs they refer to) by reconciling every Provider, map, Plan and Migration shortly after, as
// a watch-driven controller would. The reconcilers are in forklift_{provider,map,plan}_reconciler.cpp, the
// migrations in forklift_migration_*.cpp.
#include "simulator/kube/forklift_controller.hpp"

#include <string>
#include <utility>

#include "simulator/kube/detail/forklift_migration_runner.hpp"
#include "simulator/kube/detail/forklift_reconcilers.hpp"

namespace bootstorm::sim::kube {
namespace {

class Controller final : public ForkliftController, public std::enable_shared_from_this<Controller> {
 public:
  explicit Controller(std::unique_ptr<ClusterState> cluster)
      : cluster_(std::move(cluster)), lab_(cluster_->lab()) {}

  void start() {
    std::weak_ptr<Controller> weak = shared_from_this();
    runner_ = std::make_shared<forklift::MigrationRunner>(*cluster_, [weak] {
      if (auto self = weak.lock()) self->schedule_reconcile();
    });
    subscription_ = lab_.subscribe([weak](const model::VmEvent& event) {
      auto self = weak.lock();
      if (!self || !self->alive_) return;
      // A source VM appearing or vanishing (vCenter clone/delete) changes what Plans can reference.
      if (event.vm.namespace_.empty() && event.type != model::VmEvent::Type::modified)
        self->schedule_reconcile();
    });
    lab_.set_truth_section("migrations", [weak]() -> std::string {
      auto self = weak.lock();
      return self ? self->runner_->truth().dump() : "[]";
    });
    schedule_reconcile();
  }

  void on_object_changed(Kind kind, const std::string&, const std::string&) override {
    if (!alive_) return;
    switch (kind) {
      case Kind::forklift_providers:
      case Kind::forklift_network_maps:
      case Kind::forklift_storage_maps:
      case Kind::forklift_plans:
      case Kind::forklift_migrations:
      case Kind::secrets:
      case Kind::namespaces:
      case Kind::virtual_machines:
        schedule_reconcile();
        break;
      default:
        break;
    }
  }

  void on_object_deleted(Kind kind, const std::string& ns, const std::string& name) override {
    if (!alive_) return;
    if (kind == Kind::forklift_migrations) {
      runner_->migration_deleted(ns, name);
    } else if (kind == Kind::forklift_plans) {
      runner_->plan_deleted(ns, name);
    }
    on_object_changed(kind, ns, name);
  }

  void shutdown() override {
    if (!alive_) return;
    alive_ = false;
    lab_.unsubscribe(subscription_);
    lab_.set_truth_section("migrations", {});
    runner_->shutdown();
  }

 private:
  void schedule_reconcile() {
    if (reconcile_pending_ || !alive_) return;
    reconcile_pending_ = true;
    std::weak_ptr<Controller> weak = shared_from_this();
    // The controller reacts to a change shortly after it is stored, like a watch-driven reconciler.
    lab_.schedule(kReconcileDelayS, [weak] {
      auto self = weak.lock();
      if (!self || !self->alive_) return;
      self->reconcile_pending_ = false;
      self->reconcile_all();
    });
  }

  void reconcile_all() {
    ClusterState& cluster = *cluster_;
    for (const auto& p : cluster.list(Kind::forklift_providers)) forklift::reconcile_provider(cluster, p);
    for (const auto& m : cluster.list(Kind::forklift_network_maps))
      forklift::reconcile_map(cluster, Kind::forklift_network_maps, m);
    for (const auto& m : cluster.list(Kind::forklift_storage_maps))
      forklift::reconcile_map(cluster, Kind::forklift_storage_maps, m);
    for (const auto& p : cluster.list(Kind::forklift_plans)) forklift::reconcile_plan(cluster, p);
    for (const auto& m : cluster.list(Kind::forklift_migrations)) runner_->reconcile_migration(m);
  }

  static constexpr double kReconcileDelayS = 0.05;

  std::unique_ptr<ClusterState> cluster_;
  model::Lab& lab_;
  std::shared_ptr<forklift::MigrationRunner> runner_;
  bool alive_ = true;
  bool reconcile_pending_ = false;
  model::SubscriptionId subscription_ = 0;
};

}  // namespace

std::shared_ptr<ForkliftController> make_forklift_controller(std::unique_ptr<ClusterState> cluster) {
  auto controller = std::make_shared<Controller>(std::move(cluster));
  controller->start();
  return controller;
}

}  // namespace bootstorm::sim::kube

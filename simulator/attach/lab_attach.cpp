// LabAttach: a LabServer whose Kubernetes front gets a ClusterSync as its companion.
#include "simulator/attach/lab_attach.hpp"

#include <boost/asio/co_spawn.hpp>

#include "protocol/kube/http_kube_api.hpp"
#include "protocol/kube/kube_config.hpp"

namespace bootstorm::sim::attach {

Expected<std::unique_ptr<LabAttach>> LabAttach::start(LabAttachOptions options) {
  // The hints of its errors name this command's flags, not a plan's fields.
  const bootstorm::kube::KubeconfigSettings flags{
      .path = "--kubeconfig", .context = "--context", .in_cluster = ""};
  auto config = bootstorm::kube::load_kubeconfig(bootstorm::kube::kubeconfig_paths(options.kubeconfig),
                                                 options.context, !options.kubeconfig.empty(), flags);
  if (!config) return config.error();

  std::unique_ptr<LabAttach> attach(new LabAttach());
  attach->server_ = config->server;
  auto promise = std::make_shared<std::promise<Expected<void>>>();
  attach->ready_ = promise->get_future().share();

  LabServerOptions lab_options;
  lab_options.lab = options.lab;
  lab_options.spec = std::move(options.spec);
  lab_options.seed = options.seed;
  lab_options.visible_at_model_time = false;
  lab_options.attached_to = config->server;
  ClusterSyncOptions sync_options = std::move(options.sync);
  auto told = std::move(sync_options.on_ready);
  sync_options.on_ready = [promise, told](Expected<void> outcome) {
    if (told) told(outcome);
    promise->set_value(std::move(outcome));
  };
  LabAttach* raw = attach.get();
  lab_options.kube_companion = [raw, config = std::move(*config), sync_options](
                                   kube::KubeFront& front, model::Lab& lab,
                                   boost::asio::any_io_executor executor) mutable {
    bootstorm::kube::HttpKubeOptions api_options;
    api_options.max_connections = sync_options.writes_in_flight + 8;
    api_options.user_agent = "bootstorm-lab-attach";
    auto api = std::make_unique<bootstorm::kube::HttpKubeApi>(executor, std::move(config), api_options);
    raw->sync_ = std::make_shared<ClusterSync>(front, lab, std::move(api), executor, sync_options);
    raw->sync_->start();
    return std::static_pointer_cast<KubeFrontCompanion>(raw->sync_);
  };
  auto started = LabServer::start(std::move(lab_options));
  if (!started) return started.error();
  attach->lab_ = std::move(*started);
  return attach;
}

LabAttach::~LabAttach() {
  stop();
}

void LabAttach::stop() {
  if (!lab_ || stopped_) return;
  stopped_ = true;
  if (sync_) {
    // Leave the cluster as it was found, as far as an aggregated API goes; a server that does not answer
    // within the deadline is left as it is.
    auto left = std::make_shared<std::promise<void>>();
    auto done = left->get_future();
    boost::asio::co_spawn(lab_->executor(), sync_->leave(),
                          [left](std::exception_ptr) { left->set_value(); });
    done.wait_for(std::chrono::seconds(10));
  }
  lab_->stop();
}

Expected<void> LabAttach::wait_ready(std::chrono::steady_clock::duration timeout) {
  if (ready_.wait_for(timeout) != std::future_status::ready) {
    return Error{
        ErrorKind::timeout,
        "the lab did not finish attaching to " + server_ + " in time (seeding the server and listing it)",
        "see the lab's log for the writes that failed"};
  }
  return ready_.get();
}

nlohmann::json LabAttach::stats() {
  if (!sync_) return nlohmann::json::object();
  return lab_->run_on_lab([this](model::Lab&) { return sync_->stats_json(); });
}

}  // namespace bootstorm::sim::attach

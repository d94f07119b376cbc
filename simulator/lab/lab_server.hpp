#pragma once
// LabServer: the lab simulator as a running server. It loads a lab profile, generates a PKI (CA + leaf for
// 127.0.0.1 and localhost), runs its own io_context on a background thread, and serves the vCenter front and
// the Kubernetes front over HTTPS on loopback. Used in-process for `endpoint: embedded` and by
// `bootstorm lab serve`.
//
// Threading: the model and both fronts live on the lab's thread. From other threads, touch them only through
// run_on_lab() (which must not be called from the lab's thread itself).
#include <boost/asio/any_io_executor.hpp>
#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>

#include "common/expected.hpp"
#include "protocol/http/server.hpp"
#include "simulator/model/lab.hpp"

namespace bootstorm::sim {

namespace vcenter {
class VcenterFront;
}
namespace kube {
class KubeFront;
}

// Something that works beside the lab's standard Kubernetes front on the lab's thread (lab attach's sync
// with another API server). stop() is called on the lab's thread when the server stops, before the lab shuts
// down; it must end the companion's work there.
class KubeFrontCompanion {
 public:
  virtual ~KubeFrontCompanion() = default;
  virtual void stop() = 0;
};

struct Endpoints {
  std::string vcenter_url;  // "https://127.0.0.1:PORT"
  std::string kube_url;     // "https://127.0.0.1:PORT"
  // The Prometheus query API (simulator/monitoring), also listed by the kube front as OpenShift's
  // thanos-querier Route in openshift-monitoring.
  std::string prometheus_url;
  std::string ca_pem;       // the CA that signed both servers' certificates
  std::string username;     // vCenter user
  std::string password;     // vCenter password (registered as a secret)
  std::string kube_token;   // bearer token for the kube front (registered as a secret)
  std::string attached_to;  // LabServerOptions::attached_to
};

struct LabServerOptions {
  std::string lab = "small";           // lab profile: name in the labs directory, or a path
  std::optional<model::LabSpec> spec;  // when set, used instead of loading `lab`
  std::optional<std::uint64_t> seed;   // overrides the profile's seed
  std::string bind_address = "127.0.0.1";
  unsigned short vcenter_port = 0;  // 0: ephemeral
  unsigned short kube_port = 0;
  unsigned short prometheus_port = 0;
  // Builds the kube server's handler over the lab (called once, before the lab thread starts, so it may use
  // the lab freely; the handler runs on the lab's thread). Whatever the handler owns (e.g. the front of
  // kube::make_kube_handler) lives as long as the server and is destroyed before the lab.
  // Empty: the standard Kubernetes front of simulator/kube (kube::make_kube_handler).
  std::function<http::Handler(model::Lab&)> kube_handler_factory;
  // Called once the standard Kubernetes front exists (not with kube_handler_factory), before the lab thread
  // starts; the companion lives until the server stops.
  std::function<std::shared_ptr<KubeFrontCompanion>(kube::KubeFront&, model::Lab&,
                                                    boost::asio::any_io_executor)>
      kube_companion;
  // See model::LabOptions::visible_at_model_time.
  bool visible_at_model_time = true;
  // The API server the lab acts through (lab attach), written to endpoints.json as "attachedTo".
  std::string attached_to;
  // How long stop() waits for the lab thread: one that does not get round to stopping by then is stuck,
  // which is a bug, and the process aborts saying so rather than hang on it.
  std::chrono::seconds stop_deadline{60};
};

class LabServer {
 public:
  // Loads the profile, starts both servers and the lab thread. Errors: unknown/invalid profile, bind failure.
  static Expected<std::unique_ptr<LabServer>> start(LabServerOptions options);
  ~LabServer();  // stops
  LabServer(const LabServer&) = delete;
  LabServer& operator=(const LabServer&) = delete;

  const Endpoints& endpoints() const;
  const model::LabSpec& spec() const;

  // Writes DIR/endpoints.json, DIR/kubeconfig (bearer token, CA data) and DIR/ca.pem (creates DIR).
  // endpoints.json: {"vcenter", "kube", "prometheus", "kubeconfig", "caFile", "username", "password",
  // "kubeToken", "lab"} and, when the lab is attached to another API server, "attachedTo".
  Expected<void> write_state(const std::string& dir) const;

  // Stops both servers and the lab thread (idempotent); see LabServerOptions::stop_deadline.
  void stop();

  boost::asio::any_io_executor executor() const;

  // Runs fn(lab) on the lab's thread and returns its result (blocks the caller).
  template <class Fn>
  auto run_on_lab(Fn fn) -> decltype(fn(std::declval<model::Lab&>())) {
    using R = decltype(fn(std::declval<model::Lab&>()));
    std::packaged_task<R()> task([this, &fn] { return fn(lab_unsafe()); });
    auto result = task.get_future();
    post_to_lab([&task] { task(); });
    return result.get();
  }

  // Direct access; only on the lab's thread.
  model::Lab& lab_unsafe();
  vcenter::VcenterFront& vcenter_unsafe();

  // Beacon calls the lab's guests made (attempted / answered 2xx), for tests.
  struct BeaconStats {
    std::uint64_t attempted = 0;
    std::uint64_t succeeded = 0;
    std::uint64_t failed = 0;
  };
  BeaconStats beacon_stats() const;

  struct Impl;

 private:
  explicit LabServer(std::unique_ptr<Impl> impl);
  void post_to_lab(std::function<void()> fn);
  std::unique_ptr<Impl> impl_;
};

// Writes a kubeconfig for `server` with a bearer token and inline CA data (base64 of the PEM).
std::string make_kubeconfig(const std::string& server, const std::string& ca_pem, const std::string& token);

}  // namespace bootstorm::sim

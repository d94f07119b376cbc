#include "simulator/lab/lab_server.hpp"

#include <fmt/format.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "common/base64.hpp"
#include "common/log.hpp"
#include "protocol/http/client.hpp"
#include "simulator/kube/kube_front.hpp"
#include "simulator/monitoring/prometheus_front.hpp"
#include "simulator/vcenter/vcenter_front.hpp"

namespace bootstorm::sim {

namespace asio = boost::asio;

namespace {

Expected<void> write_file(const std::filesystem::path& path, const std::string& content, bool secret) {
  std::ofstream out(path, std::ios::trunc);
  if (!out) {
    return make_error(ErrorKind::io, fmt::format("Cannot write {}.", path.string()),
                      "Check that the state directory is writable.");
  }
  out << content;
  out.close();
  if (!out) return make_error(ErrorKind::io, fmt::format("Writing {} failed.", path.string()));
  if (secret) {
    std::error_code ec;
    std::filesystem::permissions(path,
                                 std::filesystem::perms::owner_read | std::filesystem::perms::owner_write,
                                 std::filesystem::perm_options::replace, ec);
  }
  return {};
}

}  // namespace

std::string make_kubeconfig(const std::string& server, const std::string& ca_pem, const std::string& token) {
  return fmt::format(
      "apiVersion: v1\n"
      "kind: Config\n"
      "clusters:\n"
      "- name: bootstorm-lab\n"
      "  cluster:\n"
      "    server: {}\n"
      "    certificate-authority-data: {}\n"
      "users:\n"
      "- name: bootstorm-lab\n"
      "  user:\n"
      "    token: {}\n"
      "contexts:\n"
      "- name: bootstorm-lab\n"
      "  context:\n"
      "    cluster: bootstorm-lab\n"
      "    user: bootstorm-lab\n"
      "    namespace: default\n"
      "current-context: bootstorm-lab\n",
      server, base64_encode(ca_pem), token);
}

// An io_context whose pending handlers can be destroyed ahead of the io_context itself (see ~Impl).
class LabIoContext : public asio::io_context {
 public:
  using asio::io_context::shutdown;
};

struct LabServer::Impl {
  // Declaration order is destruction order in reverse: the io_context outlives everything that uses it, the
  // servers (and the handlers they hold) go before the fronts and the lab they refer to.
  LabIoContext io;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work;
  std::thread thread;
  model::LabSpec spec;
  Endpoints endpoints;
  std::unique_ptr<model::Lab> lab;
  std::unique_ptr<vcenter::VcenterFront> vcenter_front;
  // Owned here, not by the kube server's handler: the handler's last copy dies with the server's coroutine
  // frames when the io_context is destroyed — after the lab — and the front must unsubscribe from a live lab.
  std::unique_ptr<kube::KubeFront> kube_front;
  std::shared_ptr<KubeFrontCompanion> kube_companion;
  std::unique_ptr<monitoring::PrometheusFront> prometheus_front;
  std::unique_ptr<http::Server> vcenter_server;
  std::unique_ptr<http::Server> kube_server;
  std::unique_ptr<http::Server> prometheus_server;
  std::map<std::string, std::shared_ptr<http::Client>> beacon_clients;  // per origin
  BeaconStats beacon;  // touched on the lab thread; read after a run_on_lab round trip
  bool running = false;
  std::chrono::seconds stop_deadline{60};

  // Runs after stop() (the lab thread is joined). The servers' suspended coroutines (sessions, watches) hold
  // copies of the kube handler, and a handler from kube_handler_factory may own its front
  // (kube::make_kube_handler), whose destruction unsubscribes from the lab. Left to the io_context's own
  // destructor — after the lab's, since the lab's timers need the io_context — those frames would destroy
  // the front after the lab. Shutting the io_context down first destroys them now, while the servers still
  // hold their handler; the front then goes with the kube server, before the lab (declaration order).
  ~Impl() { io.shutdown(); }

  // The simulated guest agent's call: POST {"vm", "token", "ip"} to the URL from guestinfo.
  void send_beacon(const model::Vm& vm) {
    const std::string url = vm.guestinfo.at(std::string(model::kBeaconUrlKey));
    auto parsed = http::parse_url(url);
    ++beacon.attempted;
    if (!parsed) {
      ++beacon.failed;
      spdlog::warn("lab: VM {} has an invalid beacon URL in guestinfo", vm.name);
      return;
    }
    auto token_it = vm.guestinfo.find(std::string(model::kBeaconTokenKey));
    auto name_it = vm.guestinfo.find(std::string(model::kBeaconVmKey));
    nlohmann::json body{{"vm", name_it != vm.guestinfo.end() ? name_it->second : vm.name},
                        {"token", token_it != vm.guestinfo.end() ? token_it->second : std::string()}};
    if (!vm.guest_address.empty()) body["ip"] = vm.guest_address;
    auto& client = beacon_clients[parsed->origin()];
    if (!client) {
      http::ClientOptions options;
      options.base_url = parsed->origin();
      options.max_connections = 256;
      client = std::make_shared<http::Client>(io.get_executor(), options);
    }
    http::Request request;
    request.method = "POST";
    request.target = parsed->target;
    request.headers = {{"Content-Type", "application/json"}};
    request.body = body.dump();
    request.idempotent = true;  // the listener answers duplicates with 200: a retry is safe
    request.timeout = std::chrono::seconds(10);
    asio::co_spawn(
        io.get_executor(),
        [this, client, request = std::move(request), name = vm.name]() mutable -> asio::awaitable<void> {
          auto response = co_await client->request(std::move(request));
          if (response && response->status / 100 == 2) {
            ++beacon.succeeded;
          } else {
            ++beacon.failed;
            spdlog::debug("lab: beacon of {} failed: {}", name,
                          response ? fmt::format("HTTP {}", response->status) : response.error().what());
          }
        },
        asio::detached);
  }
};

Expected<std::unique_ptr<LabServer>> LabServer::start(LabServerOptions options) {
  auto impl = std::make_unique<Impl>();
  if (options.spec) {
    impl->spec = std::move(*options.spec);
  } else {
    auto spec = model::load_lab_spec(options.lab);
    if (!spec) return spec.error();
    impl->spec = std::move(*spec);
  }
  log::register_secret(impl->spec.vcenter.password);
  log::register_secret(impl->spec.kube.token);

  const http::GeneratedPki pki = http::generate_pki("bootstorm-lab", {"127.0.0.1", "localhost"});
  http::TlsServerOptions tls;
  tls.cert_data = pki.leaf_cert_pem + pki.ca_cert_pem;
  tls.key_data = pki.leaf_key_pem;

  model::LabOptions lab_options;
  lab_options.mode = model::LabOptions::TimeMode::real;
  lab_options.executor = impl->io.get_executor();
  lab_options.seed = options.seed;
  lab_options.visible_at_model_time = options.visible_at_model_time;
  impl->lab = std::make_unique<model::Lab>(impl->spec, lab_options);
  Impl* raw = impl.get();
  impl->lab->set_beacon_hook([raw](const model::Vm& vm) { raw->send_beacon(vm); });
  impl->vcenter_front = std::make_unique<vcenter::VcenterFront>(*impl->lab, impl->io.get_executor());

  http::ServerOptions vc_options;
  vc_options.bind_address = options.bind_address;
  vc_options.port = options.vcenter_port;
  vc_options.tls = tls;
  impl->vcenter_server =
      std::make_unique<http::Server>(impl->io.get_executor(), vc_options, impl->vcenter_front->handler());
  if (auto started = impl->vcenter_server->start(); !started) return started.error();

  // The monitoring stack's query API first: the Kubernetes front lists its address as a Route.
  impl->prometheus_front = std::make_unique<monitoring::PrometheusFront>(*impl->lab);
  http::ServerOptions prometheus_options = vc_options;
  prometheus_options.port = options.prometheus_port;
  impl->prometheus_server = std::make_unique<http::Server>(impl->io.get_executor(), prometheus_options,
                                                           impl->prometheus_front->handler());
  if (auto started = impl->prometheus_server->start(); !started) return started.error();

  // The Kubernetes front (KubeVirt, CDI, Forklift) unless the caller plugs in its own handler.
  http::Handler kube_handler;
  if (options.kube_handler_factory) {
    kube_handler = options.kube_handler_factory(*impl->lab);
  } else {
    kube::KubeFrontOptions kube_front_options;
    kube_front_options.monitoring_route_host =
        fmt::format("{}:{}", options.bind_address, impl->prometheus_server->port());
    impl->kube_front = std::make_unique<kube::KubeFront>(*impl->lab, std::move(kube_front_options));
    kube_handler = impl->kube_front->handler();
    if (options.kube_companion)
      impl->kube_companion = options.kube_companion(*impl->kube_front, *impl->lab, impl->io.get_executor());
  }
  http::ServerOptions kube_options = vc_options;
  kube_options.port = options.kube_port;
  impl->kube_server =
      std::make_unique<http::Server>(impl->io.get_executor(), kube_options, std::move(kube_handler));
  if (auto started = impl->kube_server->start(); !started) return started.error();

  impl->endpoints.vcenter_url = impl->vcenter_server->base_url();
  impl->endpoints.kube_url = impl->kube_server->base_url();
  impl->endpoints.prometheus_url = impl->prometheus_server->base_url();
  impl->endpoints.ca_pem = pki.ca_cert_pem;
  impl->endpoints.username = impl->spec.vcenter.username;
  impl->endpoints.password = impl->spec.vcenter.password;
  impl->endpoints.kube_token = impl->spec.kube.token;
  impl->endpoints.attached_to = options.attached_to;
  impl->stop_deadline = options.stop_deadline;

  impl->work.emplace(impl->io.get_executor());
  impl->thread = std::thread([raw] { raw->io.run(); });
  impl->running = true;
  return std::unique_ptr<LabServer>(new LabServer(std::move(impl)));
}

LabServer::LabServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

LabServer::~LabServer() {
  stop();
}

void LabServer::stop() {
  Impl& m = *impl_;
  if (!m.running) return;
  m.running = false;
  std::promise<void> done;
  auto finished = done.get_future();
  asio::post(m.io, [&m, &done] {
    m.vcenter_server->stop_now();
    m.kube_server->stop_now();
    m.prometheus_server->stop_now();
    if (m.kube_companion) m.kube_companion->stop();
    m.lab->shutdown();
    for (auto& [origin, client] : m.beacon_clients) client->close_idle();
    done.set_value();
  });
  if (finished.wait_for(m.stop_deadline) != std::future_status::ready) {
    // The thread cannot be joined, and what it uses cannot be freed under it.
    spdlog::critical("lab: the lab thread did not stop within {} s: it is stuck (a bug); aborting",
                     m.stop_deadline.count());
    std::abort();
  }
  m.work.reset();
  m.io.stop();
  if (m.thread.joinable()) m.thread.join();
}

const Endpoints& LabServer::endpoints() const {
  return impl_->endpoints;
}
const model::LabSpec& LabServer::spec() const {
  return impl_->spec;
}
boost::asio::any_io_executor LabServer::executor() const {
  return impl_->io.get_executor();
}
model::Lab& LabServer::lab_unsafe() {
  return *impl_->lab;
}
vcenter::VcenterFront& LabServer::vcenter_unsafe() {
  return *impl_->vcenter_front;
}

void LabServer::post_to_lab(std::function<void()> fn) {
  asio::post(impl_->io, std::move(fn));
}

LabServer::BeaconStats LabServer::beacon_stats() const {
  auto* self = const_cast<LabServer*>(this);
  return self->run_on_lab([self](model::Lab&) { return self->impl_->beacon; });
}

Expected<void> LabServer::write_state(const std::string& dir) const {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    return make_error(ErrorKind::io,
                      fmt::format("Cannot create the state directory {}: {}.", dir, ec.message()));
  }
  const fs::path base = fs::absolute(dir, ec);
  const fs::path ca = base / "ca.pem";
  const fs::path kubeconfig = base / "kubeconfig";
  if (auto r = write_file(ca, impl_->endpoints.ca_pem, false); !r) return r;
  if (auto r = write_file(
          kubeconfig,
          make_kubeconfig(impl_->endpoints.kube_url, impl_->endpoints.ca_pem, impl_->endpoints.kube_token),
          true);
      !r) {
    return r;
  }
  nlohmann::json endpoints{{"vcenter", impl_->endpoints.vcenter_url},
                           {"kube", impl_->endpoints.kube_url},
                           {"prometheus", impl_->endpoints.prometheus_url},
                           {"kubeconfig", kubeconfig.string()},
                           {"caFile", ca.string()},
                           {"username", impl_->endpoints.username},
                           {"password", impl_->endpoints.password},
                           {"kubeToken", impl_->endpoints.kube_token},
                           {"lab", impl_->spec.name}};
  if (!impl_->endpoints.attached_to.empty()) endpoints["attachedTo"] = impl_->endpoints.attached_to;
  // Written last and atomically (rename): its presence means the lab is listening.
  const fs::path tmp = base / "endpoints.json.tmp";
  if (auto r = write_file(tmp, endpoints.dump(2) + "\n", true); !r) return r;
  fs::rename(tmp, base / "endpoints.json", ec);
  if (ec)
    return make_error(ErrorKind::io,
                      fmt::format("Cannot write {}: {}.", (base / "endpoints.json").string(), ec.message()));
  return {};
}

}  // namespace bootstorm::sim

// KubeVirt provider (see kubevirt_provider.hpp).
#include "providers/kubevirt/kubevirt_provider.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <deque>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>

#include "common/async/sleep.hpp"
#include "common/async/token_bucket.hpp"
#include "common/log.hpp"
#include "providers/http/client.hpp"
#include "providers/kubevirt/kube_config.hpp"
#include "providers/kubevirt/kube_objects.hpp"
#include "providers/kubevirt/vmi_tracker.hpp"
#include "providers/kubevirt/watch_thread.hpp"

namespace bootstorm::kubevirt {
namespace asio = boost::asio;
using asio::awaitable;
using nlohmann::json;
using std::chrono::steady_clock;
using std::chrono::system_clock;

namespace {

constexpr auto kUseAwaitable = asio::as_tuple(asio::use_awaitable);
constexpr int kWatchTimeoutSeconds = 300;
constexpr auto kCatchUpWindow = std::chrono::milliseconds(500);
constexpr auto kDataVolumeFallbackPoll = std::chrono::seconds(10);
// How long the DataVolume watch outlives its last waiter. Creates paced by the request budget finish one at a
// time: a watch stopped as soon as no DataVolume was pending was listed again for nearly every VM (3.6
// requests per VM instead of 2 for 1,000 VMs at 50 requests/s).
constexpr auto kDataVolumeWatchLinger = std::chrono::seconds(5);

system_clock::time_point wall_of(steady_clock::time_point mono) {
  return system_clock::now() - std::chrono::duration_cast<system_clock::duration>(steady_clock::now() - mono);
}

std::string label_of(const json& obj, const char* key) {
  if (!obj.is_object()) return {};
  auto md = obj.find("metadata");
  if (md == obj.end() || !md->is_object()) return {};
  auto labels = md->find("labels");
  if (labels == md->end() || !labels->is_object()) return {};
  auto v = labels->find(key);
  return v != labels->end() && v->is_string() ? v->get<std::string>() : std::string();
}

std::string name_of(const json& obj) {
  if (!obj.is_object()) return {};
  auto md = obj.find("metadata");
  return md != obj.end() && md->is_object() ? md->value("name", "") : std::string();
}

// How late this process may be in handing a watch line to its handler, measured rather than assumed
// (it is the stated resolution of watch milestones, and it must never be smaller than the real error):
//  * queueing: the provider shares one event loop with the engine (start responses, journal, progress); a
//    line that reached the socket while the loop was busy waits in the loop's queue. A probe timer due every
//    kProbePeriod measures that wait (how late it runs). The bound at time t is the largest wait of the
//    probes that ran in the last kProbeWindow plus how overdue the pending probe is at t. A TLS record takes
//    up to two turns of the loop (socket read, then decryption), hence twice that wait.
//  * backlog: lines are handed over one after the other, so a line also waits for the handling of the lines
//    and records before it. The next read is issued as soon as the previous lines are handled; if data is
//    already waiting it completes within the queueing bound. So a line that follows the previous one within
//    2 x queueing + kGapMargin may have been waiting all along (it joins the backlog: its bound grows with
//    the time since the backlog began); a longer gap proves the socket had run dry (a fresh backlog).
class LatenessMonitor : public std::enable_shared_from_this<LatenessMonitor> {
 public:
  static constexpr auto kProbePeriod = std::chrono::milliseconds(1);
  static constexpr auto kProbeWindow = std::chrono::milliseconds(250);
  static constexpr auto kGapMargin = std::chrono::milliseconds(1);

  // `other_thread`: the monitor runs on an executor of another thread (the WatchThread), so stop() posts.
  LatenessMonitor(asio::any_io_executor executor, bool other_thread)
      : timer_(std::move(executor)), other_thread_(other_thread) {}

  void start() {
    auto self = shared_from_this();
    asio::co_spawn(
        timer_.get_executor(),
        [self]() -> awaitable<void> {
          while (!self->stopped_) {
            self->due_ = steady_clock::now() + kProbePeriod;
            self->timer_.expires_at(self->due_);
            co_await self->timer_.async_wait(kUseAwaitable);
            if (self->stopped_) break;
            const auto ran = steady_clock::now();
            self->record(ran, ran - self->due_);
          }
        },
        asio::detached);
  }
  void stop() {
    if (!other_thread_) {
      stopped_ = true;
      timer_.cancel();
      return;
    }
    asio::post(timer_.get_executor(), [self = shared_from_this()] {
      self->stopped_ = true;
      self->timer_.cancel();
    });
  }

  // A line is handed over at `at`: the bound (seconds) on how long it waited in this process.
  double line_started(steady_clock::time_point at) {
    auto queueing = std::max(steady_clock::duration::zero(), at - due_);
    for (const auto& [when, lag] : recent_) {
      if (at - when <= kProbeWindow) queueing = std::max(queueing, lag);
    }
    if (!in_backlog_ || at - last_line_end_ > 2 * queueing + kGapMargin) backlog_start_ = at;
    in_backlog_ = true;
    return std::chrono::duration<double>(2 * queueing + (at - backlog_start_)).count();
  }
  void line_finished() { last_line_end_ = steady_clock::now(); }

 private:
  void record(steady_clock::time_point ran, steady_clock::duration lag) {
    // Sliding-window maximum: drop entries that are older than the window or dominated by the new one.
    while (!recent_.empty() && (ran - recent_.front().first > kProbeWindow)) recent_.pop_front();
    while (!recent_.empty() && recent_.back().second <= lag) recent_.pop_back();
    recent_.emplace_back(ran, lag);
  }

  asio::steady_timer timer_;
  bool other_thread_;
  bool stopped_ = false;
  steady_clock::time_point due_ = steady_clock::now();
  std::deque<std::pair<steady_clock::time_point, steady_clock::duration>> recent_;
  bool in_backlog_ = false;
  steady_clock::time_point backlog_start_{}, last_line_end_{};
};

// What a stream read on the WatchThread hands back to the provider's executor.
struct StreamOutcome {
  Expected<void> result;
  int status = 0;
  std::string error_body;
  ClientInstant connected_at;
};

struct WatchHandlers {
  std::function<void(const std::vector<json>& items, ClientInstant at, bool relist)> on_list;
  // `lateness_s`: how long the line may have waited in this process before `at` (0 without a monitor).
  std::function<void(const WatchEvent& event, ClientInstant at, bool catch_up, double lateness_s)> on_event;
  std::shared_ptr<LatenessMonitor> lateness;  // optional
  // Read and stamp the stream on the provider's WatchThread (which must exist), not on its executor.
  bool own_thread = false;
  std::function<void(ClientInstant at)> on_alive;
  std::function<bool()> done;
};

class Impl : public std::enable_shared_from_this<Impl> {
 public:
  Impl(asio::any_io_executor executor, api::ProviderConfig config)
      : executor_(std::move(executor)),
        config_(std::move(config)),
        // At most one second of budget at once: a burst of maxConcurrent (10,000 in a scale run) sent every
        // create at the same instant, whatever requestsPerSecond said.
        bucket_(executor_, config_.requests_per_second,
                std::min<double>(std::max(1, config_.max_concurrent),
                                 std::max(1.0, config_.requests_per_second))) {
    log::register_secret(config_.password);
  }

  api::Capabilities capabilities() const {
    api::Capabilities caps;
    caps.observed = {{api::Milestone::scheduled, kWatchResolutionS},
                     {api::Milestone::running, kWatchResolutionS},
                     {api::Milestone::guest_agent, kWatchResolutionS},
                     {api::Milestone::ip_assigned, kWatchResolutionS}};
    caps.start_blocks_until_powered_on = false;
    return caps;
  }

  api::ApiStats stats() const { return stats_; }

  // --- connection ---

  awaitable<Expected<void>> connect() {
    auto resolved = resolve_client_config(config_);
    if (!resolved) co_return resolved.error();
    kube_ = resolved.value();
    if (config_.namespace_.empty()) {
      config_.namespace_ = kube_.default_namespace.empty() ? "default" : kube_.default_namespace;
    }
    auto url = http::parse_url(kube_.server);
    if (!url || url->scheme != "https") {
      co_return make_error(
          ErrorKind::invalid_input,
          "the API server URL \"" + kube_.server + "\" of " + kube_.source + " is not an https URL",
          "Kubernetes API servers are reached over https");
    }
    prefix_ = url->target == "/" ? std::string() : url->target;
    while (!prefix_.empty() && prefix_.back() == '/') prefix_.pop_back();
    creds_.emplace(kube_);
    http::ClientOptions options;
    options.base_url = url->origin();
    options.tls = kube_.tls;
    if (kube_.auth.exec) {
      auto cred = creds_->exec_credential(system_clock::now());
      if (!cred) co_return cred.error();
      if (!cred->client_certificate_data.empty()) {
        options.tls.client_cert_data = cred->client_certificate_data;
        options.tls.client_key_data = cred->client_key_data;
        options.tls.client_cert_file.clear();
        options.tls.client_key_file.clear();
      }
    }
    if (options.tls.insecure_skip_verify) {
      spdlog::warn(
          "TLS verification of {} is disabled (insecure-skip-tls-verify): anyone on the path can "
          "impersonate the API server; use it only in a lab",
          kube_.server);
    }
    // One connection per concurrent call, except that pipelined starts share theirs (start_depth()).
    options.max_connections =
        start_connections(static_cast<std::size_t>(std::max(1, config_.max_concurrent)));
    options.user_agent = "bootstorm/kubevirt";
    options.default_headers = {{"Accept", "application/json"}};
    watch_options_ = options;
    watch_options_->max_connections = 4;
    try {
      client_ = std::make_unique<http::Client>(executor_, std::move(options));
    } catch (const std::exception& e) {
      co_return make_error(ErrorKind::tls, std::string("cannot set up TLS for ") + kube_.server + " (" +
                                               kube_.source + "): " + e.what());
    }
    auto resp =
        co_await call("GET", "/apis/kubevirt.io/v1", {}, "checking the KubeVirt API at " + kube_.server);
    if (!resp) co_return resp.error();
    if (resp->status == 404) {
      co_return make_error(
          ErrorKind::not_found,
          "the API server " + kube_.server + " does not serve kubevirt.io/v1 (" + kube_.source + ")",
          "install KubeVirt / OpenShift Virtualization, or check that the context points at the "
          "right cluster");
    }
    if (resp->status != 200)
      co_return status_error(resp->status, resp->body, "checking the KubeVirt API at " + kube_.server);
    spdlog::info("connected to {} ({}), namespace {}", kube_.server, kube_.source, config_.namespace_);
    co_return Expected<void>();
  }

  awaitable<void> disconnect() {
    shutdown();
    if (client_) client_->close_idle();
    co_return;
  }

  void shutdown() {
    stop_dv_watch();
    wake_all_dv_waiters();
  }

  // --- inventory ---

  awaitable<Expected<void>> check_inventory(const api::InventoryRequest& request) {
    const std::string& ns = config_.namespace_;
    // Nodes: every placement host must be a schedulable, Ready node.
    if (!request.hosts.empty()) {
      auto resp = co_await call("GET", "/api/v1/nodes", {}, "listing nodes");
      if (!resp) co_return resp.error();
      if (resp->status != 200) co_return status_error(resp->status, resp->body, "listing nodes");
      json list = json::parse(resp->body, nullptr, false);
      std::map<std::string, const json*> by_host;
      std::string existing;
      if (list.is_object() && list.contains("items") && list["items"].is_array()) {
        for (const auto& node : list["items"]) {
          std::string name = name_of(node);
          std::string hostname = label_of(node, kHostnameLabel);
          by_host[hostname.empty() ? name : hostname] = &node;
          by_host.emplace(name, &node);
          existing += (existing.empty() ? "" : ", ") + (hostname.empty() ? name : hostname);
        }
      }
      for (const auto& host : request.hosts) {
        auto it = by_host.find(host);
        if (it == by_host.end()) {
          co_return make_error(
              ErrorKind::not_found,
              "node \"" + host + "\" named by the plan's placement does not exist in " + kube_.server,
              "nodes (kubernetes.io/hostname): " + (existing.empty() ? "(none)" : existing));
        }
        const json& node = *it->second;
        if (node.contains("spec") && node["spec"].is_object() && node["spec"].value("unschedulable", false)) {
          co_return make_error(ErrorKind::invalid_input, "node \"" + host + "\" is cordoned (unschedulable)",
                               "uncordon it (kubectl uncordon " + host + ") or place the VMs elsewhere");
        }
        if (node.contains("status") && node["status"].is_object() && node["status"].contains("conditions") &&
            node["status"]["conditions"].is_array()) {
          for (const auto& c : node["status"]["conditions"]) {
            if (c.is_object() && c.value("type", "") == "Ready" && c.value("status", "") != "True") {
              co_return make_error(ErrorKind::invalid_input,
                                   "node \"" + host + "\" is not Ready (" + c.value("reason", "") + ": " +
                                       c.value("message", "") + ")",
                                   "fix the node or place the VMs elsewhere");
            }
          }
        }
      }
    }
    // Golden image.
    if (!config_.golden_datasource.empty()) {
      std::string dsns =
          config_.golden_datasource_namespace.empty() ? ns : config_.golden_datasource_namespace;
      std::string what = "reading DataSource " + dsns + "/" + config_.golden_datasource;
      auto resp = co_await call("GET", datasource_path(dsns, config_.golden_datasource), {}, what);
      if (!resp) co_return resp.error();
      if (resp->status == 404) {
        std::string names;
        auto all = co_await call("GET", "/apis/cdi.kubevirt.io/v1beta1/namespaces/" + dsns + "/datasources",
                                 {}, "listing DataSources");
        if (all && all->status == 200) {
          json list = json::parse(all->body, nullptr, false);
          if (list.is_object() && list.contains("items") && list["items"].is_array()) {
            for (const auto& item : list["items"]) names += (names.empty() ? "" : ", ") + name_of(item);
          }
        }
        co_return make_error(
            ErrorKind::not_found,
            "golden DataSource " + dsns + "/" + config_.golden_datasource + " does not exist",
            "DataSources in " + dsns + ": " + (names.empty() ? "(none)" : names));
      }
      if (resp->status != 200) co_return status_error(resp->status, resp->body, what);
      json ds = json::parse(resp->body, nullptr, false);
      if (ds.is_object() && ds.contains("status") && ds["status"].is_object() &&
          ds["status"].contains("conditions") && ds["status"]["conditions"].is_array()) {
        for (const auto& c : ds["status"]["conditions"]) {
          if (c.is_object() && c.value("type", "") == "Ready" && c.value("status", "") == "False") {
            co_return make_error(ErrorKind::invalid_input,
                                 "golden DataSource " + dsns + "/" + config_.golden_datasource +
                                     " is not Ready (" + c.value("reason", "") + ": " +
                                     c.value("message", "") + ")",
                                 "wait for its source PVC/snapshot to be ready");
          }
        }
      }
    } else if (!config_.golden_pvc.empty()) {
      std::string pns = ns, pname = config_.golden_pvc;
      if (auto slash = pname.find('/'); slash != std::string::npos) {
        pns = pname.substr(0, slash);
        pname = pname.substr(slash + 1);
      }
      std::string what = "reading PersistentVolumeClaim " + pns + "/" + pname;
      auto resp =
          co_await call("GET", "/api/v1/namespaces/" + pns + "/persistentvolumeclaims/" + pname, {}, what);
      if (!resp) co_return resp.error();
      if (resp->status == 404) {
        co_return make_error(ErrorKind::not_found, "golden PVC " + pns + "/" + pname + " does not exist",
                             "name an existing PVC as golden.pvc (namespace/name) or use golden.dataSource");
      }
      if (resp->status != 200) co_return status_error(resp->status, resp->body, what);
    } else {
      co_return make_error(ErrorKind::invalid_input, "the plan names no golden image for KubeVirt",
                           "set golden.dataSource {name, namespace} or golden.pvc");
    }
    // The plan's namespace: created at the first provision when missing.
    auto resp = co_await call("GET", "/api/v1/namespaces/" + ns, {}, "reading namespace " + ns);
    if (!resp) co_return resp.error();
    namespace_missing_ = resp->status == 404;
    namespace_known_ = true;
    if (resp->status != 200 && resp->status != 404) {
      co_return status_error(resp->status, resp->body, "reading namespace " + ns);
    }
    co_return Expected<void>();
  }

  // --- provisioning ---

  awaitable<Expected<void>> ensure_namespace() {
    if (namespace_ready_) co_return Expected<void>();
    if (namespace_creating_) {
      // Another provision is creating it: wait for that one.
      auto timer = std::make_shared<asio::steady_timer>(executor_, steady_clock::time_point::max());
      namespace_waiters_.push_back(timer);
      co_await timer->async_wait(kUseAwaitable);
      if (namespace_ready_) co_return Expected<void>();
      co_return make_error(ErrorKind::api,
                           "creating namespace " + config_.namespace_ + " failed (see above)");
    }
    namespace_creating_ = true;
    Expected<void> result;
    const std::string& ns = config_.namespace_;
    bool create = namespace_missing_;
    if (!namespace_known_) {
      auto resp = co_await call("GET", "/api/v1/namespaces/" + ns, {}, "reading namespace " + ns);
      if (!resp) {
        result = resp.error();
      } else {
        create = resp->status == 404;
      }
    }
    if (result && create) {
      std::string what = "creating namespace " + ns;
      auto resp =
          co_await call("POST", "/api/v1/namespaces", build_namespace(ns, config_.run_id).dump(), what);
      if (!resp) {
        result = resp.error();
      } else if (resp->status != 201 && resp->status != 200 && resp->status != 409) {
        result = status_error(resp->status, resp->body, what);
      } else if (resp->status != 409) {
        spdlog::info("created namespace {}", ns);
      }
    }
    namespace_ready_ = static_cast<bool>(result);
    namespace_creating_ = false;
    for (auto& t : namespace_waiters_) t->cancel();
    namespace_waiters_.clear();
    co_return result;
  }

  awaitable<Expected<api::VmHandle>> provision(const api::VmSpec& spec) {
    // The create's turn in the request budget comes first: thousands of creates waiting for it hold nothing
    // yet (built VirtualMachine bodies waiting here were ~15 KB per VM at 10,000 VMs).
    if (!config_.dry_run) co_await bucket_.acquire();
    if (auto ns = co_await ensure_namespace(); !ns) co_return ns.error();
    VmBuild build;
    build.name = spec.name;
    build.namespace_ = config_.namespace_;
    build.run_id = config_.run_id;
    build.scenario = spec.scenario;
    build.host = spec.host;
    build.datasource_name = config_.golden_datasource;
    build.datasource_namespace = config_.golden_datasource_namespace;
    build.pvc = config_.golden_pvc;
    build.clone_strategy = config_.clone_type;
    if (!config_.beacon_url.empty()) {
      build.beacon_url = config_.beacon_url;
      build.beacon_token = config_.beacon_token ? config_.beacon_token(spec.name) : std::string();
      log::register_secret(build.beacon_token);
    }
    const std::string body = build_virtual_machine(build).dump();
    const std::string what = "creating VirtualMachine " + config_.namespace_ + "/" + spec.name;
    api::VmHandle handle{spec.name, config_.namespace_ + "/" + spec.name, spec.host, spec.scenario};
    // POST is not retried by the HTTP client; a create is safe to repeat here because a duplicate answers 409
    // and is then checked for our run label.
    for (int attempt = 1;; ++attempt) {
      auto resp = co_await call("POST", vms_path(config_.namespace_), body, what, /*budgeted=*/attempt > 1);
      if (!resp) co_return resp.error();
      if (resp->status == 200 || resp->status == 201) co_return handle;
      if (resp->status == 409) {
        auto existing =
            co_await call("GET", vm_path(config_.namespace_, spec.name), {}, "reading " + spec.name);
        if (existing && existing->status == 200 &&
            label_of(json::parse(existing->body, nullptr, false), kRunLabel) == config_.run_id) {
          co_return handle;  // created by an earlier attempt of this run
        }
        co_return make_error(ErrorKind::conflict,
                             "VirtualMachine " + config_.namespace_ + "/" + spec.name +
                                 " already exists and does not belong to run " + config_.run_id,
                             "delete it or use another namespace", 409);
      }
      if ((resp->status == 429 || resp->status == 503 || resp->status == 504) && attempt < 5) {
        stats_.retries++;
        co_await async::sleep_for(backoff(attempt));
        continue;
      }
      co_return status_error(resp->status, resp->body, what);
    }
  }

  awaitable<Expected<void>> wait_startable(const api::VmHandle& vm, std::chrono::milliseconds timeout) {
    if (config_.dry_run) co_return Expected<void>();
    const std::string dv = datavolume_name(vm.name);
    const auto deadline = steady_clock::now() + timeout;
    ++dv_waiter_count_;
    ensure_dv_watch();
    struct Release {
      Impl* self;
      ~Release() { self->release_dv_waiter(); }
    } release{this};
    auto last_poll = steady_clock::now();
    while (true) {
      if (auto it = dv_states_.find(dv); it != dv_states_.end()) {
        if (it->second.succeeded) co_return Expected<void>();
        if (it->second.failed) {
          co_return make_error(ErrorKind::api,
                               "DataVolume " + config_.namespace_ + "/" + dv + " of VM " + vm.name +
                                   " failed: " + it->second.detail,
                               "check CDI (kubectl describe dv " + dv + " -n " + config_.namespace_ +
                                   ") and the golden source");
        }
      }
      auto now = steady_clock::now();
      if (now >= deadline) {
        auto it = dv_states_.find(dv);
        co_return make_error(
            ErrorKind::timeout,
            "DataVolume " + config_.namespace_ + "/" + dv + " of VM " + vm.name + " did not succeed within " +
                std::to_string(timeout.count() / 1000) + " s (" +
                (it == dv_states_.end() ? std::string("not seen yet") : it->second.detail) + ")",
            "raise the provisioning timeout or check CDI clone progress");
      }
      if (now - last_poll >= kDataVolumeFallbackPoll && !dv_states_.contains(dv)) {
        // The watch should deliver every change; a direct read every 10 s guards against a selector that
        // misses the DataVolume (e.g. labels not propagated from the template). A DataVolume the watch has
        // seen needs no read: at 10,000 VMs these reads alone asked for 1,000 requests/s.
        last_poll = now;
        auto resp = co_await call("GET", datavolumes_path(config_.namespace_) + "/" + dv, {},
                                  "reading DataVolume " + dv);
        if (resp && resp->status == 200) {
          json obj = json::parse(resp->body, nullptr, false);
          if (obj.is_object()) dv_states_[dv] = datavolume_state(obj);
        }
        continue;
      }
      auto timer = std::make_shared<asio::steady_timer>(executor_);
      timer->expires_at(std::min(deadline, last_poll + kDataVolumeFallbackPoll));
      dv_waiters_[dv].push_back(timer);
      co_await timer->async_wait(kUseAwaitable);
    }
  }

  // --- storm ---

  awaitable<Expected<void>> prepare_storm(std::size_t expected_starts) {
    if (!client_) co_return make_error(ErrorKind::internal, "prepare_storm before connect");
    if (dv_waiter_count_ == 0) stop_dv_watch();  // provisioning is over
    if (auto auth = refresh_auth(); !auth) co_return auth.error();
    std::size_t count = start_connections(std::min<std::size_t>(
        expected_starts, static_cast<std::size_t>(std::max(1, config_.max_concurrent))));
    if (config_.dry_run || count == 0) co_return Expected<void>();
    if (start_depth() > 1) {
      spdlog::info("start burst: {} starts per connection (HTTP/1.1 pipelining) over {} connections",
                   start_depth(), count);
    }
    auto warmed = co_await client_->prewarm(count);
    if (!warmed) co_return tls_aware(warmed.error(), "opening connections to " + kube_.server);
    co_return Expected<void>();
  }

  // Starts written back to back on one connection (apiBudget.startsPerConnection, or automatic).
  int start_depth() const {
    return api::starts_per_connection(config_.starts_per_connection, std::max(1, config_.max_concurrent));
  }
  std::size_t start_connections(std::size_t concurrent_starts) const {
    const auto depth = static_cast<std::size_t>(start_depth());
    return (concurrent_starts + depth - 1) / depth;
  }

  awaitable<Expected<api::StartResult>> start(const api::VmHandle& vm) {
    const std::string what = "starting VirtualMachine " + config_.namespace_ + "/" + vm.name;
    const std::string path = vm_subresource_path(config_.namespace_, vm.name, "start");
    Expected<http::Response> resp = make_error(ErrorKind::internal, what + ": not sent");
    if (start_depth() > 1 && !config_.dry_run) {
      resp = co_await start_pipelined(path, what);
    } else {
      resp = co_await call("PUT", path, start_options().dump(), what, /*budgeted=*/false);
    }
    if (!resp) co_return resp.error();
    api::StartResult result;
    result.written_mono = resp->written_at;
    result.written_wall = resp->written_at_wall;
    result.acknowledged_mono = resp->received_at;
    result.acknowledged_wall = wall_of(resp->received_at);
    result.attempts = resp->attempts;
    if (resp->status == 200 || resp->status == 202 || resp->status == 204) co_return result;
    if (resp->status == 409) {
      Error e = status_error(resp->status, resp->body, what);
      if (e.message.find("already running") != std::string::npos) {
        // A retried start whose first attempt went through, or a VM started behind our back: it runs, so it
        // is treated as started; its timings are then only as good as the first attempt's.
        spdlog::warn("{}: the VM was already running (HTTP 409) — treated as started", what);
        co_return result;
      }
      if (e.message.find("does not support manual start") != std::string::npos && resp->attempts > 1) {
        // A start on a Halted VM switches its runStrategy to Always; when an earlier attempt of this request
        // went through (its answer was lost or was a 5xx), the retry meets Always before the VMI exists.
        spdlog::warn(
            "{}: a retried start found runStrategy Always (HTTP 409) — an earlier attempt started it", what);
        co_return result;
      }
      if (e.message.find("does not support manual start") != std::string::npos) {
        co_return make_error(
            ErrorKind::conflict,
            what + " failed: its runStrategy (Always/Once) refuses start requests (" + e.message + ")",
            "bootstorm creates VMs with runStrategy Halted; something changed it — recreate the VM", 409);
      }
      co_return e;
    }
    co_return status_error(resp->status, resp->body, what);
  }

  // --- the start burst, pipelined ---
  //
  // The StartBarrier releases every start in one turn of the event loop. start_pipelined() queues each one
  // and the first of them posts flush_starts(), which runs after the whole turn: it cuts the queue into
  // batches of start_depth() and hands each batch to http::Client::pipeline (one write per connection).

  struct PendingStart {
    PendingStart(asio::any_io_executor executor, http::Request r) : request(std::move(r)), done(executor) {}
    http::Request request;
    asio::steady_timer done;  // cancelled when `response` is set
    std::optional<Expected<http::Response>> response;
  };

  awaitable<Expected<http::Response>> start_pipelined(const std::string& path, const std::string& what) {
    if (!client_) co_return make_error(ErrorKind::internal, what + ": not connected");
    if (auto auth = refresh_auth(); !auth) co_return auth.error();
    auto pending =
        std::make_shared<PendingStart>(executor_, api_request("PUT", path, start_options().dump()));
    start_queue_.push_back(pending);
    if (!start_flush_posted_) {
      start_flush_posted_ = true;
      asio::post(executor_, [self = shared_from_this()] { self->flush_starts(); });
    }
    pending->done.expires_at(steady_clock::time_point::max());
    while (!pending->response) co_await pending->done.async_wait(asio::as_tuple(asio::use_awaitable));
    auto resp = std::move(*pending->response);
    count_call(resp);
    if (!resp) co_return tls_aware(resp.error(), what);
    if (resp->status == 401 && (kube_.auth.exec || !kube_.auth.token_file.empty())) {
      // Credentials expired under the burst: this start goes again on its own with fresh ones.
      creds_->invalidate();
      co_return co_await call("PUT", path, start_options().dump(), what, /*budgeted=*/false);
    }
    co_return resp;
  }

  void flush_starts() {
    start_flush_posted_ = false;
    auto queue = std::move(start_queue_);
    start_queue_.clear();
    const auto depth = static_cast<std::size_t>(start_depth());
    for (std::size_t first = 0; first < queue.size(); first += depth) {
      std::vector<std::shared_ptr<PendingStart>> batch(
          queue.begin() + static_cast<std::ptrdiff_t>(first),
          queue.begin() + static_cast<std::ptrdiff_t>(std::min(queue.size(), first + depth)));
      asio::co_spawn(executor_, send_start_batch(shared_from_this(), std::move(batch)), asio::detached);
    }
  }

  static awaitable<void> send_start_batch(std::shared_ptr<Impl> self,
                                          std::vector<std::shared_ptr<PendingStart>> batch) {
    std::vector<http::Request> requests;
    requests.reserve(batch.size());
    for (const auto& pending : batch) requests.push_back(std::move(pending->request));  // not needed after
    // As in call(): stamped as the batch is handed over; the client writes it before it first suspends.
    const auto handed_mono = steady_clock::now();
    const auto handed_wall = system_clock::now();
    std::vector<Expected<http::Response>> results;
    try {
      results = co_await self->client_->pipeline(std::move(requests));
    } catch (const std::exception& e) {
      for (auto& pending : batch) {
        pending->response =
            make_error(ErrorKind::internal, std::string("pipelined start failed: ") + e.what());
        pending->done.cancel();
      }
      co_return;
    }
    for (std::size_t i = 0; i < batch.size(); ++i) {
      auto& resp = results[i];
      stamp_handed(resp, handed_mono, handed_wall);
      batch[i]->response = std::move(resp);
      batch[i]->done.cancel();
    }
  }

  // --- observe ---

  awaitable<void> observe(std::vector<api::VmHandle> vms, api::MilestoneSink sink, CancelSignal stop) {
    if (config_.dry_run || vms.empty()) co_return;
    std::vector<std::string> names;
    for (const auto& vm : vms) names.push_back(vm.name);
    auto tracker = std::make_shared<VmiTracker>(names, ClientInstant::now());
    auto publish = [sink](std::vector<api::MilestoneEvent> events) {
      for (auto& ev : events) sink(std::move(ev));
    };
    WatchHandlers h;
    h.on_list = [tracker, publish](const std::vector<json>& items, ClientInstant at, bool) {
      for (const auto& item : items) publish(tracker->on_listed_object(item, at));
      tracker->note_stream_alive(at);
    };
    // Unschedulable VMIs never boot: say so (at most every 10 s, with the scheduler's own message) rather
    // than leave the user watching a stalled progress line until the storm timeout.
    auto unschedulable_told = std::make_shared<std::pair<std::size_t, steady_clock::time_point>>();
    auto tell_unschedulable = [tracker, unschedulable_told, ns = config_.namespace_] {
      const auto& pending = tracker->unschedulable();
      auto& [told, when] = *unschedulable_told;
      const auto now = steady_clock::now();
      if (pending.empty() || pending.size() == told || now - when < std::chrono::seconds(10)) return;
      told = pending.size();
      when = now;
      const auto& [name, message] = *pending.begin();
      spdlog::warn(
          "{} VirtualMachineInstance(s) cannot be scheduled and will not boot unless capacity frees up, "
          "e.g. {}/{}: {} — check the nodes' free memory and CPU against the VM size and the placement",
          pending.size(), ns, name, message);
    };
    h.on_event = [tracker, publish, tell_unschedulable](const WatchEvent& ev, ClientInstant at, bool catch_up,
                                                        double lateness_s) {
      if (ev.type == WatchEvent::Type::added || ev.type == WatchEvent::Type::modified) {
        publish(tracker->on_watch_object(ev.object, at, catch_up, lateness_s));
        tell_unschedulable();
      }
    };
    h.on_alive = [tracker](ClientInstant at) { tracker->note_stream_alive(at); };
    h.done = [tracker] { return tracker->complete(); };
    if (!watch_thread_ && watch_options_) {
      try {
        watch_thread_ = std::make_shared<WatchThread>(*watch_options_);
      } catch (const std::exception& e) {
        spdlog::warn("cannot start the watch thread ({}); the VMI watch shares the provider's event loop",
                     e.what());
        watch_options_.reset();
      }
    }
    h.own_thread = watch_thread_ != nullptr;
    h.lateness =
        std::make_shared<LatenessMonitor>(h.own_thread ? watch_thread_->executor() : executor_, h.own_thread);
    h.lateness->start();
    struct StopProbe {
      std::shared_ptr<LatenessMonitor> monitor;
      ~StopProbe() { monitor->stop(); }  // also when this coroutine is destroyed mid-watch
    } stop_probe{h.lateness};
    co_await list_watch(vmis_path(config_.namespace_), h, stop, "VirtualMachineInstances");
    for (const auto& name : tracker->failed()) {
      spdlog::warn("VMI {}/{} ended (Failed/Succeeded) before reaching every milestone", config_.namespace_,
                   name);
    }
  }

  // --- stop / destroy / list ---

  // Reads the VM and checks it carries the run label. nullopt + ok = gone.
  awaitable<Expected<std::optional<json>>> fetch_owned(const api::VmHandle& vm, const std::string& action) {
    if (config_.run_id.empty()) {
      co_return make_error(ErrorKind::invalid_input, "refusing to " + action + " " + vm.name + ": no run id");
    }
    std::string ns = config_.namespace_, name = vm.name;
    if (auto slash = vm.id.find('/'); slash != std::string::npos) ns = vm.id.substr(0, slash);
    auto resp = co_await call("GET", vm_path(ns, name), {}, "reading VirtualMachine " + ns + "/" + name);
    if (!resp) co_return resp.error();
    if (resp->status == 404) co_return std::optional<json>();
    if (resp->status != 200)
      co_return status_error(resp->status, resp->body, "reading VirtualMachine " + ns + "/" + name);
    json obj = json::parse(resp->body, nullptr, false);
    std::string label = label_of(obj, kRunLabel);
    if (label != config_.run_id) {
      co_return make_error(ErrorKind::invalid_input,
                           "refusing to " + action + " VirtualMachine " + ns + "/" + name + ": its label " +
                               kRunLabel + " is \"" + label + "\", not this run's \"" + config_.run_id + "\"",
                           "bootstorm only touches what its run created");
    }
    co_return std::optional<json>(std::move(obj));
  }

  awaitable<Expected<void>> stop(const api::VmHandle& vm) {
    auto owned = co_await fetch_owned(vm, "stop");
    if (!owned) co_return owned.error();
    if (!owned.value()) co_return Expected<void>();
    std::string ns = vm_namespace(vm);
    std::string what = "stopping VirtualMachine " + ns + "/" + vm.name;
    auto resp = co_await call("PUT", vm_subresource_path(ns, vm.name, "stop"), stop_options().dump(), what);
    if (!resp) co_return resp.error();
    if (resp->status == 200 || resp->status == 202 || resp->status == 204 || resp->status == 404)
      co_return Expected<void>();
    if (resp->status == 409) co_return Expected<void>();  // not running: already in the desired state
    co_return status_error(resp->status, resp->body, what);
  }

  awaitable<Expected<void>> destroy(const api::VmHandle& vm) {
    auto owned = co_await fetch_owned(vm, "delete");
    if (!owned) co_return owned.error();
    if (!owned.value()) co_return Expected<void>();
    std::string ns = vm_namespace(vm);
    std::string what = "deleting VirtualMachine " + ns + "/" + vm.name;
    auto resp = co_await call("DELETE", vm_path(ns, vm.name) + "?propagationPolicy=Foreground",
                              delete_options().dump(), what);
    if (!resp) co_return resp.error();
    if (resp->status == 404) co_return Expected<void>();
    if (resp->status != 200 && resp->status != 202) co_return status_error(resp->status, resp->body, what);
    if (config_.dry_run) co_return Expected<void>();
    // Foreground deletion: the VM stays (with a deletionTimestamp) until its VMI and DataVolumes are gone.
    const auto deadline = steady_clock::now() + std::chrono::minutes(5);
    for (int attempt = 1; steady_clock::now() < deadline; ++attempt) {
      co_await async::sleep_for(std::min<steady_clock::duration>(std::chrono::milliseconds(250) * attempt,
                                                                 std::chrono::seconds(2)));
      auto check =
          co_await call("GET", vm_path(ns, vm.name), {}, "reading VirtualMachine " + ns + "/" + vm.name);
      if (!check) co_return check.error();
      if (check->status == 404) co_return Expected<void>();
    }
    co_return make_error(ErrorKind::timeout, what + ": still present 5 minutes after the delete",
                         "check finalizers on the VM and its DataVolumes (kubectl get vm,dv -n " + ns + ")");
  }

  awaitable<Expected<std::vector<api::VmHandle>>> list_run_vms(const std::string& run_id) {
    std::vector<api::VmHandle> out;
    std::string cont;
    do {
      std::string target =
          vms_path(config_.namespace_) + "?labelSelector=" + run_selector_query(run_id) + "&limit=500";
      if (!cont.empty()) target += "&continue=" + http::url_encode(cont);
      auto resp = co_await call("GET", target, {}, "listing VirtualMachines of run " + run_id);
      if (!resp) co_return resp.error();
      if (resp->status != 200)
        co_return status_error(resp->status, resp->body, "listing VirtualMachines of run " + run_id);
      json list = json::parse(resp->body, nullptr, false);
      if (!list.is_object())
        co_return make_error(ErrorKind::protocol, "VirtualMachine list is not a JSON object");
      if (list.contains("items") && list["items"].is_array()) {
        for (const auto& item : list["items"]) {
          if (label_of(item, kRunLabel) != run_id) continue;
          api::VmHandle h;
          h.name = name_of(item);
          std::string ns = item["metadata"].value("namespace", config_.namespace_);
          h.id = ns + "/" + h.name;
          const json& md = item["metadata"];
          if (md.contains("annotations") && md["annotations"].is_object()) {
            h.scenario = md["annotations"].value(kScenarioNameAnnotation, "");
          }
          if (h.scenario.empty()) h.scenario = label_of(item, kScenarioLabel);
          try {
            h.host = item.at("spec").at("template").at("spec").at("nodeSelector").value(kHostnameLabel, "");
          } catch (const json::exception&) {
          }
          out.push_back(std::move(h));
        }
      }
      cont.clear();
      if (list.contains("metadata") && list["metadata"].is_object())
        cont = list["metadata"].value("continue", "");
    } while (!cont.empty());
    co_return out;
  }

 private:
  std::string vm_namespace(const api::VmHandle& vm) const {
    if (auto slash = vm.id.find('/'); slash != std::string::npos) return vm.id.substr(0, slash);
    return config_.namespace_;
  }

  static steady_clock::duration backoff(int attempt) {
    static thread_local std::mt19937 rng{std::random_device{}()};
    auto base = std::chrono::milliseconds(100) * (1 << std::min(attempt - 1, 6));
    base = std::min(base, std::chrono::milliseconds(5000));
    std::uniform_real_distribution<double> jitter(0.8, 1.2);
    return std::chrono::duration_cast<steady_clock::duration>(base * jitter(rng));
  }

  Expected<void> refresh_auth() {
    auto auth = creds_->authorization(system_clock::now());
    if (!auth) return auth.error();
    if (*auth != current_auth_) {
      current_auth_ = *auth;
      log::register_secret(current_auth_);
      client_->set_default_header("Authorization", current_auth_);
    }
    return {};
  }

  std::string ca_description() const {
    if (!kube_.tls.ca_file.empty()) return "CA file " + kube_.tls.ca_file;
    if (!kube_.tls.ca_data.empty()) return "the CA data of " + kube_.source;
    return "the system trust store";
  }

  Error tls_aware(Error e, const std::string& what) const {
    if (e.kind != ErrorKind::tls) {
      e.message = what + ": " + e.message;
      return e;
    }
    std::string lower = e.message;
    for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower.find("hostname") != std::string::npos || lower.find("host name") != std::string::npos) {
      return make_error(
          ErrorKind::tls,
          what + ": the server's certificate does not match the host name of " + kube_.server + " (" +
              e.message + ")",
          "use the API server's DNS name as in its certificate, or set tls-server-name in the kubeconfig");
    }
    return make_error(
        ErrorKind::tls,
        what + ": the server's certificate is not trusted by the configured CA (" + ca_description() +
            ") — " + e.message,
        "point the kubeconfig's certificate-authority(-data) or the plan's tls.caFile at the CA that "
        "signed the API server's certificate (e.g. from `kubectl config view --raw` of a working "
        "context); tls.insecureSkipVerify: true is for labs only");
  }

  // An API request to the server's `target` (below the kubeconfig server's path), JSON body, the plan's
  // timeout.
  http::Request api_request(std::string method, const std::string& target, std::string body) const {
    http::Request req(std::move(method), prefix_ + target, std::move(body));
    if (!req.body.empty()) req.headers.emplace_back("Content-Type", "application/json");
    req.timeout = config_.request_timeout;
    return req;
  }

  // A first attempt's start instant is when the request was handed to the client (see call()); a resend's is
  // the client's own.
  static void stamp_handed(Expected<http::Response>& resp, steady_clock::time_point handed_mono,
                           system_clock::time_point handed_wall) {
    if (resp && resp->attempts <= 1 && resp->written_at >= handed_mono) {
      resp->written_at = handed_mono;
      resp->written_at_wall = handed_wall;
    }
  }

  // ApiStats for one call's outcome (every attempt counts as a request).
  void count_call(const Expected<http::Response>& resp) {
    if (!resp) {
      stats_.requests++;
      stats_.errors++;
      return;
    }
    stats_.requests += static_cast<std::uint64_t>(std::max(1, resp->attempts));
    stats_.retries += static_cast<std::uint64_t>(std::max(0, resp->attempts - 1));
    if (resp->status >= 400) stats_.errors++;
  }

  // One API call: credentials, QPS budget, dry run, TLS-aware errors, one retry after a 401 when credentials
  // can be refreshed. Any HTTP status comes back as a Response. Start requests pass `budgeted = false`: the
  // storm is bounded by apiBudget.maxConcurrent only — pacing them by requestsPerSecond would turn a
  // simultaneous start into a ramp and inflate the fire skew (1,000 starts at 50/s = 20 s).
  awaitable<Expected<http::Response>> call(std::string method, std::string target, std::string body,
                                           std::string what, bool budgeted = true) {
    if (!client_) co_return make_error(ErrorKind::internal, what + ": not connected");
    const bool changing = method != "GET" && method != "HEAD";
    if (config_.dry_run && changing) {
      spdlog::info("dry run: {} {}{} {}", method, prefix_, target, log::redact(body));
      http::Response fake;
      fake.status = method == "POST" ? 201 : 200;
      fake.body = "{}";
      fake.written_at = fake.received_at = steady_clock::now();
      fake.written_at_wall = system_clock::now();
      co_return fake;
    }
    for (int auth_attempt = 0;; ++auth_attempt) {
      if (auto auth = refresh_auth(); !auth) co_return auth.error();
      if (budgeted) co_await bucket_.acquire();
      http::Request req = api_request(method, target, body);
      // Stamped just before the request is handed to the client, which writes it to the (pre-opened,
      // dedicated) connection before it first suspends. The client's own written_at is stamped when the write
      // completion runs: during a storm that is queued behind the other starts' writes and comes measurably
      // (up to the whole fire window) after the server already received the request.
      const auto handed_mono = steady_clock::now();
      const auto handed_wall = system_clock::now();
      auto resp = co_await client_->request(std::move(req));
      stamp_handed(resp, handed_mono, handed_wall);
      count_call(resp);
      if (!resp) co_return tls_aware(resp.error(), what);
      if (resp->status == 401 && auth_attempt == 0 && (kube_.auth.exec || !kube_.auth.token_file.empty())) {
        creds_->invalidate();
        continue;
      }
      co_return resp;
    }
  }

  // Runs on the WatchThread: reads the stream, stamps each line as it is handed over, compacts it to the
  // milestone fields and posts it to `main` (in order), where it is decoded. Raw VMI lines queued behind the
  // provider's busy loop were 147 MB of a 10,000-VM storm's heap; compacted they are a fraction of that.
  // Decoding them here instead cost accuracy: the observation error against the lab's delivery went from
  // 11-17 ms to 35-40 ms (P50, 1,000 VMs), so this thread only scans and copies.
  // Parameters by value: the coroutine frame owns everything it uses.
  static awaitable<StreamOutcome> read_stream_on_thread(
      WatchThread* watch, std::shared_ptr<LatenessMonitor> lateness, http::Request req, CancelSignal cancel,
      asio::any_io_executor main,
      std::function<void(Expected<WatchEvent>, ClientInstant, double, ClientInstant)> deliver) {
    auto state = std::make_shared<StreamOutcome>();
    state->connected_at = ClientInstant::now();
    http::Client::HeadersHandler on_headers = [state](int s, const http::Headers&) {
      state->status = s;
      state->connected_at = ClientInstant::now();
    };
    http::Client::LineHandler on_line = [state, lateness, main, deliver](std::string_view line) {
      if (state->status != 200) {
        state->error_body.append(line);
        return;
      }
      if (line.empty()) return;
      ClientInstant at = ClientInstant::now();
      const double lateness_s = lateness ? lateness->line_started(at.mono) : 0.0;
      auto compact = compact_watch_line(line);
      asio::post(main, [deliver, text = compact ? std::move(*compact) : std::string(line), at, lateness_s,
                        connected = state->connected_at] {
        deliver(decode_watch_line(text, WatchDecode::milestone_fields), at, lateness_s, connected);
      });
      if (lateness) lateness->line_finished();
    };
    state->result = co_await watch->client().stream(std::move(req), std::move(on_headers), std::move(on_line),
                                                    std::move(cancel));
    co_return std::move(*state);
  }

  // ONE list, then a watch resumed from the last resourceVersion; re-list on 410 Gone.
  awaitable<void> list_watch(std::string collection, WatchHandlers h, CancelSignal cancel, std::string what) {
    auto self = shared_from_this();
    const std::string selector = "labelSelector=" + run_selector_query(config_.run_id);
    bool need_list = true, first_list = true, after_drop = false;
    std::string rv;
    int failures = 0;
    int consecutive_gone =
        0;  // a server that answers 410 to every watch must not make us re-list in a tight loop
    while (!cancel.cancelled() && !(h.done && h.done())) {
      if (failures > 0) co_await async::sleep_for(backoff(failures), cancel);
      if (cancel.cancelled()) break;
      if (need_list) {
        bucket_.charge();
        auto resp =
            co_await call("GET", collection + "?" + selector, {}, "listing " + what, /*budgeted=*/false);
        if (!resp || resp->status != 200) {
          spdlog::warn("listing {} failed: {}; retrying", what,
                       resp ? status_error(resp->status, resp->body, "list").what() : resp.error().what());
          ++failures;
          continue;
        }
        ClientInstant at = ClientInstant::now();
        auto list = decode_list(resp->body, WatchDecode::milestone_fields);
        if (!list) {
          spdlog::warn("listing {}: {}; retrying", what, list.error().what());
          ++failures;
          continue;
        }
        resp->body = std::string();  // a 10,000-object list body is several MB: not kept while tracking
        rv = std::move(list->resource_version);
        h.on_list(list->items, at, !first_list);
        first_list = false;
        need_list = false;
        after_drop = false;
        failures = 0;
        continue;
      }
      if (auto auth = refresh_auth(); !auth) {
        spdlog::warn("watch of {}: {}", what, auth.error().what());
        ++failures;
        continue;
      }
      http::Request req;
      req.method = "GET";
      req.target =
          prefix_ + collection + "?" + selector +
          "&watch=1&allowWatchBookmarks=true&timeoutSeconds=" + std::to_string(kWatchTimeoutSeconds) +
          (rv.empty() ? "" : "&resourceVersion=" + http::url_encode(rv));
      req.timeout = config_.request_timeout;
      CancelSignal stream_cancel;
      auto stream_subscription = cancel.subscribe([stream_cancel]() mutable { stream_cancel.cancel(); });
      int status = 0;
      bool gone = false;
      std::size_t lines = 0;
      std::string error_body;
      const bool catch_up_possible = after_drop;
      ClientInstant connected_at = ClientInstant::now();
      stats_.requests++;
      // Everything after the stamp and the decoding: resumption bookkeeping, handing the event over.
      auto handle_event = [&](const Expected<WatchEvent>& ev, ClientInstant at, double lateness_s,
                              ClientInstant stream_connected_at) {
        ++lines;
        if (!ev) {
          spdlog::warn("watch of {}: {}", what, ev.error().what());
          return;
        }
        if (h.on_alive) h.on_alive(at);
        if (ev->type == WatchEvent::Type::error) {
          if (ev->error_code == 410) {
            gone = true;
          } else {
            spdlog::warn("watch of {} reported an error (code {}): {}", what, ev->error_code,
                         ev->error_message);
          }
          stream_cancel.cancel();
          return;
        }
        if (std::string v = ev->resource_version(); !v.empty()) rv = v;
        if (ev->type == WatchEvent::Type::bookmark) return;
        bool catch_up = catch_up_possible && at.mono - stream_connected_at.mono < kCatchUpWindow;
        h.on_event(*ev, at, catch_up, lateness_s);
        if (h.done && h.done()) stream_cancel.cancel();
      };
      Expected<void> result;
      if (h.own_thread) {
        // Read, split, stamp and compact on the watch thread; decode and track here. Lines are posted in
        // order and the stream's completion is posted after the last of them, so handle_event runs before
        // co_await returns and the references it holds to this frame stay valid.
        auto req_for_thread = std::move(req);
        if (!current_auth_.empty()) req_for_thread.headers.emplace_back("Authorization", current_auth_);
        // `watch` keeps the thread alive until co_await returns; the coroutine on it holds only a raw
        // pointer, so the last reference can never be dropped on the thread itself (a self-join).
        std::shared_ptr<WatchThread> watch = watch_thread_;
        // A named awaitable and a named callback rather than a capturing lambda inside the co_await
        // expression: g++ 12 mis-copies such temporaries (valgrind: strings freed from this frame).
        std::function<void(Expected<WatchEvent>, ClientInstant, double, ClientInstant)> deliver =
            [&handle_event](Expected<WatchEvent> ev, ClientInstant at, double lateness_s,
                            ClientInstant connected) { handle_event(ev, at, lateness_s, connected); };
        awaitable<StreamOutcome> on_thread = read_stream_on_thread(
            watch.get(), h.lateness, std::move(req_for_thread), stream_cancel, executor_, std::move(deliver));
        StreamOutcome outcome =
            co_await asio::co_spawn(watch->executor(), std::move(on_thread), asio::use_awaitable);
        status = outcome.status;
        error_body = std::move(outcome.error_body);
        result = std::move(outcome.result);
      } else {
        result = co_await client_->stream(
            std::move(req),
            [&](int s, const http::Headers&) {
              status = s;
              connected_at = ClientInstant::now();
            },
            [&](std::string_view line) {
              if (status != 200) {
                error_body.append(line);
                return;
              }
              if (line.empty()) return;
              ClientInstant at = ClientInstant::now();
              const double lateness_s = h.lateness ? h.lateness->line_started(at.mono) : 0.0;
              struct LineDone {
                LatenessMonitor* monitor;
                ~LineDone() {
                  if (monitor) monitor->line_finished();
                }
              } line_done{h.lateness.get()};
              handle_event(decode_watch_line(line, WatchDecode::milestone_fields), at, lateness_s,
                           connected_at);
            },
            stream_cancel);
      }
      (void)self;
      if (cancel.cancelled() || (h.done && h.done())) break;
      if (lines > (gone ? 1u : 0u)) consecutive_gone = 0;
      if (status == 410 || gone) {
        spdlog::info("watch of {}: resourceVersion {} is gone (410); re-listing", what, rv);
        need_list = true;
        failures = consecutive_gone++;
        continue;
      }
      if (status != 0 && status != 200) {
        Error e = status_error(status, error_body, "watching " + what);
        spdlog::warn("{}; retrying", e.what());
        if (status == 401) creds_->invalidate();
        ++failures;
        continue;
      }
      if (!result) {
        if (result.error().kind == ErrorKind::cancelled && !gone) {
          // Our own cancel after an ERROR event: resume.
          ++failures;
          continue;
        }
        spdlog::info("watch of {} dropped ({}); resuming from resourceVersion {}", what,
                     result.error().what(), rv);
        after_drop = true;
        failures = lines > 0 ? 0 : failures + 1;
        if (rv.empty()) need_list = true;
        continue;
      }
      // The server ended the watch (timeoutSeconds): resume where it stopped.
      after_drop = false;
      failures = lines > 0 || status == 200 ? 0 : failures + 1;
      if (rv.empty()) need_list = true;
    }
  }

  // --- DataVolume watch shared by every wait_startable ---

  void ensure_dv_watch() {
    if (dv_watch_running_) return;
    dv_watch_running_ = true;
    dv_watch_cancel_ = CancelSignal();
    auto self = shared_from_this();
    CancelSignal cancel = dv_watch_cancel_;
    asio::co_spawn(
        executor_,
        [self, cancel]() -> awaitable<void> {
          WatchHandlers h;
          h.on_list = [self](const std::vector<json>& items, ClientInstant, bool) {
            for (const auto& item : items) self->update_dv(name_of(item), datavolume_state(item));
          };
          h.on_event = [self](const WatchEvent& ev, ClientInstant, bool, double) {
            if (ev.type == WatchEvent::Type::deleted) {
              self->dv_states_.erase(name_of(ev.object));
              self->wake_dv_waiters(name_of(ev.object));
            } else {
              self->update_dv(name_of(ev.object), datavolume_state(ev.object));
            }
          };
          // No `done`: the watch ends when stop_dv_watch() cancels it (kDataVolumeWatchLinger after the last
          // waiter, at prepare_storm, or at shutdown).
          co_await self->list_watch(datavolumes_path(self->config_.namespace_), h, cancel, "DataVolumes");
          self->dv_watch_running_ = false;
          // A waiter may have arrived after the cancel: it needs a watch of its own.
          if (self->dv_waiter_count_ > 0 && !self->shut_down_) self->ensure_dv_watch();
        },
        asio::detached);
  }

  void stop_dv_watch() {
    if (dv_linger_) dv_linger_->cancel();
    dv_linger_.reset();
    dv_watch_cancel_.cancel();
  }

  void release_dv_waiter() {
    if (--dv_waiter_count_ > 0) return;
    auto timer = std::make_shared<asio::steady_timer>(executor_, kDataVolumeWatchLinger);
    if (dv_linger_) dv_linger_->cancel();
    dv_linger_ = timer;
    timer->async_wait([weak = weak_from_this(), timer](boost::system::error_code ec) {
      auto self = weak.lock();
      if (ec || !self || self->dv_linger_ != timer || self->dv_waiter_count_ > 0) return;
      self->stop_dv_watch();
    });
  }

  void update_dv(const std::string& name, DataVolumeState state) {
    if (name.empty()) return;
    dv_states_[name] = std::move(state);
    wake_dv_waiters(name);
  }

  void wake_dv_waiters(const std::string& name) {
    auto it = dv_waiters_.find(name);
    if (it == dv_waiters_.end()) return;
    for (auto& t : it->second) t->cancel();
    dv_waiters_.erase(it);
  }

  void wake_all_dv_waiters() {
    for (auto& [_, timers] : dv_waiters_)
      for (auto& t : timers) t->cancel();
    dv_waiters_.clear();
  }

  asio::any_io_executor executor_;
  api::ProviderConfig config_;
  KubeClientConfig kube_;
  std::optional<CredentialCache> creds_;
  std::unique_ptr<http::Client> client_;
  std::optional<http::ClientOptions> watch_options_;  // the client's, for the WatchThread's own client
  std::shared_ptr<WatchThread> watch_thread_;         // started by the first observe()
  std::string prefix_;
  std::string current_auth_;
  std::vector<std::shared_ptr<PendingStart>> start_queue_;  // starts waiting for flush_starts()
  bool start_flush_posted_ = false;
  async::RateLimiter bucket_;
  api::ApiStats stats_;
  bool namespace_missing_ = false;
  bool namespace_known_ = false;
  bool namespace_ready_ = false;
  bool namespace_creating_ = false;
  std::vector<std::shared_ptr<asio::steady_timer>> namespace_waiters_;
  std::map<std::string, DataVolumeState> dv_states_;
  std::map<std::string, std::vector<std::shared_ptr<asio::steady_timer>>> dv_waiters_;
  std::size_t dv_waiter_count_ = 0;
  bool dv_watch_running_ = false;
  std::shared_ptr<asio::steady_timer> dv_linger_;  // pending stop of the DataVolume watch
  CancelSignal dv_watch_cancel_;

 public:
  bool shut_down_ = false;
};

class KubevirtProvider final : public api::Provider {
 public:
  KubevirtProvider(asio::any_io_executor executor, const api::ProviderConfig& config)
      : impl_(std::make_shared<Impl>(std::move(executor), config)) {}
  ~KubevirtProvider() override {
    impl_->shut_down_ = true;
    impl_->shutdown();
  }

  api::Capabilities capabilities() const override { return impl_->capabilities(); }
  awaitable<Expected<void>> connect() override {
    auto impl = impl_;
    co_return co_await impl->connect();
  }
  awaitable<Expected<void>> check_inventory(const api::InventoryRequest& request) override {
    auto impl = impl_;
    co_return co_await impl->check_inventory(request);
  }
  awaitable<Expected<api::VmHandle>> provision(const api::VmSpec& spec) override {
    auto impl = impl_;
    co_return co_await impl->provision(spec);
  }
  awaitable<Expected<void>> wait_startable(const api::VmHandle& vm,
                                           std::chrono::milliseconds timeout) override {
    auto impl = impl_;
    co_return co_await impl->wait_startable(vm, timeout);
  }
  awaitable<Expected<void>> prepare_storm(std::size_t expected_starts) override {
    auto impl = impl_;
    co_return co_await impl->prepare_storm(expected_starts);
  }
  awaitable<Expected<api::StartResult>> start(const api::VmHandle& vm) override {
    auto impl = impl_;
    co_return co_await impl->start(vm);
  }
  awaitable<void> observe(std::vector<api::VmHandle> vms, api::MilestoneSink sink,
                          CancelSignal stop) override {
    auto impl = impl_;
    co_await impl->observe(std::move(vms), std::move(sink), std::move(stop));
  }
  awaitable<Expected<void>> stop(const api::VmHandle& vm) override {
    auto impl = impl_;
    co_return co_await impl->stop(vm);
  }
  awaitable<Expected<void>> destroy(const api::VmHandle& vm) override {
    auto impl = impl_;
    co_return co_await impl->destroy(vm);
  }
  awaitable<Expected<std::vector<api::VmHandle>>> list_run_vms(const std::string& run_id) override {
    auto impl = impl_;
    co_return co_await impl->list_run_vms(run_id);
  }
  awaitable<void> disconnect() override {
    auto impl = impl_;
    co_await impl->disconnect();
  }
  api::ApiStats stats() const override { return impl_->stats(); }

 private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace

std::unique_ptr<api::Provider> make_provider(asio::any_io_executor executor,
                                             const api::ProviderConfig& config) {
  return std::make_unique<KubevirtProvider>(std::move(executor), config);
}

void register_provider() {
  api::register_platform(descriptor(), [](asio::any_io_executor executor, const api::ProviderConfig& config) {
    return make_provider(std::move(executor), config);
  });
}

}  // namespace bootstorm::kubevirt

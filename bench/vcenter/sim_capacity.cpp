// Simulator capacity: a load generator in its own process against `bootstorm lab serve` (issue 3: "the
// simulator holding 10,000 VMs and serving 2,000 requests/s on loopback on 2 cores").
//
//   bootstorm lab serve --lab small --state-dir /tmp/lab &
//   sim_capacity --state-dir /tmp/lab [--vms 10000] [--kube-vms 1000] [--seconds 10] [--in-flight 64]
//                [--lab-pid PID] [--skip-setup]
//
// Setup fills the lab: --vms clones of the golden VM through the vCenter front (POST /api/vcenter/vm?action=
// clone, spread over the lab's hosts) and --kube-vms VirtualMachines through the Kubernetes front (namespace
// `capacity`, containerDisk, runStrategy Halted, label shard=<i % 10>). The load phase then keeps
// --in-flight requests outstanding over HTTPS keep-alive connections (the same protocol/http client the
// providers use) for --seconds, drawing each request from a fixed mix:
//
//   vCenter 75 %: 20 % list with filter (GET /api/vcenter/vm?names=<5 random>&power_states=POWERED_OFF),
//                 20 % VM get, 20 % power get, 15 % tools get
//   Kubernetes 25 %: 10 % list (GET .../namespaces/capacity/virtualmachines?labelSelector=shard=<k>),
//                    15 % VM get
//
// and prints the throughput, per-kind latency percentiles, errors, and (with --lab-pid) the CPU the lab
// process used, in cores. The last line is machine-readable for bench/run.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "common/base64.hpp"
#include "protocol/http/client.hpp"

namespace asio = boost::asio;
using json = nlohmann::json;
using namespace bootstorm;
using steady = std::chrono::steady_clock;

namespace {

struct Options {
  std::string state_dir;
  int vms = 10000;
  int kube_vms = 1000;
  double seconds = 10;
  int in_flight = 64;
  int lab_pid = 0;
  bool skip_setup = false;
};

enum Kind { vc_list, vc_get, vc_power, vc_tools, kube_list, kube_get, kKinds };
constexpr std::array<const char*, kKinds> kKindNames = {"vcenter list+filter", "vcenter vm get",
                                                        "vcenter power get",   "vcenter tools get",
                                                        "kube vm list",        "kube vm get"};
constexpr std::array<int, kKinds> kWeights = {20, 20, 20, 15, 10, 15};

struct Stats {
  std::array<std::vector<double>, kKinds> latency_ms;
  std::array<std::uint64_t, kKinds> errors{};
  std::uint64_t transport_errors = 0;
};

double cpu_seconds_of(int pid) {
  std::ifstream in(fmt::format("/proc/{}/stat", pid));
  std::string line;
  if (!std::getline(in, line)) return 0;
  // Fields after the ")" of the command name: state is field 3, utime 14, stime 15.
  std::istringstream rest(line.substr(line.rfind(')') + 2));
  std::string field;
  double utime = 0, stime = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i == 14) utime = std::stod(field);
    if (i == 15) stime = std::stod(field);
  }
  return (utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(p * static_cast<double>(v.size())))];
}

class Bench {
 public:
  Bench(asio::io_context& io, Options options, const json& endpoints)
      : io_(io), options_(std::move(options)) {
    http::ClientOptions vc;
    vc.base_url = endpoints.at("vcenter");
    vc.tls.ca_file = endpoints.at("caFile");
    vc.max_connections = static_cast<std::size_t>(options_.in_flight);
    vc.retry.max_attempts = 1;
    vcenter_ = std::make_unique<http::Client>(io.get_executor(), vc);
    http::ClientOptions kube = vc;
    kube.base_url = endpoints.at("kube");
    kube.default_headers = {{"Authorization", "Bearer " + endpoints.at("kubeToken").get<std::string>()}};
    kube_ = std::make_unique<http::Client>(io.get_executor(), kube);
    username_ = endpoints.at("username");
    password_ = endpoints.at("password");
  }

  asio::awaitable<int> run() {
    // Named locals: g++ 12 cannot hold braced temporaries across co_await.
    http::Headers auth;
    auth.emplace_back("Authorization", "Basic " + base64_encode(username_ + ":" + password_));
    const std::string method = "POST", target = "/api/session", no_body;
    auto login = co_await vc_call(method, target, no_body, std::move(auth));
    if (!login || login->status != 201) co_return fail("login", login);
    token_ = json::parse(login->body).get<std::string>();
    if (!options_.skip_setup) {
      if (int rc = co_await setup(); rc != 0) co_return rc;
    }
    if (int rc = co_await collect_names(); rc != 0) co_return rc;
    co_await load();
    co_return 0;
  }

 private:
  // Plain functions returning the client's awaitable (no coroutine frame holding the arguments).
  asio::awaitable<Expected<http::Response>> vc_call(const std::string& method, const std::string& target,
                                                    const std::string& body = {},
                                                    http::Headers headers = {}) {
    http::Request r(method, target, body);
    r.headers = std::move(headers);
    if (!token_.empty()) r.headers.emplace_back("vmware-api-session-id", token_);
    if (!r.body.empty()) r.headers.emplace_back("Content-Type", "application/json");
    r.timeout = std::chrono::seconds(60);
    return vcenter_->request(std::move(r));
  }
  asio::awaitable<Expected<http::Response>> kube_call(const std::string& method, const std::string& target,
                                                      const std::string& body = {}) {
    http::Request r(method, target, body);
    if (!r.body.empty()) r.headers.emplace_back("Content-Type", "application/json");
    r.timeout = std::chrono::seconds(60);
    return kube_->request(std::move(r));
  }

  static int fail(const std::string& what, const Expected<http::Response>& r) {
    std::fprintf(
        stderr, "sim_capacity: %s failed: %s\n", what.c_str(),
        r ? fmt::format("HTTP {} {}", r->status, r->body.substr(0, 300)).c_str() : r.error().what().c_str());
    return 1;
  }

  // Runs `count` jobs with at most in_flight at once; job(i) returns false on failure.
  // (`job` is a named lambda of the caller: g++ 12 mishandles lambda temporaries inside co_await
  // expressions.)
  template <class Job>
  asio::awaitable<bool> parallel(int count, Job& job) {
    int next = 0, running = 0;
    bool ok = true;
    asio::steady_timer wake(io_, steady::time_point::max());
    while (next < count || running > 0) {
      while (ok && next < count && running < options_.in_flight) {
        ++running;
        asio::co_spawn(
            io_,
            [&, i = next++]() -> asio::awaitable<void> {
              if (!co_await job(i)) ok = false;
              --running;
              wake.cancel();
            },
            asio::detached);
      }
      if (!ok && running == 0) break;
      wake.expires_at(steady::time_point::max());
      co_await wake.async_wait(asio::as_tuple(asio::use_awaitable));
    }
    co_return ok;
  }

  asio::awaitable<int> setup() {
    auto golden = co_await vc_call("GET", "/api/vcenter/vm?names=tiny-golden");
    if (!golden || golden->status != 200 || json::parse(golden->body).empty())
      co_return fail("golden lookup", golden);
    const std::string source = json::parse(golden->body)[0]["vm"];
    auto hosts = co_await vc_call("GET", "/api/vcenter/host");
    if (!hosts || hosts->status != 200) co_return fail("host list", hosts);
    std::vector<std::string> host_ids;
    for (const auto& h : json::parse(hosts->body)) host_ids.push_back(h["host"]);
    const auto t0 = steady::now();
    auto clone_job = [&](int i) -> asio::awaitable<bool> {
      json body{{"source", source},
                {"name", fmt::format("cap-{:05}", i)},
                {"placement", {{"host", host_ids[static_cast<std::size_t>(i) % host_ids.size()]}}}};
      auto r = co_await vc_call("POST", "/api/vcenter/vm?action=clone", body.dump());
      if (!r || r->status != 200) {
        fail("clone " + std::to_string(i), r);
        co_return false;
      }
      co_return true;
    };
    bool ok = co_await parallel(options_.vms, clone_job);
    if (!ok) co_return 1;
    const double clone_s = std::chrono::duration<double>(steady::now() - t0).count();
    std::printf("setup: %d vCenter clones in %.1f s (%.0f clones/s)\n", options_.vms, clone_s,
                options_.vms / clone_s);

    if (options_.kube_vms > 0) {
      const std::string namespace_body =
          json{{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "capacity"}}}}.dump();
      auto ns = co_await kube_call("POST", "/api/v1/namespaces", namespace_body);
      if (!ns || (ns->status != 201 && ns->status != 409)) co_return fail("namespace create", ns);
      const auto k0 = steady::now();
      auto create_job = [&](int i) -> asio::awaitable<bool> {
        json vm{{"apiVersion", "kubevirt.io/v1"},
                {"kind", "VirtualMachine"},
                {"metadata",
                 {{"name", fmt::format("cap-{:05}", i)}, {"labels", {{"shard", std::to_string(i % 10)}}}}},
                {"spec",
                 {{"runStrategy", "Halted"},
                  {"template",
                   {{"spec",
                     {{"domain",
                       {{"devices",
                         {{"disks", json::array({{{"name", "root"}, {"disk", {{"bus", "virtio"}}}}})}}},
                        {"resources", {{"requests", {{"memory", "256Mi"}}}}}}},
                      {"volumes", json::array({{{"name", "root"},
                                                {"containerDisk",
                                                 {{"image", "quay.io/containerdisks/fedora:40"}}}}})}}}}}}}};
        auto r =
            co_await kube_call("POST", "/apis/kubevirt.io/v1/namespaces/capacity/virtualmachines", vm.dump());
        if (!r || r->status != 201) {
          fail("kube VM create " + std::to_string(i), r);
          co_return false;
        }
        co_return true;
      };
      ok = co_await parallel(options_.kube_vms, create_job);
      if (!ok) co_return 1;
      std::printf("setup: %d KubeVirt VMs in %.1f s\n", options_.kube_vms,
                  std::chrono::duration<double>(steady::now() - k0).count());
    }
    co_return 0;
  }

  // The VM ids and names the load phase draws from (also checks the lab holds them).
  asio::awaitable<int> collect_names() {
    auto stats = co_await vc_call("GET", "/_lab/stats");
    if (!stats || stats->status != 200) co_return fail("lab stats", stats);
    lab_vms_ = json::parse(stats->body)["vms"].get<std::size_t>();
    for (int i = 0; i < options_.vms; i += 200) {
      std::string target = "/api/vcenter/vm?";
      for (int j = i; j < std::min(options_.vms, i + 200); ++j) target += fmt::format("names=cap-{:05}&", j);
      target.pop_back();
      auto r = co_await vc_call("GET", target);
      if (!r || r->status != 200) co_return fail("VM lookup", r);
      for (const auto& v : json::parse(r->body)) {
        vm_ids_.push_back(v["vm"]);
        vm_names_.push_back(v["name"]);
      }
    }
    if (vm_ids_.size() != static_cast<std::size_t>(options_.vms)) {
      std::fprintf(stderr, "sim_capacity: expected %d capacity VMs in the lab, found %zu\n", options_.vms,
                   vm_ids_.size());
      co_return 1;
    }
    std::printf("lab holds %zu VMs (vCenter and KubeVirt)\n", lab_vms_);
    co_return 0;
  }

  asio::awaitable<void> worker(steady::time_point deadline, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::discrete_distribution<int> pick(kWeights.begin(), kWeights.end());
    std::uniform_int_distribution<std::size_t> any_vm(0, vm_ids_.size() - 1);
    std::uniform_int_distribution<int> any_kube(0, std::max(0, options_.kube_vms - 1));
    std::uniform_int_distribution<int> any_shard(0, 9);
    while (steady::now() < deadline) {
      int kind = pick(rng);
      if (options_.kube_vms == 0 && (kind == kube_list || kind == kube_get)) kind = vc_get;
      const std::string& id = vm_ids_[any_vm(rng)];
      const auto t0 = steady::now();
      Expected<http::Response> r = make_error(ErrorKind::internal, "not sent");
      switch (kind) {
        case vc_list: {
          std::string target = "/api/vcenter/vm?power_states=POWERED_OFF";
          for (int n = 0; n < 5; ++n) target += "&names=" + vm_names_[any_vm(rng)];
          r = co_await vc_call("GET", target);
          break;
        }
        case vc_get:
          r = co_await vc_call("GET", "/api/vcenter/vm/" + id);
          break;
        case vc_power:
          r = co_await vc_call("GET", "/api/vcenter/vm/" + id + "/power");
          break;
        case vc_tools:
          r = co_await vc_call("GET", "/api/vcenter/vm/" + id + "/tools");
          break;
        case kube_list:
          r = co_await kube_call("GET",
                                 fmt::format("/apis/kubevirt.io/v1/namespaces/capacity/virtualmachines?"
                                             "labelSelector=shard%3D{}",
                                             any_shard(rng)));
          break;
        default:
          r = co_await kube_call(
              "GET", fmt::format("/apis/kubevirt.io/v1/namespaces/capacity/virtualmachines/cap-{:05}",
                                 any_kube(rng)));
          break;
      }
      const double ms = std::chrono::duration<double, std::milli>(steady::now() - t0).count();
      if (!r) {
        ++stats_.transport_errors;
        continue;
      }
      stats_.latency_ms[static_cast<std::size_t>(kind)].push_back(ms);
      if (r->status != 200) ++stats_.errors[static_cast<std::size_t>(kind)];
    }
    --workers_;
    done_.cancel();
  }

  asio::awaitable<void> load() {
    const double cpu0 = options_.lab_pid ? cpu_seconds_of(options_.lab_pid) : 0;
    const auto t0 = steady::now();
    const auto deadline =
        t0 + std::chrono::duration_cast<steady::duration>(std::chrono::duration<double>(options_.seconds));
    workers_ = options_.in_flight;
    for (int i = 0; i < options_.in_flight; ++i)
      asio::co_spawn(io_, worker(deadline, 1000 + static_cast<std::uint64_t>(i)), asio::detached);
    while (workers_ > 0) {
      done_.expires_at(steady::time_point::max());
      co_await done_.async_wait(asio::as_tuple(asio::use_awaitable));
    }
    const double elapsed = std::chrono::duration<double>(steady::now() - t0).count();
    const double cpu = options_.lab_pid ? (cpu_seconds_of(options_.lab_pid) - cpu0) / elapsed : -1;
    std::size_t total = 0;
    std::uint64_t errors = stats_.transport_errors;
    std::vector<double> all;
    std::printf("%-22s %9s %9s %9s %9s %7s\n", "request", "count", "req/s", "p50 ms", "p99 ms", "errors");
    for (int k = 0; k < kKinds; ++k) {
      const auto& v = stats_.latency_ms[static_cast<std::size_t>(k)];
      total += v.size();
      errors += stats_.errors[static_cast<std::size_t>(k)];
      all.insert(all.end(), v.begin(), v.end());
      std::printf("%-22s %9zu %9.0f %9.2f %9.2f %7llu\n", kKindNames[static_cast<std::size_t>(k)], v.size(),
                  static_cast<double>(v.size()) / elapsed, percentile(v, 0.5), percentile(v, 0.99),
                  static_cast<unsigned long long>(stats_.errors[static_cast<std::size_t>(k)]));
    }
    std::printf(
        "requestsPerSecond=%.0f p50Ms=%.2f p99Ms=%.2f errors=%llu labVms=%zu inFlight=%d seconds=%.1f "
        "labCpuCores=%.2f\n",
        static_cast<double>(total) / elapsed, percentile(all, 0.5), percentile(all, 0.99),
        static_cast<unsigned long long>(errors), lab_vms_, options_.in_flight, elapsed, cpu);
  }

  asio::io_context& io_;
  Options options_;
  std::unique_ptr<http::Client> vcenter_, kube_;
  std::string username_, password_, token_;
  std::vector<std::string> vm_ids_, vm_names_;
  std::size_t lab_vms_ = 0;
  Stats stats_;
  int workers_ = 0;
  asio::steady_timer done_{io_, steady::time_point::max()};
};

}  // namespace

int main(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "sim_capacity: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--state-dir")
      options.state_dir = value();
    else if (a == "--vms")
      options.vms = std::stoi(value());
    else if (a == "--kube-vms")
      options.kube_vms = std::stoi(value());
    else if (a == "--seconds")
      options.seconds = std::stod(value());
    else if (a == "--in-flight")
      options.in_flight = std::stoi(value());
    else if (a == "--lab-pid")
      options.lab_pid = std::stoi(value());
    else if (a == "--skip-setup")
      options.skip_setup = true;
    else {
      std::fprintf(
          stderr,
          "usage: sim_capacity --state-dir DIR [--vms N] [--kube-vms N] [--seconds S] [--in-flight N] "
          "[--lab-pid PID] [--skip-setup]\n");
      return 2;
    }
  }
  if (options.state_dir.empty() || options.vms <= 0 || options.in_flight <= 0) {
    std::fprintf(stderr, "sim_capacity: --state-dir is required; --vms and --in-flight must be > 0\n");
    return 2;
  }
  std::ifstream in(options.state_dir + "/endpoints.json");
  const json endpoints = json::parse(in, nullptr, false);
  if (endpoints.is_discarded()) {
    std::fprintf(stderr, "sim_capacity: cannot read %s/endpoints.json (is `bootstorm lab serve` running?)\n",
                 options.state_dir.c_str());
    return 2;
  }
  asio::io_context io;
  Bench bench(io, options, endpoints);
  int rc = 1;
  asio::co_spawn(
      io, [&]() -> asio::awaitable<void> { rc = co_await bench.run(); }, asio::detached);
  io.run();
  return rc;
}

#pragma once
// An in-memory vCenter behind the provider's Transport seam, for unit tests of the provider's logic
// (the integration tests run against the real simulator over HTTPS). It answers the /api dialect, or the
// legacy /rest dialect when `legacy` is set (then /api/session answers 404), records every request, and
// models just enough behaviour: sessions, hosts, datastores, VMs with power/Tools/IP timelines, blocking
// clones, RESOURCE_BUSY on demand.
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "providers/vsphere/transport.hpp"

namespace bootstorm::vsphere::testing {

struct FakeVm {
  std::string id, name, host, power = "POWERED_OFF";
  std::string guest_os = "UBUNTU_64";
  std::chrono::steady_clock::time_point powered_on_at{};
  std::chrono::milliseconds tools_after{50};  // after power on
  std::chrono::milliseconds ip_after{100};
};

struct RecordedRequest {
  std::string method, target, body, session_header, authorization;
  std::chrono::steady_clock::time_point sent;
};

class FakeVcenter final : public Transport {
 public:
  using json = nlohmann::json;
  using clock = std::chrono::steady_clock;

  bool legacy = false;
  std::map<std::string, nlohmann::json> customizations;  // vm id -> last PUT guest/customization SetSpec
  std::string user = "admin", password = "s3cret-pass";
  std::vector<json> hosts = {{{"host", "host-1"},
                              {"name", "esx-01"},
                              {"connection_state", "CONNECTED"},
                              {"power_state", "POWERED_ON"}},
                             {{"host", "host-2"},
                              {"name", "esx-02"},
                              {"connection_state", "CONNECTED"},
                              {"power_state", "POWERED_ON"}},
                             {{"host", "host-3"}, {"name", "esx-03"}, {"connection_state", "DISCONNECTED"}}};
  // The golden VM's disks live on shared-ds, which is deliberately not the first datastore listed.
  std::vector<json> datastores = {{{"datastore", "datastore-9"},
                                   {"name", "local-ds"},
                                   {"type", "VMFS"},
                                   {"free_space", 1e12},
                                   {"capacity", 1e12}},
                                  {{"datastore", "datastore-1"},
                                   {"name", "shared-ds"},
                                   {"type", "VMFS"},
                                   {"free_space", 2e12},
                                   {"capacity", 4e12}}};
  std::map<std::string, FakeVm> vms;  // by id
  std::set<std::string> tokens;
  int next_token = 1, next_vm = 100;
  bool sessions_never_valid = false;  // every token is rejected right after login (bad authorization)
  int busy_starts_left = 0;           // answer RESOURCE_BUSY to this many power starts
  std::chrono::milliseconds clone_delay{0};
  std::map<std::string, int> clones_in_flight, max_clones_in_flight;  // by host id
  int total_clones_in_flight = 0, max_total_clones_in_flight = 0;
  std::vector<RecordedRequest> requests;
  std::size_t prewarmed = 0;

  FakeVcenter() { add_vm("vm-golden", "golden", "host-1", "POWERED_OFF"); }

  FakeVm& add_vm(std::string id, std::string name, std::string host, std::string power) {
    auto& vm = vms[id];
    vm.id = id;
    vm.name = std::move(name);
    vm.host = std::move(host);
    vm.power = std::move(power);
    if (vm.power == "POWERED_ON") vm.powered_on_at = clock::now();
    return vm;
  }
  const FakeVm* find_by_name(const std::string& name) const {
    for (auto& [id, vm] : vms)
      if (vm.name == name) return &vm;
    return nullptr;
  }
  std::size_t count(const std::string& method, const std::string& prefix) const {
    std::size_t n = 0;
    for (auto& r : requests)
      if (r.method == method && r.target.rfind(prefix, 0) == 0) ++n;
    return n;
  }
  void expire_sessions() { tokens.clear(); }

  boost::asio::awaitable<Expected<http::Response>> send(http::Request req) override {
    RecordedRequest rec{req.method, req.target, req.body, {}, {}, clock::now()};
    for (auto& [k, v] : req.headers) {
      if (k == "vmware-api-session-id") rec.session_header = v;
      if (k == "Authorization") rec.authorization = v;
    }
    requests.push_back(rec);
    pending_clone_host_.clear();
    http::Response resp = handle(req, rec);
    const std::string clone_host = pending_clone_host_;
    resp.written_at = rec.sent;
    resp.written_at_wall = std::chrono::system_clock::now();
    if (is_clone(req.target) && clone_delay.count() > 0 && resp.status < 300) {
      boost::asio::steady_timer timer(co_await boost::asio::this_coro::executor);
      timer.expires_after(clone_delay);
      co_await timer.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
      clones_in_flight[clone_host]--;
      total_clones_in_flight--;
    }
    resp.received_at = clock::now();
    co_return resp;
  }
  boost::asio::awaitable<Expected<void>> prewarm(std::size_t count) override {
    prewarmed = count;
    co_return Expected<void>{};
  }
  void close_idle() override {}

 private:
  std::string pending_clone_host_;

  static bool is_clone(const std::string& target) { return target.find("action=clone") != std::string::npos; }

  std::string root() const { return legacy ? "/rest" : "/api"; }

  http::Response reply(int status, json body) const {
    http::Response r;
    r.status = status;
    if (!body.is_null()) r.body = (legacy ? json{{"value", body}} : body).dump();
    return r;
  }
  http::Response error(int status, const std::string& type, const std::string& message) const {
    http::Response r;
    r.status = status;
    json messages = json::array(
        {{{"id", "vcenter.fake." + type}, {"default_message", message}, {"args", json::array()}}});
    if (legacy) {
      std::string lower = type;
      for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      r.body =
          json{{"type", "com.vmware.vapi.std.errors." + lower}, {"value", {{"messages", messages}}}}.dump();
    } else {
      r.body = json{{"error_type", type}, {"messages", messages}}.dump();
    }
    return r;
  }

  static std::multimap<std::string, std::string> query_of(const std::string& target, std::string* path) {
    std::multimap<std::string, std::string> q;
    auto qm = target.find('?');
    *path = target.substr(0, qm);
    if (qm == std::string::npos) return q;
    std::string rest = target.substr(qm + 1);
    std::size_t pos = 0;
    while (pos <= rest.size()) {
      auto amp = rest.find('&', pos);
      std::string kv = rest.substr(pos, amp == std::string::npos ? std::string::npos : amp - pos);
      auto eq = kv.find('=');
      std::string key = kv.substr(0, eq), value = eq == std::string::npos ? "" : kv.substr(eq + 1);
      std::string decoded;
      for (std::size_t i = 0; i < value.size(); ++i) {
        if (value[i] == '%' && i + 2 < value.size()) {
          decoded += static_cast<char>(std::stoi(value.substr(i + 1, 2), nullptr, 16));
          i += 2;
        } else {
          decoded += value[i];
        }
      }
      q.emplace(key, decoded);
      if (amp == std::string::npos) break;
      pos = amp + 1;
    }
    return q;
  }

  std::vector<std::string> values(const std::multimap<std::string, std::string>& q,
                                  const std::string& name) const {
    std::vector<std::string> out;
    if (!legacy) {
      auto [b, e] = q.equal_range(name);
      for (auto it = b; it != e; ++it) out.push_back(it->second);
      return out;
    }
    // /rest numbers a set's elements: filter.names.1=a&filter.names.2=b (a bare filter.names=a also works).
    const std::string prefix = "filter." + name;
    for (const auto& [key, value] : q) {
      if (key == prefix) out.push_back(value);
      if (key.size() > prefix.size() + 1 && key.rfind(prefix + ".", 0) == 0 &&
          key.find_first_not_of("0123456789", prefix.size() + 1) == std::string::npos)
        out.push_back(value);
    }
    return out;
  }

  http::Response handle(const http::Request& req, const RecordedRequest& rec) {
    std::string path;
    auto q = query_of(req.target, &path);
    const std::string session_path = legacy ? "/rest/com/vmware/cis/session" : "/api/session";
    if (legacy && path == "/api/session") return error(404, "NOT_FOUND", "no such path");
    if (path == session_path && req.method == "POST") {
      const std::string expected = "Basic " + base64(user + ":" + password);
      if (rec.authorization != expected) return error(401, "UNAUTHENTICATED", "Authentication required.");
      std::string token = "tok-" + std::to_string(next_token++) + "-abcdef";
      tokens.insert(token);
      return reply(legacy ? 200 : 201, token);
    }
    if (sessions_never_valid || !tokens.count(rec.session_header))
      return error(401, "UNAUTHENTICATED", "Authentication required.");
    if (path == session_path && req.method == "DELETE") {
      tokens.erase(rec.session_header);
      return reply(legacy ? 200 : 204, nullptr);
    }
    const std::string r = root() + "/vcenter";
    if (path == r + "/host" && req.method == "GET") return reply(200, hosts);
    if (path == r + "/datastore" && req.method == "GET") return reply(200, datastores);
    if (path == r + "/vm" && req.method == "GET") {
      auto names = values(q, "names"), ids = values(q, "vms"), hosts_f = values(q, "hosts"),
           power = values(q, "power_states");
      json out = json::array();
      for (auto& [id, vm] : vms) {
        auto in = [](const std::vector<std::string>& f, const std::string& v) {
          return f.empty() || std::find(f.begin(), f.end(), v) != f.end();
        };
        if (in(names, vm.name) && in(ids, id) && in(hosts_f, vm.host) && in(power, vm.power))
          out.push_back({{"vm", id}, {"name", vm.name}, {"power_state", vm.power}});
      }
      return reply(200, out);
    }
    if (path == r + "/vm" && req.method == "POST" && q.count("action")) {
      auto body = json::parse(req.body);
      auto spec = legacy ? body["spec"] : body;
      auto src = vms.find(spec.value("source", ""));
      if (src == vms.end()) return error(404, "NOT_FOUND", "source not found");
      const bool instant = q.find("action")->second == "instant-clone";
      std::string host = instant ? src->second.host : spec["placement"].value("host", src->second.host);
      std::string id = "vm-" + std::to_string(next_vm++);
      add_vm(id, spec.value("name", ""), host, instant ? "POWERED_ON" : "POWERED_OFF");
      pending_clone_host_ = host;
      int now = ++clones_in_flight[host];
      max_clones_in_flight[host] = std::max(max_clones_in_flight[host], now);
      max_total_clones_in_flight = std::max(max_total_clones_in_flight, ++total_clones_in_flight);
      if (clone_delay.count() == 0) {
        clones_in_flight[host]--;
        total_clones_in_flight--;
      }
      return reply(200, id);
    }
    // Per-VM paths.
    const std::string vm_prefix = r + "/vm/";
    if (path.rfind(vm_prefix, 0) != 0) return error(404, "NOT_FOUND", "no such path " + path);
    std::string rest = path.substr(vm_prefix.size());
    std::string id = rest.substr(0, rest.find('/'));
    std::string sub = rest.find('/') == std::string::npos ? "" : rest.substr(rest.find('/'));
    auto it = vms.find(id);
    if (it == vms.end()) return error(404, "NOT_FOUND", "VM " + id + " not found");
    auto& vm = it->second;
    std::string action;
    if (q.count("action")) action = q.find("action")->second;
    if (legacy && sub.rfind("/power/", 0) == 0) {
      action = sub.substr(7);
      sub = "/power";
    }
    if (sub.empty() && req.method == "GET")
      return reply(200, {{"name", vm.name},
                         {"guest_OS", vm.guest_os},
                         {"power_state", vm.power},
                         {"memory", {{"size_MiB", 4096}}},
                         {"disks",
                          {{"2000",
                            {{"capacity", 40.0 * 1024 * 1024 * 1024},
                             {"backing",
                              {{"type", "VMDK_FILE"},
                               {"vmdk_file", "[shared-ds] " + vm.name + "/" + vm.name + ".vmdk"}}}}}}}});
    if (sub.empty() && req.method == "DELETE") {
      if (vm.power == "POWERED_ON") return error(400, "NOT_ALLOWED_IN_CURRENT_STATE", "VM is powered on");
      vms.erase(it);
      return reply(legacy ? 200 : 204, nullptr);
    }
    if (sub == "/power" && req.method == "GET") return reply(200, {{"state", vm.power}});
    if (sub == "/power" && req.method == "POST") {
      if (action == "start") {
        if (busy_starts_left > 0) {
          --busy_starts_left;
          return error(500, "RESOURCE_BUSY", "The VM is busy.");
        }
        if (vm.power == "POWERED_ON")
          return error(400, "ALREADY_IN_DESIRED_STATE", "Virtual machine is already powered on.");
        vm.power = "POWERED_ON";
        vm.powered_on_at = clock::now();
        return reply(legacy ? 200 : 204, nullptr);
      }
      if (action == "stop") {
        if (vm.power == "POWERED_OFF")
          return error(400, "ALREADY_IN_DESIRED_STATE", "Virtual machine is already powered off.");
        vm.power = "POWERED_OFF";
        return reply(legacy ? 200 : 204, nullptr);
      }
    }
    if (sub == "/guest/customization" && req.method == "PUT") {
      if (vm.power != "POWERED_OFF")
        return error(400, "NOT_ALLOWED_IN_CURRENT_STATE", "The VM must be powered off.");
      auto body = json::parse(req.body, nullptr, false);
      customizations[id] = legacy && body.is_object() ? body["spec"] : body;
      return reply(legacy ? 200 : 204, nullptr);
    }
    const bool on = vm.power == "POWERED_ON";
    const auto since = clock::now() - vm.powered_on_at;
    if (sub == "/tools" && req.method == "GET")
      return reply(200, {{"run_state", on && since >= vm.tools_after ? "RUNNING" : "NOT_RUNNING"}});
    if (sub == "/guest/identity" && req.method == "GET") {
      if (!on || since < vm.ip_after) return error(503, "SERVICE_UNAVAILABLE", "Tools not running");
      return reply(200,
                   {{"name", "WINDOWS_9"}, {"family", "WINDOWS"}, {"ip_address", "10.0.0." + id.substr(3)}});
    }
    return error(404, "NOT_FOUND", "no such path " + path);
  }

  static std::string base64(const std::string& in);
};

}  // namespace bootstorm::vsphere::testing

#include "providers/vsphere/session.hpp"
inline std::string bootstorm::vsphere::testing::FakeVcenter::base64(const std::string& in) {
  return bootstorm::vsphere::base64_encode(in);
}

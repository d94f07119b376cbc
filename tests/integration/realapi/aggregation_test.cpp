// The API aggregation layer of the real kube-apiserver (tests/support/realapi): KubeVirt's start and stop are
// subresources of an aggregated API (subresources.kubevirt.io, served by virt-api), which kube-apiserver
// authorizes and then proxies to the backend its APIService names, with the caller's identity in X-Remote-*
// headers and the front proxy's client certificate. Here the backend is a TLS server of the test that trusts
// only what kube-system's extension-apiserver-authentication names, as virt-api does. What the lab's
// `attach` will serve as virt-api stands on this: a request reaches it as the user who sent it, or not at
// all.
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <chrono>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "common/base64.hpp"
#include "protocol/http/server.hpp"
#include "protocol/http/tls.hpp"
#include "tests/support/realapi_fixture.hpp"

namespace {

namespace asio = boost::asio;
namespace fs = std::filesystem;
using bootstorm::test_support::CliRun;
using bootstorm::test_support::RealApiCliTest;
using nlohmann::json;

constexpr const char* kGroupVersion = "subresources.kubevirt.io/v1";

// One request as the backend saw it.
struct Seen {
  std::string method, path, user, groups, client_cert;
};

// virt-api's part of the aggregated API: discovery, and 202 to a start or stop, recording who asked.
class Backend {
 public:
  Backend(const std::string& front_proxy_ca)
      : pki_(bootstorm::http::generate_pki("virt-api", {"virt-api.kubevirt.svc", "127.0.0.1"})) {
    bootstorm::http::ServerOptions options;
    bootstorm::http::TlsServerOptions tls;
    tls.cert_data = pki_.leaf_cert_pem;
    tls.key_data = pki_.leaf_key_pem;
    tls.client_ca_data = front_proxy_ca;
    tls.require_client_cert = true;
    options.tls = tls;
    server_ = std::make_unique<bootstorm::http::Server>(
        io_.get_executor(), options, [this](bootstorm::http::ServerRequest& r) { return answer(r); });
    started_ = server_->start().has_value();
    thread_ = std::thread([this] { io_.run(); });
  }
  ~Backend() {
    asio::post(io_, [this] { server_->stop_now(); });
    io_.stop();
    thread_.join();
  }
  bool started() const { return started_; }
  unsigned short port() const { return server_->port(); }
  const std::string& ca_pem() const { return pki_.ca_cert_pem; }
  std::vector<Seen> seen() {
    std::lock_guard lock(mutex_);
    return seen_;
  }

 private:
  asio::awaitable<bootstorm::http::ServerResponse> answer(bootstorm::http::ServerRequest& r) {
    {
      std::lock_guard lock(mutex_);
      seen_.push_back({r.method, r.path, std::string(r.header("X-Remote-User").value_or("")),
                       std::string(r.header("X-Remote-Group").value_or("")), r.client_cert_subject});
    }
    bootstorm::http::ServerResponse out;
    out.headers.emplace_back("Content-Type", "application/json");
    if (r.method == "GET" && r.path == "/apis/subresources.kubevirt.io/v1") {
      json resources = json::array();
      for (const char* sub : {"virtualmachines/start", "virtualmachines/stop"})
        resources.push_back(
            {{"name", sub}, {"namespaced", true}, {"kind", "VirtualMachine"}, {"verbs", {"update"}}});
      out.body = json{{"kind", "APIResourceList"},
                      {"apiVersion", "v1"},
                      {"groupVersion", kGroupVersion},
                      {"resources", resources}}
                     .dump();
    } else if (r.method == "GET" && r.path == "/apis") {
      const json version{{"groupVersion", kGroupVersion}, {"version", "v1"}};
      out.body = json{{"kind", "APIGroupList"},
                      {"apiVersion", "v1"},
                      {"groups",
                       {{{"name", "subresources.kubevirt.io"},
                         {"versions", {version}},
                         {"preferredVersion", version}}}}}
                     .dump();
    } else if (r.method == "PUT" && r.path.find("/virtualmachines/") != std::string::npos) {
      out.status = 202;
      out.body = "";
    } else {
      out.status = 404;
      out.body = json{{"kind", "Status"}, {"apiVersion", "v1"}, {"status", "Failure"}, {"code", 404}}.dump();
    }
    co_return out;
  }

  asio::io_context io_;
  bootstorm::http::GeneratedPki pki_;
  std::unique_ptr<bootstorm::http::Server> server_;
  bool started_ = false;
  std::thread thread_;
  std::mutex mutex_;
  std::vector<Seen> seen_;
};

class RealApiAggregation : public RealApiCliTest {
 protected:
  RealApiAggregation() : RealApiCliTest("realapi-aggregation", {}) {}

  // The CA kube-apiserver's front proxy presents its client certificate under, as an extension API server
  // reads it.
  std::string front_proxy_ca() {
    CliRun r =
        kubectl("admin", {"get", "configmap", "-n", "kube-system", "extension-apiserver-authentication", "-o",
                          "jsonpath={.data.requestheader-client-ca-file}"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out;
  }
  // virt-api's Service (targetPort: where the backend listens) and the APIService that routes the group to
  // it.
  void register_backend(const Backend& backend) {
    admin_apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: kubevirt}\n");
    admin_apply(
        "apiVersion: v1\nkind: Service\nmetadata: {name: virt-api, namespace: kubevirt}\n"
        "spec: {ports: [{port: 443, targetPort: " +
        std::to_string(backend.port()) + "}]}\n");
    // What a cluster's EndpointSlice controller would write for virt-api's pod, which kube-apiserver's
    // availability check requires. Its address is a documentation address (EndpointSlices may not hold
    // loopback ones): realapi sends the traffic to 127.0.0.1 at the Service's targetPort.
    admin_apply(
        "apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: virt-api, namespace: "
        "kubevirt, "
        "labels: {kubernetes.io/service-name: virt-api}}\naddressType: IPv4\n"
        "endpoints: [{addresses: [192.0.2.10], conditions: {ready: true}}]\nports: [{name: \"\", port: " +
        std::to_string(backend.port()) + ", protocol: TCP}]\n");
    admin_apply(
        "apiVersion: apiregistration.k8s.io/v1\nkind: APIService\nmetadata: {name: "
        "v1.subresources.kubevirt.io}\nspec:\n  group: subresources.kubevirt.io\n  version: v1\n"
        "  service: {name: virt-api, namespace: kubevirt, port: 443}\n  caBundle: " +
        bootstorm::base64_encode(backend.ca_pem()) +
        "\n  groupPriorityMinimum: 1000\n  versionPriority: 15\n");
  }
  // Whether the APIService became Available within `limit` (its backend answered discovery).
  bool available(std::chrono::seconds limit) {
    const auto until = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < until) {
      CliRun r = kubectl("admin", {"get", "apiservice", "v1.subresources.kubevirt.io", "-o",
                                   "jsonpath={.status.conditions[?(@.type==\"Available\")].status}"});
      if (r.exit_code == 0 && r.out == "True") return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return false;
  }
  // PUT on a VM's subresource as `user`, through kube-apiserver.
  CliRun put(const std::string& user, const std::string& ns, const std::string& action) {
    const fs::path body = dir_ / "options.json";
    bootstorm::test_support::write_file(body, "{}");
    return kubectl(
        user, {"replace", "--raw",
               "/apis/subresources.kubevirt.io/v1/namespaces/" + ns + "/virtualmachines/vm-1/" + action, "-f",
               body.string()});
  }
};

// The service account's start reaches the backend as itself, over the front proxy's certificate; a verb its
// role does not grant never leaves kube-apiserver.
TEST_F(RealApiAggregation, AStartReachesVirtApiAsTheUserWhoSentIt) {
  Backend backend(front_proxy_ca());
  ASSERT_TRUE(backend.started());
  register_backend(backend);
  ASSERT_TRUE(available(std::chrono::seconds(60)))
      << kubectl("admin", {"get", "apiservice", "v1.subresources.kubevirt.io", "-o", "yaml"}).out;
  CliRun start = put("bootstorm", "desktops", "start");
  EXPECT_EQ(start.exit_code, 0) << start.out << start.err;
  std::vector<Seen> puts;
  for (const auto& s : backend.seen())
    if (s.method == "PUT") puts.push_back(s);
  ASSERT_EQ(puts.size(), 1u);
  EXPECT_EQ(puts[0].path, "/apis/subresources.kubevirt.io/v1/namespaces/desktops/virtualmachines/vm-1/start");
  EXPECT_EQ(puts[0].user, "system:serviceaccount:bootstorm:bootstorm");
  EXPECT_EQ(puts[0].client_cert, "front-proxy-client");
  // rbac.yaml grants update on start and stop only: a restart is refused by kube-apiserver itself.
  CliRun restart = put("bootstorm", "desktops", "restart");
  EXPECT_NE(restart.exit_code, 0);
  EXPECT_NE(restart.err.find("forbidden"), std::string::npos) << restart.err;
  for (const auto& s : backend.seen()) EXPECT_EQ(s.path.find("/restart"), std::string::npos) << s.path;
}

}  // namespace

// virt-api's listener for the attached lab and its registration with the API server's aggregation layer.
#include "simulator/attach/virt_api.hpp"

#include <nlohmann/json.hpp>

#include "common/async/sleep.hpp"
#include "common/base64.hpp"
#include "protocol/http/tls.hpp"
#include "protocol/kube/object_calls.hpp"

namespace bootstorm::sim::attach {
namespace {

namespace asio = boost::asio;
using json = nlohmann::json;

constexpr const char* kApiService = "v1.subresources.kubevirt.io";
constexpr const char* kServiceName = "virt-api";
constexpr const char* kDefaultRole = "kubevirt.io:default";

// Creates the object, or replaces what is there (a lab attached before left it, with another port and CA).
asio::awaitable<Expected<void>> apply(bootstorm::kube::KubeApi& api, const std::string& collection,
                                      const std::string& name, json object, const std::string& what) {
  const std::string doing = "creating " + what;
  auto made = co_await bootstorm::kube::create_object(api, collection, object, doing);
  if (made || made.error().kind != ErrorKind::conflict) {
    if (!made) co_return made.error();
    co_return Expected<void>{};
  }
  const std::string path = collection + "/" + name;
  const std::string reading = "reading " + what;
  auto current = co_await bootstorm::kube::get_object(api, path, reading);
  if (!current) co_return current.error();
  if (!*current) co_return Error{ErrorKind::conflict, what + " was deleted while being replaced", ""};
  object["metadata"]["resourceVersion"] = (**current)["metadata"].value("resourceVersion", "");
  // A Service's cluster IPs are the server's, and immutable.
  if (object.value("kind", "") == "Service") {
    for (const char* field : {"clusterIP", "clusterIPs"}) {
      if ((**current)["spec"].contains(field)) object["spec"][field] = (**current)["spec"][field];
    }
  }
  const std::string replacing = "replacing " + what;
  auto replaced = co_await bootstorm::kube::replace_object(api, path, object, replacing);
  if (!replaced) co_return replaced.error();
  co_return Expected<void>{};
}

bool available(const json& api_service) {
  const json conditions = api_service.value("/status/conditions"_json_pointer, json::array());
  for (const auto& c : conditions)
    if (c.value("type", "") == "Available" && c.value("status", "") == "True") return true;
  return false;
}

std::string unavailable_reason(const json& api_service) {
  const json conditions = api_service.value("/status/conditions"_json_pointer, json::array());
  for (const auto& c : conditions)
    if (c.value("type", "") == "Available") return c.value("reason", "") + ": " + c.value("message", "");
  return "no Available condition yet";
}

}  // namespace

Expected<std::unique_ptr<VirtApi>> VirtApi::start(asio::any_io_executor executor, http::Handler handler,
                                                  const std::string& front_proxy_ca, const std::string& ns) {
  std::unique_ptr<VirtApi> virt_api(new VirtApi());
  virt_api->ns_ = ns;
  const std::string service = std::string(kServiceName) + "." + ns + ".svc";
  const http::GeneratedPki pki = http::generate_pki(kServiceName, {service, "127.0.0.1"});
  virt_api->ca_pem_ = pki.ca_cert_pem;
  http::ServerOptions options;
  options.bind_address = "127.0.0.1";
  options.port = 0;
  http::TlsServerOptions tls;
  tls.cert_data = pki.leaf_cert_pem + pki.ca_cert_pem;
  tls.key_data = pki.leaf_key_pem;
  tls.client_ca_data = front_proxy_ca;
  tls.require_client_cert = true;
  options.tls = tls;
  virt_api->server_ = std::make_unique<http::Server>(std::move(executor), options, std::move(handler));
  if (auto started = virt_api->server_->start(); !started) return started.error();
  return virt_api;
}

VirtApi::~VirtApi() = default;

void VirtApi::stop() {
  if (server_) server_->stop_now();
}

asio::awaitable<Expected<std::string>> read_front_proxy_ca(bootstorm::kube::KubeApi& api) {
  const std::string path = "/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication";
  const std::string what = "reading kube-system/extension-apiserver-authentication";
  auto read = co_await bootstorm::kube::get_object(api, path, what);
  if (!read) co_return read.error();
  const std::string ca = *read ? (**read).value("/data/requestheader-client-ca-file"_json_pointer, "") : "";
  if (ca.empty()) {
    co_return Error{ErrorKind::not_found,
                    "the API server " + api.server() +
                        " names no front-proxy CA (kube-system/"
                        "extension-apiserver-authentication has no requestheader-client-ca-file)",
                    "start kube-apiserver with --requestheader-client-ca-file and --proxy-client-cert-file: "
                    "KubeVirt's start and stop are an aggregated API"};
  }
  co_return ca;
}

asio::awaitable<Expected<void>> register_virt_api(bootstorm::kube::KubeApi& api, const VirtApi& virt_api,
                                                  std::chrono::seconds wait) {
  const std::string& ns = virt_api.ns();
  const json service{{"apiVersion", "v1"},
                     {"kind", "Service"},
                     {"metadata", {{"name", kServiceName}, {"namespace", ns}}},
                     {"spec", {{"ports", json::array({{{"port", 443}, {"targetPort", virt_api.port()}}})}}}};
  const std::string services = "/api/v1/namespaces/" + ns + "/services";
  const std::string service_what = "virt-api's Service " + ns + "/" + kServiceName;
  if (auto r = co_await apply(api, services, kServiceName, service, service_what); !r) co_return r.error();
  // What a cluster's EndpointSlice controller writes for virt-api's pod; the availability check wants one.
  // Its address is a documentation address (EndpointSlices may not hold loopback ones).
  const json slice{
      {"apiVersion", "discovery.k8s.io/v1"},
      {"kind", "EndpointSlice"},
      {"metadata",
       {{"name", kServiceName},
        {"namespace", ns},
        {"labels", {{"kubernetes.io/service-name", kServiceName}}}}},
      {"addressType", "IPv4"},
      {"endpoints", json::array({{{"addresses", {"192.0.2.10"}}, {"conditions", {{"ready", true}}}}})},
      {"ports", json::array({{{"name", ""}, {"port", virt_api.port()}, {"protocol", "TCP"}}})}};
  const std::string slices = "/apis/discovery.k8s.io/v1/namespaces/" + ns + "/endpointslices";
  const std::string slice_what = "virt-api's EndpointSlice";
  if (auto r = co_await apply(api, slices, kServiceName, slice, slice_what); !r) co_return r.error();
  const json api_service{{"apiVersion", "apiregistration.k8s.io/v1"},
                         {"kind", "APIService"},
                         {"metadata", {{"name", kApiService}}},
                         {"spec",
                          {{"group", "subresources.kubevirt.io"},
                           {"version", "v1"},
                           {"service", {{"name", kServiceName}, {"namespace", ns}, {"port", 443}}},
                           {"caBundle", base64_encode(virt_api.ca_pem())},
                           {"groupPriorityMinimum", 1000},
                           {"versionPriority", 15}}}};
  // What KubeVirt's install grants every authenticated user: reading virt-api's version
  // (kubevirt.io:default).
  const json role{{"apiVersion", "rbac.authorization.k8s.io/v1"},
                  {"kind", "ClusterRole"},
                  {"metadata", {{"name", kDefaultRole}, {"labels", {{"kubevirt.io", ""}}}}},
                  {"rules", json::array({{{"apiGroups", {"subresources.kubevirt.io"}},
                                          {"resources", {"version", "guestfs"}},
                                          {"verbs", {"get", "list"}}}})}};
  const std::string roles = "/apis/rbac.authorization.k8s.io/v1/clusterroles";
  const std::string role_what = std::string("the ClusterRole ") + kDefaultRole;
  if (auto r = co_await apply(api, roles, kDefaultRole, role, role_what); !r) co_return r.error();
  const json binding{
      {"apiVersion", "rbac.authorization.k8s.io/v1"},
      {"kind", "ClusterRoleBinding"},
      {"metadata", {{"name", kDefaultRole}, {"labels", {{"kubevirt.io", ""}}}}},
      {"roleRef",
       {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "ClusterRole"}, {"name", kDefaultRole}}},
      {"subjects", json::array({{{"apiGroup", "rbac.authorization.k8s.io"},
                                 {"kind", "Group"},
                                 {"name", "system:authenticated"}}})}};
  const std::string bindings = "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings";
  const std::string binding_what = std::string("the ClusterRoleBinding ") + kDefaultRole;
  if (auto r = co_await apply(api, bindings, kDefaultRole, binding, binding_what); !r) co_return r.error();
  const std::string api_services = "/apis/apiregistration.k8s.io/v1/apiservices";
  const std::string api_service_what = std::string("the APIService ") + kApiService;
  if (auto r = co_await apply(api, api_services, kApiService, api_service, api_service_what); !r)
    co_return r.error();
  const auto until = std::chrono::steady_clock::now() + wait;
  const std::string path = api_services + "/" + kApiService;
  const std::string reading = "reading " + api_service_what;
  json last;
  while (true) {
    auto read = co_await bootstorm::kube::get_object(api, path, reading);
    if (read && *read) {
      last = **read;
      if (available(last)) co_return Expected<void>{};
    }
    if (std::chrono::steady_clock::now() >= until) break;
    const auto pause = std::chrono::milliseconds(200);
    co_await async::sleep_for(pause);
  }
  co_return Error{ErrorKind::timeout,
                  "the API server " + api.server() + " did not make virt-api (" + kApiService +
                      ") available within " + std::to_string(wait.count()) +
                      " s: " + unavailable_reason(last),
                  "the API server must reach 127.0.0.1:" + std::to_string(virt_api.port()) +
                      " for the Service " + ns + "/" + kServiceName};
}

asio::awaitable<Expected<void>> unregister_virt_api(bootstorm::kube::KubeApi& api) {
  const std::string path = std::string("/apis/apiregistration.k8s.io/v1/apiservices/") + kApiService;
  const std::string what = std::string("deleting the APIService ") + kApiService;
  auto deleted = co_await bootstorm::kube::delete_object(api, path, what);
  if (!deleted) co_return deleted.error();
  co_return Expected<void>{};
}

}  // namespace bootstorm::sim::attach

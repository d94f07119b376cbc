#pragma once
// virt-api for the attached lab: the lab's Kubernetes front serving KubeVirt's aggregated API
// (subresources.kubevirt.io: start, stop, restart, and the version that names the lab as a simulator) to the
// API server's front proxy only, as virt-api trusts only the client certificates that kube-system's
// extension-apiserver-authentication names. The API server reaches it through virt-api's Service, its
// EndpointSlice and the APIService v1.subresources.kubevirt.io, which register_virt_api() writes.
//
// The Service's address is the lab's loopback listener: the API server must resolve it to 127.0.0.1 at the
// Service's targetPort, as tests/support/realapi does for every Service of the suite.
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <memory>
#include <string>

#include "common/expected.hpp"
#include "protocol/http/server.hpp"
#include "protocol/kube/kube_api.hpp"

namespace bootstorm::sim::attach {

class VirtApi {
 public:
  // Listens on 127.0.0.1 (kernel-chosen port) with a certificate for virt-api's Service names, answering
  // with `handler` what comes with a client certificate signed by `front_proxy_ca`.
  static Expected<std::unique_ptr<VirtApi>> start(boost::asio::any_io_executor executor,
                                                  http::Handler handler, const std::string& front_proxy_ca,
                                                  const std::string& ns);
  ~VirtApi();
  VirtApi(const VirtApi&) = delete;
  VirtApi& operator=(const VirtApi&) = delete;

  unsigned short port() const { return server_->port(); }
  const std::string& ca_pem() const { return ca_pem_; }
  const std::string& ns() const { return ns_; }
  // From the lab's executor.
  void stop();

 private:
  VirtApi() = default;
  std::unique_ptr<http::Server> server_;
  std::string ca_pem_;
  std::string ns_;
};

// The CA of the API server's front proxy (extension-apiserver-authentication's requestheader-client-ca-file).
boost::asio::awaitable<Expected<std::string>> read_front_proxy_ca(bootstorm::kube::KubeApi& api);

// Writes (or rewrites, for a lab attached again) virt-api's Service, EndpointSlice and APIService, and the
// ClusterRole kubevirt.io:default that lets every authenticated user read virt-api's version, as KubeVirt's
// install does; then waits up to `wait` for the API server to call the APIService Available.
boost::asio::awaitable<Expected<void>> register_virt_api(bootstorm::kube::KubeApi& api,
                                                         const VirtApi& virt_api, std::chrono::seconds wait);

// Deletes the APIService, so that a cluster the lab leaves does not keep an aggregated API nobody serves
// (discovery would fail for every client); the Service and EndpointSlice stay, harmless.
boost::asio::awaitable<Expected<void>> unregister_virt_api(bootstorm::kube::KubeApi& api);

}  // namespace bootstorm::sim::attach

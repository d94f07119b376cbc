#pragma once
// The KubeVirt provider: api::Provider over the Kubernetes API (KubeVirt kubevirt.io/v1 + subresources, CDI
// cdi.kubevirt.io/v1beta1). VirtualMachines are created Halted with a DataVolume cloned from the golden
// DataSource/PVC, started through the start subresource, and observed with ONE list + watch of
// VirtualMachineInstances by the run's label (no per-VM polling).
#include <boost/asio/any_io_executor.hpp>
#include <memory>

#include "protocol/kube/kube_api.hpp"
#include "providers/api/provider.hpp"
#include "providers/kubevirt/descriptor.hpp"

namespace bootstorm::kubevirt {

// Registers kind "kubevirt" (descriptor.hpp) with its factory (api::register_platform). Call from the
// executable's composition root (static libraries drop unreferenced static registrations).
void register_provider();

// The provider on the kubeconfig (or URL + token) the plan names; connect() builds its kube::HttpKubeApi.
std::unique_ptr<api::Provider> make_provider(boost::asio::any_io_executor executor,
                                             const api::ProviderConfig& config);
// The provider on a given KubeApi (a fake in unit tests); the plan's namespace must be set.
std::unique_ptr<api::Provider> make_provider(boost::asio::any_io_executor executor,
                                             const api::ProviderConfig& config,
                                             std::shared_ptr<kube::KubeApi> api);

}  // namespace bootstorm::kubevirt

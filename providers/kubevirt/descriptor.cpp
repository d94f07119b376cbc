#include "providers/kubevirt/descriptor.hpp"

#include "providers/kubevirt/settings.hpp"

namespace bootstorm::kubevirt {

api::PlatformDescriptor descriptor() {
  api::PlatformDescriptor d;
  d.kind = "kubevirt";
  d.api_name = "Kubernetes";
  // A kubeconfig (the plan's, $KUBECONFIG or ~/.kube/config) or the pod's service account: the provider
  // reads it, so the credentials are optional.
  d.credential_keys = {"kubeconfig", "context"};
  d.credential_form = api::CredentialForm::kubeconfig;
  d.https_endpoint_needs_credentials = "";
  d.endpoint_words = {"kubeconfig", "in-cluster"};
  d.lab_front = api::LabFront::kubernetes;
  d.starts_per_connection_refusal = "";  // start subresource calls pipeline on one connection
  d.golden_keys = {"dataSource", "pvc", "clone"};
  d.required_golden = {{"dataSource", "pvc"}, ""};
  d.clone_kinds = {"auto", "copy", "snapshot", "csi-clone"};
  d.default_clone = "auto";
  d.has_namespace = true;
  // VmBuild's memory request (kube_objects.hpp, "4Gi"; a unit test keeps the two equal).
  d.desktop_memory_mib = 4096;
  // The cluster's Prometheus (OpenShift: Thanos Querier behind its Route; elsewhere telemetry.endpoint).
  d.telemetry_sources = {"prometheus"};
  d.telemetry_endpoint = true;
  // One list + watch of VirtualMachineInstances (kubevirt_provider.cpp).
  d.observed_milestones = {"scheduled", "running", "guest_agent", "ip_assigned"};
  d.read_settings = read_settings;
  return d;
}

void register_platform_descriptor() {
  api::register_platform_descriptor(descriptor());
}

}  // namespace bootstorm::kubevirt

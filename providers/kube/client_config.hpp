#pragma once
// A platform's configuration (the plan's `platform:` section, as api::ProviderConfig) resolved into the
// Kubernetes client's configuration: a kubeconfig and context, the pod's service account, or an explicit URL
// and bearer token (the embedded lab), with the plan's TLS overrides on top.
#include "common/expected.hpp"
#include "protocol/kube/kube_config.hpp"
#include "providers/api/provider.hpp"

namespace bootstorm::kube {

// Dispatches on ProviderConfig::endpoint: "kubeconfig" | "in-cluster" | an https URL (token in `password`,
// CA in ca_data/ca_file). TLS overrides of the plan (ca_file, insecure_skip_verify) apply on top.
Expected<KubeClientConfig> resolve_client_config(const api::ProviderConfig& config);

}  // namespace bootstorm::kube

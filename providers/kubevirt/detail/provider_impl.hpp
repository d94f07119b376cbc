#pragma once
// The KubeVirt provider's state and operations, shared by its files: connection (kubevirt_provider.cpp),
// inventory checks (inventory.cpp), provisioning (provisioning.cpp, with DataVolumeWaiter), the start burst
// (start_burst.cpp, with StartPipeline), observation (observe.cpp) and what happens after the storm
// (teardown.cpp). Every API
// call goes through kube::KubeApi.
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/cancel.hpp"
#include "common/expected.hpp"
#include "protocol/kube/kube_api.hpp"
#include "protocol/kube/kube_config.hpp"
#include "providers/api/provider.hpp"
#include "providers/kubevirt/clone_forecast.hpp"
#include "providers/kubevirt/detail/datavolume_waiter.hpp"
#include "providers/kubevirt/detail/start_pipeline.hpp"
#include "providers/kubevirt/kube_objects.hpp"
#include "providers/kubevirt/settings.hpp"

namespace bootstorm::kubevirt::detail {

class ProviderImpl : public std::enable_shared_from_this<ProviderImpl> {
 public:
  // `api`: null = an HttpKubeApi built by connect() from the resolved kubeconfig.
  ProviderImpl(boost::asio::any_io_executor executor, api::ProviderConfig config,
               std::shared_ptr<kube::KubeApi> api);

  api::Capabilities capabilities() const;
  http::ApiStats stats() const;

  // kubevirt_provider.cpp
  boost::asio::awaitable<Expected<void>> connect();
  boost::asio::awaitable<void> disconnect();
  void shutdown();

  // inventory.cpp
  boost::asio::awaitable<Expected<void>> check_inventory(const api::InventoryRequest& request);

  // preflight.cpp
  boost::asio::awaitable<std::vector<api::CheckResult>> check(const api::CheckRequest& request);

  // platform_facts.cpp
  api::PlatformFacts facts() const { return facts_; }

  // provisioning.cpp
  boost::asio::awaitable<Expected<api::VmHandle>> provision(const api::VmSpec& spec);
  boost::asio::awaitable<Expected<void>> wait_startable(const api::VmHandle& vm,
                                                        std::chrono::milliseconds timeout);
  std::string clone_method(const api::VmHandle& vm) const;

  // telemetry.cpp
  Expected<std::unique_ptr<api::TelemetrySource>> telemetry_source(const api::TelemetrySettings& settings);

  // start_burst.cpp
  boost::asio::awaitable<Expected<void>> prepare_storm(std::size_t expected_starts);
  boost::asio::awaitable<Expected<api::StartResult>> start(const api::VmHandle& vm);

  // observe.cpp
  boost::asio::awaitable<void> observe(std::vector<api::VmHandle> vms, api::MilestoneSink sink,
                                       CancelSignal stop);

  // teardown.cpp
  boost::asio::awaitable<Expected<void>> stop(const api::VmHandle& vm);
  boost::asio::awaitable<Expected<void>> destroy(const api::VmHandle& vm);
  boost::asio::awaitable<Expected<std::vector<api::VmHandle>>> list_run_vms(const std::string& run_id);

 private:
  // inventory.cpp: each a check of `bootstorm check`; the error is the one check_inventory() fails with.
  // The placement nodes are Ready and schedulable, and (with `vms_per_host`) have the memory their VMs
  // request.
  boost::asio::awaitable<Expected<api::CheckResult>> check_nodes(
      const std::vector<std::string>& hosts, const std::map<std::string, int>& vms_per_host);
  boost::asio::awaitable<Expected<api::CheckResult>> check_golden();
  boost::asio::awaitable<Expected<api::CheckResult>> check_namespace();
  // dry_run_vm() of the first VM of the placement, when the namespace exists (check_namespace() first).
  boost::asio::awaitable<Expected<api::CheckResult>> check_vm_object(const std::string& host);

  // preflight.cpp
  // Every verb the run uses, asked with SelfSubjectAccessReview.
  boost::asio::awaitable<api::CheckResult> check_access();
  // The namespace's ResourceQuotas against what a storm of `vms` VMs adds.
  boost::asio::awaitable<api::CheckResult> check_quota(std::size_t vms);
  boost::asio::awaitable<api::CheckResult> check_launch_pacing(const api::CheckRequest& request);

  // provisioning.cpp
  boost::asio::awaitable<Expected<void>> ensure_namespace();
  // A POST answered "not now" (429, 503, 504) before its 5th attempt: counts the retry, waits the backoff and
  // returns true (send it again); false for any other answer.
  boost::asio::awaitable<bool> backed_off_after_refusal(int status, int attempt);
  // The VirtualMachine provision() would create for `spec`.
  std::string vm_body(const api::VmSpec& spec) const;
  // The API server's verdict on a VirtualMachine as bootstorm creates them, before any exists: a server-side
  // dry run (dryRun=All) with strict field validation, so a cluster whose KubeVirt does not know a field
  // bootstorm sets refuses it here instead of dropping it with a warning, and admission (quota, webhooks)
  // answers as it would to the real create. Needs the namespace to exist.
  boost::asio::awaitable<Expected<void>> dry_run_vm(const api::VmSpec& spec);

  // platform_facts.cpp
  // Kubernetes', KubeVirt's, CDI's and OpenShift's versions, and whether the cluster says it is a simulator.
  // Best effort: a version the cluster does not expose (or this user may not read) stays empty.
  // A GET whose answer is a JSON object; null when the cluster has nothing there for this user.
  boost::asio::awaitable<nlohmann::json> read_object(std::string path, std::string what);
  boost::asio::awaitable<void> learn_platform();
  // The clones' storage class, its driver and how CDI will clone into it (clone_forecast_, facts_), and the
  // golden volume's size; part of learn_platform.
  boost::asio::awaitable<void> learn_storage();
  // One placement node's facts (kubelet version, CPU model) from its Node object.
  static api::HostFacts node_facts(const std::string& host, const nlohmann::json& node);

  // start_burst.cpp
  // Starts written back to back on one connection, and the connections `concurrent_starts` need: for the
  // burst prepare_storm announced (before it: apiBudget.maxConcurrent).
  int start_depth() const;
  std::size_t start_connections(std::size_t concurrent_starts) const;
  boost::asio::awaitable<Expected<http::Response>> start_pipelined(const std::string& path,
                                                                   const std::string& what);

  // teardown.cpp
  boost::asio::awaitable<Expected<std::optional<nlohmann::json>>> fetch_owned(const api::VmHandle& vm,
                                                                              const std::string& action);
  std::string vm_namespace(const api::VmHandle& vm) const;

  // One call through the KubeApi (not connected: an internal error).
  boost::asio::awaitable<Expected<http::Response>> call(std::string method, std::string target,
                                                        std::string body, std::string what,
                                                        kube::Budget budget = kube::Budget::paced);

  boost::asio::any_io_executor executor_;
  api::ProviderConfig config_;
  Settings settings_;  // the kind's own part of the plan (config_.settings, typed)
  std::shared_ptr<kube::KubeApi> api_;
  std::string server_;  // the API server URL, for messages

  std::shared_ptr<StartPipeline> start_pipeline_;  // made by the first pipelined start of a burst
  std::size_t burst_starts_ = 0;  // starts in flight at once in the coming burst (prepare_storm)

  std::shared_ptr<DataVolumeWaiter> datavolumes_;     // made by connect()
  std::map<std::string, std::string> clone_methods_;  // VM id -> CDI's clone type, once startable
  api::PlatformFacts facts_;
  CloneForecast clone_forecast_;
  std::string golden_size_;  // the golden PVC's capacity ("40Gi"; "" unknown)

  bool inventory_checked_ = false;  // check() or check_inventory() passed, for checked_request_
  api::InventoryRequest checked_request_;
  bool namespace_missing_ = false;
  bool namespace_known_ = false;
  bool namespace_ready_ = false;
  bool namespace_creating_ = false;
  std::optional<Error> namespace_error_;  // why ensure_namespace() failed, for every provision after it
  std::vector<std::shared_ptr<boost::asio::steady_timer>> namespace_waiters_;
};

}  // namespace bootstorm::kubevirt::detail

// The seed objects of the lab's cluster: namespaces, the KubeVirt and CDI CRs, StorageClasses with their CDI
// StorageProfiles, Nodes shaped like OpenShift's workers (capacity from the lab host, KubeVirt's device
// plugins), and the golden images' PVCs and DataSources that DataVolumes clone from.
#include "simulator/kube/detail/seed_objects.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "simulator/kube/api_objects.hpp"
#include "simulator/kube/detail/api_conventions.hpp"

namespace bootstorm::sim::kube {

using json = nlohmann::json;

namespace {

// The seeding of one lab's cluster, one kind of object a step.
struct Seeder {
  ObjectStore& store;
  model::Lab& lab;
  ObjectPublisher& publisher;
  const model::KubeSpec& kube = lab.spec().kube;
  std::string ts = format_time(publisher.now());

  void add_namespace(const std::string& name);
  void namespaces();
  void kubevirt_cr();
  void cdi_cr();
  void storage();
  void flow_control();
  void nodes();
  void golden_images();
  void monitoring_route(const std::string& monitoring_host);
};

void Seeder::add_namespace(const std::string& name) {
  if (store.get(Kind::namespaces, "", name)) return;
  publisher.insert(Kind::namespaces,
                   {{"apiVersion", "v1"},
                    {"kind", "Namespace"},
                    {"metadata", {{"name", name}, {"labels", {{"kubernetes.io/metadata.name", name}}}}},
                    {"spec", {{"finalizers", {"kubernetes"}}}},
                    {"status", {{"phase", "Active"}}}});
}

// The system namespaces and the golden images' namespaces.
void Seeder::namespaces() {
  for (const char* name : {"default", "kube-system", "kube-public", "kube-node-lease"}) add_namespace(name);
  for (const auto& image : lab.golden_images()) add_namespace(image.spec.namespace_);
}

// The installation's KubeVirt CR, as virt-operator leaves it: the versions it deployed and the component
// configuration the lab profile sets (the lab's virt-controller reads its rate limiter from here).
void Seeder::kubevirt_cr() {
  add_namespace(kKubeVirtNamespace);
  json configuration = json::object();
  if (kube.virt_controller) {
    configuration[std::string(kubevirt_limits::kController)] = {
        {"restClient",
         {{"rateLimiter",
           {{"tokenBucketRateLimiter",
             {{"qps", kube.virt_controller->qps}, {"burst", kube.virt_controller->burst}}}}}}}};
  }
  json kv_status = {{"phase", "Deployed"},
                    {"observedKubeVirtVersion", kube.kubevirt_version},
                    {"targetKubeVirtVersion", kube.kubevirt_version},
                    {"observedKubeVirtRegistry", "quay.io/kubevirt"},
                    {"operatorVersion", kube.kubevirt_version},
                    {"defaultArchitecture", "amd64"}};
  set_condition(kv_status, "Available", true, "AllResourcesCreated", "All components are ready.", ts);
  set_condition(kv_status, "Progressing", false, "AllResourcesCreated", "All components are ready.", ts);
  set_condition(kv_status, "Degraded", false, "AllResourcesCreated", "All components are ready.", ts);
  publisher.insert(
      Kind::kube_virts,
      {{"apiVersion", "kubevirt.io/v1"},
       {"kind", "KubeVirt"},
       {"metadata", {{"name", kKubeVirtName}, {"namespace", kKubeVirtNamespace}}},
       {"spec", {{"configuration", configuration}, {"certificateRotateStrategy", json::object()}}},
       {"status", kv_status}});
}

// CDI's CR, as cdi-operator leaves it.
void Seeder::cdi_cr() {
  json cdi_status = {{"phase", "Deployed"},
                     {"observedVersion", kube.cdi_version},
                     {"operatorVersion", kube.cdi_version},
                     {"targetVersion", kube.cdi_version}};
  set_condition(cdi_status, "Available", true, "", "", ts, /*with_probe_time=*/false, /*heartbeat=*/true);
  publisher.insert(Kind::cdis, {{"apiVersion", "cdi.kubevirt.io/v1beta1"},
                                {"kind", "CDI"},
                                {"metadata", {{"name", "cdi"}}},
                                {"spec", {{"workload", json::object()}}},
                                {"status", cdi_status}});
}

// Storage: a StorageClass per class the lab's volumes use (the kube default marked default), CDI's
// StorageProfile for each, and the VolumeSnapshotClass of the driver when the profile names one.
void Seeder::storage() {
  std::vector<std::string> classes = {kube.storage_class};
  for (const auto& image : lab.golden_images())
    if (!image.spec.storage_class.empty() &&
        std::find(classes.begin(), classes.end(), image.spec.storage_class) == classes.end())
      classes.push_back(image.spec.storage_class);
  for (const auto& sc : classes) {
    json annotations = json::object();
    if (sc == kube.storage_class) annotations["storageclass.kubernetes.io/is-default-class"] = "true";
    publisher.insert(Kind::storage_classes, {{"apiVersion", "storage.k8s.io/v1"},
                                             {"kind", "StorageClass"},
                                             {"metadata", {{"name", sc}, {"annotations", annotations}}},
                                             {"provisioner", kube.provisioner},
                                             {"reclaimPolicy", "Delete"},
                                             {"volumeBindingMode", "Immediate"},
                                             {"allowVolumeExpansion", true}});
    publisher.insert(Kind::storage_profiles,
                     {{"apiVersion", "cdi.kubevirt.io/v1beta1"},
                      {"kind", "StorageProfile"},
                      {"metadata", {{"name", sc}}},
                      {"spec", json::object()},
                      {"status",
                       {{"storageClass", sc},
                        {"provisioner", kube.provisioner},
                        {"cloneStrategy", kube.clone_strategy},
                        {"claimPropertySets",
                         json::array({{{"accessModes", {"ReadWriteMany"}}, {"volumeMode", "Block"}}})}}}});
  }
  if (!kube.snapshot_class.empty()) {
    publisher.insert(Kind::volume_snapshot_classes, {{"apiVersion", "snapshot.storage.k8s.io/v1"},
                                                     {"kind", "VolumeSnapshotClass"},
                                                     {"metadata", {{"name", kube.snapshot_class}}},
                                                     {"driver", kube.provisioner},
                                                     {"deletionPolicy", "Delete"}});
  }
}

// API Priority and Fairness: the mandatory exempt level and the suggested global-default, with the
// FlowSchemas that send probes and everything else to them (as kube-apiserver creates them).
void Seeder::flow_control() {
  publisher.insert(Kind::priority_level_configurations,
                   {{"apiVersion", "flowcontrol.apiserver.k8s.io/v1"},
                    {"kind", "PriorityLevelConfiguration"},
                    {"metadata", {{"name", kExemptPriorityLevel}}},
                    {"spec", {{"type", "Exempt"}, {"exempt", json::object()}}}});
  publisher.insert(Kind::priority_level_configurations,
                   {{"apiVersion", "flowcontrol.apiserver.k8s.io/v1"},
                    {"kind", "PriorityLevelConfiguration"},
                    {"metadata", {{"name", kGlobalDefault}}},
                    {"spec",
                     {{"type", "Limited"},
                      {"limited",
                       {{"nominalConcurrencyShares", 20},
                        {"lendablePercent", 50},
                        {"limitResponse",
                         {{"type", "Queue"},
                          {"queuing", {{"queues", 128}, {"handSize", 6}, {"queueLengthLimit", 50}}}}}}}}}});
  auto flow_schema = [&](const char* name, const char* level, int precedence, json rules) {
    publisher.insert(Kind::flow_schemas, {{"apiVersion", "flowcontrol.apiserver.k8s.io/v1"},
                                          {"kind", "FlowSchema"},
                                          {"metadata", {{"name", name}}},
                                          {"spec",
                                           {{"priorityLevelConfiguration", {{"name", level}}},
                                            {"matchingPrecedence", precedence},
                                            {"distinguisherMethod", {{"type", "ByUser"}}},
                                            {"rules", std::move(rules)}}}});
  };
  flow_schema(
      kProbesFlowSchema, kExemptPriorityLevel, 2,
      json::array(
          {{{"subjects", json::array({{{"kind", "Group"}, {"group", {{"name", "system:unauthenticated"}}}},
                                      {{"kind", "Group"}, {"group", {{"name", "system:authenticated"}}}}})},
            {"nonResourceRules",
             json::array({{{"verbs", {"get"}},
                           {"nonResourceURLs", {"/healthz", "/readyz", "/livez", "/version"}}}})}}}));
  flow_schema(
      kGlobalDefault, kGlobalDefault, 9900,
      json::array(
          {{{"subjects", json::array({{{"kind", "Group"}, {"group", {{"name", "system:unauthenticated"}}}},
                                      {{"kind", "Group"}, {"group", {{"name", "system:authenticated"}}}}})},
            {"resourceRules", json::array({{{"verbs", {"*"}},
                                            {"apiGroups", {"*"}},
                                            {"resources", {"*"}},
                                            {"clusterScope", true},
                                            {"namespaces", {"*"}}}})},
            {"nonResourceRules", json::array({{{"verbs", {"*"}}, {"nonResourceURLs", {"*"}}}})}}}));
}

// A Node per lab node, shaped like OpenShift's workers: capacity from the lab host, KubeVirt's device
// plugins.
void Seeder::nodes() {
  int index = 0;
  for (const auto& node : lab.nodes()) {
    const model::Host* host = lab.find_host(node.host_id);
    int cores = host ? host->spec.cores : 32;
    double memory_gb = host ? host->spec.memory_gb : 256;
    json labels = {{"kubernetes.io/hostname", node.spec.name},
                   {"kubernetes.io/os", "linux"},
                   {"kubernetes.io/arch", "amd64"},
                   {"beta.kubernetes.io/os", "linux"},
                   {"beta.kubernetes.io/arch", "amd64"},
                   {"node-role.kubernetes.io/worker", ""},
                   {"kubevirt.io/schedulable", "true"}};
    for (const auto& [k, v] : node.spec.labels) labels[k] = v;
    std::string memory = fmt::format("{}Ki", static_cast<long long>(memory_gb * 1024 * 1024));
    json capacity = {{"cpu", std::to_string(cores * 2)},
                     {"memory", memory},
                     {"pods", "250"},
                     {"ephemeral-storage", "467039428Ki"},
                     {"devices.kubevirt.io/kvm", "1k"},
                     {"devices.kubevirt.io/tun", "1k"},
                     {"devices.kubevirt.io/vhost-net", "1k"}};
    json conditions = json::array();
    for (const auto& [type, reason, message] : std::vector<std::tuple<std::string, std::string, std::string>>{
             {"MemoryPressure", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"},
             {"DiskPressure", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"},
             {"PIDPressure", "KubeletHasSufficientPID", "kubelet has sufficient PID available"},
             {"Ready", "KubeletReady", "kubelet is posting ready status"}}) {
      conditions.push_back({{"type", type},
                            {"status", type == "Ready" ? "True" : "False"},
                            {"reason", reason},
                            {"message", message},
                            {"lastHeartbeatTime", ts},
                            {"lastTransitionTime", ts}});
    }
    publisher.insert(
        Kind::nodes,
        {{"apiVersion", "v1"},
         {"kind", "Node"},
         {"metadata",
          {{"name", node.spec.name},
           {"labels", labels},
           {"annotations", {{"sim.bootstorm.io/host", host ? host->spec.name : node.spec.host}}}}},
         {"spec", {{"podCIDR", fmt::format("10.128.{}.0/23", index * 2)}}},
         {"status",
          {{"capacity", capacity},
           {"allocatable", capacity},
           {"conditions", conditions},
           {"addresses",
            json::array({{{"type", "InternalIP"}, {"address", fmt::format("192.168.10.{}", 10 + index)}},
                         {{"type", "Hostname"}, {"address", node.spec.name}}})},
           {"daemonEndpoints", {{"kubeletEndpoint", {{"Port", 10250}}}}},
           {"nodeInfo",
            {{"machineID", fmt::format("{:032x}", 0xb005700000ULL + static_cast<unsigned>(index))},
             {"systemUUID", publisher.new_uid()},
             {"bootID", publisher.new_uid()},
             {"kernelVersion", "5.14.0-427.13.1.el9_4.x86_64"},
             {"osImage", "Red Hat Enterprise Linux CoreOS 416.94"},
             {"containerRuntimeVersion", "cri-o://1.29.4"},
             {"kubeletVersion", lab.spec().kube.server_version},
             {"kubeProxyVersion", lab.spec().kube.server_version},
             {"operatingSystem", "linux"},
             {"architecture", "amd64"}}}}}});
    ++index;
  }
}

// Per golden image, its PVC (bound, on the image's storage class) and the DataSource that DataVolumes clone
// from.
void Seeder::golden_images() {
  for (const auto& image : lab.golden_images()) {
    const model::GuestProfile* profile = lab.find_profile(image.spec.profile);
    std::string size =
        fmt::format("{}Gi", static_cast<long long>(std::ceil(profile ? profile->disk_gb : 40)));
    std::string storage_class =
        image.spec.storage_class.empty() ? lab.spec().kube.storage_class : image.spec.storage_class;
    const std::string& ns = image.spec.namespace_;
    const std::string& name = image.spec.name;
    json labels = {{"app.kubernetes.io/part-of", "bootstorm-lab"}};
    publisher.insert(
        Kind::persistent_volume_claims,
        {{"apiVersion", "v1"},
         {"kind", "PersistentVolumeClaim"},
         {"metadata",
          {{"name", name},
           {"namespace", ns},
           {"labels", labels},
           {"annotations",
            {{kGoldenAnnotation, ns + "/" + name}, {"pv.kubernetes.io/bind-completed", "yes"}}}}},
         {"spec",
          {{"accessModes", {"ReadWriteMany"}},
           {"resources", {{"requests", {{"storage", size}}}}},
           {"storageClassName", storage_class},
           {"volumeMode", "Block"},
           {"volumeName", "pvc-" + publisher.new_uid()}}},
         {"status",
          {{"phase", "Bound"}, {"accessModes", {"ReadWriteMany"}}, {"capacity", {{"storage", size}}}}}});
    json source = {{"pvc", {{"name", name}, {"namespace", ns}}}};
    json status = {{"source", source}};
    set_condition(status, "Ready", true, "Ready", "", ts, false, true);
    publisher.insert(Kind::data_sources,
                     {{"apiVersion", "cdi.kubevirt.io/v1beta1"},
                      {"kind", "DataSource"},
                      {"metadata", {{"name", name}, {"namespace", ns}, {"labels", labels}}},
                      {"spec", {{"source", source}}},
                      {"status", status}});
  }
}

// OpenShift's monitoring stack, as its query API is reached from outside the cluster: the thanos-querier
// Route (re-encrypt TLS, port "web") that `oc get route -n openshift-monitoring` lists.
void Seeder::monitoring_route(const std::string& monitoring_host) {
  if (!monitoring_host.empty()) {
    add_namespace(kMonitoringNamespace);
    json ingress = {{"host", monitoring_host}, {"routerName", "default"}, {"wildcardPolicy", "None"}};
    set_condition(ingress, "Admitted", true, "", "", ts, /*with_probe_time=*/false);
    publisher.insert(
        Kind::routes,
        {{"apiVersion", "route.openshift.io/v1"},
         {"kind", "Route"},
         {"metadata",
          {{"name", kThanosQuerierRoute},
           {"namespace", kMonitoringNamespace},
           {"labels", {{"app.kubernetes.io/name", "thanos-query"}}}}},
         {"spec",
          {{"host", monitoring_host},
           {"path", "/api"},
           {"to", {{"kind", "Service"}, {"name", "thanos-querier"}, {"weight", 100}}},
           {"port", {{"targetPort", "web"}}},
           {"tls", {{"termination", "reencrypt"}, {"insecureEdgeTerminationPolicy", "Redirect"}}},
           {"wildcardPolicy", "None"}}},
         {"status", {{"ingress", json::array({ingress})}}}});
  }
}

}  // namespace

void seed_objects(ObjectStore& store, model::Lab& lab, ObjectPublisher& publisher,
                  const std::string& monitoring_host) {
  Seeder seed{store, lab, publisher};
  seed.namespaces();
  seed.kubevirt_cr();
  seed.cdi_cr();
  seed.storage();
  seed.flow_control();
  seed.nodes();
  seed.golden_images();
  seed.monitoring_route(monitoring_host);
}

}  // namespace bootstorm::sim::kube

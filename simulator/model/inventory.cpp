// The inventory: datacenter, clusters, folders, pools, hosts, datastores, nodes and golden images built from
// the lab spec; VM records (create, modify, delete, look-ups) and the change feed subscribers watch.

#include <fmt/format.h>

#include "simulator/model/detail/lab_impl.hpp"
#include "simulator/model/model_bounds.hpp"

namespace bootstorm::sim::model {

std::size_t Lab::Impl::host_index(std::string_view id) const {
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    if (hosts[i].id == id) return i;
  }
  return hosts.size();
}

std::size_t Lab::Impl::datastore_index(std::string_view id) const {
  for (std::size_t i = 0; i < datastores.size(); ++i) {
    if (datastores[i].id == id) return i;
  }
  return datastores.size();
}

void Lab::Impl::build_inventory() {
  datacenter.id = "datacenter-2";
  datacenter.name = spec.datacenter.name;
  datacenter.vm_folder_id = "group-v3";
  datacenter.host_folder_id = "group-h4";
  datacenter.datastore_folder_id = "group-s5";
  datacenter.network_folder_id = "group-n6";
  folders.push_back({"group-d1", "Datacenters", "DATACENTER"});
  folders.push_back({datacenter.vm_folder_id, "vm", "VIRTUAL_MACHINE"});
  folders.push_back({datacenter.host_folder_id, "host", "HOST"});
  folders.push_back({datacenter.datastore_folder_id, "datastore", "DATASTORE"});
  folders.push_back({datacenter.network_folder_id, "network", "NETWORK"});
  int next_folder = 100;
  for (const auto& name : spec.folders) {
    folders.push_back({fmt::format("group-v{}", next_folder++), name, "VIRTUAL_MACHINE"});
  }
  int next_pool = 80;
  for (std::size_t i = 0; i < spec.clusters.size(); ++i) {
    Cluster c;
    c.id = fmt::format("domain-c{}", 8 + i);
    c.name = spec.clusters[i].name;
    c.resource_pool_id = fmt::format("resgroup-{}", next_pool++);
    resource_pools.push_back({c.resource_pool_id, "Resources", c.id});
    clusters.push_back(std::move(c));
  }
  for (const auto& name : spec.resource_pools) {
    resource_pools.push_back({fmt::format("resgroup-{}", next_pool++), name,
                              clusters.empty() ? std::string() : clusters.front().id});
  }
  for (std::size_t i = 0; i < spec.hosts.size(); ++i) {
    Host h;
    h.id = fmt::format("host-{}", 20 + i);
    h.spec = spec.hosts[i];
    for (const auto& c : clusters) {
      if (c.name == h.spec.cluster) h.cluster_id = c.id;
    }
    hosts.push_back(std::move(h));
  }
  for (std::size_t i = 0; i < spec.datastores.size(); ++i) {
    datastores.push_back({fmt::format("datastore-{}", 50 + i), spec.datastores[i], 0.0});
  }
  for (const auto& n : spec.kube.nodes) {
    Node node;
    node.spec = n;
    for (const auto& h : hosts) {
      if (h.spec.name == n.host) node.host_id = h.id;
    }
    nodes.push_back(std::move(node));
  }
  for (const auto& g : spec.golden_images) {
    GoldenImage image;
    image.spec = g;
    const std::string& ds_name = g.datastore.empty() ? spec.kube.datastore : g.datastore;
    for (const auto& d : datastores) {
      if (d.spec.name == ds_name) image.datastore_id = d.id;
    }
    golden_images.push_back(std::move(image));
  }
  capacity.assign(hosts.size() * 3 + datastores.size() * 2, 0.0);
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    capacity[cpu_res(i)] = hosts[i].spec.cores * hosts[i].spec.core_speed;
    capacity[link_res(i)] = hosts[i].spec.link_mbps;
    capacity[bus_res(i)] = hosts[i].spec.bus_mbps;
  }
  for (std::size_t i = 0; i < datastores.size(); ++i) {
    capacity[ds_bw_res(i)] = datastores[i].spec.mbps;
    capacity[ds_iops_res(i)] = datastores[i].spec.iops;
  }
  for (const auto& g : spec.golden_vms) {
    const GuestProfile* profile = find_profile(g.profile);
    Vm vm;
    vm.name = g.name;
    vm.created_by_front = "lab";
    vm.golden = true;
    vm.tools_installed = g.tools;
    vm.profile = g.profile;
    vm.guest_os = profile->guest_os;
    vm.cpu_count = profile->cpu_count;
    vm.memory_mb = profile->memory_mb;
    for (const auto& h : hosts) {
      if (h.spec.name == g.host) vm.host_id = h.id, vm.cluster_id = h.cluster_id;
    }
    for (const auto& d : datastores) {
      if (d.spec.name == g.datastore) vm.datastore_id = d.id;
    }
    vm.folder_id = datacenter.vm_folder_id;
    for (const auto& f : folders) {
      if (!g.folder.empty() && f.name == g.folder && f.type == "VIRTUAL_MACHINE") vm.folder_id = f.id;
    }
    vm.resource_pool_id = default_pool_for(vm.host_id);
    insert_vm(std::move(vm));
  }
}

const GuestProfile* Lab::Impl::find_profile(std::string_view name) const {
  for (const auto& p : spec.profiles) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

std::string Lab::Impl::default_pool_for(const std::string& host_id) const {
  const std::size_t h = host_index(host_id);
  if (h < hosts.size() && !hosts[h].cluster_id.empty()) {
    for (const auto& c : clusters) {
      if (c.id == hosts[h].cluster_id) return c.resource_pool_id;
    }
  }
  return resource_pools.empty() ? std::string() : resource_pools.front().id;
}

Vm& Lab::Impl::insert_vm(Vm vm) {
  const std::uint64_t number = next_vm++;
  vm.id = fmt::format("vm-{}", number);
  vm.created_at = now_;
  vm.resource_version = ++resource_version;
  vm_by_name[name_key(vm.namespace_, vm.name)] = number;
  Vm& stored = vms.emplace(number, std::move(vm)).first->second;
  notify(VmEvent::Type::added, stored, std::nullopt);
  return stored;
}

Vm* Lab::Impl::vm_ptr(std::string_view id) {
  const auto n = vm_number(id);
  if (!n) return nullptr;
  auto it = vms.find(*n);
  return it == vms.end() ? nullptr : &it->second;
}

void Lab::Impl::notify(VmEvent::Type type, const Vm& vm, std::optional<Milestone> milestone) {
  if (subscribers.empty()) return;
  // Copy: a subscriber may unsubscribe (or subscribe) from inside its callback.
  std::vector<std::function<void(const VmEvent&)>> targets;
  targets.reserve(subscribers.size());
  for (const auto& [id, fn] : subscribers) targets.push_back(fn);
  const VmEvent event{type, vm, milestone};
  for (const auto& fn : targets) fn(event);
}

void Lab::Impl::changed(Vm& vm, std::optional<Milestone> milestone) {
  vm.resource_version = ++resource_version;
  notify(VmEvent::Type::modified, vm, milestone);
}

std::string Lab::Impl::least_loaded_host(const std::string& cluster_id) const {
  const Host* best = nullptr;
  for (const auto& h : hosts) {
    if (h.spec.inventory != "vcenter") continue;
    if (!cluster_id.empty() && h.cluster_id != cluster_id) continue;
    if (!best || h.running_vms < best->running_vms) best = &h;
  }
  return best ? best->id : std::string();
}

// The node with the most free memory (power-ons in flight hold theirs), then the fewest running VMs: a burst
// of unpinned starts spreads over the nodes instead of all choosing the one that was emptiest before it.
const Node* Lab::Impl::least_loaded_node() const {
  const Node* best = nullptr;
  double best_free = 0;
  for (const auto& n : nodes) {
    const std::size_t h = host_index(n.host_id);
    const double free = h < hosts.size() ? hosts[h].spec.memory_gb * 1024 - hosts[h].memory_used_mb : 0;
    if (!best || free > best_free || (free == best_free && n.running_vms < best->running_vms)) {
      best = &n;
      best_free = free;
    }
  }
  return best;
}

const Datacenter& Lab::datacenter() const {
  return impl_->datacenter;
}
const std::vector<Cluster>& Lab::clusters() const {
  return impl_->clusters;
}
const std::vector<Folder>& Lab::folders() const {
  return impl_->folders;
}
const std::vector<ResourcePool>& Lab::resource_pools() const {
  return impl_->resource_pools;
}
const std::vector<Host>& Lab::hosts() const {
  return impl_->hosts;
}
const std::vector<Datastore>& Lab::datastores() const {
  return impl_->datastores;
}
const std::vector<Node>& Lab::nodes() const {
  return impl_->nodes;
}
const std::vector<GoldenImage>& Lab::golden_images() const {
  return impl_->golden_images;
}
const GuestProfile* Lab::find_profile(std::string_view name) const {
  return impl_->find_profile(name);
}

const Host* Lab::find_host(std::string_view id_or_name) const {
  for (const auto& h : impl_->hosts) {
    if (h.id == id_or_name || h.spec.name == id_or_name) return &h;
  }
  return nullptr;
}
const Datastore* Lab::find_datastore(std::string_view id_or_name) const {
  for (const auto& d : impl_->datastores) {
    if (d.id == id_or_name || d.spec.name == id_or_name) return &d;
  }
  return nullptr;
}
const Cluster* Lab::find_cluster(std::string_view id_or_name) const {
  for (const auto& c : impl_->clusters) {
    if (c.id == id_or_name || c.name == id_or_name) return &c;
  }
  return nullptr;
}
const Folder* Lab::find_folder(std::string_view id_or_name) const {
  for (const auto& f : impl_->folders) {
    if (f.id == id_or_name || f.name == id_or_name) return &f;
  }
  return nullptr;
}
const ResourcePool* Lab::find_resource_pool(std::string_view id_or_name) const {
  for (const auto& r : impl_->resource_pools) {
    if (r.id == id_or_name || r.name == id_or_name) return &r;
  }
  return nullptr;
}
const Node* Lab::find_node(std::string_view name) const {
  for (const auto& n : impl_->nodes) {
    if (n.spec.name == name) return &n;
  }
  return nullptr;
}
const GoldenImage* Lab::find_golden_image(std::string_view namespace_, std::string_view name) const {
  for (const auto& g : impl_->golden_images) {
    if (g.spec.namespace_ == namespace_ && g.spec.name == name) return &g;
  }
  return nullptr;
}

std::size_t Lab::vm_count() const {
  return impl_->vms.size();
}

void Lab::for_each_vm(const std::function<bool(const Vm&)>& fn) const {
  for (const auto& [number, vm] : impl_->vms) {
    if (!fn(vm)) return;
  }
}

const Vm* Lab::find_vm(std::string_view id) const {
  return impl_->vm_ptr(id);
}

const Vm* Lab::find_vm_by_name(std::string_view name, std::string_view namespace_) const {
  auto it = impl_->vm_by_name.find(name_key(namespace_, name));
  if (it == impl_->vm_by_name.end()) return nullptr;
  return &impl_->vms.at(it->second);
}

Expected<std::string> Lab::create_vm(CreateVmSpec spec) {
  Impl& m = *impl_;
  m.catch_up();
  const std::string key = name_key(spec.namespace_, spec.name);
  if (spec.name.empty()) return make_error(ErrorKind::invalid_input, "A VM needs a name.");
  if (m.vms.size() >= kMaxLabVms) {
    return make_error(
        ErrorKind::invalid_input,
        fmt::format("The lab already holds {} VMs, as many as the lab model represents.", m.vms.size()),
        "Delete VMs first, or run a smaller storm.");
  }
  if (m.vm_by_name.count(key) || m.reserved_names.count(key)) {
    return make_error(ErrorKind::conflict, fmt::format("A VM named '{}' already exists.", spec.name));
  }
  const GuestProfile* profile = m.find_profile(spec.profile);
  if (!profile) {
    return make_error(ErrorKind::not_found, fmt::format("Unknown guest profile '{}'.", spec.profile));
  }
  Vm vm;
  vm.name = spec.name;
  vm.namespace_ = spec.namespace_;
  vm.created_by_front = spec.created_by_front;
  vm.profile = spec.profile;
  vm.guest_os = profile->guest_os;
  vm.cpu_count = spec.cpu_count.value_or(profile->cpu_count);
  vm.memory_mb = spec.memory_mb.value_or(profile->memory_mb);
  if (!spec.host_id.empty()) {
    const Host* host = find_host(spec.host_id);
    if (!host) return make_error(ErrorKind::not_found, fmt::format("Unknown host '{}'.", spec.host_id));
    vm.host_id = host->id;
    vm.cluster_id = host->cluster_id;
  } else if (!m.is_kube_vm(vm)) {
    vm.host_id = m.least_loaded_host("");
  }
  std::string ds = spec.datastore_id;
  if (ds.empty()) ds = m.is_kube_vm(vm) ? m.spec.kube.datastore : m.datastores.front().id;
  const Datastore* datastore = find_datastore(ds);
  if (!datastore) return make_error(ErrorKind::not_found, fmt::format("Unknown datastore '{}'.", ds));
  vm.datastore_id = datastore->id;
  if (!spec.base_datastore_id.empty()) {
    const Datastore* base = find_datastore(spec.base_datastore_id);
    if (!base) {
      return make_error(ErrorKind::not_found, fmt::format("Unknown datastore '{}'.", spec.base_datastore_id));
    }
    vm.base_datastore_id = base->id;
  }
  vm.folder_id = spec.folder_id.empty() ? m.datacenter.vm_folder_id : spec.folder_id;
  vm.resource_pool_id =
      spec.resource_pool_id.empty() ? m.default_pool_for(vm.host_id) : spec.resource_pool_id;
  vm.labels = std::move(spec.labels);
  vm.annotations = std::move(spec.annotations);
  vm.guestinfo = std::move(spec.guestinfo);
  vm.tools_installed = spec.tools_installed;
  std::string id = m.insert_vm(std::move(vm)).id;
  m.after_mutation();
  return id;
}

bool Lab::modify_vm(std::string_view id, const std::function<void(Vm&)>& edit) {
  Impl& m = *impl_;
  m.catch_up();
  Vm* vm = m.vm_ptr(id);
  if (!vm) return false;
  const std::string old_key = name_key(vm->namespace_, vm->name);
  edit(*vm);
  const std::string new_key = name_key(vm->namespace_, vm->name);
  if (new_key != old_key) {
    const auto number = m.vm_by_name.at(old_key);
    m.vm_by_name.erase(old_key);
    m.vm_by_name[new_key] = number;
  }
  m.changed(*vm);
  m.after_mutation();
  return true;
}

Expected<void> Lab::delete_vm(std::string_view id) {
  Impl& m = *impl_;
  m.catch_up();
  const auto number = vm_number(id);
  if (!number || !m.vms.count(*number)) {
    return make_error(ErrorKind::not_found, fmt::format("VM '{}' not found.", id));
  }
  m.cancel_boot(*number, "the VM was deleted");
  auto it = m.vms.find(*number);
  if (it == m.vms.end()) return {};  // a cancellation callback deleted it already
  m.meter_vm_stopped(*number, /*deleted=*/true);
  Vm vm = std::move(it->second);
  m.vms.erase(it);
  m.vm_by_name.erase(name_key(vm.namespace_, vm.name));
  m.release_host(vm);
  vm.resource_version = ++m.resource_version;
  m.notify(VmEvent::Type::deleted, vm, std::nullopt);
  m.after_mutation();
  return {};
}

SubscriptionId Lab::subscribe(std::function<void(const VmEvent&)> fn) {
  const SubscriptionId id = impl_->next_subscription++;
  impl_->subscribers.emplace(id, std::move(fn));
  return id;
}

void Lab::unsubscribe(SubscriptionId id) {
  impl_->subscribers.erase(id);
}

void Lab::set_beacon_hook(std::function<void(const Vm&)> hook) {
  impl_->beacon_hook = std::move(hook);
}

std::uint64_t Lab::next_resource_version() {
  return ++impl_->resource_version;
}
std::uint64_t Lab::current_resource_version() const {
  return impl_->resource_version;
}

}  // namespace bootstorm::sim::model

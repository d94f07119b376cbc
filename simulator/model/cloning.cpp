// Clones: vSphere full/linked/instant clones and CDI clones from golden images, as a task overhead then a
// data flow over the datastore (and the host's link when a host copies), with injected clone failures.

#include <fmt/format.h>

#include <memory>

#include "simulator/model/detail/keyed_random.hpp"
#include "simulator/model/detail/lab_impl.hpp"

namespace bootstorm::sim::model {

namespace {

// A clone's data as storage I/O (1 MB I/Os): twice through the datastore is a copy (read, then write), once
// is a delta written; the host's link carries as many directions as it was charged for.
std::vector<IoPath> clone_paths(double ds_coef, double link_coef, std::size_t host, std::size_t datastore) {
  std::vector<IoPath> paths;
  if (ds_coef >= 2) {
    paths.push_back(IoPath{host, datastore, /*write=*/false});
    paths.push_back(IoPath{link_coef >= 2 ? host : kNoIndex, datastore, /*write=*/true});
  } else {
    paths.push_back(IoPath{host, datastore, /*write=*/true});
  }
  return paths;
}

// What a clone of `kind` moves: MB, how many times through the datastore (2: read and write) and over the
// host's link, and whether a host copies it at all (a CSI clone or snapshot stays in the array).
struct CloneTraffic {
  double mb = 0;
  double ds_coef = 1, link_coef = 1;
  bool uses_link = true;
};

CloneTraffic clone_traffic(CloneKind kind, const GuestProfile& profile) {
  CloneTraffic t;
  switch (kind) {
    case CloneKind::full:
      t.mb = profile.disk_used_gb * 1000;
      t.ds_coef = 2;
      break;  // read + write
    case CloneKind::linked:
      t.mb = profile.linked_delta_mb;
      break;
    case CloneKind::instant:
      t.mb = profile.instant_clone_mb;
      break;
    case CloneKind::cdi_copy:
      t.mb = profile.disk_used_gb * 1000;
      t.ds_coef = 2;
      t.link_coef = 2;
      break;
    case CloneKind::cdi_snapshot:
      t.mb = profile.linked_delta_mb;
      t.uses_link = false;
      break;
    case CloneKind::cdi_csi_clone:
      t.mb = profile.disk_used_gb * 1000;
      t.ds_coef = 2;
      t.uses_link = false;
      break;
  }
  return t;
}

// The clone's source, a golden image (CDI) or a VM: what the clone inherits from it into `target`, its guest
// profile, and the host the source runs on ("" for an image).
Expected<std::string> clone_source(Lab& lab, Lab::Impl& m, const CloneRequest& request, bool cdi,
                                   Lab::CreateVmSpec& target, const GuestProfile*& profile) {
  std::string source_host;
  if (cdi) {
    const GoldenImage* image = lab.find_golden_image(request.source_image_namespace, request.source_image);
    if (!image) {
      return make_error(ErrorKind::not_found,
                        fmt::format("No golden image {}/{} in this lab.", request.source_image_namespace,
                                    request.source_image));
    }
    profile = m.find_profile(image->spec.profile);
    target.profile = image->spec.profile;
    target.datastore_id = request.datastore_id.empty() ? image->datastore_id : request.datastore_id;
  } else {
    const Vm* source = lab.find_vm(request.source_vm_id);
    if (!source) {
      return make_error(ErrorKind::not_found, fmt::format("Source VM '{}' not found.", request.source_vm_id));
    }
    if (request.kind == CloneKind::instant && source->power != PowerState::powered_on) {
      return make_error(ErrorKind::conflict,
                        fmt::format("Instant clone needs a powered-on source; '{}' is {}.", source->name,
                                    to_string(source->power)));
    }
    profile = m.find_profile(source->profile);
    target.profile = source->profile;
    target.cpu_count = source->cpu_count;
    target.memory_mb = source->memory_mb;
    target.guestinfo = source->guestinfo;
    target.tools_installed = source->tools_installed;
    target.datastore_id = request.datastore_id.empty() ? source->datastore_id : request.datastore_id;
    if (request.kind == CloneKind::linked || request.kind == CloneKind::instant) {
      // The clone's disk is a child of the source's: its boot reads hit the shared base.
      target.base_datastore_id =
          source->base_datastore_id.empty() ? source->datastore_id : source->base_datastore_id;
    }
    source_host = source->host_id;
  }
  return source_host;
}

// Placement: explicit host, else the least loaded host of the cluster, else the source's host; the folder
// and resource pool. Returns the host ("" for a CDI clone that names none).
Expected<std::string> place_clone(Lab& lab, Lab::Impl& m, const CloneRequest& request, bool cdi,
                                  const std::string& source_host, Lab::CreateVmSpec& target) {
  std::string host_id;
  if (!request.host_id.empty()) {
    const Host* host = lab.find_host(request.host_id);
    if (!host) return make_error(ErrorKind::not_found, fmt::format("Host '{}' not found.", request.host_id));
    host_id = host->id;
  } else if (!request.cluster_id.empty()) {
    const Cluster* cluster = lab.find_cluster(request.cluster_id);
    if (!cluster) {
      return make_error(ErrorKind::not_found, fmt::format("Cluster '{}' not found.", request.cluster_id));
    }
    host_id = m.least_loaded_host(cluster->id);
  } else if (!cdi) {
    host_id = source_host;
  }
  if (!cdi) target.host_id = host_id;
  if (!request.folder_id.empty()) {
    const Folder* folder = lab.find_folder(request.folder_id);
    if (!folder)
      return make_error(ErrorKind::not_found, fmt::format("Folder '{}' not found.", request.folder_id));
    target.folder_id = folder->id;
  }
  if (!request.resource_pool_id.empty()) {
    const ResourcePool* pool = lab.find_resource_pool(request.resource_pool_id);
    if (!pool) {
      return make_error(ErrorKind::not_found,
                        fmt::format("Resource pool '{}' not found.", request.resource_pool_id));
    }
    target.resource_pool_id = pool->id;
  }
  return host_id;
}

}  // namespace

bool Lab::Impl::clone_fault(const std::string& host_id, std::string_view name) {
  const std::size_t h = host_index(host_id);
  if (h < hosts.size() && listed(faults.clone_failure_hosts, hosts[h].spec.name)) return true;
  return faults.clone_failure_rate > 0 &&
         keyed_uniform(seed, name, next_operation, 0xC10E) < faults.clone_failure_rate;
}

Expected<OperationId> Lab::clone_vm(const CloneRequest& request, VmCallback done) {
  Impl& m = *impl_;
  m.catch_up();
  const bool cdi = request.kind == CloneKind::cdi_copy || request.kind == CloneKind::cdi_snapshot ||
                   request.kind == CloneKind::cdi_csi_clone;
  if (request.name.empty()) return make_error(ErrorKind::invalid_input, "The clone needs a name.");
  const std::string key = name_key(request.namespace_, request.name);
  if (m.vm_by_name.count(key) || m.reserved_names.count(key)) {
    return make_error(ErrorKind::conflict, fmt::format("A VM named '{}' already exists.", request.name));
  }
  CreateVmSpec target;
  target.name = request.name;
  target.namespace_ = request.namespace_;
  target.created_by_front = request.created_by_front;
  target.labels = request.labels;
  target.annotations = request.annotations;
  const GuestProfile* profile = nullptr;
  auto source_host = clone_source(*this, m, request, cdi, target, profile);
  if (!source_host) return source_host.error();
  for (const auto& [k, v] : request.guestinfo) target.guestinfo[k] = v;
  if (!find_datastore(target.datastore_id)) {
    return make_error(ErrorKind::not_found, fmt::format("Datastore '{}' not found.", target.datastore_id));
  }
  target.datastore_id = find_datastore(target.datastore_id)->id;
  auto placed = place_clone(*this, m, request, cdi, *source_host, target);
  if (!placed) return placed.error();
  const std::string host_id = *placed;
  // The host whose HBA carries a host-side copy: the destination host, or for CDI the node of the importer.
  std::string transfer_host = host_id;
  if (cdi && transfer_host.empty()) {
    if (const Node* node = m.least_loaded_node()) transfer_host = node->host_id;
  }
  const OperationId op = m.next_operation++;
  const bool fails = m.clone_fault(transfer_host, request.name);
  m.reserved_names.insert(key);

  const CloneTraffic traffic = clone_traffic(request.kind, *profile);
  const double mb = traffic.mb, ds_coef = traffic.ds_coef, link_coef = traffic.link_coef;
  const bool uses_link = traffic.uses_link;
  const std::size_t d = m.datastore_index(target.datastore_id);
  const std::size_t h = m.host_index(transfer_host);
  // Copies move large sequential chunks (1 MB), so IOPS cost one per MB per direction.
  std::vector<std::pair<int, double>> uses{{m.ds_bw_res(d), ds_coef}, {m.ds_iops_res(d), ds_coef}};
  if (uses_link && h < m.hosts.size()) {
    uses.push_back({m.link_res(h), link_coef});
    uses.push_back({m.bus_res(h), link_coef});
  }
  const std::size_t record = m.clone_records.size();
  m.clone_records.push_back({request.name,
                             request.kind,
                             mb * ds_coef,
                             uses_link && h < m.hosts.size() ? mb * link_coef : 0.0,
                             m.now_,
                             {},
                             false});
  auto callback = std::make_shared<VmCallback>(std::move(done));
  auto finish = [this, key, target, kind = request.kind, power_on = request.power_on, used_gb = mb / 1000, d,
                 callback, record] {
    Impl& im = *impl_;
    im.reserved_names.erase(key);
    im.clone_records[record].completed = im.now_;
    if (d < im.datastores.size()) im.datastores[d].used_gb += used_gb;
    auto id = create_vm(target);
    if (!id) {
      (*callback)(id.error());
      return;
    }
    const std::uint64_t number = *vm_number(*id);
    if (kind == CloneKind::instant) {
      // An instant clone runs from the moment it exists: without the memory for it, it fails.
      if (!admit_memory(*id)) {
        const std::string host = im.vms.at(number).host_id;
        (void)delete_vm(*id);
        (*callback)(
            make_error(ErrorKind::conflict,
                       fmt::format("Host '{}' has not enough free memory to run the instant clone '{}'.",
                                   find_host(host) ? find_host(host)->spec.name : host, target.name)));
        return;
      }
      im.resume_instant_clone(number);
    } else if (power_on) {
      (void)im.power_on(number, nullptr, PowerOnOptions{});
    }
    (*callback)(*id);
  };
  auto paths = clone_paths(ds_coef, link_coef, uses_link && h < m.hosts.size() ? h : kNoIndex, d);
  m.schedule_at(m.now_ + profile->clone_overhead_s, [this, fails, key, name = request.name,
                                                     uses = std::move(uses), mb, paths = std::move(paths),
                                                     callback, record, finish = std::move(finish)]() mutable {
    Impl& im = *impl_;
    if (fails) {
      // Surfaces after the task overhead, like a vCenter task that errors out.
      im.reserved_names.erase(key);
      im.clone_records[record].failed = true;
      (*callback)(make_error(ErrorKind::api, fmt::format("Clone of '{}' failed (injected fault).", name),
                             "Clear the lab's clone_failure faults or retry."));
      return;
    }
    im.add_flow(im.class_for(uses, kInf, std::move(paths)), mb, std::move(finish));
  });
  m.after_mutation();
  return op;
}

Expected<OperationId> Lab::clone_volume(const VolumeCloneRequest& request, DoneCallback done) {
  Impl& m = *impl_;
  m.catch_up();
  const GoldenImage* image = find_golden_image(request.source_image_namespace, request.source_image);
  if (!image) {
    return make_error(ErrorKind::not_found,
                      fmt::format("No golden image {}/{} in this lab.", request.source_image_namespace,
                                  request.source_image));
  }
  const GuestProfile* profile = m.find_profile(image->spec.profile);
  std::string host_id;
  if (!request.node.empty()) {
    const Node* node = find_node(request.node);
    if (!node) return make_error(ErrorKind::not_found, fmt::format("Node '{}' not found.", request.node));
    host_id = node->host_id;
  } else if (const Node* node = m.least_loaded_node()) {
    host_id = node->host_id;
  }
  if (request.kind != CloneKind::cdi_copy && request.kind != CloneKind::cdi_snapshot &&
      request.kind != CloneKind::cdi_csi_clone)
    return make_error(ErrorKind::invalid_input, "A volume clone must use a CDI strategy.");
  const CloneTraffic traffic = clone_traffic(request.kind, *profile);
  // A copy or CSI clone moves the volume's size when it is given; a snapshot writes the delta.
  const double mb =
      request.kind == CloneKind::cdi_snapshot || request.size_gb <= 0 ? traffic.mb : request.size_gb * 1000;
  const double ds_coef = traffic.ds_coef, link_coef = traffic.link_coef;
  const bool uses_link = traffic.uses_link;
  const std::size_t d = m.datastore_index(image->datastore_id);
  const std::size_t h = m.host_index(host_id);
  std::vector<std::pair<int, double>> uses{{m.ds_bw_res(d), ds_coef}, {m.ds_iops_res(d), ds_coef}};
  if (uses_link && h < m.hosts.size()) {
    uses.push_back({m.link_res(h), link_coef});
    uses.push_back({m.bus_res(h), link_coef});
  }
  const OperationId op = m.next_operation++;
  const bool fails = m.clone_fault(host_id, image->spec.name);
  auto callback = std::make_shared<DoneCallback>(std::move(done));
  auto paths = clone_paths(ds_coef, link_coef, uses_link && h < m.hosts.size() ? h : kNoIndex, d);
  m.schedule_at(m.now_ + profile->clone_overhead_s,
                [this, fails, uses = std::move(uses), mb, d, callback, paths = std::move(paths)]() mutable {
                  Impl& im = *impl_;
                  if (fails) {
                    (*callback)(make_error(ErrorKind::api, "Volume clone failed (injected fault).",
                                           "Clear the lab's clone_failure faults or retry."));
                    return;
                  }
                  im.add_flow(im.class_for(uses, kInf, std::move(paths)), mb, [&im, d, mb, callback] {
                    if (d < im.datastores.size()) im.datastores[d].used_gb += mb / 1000;
                    (*callback)(Expected<void>{});
                  });
                });
  m.after_mutation();
  return op;
}

}  // namespace bootstorm::sim::model

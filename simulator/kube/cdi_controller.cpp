// CDI's DataVolume controller: the PVC, the clone source's resolution, the phases and conditions CDI writes
// (CloneScheduled, the strategy's in-progress phase, Succeeded or Failed) and the progress percentage.
#include "simulator/kube/detail/cdi_controller.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "simulator/kube/api_objects.hpp"
#include "simulator/kube/detail/api_conventions.hpp"

namespace bootstorm::sim::kube {
namespace {

using json = nlohmann::json;

std::string format_progress(double percent) {
  return fmt::format("{:.2f}%", percent);
}

}  // namespace

CdiController::CdiController(ObjectStore& store, model::Lab& lab, ObjectPublisher& publisher,
                             EventRecorder& events, const Lifetime& lifetime, const KubeFrontOptions& options,
                             ReconcileOwner reconcile_owner)
    : store_(store),
      lab_(lab),
      publisher_(publisher),
      events_(events),
      lifetime_(lifetime),
      options_(options),
      reconcile_owner_(std::move(reconcile_owner)) {}

std::string CdiController::clone_type_for(const std::string& target_class,
                                          const std::string& source_class) const {
  // The target class's StorageProfile: spec.cloneStrategy overrides what CDI found (status).
  auto profile = store_.get(Kind::storage_profiles, "", target_class);
  std::string strategy = profile ? string_field(profile->object, {"spec", "cloneStrategy"}) : "";
  if (strategy.empty() && profile) strategy = string_field(profile->object, {"status", "cloneStrategy"});
  if (strategy.empty()) strategy = "copy";  // CDI knows nothing better of an unknown class
  auto driver_of = [&](const std::string& sc) {
    auto object = store_.get(Kind::storage_classes, "", sc);
    return object ? string_field(object->object, {"provisioner"}) : std::string();
  };
  const std::string driver = driver_of(target_class);
  // Smart clones stay on the array: the source must be on the same driver.
  if (strategy != "copy" && (driver.empty() || (!source_class.empty() && driver_of(source_class) != driver)))
    return "copy";
  if (strategy == "snapshot") {
    bool snapshot_class = false;
    for (const auto& vsc : store_.list(Kind::volume_snapshot_classes, "").items)
      if (string_field(vsc->object, {"driver"}) == driver) snapshot_class = true;
    if (!snapshot_class) return "copy";
  }
  return strategy;
}

void CdiController::forget(const std::string& ns, const std::string& name) {
  clones_.erase(ObjectStore::key(ns, name));
}

namespace {

// Where a DataVolume clones from: sourceRef's DataSource -> its PVC, or source.pvc; the PVC leads to a golden
// image (by name, or by the annotation of a PVC that was itself cloned from one). `missing` says what was not
// found.
struct CloneSource {
  bool clone = false;  // a clone (else blank or an import)
  std::string ns, name, missing;
  const model::GoldenImage* golden = nullptr;
};

CloneSource clone_source(const json& spec, const std::string& ns, ObjectStore& store, model::Lab& lab) {
  CloneSource source;
  if (spec.contains("sourceRef")) {
    std::string ds_ns = string_field(spec, {"sourceRef", "namespace"});
    if (ds_ns.empty()) ds_ns = ns;
    std::string ds_name = string_field(spec, {"sourceRef", "name"});
    auto ds = store.get(Kind::data_sources, ds_ns, ds_name);
    source.clone = true;
    if (!ds) {
      source.missing = "DataSource " + ds_ns + "/" + ds_name + " not found";
    } else {
      source.ns = string_field(ds->object, {"spec", "source", "pvc", "namespace"});
      source.name = string_field(ds->object, {"spec", "source", "pvc", "name"});
    }
  } else if (field(spec, {"source", "pvc"}).is_object()) {
    source.clone = true;
    source.ns = string_field(spec, {"source", "pvc", "namespace"});
    source.name = string_field(spec, {"source", "pvc", "name"});
  }
  if (source.clone && source.missing.empty()) {
    source.golden = lab.find_golden_image(source.ns, source.name);
    if (!source.golden) {
      auto pvc = store.get(Kind::persistent_volume_claims, source.ns, source.name);
      std::string origin =
          pvc ? string_field(pvc->object, {"metadata", "annotations", kGoldenAnnotation}) : "";
      if (!origin.empty()) {
        auto [g_ns, g_name] = split_key(origin);
        source.golden = lab.find_golden_image(g_ns, g_name);
      }
      if (!source.golden) source.missing = "source PVC " + source.ns + "/" + source.name + " not found";
    }
  }
  return source;
}

}  // namespace

void CdiController::start(const std::string& ns, const std::string& name) {
  auto dv = store_.get(Kind::data_volumes, ns, name);
  if (!dv) return;
  const json& spec = field(dv->object, {"spec"});
  std::string ts = format_time(publisher_.now());
  auto set_dv = [&](const std::string& phase, const std::string& progress,
                    const std::function<void(json&)>& more) {
    return publisher_.modify(Kind::data_volumes, ns, name, [&](json& object) {
      json& status = object["status"];
      if (!status.is_object()) status = json::object();
      status["phase"] = phase;
      status["progress"] = progress;
      status["claimName"] = name;
      if (!status.contains("restartCount")) status["restartCount"] = 0;
      if (more) more(status);
    });
  };
  auto owner_vm = [&]() -> std::string {
    const json& refs = field(dv->object, {"metadata", "ownerReferences"});
    if (refs.is_array()) {
      for (const auto& ref : refs) {
        if (ref.value("kind", "") == "VirtualMachine") return ref.value("name", "");
      }
    }
    return {};
  };

  // The PVC the DataVolume populates.
  json pvc_spec = field(spec, {"pvc"});
  if (!pvc_spec.is_object()) pvc_spec = field(spec, {"storage"});
  if (!pvc_spec.is_object()) pvc_spec = json::object();
  if (!pvc_spec.contains("storageClassName")) pvc_spec["storageClassName"] = lab_.spec().kube.storage_class;
  if (!pvc_spec.contains("accessModes")) pvc_spec["accessModes"] = {"ReadWriteMany"};
  if (!pvc_spec.contains("volumeMode")) pvc_spec["volumeMode"] = "Block";

  const CloneSource source = clone_source(spec, ns, store_, lab_);
  const bool clone = source.clone;
  const std::string& src_ns = source.ns;
  const std::string& src_name = source.name;
  const std::string& missing = source.missing;
  const model::GoldenImage* golden = source.golden;
  // A clone without a size takes the source's, as CDI sizes it (a claim must request one).
  if (string_field(pvc_spec, {"resources", "requests", "storage"}).empty() && clone && missing.empty()) {
    if (auto source_pvc = store_.get(Kind::persistent_volume_claims, src_ns, src_name)) {
      std::string size = string_field(source_pvc->object, {"spec", "resources", "requests", "storage"});
      if (size.empty()) size = string_field(source_pvc->object, {"status", "capacity", "storage"});
      if (!size.empty()) pvc_spec["resources"]["requests"]["storage"] = size;
    }
  }
  json pvc_annotations = json::object();
  if (golden) pvc_annotations[kGoldenAnnotation] = golden->spec.namespace_ + "/" + golden->spec.name;
  json pvc = {
      {"apiVersion", "v1"},
      {"kind", "PersistentVolumeClaim"},
      {"metadata",
       {{"name", name},
        {"namespace", ns},
        {"annotations", pvc_annotations},
        {"labels", {{"app", "containerized-data-importer"}, {"app.kubernetes.io/component", "storage"}}},
        {"ownerReferences", json::array({owner_reference(dv->object)})}}},
      {"spec", pvc_spec},
      {"status", {{"phase", "Pending"}}}};
  if (!store_.get(Kind::persistent_volume_claims, ns, name))
    publisher_.insert(Kind::persistent_volume_claims, std::move(pvc));

  if (clone && !missing.empty()) {
    set_dv("Pending", "N/A", [&](json& status) {
      set_condition(status, "Bound", false, "Pending", "PVC " + name + " Pending", ts, false, true);
      set_condition(status, "Ready", false, "CloneWithoutSource", missing, ts, false, true);
      set_condition(status, "Running", false, "CloneWithoutSource", missing, ts, false, true);
    });
    events_.record(dv->object, "Warning", "CloneWithoutSource", missing, "datavolume-controller");
    return;
  }
  auto bind_pvc = [&] {
    publisher_.modify(Kind::persistent_volume_claims, ns, name, [&](json& object) {
      object["status"]["phase"] = "Bound";
      object["status"]["accessModes"] = object["spec"].value("accessModes", json::array({"ReadWriteMany"}));
      std::string size = string_field(object, {"spec", "resources", "requests", "storage"});
      if (!size.empty()) object["status"]["capacity"] = {{"storage", size}};
      object["metadata"]["annotations"]["pv.kubernetes.io/bind-completed"] = "yes";
    });
  };
  auto succeed = [&](const std::string& reason) {
    bind_pvc();
    set_dv("Succeeded", "100.0%", [&](json& status) {
      set_condition(status, "Bound", true, "Bound", "PVC " + name + " Bound", ts, false, true);
      set_condition(status, "Ready", true, "", "", ts, false, true);
      set_condition(status, "Running", false, reason, "", ts, false, true);
    });
  };
  if (!clone) {
    // blank, or an import (http, registry, s3, ...): the lab has no import network, so the volume is
    // populated at once; DataVolume-based imports are not what a boot storm measures.
    succeed("Completed");
    std::string owner = owner_vm();
    if (!owner.empty()) reconcile_owner_(ns, owner);
    return;
  }

  model::VolumeCloneRequest request;
  std::string in_progress = "CloneInProgress";
  std::string source_class;
  if (auto source_pvc = store_.get(Kind::persistent_volume_claims, src_ns, src_name))
    source_class = string_field(source_pvc->object, {"spec", "storageClassName"});
  const std::string clone_type = clone_type_for(pvc_spec.value("storageClassName", ""), source_class);
  publisher_.modify(Kind::data_volumes, ns, name, [&](json& object) {
    object["metadata"]["annotations"][kCloneTypeAnnotation] = clone_type;
  });
  if (clone_type == "copy") {
    request.kind = model::CloneKind::cdi_copy;
  } else if (clone_type == "snapshot") {
    request.kind = model::CloneKind::cdi_snapshot;
    in_progress = "SnapshotForSmartCloneInProgress";
  } else {
    request.kind = model::CloneKind::cdi_csi_clone;
    in_progress = "CSICloneInProgress";
  }
  request.source_image = golden->spec.name;
  request.source_image_namespace = golden->spec.namespace_;
  set_dv("CloneScheduled", "N/A", [&](json& status) {
    set_condition(status, "Bound", false, "Pending", "PVC " + name + " Pending", ts, false, true);
    set_condition(status, "Ready", false, "CloneScheduled", "", ts, false, true);
    set_condition(status, "Running", false, "CloneScheduled", "", ts, false, true);
  });
  events_.record(dv->object, "Normal", "CloneScheduled",
                 "Cloning from " + src_ns + "/" + src_name + " into " + ns + "/" + name + " scheduled",
                 "datavolume-controller");
  auto op = lab_.clone_volume(
      request, lifetime_.guard([this, ns, name](Expected<void> result) { finish_clone(ns, name, result); }));
  if (!op) {
    finish_clone(ns, name, op.error());
    return;
  }
  bind_pvc();
  set_dv(in_progress, format_progress(0), [&](json& status) {
    set_condition(status, "Bound", true, "Bound", "PVC " + name + " Bound", ts, false, true);
    set_condition(status, "Running", true, "Pod is running", "", ts, false, true);
  });
  events_.record(dv->object, "Normal", in_progress,
                 "Cloning from " + src_ns + "/" + src_name + " into " + ns + "/" + name + " in progress",
                 "datavolume-controller");
  const model::GuestProfile* profile = lab_.find_profile(golden->spec.profile);
  Clone runtime;
  runtime.datastore_id = golden->datastore_id;
  runtime.size_mb = (profile ? profile->disk_used_gb : 20) * 1024;
  runtime.in_progress_phase = in_progress;
  // A clone whose flow already finished (zero-size) must not get a progress entry.
  if (auto current = store_.get(Kind::data_volumes, ns, name);
      current && string_field(current->object, {"status", "phase"}) == in_progress) {
    clones_[ObjectStore::key(ns, name)] = runtime;
  }
  if (!progress_ticker_ && !clones_.empty()) {
    progress_ticker_ = true;
    lab_.schedule(options_.progress_interval_s, lifetime_.guard([this] { progress_tick(); }));
  }
}

void CdiController::finish_clone(const std::string& ns, const std::string& name,
                                 const Expected<void>& result) {
  clones_.erase(ObjectStore::key(ns, name));
  auto dv = store_.get(Kind::data_volumes, ns, name);
  if (!dv) return;
  std::string ts = format_time(publisher_.now());
  std::string source = "the source";
  if (result) {
    publisher_.modify(Kind::data_volumes, ns, name, [&](json& object) {
      json& status = object["status"];
      status["phase"] = "Succeeded";
      status["progress"] = "100.0%";
      set_condition(status, "Bound", true, "Bound", "PVC " + name + " Bound", ts, false, true);
      set_condition(status, "Ready", true, "", "", ts, false, true);
      set_condition(status, "Running", false, "Completed", "", ts, false, true);
    });
    events_.record(dv->object, "Normal", "CloneSucceeded", "Successfully cloned into " + ns + "/" + name,
                   "datavolume-controller");
  } else {
    std::string message = result.error().message;
    publisher_.modify(Kind::data_volumes, ns, name, [&](json& object) {
      json& status = object["status"];
      status["phase"] = "Failed";
      set_condition(status, "Ready", false, "Error", message, ts, false, true);
      set_condition(status, "Running", false, "Error", message, ts, false, true);
    });
    events_.record(dv->object, "Warning", "CloneFailed", message, "datavolume-controller");
  }
  const json& refs = field(dv->object, {"metadata", "ownerReferences"});
  if (refs.is_array()) {
    for (const auto& ref : refs) {
      if (ref.value("kind", "") == "VirtualMachine") reconcile_owner_(ns, ref.value("name", ""));
    }
  }
}

void CdiController::progress_tick() {
  if (clones_.empty()) {
    progress_ticker_ = false;
    return;
  }
  // The model exposes each datastore's current throughput; a clone's share is estimated as an equal part of
  // it (boot reads on the same datastore make this an upper bound, so progress stays below 100 % until the
  // model reports the flow complete).
  std::map<std::string, int> per_datastore;
  for (const auto& [key, clone] : clones_) ++per_datastore[clone.datastore_id];
  for (auto& [key, clone] : clones_) {
    double rate = lab_.datastore_rate(clone.datastore_id) / std::max(1, per_datastore[clone.datastore_id]);
    clone.done_mb += rate * options_.progress_interval_s;
    double percent = clone.size_mb > 0 ? std::min(99.99, 100.0 * clone.done_mb / clone.size_mb) : 0.0;
    auto [ns, name] = split_key(key);
    publisher_.modify(Kind::data_volumes, ns, name,
                      [&](json& object) { object["status"]["progress"] = format_progress(percent); });
  }
  lab_.schedule(options_.progress_interval_s, lifetime_.guard([this] { progress_tick(); }));
}
}  // namespace bootstorm::sim::kube

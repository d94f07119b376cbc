#include "providers/kubevirt/settings.hpp"

#include "common/yaml_fields.hpp"

namespace bootstorm::kubevirt {

nlohmann::ordered_json Settings::plan_keys() const {
  nlohmann::ordered_json golden = nlohmann::ordered_json::object();
  if (!datasource_name.empty()) {
    nlohmann::ordered_json ds = {{"name", datasource_name}};
    if (!datasource_namespace.empty()) ds["namespace"] = datasource_namespace;
    golden["dataSource"] = std::move(ds);
  }
  if (!pvc.empty()) golden["pvc"] = pvc;
  golden["clone"] = clone;
  nlohmann::ordered_json keys;
  keys["golden"] = std::move(golden);
  keys["namespace"] = namespace_;
  return keys;
}

api::PlatformSettings read_settings(const api::KindPlanSection& section) {
  Settings s;
  s.clone = section.clone;
  s.namespace_ = section.namespace_.empty() ? kDefaultPlanNamespace : section.namespace_;
  if (!section.golden || !section.reader) return api::make_settings(std::move(s));
  yaml::FieldReader& r = *section.reader;
  const yaml::MapView& golden = *section.golden;
  if (golden.has("dataSource") && golden.has("pvc")) {
    r.error(golden.key_node("pvc"), "golden.pvc and golden.dataSource are mutually exclusive: use one");
  }
  if (golden.has("dataSource")) {
    yaml::MapView ds = r.map_view(golden.value("dataSource"), "golden.dataSource", "golden.dataSource.",
                                  {"name", "namespace"});
    if (ds.valid) {
      r.require(ds, {"name"});
      if (auto v = r.get_string(ds, "name")) {
        r.check_non_empty(ds.value("name"), "golden.dataSource.name", *v);
        s.datasource_name = *v;
      }
      // The DataSource lives next to the test VMs unless the plan says otherwise.
      s.datasource_namespace = s.namespace_;
      if (auto v = r.get_string(ds, "namespace")) {
        r.check_dns_label(ds.value("namespace"), "golden.dataSource.namespace", *v);
        s.datasource_namespace = *v;
      }
    }
  }
  if (auto v = r.get_string(golden, "pvc")) {
    const auto slash = v->find('/');
    if (slash == std::string::npos || slash == 0 || slash + 1 == v->size() ||
        v->find('/', slash + 1) != std::string::npos) {
      r.error(golden.value("pvc"), "golden.pvc must be 'namespace/name', got '" + *v + "'");
    }
    s.pvc = *v;
  }
  return api::make_settings(std::move(s));
}

}  // namespace bootstorm::kubevirt

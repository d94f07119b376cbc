// vim25 answers (see decode.hpp).
#include "protocol/vim25/decode.hpp"

namespace bootstorm::vsphere::vim25 {
namespace {

Error missing(std::string_view what, std::string_view field) {
  return make_error(ErrorKind::protocol, "the vim25 " + std::string(what) + " has no " + std::string(field),
                    "the endpoint does not answer as vCenter's /sdk does; check platform.endpoint");
}

std::vector<MissingProperty> decode_missing(const XmlNode& parent) {
  std::vector<MissingProperty> out;
  for (const XmlNode& m : parent.children("missingSet")) {
    MissingProperty p;
    p.path = m.child_text("path").value_or("");
    XmlNode fault = m.child("fault").child("fault");
    p.fault_type = fault.type_name();
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace

const Value* Value::field(std::string_view name) const {
  for (const auto& [key, value] : fields) {
    if (key == name) return &value;
  }
  return nullptr;
}

std::vector<const Value*> Value::all(std::string_view name) const {
  std::vector<const Value*> out;
  for (const auto& [key, value] : fields) {
    if (key == name) out.push_back(&value);
  }
  return out;
}

std::string Value::field_text(std::string_view name) const {
  const Value* v = field(name);
  return v ? v->text : std::string();
}

const Value* ObjectContent::prop(std::string_view name) const {
  for (const auto& [key, value] : props) {
    if (key == name) return &value;
  }
  return nullptr;
}

Value decode_value(const XmlNode& node) {
  Value v;
  v.xsi_type = node.type_name();
  v.moref_type = node.attribute("type").value_or("");
  if (!node.first_child()) {
    v.text = node.text();
    return v;
  }
  for (XmlNode c = node.first_child(); c; c = c.next_sibling()) {
    v.fields.push_back(ValueField{std::string(c.name()), decode_value(c)});
  }
  return v;
}

MoRef decode_moref(const XmlNode& node) {
  if (!node) return {};
  return {node.attribute("type").value_or(""), node.text()};
}

Expected<ServiceContent> decode_service_content(const XmlNode& rv) {
  if (!rv) return missing("RetrieveServiceContent answer", "returnval");
  ServiceContent sc;
  sc.root_folder = decode_moref(rv.child("rootFolder"));
  sc.property_collector = decode_moref(rv.child("propertyCollector"));
  sc.view_manager = decode_moref(rv.child("viewManager"));
  sc.session_manager = decode_moref(rv.child("sessionManager"));
  sc.authorization_manager = decode_moref(rv.child("authorizationManager"));
  sc.perf_manager = decode_moref(rv.child("perfManager"));
  sc.setting = decode_moref(rv.child("setting"));
  sc.custom_fields_manager = decode_moref(rv.child("customFieldsManager"));
  sc.search_index = decode_moref(rv.child("searchIndex"));
  sc.task_manager = decode_moref(rv.child("taskManager"));
  sc.event_manager = decode_moref(rv.child("eventManager"));
  sc.file_manager = decode_moref(rv.child("fileManager"));
  sc.virtual_disk_manager = decode_moref(rv.child("virtualDiskManager"));
  XmlNode about = rv.child("about");
  sc.about.name = about.child_text("name").value_or("");
  sc.about.full_name = about.child_text("fullName").value_or("");
  sc.about.vendor = about.child_text("vendor").value_or("");
  sc.about.version = about.child_text("version").value_or("");
  sc.about.build = about.child_text("build").value_or("");
  sc.about.api_type = about.child_text("apiType").value_or("");
  sc.about.api_version = about.child_text("apiVersion").value_or("");
  sc.about.instance_uuid = about.child_text("instanceUuid").value_or("");
  if (sc.root_folder.empty()) return missing("ServiceContent", "rootFolder");
  if (sc.property_collector.empty()) return missing("ServiceContent", "propertyCollector");
  if (sc.session_manager.empty()) return missing("ServiceContent", "sessionManager");
  return sc;
}

Expected<UserSession> decode_user_session(const XmlNode& rv) {
  if (!rv) return missing("Login answer", "returnval");
  UserSession s;
  s.key = rv.child_text("key").value_or("");
  s.user_name = rv.child_text("userName").value_or("");
  s.full_name = rv.child_text("fullName").value_or("");
  return s;
}

Expected<std::vector<EntityPrivilege>> decode_entity_privileges(const XmlNode& response) {
  std::vector<EntityPrivilege> out;
  for (const XmlNode& rv : response.children("returnval")) {
    EntityPrivilege e;
    e.entity = decode_moref(rv.child("entity"));
    if (e.entity.empty()) return missing("HasPrivilegeOnEntities answer", "entity");
    for (const XmlNode& a : rv.children("privAvailability")) {
      auto id = a.child_text("privId");
      if (!id) return missing("HasPrivilegeOnEntities answer", "privId");
      e.granted.emplace_back(*id, a.child_text("isGranted").value_or("false") == "true");
    }
    out.push_back(std::move(e));
  }
  return out;
}

Expected<std::vector<std::pair<std::string, std::string>>> decode_option_values(const XmlNode& response) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const XmlNode& rv : response.children("returnval")) {
    auto key = rv.child_text("key");
    if (!key) return missing("QueryOptions answer", "key");
    out.emplace_back(*key, rv.child_text("value").value_or(""));
  }
  return out;
}

Expected<UpdateSet> decode_update_set(const XmlNode& response, const std::string& version) {
  UpdateSet set;
  set.version = version;
  XmlNode rv = response.child("returnval");
  if (!rv) return set;
  auto v = rv.child_text("version");
  if (!v) return missing("UpdateSet", "version");
  set.version = *v;
  set.truncated = rv.child_text("truncated").value_or("false") == "true";
  for (const XmlNode& f : rv.children("filterSet")) {
    PropertyFilterUpdate pfu;
    pfu.filter = decode_moref(f.child("filter"));
    for (const XmlNode& o : f.children("objectSet")) {
      ObjectUpdate ou;
      ou.kind = o.child_text("kind").value_or("");
      ou.obj = decode_moref(o.child("obj"));
      if (ou.obj.empty()) return missing("ObjectUpdate", "obj");
      for (const XmlNode& c : o.children("changeSet")) {
        PropertyChange pc;
        pc.name = c.child_text("name").value_or("");
        pc.op = c.child_text("op").value_or("");
        if (XmlNode val = c.child("val")) pc.value = decode_value(val);
        ou.changes.push_back(std::move(pc));
      }
      ou.missing = decode_missing(o);
      pfu.objects.push_back(std::move(ou));
    }
    for (const XmlNode& m : f.children("missingSet"))
      pfu.missing_objects.push_back(decode_moref(m.child("obj")));
    set.filters.push_back(std::move(pfu));
  }
  return set;
}

Expected<RetrieveResult> decode_retrieve_result(const XmlNode& response) {
  RetrieveResult result;
  XmlNode rv = response.child("returnval");
  if (!rv) return result;
  result.token = rv.child_text("token").value_or("");
  for (const XmlNode& o : rv.children("objects")) {
    ObjectContent oc;
    oc.obj = decode_moref(o.child("obj"));
    if (oc.obj.empty()) return missing("ObjectContent", "obj");
    for (const XmlNode& p : o.children("propSet")) {
      XmlNode val = p.child("val");
      oc.props.emplace_back(p.child_text("name").value_or(""), val ? decode_value(val) : Value{});
    }
    oc.missing = decode_missing(o);
    result.objects.push_back(std::move(oc));
  }
  return result;
}

namespace {
void collect_snapshots(const Value& owner, std::string_view field, std::vector<SnapshotEntry>& out) {
  for (const Value* tree : owner.all(field)) {
    if (const Value* snapshot = tree->field("snapshot"))
      out.push_back({tree->field_text("name"), snapshot->moref()});
    collect_snapshots(*tree, "childSnapshotList", out);
  }
}
}  // namespace

std::vector<SnapshotEntry> snapshots_of(const Value& snapshot_info) {
  std::vector<SnapshotEntry> out;
  collect_snapshots(snapshot_info, "rootSnapshotList", out);
  return out;
}

PropertyFilterSpec decode_filter_spec(const XmlNode& node) {
  PropertyFilterSpec spec;
  for (const XmlNode& ps : node.children("propSet")) {
    PropertySpec p;
    p.type = ps.child_text("type").value_or("");
    p.all = ps.child_text("all").value_or("false") == "true";
    for (const XmlNode& path : ps.children("pathSet")) p.paths.push_back(path.text());
    spec.prop_set.push_back(std::move(p));
  }
  for (const XmlNode& os : node.children("objectSet")) {
    ObjectSpec o;
    o.obj = decode_moref(os.child("obj"));
    o.skip = os.child_text("skip").value_or("false") == "true";
    for (const XmlNode& sel : os.children("selectSet")) {
      TraversalSpec t;
      t.name = sel.child_text("name").value_or("");
      t.type = sel.child_text("type").value_or("");
      t.path = sel.child_text("path").value_or("");
      t.skip = sel.child_text("skip").value_or("false") == "true";
      o.select_set.push_back(std::move(t));
    }
    spec.object_set.push_back(std::move(o));
  }
  if (auto missing = node.child_text("reportMissingObjectsInResults"))
    spec.report_missing_objects = *missing == "true";
  return spec;
}

}  // namespace bootstorm::vsphere::vim25

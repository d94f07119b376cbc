// The generic REST verbs of the Kubernetes front over the object store, as the API server answers them: get
// and list (label and field selectors, limit/continue, Tables), create (defaults, names, admission), update
// (optimistic concurrency, generation), patch (merge, JSON, strategic for core types) and delete
// (preconditions, dry run, propagation policy).
#include "common/base64.hpp"
#include "simulator/kube/kube_front_impl.hpp"
#include "simulator/kube/selectors.hpp"

namespace bootstorm::sim::kube {
namespace {

// The object's content apart from metadata and status: a change bumps metadata.generation.
json spec_part(const json& object) {
  json copy = object;
  copy.erase("metadata");
  copy.erase("status");
  return copy;
}

}  // namespace

http::ServerResponse KubeFront::Impl::get(const Route& route) {
  auto object = store.get(route.kind, route.ns, route.name);
  if (!object) return error_response(not_found(*route.type, route.name));
  if (route.shape.as != ResponseShape::As::object) {
    json metadata = {{"resourceVersion", object->object["metadata"].value("resourceVersion", "")}};
    return json_response(
        200, render_shaped(route.kind, {&object->object}, metadata, route.shape, route.include, now(), false)
                 .dump());
  }
  return json_response(200, object->text);
}

http::ServerResponse KubeFront::Impl::list(const Route& route, const http::ServerRequest& request) {
  const ResourceType& type = *route.type;
  auto labels = LabelSelector::parse(request.query_param("labelSelector").value_or(""));
  if (!labels) return error_response(bad_request(labels.error().message));
  auto fields = FieldSelector::parse(request.query_param("fieldSelector").value_or(""), type.field_selectors);
  if (!fields) return error_response(bad_request(fields.error().message));

  std::size_t limit = 0;
  if (auto text = request.query_param("limit")) {
    try {
      long long value = std::stoll(*text);
      if (value > 0) limit = static_cast<std::size_t>(value);
    } catch (const std::exception&) {
      return error_response(bad_request("invalid limit \"" + *text + "\""));
    }
  }
  std::string after_key;
  std::optional<std::uint64_t> token_rv;
  if (auto token = request.query_param("continue"); token && !token->empty()) {
    auto decoded = base64_decode(*token);
    json parsed = decoded ? json::parse(*decoded, nullptr, false) : json();
    if (!parsed.is_object() || !parsed.contains("rv") || !parsed.contains("start")) {
      return error_response(
          bad_request("continue key is not valid: incorrect encoded start resourceVersion"));
    }
    token_rv = parsed["rv"].get<std::uint64_t>();
    after_key = parsed["start"].get<std::string>();
    if (*token_rv < store.compacted_resource_version()) {
      auto error = expired(
          "The provided continue parameter is too old to display a consistent list result. You can start a "
          "new "
          "list without the continue parameter, or use the continue token in this response to retrieve the "
          "remainder of the results. Continuing with the provided token results in an inconsistent list - "
          "objects that were created, modified, or deleted between the time the first chunk was returned and "
          "now may show up in the list.");
      json inconsistent = {
          {"v", "meta.k8s.io/v1"}, {"rv", store.current_resource_version()}, {"start", after_key}};
      error.status["metadata"]["continue"] = base64_encode(inconsistent.dump());
      return error_response(error);
    }
  }
  if (auto rv_text = request.query_param("resourceVersion");
      rv_text && !rv_text->empty() && *rv_text != "0") {
    std::uint64_t rv = 0;
    try {
      rv = std::stoull(*rv_text);
    } catch (const std::exception&) {
      return error_response(status_error(400, "BadRequest", "invalid resource version: " + *rv_text));
    }
    std::uint64_t current = store.current_resource_version();
    if (rv > current) {
      return error_response(status_error(
          504, "Timeout",
          "Too large resource version: " + std::to_string(rv) + ", current: " + std::to_string(current),
          {{"causes", json::array({{{"reason", "ResourceVersionTooLarge"},
                                    {"message", "Too large resource version"}}})},
           {"retryAfterSeconds", 1}}));
    }
  }

  auto result = store.list(route.kind, route.ns, after_key);
  std::uint64_t list_rv = token_rv.value_or(result.resource_version);
  std::vector<const StoredObject*> selected;
  selected.reserve(result.items.size());
  std::size_t remaining = 0;
  std::string last_key;
  bool filtering = !labels->empty() || !fields->empty();
  for (const auto& object : result.items) {
    const json& meta = object->object["metadata"];
    if (filtering) {
      auto labels_it = meta.find("labels");
      if (!labels->matches(labels_it == meta.end() ? json() : *labels_it)) continue;
      if (!fields->matches(object->object)) continue;
    }
    if (limit > 0 && selected.size() >= limit) {
      ++remaining;
      continue;
    }
    selected.push_back(object.get());
    last_key = ObjectStore::key(meta.value("namespace", ""), meta.value("name", ""));
  }
  json metadata = {{"resourceVersion", std::to_string(list_rv)}};
  if (remaining > 0) {
    json token = {{"v", "meta.k8s.io/v1"}, {"rv", list_rv}, {"start", last_key}};
    metadata["continue"] = base64_encode(token.dump());
    if (!filtering) metadata["remainingItemCount"] = remaining;
  }
  if (route.shape.as != ResponseShape::As::object) {
    std::vector<const json*> objects;
    for (const StoredObject* object : selected) objects.push_back(&object->object);
    return json_response(
        200, render_shaped(route.kind, objects, metadata, route.shape, route.include, now(), true).dump());
  }
  std::string items;
  items.reserve(selected.size() * 1024);
  for (const StoredObject* object : selected) {
    if (!items.empty()) items.push_back(',');
    items += object->text;
  }
  std::string body = R"({"apiVersion":)" + json(type.api_version()).dump() + R"(,"items":[)" + items +
                     R"(],"kind":)" + json(type.list_kind()).dump() + R"(,"metadata":)" + metadata.dump() +
                     "}";
  return json_response(200, std::move(body));
}

ApiResult KubeFront::Impl::create(Kind kind, const std::string& path_ns, const std::string& body_text,
                                  bool dry_run) {
  const ResourceType& type = resource_type(kind);
  json object = json::parse(body_text, nullptr, false);
  if (object.is_discarded() || !object.is_object()) {
    return bad_request(
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json, application/yaml");
  }
  // A built-in type's kind and apiVersion default to those of the request path (the official Python client
  // omits them unless set); a custom resource is decoded as unstructured data, which must name its kind.
  auto missing = [&](const char* field) {
    return !object.contains(field) || !object[field].is_string() || object[field].get<std::string>().empty();
  };
  if (type.group.empty()) {
    if (missing("kind")) object["kind"] = type.kind;
    if (missing("apiVersion")) object["apiVersion"] = type.api_version();
  }
  if (missing("kind")) return bad_request("Object 'Kind' is missing in '" + body_text.substr(0, 200) + "'");
  if (object["kind"] != type.kind || object.value("apiVersion", "") != type.api_version()) {
    return bad_request("the API version in the data (" + object.value("apiVersion", "") +
                       ") does not match the expected API version (" + type.api_version() + ")");
  }
  if (!object.contains("metadata") || !object["metadata"].is_object()) object["metadata"] = json::object();
  json& meta = object["metadata"];
  if (type.namespaced) {
    std::string body_ns = meta.value("namespace", "");
    if (body_ns.empty()) {
      meta["namespace"] = path_ns;
    } else if (body_ns != path_ns) {
      return bad_request(
          "the namespace of the provided object does not match the namespace sent on the request");
    }
    auto ns_object = store.get(Kind::namespaces, "", path_ns);
    if (!ns_object) return not_found(resource_type(Kind::namespaces), path_ns);
    if (ns_object->object["metadata"].contains("deletionTimestamp")) {
      return status_error(
          403, "Forbidden",
          qualified_resource(type) + " \"" + meta.value("name", "") +
              "\" is forbidden: unable to "
              "create new content in namespace " +
              path_ns + " because it is being terminated",
          {{"name", meta.value("name", "")},
           {"group", type.group},
           {"kind", type.plural},
           {"causes", json::array({{{"reason", "NamespaceTerminating"},
                                    {"message", "namespace " + path_ns + " is being terminated"},
                                    {"field", "metadata.namespace"}}})}});
    }
  } else {
    meta.erase("namespace");
  }
  std::string name = meta.value("name", "");
  if (name.empty()) {
    std::string prefix = meta.value("generateName", "");
    if (prefix.empty()) {
      return invalid(type, "", "metadata.name", "Required value: name or generateName is required");
    }
    static constexpr char kAlphabet[] = "bcdfghjklmnpqrstvwxz2456789";
    do {
      name = prefix;
      for (int i = 0; i < 5; ++i) name.push_back(kAlphabet[rng() % (sizeof(kAlphabet) - 1)]);
    } while (store.get(kind, meta.value("namespace", ""), name));
    meta["name"] = name;
  }
  if (auto error = check_dns_name(type, name, DnsRule::subdomain)) return *error;
  if (store.get(kind, meta.value("namespace", ""), name)) return already_exists(type, name);
  for (const char* server_field :
       {"uid", "resourceVersion", "creationTimestamp", "deletionTimestamp", "generation"}) {
    meta.erase(server_field);
  }
  if (type.status_subresource && kind != Kind::namespaces && kind != Kind::nodes) object.erase("status");
  if (dry_run) {
    meta["uid"] = new_uid();
    meta["creationTimestamp"] = format_time(now());
    return std::make_shared<StoredObject>(StoredObject{object, object.dump(), 0});
  }
  if (auto error = admission.admit_create(kind, object)) return *error;
  ObjectPtr stored = insert(kind, std::move(object));
  after_create(kind, stored);
  return stored;
}

ApiResult KubeFront::Impl::update(const Route& route, json object, bool dry_run) {
  const ResourceType& type = *route.type;
  auto current = store.get(route.kind, route.ns, route.name);
  if (!current) return not_found(type, route.name);
  if (!object.contains("metadata") || !object["metadata"].is_object()) object["metadata"] = json::object();
  json& meta = object["metadata"];
  std::string body_name = meta.value("name", "");
  if (!body_name.empty() && body_name != route.name) {
    return bad_request("the name of the object (" + body_name + ") does not match the name on the URL (" +
                       route.name + ")");
  }
  if (object.contains("kind") && object["kind"] != type.kind) {
    return bad_request("the kind of the object does not match the kind of the URL (" + type.kind + ")");
  }
  std::string rv = meta.value("resourceVersion", "");
  const json& old_meta = current->object["metadata"];
  if (rv.empty()) {
    return invalid(type, route.name, "metadata.resourceVersion",
                   "Invalid value: 0x0: must be specified for an update");
  }
  if (rv != old_meta.value("resourceVersion", "")) {
    return conflict(
        type, route.name,
        "the object has been modified; please apply your changes to the latest version and try again");
  }
  json next;
  if (route.subresource == "status") {
    next = current->object;
    if (object.contains("status")) next["status"] = object["status"];
  } else {
    next = std::move(object);
    next["apiVersion"] = type.api_version();
    next["kind"] = type.kind;
    if (type.status_subresource && current->object.contains("status")) {
      next["status"] = current->object["status"];
    } else if (type.status_subresource) {
      next.erase("status");
    }
  }
  json& next_meta = next["metadata"];
  next_meta["name"] = route.name;
  if (type.namespaced) next_meta["namespace"] = route.ns;
  for (const char* kept : {"uid", "creationTimestamp", "deletionTimestamp", "generation"}) {
    if (old_meta.contains(kept)) {
      next_meta[kept] = old_meta[kept];
    } else {
      next_meta.erase(kept);
    }
  }
  if (route.subresource != "status" && spec_part(next) != spec_part(current->object)) {
    next_meta["generation"] = old_meta.value("generation", 1) + 1;
  }
  if (auto error = admission.admit_update(route.kind, current->object, next)) return *error;
  if (dry_run)
    return std::make_shared<StoredObject>(StoredObject{next, next.dump(), current->resource_version});
  if (next == current->object) return current;
  ObjectPtr stored = store.put(route.kind, std::move(next));
  after_update(route.kind, current, stored);
  return stored;
}

ApiResult KubeFront::Impl::patch(const Route& route, const http::ServerRequest& request, bool dry_run) {
  const ResourceType& type = *route.type;
  auto current = store.get(route.kind, route.ns, route.name);
  if (!current) return not_found(type, route.name);
  std::string content_type(request.header("Content-Type").value_or(""));
  if (auto semi = content_type.find(';'); semi != std::string::npos) content_type.resize(semi);
  json patch_doc = json::parse(request.body, nullptr, false);
  if (patch_doc.is_discarded()) return bad_request("error decoding patch: invalid JSON");
  json patched = current->object;
  if (content_type == "application/merge-patch+json" ||
      (content_type == "application/strategic-merge-patch+json" && type.group.empty())) {
    if (!patch_doc.is_object()) return bad_request("error decoding patch: merge patch must be a JSON object");
    patched.merge_patch(patch_doc);
  } else if (content_type == "application/json-patch+json") {
    if (!patch_doc.is_array()) return bad_request("error decoding patch: json patch must be a JSON array");
    try {
      patched = current->object.patch(patch_doc);
    } catch (const json::exception& e) {
      return status_error(422, "Invalid",
                          std::string("the server rejected our request due to an error in our "
                                      "request: ") +
                              e.what());
    }
  } else {
    return unsupported_media_type(content_type);
  }
  if (!patched.is_object()) return bad_request("the patched object is not a JSON object");
  if (!patched.contains("metadata") || !patched["metadata"].is_object()) patched["metadata"] = json::object();
  // A patch carries the current resourceVersion unless it sets one itself (optimistic concurrency).
  if (patched["metadata"].value("resourceVersion", "").empty()) {
    patched["metadata"]["resourceVersion"] = current->object["metadata"]["resourceVersion"];
  }
  return update(route, std::move(patched), dry_run);
}

ApiResult KubeFront::Impl::remove(const Route& route, const http::ServerRequest& request, bool dry_run) {
  const ResourceType& type = *route.type;
  const std::string& body = request.body;
  // DeleteOptions.propagationPolicy, from the query or the body (the body wins, as the API server decodes it
  // over the query); orphanDependents is its deprecated boolean form.
  std::string policy = request.query_param("propagationPolicy").value_or("");
  json options = body.empty() ? json::object() : json::parse(body, nullptr, false);
  if (options.is_object()) {
    if (options.contains("propagationPolicy") && options["propagationPolicy"].is_string())
      policy = options["propagationPolicy"].get<std::string>();
    if (options.contains("orphanDependents") && options["orphanDependents"].is_boolean()) {
      if (!policy.empty()) {
        return status_error(
            422, "Invalid",
            "DeleteOptions.meta.k8s.io \"\" is invalid: propagationPolicy: Invalid value: \"" + policy +
                "\": orphanDependents and deletionPropagation cannot be both set",
            {{"group", "meta.k8s.io"}, {"kind", "DeleteOptions"}});
      }
      policy = options["orphanDependents"].get<bool>() ? "Orphan" : "Background";
    }
  }
  Propagation propagation = Propagation::background;
  if (policy == "Orphan") {
    propagation = Propagation::orphan;
  } else if (policy == "Foreground") {
    propagation = Propagation::foreground;
  } else if (!policy.empty() && policy != "Background") {
    return status_error(
        422, "Invalid",
        "DeleteOptions.meta.k8s.io \"\" is invalid: propagationPolicy: Unsupported value: \"" + policy +
            "\": supported values: \"Foreground\", \"Background\", \"Orphan\", \"nil\"",
        {{"group", "meta.k8s.io"}, {"kind", "DeleteOptions"}});
  }
  auto current = store.get(route.kind, route.ns, route.name);
  if (!current) return not_found(type, route.name);
  if (!body.empty()) {
    if (options.is_object() && options.contains("preconditions") && options["preconditions"].is_object()) {
      const json& pre = options["preconditions"];
      const json& meta = current->object["metadata"];
      if (pre.contains("uid") && pre["uid"].is_string() && pre["uid"] != meta["uid"]) {
        return conflict(type, route.name,
                        "Precondition failed: UID in precondition: " + pre["uid"].get<std::string>() +
                            ", UID in object meta: " + meta.value("uid", ""));
      }
      if (pre.contains("resourceVersion") && pre["resourceVersion"].is_string() &&
          pre["resourceVersion"] != meta["resourceVersion"]) {
        return conflict(type, route.name,
                        "Precondition failed: ResourceVersion in precondition: " +
                            pre["resourceVersion"].get<std::string>() +
                            ", ResourceVersion in object meta: " + meta.value("resourceVersion", ""));
      }
    }
    if (options.is_object() && options.contains("dryRun") && options["dryRun"].is_array() &&
        !options["dryRun"].empty()) {
      dry_run = true;
    }
  }
  if (dry_run) return current;
  if (propagation == Propagation::foreground && route.kind != Kind::namespaces) {
    // The object is marked first (deletionTimestamp and the foregroundDeletion finalizer: what the caller
    // gets back and watchers see), then removed once its dependents are gone, which in the lab is at once.
    ObjectPtr marked = modify(route.kind, route.ns, route.name, [&](json& object) {
      object["metadata"]["deletionTimestamp"] = format_time(now());
      object["metadata"]["deletionGracePeriodSeconds"] = 0;
      json& finalizers = object["metadata"]["finalizers"];
      if (!finalizers.is_array()) finalizers = json::array();
      finalizers.push_back("foregroundDeletion");
    });
    auto removed = garbage_collector.delete_object(route.kind, route.ns, route.name, propagation);
    if (failed(removed)) return removed;
    return marked;
  }
  return garbage_collector.delete_object(route.kind, route.ns, route.name, propagation);
}

}  // namespace bootstorm::sim::kube

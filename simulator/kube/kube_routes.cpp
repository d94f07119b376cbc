// The Kubernetes front's routing: the paths that are not resources from a table, discovery, then resource
// paths (group, version, namespace, plural, name, subresource), RBAC as the lab profile denies it, and the
// verb. The verbs themselves live in kube_rest.cpp and kube_watch.cpp.
#include <string>
#include <string_view>
#include <vector>

#include "common/lab_identity.hpp"
#include "simulator/kube/api_objects.hpp"
#include "simulator/kube/kube_front_impl.hpp"
#include "simulator/kube/printer_columns.hpp"
#include "simulator/kube/resource_types.hpp"

namespace bootstorm::sim::kube {

namespace {

// The user the lab's token stands for, as a Forbidden answer names it.
constexpr std::string_view kLabUser = "bootstorm-lab-user";

http::ServerResponse result_response(const ApiResult& result, int ok_status) {
  if (auto* error = std::get_if<ApiError>(&result)) return error_response(*error);
  return json_response(ok_status, std::get<ObjectPtr>(result)->text);
}

std::vector<std::string> split_path(std::string_view path) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < path.size()) {
    std::size_t slash = path.find('/', start);
    if (slash == std::string_view::npos) slash = path.size();
    if (slash > start) out.emplace_back(path.substr(start, slash - start));
    start = slash + 1;
  }
  return out;
}

bool is_dry_run(const http::ServerRequest& request) {
  auto value = request.query_param("dryRun");
  return value && *value == "All";
}

// dryRun accepts only "All" (as often as it is given); anything else is refused, not ignored.
std::optional<ApiError> invalid_dry_run(const http::ServerRequest& request, const std::string& options_kind) {
  for (const auto& value : request.query_params("dryRun")) {
    if (value == "All") continue;
    return status_error(
        422, "Invalid",
        options_kind + ".meta.k8s.io \"\" is invalid: dryRun: Unsupported value: \"" + value +
            "\": supported values: \"All\"",
        {{"group", "meta.k8s.io"},
         {"kind", options_kind},
         {"causes",
          json::array({{{"reason", "FieldValueNotSupported"},
                        {"message", "Unsupported value: \"" + value + "\": supported values: \"All\""},
                        {"field", "dryRun"}}})}});
  }
  return std::nullopt;
}

}  // namespace

// ---- routing ----
// The paths that are not resources, matched in order before any resource path (a prefix entry ends in '/').

namespace {

using FixedServe = http::ServerResponse (*)(KubeFront::Impl& front, const http::ServerRequest& request,
                                            const std::string& path);

bool reading(const std::string& method) {
  return method == "GET" || method == "HEAD";
}

http::ServerResponse serve_version(KubeFront::Impl& front, const http::ServerRequest&, const std::string&) {
  const model::Lab& lab = front.lab;
  json info = version_info();
  // The lab says what it is, so that a run through its kubeconfig is labelled simulated too.
  info["simulator"] = lab_simulator_name(lab.spec().name);
  std::string version = lab.spec().kube.server_version;
  if (!version.empty()) {
    info["gitVersion"] = version;
    if (version.starts_with("v")) version.erase(0, 1);
    std::size_t dot1 = version.find('.');
    std::size_t dot2 = dot1 == std::string::npos ? std::string::npos : version.find('.', dot1 + 1);
    if (dot1 != std::string::npos && dot2 != std::string::npos) {
      info["major"] = version.substr(0, dot1);
      info["minor"] = version.substr(dot1 + 1, dot2 - dot1 - 1);
    }
  }
  return json_response(200, info.dump());
}

http::ServerResponse serve_health(KubeFront::Impl&, const http::ServerRequest&, const std::string&) {
  http::ServerResponse response;
  response.headers.emplace_back("Content-Type", "text/plain; charset=utf-8");
  response.body = "ok";
  return response;
}

http::ServerResponse serve_api(KubeFront::Impl& front, const http::ServerRequest& request,
                               const std::string&) {
  return reading(request.method) ? json_response(200, api_versions(front.options.server_address).dump())
                                 : error_response(method_not_allowed());
}

http::ServerResponse serve_apis(KubeFront::Impl&, const http::ServerRequest& request, const std::string&) {
  return reading(request.method) ? json_response(200, api_group_list().dump())
                                 : error_response(method_not_allowed());
}

http::ServerResponse serve_openapi_v2(KubeFront::Impl&, const http::ServerRequest& request,
                                      const std::string&) {
  // client-go fetches the v2 document as protobuf: kubectl up to 1.25 looks there for a PATCH operation of
  // the object's kind that takes dryRun before it sends --dry-run=server, and validates against its
  // definitions. The lab publishes the operations and no definitions, so kubectl leaves validation to the
  // server; JSON clients get the same document as Swagger JSON.
  std::string accept(request.header("Accept").value_or(""));
  http::ServerResponse response;
  if (accept.find("protobuf") != std::string::npos) {
    response.headers.emplace_back("Content-Type",
                                  "application/com.github.proto-openapi.spec.v2.v1.0+protobuf");
    response.body = openapi_v2_protobuf();
    return response;
  }
  return json_response(200, openapi_v2().dump());
}

http::ServerResponse serve_openapi_v3(KubeFront::Impl&, const http::ServerRequest&, const std::string&) {
  return json_response(200, openapi_v3_root().dump());
}

http::ServerResponse serve_openapi_v3_group_version(KubeFront::Impl&, const http::ServerRequest&,
                                                    const std::string& path) {
  auto parts = split_path(path.substr(std::string("/openapi/v3/").size()));
  json doc;
  if (parts.size() == 2 && parts[0] == "api") doc = openapi_v3_group_version("", parts[1]);
  if (parts.size() == 3 && parts[0] == "apis") doc = openapi_v3_group_version(parts[1], parts[2]);
  if (doc.is_null()) return error_response(path_not_found());
  return json_response(200, doc.dump());
}

struct FixedRoute {
  std::string_view path;
  FixedServe serve;
};

constexpr FixedRoute kFixedRoutes[] = {
    {"/version", serve_version},
    {"/healthz", serve_health},
    {"/livez", serve_health},
    {"/readyz", serve_health},
    {"/api", serve_api},
    {"/apis", serve_apis},
    {"/openapi/v2", serve_openapi_v2},
    {"/openapi/v3", serve_openapi_v3},
    {"/openapi/v3/", serve_openapi_v3_group_version},
};

const FixedRoute* fixed_route(const std::string& path) {
  for (const auto& r : kFixedRoutes) {
    if (r.path.ends_with('/') ? path.starts_with(r.path) : path == r.path) return &r;
  }
  return nullptr;
}

// /api/VERSION/... or /apis/GROUP/VERSION/...: the group, the version and the segments after them.
struct ApiPath {
  std::string group, version;
  std::vector<std::string> rest;
};

}  // namespace

http::ServerResponse KubeFront::Impl::route_request(http::ServerRequest& request, std::string& route_key) {
  std::string path = request.path;
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  if (const FixedRoute* fixed = fixed_route(path)) return fixed->serve(*this, request, path);

  auto segments = split_path(path);
  if (segments.empty()) {
    json paths = {"/api", "/api/v1", "/apis", "/healthz", "/livez", "/openapi/v3", "/readyz", "/version"};
    return json_response(200, json{{"paths", paths}}.dump());
  }
  ApiPath api;
  std::size_t rest_at = 0;
  if (segments[0] == "api" && segments.size() >= 2) {
    api.version = segments[1];
    rest_at = 2;
  } else if (segments[0] == "apis" && segments.size() >= 2) {
    api.group = segments[1];
    if (segments.size() == 2) {
      json doc = api_group(api.group);
      return doc.is_null() ? error_response(path_not_found()) : json_response(200, doc.dump());
    }
    api.version = segments[2];
    rest_at = 3;
  } else {
    return error_response(path_not_found());
  }
  if (segments.size() == rest_at) {
    json doc = api_resource_list(api.group, api.version);
    return doc.is_null() ? error_response(path_not_found()) : json_response(200, doc.dump());
  }
  api.rest.assign(segments.begin() + static_cast<std::ptrdiff_t>(rest_at), segments.end());

  // SelfSubjectAccessReview: may the caller do this? Answered from the lab's deny list, stored nowhere.
  if (path == "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews") {
    route_key = "selfsubjectaccessreviews";
    if (request.method != "POST") return error_response(method_not_allowed());
    return access_review(request.body);
  }
  // virt-api's version, readable by every authenticated user (KubeVirt's version subresource).
  if (api.group == kSubresourcesGroup && api.rest.size() == 1 && api.rest[0] == "version") {
    if (!reading(request.method)) return error_response(method_not_allowed());
    json info = version_info();
    info["gitVersion"] = lab.spec().kube.kubevirt_version;
    info["simulator"] = lab_simulator_name(lab.spec().name);
    for (const char* unset : {"major", "minor"}) info.erase(unset);
    return json_response(200, info.dump());
  }
  return route_resource(request, api.group, api.version, std::move(api.rest), route_key);
}

http::ServerResponse KubeFront::Impl::route_resource(http::ServerRequest& request, const std::string& group,
                                                     const std::string& version,
                                                     std::vector<std::string> rest, std::string& route_key) {
  Route route;
  std::string lookup_group = group;
  if (group == kSubresourcesGroup) {
    route.subresource_group = true;
    lookup_group = "kubevirt.io";
  }
  if (!rest.empty() && rest[0] == "watch" && !route.subresource_group) {
    route.watch_prefix = true;
    rest.erase(rest.begin());
  }
  if (rest.empty()) return error_response(path_not_found());
  std::string plural;
  std::vector<std::string> tail;
  if (rest.size() >= 3 && rest[0] == "namespaces") {
    const ResourceType* inner = find_resource_type(lookup_group, version, rest[2]);
    if (inner && inner->namespaced) {
      route.ns = rest[1];
      plural = rest[2];
      tail.assign(rest.begin() + 3, rest.end());
    }
  }
  if (plural.empty()) {
    plural = rest[0];
    tail.assign(rest.begin() + 1, rest.end());
  }
  route.type = find_resource_type(lookup_group, version, plural);
  if (!route.type) return error_response(path_not_found());
  route.kind = static_cast<Kind>(route.type - resource_types().data());
  const bool watching = route.watch_prefix || query_bool(request.query_param("watch"));
  route_key = route.type->plural + (tail.size() == 2 ? "/" + tail[1] : "") + (watching ? " (watch)" : "");
  if (tail.size() > 2) return error_response(path_not_found());
  if (!tail.empty()) route.name = tail[0];
  if (tail.size() == 2) route.subresource = tail[1];
  if (auto refused = authorize(route, request.method, watching)) return std::move(*refused);
  if (route.type->namespaced && route.ns.empty() && !route.name.empty())
    return error_response(path_not_found());

  if (route.subresource_group) {
    if (route.kind != Kind::virtual_machines || route.name.empty() ||
        (route.subresource != "start" && route.subresource != "stop" && route.subresource != "restart")) {
      return error_response(path_not_found());
    }
    if (request.method != "PUT") return error_response(method_not_allowed());
    return subresources.handle(route, request);
  }
  if (!route.subresource.empty() && (route.subresource != "status" || !route.type->status_subresource)) {
    return error_response(path_not_found());
  }
  return serve_resource(route, request, watching);
}

// The RBAC attributes of a request (what a Role must allow), counted for /_lab/stats; a 403 worded as the API
// server words it (the object or resource, the verb, the group and the namespace) when the lab denies them.
std::optional<http::ServerResponse> KubeFront::Impl::authorize(const Route& route, const std::string& method,
                                                               bool watching) {
  std::string verb = method == "POST"     ? "create"
                     : method == "PUT"    ? "update"
                     : method == "PATCH"  ? "patch"
                     : method == "DELETE" ? (route.name.empty() ? "deletecollection" : "delete")
                     : watching           ? "watch"
                     : route.name.empty() ? "list"
                                          : "get";
  std::string rbac_group = route.subresource_group ? std::string(kSubresourcesGroup) : route.type->group;
  const std::string rbac_key = verb + " " + (rbac_group.empty() ? "core" : rbac_group) + " " +
                               route.type->plural +
                               (route.subresource.empty() ? "" : "/" + route.subresource);
  ++stats.by_authorization[rbac_key];
  if (denied(rbac_key)) {
    const std::string resource =
        route.type->plural + (route.subresource.empty() ? "" : "/" + route.subresource);
    const std::string group_name = rbac_group.empty() ? std::string() : "." + rbac_group;
    return error_response(
        status_error(403, "Forbidden",
                     (route.name.empty() ? route.type->plural + group_name
                                         : route.type->plural + group_name + " \"" + route.name + "\"") +
                         " is forbidden: User \"" + std::string(kLabUser) + "\" cannot " + verb +
                         " resource \"" + resource + "\" in API group \"" + rbac_group + "\"" +
                         (route.ns.empty() ? std::string(" at the cluster scope")
                                           : " in the namespace \"" + route.ns + "\""),
                     json{{"name", route.name}, {"group", rbac_group}, {"kind", route.type->plural}}));
  }
  return std::nullopt;
}

http::ServerResponse KubeFront::Impl::serve_resource(Route& route, http::ServerRequest& request,
                                                     bool watching) {
  const std::string& method = request.method;
  const bool read = reading(method);
  if (read) {
    auto shape = negotiate_response(request.header("Accept").value_or(""));
    if (!shape) {
      return error_response(status_error(406, "NotAcceptable",
                                         "only the following media types are accepted: application/json, "
                                         "application/json;as=Table;v=v1;g=meta.k8s.io, "
                                         "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io"));
    }
    route.shape = *shape;
    auto include = parse_include_object(request.query_param("includeObject").value_or(""));
    if (!include) {
      return error_response(bad_request("Invalid value: \"" +
                                        request.query_param("includeObject").value_or("") +
                                        "\": must be one of None, Metadata, Object"));
    }
    route.include = *include;
  }
  if (!read) {
    const char* options_kind = method == "POST"     ? "CreateOptions"
                               : method == "PATCH"  ? "PatchOptions"
                               : method == "DELETE" ? "DeleteOptions"
                                                    : "UpdateOptions";
    if (auto error = invalid_dry_run(request, options_kind)) return error_response(*error);
  }
  bool dry_run = is_dry_run(request);
  if (route.name.empty()) {
    if (read) {
      if (watching) return watch(route, request);
      return list(route, request);
    }
    if (method == "POST") return result_response(create(route.kind, route.ns, request.body, dry_run), 201);
    return error_response(method_not_allowed());
  }
  if (route.watch_prefix) {
    // Legacy single-object watch: /watch/.../name == fieldSelector=metadata.name=name.
    return watch(route, request);
  }
  if (read) return get(route);
  if (method == "PUT") {
    json body = json::parse(request.body, nullptr, false);
    if (body.is_discarded() || !body.is_object()) {
      return error_response(
          bad_request("the body of the request was in an unknown format - accepted media types "
                      "include: application/json, application/yaml"));
    }
    return result_response(update(route, std::move(body), dry_run), 200);
  }
  if (method == "PATCH") return result_response(patch(route, request, dry_run), 200);
  if (method == "DELETE") return result_response(remove(route, request, dry_run), 200);
  return error_response(method_not_allowed());
}

}  // namespace bootstorm::sim::kube

#include "simulator/vcenter/legacy_rest.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <nlohmann/json.hpp>
#include <vector>

namespace bootstorm::sim::vcenter::legacy_rest {

using http::ServerRequest;
using http::ServerResponse;
using nlohmann::json;

namespace {

// VM.Info fields that are maps in /api and arrays of {key, value} in /rest (vcenter.VM.info).
constexpr std::array<std::string_view, 9> kVmInfoMaps = {"disks",         "nics",           "cdroms",
                                                         "floppies",      "parallel_ports", "serial_ports",
                                                         "sata_adapters", "scsi_adapters",  "nvme_adapters"};

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string decode_key(std::string_view raw) {
  std::string out;
  for (std::size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] == '%' && i + 2 < raw.size() && hex_value(raw[i + 1]) >= 0 && hex_value(raw[i + 2]) >= 0) {
      out += static_cast<char>(hex_value(raw[i + 1]) * 16 + hex_value(raw[i + 2]));
      i += 2;
    } else {
      out += raw[i] == '+' ? ' ' : raw[i];
    }
  }
  return out;
}

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
}

// filter.names.1=a&filter.names.2=b / filter.names=a  ->  names=a&names=b; ~action=x -> action=x.
std::string translate_query(std::string_view query) {
  std::string out;
  std::size_t start = 0;
  while (!query.empty() && start <= query.size()) {
    const std::size_t amp = query.find('&', start);
    const std::string_view pair =
        query.substr(start, amp == std::string_view::npos ? std::string_view::npos : amp - start);
    if (!pair.empty()) {
      const std::size_t eq = pair.find('=');
      std::string key = decode_key(pair.substr(0, eq));
      const std::string_view value = eq == std::string_view::npos ? std::string_view{} : pair.substr(eq + 1);
      if (key.rfind("filter.", 0) == 0) {
        key = key.substr(7);
        const std::size_t dot = key.rfind('.');
        if (dot != std::string::npos && all_digits(std::string_view(key).substr(dot + 1))) key.resize(dot);
      } else if (key == "~action") {
        key = "action";
      }
      if (!out.empty()) out += '&';
      out += key;
      if (eq != std::string_view::npos) {
        out += '=';
        out += value;
      }
    }
    if (amp == std::string_view::npos) break;
    start = amp + 1;
  }
  return out;
}

ServerResponse legacy_error(int status, std::string_view error_type, const std::string& id,
                            const std::string& message) {
  ServerResponse r;
  r.status = status;
  r.headers = {{"Content-Type", "application/json"}};
  r.body =
      json{{"type", legacy_error_type(error_type)},
           {"value",
            json{{"error_type", error_type},
                 {"messages",
                  json::array({json{{"id", id}, {"default_message", message}, {"args", json::array()}}})}}}}
          .dump();
  return r;
}

}  // namespace

std::string legacy_error_type(std::string_view api_error_type) {
  std::string out = "com.vmware.vapi.std.errors.";
  for (char c : api_error_type) out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

int legacy_status(std::string_view type, int api_status) {
  if (type == "UNAUTHENTICATED") return 401;
  if (type == "UNAUTHORIZED") return 403;
  if (type == "NOT_FOUND") return 404;
  if (type == "SERVICE_UNAVAILABLE") return 503;
  if (type == "TIMED_OUT") return 504;
  if (type == "ERROR" || type == "INTERNAL_SERVER_ERROR") return api_status;
  // Every other standard error is a "bad request" in the legacy mapping, including RESOURCE_BUSY and
  // UNABLE_TO_ALLOCATE_RESOURCE (the /rest vcenter/vm list documents 400 for the 4,000-VM limit).
  return 400;
}

std::optional<ServerResponse> translate_request(ServerRequest& req, Translation& out) {
  std::string path = req.path.substr(std::string_view("/rest").size());  // "/vcenter/vm/..." etc.
  std::string query = translate_query(req.query);
  std::string method = req.method;
  const bool get_action = query.find("action=get") != std::string::npos;

  if (path == "/com/vmware/cis/session") {
    path = "/session";
    if (method == "POST" && get_action) {
      method = "GET";
      query.clear();
    }
  } else {
    // POST /vcenter/vm/{vm}/power/{action}  ->  POST /vcenter/vm/{vm}/power?action={action}
    const std::string power_marker = "/power/";
    const std::size_t power = path.rfind(power_marker);
    if (path.rfind("/vcenter/vm/", 0) == 0 && power != std::string::npos &&
        path.find('/', power + power_marker.size()) == std::string::npos && method == "POST") {
      const std::string action = path.substr(power + power_marker.size());
      path.resize(power + power_marker.size() - 1);
      query = "action=" + action + (query.empty() ? "" : "&" + query);
    }
  }

  // Request specs travel wrapped as {"spec": ...}.
  const bool clone = path == "/vcenter/vm" && method == "POST" &&
                     (query.find("action=clone") != std::string::npos ||
                      query.find("action=instant-clone") != std::string::npos);
  const bool customization =
      method == "PUT" && path.size() > 20 && path.compare(path.size() - 20, 20, "/guest/customization") == 0;
  if (clone || customization) {
    json body = json::parse(req.body, nullptr, false);
    if (body.is_discarded() || !body.is_object() || !body.contains("spec") || !body["spec"].is_object()) {
      return legacy_error(400, "INVALID_ARGUMENT", "vapi.bindings.method.impl.unexpected",
                          "The request body must be an object with a 'spec' member.");
    }
    json spec = std::move(body["spec"]);
    // Maps travel as [{key, value}] in /rest (CloneSpec.disks_to_update).
    if (spec.contains("disks_to_update") && spec["disks_to_update"].is_array()) {
      json map = json::object();
      for (const auto& kv : spec["disks_to_update"]) {
        if (!kv.is_object() || !kv.contains("key") || !kv["key"].is_string() || !kv.contains("value")) {
          return legacy_error(400, "INVALID_ARGUMENT", "vapi.bindings.method.impl.unexpected",
                              "'disks_to_update' entries must be {\"key\", \"value\"} objects.");
        }
        map[kv["key"].get<std::string>()] = kv["value"];
      }
      spec["disks_to_update"] = std::move(map);
    }
    req.body = spec.dump();
  }

  out.shape = ResultShape::value;
  if (method == "GET" && path.rfind("/vcenter/vm/", 0) == 0 &&
      path.find('/', std::string_view("/vcenter/vm/").size()) == std::string::npos) {
    out.shape = ResultShape::vm_info;
  }
  req.method = method;
  req.path = "/api" + path;
  req.query = query;
  req.target = req.path + (query.empty() ? "" : "?" + query);
  return std::nullopt;
}

ServerResponse to_legacy_response(ServerResponse r, const Translation& translation) {
  if (r.status >= 400) {
    json body = json::parse(r.body, nullptr, false);
    if (!body.is_object() || !body.contains("error_type") || !body["error_type"].is_string()) return r;
    const std::string type = body["error_type"];
    json value{{"error_type", type}, {"messages", body.value("messages", json::array())}};
    r.status = legacy_status(type, r.status);
    r.body = json{{"type", legacy_error_type(type)}, {"value", std::move(value)}}.dump();
    return r;
  }
  if (r.status == 201 || r.status == 204) r.status = 200;
  if (r.body.empty()) return r;
  json body = json::parse(r.body, nullptr, false);
  if (body.is_discarded()) return r;
  if (translation.shape == ResultShape::vm_info && body.is_object()) {
    for (std::string_view key : kVmInfoMaps) {
      auto it = body.find(std::string(key));
      if (it == body.end() || !it->is_object()) continue;
      json entries = json::array();
      for (auto& [k, v] : it->items()) entries.push_back(json{{"key", k}, {"value", v}});
      *it = std::move(entries);
    }
  }
  r.body = json{{"value", std::move(body)}}.dump();
  return r;
}

}  // namespace bootstorm::sim::vcenter::legacy_rest

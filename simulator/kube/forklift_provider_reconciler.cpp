// The Provider reconciler: validates type, URL and secret as forklift-controller does
// (pkg/controller/provider/validation.go), then tests the connection against the lab's vCenter (credentials,
// SDK URL, CA certificate) and writes the Provider's conditions and phase.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/base64.hpp"
#include "common/log.hpp"
#include "simulator/kube/api_objects.hpp"
#include "simulator/kube/detail/forklift_conditions.hpp"
#include "simulator/kube/detail/forklift_reconcilers.hpp"

namespace bootstorm::sim::kube::forklift {
namespace {

std::optional<std::string> secret_value(const json& secret, const std::string& key) {
  const json& string_data = field(secret, {"stringData", key.c_str()});
  if (string_data.is_string()) return string_data.get<std::string>();
  const json& data = field(secret, {"data", key.c_str()});
  if (!data.is_string()) return std::nullopt;
  auto decoded = base64_decode(data.get<std::string>());
  return decoded ? decoded : std::optional<std::string>(std::string());
}

// The SHA-1-style fingerprint Forklift shows for the vCenter certificate: derived from the URL here,
// stable.
std::string fingerprint(const std::string& url) {
  std::uint64_t h1 = 1469598103934665603ULL, h2 = 1099511628211ULL;
  for (unsigned char c : url) {
    h1 = (h1 ^ c) * 1099511628211ULL;
    h2 = (h2 + c) * 6364136223846793005ULL + 1442695040888963407ULL;
  }
  std::string hex = fmt::format("{:016X}{:016X}", h1, h2);
  std::string out;
  for (std::size_t i = 0; i + 1 < 40 && i + 1 < hex.size(); i += 2) {
    if (!out.empty()) out += ':';
    out += hex.substr(i, 2);
  }
  return out;
}

}  // namespace

void reconcile_provider(ClusterState& cluster, const ObjectPtr& provider) {
  const json& o = provider->object;
  std::string type = string_field(o, {"spec", "type"});
  std::string url = string_field(o, {"spec", "url"});
  std::vector<Condition> conditions;
  std::string phase;
  static const std::vector<std::string> kTypes = {"openshift", "vsphere", "ovirt", "openstack", "ova"};
  if (std::find(kTypes.begin(), kTypes.end(), type) == kTypes.end()) {
    phase = "ValidationFailed";
    conditions.push_back({"ProviderTypeNotSupported", "NotSupported", "Critical",
                          "The `type` must be: [openshift vsphere ovirt openstack ova]"});
  }
  const bool host = type == "openshift" && url.empty();
  std::optional<json> secret;
  if (!host && conditions.empty()) {
    if (url.empty()) {
      phase = "ValidationFailed";
      conditions.push_back({"UrlNotValid", "NotSet", "Critical", "The `url` is not valid."});
    }
    Condition secret_cond{"SecretNotValid", "NotSet", "Critical", "The `secret` is not valid."};
    std::string secret_name = string_field(o, {"spec", "secret", "name"});
    std::string secret_ns = string_field(o, {"spec", "secret", "namespace"});
    if (secret_ns.empty()) secret_ns = o["metadata"].value("namespace", "");
    if (secret_name.empty()) {
      phase = "ValidationFailed";
      conditions.push_back(secret_cond);
    } else if (auto stored = cluster.get(Kind::secrets, secret_ns, secret_name); !stored) {
      phase = "ValidationFailed";
      secret_cond.reason = "NotFound";
      conditions.push_back(secret_cond);
    } else {
      secret = stored->object;
      std::vector<std::string> keys = {"user", "password"};
      bool insecure = false;
      if (auto flag = secret_value(*secret, "insecureSkipVerify")) {
        std::string lower = *flag;
        std::transform(lower.begin(), lower.end(), lower.begin(),
                       [](unsigned char c) { return std::tolower(c); });
        insecure = lower == "true";
      }
      if (type == "vsphere" && insecure) {
        conditions.push_back(
            {"ConnectionInsecure", "SkipTLSVerification", "Warn",
             "TLS is susceptible to machine-in-the-middle attacks when certificate verification "
             "is skipped."});
      }
      if (type == "vsphere" && !insecure) keys.push_back("cacert");
      if (type == "openshift") keys = {"token"};
      for (const auto& key : keys) {
        if (!secret_value(*secret, key)) secret_cond.items.push_back(key);
      }
      if (!secret_cond.items.empty()) {
        phase = "ValidationFailed";
        secret_cond.reason = "DataErr";
        conditions.push_back(secret_cond);
      }
    }
  }
  if (!any_blocker(conditions)) {
    std::string failure;
    bool auth_failed = false;
    if (!host) {
      if (type != "vsphere") {
        failure = "the lab simulates vSphere sources only";
      } else if (!url.starts_with("https://")) {
        failure = fmt::format(
            "Post \"{}\": unsupported protocol scheme; the vCenter SDK URL is https://<vcenter>/sdk", url);
      } else {
        std::string rest = url.substr(8);
        auto slash = rest.find('/');
        std::string hostport = rest.substr(0, slash);
        std::string path = slash == std::string::npos ? "" : rest.substr(slash);
        if (hostport.empty()) {
          failure = fmt::format("parse \"{}\": missing host", url);
        } else if (path != "/sdk" && path != "/sdk/") {
          failure = fmt::format("Post \"{}\": 404 Not Found (the vCenter SDK endpoint is /sdk)", url);
        } else {
          std::string user = secret_value(*secret, "user").value_or("");
          std::string password = secret_value(*secret, "password").value_or("");
          if (!password.empty()) log::register_secret(password);
          std::string cacert = secret_value(*secret, "cacert").value_or("");
          bool insecure = has_condition(conditions, "ConnectionInsecure");
          if (user != cluster.lab().spec().vcenter.username ||
              password != cluster.lab().spec().vcenter.password) {
            auth_failed = true;
            failure = "ServerFaultCode: Cannot complete login due to an incorrect user name or password.";
          } else if (!insecure && cacert.find("-----BEGIN CERTIFICATE-----") == std::string::npos) {
            failure = fmt::format(
                "Post \"{}\": tls: failed to verify certificate: x509: certificate signed by "
                "unknown authority (cacert holds no PEM certificate)",
                url);
          }
        }
      }
    }
    if (auth_failed) {
      phase = "ConnectionFailed";
      conditions.push_back(
          {"ConnectionAuthFailed", "Tested", "Critical", "Connection auth failed, error: " + failure});
    } else if (!failure.empty()) {
      phase = "ConnectionFailed";
      conditions.push_back(
          {"ConnectionTestFailed", "Tested", "Critical", "Connection test, failed: " + failure});
    } else {
      conditions.push_back({"ConnectionTestSucceeded", "Tested", "Required", "Connection test, succeeded."});
      conditions.push_back({"InventoryCreated", "Completed", "Required", "The inventory has been loaded."});
    }
  }
  if (!any_blocker(conditions)) {
    conditions.push_back({"Validated", "Completed", "Advisory", "Validation has been completed."});
    conditions.push_back({"Ready", "", "Required", "The provider is ready."});
    phase = "Ready";
  }
  std::string secret_rv = secret ? string_field(*secret, {"metadata", "resourceVersion"}) : "";
  write_conditions(cluster, Kind::forklift_providers, provider, conditions, [&](json& status) {
    status["phase"] = phase;
    if (!secret_rv.empty()) {
      status["secretResourceVersion"] = secret_rv;
    } else {
      status.erase("secretResourceVersion");
    }
    if (!host && phase == "Ready") status["fingerprint"] = fingerprint(url);
  });
}

}  // namespace bootstorm::sim::kube::forklift

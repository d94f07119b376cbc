#include "providers/api/platform_facts.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <set>

namespace bootstorm::api {

namespace {

void put(nlohmann::ordered_json& out, const char* key, const std::string& value) {
  if (!value.empty()) out[key] = value;
}

std::string text(const nlohmann::json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// "ESXi 8.0.2 build-22380479 on 4 hosts" when every host runs the same version, else each host's.
std::string hosts_line(const std::vector<HostFacts>& hosts) {
  std::map<std::string, std::vector<std::string>> by_version;
  for (const auto& h : hosts)
    if (!h.version.empty()) by_version[h.version].push_back(h.name);
  if (by_version.empty()) return {};
  if (by_version.size() == 1) {
    const auto& [version, names] = *by_version.begin();
    return names.size() == 1 ? fmt::format("{} on {}", version, names.front())
                             : fmt::format("{} on {} hosts", version, names.size());
  }
  std::string out;
  for (const auto& [version, names] : by_version)
    out += fmt::format("{}{} on {}", out.empty() ? "" : ", ", version, fmt::join(names, " "));
  return out;
}

}  // namespace

std::string lab_profile_of(const std::string& simulator) {
  if (simulator.starts_with(kLabSimulatorPrefix) && simulator.size() > kLabSimulatorPrefix.size())
    return simulator.substr(kLabSimulatorPrefix.size());
  return simulator;
}

nlohmann::ordered_json facts_to_json(const PlatformFacts& facts) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  put(out, "product", facts.product);
  put(out, "version", facts.version);
  put(out, "build", facts.build);
  put(out, "simulator", facts.simulator);
  if (!facts.components.empty()) {
    nlohmann::ordered_json components = nlohmann::ordered_json::object();
    for (const auto& [name, version] : facts.components) components[name] = version;
    out["components"] = std::move(components);
  }
  if (!facts.hosts.empty()) {
    nlohmann::ordered_json hosts = nlohmann::ordered_json::array();
    for (const auto& h : facts.hosts) {
      nlohmann::ordered_json host = {{"name", h.name}};
      put(host, "cpuModel", h.cpu_model);
      put(host, "version", h.version);
      hosts.push_back(std::move(host));
    }
    out["hosts"] = std::move(hosts);
  }
  put(out, "storageClass", facts.storage_class);
  put(out, "provisioner", facts.provisioner);
  put(out, "cloneMethod", facts.clone_method);
  return out;
}

PlatformFacts facts_from_json(const nlohmann::json& document) {
  PlatformFacts facts;
  if (!document.is_object()) return facts;
  facts.product = text(document, "product");
  facts.version = text(document, "version");
  facts.build = text(document, "build");
  facts.simulator = text(document, "simulator");
  if (auto it = document.find("components"); it != document.end() && it->is_object()) {
    for (const auto& [name, version] : it->items())
      if (version.is_string()) facts.components[name] = version.get<std::string>();
  }
  if (auto it = document.find("hosts"); it != document.end() && it->is_array()) {
    for (const auto& h : *it) {
      if (!h.is_object()) continue;
      facts.hosts.push_back({text(h, "name"), text(h, "cpuModel"), text(h, "version")});
    }
  }
  facts.storage_class = text(document, "storageClass");
  facts.provisioner = text(document, "provisioner");
  facts.clone_method = text(document, "cloneMethod");
  return facts;
}

std::string describe(const PlatformFacts& facts) {
  std::vector<std::string> parts;
  std::string head = facts.product;
  if (!facts.version.empty()) head += (head.empty() ? "" : " ") + facts.version;
  if (!facts.build.empty()) head += (head.empty() ? "build " : " build ") + facts.build;
  if (!head.empty()) parts.push_back(head);
  for (const auto& [name, version] : facts.components) parts.push_back(name + " " + version);
  if (auto hosts = hosts_line(facts.hosts); !hosts.empty()) parts.push_back(hosts);
  if (!facts.storage_class.empty())
    parts.push_back("storage class " + facts.storage_class +
                    (facts.provisioner.empty() ? "" : " (" + facts.provisioner + ")") +
                    (facts.clone_method.empty() ? "" : ", CDI clones by " + facts.clone_method));
  std::string line = fmt::format("{}", fmt::join(parts, "; "));
  if (!facts.simulator.empty()) line += (line.empty() ? "" : " ") + ("[" + facts.simulator + "]");
  return line;
}

std::vector<std::string> differences(const PlatformFacts& a, const PlatformFacts& b) {
  std::vector<std::string> out;
  auto compare = [&out](const std::string& what, const std::string& x, const std::string& y) {
    if (!x.empty() && !y.empty() && x != y) out.push_back(fmt::format("{}: {} vs {}", what, x, y));
  };
  // A run against a simulator and one against a real platform: both recorded what they ran on.
  if (!a.product.empty() && !b.product.empty() && a.simulator != b.simulator) {
    out.push_back(fmt::format("simulator: {} vs {}", a.simulator.empty() ? "none" : a.simulator,
                              b.simulator.empty() ? "none" : b.simulator));
  }
  compare("product", a.product, b.product);
  compare("version", a.version, b.version);
  compare("build", a.build, b.build);
  std::set<std::string> names;
  for (const auto& [name, _] : a.components) names.insert(name);
  for (const auto& [name, _] : b.components) names.insert(name);
  for (const auto& name : names) {
    auto x = a.components.find(name);
    auto y = b.components.find(name);
    compare(name, x == a.components.end() ? "" : x->second, y == b.components.end() ? "" : y->second);
  }
  compare("host versions", hosts_line(a.hosts), hosts_line(b.hosts));
  std::set<std::string> cpus_a, cpus_b;
  for (const auto& h : a.hosts)
    if (!h.cpu_model.empty()) cpus_a.insert(h.cpu_model);
  for (const auto& h : b.hosts)
    if (!h.cpu_model.empty()) cpus_b.insert(h.cpu_model);
  if (!cpus_a.empty() && !cpus_b.empty() && cpus_a != cpus_b)
    out.push_back(fmt::format("CPU models: {} vs {}", fmt::join(cpus_a, ", "), fmt::join(cpus_b, ", ")));
  compare("storage class", a.storage_class, b.storage_class);
  compare("provisioner", a.provisioner, b.provisioner);
  compare("clone method", a.clone_method, b.clone_method);
  return out;
}

}  // namespace bootstorm::api

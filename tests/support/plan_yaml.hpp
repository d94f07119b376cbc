#pragma once
// A StormPlan as the tests that drive the CLI write one (tests/e2e, tests/integration): the keys a test
// sets, rendered as a plan file (docs/DESIGN.md "Plan format") with apiVersion and kind filled in. Scalars
// (name, kind, endpoint, lab, namespace, scenario names, hosts, cleanup, output) are quoted only where YAML
// needs it; the sections (golden, storm, ready, slo, telemetry) and the extra lines are YAML text as the
// test writes it, e.g. golden = "{vm: tiny-golden, clone: linked}". An empty field is left out, so a test
// that wants a key missing leaves it empty.
#include <cctype>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace bootstorm::test_support {

struct PlanYaml {
  struct Platform {
    std::string kind;
    std::string endpoint;
    std::string lab;                 // endpoint: embedded only
    std::vector<std::string> extra;  // further keys, a line each: "api: vim25", "apiBudget: {...}"
  };
  struct Placement {
    std::string host;
    int vms = 0;
  };
  struct Scenario {
    std::string name;
    std::vector<Placement> placement;
  };

  std::string name;
  Platform platform;
  std::string golden;  // its keys depend on platform.kind
  std::string ns;      // `namespace` (kubevirt only)
  std::vector<Scenario> scenarios;
  std::string storm;
  std::string ready;
  std::string slo;
  std::string telemetry;
  std::string cleanup;
  std::string output;
  std::vector<std::string> extra;  // further top-level lines, e.g. "repeat: 1"

  std::string text() const {
    std::string t = "apiVersion: bootstorm.io/v1\nkind: StormPlan\n";
    const auto put = [&t](const char* key, const std::string& yaml) {
      if (!yaml.empty()) t += std::string(key) + ": " + yaml + "\n";
    };
    const auto put_scalar = [&put](const char* key, const std::string& value) {
      if (!value.empty()) put(key, scalar(value));
    };
    put_scalar("name", name);
    if (!platform.kind.empty() || !platform.endpoint.empty() || !platform.lab.empty() ||
        !platform.extra.empty()) {
      t += "platform:\n";
      put_scalar("  kind", platform.kind);
      put_scalar("  endpoint", platform.endpoint);
      put_scalar("  lab", platform.lab);
      for (const std::string& line : platform.extra) t += "  " + line + "\n";
    }
    put("golden", golden);
    put_scalar("namespace", ns);
    if (!scenarios.empty()) t += "scenarios:\n";
    for (const Scenario& s : scenarios) {
      t += "  - name: " + scalar(s.name) + "\n    placement: [";
      for (std::size_t i = 0; i < s.placement.size(); ++i) {
        if (i > 0) t += ", ";
        t += "{host: " + scalar(s.placement[i].host) + ", vms: " + std::to_string(s.placement[i].vms) + "}";
      }
      t += "]\n";
    }
    put("storm", storm);
    put("ready", ready);
    put("slo", slo);
    put("telemetry", telemetry);
    put_scalar("cleanup", cleanup);
    put_scalar("output", output);
    for (const std::string& line : extra) t += line + "\n";
    return t;
  }

  void write(const std::filesystem::path& file) const {
    std::ofstream(file, std::ios::binary | std::ios::trunc) << text();
  }

  // `value` as a YAML scalar that reads back as that string: plain when it is only letters, digits, spaces
  // and _ . / - (not starting with - or a space, and not null), double-quoted otherwise. Endpoints
  // ("lab:DIR", "https://...") are quoted: a plain scalar with a colon is ambiguous inside a flow mapping.
  static std::string scalar(const std::string& value) {
    bool plain = !value.empty() && value.front() != '-' && value.front() != ' ' && value.back() != ' ' &&
                 value != "null" && value != "Null" && value != "NULL";
    for (char c : value)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != ' ' && c != '_' && c != '.' && c != '/' &&
          c != '-')
        plain = false;
    if (plain) return value;
    std::string quoted = "\"";
    for (char c : value) {
      if (c == '"' || c == '\\') quoted += '\\';
      quoted += c;
    }
    return quoted + "\"";
  }
};

}  // namespace bootstorm::test_support

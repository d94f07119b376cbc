#pragma once
// The external programs the suite drives as independent clients and checkers (kubectl, chromium, curl,
// shellcheck, Debian's python3), found on PATH as a shell would find them, and what a test does when one is
// missing: on a developer's machine it skips, saying which Debian package provides the tool; with CI=true or
// under `deploy/setup test` (BOOTSTORM_REQUIRE_TOOLS=1) it fails, so a green suite never hides evidence that
// did not run. Skips by design (a fault a platform cannot have) do not use this and are listed in
// tests/README.md.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace bootstorm::test_support {

// The absolute path of the executable `name` on $PATH (first match), or nullopt. A name with a '/' is
// checked as it is.
inline std::optional<std::filesystem::path> find_tool(std::string_view name) {
  auto executable = [](const std::filesystem::path& p) {
    std::error_code ec;
    return std::filesystem::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
  };
  if (name.find('/') != std::string_view::npos) {
    std::filesystem::path p(name);
    return executable(p) ? std::optional(std::filesystem::absolute(p)) : std::nullopt;
  }
  const char* path = std::getenv("PATH");
  std::string_view dirs = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  while (true) {
    const auto colon = dirs.find(':');
    std::string_view dir = dirs.substr(0, colon);
    std::filesystem::path candidate = std::filesystem::path(dir.empty() ? "." : std::string(dir)) / name;
    if (executable(candidate)) return std::filesystem::absolute(candidate);
    if (colon == std::string_view::npos) return std::nullopt;
    dirs.remove_prefix(colon + 1);
  }
}

// True where a missing tool fails its test instead of skipping it: CI=true, or BOOTSTORM_REQUIRE_TOOLS=1
// (set by deploy/setup test, which has just installed every tool).
inline bool tools_required() {
  auto is_set = [](const char* var, std::string_view want) {
    const char* v = std::getenv(var);
    return v != nullptr && std::string_view(v) == want;
  };
  return is_set("CI", "true") || is_set("BOOTSTORM_REQUIRE_TOOLS", "1");
}

// kubectl: $BOOTSTORM_KUBECTL when set (the second run of the kubectl tests, against Debian's 1.20 that
// deploy/setup test unpacks into the build tree), else the first on PATH.
inline std::optional<std::filesystem::path> find_kubectl() {
  const char* pinned = std::getenv("BOOTSTORM_KUBECTL");
  return find_tool(pinned != nullptr && *pinned != '\0' ? std::string_view(pinned) : "kubectl");
}

// promtool: Debian's, that deploy/setup test unpacks into the build tree (installing the prometheus package
// would enable its server), else the first on PATH.
inline std::optional<std::filesystem::path> find_promtool() {
  const std::filesystem::path unpacked =
      std::filesystem::path(BOOTSTORM_BINARY_DIR) / "debian-prometheus" / "usr" / "bin" / "promtool";
  if (::access(unpacked.c_str(), X_OK) == 0) return unpacked;
  return find_tool("promtool");
}

// Why a test needs kubectl, and where the pinned one was expected when it is missing.
inline std::string kubectl_detail(std::string why) {
  if (const char* pinned = std::getenv("BOOTSTORM_KUBECTL"); pinned != nullptr && *pinned != '\0')
    why += std::string(why.empty() ? "" : "; ") + "BOOTSTORM_KUBECTL=" + pinned +
           " is missing: deploy/setup test unpacks Debian's kubectl there";
  return why;
}

inline std::string missing_tool_message(std::string_view tool, std::string_view package,
                                        std::string_view detail = {}) {
  std::string m = std::string(tool) + " is not available";
  if (!detail.empty()) m += " (" + std::string(detail) + ")";
  m += ": install the Debian package " + std::string(package) + " (deploy/setup test installs it)";
  return m;
}

}  // namespace bootstorm::test_support

// In a test body or SetUp(): the test cannot run because `tool` is missing (or unusable, `detail` says how).
// Fails under CI / deploy/setup test, skips elsewhere; either way it returns from the function.
#define BOOTSTORM_MISSING_TOOL(tool, package, ...)                                                 \
  do {                                                                                             \
    const std::string bootstorm_missing_ =                                                         \
        ::bootstorm::test_support::missing_tool_message(tool, package __VA_OPT__(, ) __VA_ARGS__); \
    if (::bootstorm::test_support::tools_required()) GTEST_FAIL() << bootstorm_missing_;           \
    GTEST_SKIP() << bootstorm_missing_;                                                            \
  } while (false)

// kubectl is missing: `why` says what the test needs it for.
#define BOOTSTORM_MISSING_KUBECTL(why) \
  BOOTSTORM_MISSING_TOOL("kubectl", "kubernetes-client", ::bootstorm::test_support::kubectl_detail(why))

// deploy/guest: the in-guest beacon agents. The Linux agent is shellcheck-clean and is run for real (sh +
// curl) against the beacon listener of orchestrator/beacon on loopback, configured exactly as the KubeVirt
// provider hands it over (the beacon.env of its cloud-init user data): a valid token marks the VM ready, a
// bad token is rejected (401) and the agent exits 1. The Windows agent cannot run here: its request (URL
// path, method, content type and JSON fields) is read from the script and replayed against the same listener.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "orchestrator/beacon/listener.hpp"
#include "providers/kubevirt/kube_objects.hpp"
#include "tests/support/beacon_listener_thread.hpp"
#include "tests/support/scratch_dir.hpp"
#include "tests/support/tools.hpp"

namespace bootstorm::beacon {
namespace {

namespace fs = std::filesystem;
const fs::path kGuest = fs::path(BOOTSTORM_SOURCE_DIR) / "deploy" / "guest";

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Shell {
  int exit_code = -1;
  std::string output;
};

// Runs `command` through /bin/sh, stdout+stderr captured.
Shell shell(const std::string& command) {
  Shell r;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return r;
  char buf[4096];
  while (std::size_t n = std::fread(buf, 1, sizeof buf, pipe)) r.output.append(buf, n);
  const int status = ::pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

TEST(GuestScripts, LinuxAgentSetupAndPackageScriptsAreShellcheckClean) {
  if (!bootstorm::test_support::find_tool("shellcheck")) BOOTSTORM_MISSING_TOOL("shellcheck", "shellcheck");
  const fs::path deploy = fs::path(BOOTSTORM_SOURCE_DIR) / "deploy";
  for (const fs::path& script : {kGuest / "linux" / "bootstorm-beacon.sh", deploy / "setup",
                                 deploy / "package" / "check", deploy / "package" / "manpage.sh"}) {
    Shell r = shell("shellcheck --severity=style '" + script.string() + "'");
    EXPECT_EQ(r.exit_code, 0) << script << ":\n" << r.output;
  }
}

class GuestAgentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ListenerOptions o;
    o.run_id = "ab12cd";
    auto started = beacon_.start(o, [](Listener& listener) { listener.expect(kVm, "uid-1"); });
    ASSERT_TRUE(started) << started.error().what();
    listener_ = &beacon_.listener();
  }
  std::vector<api::MilestoneEvent> events() { return beacon_.events(); }
  template <class T, class F>
  T on_listener(F f) {
    return beacon_.on_listener<T>(f);
  }
  std::string token() {
    return on_listener<std::string>([this] { return listener_->token_for(kVm); });
  }
  std::string url() {
    return on_listener<std::string>([this] { return listener_->url(); });
  }

  // beacon.env exactly as the KubeVirt provider's cloud-init user data writes it.
  fs::path provider_beacon_env(const std::string& token_value) {
    kubevirt::VmBuild build;
    build.name = kVm;
    build.beacon_url = url();
    build.beacon_token = token_value;
    const std::string user_data = kubevirt::cloud_init_user_data(build);
    std::string env;
    std::istringstream in(user_data);
    bool content = false;
    for (std::string line; std::getline(in, line);) {
      if (line.find("content: |") != std::string::npos) {
        content = true;
        continue;
      }
      if (content && line.rfind("      ", 0) == 0) {
        env += line.substr(6) + "\n";
      } else if (content) {
        content = false;
      }
    }
    EXPECT_NE(env.find("BOOTSTORM_BEACON_TOKEN="), std::string::npos) << user_data;
    const fs::path file = dir_ / "beacon.env";
    std::ofstream(file) << env;
    return file;
  }

  Shell run_linux_agent(const fs::path& conf) {
    return shell("env -i PATH=/usr/bin:/bin BOOTSTORM_BEACON_CONF='" + conf.string() +
                 "' BOOTSTORM_BEACON_ATTEMPTS=3 sh '" + (kGuest / "linux" / "bootstorm-beacon.sh").string() +
                 "'");
  }

  static constexpr const char* kVm = "bs-ab12cd-desk-001";
  test_support::BeaconListenerThread beacon_;
  Listener* listener_ = nullptr;
  test_support::ScratchDir dir_{"guest"};
};

TEST_F(GuestAgentTest, LinuxAgentWithTheProvidersConfigMarksTheVmReady) {
  if (!bootstorm::test_support::find_tool("curl")) BOOTSTORM_MISSING_TOOL("curl", "curl");
  Shell r = run_linux_agent(provider_beacon_env(token()));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("ready reported for " + std::string(kVm)), std::string::npos) << r.output;
  auto got = events();
  ASSERT_EQ(got.size(), 1u) << r.output;
  EXPECT_EQ(got[0].vm, kVm);
  EXPECT_EQ(got[0].milestone, api::Milestone::beacon);
  EXPECT_EQ(on_listener<std::uint64_t>([this] { return listener_->stats().accepted; }), 1u);
  // Run again (the unit restarts at the next boot): a replay is answered 200 "duplicate" and changes nothing.
  Shell again = run_linux_agent(dir_ / "beacon.env");
  EXPECT_EQ(again.exit_code, 0) << again.output;
  EXPECT_EQ(events().size(), 1u);
}

TEST_F(GuestAgentTest, LinuxAgentWithABaseUrlAppendsThePath) {
  if (!bootstorm::test_support::find_tool("curl")) BOOTSTORM_MISSING_TOOL("curl", "curl");
  std::string base = url();
  base.erase(base.size() - std::string("/v1/ready").size());
  const fs::path conf = dir_ / "base.env";
  std::ofstream(conf) << "BOOTSTORM_BEACON_URL=" << base << "/\nBOOTSTORM_BEACON_TOKEN=" << token()
                      << "\nBOOTSTORM_VM_NAME=" << kVm << "\n";
  Shell r = run_linux_agent(conf);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(events().size(), 1u);
}

TEST_F(GuestAgentTest, LinuxAgentWithABadTokenIsRejectedAndGivesUp) {
  if (!bootstorm::test_support::find_tool("curl")) BOOTSTORM_MISSING_TOOL("curl", "curl");
  std::string bad = token();
  bad[0] = bad[0] == '0' ? '1' : '0';
  Shell r = run_linux_agent(provider_beacon_env(bad));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("HTTP 401"), std::string::npos) << r.output;
  EXPECT_TRUE(events().empty());
  EXPECT_EQ(on_listener<std::uint64_t>([this] { return listener_->stats().unauthorized; }), 1u)
      << "a 401 is final: the agent must not retry";
}

TEST_F(GuestAgentTest, WindowsAgentRequestShapeIsAcceptedByTheListener) {
  if (!bootstorm::test_support::find_tool("curl")) BOOTSTORM_MISSING_TOOL("curl", "curl");
  const std::string ps1 = slurp(kGuest / "windows" / "bootstorm-beacon.ps1");
  // The body: a hashtable converted to JSON; its keys are the fields the agent sends.
  std::smatch m;
  ASSERT_TRUE(std::regex_search(ps1, m, std::regex(R"(\$body\s*=\s*@\{([^}]*)\}\s*\|\s*ConvertTo-Json)")))
      << "bootstorm-beacon.ps1 no longer builds $body from a hashtable";
  std::vector<std::string> keys;
  const std::string fields = m[1];
  const std::regex field(R"((\w+)\s*=\s*\$(\w+))");
  for (std::sregex_iterator it(fields.begin(), fields.end(), field), end; it != end; ++it)
    keys.push_back((*it)[1]);
  EXPECT_EQ(keys, (std::vector<std::string>{"vm", "token", "ip"}));
  // Method, content type, and the endpoint: the handed-over URL as is, or a base URL + /v1/ready.
  EXPECT_TRUE(std::regex_search(
      ps1,
      std::regex(
          R"(Invoke-RestMethod\s+-Method\s+Post\s+-Uri\s+\$endpoint\s+-ContentType\s+'application/json')")));
  EXPECT_NE(ps1.find("EndsWith('/v1/ready')"), std::string::npos);
  EXPECT_NE(ps1.find("$endpoint + '/v1/ready'"), std::string::npos);
  // The installer registers the startup and the logon task.
  const std::string install = slurp(kGuest / "windows" / "install-beacon.ps1");
  EXPECT_NE(install.find("New-ScheduledTaskTrigger -AtStartup"), std::string::npos);
  EXPECT_NE(install.find("New-ScheduledTaskTrigger -AtLogOn"), std::string::npos);

  // Replay that request (the values as the script would fill them) against the listener.
  nlohmann::json body;
  const std::map<std::string, std::string> values = {{"vm", kVm}, {"token", token()}, {"ip", "10.0.0.5"}};
  for (const auto& k : keys) body[k] = values.at(k);
  const fs::path file = dir_ / "body.json";
  std::ofstream(file) << body.dump();
  Shell r =
      shell("curl -sS -o /dev/null -w '%{http_code}' -X POST -H 'Content-Type: application/json' --data @'" +
            file.string() + "' '" + url() + "'");
  EXPECT_EQ(r.output, "200");
  ASSERT_EQ(events().size(), 1u);
  EXPECT_EQ(events()[0].vm, kVm);
}

}  // namespace
}  // namespace bootstorm::beacon

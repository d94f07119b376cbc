// Kubeconfig loading and merging, in-cluster configuration, exec credential plugins and credential caching.
#include "protocol/kube/kube_config.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "tests/support/scratch_dir.hpp"

namespace bootstorm::kube {
namespace {
namespace fs = std::filesystem;

const std::string kPlugin = std::string(BOOTSTORM_TEST_DATA) + "/kubevirt/exec-plugin.sh";

// A scratch directory the tests write kubeconfigs (and the files they name) into.
class TempDir {
 public:
  std::string write(const std::string& name, const std::string& content) const {
    fs::path p = dir_ / name;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << content;
    return p.string();
  }
  std::string path() const { return dir_.string(); }

 private:
  test_support::ScratchDir dir_{"kubeconfig"};
};

// Sets an environment variable for the scope of a test and restores it.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_)
      setenv(name_, old_->c_str(), 1);
    else
      unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

const char* kFirst = R"(apiVersion: v1
kind: Config
current-context: lab
clusters:
- name: lab
  cluster:
    server: https://first.example:6443
    certificate-authority: certs/ca.pem
- name: shared
  cluster:
    server: https://shared-from-first:6443
users:
- name: alice
  user:
    token: first-file-token
contexts:
- name: lab
  context: {cluster: lab, user: alice, namespace: desktops}
)";

const char* kSecond = R"(apiVersion: v1
kind: Config
current-context: other
clusters:
- name: shared
  cluster:
    server: https://shared-from-second:6443
    insecure-skip-tls-verify: true
- name: prod
  cluster:
    server: https://prod.example:6443
    certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCmFiYwotLS0tLUVORCBDRVJUSUZJQ0FURS0tLS0tCg==
users:
- name: alice
  user:
    token: second-file-token
- name: bob
  user:
    client-certificate-data: Y2VydA==
    client-key-data: a2V5LWRhdGEtc2VjcmV0
- name: carol
  user:
    tokenFile: tokens/carol
contexts:
- name: other
  context: {cluster: shared, user: bob}
- name: prod
  context: {cluster: prod, user: carol}
- name: lab
  context: {cluster: prod, user: bob}
)";

TEST(Kubeconfig, MergesFilesFirstFileWinsForEveryNameAndCurrentContext) {
  TempDir dir;
  std::string a = dir.write("a/config", kFirst);
  std::string b = dir.write("b/config", kSecond);
  auto cfg = load_kubeconfig({a, b}, "", false);
  ASSERT_TRUE(cfg) << cfg.error().what();
  // current-context from the first file; the first file's "lab" context, cluster and user win.
  EXPECT_EQ(cfg->context, "lab");
  EXPECT_EQ(cfg->server, "https://first.example:6443");
  EXPECT_EQ(cfg->auth.token, "first-file-token");
  EXPECT_EQ(cfg->default_namespace, "desktops");
  // Relative paths resolve against the directory of the file that names them.
  EXPECT_EQ(cfg->tls.ca_file, (fs::path(dir.path()) / "a/certs/ca.pem").string());
  EXPECT_NE(cfg->source.find("context lab"), std::string::npos);

  // A context only the second file defines, using a cluster name both define: the first file's cluster wins.
  auto other = load_kubeconfig({a, b}, "other", false);
  ASSERT_TRUE(other) << other.error().what();
  EXPECT_EQ(other->server, "https://shared-from-first:6443");
  EXPECT_FALSE(other->tls.insecure_skip_verify);
  EXPECT_EQ(other->tls.client_cert_data, "cert");
  EXPECT_EQ(other->tls.client_key_data, "key-data-secret");

  // Reversed order: the second file's definitions win.
  auto reversed = load_kubeconfig({b, a}, "", false);
  ASSERT_TRUE(reversed);
  EXPECT_EQ(reversed->context, "other");
  EXPECT_EQ(reversed->server, "https://shared-from-second:6443");
  EXPECT_TRUE(reversed->tls.insecure_skip_verify);
}

TEST(Kubeconfig, NamedContextWithCaDataAndTokenFile) {
  TempDir dir;
  std::string b = dir.write("b/config", kSecond);
  dir.write("b/tokens/carol", "carol-token-from-file\n");
  auto cfg = load_kubeconfig({b}, "prod", true);
  ASSERT_TRUE(cfg) << cfg.error().what();
  EXPECT_EQ(cfg->server, "https://prod.example:6443");
  EXPECT_EQ(cfg->tls.ca_data, "-----BEGIN CERTIFICATE-----\nabc\n-----END CERTIFICATE-----\n");
  EXPECT_EQ(cfg->auth.token_file, (fs::path(dir.path()) / "b/tokens/carol").string());
  CredentialCache cache(*cfg);
  auto auth = cache.authorization(std::chrono::system_clock::now());
  ASSERT_TRUE(auth) << auth.error().what();
  EXPECT_EQ(*auth, "Bearer carol-token-from-file");
}

TEST(Kubeconfig, ErrorsNameWhatExists) {
  TempDir dir;
  std::string b = dir.write("b/config", kSecond);
  auto missing_ctx = load_kubeconfig({b}, "nope", true);
  ASSERT_FALSE(missing_ctx);
  EXPECT_NE(missing_ctx.error().message.find("\"nope\""), std::string::npos);
  EXPECT_NE(missing_ctx.error().hint.find("prod"), std::string::npos);

  auto explicit_missing = load_kubeconfig({dir.path() + "/absent"}, "", true);
  ASSERT_FALSE(explicit_missing);
  EXPECT_NE(explicit_missing.error().message.find("does not exist"), std::string::npos);

  // Missing files of $KUBECONFIG are skipped like kubectl does.
  auto skipped = load_kubeconfig({dir.path() + "/absent", b}, "prod", false);
  EXPECT_TRUE(skipped) << skipped.error().what();
  auto none = load_kubeconfig({dir.path() + "/absent"}, "", false);
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message.find("no kubeconfig found"), std::string::npos);
  EXPECT_NE(none.error().hint.find("platform.credentials.kubeconfig"), std::string::npos)
      << none.error().hint;
}

// A command's flags name the kubeconfig and context (`lab attach --kubeconfig --context`): the hints say
// those, not a plan's fields.
TEST(Kubeconfig, HintsNameTheSettingsTheUserHas) {
  TempDir dir;
  const KubeconfigSettings flags{.path = "--kubeconfig", .context = "--context", .in_cluster = ""};
  auto explicit_missing = load_kubeconfig({dir.path() + "/absent"}, "", true, flags);
  ASSERT_FALSE(explicit_missing);
  EXPECT_NE(explicit_missing.error().hint.find("existing kubeconfig: --kubeconfig"), std::string::npos)
      << explicit_missing.error().hint;
  auto none = load_kubeconfig({dir.path() + "/absent"}, "", false, flags);
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().hint, "set KUBECONFIG or pass --kubeconfig");
  const std::string no_current = dir.write("c/config",
                                           "apiVersion: v1\nkind: Config\ncontexts:\n"
                                           "- {name: one, context: {cluster: c, user: u}}\n");
  auto unnamed = load_kubeconfig({no_current}, "", true, flags);
  ASSERT_FALSE(unnamed);
  EXPECT_NE(unnamed.error().hint.find("set --context to one of: one"), std::string::npos)
      << unnamed.error().hint;
  EXPECT_EQ(unnamed.error().what().find("platform."), std::string::npos) << unnamed.error().what();
}

TEST(Kubeconfig, PathsFromKubeconfigEnvAndHome) {
  {
    ScopedEnv env("KUBECONFIG", "/a/one::/b/two");
    EXPECT_EQ(kubeconfig_paths(""), (std::vector<std::string>{"/a/one", "/b/two"}));
    EXPECT_EQ(kubeconfig_paths("/explicit"), (std::vector<std::string>{"/explicit"}));
  }
  ScopedEnv env("KUBECONFIG", "");
  ScopedEnv home("HOME", "/home/tester");
  EXPECT_EQ(kubeconfig_paths(""), (std::vector<std::string>{"/home/tester/.kube/config"}));
}

TEST(InCluster, ReadsServiceAccountDirAndServiceEnv) {
  TempDir dir;
  dir.write("sa/token", "sa-token-value\n");
  dir.write("sa/ca.crt", "CA");
  dir.write("sa/namespace", "vdi\n");
  {
    ScopedEnv host("KUBERNETES_SERVICE_HOST", "10.0.0.1");
    ScopedEnv port("KUBERNETES_SERVICE_PORT", "443");
    auto cfg = load_in_cluster(dir.path() + "/sa");
    ASSERT_TRUE(cfg) << cfg.error().what();
    EXPECT_EQ(cfg->server, "https://10.0.0.1:443");
    EXPECT_EQ(cfg->tls.ca_file, dir.path() + "/sa/ca.crt");
    EXPECT_EQ(cfg->default_namespace, "vdi");
    CredentialCache cache(*cfg);
    auto auth = cache.authorization(std::chrono::system_clock::now());
    ASSERT_TRUE(auth);
    EXPECT_EQ(*auth, "Bearer sa-token-value");
  }
  {
    ScopedEnv host("KUBERNETES_SERVICE_HOST", "fd00::1");
    ScopedEnv port("KUBERNETES_SERVICE_PORT", "6443");
    auto cfg = load_in_cluster(dir.path() + "/sa");
    ASSERT_TRUE(cfg);
    EXPECT_EQ(cfg->server, "https://[fd00::1]:6443");
  }
  ScopedEnv host("KUBERNETES_SERVICE_HOST", "");
  auto outside = load_in_cluster(dir.path() + "/sa");
  ASSERT_FALSE(outside);
  EXPECT_NE(outside.error().message.find("KUBERNETES_SERVICE_HOST"), std::string::npos);
}

TEST(InCluster, TokenFileIsReReadAfterAMinute) {
  TempDir dir;
  std::string token = dir.write("sa/token", "first");
  KubeClientConfig cfg;
  cfg.auth.token_file = token;
  CredentialCache cache(cfg);
  auto t0 = std::chrono::system_clock::now();
  EXPECT_EQ(*cache.authorization(t0), "Bearer first");
  dir.write("sa/token", "rotated");
  EXPECT_EQ(*cache.authorization(t0 + std::chrono::seconds(30)), "Bearer first");
  EXPECT_EQ(*cache.authorization(t0 + std::chrono::seconds(61)), "Bearer rotated");
}

std::string exec_kubeconfig(const TempDir& dir, const std::string& extra_env, bool cluster_info) {
  return dir.write("exec/config", R"(apiVersion: v1
kind: Config
current-context: ctx
clusters:
- name: c
  cluster: {server: "https://exec.example:6443"}
users:
- name: u
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: )" + kPlugin + R"(
      args: [alpha]
      provideClusterInfo: )" + (cluster_info ? "true" : "false") +
                                      R"(
      env:
      - {name: EXEC_TOKEN_PREFIX, value: plug}
      - {name: EXEC_COUNT_FILE, value: )" +
                                      dir.path() + R"(/count}
)" + extra_env + R"(
contexts:
- name: ctx
  context: {cluster: c, user: u}
)");
}

int count_runs(const TempDir& dir) {
  std::ifstream in(dir.path() + "/count");
  int n = 0;
  std::string line;
  while (std::getline(in, line)) ++n;
  return n;
}

TEST(ExecPlugin, RunsWithArgsEnvAndExecInfoAndCachesUntilExpiry) {
  TempDir dir;
  std::string path =
      exec_kubeconfig(dir, "      - {name: EXEC_EXPIRY, value: \"2030-01-01T00:00:00Z\"}", true);
  auto cfg = load_kubeconfig({path}, "", true);
  ASSERT_TRUE(cfg) << cfg.error().what();
  ASSERT_TRUE(cfg->auth.exec);
  EXPECT_EQ(cfg->auth.exec->args, (std::vector<std::string>{"alpha"}));
  CredentialCache cache(*cfg);
  auto before_expiry = *parse_rfc3339("2029-12-31T23:00:00Z");
  auto auth = cache.authorization(before_expiry);
  ASSERT_TRUE(auth) << auth.error().what();
  EXPECT_EQ(*auth, "Bearer plug-alpha-https://exec.example:6443");
  EXPECT_TRUE(cache.authorization(before_expiry + std::chrono::minutes(30)));
  EXPECT_EQ(count_runs(dir), 1);
  // Within the refresh margin of the expiry, and after it: the plugin runs again.
  EXPECT_TRUE(cache.authorization(*parse_rfc3339("2029-12-31T23:59:55Z")));
  EXPECT_EQ(count_runs(dir), 2);
  // invalidate() (after a 401) forces a new run even when the credential has not expired.
  cache.invalidate();
  EXPECT_TRUE(cache.authorization(before_expiry));
  EXPECT_EQ(count_runs(dir), 3);
  EXPECT_EQ(cache.exec_runs(), 3);
}

TEST(ExecPlugin, WithoutClusterInfoAndFailures) {
  TempDir dir;
  auto cfg = load_kubeconfig({exec_kubeconfig(dir, "", false)}, "", true);
  ASSERT_TRUE(cfg);
  auto cred = run_exec_plugin(*cfg->auth.exec, *cfg);
  ASSERT_TRUE(cred) << cred.error().what();
  EXPECT_EQ(cred->token, "plug-alpha");
  ASSERT_TRUE(cred->expiry);

  ExecConfig failing = *cfg->auth.exec;
  failing.env.emplace_back("EXEC_FAIL", "7");
  auto failed = run_exec_plugin(failing, *cfg);
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error().kind, ErrorKind::auth);
  EXPECT_NE(failed.error().message.find("exit code 7"), std::string::npos);
  EXPECT_NE(failed.error().message.find("plugin failed on purpose"), std::string::npos);

  ExecConfig absent = *cfg->auth.exec;
  absent.command = "bootstorm-no-such-plugin";
  absent.install_hint = "install it from example.com";
  auto missing = run_exec_plugin(absent, *cfg);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().hint, "install it from example.com");
}

TEST(ExecPlugin, ParsesExecCredential) {
  auto ok = parse_exec_credential(
      R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"clientCertificateData":"C","clientKeyData":"K","expirationTimestamp":"2026-11-30T10:00:05.5+01:00"}})",
      "client.authentication.k8s.io/v1");
  ASSERT_TRUE(ok) << ok.error().what();
  EXPECT_EQ(ok->client_certificate_data, "C");
  EXPECT_EQ(ok->client_key_data, "K");
  EXPECT_EQ(*ok->expiry, *parse_rfc3339("2026-11-30T09:00:05.5Z"));
  EXPECT_FALSE(parse_exec_credential(
      R"({"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","status":{"token":"t"}})",
      "client.authentication.k8s.io/v1"));
  EXPECT_FALSE(parse_exec_credential(
      R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{}})",
      "client.authentication.k8s.io/v1"));
  EXPECT_FALSE(parse_exec_credential("not json", "client.authentication.k8s.io/v1"));
  // Fields of the wrong type are errors, not exceptions (found by fuzzing: "kind": {}).
  auto odd_kind = parse_exec_credential(R"({"apiVersion":"client.authentication.k8s.io/v1","kind":{}})",
                                        "client.authentication.k8s.io/v1");
  ASSERT_FALSE(odd_kind);
  EXPECT_NE(odd_kind.error().message.find("instead of ExecCredential"), std::string::npos);
  EXPECT_FALSE(parse_exec_credential(
      R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":7}})",
      "client.authentication.k8s.io/v1"));
}

TEST(Encoding, Base64) {
  EXPECT_EQ(base64_encode("hello!?"), "aGVsbG8hPw==");
  EXPECT_EQ(*base64_decode("aGVsbG8h\nPw=="), "hello!?");
  EXPECT_FALSE(base64_decode("a$b"));
}

}  // namespace
}  // namespace bootstorm::kube

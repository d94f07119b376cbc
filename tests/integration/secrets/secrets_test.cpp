// Secrets never leak (issue 9): storms on both providers whose credentials are unique strings — the vCenter
// password, the Kubernetes bearer token, a TLS client key, the per-VM beacon tokens — run with the most
// verbose logging (-vv), then every artefact of the run directory and everything the process printed is
// searched for each secret and its base64 form. Also: credential files that group/others can read produce a
// warning naming the file, private ones do not, and run directories are created 0700.
#include <sys/stat.h>

#include <random>

#include "tests/integration/faults/lab_harness.hpp"

namespace bootstorm::lab_harness {
namespace {

std::string unique_secret(const std::string& prefix) {
  std::random_device rd;
  std::mt19937_64 gen((static_cast<std::uint64_t>(rd()) << 32) ^ rd() ^
                      static_cast<std::uint64_t>(::getpid()));
  static const char* hex = "0123456789abcdef";
  std::string s = prefix;
  for (int i = 0; i < 24; ++i) s += hex[gen() % 16];
  return s;
}

class Secrets : public LabFixture {
 protected:
  // Every regular file under the run directory, plus the process's stdout and stderr.
  static std::vector<std::pair<std::string, std::string>> artefacts(const fs::path& run_dir,
                                                                    const CliResult& r) {
    std::vector<std::pair<std::string, std::string>> out;
    out.emplace_back("stdout", r.out);
    out.emplace_back("stderr", r.err);
    for (const auto& e : fs::recursive_directory_iterator(run_dir))
      if (e.is_regular_file()) out.emplace_back(e.path().string(), read_file(e.path()));
    return out;
  }

  // No artefact contains a secret, raw or base64 encoded (the form kubeconfigs and Basic headers use).
  static void expect_no_secret(const std::vector<std::pair<std::string, std::string>>& files,
                               const std::map<std::string, std::string>& secrets) {
    ASSERT_GE(files.size(), 6u) << "the run directory is missing its artefacts";
    for (const auto& [what, secret] : secrets) {
      ASSERT_GE(secret.size(), 8u) << what;
      for (const std::string& form : {secret, base64_encode(secret)}) {
        for (const auto& [name, text] : files)
          EXPECT_EQ(text.find(form), std::string::npos)
              << what << (form == secret ? "" : " (base64)") << " leaked into " << name;
      }
    }
  }

  static void expect_private_run_directory(const fs::path& run_dir) {
    struct stat st {};
    ASSERT_EQ(::stat(run_dir.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0700u) << run_dir << " is not private";
    ASSERT_EQ(::stat((run_dir / "journal.jsonl").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 077, 0u) << "journal.jsonl is readable by group/others";
  }
};

TEST_F(Secrets, VspherePasswordNeverReachesLogsOrArtefactsAndAReadableCredentialsFileIsWarnedAbout) {
  const std::string password = unique_secret("vc-pw-");
  start_lab({.vcenter_password = password});
  if (HasFatalFailure()) return;
  const std::string user = endpoints_["username"].get<std::string>();
  // A credentials file the whole machine can read.
  const fs::path creds = dir_ / "vcenter-credentials.yaml";
  write_file(creds, "username: " + user + "\npassword: " + password + "\n",
             fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read);
  PlanKnobs k;
  k.platform = "vsphere";
  k.endpoint = endpoints_["vcenter"].get<std::string>();
  k.credentials = "{file: " + creds.string() + "}";
  k.tls = "{caFile: " + endpoints_["caFile"].get<std::string>() + "}";
  const fs::path out = dir_ / "runs";
  const fs::path plan = write_plan(k, out);
  CliResult r = bootstorm({"-vv", "run", plan.string(), "--yes", "--out", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_NE(r.err.find("vCenter credentials file " + creds.string() +
                       " is readable by other users (mode 0644): "
                       "restrict it with `chmod 600 " +
                       creds.string() + "`"),
            std::string::npos)
      << r.err;
  const fs::path run_dir = run_dir_in(out);
  ASSERT_FALSE(run_dir.empty());
  expect_private_run_directory(run_dir);
  expect_no_secret(artefacts(run_dir, r),
                   {{"vCenter password", password}, {"Basic credentials", user + ":" + password}});

  // The same file made private: no warning (a dry run resolves the credentials too).
  fs::permissions(creds, fs::perms::owner_read | fs::perms::owner_write, fs::perm_options::replace);
  CliResult quiet = bootstorm({"-vv", "run", plan.string(), "--dry-run", "--out", out.string()});
  EXPECT_EQ(quiet.exit_code, 0) << quiet.all();
  EXPECT_EQ(quiet.err.find("readable by"), std::string::npos) << quiet.err;
  EXPECT_EQ(quiet.all().find(password), std::string::npos) << "the dry run printed the password";
}

TEST_F(Secrets, KubeTokenClientKeyAndBeaconTokensNeverReachLogsOrArtefacts) {
  const std::string token = unique_secret("kube-token-");
  start_lab({.kube_token = token});
  if (HasFatalFailure()) return;
  // A client certificate and key, so that the key travels through the kubeconfig too (the lab does not ask
  // for client certificates; the provider loads the key all the same).
  const fs::path key = dir_ / "client.key", cert = dir_ / "client.crt";
  const std::string openssl =
      "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 "
      "-subj /CN=bootstorm-test -keyout '" +
      key.string() + "' -out '" + cert.string() + "' >/dev/null 2>&1";
  std::string key_pem, cert_pem;
  if (std::system(openssl.c_str()) == 0) {
    key_pem = read_file(key);
    cert_pem = read_file(cert);
  }
  const std::string ca = read_file(endpoints_["caFile"].get<std::string>());
  std::string kubeconfig = "apiVersion: v1\nkind: Config\nclusters:\n- name: lab\n  cluster:\n    server: " +
                           endpoints_["kube"].get<std::string>() +
                           "\n    certificate-authority-data: " + base64_encode(ca) +
                           "\nusers:\n- name: lab\n  user:\n    token: " + token + "\n";
  if (!key_pem.empty())
    kubeconfig += "    client-certificate-data: " + base64_encode(cert_pem) +
                  "\n    client-key-data: " + base64_encode(key_pem) + "\n";
  kubeconfig += "contexts:\n- name: lab\n  context: {cluster: lab, user: lab}\ncurrent-context: lab\n";
  const fs::path kubeconfig_file = dir_ / "kubeconfig";
  write_file(kubeconfig_file, kubeconfig,
             fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);

  PlanKnobs k;
  k.platform = "kubevirt";
  k.endpoint = "kubeconfig";
  k.credentials = "{kubeconfig: " + kubeconfig_file.string() + "}";
  k.ready = "{signal: beacon, beacon: {listen: \"127.0.0.1:0\"}}";
  k.cleanup = "never";  // the beacon tokens are read back from the VMs' cloud-init before cleanup
  const fs::path out = dir_ / "runs";
  const fs::path plan = write_plan(k, out);
  CliResult r = bootstorm({"-vv", "run", plan.string(), "--yes", "--out", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_NE(r.err.find("kubeconfig " + kubeconfig_file.string() + " is readable by its group (mode 0640)"),
            std::string::npos)
      << r.err;
  const fs::path run_dir = run_dir_in(out);
  ASSERT_FALSE(run_dir.empty());
  const std::string run_id = run_id_of(run_dir);
  expect_private_run_directory(run_dir);

  std::map<std::string, std::string> secrets = {{"bearer token", token}};
  if (!key_pem.empty()) {
    secrets["client key (PEM)"] = key_pem;
    // The key's base64 body, line by line, in case something prints part of it.
    std::istringstream lines(key_pem);
    int n = 0;
    for (std::string line; std::getline(lines, line);)
      if (line.size() >= 32 && line.find("-----") == std::string::npos)
        secrets["client key line " + std::to_string(++n)] = line;
  }
  int beacon_tokens = 0;
  for (const auto& [name, vm] : kube_vms()) {
    if (name.rfind("bs-" + run_id + "-", 0) != 0) continue;
    const std::string spec = vm["spec"].dump();
    const std::string marker = "BOOTSTORM_BEACON_TOKEN=";
    auto pos = spec.find(marker);
    ASSERT_NE(pos, std::string::npos) << name << " has no beacon token in its cloud-init";
    pos += marker.size();
    std::string beacon_token;
    while (pos < spec.size() && std::isalnum(static_cast<unsigned char>(spec[pos])))
      beacon_token += spec[pos++];
    secrets["beacon token of " + name] = beacon_token;
    ++beacon_tokens;
  }
  EXPECT_EQ(beacon_tokens, total_vms(k));
  // The run was measured by the beacon: the tokens were used, not just handed out.
  EXPECT_NE(r.out.find(std::to_string(total_vms(k)) + "/" + std::to_string(total_vms(k)) +
                       " ready, boot time (beacon)"),
            std::string::npos)
      << r.out;
  expect_no_secret(artefacts(run_dir, r), secrets);

  CliResult c = bootstorm({"-vv", "cleanup", run_dir.string()});
  EXPECT_EQ(c.exit_code, 0) << c.all();
  expect_no_secret(artefacts(run_dir, c), secrets);
  expect_nothing_of_run_left("kubevirt", run_id);
}

}  // namespace
}  // namespace bootstorm::lab_harness

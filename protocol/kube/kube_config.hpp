#pragma once
// Kubernetes client configuration as kubectl resolves it: kubeconfig files (KUBECONFIG with several files
// merged, ~/.kube/config by default, a named context or current-context), in-cluster service accounts, and
// an explicit URL + bearer token (embedded lab). Credentials: bearer token, token file, client certificate
// and key (files or base64 -data), basic auth, and `exec` credential plugins
// (client.authentication.k8s.io/v1 ExecCredential), cached until they expire.
//
// No Asio, no Beast: this is pure configuration logic, unit-tested on its own.
#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/base64.hpp"
#include "common/expected.hpp"
#include "common/rfc3339.hpp"
#include "protocol/http/tls.hpp"

namespace bootstorm::kube {

inline constexpr const char* kServiceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount";

struct ExecConfig {
  std::string api_version;  // client.authentication.k8s.io/v1 (or v1beta1)
  std::string command;      // resolved against the kubeconfig's directory when it is a relative path
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> env;
  bool provide_cluster_info = false;
  std::string install_hint;
};

struct AuthInfo {
  std::string token;       // static bearer token (OpenShift OAuth tokens are bearer tokens too)
  std::string token_file;  // re-read periodically (projected service-account tokens rotate)
  std::string username;    // basic auth
  std::string password;
  std::optional<ExecConfig> exec;
};

struct KubeClientConfig {
  std::string server;          // https://host:port[/prefix]
  http::TlsClientOptions tls;  // CA, client certificate/key, insecure flag, tls-server-name
  AuthInfo auth;
  std::string default_namespace;
  std::string source;  // "kubeconfig /home/u/.kube/config (context lab)" — for messages
  std::string context;
  std::string cluster_name;
};

// Kubeconfig files to read, as kubectl picks them: the explicit path alone when given; else every entry of
// $KUBECONFIG (':'-separated, empty entries skipped); else ~/.kube/config.
std::vector<std::string> kubeconfig_paths(const std::string& explicit_path);

// Where the user names the kubeconfig and its context, for the hints of load_kubeconfig's errors: a plan's
// fields by default, a command's flags for a command.
struct KubeconfigSettings {
  std::string path = "platform.credentials.kubeconfig";
  std::string context = "platform.credentials.context";
  std::string in_cluster = "endpoint: in-cluster";  // "": no in-cluster alternative to offer
};

// Loads and merges the files (first file wins for each cluster/user/context name and for current-context;
// files of $KUBECONFIG that do not exist are skipped, an explicit path must exist) and resolves `context`
// ("" = current-context). Relative file references resolve against the directory of the file that holds them.
Expected<KubeClientConfig> load_kubeconfig(const std::vector<std::string>& paths, const std::string& context,
                                           bool explicit_path, const KubeconfigSettings& settings = {});

// In-cluster configuration: token and CA under `service_account_dir`, server from KUBERNETES_SERVICE_HOST and
// KUBERNETES_SERVICE_PORT.
Expected<KubeClientConfig> load_in_cluster(const std::string& service_account_dir = kServiceAccountDir);

// Decodes standard base64 (whitespace ignored). nullopt when malformed.
using bootstorm::base64_decode;
using bootstorm::base64_encode;

// RFC 3339 timestamps as Kubernetes writes them (common/rfc3339.hpp).
using bootstorm::parse_rfc3339;

// --- exec credential plugins ---

struct ExecCredential {
  std::string token;
  std::string client_certificate_data;  // PEM
  std::string client_key_data;          // PEM
  std::optional<std::chrono::system_clock::time_point> expiry;
};

// Parses the plugin's stdout (an ExecCredential object whose apiVersion must equal `expected_api_version`).
Expected<ExecCredential> parse_exec_credential(std::string_view output,
                                               const std::string& expected_api_version);

// The KUBERNETES_EXEC_INFO value handed to the plugin.
std::string exec_info_json(const ExecConfig& exec, const KubeClientConfig& config);

// Runs the plugin (its args, the current environment plus its env and KUBERNETES_EXEC_INFO), waits at most
// `timeout`, and parses its output. Blocking: plugins are short-lived and run once per credential lifetime.
Expected<ExecCredential> run_exec_plugin(const ExecConfig& exec, const KubeClientConfig& config,
                                         std::chrono::milliseconds timeout = std::chrono::seconds(60));

// The Authorization header for requests, kept valid: static tokens as they are, token files re-read after a
// minute, exec plugins re-run when their credential expires (or after invalidate(), e.g. on a 401).
// Every credential it handles is registered as a secret.
class CredentialCache {
 public:
  explicit CredentialCache(KubeClientConfig config);
  // "Bearer ...", "Basic ..." or "" (client certificate only / no credentials).
  Expected<std::string> authorization(std::chrono::system_clock::time_point now);
  // Client certificate delivered by an exec plugin (first run happens here when needed).
  Expected<ExecCredential> exec_credential(std::chrono::system_clock::time_point now);
  void invalidate();
  int exec_runs() const { return exec_runs_; }
  const KubeClientConfig& config() const { return config_; }

 private:
  KubeClientConfig config_;
  std::optional<ExecCredential> exec_cached_;
  std::string file_token_;
  std::chrono::system_clock::time_point file_read_at_{};
  int exec_runs_ = 0;
};

}  // namespace bootstorm::kube

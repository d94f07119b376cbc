// Kubeconfig / in-cluster / exec-plugin credential resolution (see kube_config.hpp).
#include "protocol/kube/kube_config.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/base64.hpp"
#include "common/log.hpp"
#include "common/rfc3339.hpp"
#include "protocol/http/types.hpp"

extern char** environ;

namespace bootstorm::kube {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::optional<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::string trim(std::string s) {
  auto not_space = [](unsigned char c) { return !std::isspace(c); };
  s.erase(s.begin(), std::find_if(s.begin(), s.end(), not_space));
  s.erase(std::find_if(s.rbegin(), s.rend(), not_space).base(), s.end());
  return s;
}

std::string resolve_relative(const std::string& path, const std::string& base_dir) {
  if (path.empty() || base_dir.empty()) return path;
  fs::path p(path);
  if (p.is_absolute()) return path;
  return (fs::path(base_dir) / p).lexically_normal().string();
}

std::string scalar(const YAML::Node& node, const char* key) {
  if (!node || !node.IsMap()) return {};
  YAML::Node value = node[key];
  if (!value || !value.IsScalar()) return {};
  return value.as<std::string>();
}

bool boolean(const YAML::Node& node, const char* key) {
  std::string v = scalar(node, key);
  return v == "true" || v == "True" || v == "TRUE" || v == "yes";
}

// One named entry (cluster, user or context) with the directory of the file that defined it.
struct Entry {
  YAML::Node body;
  std::string dir;
  std::string file;
};

void collect(const YAML::Node& doc, const char* list_key, const char* body_key, const std::string& dir,
             const std::string& file, std::map<std::string, Entry>& into) {
  YAML::Node list = doc[list_key];
  if (!list || !list.IsSequence()) return;
  for (const auto& item : list) {
    std::string name = scalar(item, "name");
    if (name.empty() || into.count(name)) continue;  // first file wins
    // An entry whose body is missing or not a mapping (`user:` absent, or a string) gets an empty one:
    // yaml-cpp throws on any later lookup in an invalid node or a scalar (found by tests/fuzz/kubeconfig).
    YAML::Node body = item[body_key];
    into[name] = Entry{body && body.IsMap() ? body : YAML::Node(), dir, file};
  }
}

std::string names_of(const std::map<std::string, Entry>& entries) {
  std::string out;
  for (const auto& [name, _] : entries) out += (out.empty() ? "" : ", ") + name;
  return out.empty() ? "(none)" : out;
}

Error config_error(std::string message, std::string hint = {}) {
  return make_error(ErrorKind::invalid_input, std::move(message), std::move(hint));
}

}  // namespace

std::vector<std::string> kubeconfig_paths(const std::string& explicit_path) {
  if (!explicit_path.empty()) return {explicit_path};
  std::vector<std::string> paths;
  if (const char* env = std::getenv("KUBECONFIG"); env && *env) {
    std::string_view rest(env);
    while (true) {
      std::size_t colon = rest.find(':');
      std::string piece(rest.substr(0, colon));
      if (!piece.empty()) paths.push_back(piece);
      if (colon == std::string_view::npos) break;
      rest = rest.substr(colon + 1);
    }
    if (!paths.empty()) return paths;
  }
  const char* home = std::getenv("HOME");
  paths.push_back(std::string(home ? home : "") + "/.kube/config");
  return paths;
}

namespace {

// An exec credential plugin (client.authentication.k8s.io): its command (relative to the kubeconfig's folder
// when it names a path), arguments, environment and apiVersion.
Expected<ExecConfig> read_exec(const std::string& user_name, const YAML::Node& exec,
                               const std::string& user_dir) {
  ExecConfig e;
  e.api_version = scalar(exec, "apiVersion");
  e.command = scalar(exec, "command");
  if (e.command.find('/') != std::string::npos) e.command = resolve_relative(e.command, user_dir);
  if (YAML::Node args = exec["args"]; args && args.IsSequence()) {
    for (const auto& a : args) {
      // yaml-cpp throws on as<std::string>() of a list or mapping (found by tests/fuzz/kubeconfig).
      if (!a.IsScalar()) {
        return config_error("exec plugin of user \"" + user_name + "\" has an argument that is not a string",
                            "write args as a list of strings");
      }
      e.args.push_back(a.as<std::string>());
    }
  }
  if (YAML::Node env = exec["env"]; env && env.IsSequence()) {
    for (const auto& kv : env) e.env.emplace_back(scalar(kv, "name"), scalar(kv, "value"));
  }
  e.provide_cluster_info = boolean(exec, "provideClusterInfo");
  e.install_hint = scalar(exec, "installHint");
  if (e.command.empty()) return config_error("exec plugin of user \"" + user_name + "\" has no command");
  if (e.api_version.empty()) {
    return config_error("exec plugin of user \"" + user_name + "\" has no apiVersion",
                        "set apiVersion: client.authentication.k8s.io/v1");
  }
  return e;
}

// The user's credentials into `out`: a token or token file, basic auth, client certificate and key (data or
// files, relative to the kubeconfig's folder), or an exec credential plugin.
Expected<void> read_user(const std::string& user_name, const Entry& entry, KubeClientConfig& out) {
  const YAML::Node& user = entry.body;
  const std::string& user_dir = entry.dir;
  out.auth.token = scalar(user, "token");
  out.auth.token_file = resolve_relative(scalar(user, "tokenFile"), user_dir);
  out.auth.username = scalar(user, "username");
  out.auth.password = scalar(user, "password");
  if (std::string d = scalar(user, "client-certificate-data"); !d.empty()) {
    auto decoded = base64_decode(d);
    if (!decoded) return config_error("client-certificate-data of user \"" + user_name + "\" is not base64");
    out.tls.client_cert_data = *decoded;
  } else {
    out.tls.client_cert_file = resolve_relative(scalar(user, "client-certificate"), user_dir);
  }
  if (std::string d = scalar(user, "client-key-data"); !d.empty()) {
    auto decoded = base64_decode(d);
    if (!decoded) return config_error("client-key-data of user \"" + user_name + "\" is not base64");
    out.tls.client_key_data = *decoded;
  } else {
    out.tls.client_key_file = resolve_relative(scalar(user, "client-key"), user_dir);
  }
  if (user["auth-provider"]) {
    return config_error("user \"" + user_name +
                            "\" uses an auth-provider plugin, which bootstorm (like kubectl "
                            "since 1.26) does not support",
                        "switch the user to an exec credential plugin (e.g. kubelogin) or a token");
  }
  if (YAML::Node exec = user["exec"]; exec && exec.IsMap()) {
    auto plugin = read_exec(user_name, exec, user_dir);
    if (!plugin) return plugin.error();
    out.auth.exec = std::move(*plugin);
  }
  return {};
}

}  // namespace

Expected<KubeClientConfig> load_kubeconfig(const std::vector<std::string>& paths, const std::string& context,
                                           bool explicit_path, const KubeconfigSettings& settings) {
  std::map<std::string, Entry> clusters, users, contexts;
  std::string current_context, current_context_file;
  std::vector<std::string> read;
  for (const auto& path : paths) {
    std::error_code ec;
    if (!fs::exists(path, ec)) {
      if (explicit_path) {
        return config_error("kubeconfig " + path + " does not exist",
                            "pass the path of an existing kubeconfig: " + settings.path);
      }
      continue;  // kubectl skips missing files of $KUBECONFIG
    }
    YAML::Node doc;
    try {
      doc = YAML::LoadFile(path);
    } catch (const YAML::Exception& e) {
      return config_error("kubeconfig " + path + " is not valid YAML: " + e.what());
    }
    if (!doc || doc.IsNull()) {
      read.push_back(path);
      continue;
    }
    if (!doc.IsMap()) return config_error("kubeconfig " + path + " is not a YAML mapping");
    std::string dir = fs::absolute(fs::path(path)).parent_path().string();
    collect(doc, "clusters", "cluster", dir, path, clusters);
    collect(doc, "users", "user", dir, path, users);
    collect(doc, "contexts", "context", dir, path, contexts);
    if (current_context.empty()) {
      current_context = scalar(doc, "current-context");
      current_context_file = path;
    }
    read.push_back(path);
  }
  std::string joined;
  for (const auto& p : paths) joined += (joined.empty() ? "" : ":") + p;
  if (read.empty()) {
    return config_error(
        "no kubeconfig found (looked at " + joined + ")",
        "set KUBECONFIG or pass " + settings.path +
            (settings.in_cluster.empty() ? std::string() : ", or use " + settings.in_cluster));
  }
  std::string context_name = context.empty() ? current_context : context;
  if (context_name.empty()) {
    return config_error("kubeconfig " + joined + " has no current-context and no context was named",
                        "set " + settings.context + " to one of: " + names_of(contexts));
  }
  auto ctx_it = contexts.find(context_name);
  if (ctx_it == contexts.end()) {
    return config_error("context \"" + context_name + "\" is not defined in kubeconfig " + joined,
                        "contexts defined: " + names_of(contexts));
  }
  const YAML::Node& ctx = ctx_it->second.body;
  std::string cluster_name = scalar(ctx, "cluster");
  std::string user_name = scalar(ctx, "user");
  auto cluster_it = clusters.find(cluster_name);
  if (cluster_it == clusters.end()) {
    return config_error("context \"" + context_name + "\" refers to cluster \"" + cluster_name +
                            "\", which kubeconfig " + joined + " does not define",
                        "clusters defined: " + names_of(clusters));
  }
  KubeClientConfig out;
  out.context = context_name;
  out.cluster_name = cluster_name;
  out.default_namespace = scalar(ctx, "namespace");
  out.source = "kubeconfig " + joined + " (context " + context_name + ")";

  const YAML::Node& cluster = cluster_it->second.body;
  const std::string& cluster_dir = cluster_it->second.dir;
  out.server = scalar(cluster, "server");
  if (out.server.empty()) {
    return config_error("cluster \"" + cluster_name + "\" in " + cluster_it->second.file +
                        " has no server URL");
  }
  if (std::string ca = scalar(cluster, "certificate-authority-data"); !ca.empty()) {
    auto decoded = base64_decode(ca);
    if (!decoded)
      return config_error("certificate-authority-data of cluster \"" + cluster_name + "\" is not base64");
    out.tls.ca_data = *decoded;
  } else if (std::string ca_file = scalar(cluster, "certificate-authority"); !ca_file.empty()) {
    out.tls.ca_file = resolve_relative(ca_file, cluster_dir);
  }
  out.tls.insecure_skip_verify = boolean(cluster, "insecure-skip-tls-verify");
  out.tls.server_name = scalar(cluster, "tls-server-name");

  if (!user_name.empty()) {
    auto user_it = users.find(user_name);
    if (user_it == users.end()) {
      return config_error("context \"" + context_name + "\" refers to user \"" + user_name +
                              "\", which kubeconfig " + joined + " does not define",
                          "users defined: " + names_of(users));
    }
    if (auto read_ok = read_user(user_name, user_it->second, out); !read_ok) return read_ok.error();
  }
  log::register_secret(out.auth.token);
  log::register_secret(out.auth.password);
  log::register_secret(out.tls.client_key_data);
  return out;
}

Expected<KubeClientConfig> load_in_cluster(const std::string& service_account_dir) {
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
  if (!host || !*host || !port || !*port) {
    return config_error(
        "endpoint in-cluster needs KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT, which are "
        "not set: this process does not run in a Kubernetes pod",
        "use endpoint: kubeconfig outside a cluster");
  }
  KubeClientConfig out;
  std::string h(host);
  if (h.find(':') != std::string::npos) h = "[" + h + "]";  // IPv6 service address
  out.server = "https://" + h + ":" + port;
  out.source = "in-cluster service account (" + service_account_dir + ")";
  out.auth.token_file = service_account_dir + "/token";
  auto token = read_file(out.auth.token_file);
  if (!token) {
    return config_error("cannot read the service account token " + out.auth.token_file,
                        "mount a service account token (automountServiceAccountToken: true)");
  }
  log::register_secret(trim(*token));
  std::string ca = service_account_dir + "/ca.crt";
  std::error_code ec;
  if (fs::exists(ca, ec)) out.tls.ca_file = ca;
  if (auto ns = read_file(service_account_dir + "/namespace")) out.default_namespace = trim(*ns);
  return out;
}

// --- exec plugins ---

Expected<ExecCredential> parse_exec_credential(std::string_view output,
                                               const std::string& expected_api_version) {
  json doc = json::parse(output, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    return make_error(ErrorKind::auth,
                      "the exec credential plugin did not print an ExecCredential JSON object",
                      "run the plugin command by hand and check its output");
  }
  // A field of another type reads as absent (json::value would throw): the checks below then name it.
  auto text = [](const json& object, const char* key) {
    auto it = object.find(key);
    return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  std::string kind = text(doc, "kind");
  std::string api_version = text(doc, "apiVersion");
  if (kind != "ExecCredential") {
    return make_error(ErrorKind::auth,
                      "the exec credential plugin printed kind \"" + kind + "\" instead of ExecCredential");
  }
  if (api_version != expected_api_version) {
    return make_error(ErrorKind::auth,
                      "the exec credential plugin answered apiVersion \"" + api_version +
                          "\" but the kubeconfig asks for \"" + expected_api_version + "\"",
                      "make the kubeconfig's exec.apiVersion match the plugin");
  }
  const auto status_it = doc.find("status");
  const json status = status_it != doc.end() ? *status_it : json::object();
  if (!status.is_object()) return make_error(ErrorKind::auth, "the ExecCredential has no status object");
  ExecCredential cred;
  cred.token = text(status, "token");
  cred.client_certificate_data = text(status, "clientCertificateData");
  cred.client_key_data = text(status, "clientKeyData");
  if (std::string exp = text(status, "expirationTimestamp"); !exp.empty()) {
    auto expiry = parse_rfc3339(exp);
    if (!expiry) {
      return make_error(ErrorKind::auth,
                        "the ExecCredential's expirationTimestamp \"" + exp + "\" is not RFC 3339");
    }
    cred.expiry = *expiry;
  }
  if (cred.token.empty() && (cred.client_certificate_data.empty() || cred.client_key_data.empty())) {
    return make_error(
        ErrorKind::auth,
        "the ExecCredential carries neither status.token nor clientCertificateData + clientKeyData");
  }
  log::register_secret(cred.token);
  log::register_secret(cred.client_key_data);
  return cred;
}

std::string exec_info_json(const ExecConfig& exec, const KubeClientConfig& config) {
  json spec = {{"interactive", false}};
  if (exec.provide_cluster_info) {
    json cluster = {{"server", config.server}};
    if (!config.tls.ca_data.empty())
      cluster["certificate-authority-data"] = base64_encode(config.tls.ca_data);
    if (config.tls.insecure_skip_verify) cluster["insecure-skip-tls-verify"] = true;
    if (!config.tls.server_name.empty()) cluster["tls-server-name"] = config.tls.server_name;
    spec["cluster"] = cluster;
  }
  json info = {{"apiVersion", exec.api_version}, {"kind", "ExecCredential"}, {"spec", spec}};
  // Kubeconfig values are not validated as UTF-8: replace what is invalid instead of throwing from dump()
  // (found by tests/fuzz/kubeconfig).
  return info.dump(-1, ' ', false, json::error_handler_t::replace);
}

Expected<ExecCredential> run_exec_plugin(const ExecConfig& exec, const KubeClientConfig& config,
                                         std::chrono::milliseconds timeout) {
  const std::string where = "exec credential plugin \"" + exec.command + "\" (" + config.source + ")";
  int out_pipe[2];
  int err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) return make_error(ErrorKind::internal, "pipe() failed for " + where);
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    close(out_pipe[0]);
    close(out_pipe[1]);
    return make_error(ErrorKind::internal, "pipe() failed for " + where);
  }
  // Everything the child needs is prepared before fork (no allocation after it).
  std::vector<std::string> argv_storage{exec.command};
  for (const auto& a : exec.args) argv_storage.push_back(a);
  std::vector<char*> argv;
  for (auto& a : argv_storage) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::map<std::string, std::string> env_map;
  for (char** e = environ; e && *e; ++e) {
    std::string kv(*e);
    std::size_t eq = kv.find('=');
    if (eq != std::string::npos) env_map[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  for (const auto& [k, v] : exec.env) env_map[k] = v;
  env_map["KUBERNETES_EXEC_INFO"] = exec_info_json(exec, config);
  std::vector<std::string> env_storage;
  for (const auto& [k, v] : env_map) env_storage.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& e : env_storage) envp.push_back(e.data());
  envp.push_back(nullptr);
  // execvpe semantics with the plugin's environment's PATH, resolved before fork (no allocation after it).
  std::vector<std::string> candidates;
  if (exec.command.find('/') != std::string::npos) {
    candidates.push_back(exec.command);
  } else {
    std::string_view dirs =
        env_map.count("PATH") ? std::string_view(env_map["PATH"]) : "/usr/local/bin:/usr/bin:/bin";
    while (true) {
      std::size_t colon = dirs.find(':');
      std::string dir(dirs.substr(0, colon));
      candidates.push_back((dir.empty() ? std::string(".") : dir) + "/" + exec.command);
      if (colon == std::string_view::npos) break;
      dirs = dirs.substr(colon + 1);
    }
  }

  pid_t pid = fork();
  if (pid < 0) {
    close(out_pipe[0]);
    close(out_pipe[1]);
    close(err_pipe[0]);
    close(err_pipe[1]);
    return make_error(ErrorKind::internal, "fork() failed for " + where);
  }
  if (pid == 0) {
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, 0);
    for (const auto& candidate : candidates) execve(candidate.c_str(), argv.data(), envp.data());
    _exit(127);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
  std::string out, err;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  bool out_open = true, err_open = true, timed_out = false;
  while (out_open || err_open) {
    auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd fds[2] = {{out_open ? out_pipe[0] : -1, POLLIN, 0}, {err_open ? err_pipe[0] : -1, POLLIN, 0}};
    int r = poll(fds, 2, static_cast<int>(left.count()));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) break;
    char buf[4096];
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n <= 0) {
        (i == 0 ? out_open : err_open) = false;
      } else {
        (i == 0 ? out : err).append(buf, static_cast<std::size_t>(n));
      }
    }
  }
  close(out_pipe[0]);
  close(err_pipe[0]);
  if (timed_out) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) {
    return make_error(ErrorKind::timeout,
                      where + " did not finish within " + std::to_string(timeout.count() / 1000) + " s",
                      "run it by hand; interactive plugins are not supported");
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    std::string hint =
        code == 127 ? (exec.install_hint.empty() ? "install the plugin or fix its path in the kubeconfig"
                                                 : exec.install_hint)
                    : "run the plugin by hand to see why it fails";
    return make_error(ErrorKind::auth,
                      where + " failed (exit code " + std::to_string(code) + "): " + log::redact(trim(err)),
                      hint);
  }
  auto cred = parse_exec_credential(out, exec.api_version);
  if (!cred) {
    Error e = cred.error();
    e.message = where + ": " + e.message;
    return e;
  }
  return cred;
}

// --- CredentialCache ---

CredentialCache::CredentialCache(KubeClientConfig config) : config_(std::move(config)) {}

void CredentialCache::invalidate() {
  exec_cached_.reset();
  file_read_at_ = {};
}

Expected<ExecCredential> CredentialCache::exec_credential(std::chrono::system_clock::time_point now) {
  if (!config_.auth.exec) return make_error(ErrorKind::internal, "no exec plugin configured");
  // Refresh a little before expiry so a request never goes out with a credential about to lapse.
  constexpr auto kMargin = std::chrono::seconds(10);
  if (exec_cached_ && (!exec_cached_->expiry || now + kMargin < *exec_cached_->expiry)) return *exec_cached_;
  auto cred = run_exec_plugin(*config_.auth.exec, config_);
  ++exec_runs_;
  if (!cred) return cred;
  exec_cached_ = cred.value();
  return cred;
}

Expected<std::string> CredentialCache::authorization(std::chrono::system_clock::time_point now) {
  if (config_.auth.exec) {
    auto cred = exec_credential(now);
    if (!cred) return cred.error();
    if (!cred->token.empty()) return "Bearer " + cred->token;
    return std::string();
  }
  if (!config_.auth.token.empty()) return "Bearer " + config_.auth.token;
  if (!config_.auth.token_file.empty()) {
    if (file_token_.empty() || now - file_read_at_ > std::chrono::minutes(1)) {
      auto token = read_file(config_.auth.token_file);
      if (!token) {
        return make_error(ErrorKind::auth, "cannot read the token file " + config_.auth.token_file + " (" +
                                               config_.source + ")");
      }
      file_token_ = trim(*token);
      file_read_at_ = now;
      log::register_secret(file_token_);
    }
    return "Bearer " + file_token_;
  }
  if (!config_.auth.username.empty()) {
    std::string basic = base64_encode(config_.auth.username + ":" + config_.auth.password);
    log::register_secret(basic);
    return "Basic " + basic;
  }
  return std::string();
}

}  // namespace bootstorm::kube

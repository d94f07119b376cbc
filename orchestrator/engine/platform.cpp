#include "orchestrator/engine/platform.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/base64.hpp"
#include "common/log.hpp"
#include "providers/api/platform_descriptor.hpp"

namespace bootstorm::engine {

namespace {

std::string env(const std::string& name) {
  if (name.empty()) return {};
  const char* v = std::getenv(name.c_str());
  return v ? std::string(v) : std::string();
}

Expected<std::string> read_text(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return make_error(ErrorKind::not_found, fmt::format("cannot read {}", p.string()));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A credential file that group or others can read leaks through shared jump hosts, backups and support
// bundles. Warn (not refuse: CI runners mount secrets with modes of their own choosing).
void warn_if_readable_by_others(const std::string& path, const std::string& what) {
  struct stat st {};
  if (path.empty() || ::stat(path.c_str(), &st) != 0) return;
  if ((st.st_mode & (S_IRGRP | S_IROTH)) == 0) return;
  spdlog::warn("{} {} is readable by {} (mode {:04o}): restrict it with `chmod 600 {}`", what, path,
               (st.st_mode & S_IROTH) ? "other users" : "its group", st.st_mode & 07777, path);
}

// The kubeconfig files client-go would read: the plan's, else every file of $KUBECONFIG, else ~/.kube/config.
void warn_about_kubeconfig_modes(const std::string& plan_kubeconfig) {
  if (!plan_kubeconfig.empty()) {
    warn_if_readable_by_others(plan_kubeconfig, "kubeconfig");
    return;
  }
  if (std::string list = env("KUBECONFIG"); !list.empty()) {
    std::size_t begin = 0;
    while (begin <= list.size()) {
      std::size_t end = list.find(':', begin);
      if (end == std::string::npos) end = list.size();
      warn_if_readable_by_others(list.substr(begin, end - begin), "kubeconfig");
      begin = end + 1;
    }
    return;
  }
  if (std::string home = env("HOME"); !home.empty())
    warn_if_readable_by_others(home + "/.kube/config", "kubeconfig");
}

// User name and password (vCenter): environment variables or a YAML file with username/password. Messages
// name the platform's API as its descriptor does.
Expected<void> resolve_username_password(const plan::StormPlan& plan, const api::PlatformDescriptor& platform,
                                         api::ProviderConfig& config) {
  const auto& c = plan.platform.credentials;
  const std::string& api = platform.api_name;
  const bool file_allowed = std::find(platform.credential_keys.begin(), platform.credential_keys.end(),
                                      "file") != platform.credential_keys.end();
  const std::string env_hint = file_allowed ? "export it, or set platform.credentials.file" : "export it";
  if (!c.file.empty()) {
    warn_if_readable_by_others(c.file, api + " credentials file");
    try {
      YAML::Node node = YAML::LoadFile(c.file);
      config.username = node["username"] ? node["username"].as<std::string>() : "";
      config.password = node["password"] ? node["password"].as<std::string>() : "";
    } catch (const std::exception& e) {
      return make_error(ErrorKind::invalid_input,
                        fmt::format("cannot read credentials file {}: {}", c.file, e.what()),
                        "the file needs `username:` and `password:` keys");
    }
  } else {
    config.username = env(c.username_env);
    config.password = env(c.password_env);
    if (config.username.empty())
      return make_error(ErrorKind::invalid_input,
                        fmt::format("{} user name not set: environment variable {} is empty", api,
                                    c.username_env.empty() ? "(credentials.usernameEnv)" : c.username_env),
                        env_hint);
    if (config.password.empty())
      return make_error(ErrorKind::invalid_input,
                        fmt::format("{} password not set: environment variable {} is empty", api,
                                    c.password_env.empty() ? "(credentials.passwordEnv)" : c.password_env),
                        env_hint);
  }
  log::register_secret(config.password);
  return {};
}

// A private temporary file that is removed when the last reference goes.
std::shared_ptr<void> write_private_file(const std::string& content, std::string& path_out) {
  std::string tmpl = (std::filesystem::temp_directory_path() / "bootstorm-kubeconfig-XXXXXX").string();
  int fd = ::mkstemp(tmpl.data());
  if (fd < 0) return nullptr;
  std::size_t off = 0;
  while (off < content.size()) {
    auto n = ::write(fd, content.data() + off, content.size() - off);
    if (n <= 0) break;
    off += static_cast<std::size_t>(n);
  }
  ::close(fd);
  path_out = tmpl;
  return std::shared_ptr<void>(new std::string(tmpl), [](void* p) {
    auto* s = static_cast<std::string*>(p);
    std::error_code ec;
    std::filesystem::remove(*s, ec);
    delete s;
  });
}

}  // namespace

bool is_simulated_endpoint(const std::string& endpoint) {
  return endpoint == "embedded" || endpoint.rfind("lab:", 0) == 0;
}

std::string make_token_kubeconfig(const std::string& server, const std::string& ca_pem,
                                  const std::string& token) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "apiVersion" << YAML::Value << "v1";
  out << YAML::Key << "kind" << YAML::Value << "Config";
  out << YAML::Key << "clusters" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
  out << YAML::Key << "name" << YAML::Value << "lab";
  out << YAML::Key << "cluster" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "server" << YAML::Value << server;
  if (!ca_pem.empty())
    out << YAML::Key << "certificate-authority-data" << YAML::Value << base64_encode(ca_pem);
  out << YAML::EndMap << YAML::EndMap << YAML::EndSeq;
  out << YAML::Key << "users" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
  out << YAML::Key << "name" << YAML::Value << "lab";
  out << YAML::Key << "user" << YAML::Value << YAML::BeginMap << YAML::Key << "token" << YAML::Value << token
      << YAML::EndMap;
  out << YAML::EndMap << YAML::EndSeq;
  out << YAML::Key << "contexts" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
  out << YAML::Key << "name" << YAML::Value << "lab";
  out << YAML::Key << "context" << YAML::Value << YAML::BeginMap << YAML::Key << "cluster" << YAML::Value
      << "lab" << YAML::Key << "user" << YAML::Value << "lab" << YAML::EndMap;
  out << YAML::EndMap << YAML::EndSeq;
  out << YAML::Key << "current-context" << YAML::Value << "lab";
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

api::ProviderConfig base_provider_config(const plan::StormPlan& plan, const std::string& run_id,
                                         bool dry_run) {
  api::ProviderConfig c;
  c.kind = plan.platform.kind;
  c.endpoint = plan.platform.endpoint;
  c.kubeconfig = plan.platform.credentials.kubeconfig;
  c.context = plan.platform.credentials.context;
  c.ca_file = plan.platform.tls.ca_file;
  c.insecure_skip_verify = plan.platform.tls.insecure_skip_verify;
  c.requests_per_second = plan.platform.api_budget.requests_per_second;
  c.max_concurrent = plan.platform.api_budget.max_concurrent;
  c.starts_per_connection = plan.platform.api_budget.starts_per_connection;
  c.settings = plan.platform.settings;
  c.run_id = run_id;
  c.dry_run = dry_run;
  return c;
}

Expected<LabEndpoints> read_lab_endpoints(const std::filesystem::path& state_dir) {
  auto file = state_dir / "endpoints.json";
  auto text = read_text(file);
  if (!text)
    return make_error(ErrorKind::not_found, fmt::format("cannot read {}", file.string()),
                      "start the lab first: bootstorm lab serve --state-dir " + state_dir.string());
  auto j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return make_error(ErrorKind::protocol, fmt::format("{} is not a JSON object", file.string()));
  LabEndpoints e;
  e.vcenter_url = j.value("vcenter", "");
  e.kube_url = j.value("kube", "");
  e.kubeconfig = j.value("kubeconfig", "");
  e.ca_file = j.value("caFile", "");
  e.username = j.value("username", "");
  e.password = j.value("password", "");
  e.kube_token = j.value("kubeToken", j.value("token", ""));
  e.lab = j.value("lab", "");
  log::register_secret(e.password);
  log::register_secret(e.kube_token);
  return e;
}

Expected<OpenedLab> open_lab(const std::string& endpoint, const std::string& lab, const EngineHooks& hooks,
                             boost::asio::any_io_executor executor) {
  OpenedLab opened;
  if (endpoint == "embedded") {
    if (!hooks.start_embedded_lab)
      return make_error(ErrorKind::invalid_input, "this build cannot start the embedded lab",
                        "run `bootstorm lab serve --state-dir DIR` and use `endpoint: lab:DIR`");
    auto started = hooks.start_embedded_lab(executor, lab);
    if (!started) return started.error();
    opened.endpoints = started->endpoints;
    opened.keepalive = started->keepalive;
    opened.name = lab;
    opened.embedded = true;
  } else if (endpoint.rfind("lab:", 0) == 0) {
    const std::filesystem::path dir = endpoint.substr(4);
    auto read = read_lab_endpoints(dir);
    if (!read) return read.error();
    opened.endpoints = *read;
    opened.name = !lab.empty() ? lab : !read->lab.empty() ? read->lab : dir.string();
  } else {
    return make_error(ErrorKind::internal, "open_lab: '" + endpoint + "' is not a lab endpoint");
  }
  log::register_secret(opened.endpoints.password);
  log::register_secret(opened.endpoints.kube_token);
  return opened;
}

Expected<ResolvedPlatform> resolve_platform(const plan::StormPlan& plan, const std::string& run_id,
                                            bool dry_run, const EngineHooks& hooks,
                                            boost::asio::any_io_executor executor) {
  ResolvedPlatform r;
  r.config = base_provider_config(plan, run_id, dry_run);
  const std::string& endpoint = plan.platform.endpoint;
  // How to log in and which lab front serves the kind are the kind's to say. A kind without a descriptor
  // resolves nothing here: its provider (a test's) takes the plan's settings as they are.
  const auto platform = api::find_platform_descriptor(plan.platform.kind);

  if (!is_simulated_endpoint(endpoint)) {
    if (platform && platform->credential_form == api::CredentialForm::username_password) {
      auto creds = resolve_username_password(plan, *platform, r.config);
      if (!creds) return creds.error();
    } else if (platform && endpoint != "in-cluster") {
      warn_about_kubeconfig_modes(r.config.kubeconfig);
    }
    return r;
  }

  r.simulated = true;
  auto opened = open_lab(endpoint, plan.platform.lab, hooks, executor);
  if (!opened) return opened.error();
  const LabEndpoints& lab = opened->endpoints;
  r.keepalive = opened->keepalive;
  r.lab = opened->name;
  if (!lab.ca_pem.empty()) r.config.ca_data = lab.ca_pem;
  if (!lab.ca_file.empty()) r.config.ca_file = lab.ca_file;

  if (!platform)
    return make_error(ErrorKind::invalid_input,
                      fmt::format("platform kind '{}' has no lab simulator front", plan.platform.kind));
  if (platform->lab_front == api::LabFront::vcenter) {
    if (lab.vcenter_url.empty()) return make_error(ErrorKind::invalid_input, "the lab has no vCenter front");
    r.config.endpoint = lab.vcenter_url;
    r.config.username = lab.username;
    r.config.password = lab.password;
  } else {
    if (!lab.kubeconfig.empty()) {
      r.config.kubeconfig = lab.kubeconfig;
    } else {
      if (lab.kube_url.empty())
        return make_error(ErrorKind::invalid_input, "the lab has no Kubernetes front");
      std::string path;
      auto file = write_private_file(make_token_kubeconfig(lab.kube_url, lab.ca_pem, lab.kube_token), path);
      if (!file) return make_error(ErrorKind::io, "cannot write a temporary kubeconfig for the embedded lab");
      auto lab_keepalive = r.keepalive;
      r.keepalive = std::shared_ptr<void>(
          new std::pair<std::shared_ptr<void>, std::shared_ptr<void>>(file, lab_keepalive),
          [](void* p) { delete static_cast<std::pair<std::shared_ptr<void>, std::shared_ptr<void>>*>(p); });
      r.config.kubeconfig = path;
    }
    r.config.endpoint = "kubeconfig";
    r.config.context.clear();
  }
  return r;
}

}  // namespace bootstorm::engine

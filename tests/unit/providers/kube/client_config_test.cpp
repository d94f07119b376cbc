// A platform's configuration resolved into the Kubernetes client's: a kubeconfig and context with the plan's
// TLS overrides on top, an explicit https URL and token, and what is refused.
#include "providers/kube/client_config.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/support/scratch_dir.hpp"

namespace bootstorm::kube {
namespace {

const char* kKubeconfig = R"(apiVersion: v1
kind: Config
current-context: other
clusters:
- name: prod
  cluster:
    server: https://prod.example:6443
    certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCmFiYwotLS0tLUVORCBDRVJUSUZJQ0FURS0tLS0tCg==
users:
- name: carol
  user:
    token: carol-token
contexts:
- name: other
  context: {cluster: prod, user: carol}
- name: prod
  context: {cluster: prod, user: carol}
)";

TEST(ClientConfig, KubeconfigContextWithThePlansCaFileOnTop) {
  test_support::ScratchDir dir{"client-config"};
  const auto path = (dir.path() / "config").string();
  std::ofstream(path) << kKubeconfig;
  api::ProviderConfig pc;
  pc.endpoint = "kubeconfig";
  pc.kubeconfig = path;
  pc.context = "prod";
  pc.ca_file = "/override/ca.pem";
  auto cfg = resolve_client_config(pc);
  ASSERT_TRUE(cfg) << cfg.error().what();
  EXPECT_EQ(cfg->context, "prod");
  EXPECT_EQ(cfg->server, "https://prod.example:6443");
  EXPECT_EQ(cfg->tls.ca_file, "/override/ca.pem");
  EXPECT_TRUE(cfg->tls.ca_data.empty());
}

TEST(ClientConfig, ExplicitUrlAndToken) {
  api::ProviderConfig url;
  url.endpoint = "https://127.0.0.1:8443";
  url.password = "lab-token-1234";
  url.ca_data = "PEM";
  url.insecure_skip_verify = true;
  auto direct = resolve_client_config(url);
  ASSERT_TRUE(direct);
  EXPECT_EQ(direct->server, "https://127.0.0.1:8443");
  EXPECT_EQ(direct->auth.token, "lab-token-1234");
  EXPECT_EQ(direct->tls.ca_data, "PEM");
  EXPECT_TRUE(direct->tls.insecure_skip_verify);
}

TEST(ClientConfig, PlainHttpIsRefusedNamingTheEndpoint) {
  api::ProviderConfig bad;
  bad.endpoint = "http://plain:80";
  auto cfg = resolve_client_config(bad);
  ASSERT_FALSE(cfg);
  EXPECT_NE(std::string(cfg.error().what()).find("http://plain:80"), std::string::npos);
}

}  // namespace
}  // namespace bootstorm::kube

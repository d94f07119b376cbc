#pragma once
// A test fixture: `bootstorm lab serve --lab small` in its own process (ports 0), and bootstorm's HTTP
// transport to its vCenter front over TLS verified against the lab's CA. The tests that drive the lab's /sdk
// and /api as a client would (tests/integration/vcenter_front) derive from it and add their sessions; a
// subclass that holds sessions on transport_ resets them before calling ServedLabVcenter::TearDown().
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "protocol/http/types.hpp"
#include "providers/api/provider.hpp"
#include "providers/vsphere/transport.hpp"
#include "tests/support/lab_process.hpp"
#include "tests/support/run_task.hpp"
#include "tests/support/scratch_dir.hpp"

namespace bootstorm::test_support {

class ServedLabVcenter : public ::testing::Test {
 protected:
  void SetUp() override {
    lab_ = std::make_unique<LabProcess>("small", dir_ / "state", dir_.path());
    ASSERT_TRUE(lab_->wait_ready());
    config_.kind = "vsphere";
    config_.endpoint = lab_->endpoints().at("vcenter").get<std::string>();
    config_.ca_file = lab_->endpoints().at("caFile").get<std::string>();
    config_.max_concurrent = 8;
    transport_ = vsphere::make_http_transport(io_.get_executor(), config_);
  }
  void TearDown() override {
    transport_.reset();
    lab_.reset();
  }

  // The lab's administrator, as endpoints.json names them.
  std::string admin_user() const { return lab_->endpoints().at("username").get<std::string>(); }
  std::string admin_password() const { return lab_->endpoints().at("password").get<std::string>(); }

  // GET of one of the lab's own endpoints (/_lab/truth, /_lab/stats) as JSON; {} and a test failure when it
  // does not answer 200.
  nlohmann::json lab_get(const std::string& path) {
    auto resp = testing::run_task(io_, transport_->send(http::Request("GET", path)));
    EXPECT_TRUE(resp && resp->status == 200) << path << ": " << (resp ? resp->body : resp.error().what());
    return resp && resp->status == 200 ? nlohmann::json::parse(resp->body, nullptr, false) : nlohmann::json{};
  }
  // POST /_lab/faults (a partial update, README "Faults").
  void set_faults(const std::string& json) {
    http::Request req("POST", "/_lab/faults", json);
    req.headers.emplace_back("Content-Type", "application/json");
    auto resp = testing::run_task(io_, transport_->send(std::move(req)));
    ASSERT_TRUE(resp && resp->status == 200) << (resp ? resp->body : resp.error().what());
  }

  boost::asio::io_context io_;
  ScratchDir dir_{"served-lab"};
  std::unique_ptr<LabProcess> lab_;
  api::ProviderConfig config_;
  std::unique_ptr<vsphere::Transport> transport_;
};

}  // namespace bootstorm::test_support

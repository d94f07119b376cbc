// The adopting provider: provision() hands out the existing (migrated) VMs in order instead of cloning,
// destroy() only stops them, and the storm itself is delegated to the real provider.
#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <optional>

#include "orchestrator/migrate/adopt_provider.hpp"
#include "tests/support/run_task.hpp"

namespace bootstorm::migrate {
namespace {

using boost::asio::awaitable;
using bootstorm::testing::run_task;

// Records what reaches the real provider.
class RecordingProvider : public api::Provider {
 public:
  std::vector<std::string> calls;
  api::Capabilities capabilities() const override { return {}; }
  awaitable<Expected<void>> connect() override {
    calls.push_back("connect");
    co_return Expected<void>();
  }
  awaitable<Expected<void>> check_inventory(const api::InventoryRequest&) override {
    calls.push_back("check_inventory");
    co_return Expected<void>();
  }
  awaitable<Expected<api::VmHandle>> provision(const api::VmSpec& spec) override {
    calls.push_back("provision " + spec.name);
    api::VmHandle h;
    h.name = h.id = spec.name;
    co_return h;
  }
  awaitable<Expected<void>> wait_startable(const api::VmHandle& vm, std::chrono::milliseconds) override {
    calls.push_back("wait_startable " + vm.name);
    co_return Expected<void>();
  }
  awaitable<Expected<void>> prepare_storm(std::size_t n) override {
    calls.push_back("prepare_storm " + std::to_string(n));
    co_return Expected<void>();
  }
  awaitable<Expected<api::StartResult>> start(const api::VmHandle& vm) override {
    calls.push_back("start " + vm.id);
    api::StartResult r;
    co_return r;
  }
  awaitable<void> observe(std::vector<api::VmHandle>, api::MilestoneSink, CancelSignal) override {
    co_return;
  }
  awaitable<Expected<void>> stop(const api::VmHandle& vm) override {
    calls.push_back("stop " + vm.id);
    co_return Expected<void>();
  }
  awaitable<Expected<void>> destroy(const api::VmHandle& vm) override {
    calls.push_back("destroy " + vm.id);
    co_return Expected<void>();
  }
  awaitable<Expected<std::vector<api::VmHandle>>> list_run_vms(const std::string&) override {
    co_return std::vector<api::VmHandle>{};
  }
  awaitable<void> disconnect() override { co_return; }
  http::ApiStats stats() const override { return {}; }
};

TEST(AdoptingProvider, AdoptsExistingVmsInsteadOfCloning) {
  auto inner = std::make_unique<RecordingProvider>();
  RecordingProvider* rec = inner.get();
  auto p = make_adopting_provider(
      std::move(inner), {{"desk-01", "migrated/desk-01", ""}, {"desk-02", "migrated/desk-02", "worker-1"}});
  boost::asio::io_context io;
  ASSERT_TRUE(run_task(io, p->connect()));
  api::InventoryRequest too_many;
  too_many.total_vms = 3;
  EXPECT_FALSE(run_task(io, p->check_inventory(too_many)));
  api::InventoryRequest ok;
  ok.total_vms = 2;
  EXPECT_TRUE(run_task(io, p->check_inventory(ok)));
  api::VmSpec spec;
  spec.name = "bs-abc123-openshift-desktops-002";
  spec.scenario = "OpenShift desktops";
  spec.host = "forklift";
  spec.index = 2;
  auto h = run_task(io, p->provision(spec));
  ASSERT_TRUE(h);
  EXPECT_EQ(h->name, "desk-02");
  EXPECT_EQ(h->id, "migrated/desk-02");
  EXPECT_EQ(h->host, "worker-1");
  EXPECT_EQ(h->scenario, "OpenShift desktops");
  spec.index = 1;
  auto h1 = run_task(io, p->provision(spec));
  ASSERT_TRUE(h1);
  EXPECT_EQ(h1->host, "forklift");  // unknown node: the placement's host
  spec.index = 3;
  EXPECT_FALSE(run_task(io, p->provision(spec)));
  EXPECT_TRUE(run_task(io, p->wait_startable(*h, std::chrono::seconds(1))));
  EXPECT_TRUE(run_task(io, p->start(*h)));
  EXPECT_TRUE(run_task(io, p->destroy(*h)));
  // Nothing was cloned, checked or deleted by the real provider; the start and a stop reached it.
  EXPECT_EQ(rec->calls,
            (std::vector<std::string>{"connect", "start migrated/desk-02", "stop migrated/desk-02"}));
}

}  // namespace
}  // namespace bootstorm::migrate

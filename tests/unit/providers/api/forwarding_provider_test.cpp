// ForwardingProvider (providers/api/forwarding_provider.hpp): every call reaches the target, a subclass
// changes only what it overrides, and before there is a target the calls fail with the subclass's words
// instead of dereferencing nothing.
#include "providers/api/forwarding_provider.hpp"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <string>
#include <vector>

#include "tests/support/run_task.hpp"

namespace bootstorm::api {
namespace {

namespace asio = boost::asio;

// Records every call it gets.
class Recorder final : public Provider {
 public:
  explicit Recorder(std::vector<std::string>& calls) : calls_(calls) {}
  Capabilities capabilities() const override {
    Capabilities c;
    c.api = "recorder";
    return c;
  }
  asio::awaitable<Expected<void>> connect() override { co_return note("connect"); }
  asio::awaitable<Expected<void>> check_inventory(const InventoryRequest&) override {
    co_return note("check_inventory");
  }
  asio::awaitable<Expected<VmHandle>> provision(const VmSpec& spec) override {
    calls_.push_back("provision " + spec.name);
    co_return VmHandle{spec.name, "id-" + spec.name, spec.host, spec.scenario};
  }
  asio::awaitable<Expected<void>> wait_startable(const VmHandle&, std::chrono::milliseconds) override {
    co_return note("wait_startable");
  }
  asio::awaitable<Expected<void>> prepare_storm(std::size_t) override { co_return note("prepare_storm"); }
  asio::awaitable<Expected<StartResult>> start(const VmHandle& vm) override {
    calls_.push_back("start " + vm.name);
    co_return StartResult{};
  }
  asio::awaitable<void> observe(std::vector<VmHandle>, MilestoneSink, CancelSignal) override {
    calls_.push_back("observe");
    co_return;
  }
  asio::awaitable<Expected<void>> stop(const VmHandle& vm) override { co_return note("stop " + vm.name); }
  asio::awaitable<Expected<void>> destroy(const VmHandle& vm) override {
    co_return note("destroy " + vm.name);
  }
  asio::awaitable<Expected<std::vector<VmHandle>>> list_run_vms(const std::string& run_id) override {
    calls_.push_back("list_run_vms " + run_id);
    co_return std::vector<VmHandle>{};
  }
  asio::awaitable<Expected<void>> remove_run_artifacts(const std::string& run_id) override {
    co_return note("remove_run_artifacts " + run_id);
  }
  asio::awaitable<void> disconnect() override {
    calls_.push_back("disconnect");
    co_return;
  }
  http::ApiStats stats() const override {
    http::ApiStats s;
    s.requests = 7;
    return s;
  }
  std::string clone_method(const VmHandle&) const override { return "linked"; }

 private:
  Expected<void> note(std::string call) {
    calls_.push_back(std::move(call));
    return {};
  }
  std::vector<std::string>& calls_;
};

// Forwards everything but destroy, which it turns into a stop (as the migration's adopting provider does).
class StopInsteadOfDestroy final : public ForwardingProvider {
 public:
  explicit StopInsteadOfDestroy(std::unique_ptr<Provider> target) : ForwardingProvider(std::move(target)) {}
  asio::awaitable<Expected<void>> destroy(const VmHandle& vm) override { co_return co_await stop(vm); }
};

// Has no target until told.
class Late final : public ForwardingProvider {
 public:
  void arrive(std::unique_ptr<Provider> target) { set_target(std::move(target)); }

 private:
  Error missing_target() const override { return make_error(ErrorKind::internal, "late: not connected"); }
};

template <class T>
T run(asio::io_context& io, asio::awaitable<T> task) {
  return testing::run_task(io, std::move(task));
}

TEST(ForwardingProvider, EveryCallReachesTheTargetButTheOnesASubclassChanges) {
  asio::io_context io;
  std::vector<std::string> calls;
  StopInsteadOfDestroy p(std::make_unique<Recorder>(calls));
  const VmHandle vm{"bs-abc123-s-001", "id", "h", "s"};
  EXPECT_TRUE(run(io, p.connect()));
  EXPECT_TRUE(run(io, p.check_inventory(InventoryRequest{})));
  EXPECT_TRUE(run(io, p.provision(VmSpec{"bs-abc123-s-001", "s", "h", 1})));
  EXPECT_TRUE(run(io, p.wait_startable(vm, std::chrono::seconds(1))));
  EXPECT_TRUE(run(io, p.prepare_storm(1)));
  EXPECT_TRUE(run(io, p.start(vm)));
  testing::run_task(io, p.observe(std::vector<VmHandle>{vm}, MilestoneSink{}, CancelSignal{}));
  EXPECT_TRUE(run(io, p.stop(vm)));
  EXPECT_TRUE(run(io, p.destroy(vm)));
  EXPECT_TRUE(run(io, p.list_run_vms("abc123")));
  EXPECT_TRUE(run(io, p.remove_run_artifacts("abc123")));
  testing::run_task(io, p.disconnect());
  EXPECT_EQ(calls,
            (std::vector<std::string>{"connect", "check_inventory", "provision bs-abc123-s-001",
                                      "wait_startable", "prepare_storm", "start bs-abc123-s-001", "observe",
                                      "stop bs-abc123-s-001", "stop bs-abc123-s-001", "list_run_vms abc123",
                                      "remove_run_artifacts abc123", "disconnect"}));
  EXPECT_EQ(p.capabilities().api, "recorder");
  EXPECT_EQ(p.stats().requests, 7u);
  EXPECT_EQ(p.clone_method(vm), "linked");
}

TEST(ForwardingProvider, BeforeThereIsATargetCallsFailInTheSubclasssWords) {
  asio::io_context io;
  Late p;
  auto connected = run(io, p.connect());
  ASSERT_FALSE(connected);
  EXPECT_EQ(connected.error().message, "late: not connected");
  EXPECT_FALSE(run(io, p.start(VmHandle{})));
  auto checks = run(io, p.check(CheckRequest{}));
  ASSERT_EQ(checks.size(), 1u);
  EXPECT_EQ(checks[0].status, CheckStatus::fail);
  EXPECT_NE(checks[0].finding.find("late: not connected"), std::string::npos) << checks[0].finding;
  EXPECT_EQ(p.stats().requests, 0u);
  EXPECT_EQ(p.capabilities().api, "");

  std::vector<std::string> calls;
  p.arrive(std::make_unique<Recorder>(calls));
  EXPECT_TRUE(run(io, p.connect()));
  EXPECT_EQ(calls, std::vector<std::string>{"connect"});
}

}  // namespace
}  // namespace bootstorm::api

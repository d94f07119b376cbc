// A third platform kind registered with its descriptor and factory (api::register_platform) runs through the
// engine as the built-in kinds do: the engine builds its provider through the registered factory, logs it
// in and finds it in the lab the way its descriptor says. Nothing in orchestrator/engine names it.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>

#include "orchestrator/engine/run_engine.hpp"
#include "tests/support/fake_platform.hpp"
#include "tests/unit/orchestrator/engine/fake_provider.hpp"
#include "tests/unit/orchestrator/engine/test_support.hpp"

namespace bootstorm::engine {
namespace {

using std::chrono::milliseconds;

class ThirdPlatform : public ::testing::Test {
 protected:
  void SetUp() override {
    auto factory = test::fake_factory(behaviour_, record_);
    api::register_platform(test_support::fake_platform_descriptor(),
                           [this, factory](boost::asio::any_io_executor ex, const api::ProviderConfig& c) {
                             built_with_ = c;
                             return factory(ex, c);
                           });
    options_.output_dir = dir_.path();
    options_.plan_yaml = "name: unit-plan\n";
    options_.progress = Progress::Mode::none;
    options_.handle_signals = false;
    options_.observe_tick = milliseconds(10);
    options_.stop_grace = milliseconds(500);
  }

  // No make_provider hook: the engine asks the registry (api::create_provider).
  RunResult run(const plan::StormPlan& plan) {
    EngineHooks hooks;
    hooks.write_outputs = [](const std::filesystem::path&, const results::RunRecord&) -> Expected<bool> {
      return true;
    };
    return RunEngine(plan, options_, hooks).run();
  }

  static plan::StormPlan fakecloud_plan() {
    auto plan = test::small_plan(2, 1);
    plan.platform.kind = "fakecloud";
    test_support::FakeCloudSettings settings;
    settings.image = "desk-11";
    settings.flavor = "large";
    plan.platform.settings = api::make_settings(settings);
    return plan;
  }

  test::ScratchDir dir_;
  test::FakeBehaviour behaviour_;
  std::shared_ptr<test::FakeRecord> record_ = std::make_shared<test::FakeRecord>();
  RunOptions options_;
  api::ProviderConfig built_with_;
};

TEST_F(ThirdPlatform, EngineBuildsItsProviderThroughTheRegisteredFactory) {
  test::ScratchDir state;
  std::ofstream(state.path() / "endpoints.json")
      << R"({"vcenter": "https://127.0.0.1:1234", "kube": "https://127.0.0.1:1235", "username": "lab-admin",)"
      << R"( "password": "lab-pass-123", "lab": "tolly-2024"})";
  auto plan = fakecloud_plan();
  plan.platform.endpoint = "lab:" + state.path().string();

  auto result = run(plan);

  EXPECT_EQ(result.exit_code, 0) << (result.error ? result.error->what() : "");
  EXPECT_EQ(result.vms_ready, 2u);
  EXPECT_EQ(built_with_.kind, "fakecloud");
  // Its own typed settings, handed on unopened.
  EXPECT_EQ(built_with_.settings.as<test_support::FakeCloudSettings>().flavor, "large");
  // Its descriptor names the lab's vCenter front and a user/password login.
  EXPECT_EQ(built_with_.endpoint, "https://127.0.0.1:1234");
  EXPECT_EQ(built_with_.username, "lab-admin");
  EXPECT_EQ(built_with_.password, "lab-pass-123");
  EXPECT_NE(std::find(record_->calls.begin(), record_->calls.end(), "connect"), record_->calls.end());
}

TEST_F(ThirdPlatform, ItsCredentialsAreResolvedAsItsDescriptorSays) {
  auto plan = fakecloud_plan();
  plan.platform.endpoint = "https://fake.example";
  plan.platform.credentials.username_env = "BOOTSTORM_TEST_FAKECLOUD_USER";
  plan.platform.credentials.password_env = "BOOTSTORM_TEST_FAKECLOUD_PASSWORD";
  ::setenv("BOOTSTORM_TEST_FAKECLOUD_USER", "desk-admin", 1);
  ::setenv("BOOTSTORM_TEST_FAKECLOUD_PASSWORD", "desk-pass-456", 1);
  auto result = run(plan);
  EXPECT_EQ(result.exit_code, 0) << (result.error ? result.error->what() : "");
  EXPECT_EQ(built_with_.username, "desk-admin");
  EXPECT_EQ(built_with_.password, "desk-pass-456");

  // Its API's name in the message, from the descriptor.
  ::unsetenv("BOOTSTORM_TEST_FAKECLOUD_USER");
  result = run(plan);
  ASSERT_TRUE(result.error);
  EXPECT_EQ(result.error->message,
            "FakeCloud user name not set: environment variable BOOTSTORM_TEST_FAKECLOUD_USER is empty");
  EXPECT_EQ(result.error->hint, "export it");  // its credentials have no file key
  ::unsetenv("BOOTSTORM_TEST_FAKECLOUD_PASSWORD");
}

TEST_F(ThirdPlatform, AnUnknownKindsErrorListsTheRegisteredKinds) {
  auto plan = fakecloud_plan();
  plan.platform.kind = "xen";
  auto result = run(plan);
  ASSERT_TRUE(result.error);
  EXPECT_EQ(result.error->message, "unknown platform kind 'xen'");
  EXPECT_NE(result.error->hint.find("fakecloud"), std::string::npos) << result.error->hint;
}

}  // namespace
}  // namespace bootstorm::engine

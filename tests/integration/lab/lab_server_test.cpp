// The lab server (simulator/lab) as `lab serve` and `lab attach` host it: a stop that cannot happen is made
// visible instead of hanging the process.
#include "simulator/lab/lab_server.hpp"

#include <gtest/gtest.h>

#include <boost/asio/post.hpp>
#include <chrono>
#include <thread>

#include "common/log.hpp"

namespace bootstorm::sim {
namespace {

// A lab thread stuck in a handler never gets round to stopping: stop() gives up after the deadline and
// aborts, naming the problem, instead of waiting for ever (SIGTERM to `lab attach` then did nothing).
TEST(LabServerDeathTest, AStuckLabThreadAbortsTheStopAtItsDeadlineSayingSo) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        bootstorm::log::init({});  // the process's logger, on stderr, as the CLI installs it
        LabServerOptions options;
        options.stop_deadline = std::chrono::seconds(1);
        auto server = LabServer::start(std::move(options));
        if (!server) std::exit(3);
        boost::asio::post((*server)->executor(), [] { std::this_thread::sleep_for(std::chrono::hours(1)); });
        (*server)->stop();
      },
      "the lab thread did not stop within 1 s: it is stuck");
}

// A lab thread that is free stops at once, well within the deadline.
TEST(LabServer, AFreeLabThreadStopsAtOnce) {
  LabServerOptions options;
  options.stop_deadline = std::chrono::seconds(1);
  auto server = LabServer::start(std::move(options));
  ASSERT_TRUE(server) << server.error().what();
  const auto before = std::chrono::steady_clock::now();
  (*server)->stop();
  EXPECT_LT(std::chrono::steady_clock::now() - before, std::chrono::seconds(1));
}

}  // namespace
}  // namespace bootstorm::sim

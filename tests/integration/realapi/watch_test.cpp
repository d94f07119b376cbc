// The one list + watch loop (protocol/kube/list_watch) against a real kube-apiserver and etcd, on ConfigMaps:
// what only a real server does to a watch. It ends streams on its own (timeoutSeconds), and once etcd is
// compacted past the resourceVersion a watch resumes from, it answers 410. ConfigMaps are served without the
// watch cache here (--watch-cache-sizes=configmaps#0), so a watch reads etcd itself and gets no bookmarks: a
// watch whose label selector matched nothing for a while still resumes from the revision it last saw.
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "common/async/sleep.hpp"
#include "protocol/http/client.hpp"
#include "protocol/kube/http_kube_api.hpp"
#include "protocol/kube/kube_config.hpp"
#include "protocol/kube/list_watch.hpp"
#include "protocol/kube/object_calls.hpp"
#include "tests/support/realapi_process.hpp"
#include "tests/support/run_task.hpp"
#include "tests/support/scratch_dir.hpp"

namespace bootstorm::kube {
namespace {

namespace asio = boost::asio;
using asio::awaitable;
using nlohmann::json;
using std::chrono::steady_clock;

class RealApiWatch : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = std::make_unique<test_support::ScratchDir>("realapi-watch");
    server_ = std::make_unique<test_support::RealApiProcess>(
        BOOTSTORM_REALAPI, dir_->path(), std::vector<std::filesystem::path>{},
        std::vector<std::string>{"--watch-cache-sizes=configmaps#0"});
  }
  static void TearDownTestSuite() {
    server_.reset();
    dir_.reset();
  }

  void SetUp() override {
    ASSERT_TRUE(server_->ready()) << server_->why_not();
    auto config = load_kubeconfig({server_->kubeconfig("admin").string()}, "", true);
    ASSERT_TRUE(config) << config.error().what();
    api_ = std::make_unique<HttpKubeApi>(io_.get_executor(), std::move(*config), HttpKubeOptions{});
  }
  void TearDown() override {
    if (api_) api_->close();
    api_.reset();
  }

  // Connects the client, then makes the namespace the test works in.
  awaitable<void> make_namespace(const std::string& name) {
    const ConnectProbe probe{"/api/v1/namespaces", "namespaces", ""};
    auto connected = co_await api_->connect(probe);
    EXPECT_TRUE(connected) << connected.error().what();
    // Named first: g++ 12 miscompiles aggregate temporaries inside a co_await expression.
    const json namespace_object{{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", name}}}};
    auto made =
        co_await create_object(*api_, "/api/v1/namespaces", namespace_object, "creating namespace " + name);
    EXPECT_TRUE(made) << made.error().what();
  }
  awaitable<void> make_config_map(const std::string& ns, const std::string& name, bool watched) {
    json cm{{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", name}}}};
    if (watched) cm["metadata"]["labels"] = {{"watched", "yes"}};
    auto made = co_await create_object(*api_, "/api/v1/namespaces/" + ns + "/configmaps", cm,
                                       "creating ConfigMap " + name);
    EXPECT_TRUE(made) << made.error().what();
  }
  // Compacts etcd (the server's control endpoint); returns the revision compacted to.
  long long compact() {
    const json answer = server_->control_post("/compact");
    EXPECT_TRUE(answer.is_object()) << "POST /compact failed";
    return answer.is_object() ? answer.value("revision", 0LL) : 0;
  }
  // Waits until `ready()` holds, up to `limit`.
  static awaitable<bool> until(std::function<bool()> ready, std::chrono::seconds limit) {
    const auto end = steady_clock::now() + limit;
    while (!ready() && steady_clock::now() < end) co_await async::sleep_for(std::chrono::milliseconds(20));
    co_return ready();
  }

  // What the loop handed over, per object name.
  struct Seen {
    int listed = 0, added = 0, modified = 0;
  };

  // The loop over the namespace's ConfigMaps (`query`: a label selector), asking the server to end each
  // stream after a second.
  static ListWatchRequest request_for(const std::string& ns, const std::string& query = {}) {
    ListWatchRequest request;
    request.collection = "/api/v1/namespaces/" + ns + "/configmaps";
    request.query = query;
    request.what = "ConfigMaps";
    request.watch_timeout_seconds = 1;
    request.deadline = steady_clock::now() + std::chrono::seconds(90);
    request.max_failures = 5;
    return request;
  }
  // Starts the loop with `handlers` (their on_list counts lists, re-lists and the objects listed, in seen_),
  // and waits for its first list.
  awaitable<void> start_loop(ListWatchRequest request, ListWatchHandlers handlers) {
    handlers.on_list = [this](const std::vector<json>& items, ClientInstant, bool relist) {
      ++lists_;
      relists_ += relist ? 1 : 0;
      for (const auto& item : items) ++seen_[item["metadata"].value("name", "")].listed;
    };
    asio::co_spawn(io_.get_executor(), list_watch(*api_, std::move(request), std::move(handlers), cancel_),
                   [this](std::exception_ptr, Expected<void> r) {
                     loop_result_ = std::move(r);
                     loop_ended_ = true;
                   });
    EXPECT_TRUE(co_await until([this] { return lists_ > 0; }, std::chrono::seconds(30)));
  }
  // Waits for the loop to end on its own (its done() became true) within `limit`, then makes sure it ended.
  awaitable<void> loop_ends_within(std::chrono::seconds limit) {
    EXPECT_TRUE(co_await until([this] { return loop_ended_; }, limit));
    cancel_.cancel();
    co_await until([this] { return loop_ended_; }, std::chrono::seconds(10));
    EXPECT_TRUE(loop_result_) << loop_result_.error().what();
  }

  static inline std::unique_ptr<test_support::ScratchDir> dir_;
  static inline std::unique_ptr<test_support::RealApiProcess> server_;
  asio::io_context io_;
  std::unique_ptr<HttpKubeApi> api_;
  std::map<std::string, Seen> seen_;
  int lists_ = 0, relists_ = 0;
  CancelSignal cancel_;
  bool loop_ended_ = false;
  Expected<void> loop_result_;
};

// The server ends every stream after a second; the loop resumes each from the last resourceVersion it saw.
// Across those ends, 120 creations and 120 updates: each seen exactly once, none replayed, no re-list.
TEST_F(RealApiWatch, StreamsTheServerEndsResumeWithoutAGapOrARepeat) {
  constexpr int kObjects = 120;
  int modified_total = 0;
  bool order_broken = false;
  const http::ApiStats before = api_->stats();
  testing::run_task(io_, [&]() -> awaitable<void> {
    co_await make_namespace("resume");
    ListWatchHandlers handlers;
    handlers.on_event = [&](const WatchEvent& ev, ClientInstant, bool, double) {
      Seen& s = seen_[ev.object["metadata"].value("name", "")];
      if (ev.type == WatchEvent::Type::added) ++s.added;
      if (ev.type == WatchEvent::Type::modified) {
        if (s.added == 0) order_broken = true;
        ++s.modified;
        ++modified_total;
      }
    };
    handlers.done = [&] { return modified_total >= kObjects; };
    co_await start_loop(request_for("resume"), std::move(handlers));
    // ~8 s of changes: the streams end about 8 times in between.
    for (int i = 0; i < kObjects; ++i) {
      co_await make_config_map("resume", "cm-" + std::to_string(i), false);
      co_await async::sleep_for(std::chrono::milliseconds(30));
    }
    for (int i = 0; i < kObjects; ++i) {
      const json patch{{"data", {{"n", "1"}}}};
      auto patched =
          co_await merge_patch_object(*api_, "/api/v1/namespaces/resume/configmaps/cm-" + std::to_string(i),
                                      patch, "updating a ConfigMap");
      EXPECT_TRUE(patched) << patched.error().what();
      co_await async::sleep_for(std::chrono::milliseconds(30));
    }
    co_await loop_ends_within(std::chrono::seconds(60));
  }());
  EXPECT_EQ(lists_, 1);
  EXPECT_EQ(relists_, 0);
  EXPECT_FALSE(order_broken);
  ASSERT_EQ(seen_.size(), static_cast<std::size_t>(kObjects));
  for (const auto& [name, s] : seen_) {
    EXPECT_EQ(s.listed, 0) << name;
    EXPECT_EQ(s.added, 1) << name;
    EXPECT_EQ(s.modified, 1) << name;
  }
  // The server ended streams: more watch requests than the one a loop needs (requests = 1 namespace, the
  // creations and updates, the list, the watches).
  const http::ApiStats seen_stats = api_->stats().since(before);
  EXPECT_GE(seen_stats.requests, 1u + 2u * kObjects + 1u + 5u) << "fewer watch streams than expected";
  // API Priority and Fairness names, on every answer, the FlowSchema and priority level that admitted it: the
  // client counts the answers under each (summary.json's apiAnswers), by the headers' names as kube-apiserver
  // spells them.
  EXPECT_FALSE(seen_stats.flow_schemas.empty());
  EXPECT_FALSE(seen_stats.priority_levels.empty());
}

// A watch that saw nothing for a while resumes from an old revision; etcd was compacted past it meanwhile.
// The server answers 410, the loop re-lists (the object it had seen is in that list) and goes on watching:
// the object created after is seen once.
TEST_F(RealApiWatch, AResourceVersionCompactedAwayIsGoneAndTheLoopRelists) {
  long long compacted_at = 0;
  testing::run_task(io_, [&]() -> awaitable<void> {
    co_await make_namespace("compact");
    ListWatchHandlers handlers;
    handlers.on_event = [&](const WatchEvent& ev, ClientInstant, bool, double) {
      if (ev.type == WatchEvent::Type::added) ++seen_[ev.object["metadata"].value("name", "")].added;
    };
    handlers.done = [&] { return seen_["after"].added + seen_["after"].listed > 0; };
    co_await start_loop(request_for("compact", "labelSelector=watched%3Dyes"), std::move(handlers));
    co_await make_config_map("compact", "before", true);
    EXPECT_TRUE(co_await until([&] { return seen_["before"].added > 0; }, std::chrono::seconds(30)));
    // Revisions the watch does not see (its selector filters them out), then compaction past them all.
    for (int i = 0; i < 50; ++i) co_await make_config_map("compact", "unwatched-" + std::to_string(i), false);
    compacted_at = compact();
    EXPECT_TRUE(co_await until([&] { return relists_ > 0; }, std::chrono::seconds(30)))
        << "no re-list after etcd was compacted at revision " << compacted_at;
    co_await make_config_map("compact", "after", true);
    co_await loop_ends_within(std::chrono::seconds(30));
  }());
  EXPECT_GT(compacted_at, 0);
  EXPECT_EQ(relists_, 1);
  EXPECT_EQ(seen_["before"].added, 1);
  EXPECT_EQ(seen_["before"].listed, 1);  // in the re-list
  EXPECT_EQ(seen_["after"].added + seen_["after"].listed, 1);
  EXPECT_EQ(seen_.count("unwatched-0"), 0u);
}

}  // namespace
}  // namespace bootstorm::kube

// The one list + watch loop (protocol/kube/list_watch.hpp) over a FakeKubeApi: resume, bookmarks, 410
// re-list, failures, deadline and cancel.
#include "protocol/kube/list_watch.hpp"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "tests/support/run_task.hpp"
#include "tests/unit/protocol/kube/fake_kube_api.hpp"

namespace bootstorm::kube {
namespace {
using nlohmann::json;
using testing::FakeKubeApi;

constexpr const char* kCollection = "/api/v1/namespaces/ns/pods";

std::string list_body(const std::string& rv, const std::vector<std::string>& names,
                      const std::string& next = "") {
  json list = {{"kind", "PodList"}, {"metadata", {{"resourceVersion", rv}}}, {"items", json::array()}};
  if (!next.empty()) list["metadata"]["continue"] = next;
  for (const auto& n : names) list["items"].push_back({{"metadata", {{"name", n}, {"resourceVersion", rv}}}});
  return list.dump();
}

std::string event(const std::string& type, const std::string& name, const std::string& rv) {
  return json{{"type", type}, {"object", {{"metadata", {{"name", name}, {"resourceVersion", rv}}}}}}.dump();
}

std::string bookmark(const std::string& rv) {
  return json{{"type", "BOOKMARK"}, {"object", {{"metadata", {{"resourceVersion", rv}}}}}}.dump();
}

std::string gone() {
  return R"({"type":"ERROR","object":{"kind":"Status","status":"Failure","reason":"Expired","code":410}})";
}

// What the handlers saw: every object name in order, with "list:" / "relist:" / "ADDED:" ... prefixes.
struct Seen {
  std::vector<std::string> log;
  std::size_t objects = 0;
  ListWatchHandlers handlers(std::size_t until_objects) {
    ListWatchHandlers h;
    h.on_list = [this](const std::vector<json>& items, ClientInstant, bool relist) {
      for (const auto& item : items) {
        log.push_back(std::string(relist ? "relist:" : "list:") + item["metadata"].value("name", ""));
        ++objects;
      }
    };
    h.on_event = [this](const WatchEvent& ev, ClientInstant, bool, double) {
      static const char* names[] = {"ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"};
      log.push_back(std::string(names[static_cast<int>(ev.type)]) + ":" +
                    ev.object["metadata"].value("name", ""));
      ++objects;
    };
    h.done = [this, until_objects] { return objects >= until_objects; };
    return h;
  }
};

ListWatchRequest request_for(std::string what = "pods") {
  ListWatchRequest r;
  r.collection = kCollection;
  r.query = "labelSelector=app%3Ddesk";
  r.what = std::move(what);
  return r;
}

TEST(ListWatch, ListsOnceThenWatchesFromTheListsResourceVersionUntilDone) {
  boost::asio::io_context io;
  FakeKubeApi api(io.get_executor());
  api.on("GET", kCollection, 200, list_body("10", {"a", "b"}));
  api.add_watch({200, {event("ADDED", "c", "11"), event("MODIFIED", "a", "12")}});
  Seen seen;
  auto result = bootstorm::testing::run_task(io, list_watch(api, request_for(), seen.handlers(4), {}));
  ASSERT_TRUE(result) << result.error().what();
  EXPECT_EQ(seen.log, (std::vector<std::string>{"list:a", "list:b", "ADDED:c", "MODIFIED:a"}));
  ASSERT_EQ(api.calls.size(), 1u);
  EXPECT_EQ(api.calls[0].target, std::string(kCollection) + "?labelSelector=app%3Ddesk");
  EXPECT_EQ(api.calls[0].budget, Budget::unpaced);
  EXPECT_EQ(api.budget_charges, 1);  // the list spends a turn without waiting for it
  ASSERT_EQ(api.watch_targets.size(), 1u);
  EXPECT_NE(api.watch_targets[0].find("labelSelector=app%3Ddesk&watch=1&allowWatchBookmarks=true"),
            std::string::npos);
  EXPECT_NE(api.watch_targets[0].find("&resourceVersion=10"), std::string::npos) << api.watch_targets[0];
}

TEST(ListWatch, ADroppedStreamResumesFromTheLastResourceVersionWithoutListingAgain) {
  boost::asio::io_context io;
  FakeKubeApi api(io.get_executor());
  api.on("GET", kCollection, 200, list_body("10", {}));
  api.add_watch({200,
                 {event("ADDED", "a", "11"), bookmark("15")},
                 make_error(ErrorKind::io, "connection reset by peer")});
  api.add_watch({200, {event("ADDED", "b", "16")}});
  Seen seen;
  auto result = bootstorm::testing::run_task(io, list_watch(api, request_for(), seen.handlers(2), {}));
  ASSERT_TRUE(result) << result.error().what();
  EXPECT_EQ(seen.log, (std::vector<std::string>{"ADDED:a", "ADDED:b"}));  // the bookmark is no event
  EXPECT_EQ(api.calls.size(), 1u);                                        // one list only
  ASSERT_EQ(api.watch_targets.size(), 2u);
  EXPECT_NE(api.watch_targets[1].find("&resourceVersion=15"), std::string::npos) << api.watch_targets[1];
}

TEST(ListWatch, GoneRelistsAndWatchesFromTheNewList) {
  boost::asio::io_context io;
  FakeKubeApi api(io.get_executor());
  int lists = 0;
  api.on("GET", kCollection, [&lists](const ApiCall&) -> Expected<http::Response> {
    ++lists;
    return testing::fake_response(200, lists == 1 ? list_body("10", {"a"}) : list_body("40", {"a", "b"}));
  });
  api.add_watch({200, {gone()}});
  api.add_watch({200, {event("DELETED", "a", "41")}});
  Seen seen;
  auto result = bootstorm::testing::run_task(io, list_watch(api, request_for(), seen.handlers(4), {}));
  ASSERT_TRUE(result) << result.error().what();
  EXPECT_EQ(seen.log, (std::vector<std::string>{"list:a", "relist:a", "relist:b", "DELETED:a"}));
  EXPECT_EQ(lists, 2);
  ASSERT_EQ(api.watch_targets.size(), 2u);
  EXPECT_NE(api.watch_targets[1].find("&resourceVersion=40"), std::string::npos) << api.watch_targets[1];
}

TEST(ListWatch, PagedListsFollowContinueTokens) {
  boost::asio::io_context io;
  FakeKubeApi api(io.get_executor());
  api.on("GET", kCollection, [](const ApiCall& call) -> Expected<http::Response> {
    if (call.target.find("continue=") == std::string::npos)
      return testing::fake_response(200, list_body("7", {"a", "b"}, "page-2"));
    return testing::fake_response(200, list_body("8", {"c"}));
  });
  auto request = request_for();
  request.page_size = 2;
  Seen seen;
  auto result = bootstorm::testing::run_task(io, list_watch(api, request, seen.handlers(3), {}));
  ASSERT_TRUE(result) << result.error().what();
  EXPECT_EQ(seen.log, (std::vector<std::string>{"list:a", "list:b", "list:c"}));
  ASSERT_EQ(api.calls.size(), 2u);
  EXPECT_NE(api.calls[0].target.find("limit=2"), std::string::npos);
  EXPECT_NE(api.calls[1].target.find("continue=page-2"), std::string::npos);
}

TEST(ListWatch, GivesUpWithTheLastErrorAfterMaxFailures) {
  boost::asio::io_context io;
  FakeKubeApi api(io.get_executor());
  api.on(
      "GET", kCollection, 403,
      R"({"kind":"Status","reason":"Forbidden","message":"pods is forbidden: User \"x\" cannot list","code":403})");
  auto request = request_for("Pods of the run");
  request.max_failures = 2;
  Seen seen;
  auto result = bootstorm::testing::run_task(io, list_watch(api, request, seen.handlers(1), {}));
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().kind, ErrorKind::auth);
  EXPECT_NE(result.error().message.find("listing Pods of the run failed: HTTP 403"), std::string::npos)
      << result.error().message;
  EXPECT_EQ(api.calls.size(), 3u);  // the first try and two retries
}

TEST(ListWatch, TheDeadlineEndsAWatchThatNeverFinishes) {
  boost::asio::io_context io;
  FakeKubeApi api(io.get_executor());
  api.on("GET", kCollection, 200, list_body("1", {}));
  auto request = request_for("Plan ns/p");
  request.deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(50);
  Seen seen;
  auto result = bootstorm::testing::run_task(io, list_watch(api, request, seen.handlers(1), {}));
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().kind, ErrorKind::timeout);
  EXPECT_EQ(result.error().message, "watching Plan ns/p: timed out");
  ASSERT_FALSE(api.watch_targets.empty());
  EXPECT_NE(api.watch_targets[0].find("timeoutSeconds=1"), std::string::npos) << api.watch_targets[0];
}

TEST(ListWatch, CancelEndsTheLoopAndReleasesTheStream) {
  boost::asio::io_context io;
  FakeKubeApi api(io.get_executor());
  api.on("GET", kCollection, 200, list_body("1", {}));
  CancelSignal cancel;
  boost::asio::steady_timer later(io, std::chrono::milliseconds(20));
  later.async_wait([cancel](boost::system::error_code) mutable { cancel.cancel(); });
  Seen seen;
  auto result = bootstorm::testing::run_task(io, list_watch(api, request_for(), seen.handlers(1), cancel));
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().kind, ErrorKind::cancelled);
  EXPECT_EQ(api.watch_targets.size(), 1u);  // it was watching when cancelled
  EXPECT_EQ(cancel.subscribers(), 0u);
}

TEST(RetryBackoff, DoublesFrom100msAndStaysUnderFiveSecondsWithJitter) {
  for (int attempt = 1; attempt <= 10; ++attempt) {
    const double base = std::min(5000.0, 100.0 * (1 << std::min(attempt - 1, 6)));
    const double ms = std::chrono::duration<double, std::milli>(retry_backoff(attempt)).count();
    EXPECT_GE(ms, base * 0.8 - 1e-6) << attempt;
    EXPECT_LE(ms, base * 1.2 + 1e-6) << attempt;
  }
}

}  // namespace
}  // namespace bootstorm::kube

#include "simulator/kube/object_store.hpp"

#include <gtest/gtest.h>

namespace bootstorm::sim::kube {
namespace {

using json = nlohmann::json;

json vm(const std::string& ns, const std::string& name) {
  return {{"apiVersion", "kubevirt.io/v1"},
          {"kind", "VirtualMachine"},
          {"metadata", {{"name", name}, {"namespace", ns}}}};
}

TEST(ObjectStore, AssignsIncreasingResourceVersions) {
  ObjectStore store;
  auto a = store.put(Kind::virtual_machines, vm("ns", "a"));
  auto b = store.put(Kind::virtual_machines, vm("ns", "b"));
  EXPECT_LT(a->resource_version, b->resource_version);
  EXPECT_EQ(a->object["metadata"]["resourceVersion"], std::to_string(a->resource_version));
  EXPECT_EQ(json::parse(b->text), b->object);
  EXPECT_EQ(store.current_resource_version(), b->resource_version);
}

TEST(ObjectStore, ListsSortedAndByNamespace) {
  ObjectStore store;
  store.put(Kind::virtual_machines, vm("b", "z"));
  store.put(Kind::virtual_machines, vm("a", "y"));
  store.put(Kind::virtual_machines, vm("a", "x"));
  store.put(Kind::virtual_machine_instances, vm("a", "other"));
  auto all = store.list(Kind::virtual_machines, "");
  ASSERT_EQ(all.items.size(), 3u);
  EXPECT_EQ(all.items[0]->object["metadata"]["name"], "x");
  EXPECT_EQ(all.items[2]->object["metadata"]["name"], "z");
  auto in_a = store.list(Kind::virtual_machines, "a");
  EXPECT_EQ(in_a.items.size(), 2u);
  auto after = store.list(Kind::virtual_machines, "", ObjectStore::key("a", "x"));
  ASSERT_EQ(after.items.size(), 2u);
  EXPECT_EQ(after.items[0]->object["metadata"]["name"], "y");
}

TEST(ObjectStore, ResumesFromHistoryAndReportsTooOld) {
  ObjectStore::Options options;
  options.history_events = 3;
  options.history_events_per_object = 0;
  ObjectStore store(options);
  auto first = store.put(Kind::virtual_machines, vm("ns", "a"));
  for (int i = 0; i < 5; ++i) store.put(Kind::virtual_machines, vm("ns", "b" + std::to_string(i)));
  auto old = store.subscribe(Kind::virtual_machines, "", first->resource_version);
  EXPECT_TRUE(old.too_old);
  std::uint64_t recent = store.current_resource_version() - 2;
  auto sub = store.subscribe(Kind::virtual_machines, "", recent);
  ASSERT_FALSE(sub.too_old);
  ASSERT_EQ(sub.backlog.size(), 2u);
  EXPECT_EQ(sub.backlog[0].resource_version, recent + 1);
  store.unsubscribe(sub.queue);
}

TEST(ObjectStore, HistoryGrowsWithTheObjectsHeld) {
  ObjectStore::Options options;
  options.history_events = 3;
  options.history_events_per_object = 4;
  ObjectStore store(options);
  // 10 objects, each updated 3 times: 30 events, within 4 per object (40) though far beyond 3.
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 10; ++i) store.put(Kind::virtual_machines, vm("ns", "vm" + std::to_string(i)));
  }
  auto sub = store.subscribe(Kind::virtual_machines, "", std::uint64_t{1});
  ASSERT_FALSE(sub.too_old);
  EXPECT_EQ(sub.backlog.size(), 29u);  // every event after resourceVersion 1
  store.unsubscribe(sub.queue);
  // 12 more updates of the same 10 objects: 42 events > 40, so the oldest are compacted.
  for (int i = 0; i < 12; ++i) store.put(Kind::virtual_machines, vm("ns", "vm" + std::to_string(i % 10)));
  EXPECT_TRUE(store.subscribe(Kind::virtual_machines, "", std::uint64_t{1}).too_old);
  EXPECT_EQ(store.compacted_resource_version(), 2u);
}

TEST(ObjectStore, FreshSubscriptionGetsSyntheticAddsThenLiveEvents) {
  ObjectStore store;
  store.put(Kind::virtual_machines, vm("ns", "a"));
  auto sub = store.subscribe(Kind::virtual_machines, "ns", std::nullopt);
  ASSERT_EQ(sub.backlog.size(), 1u);
  EXPECT_EQ(sub.backlog[0].type, EventType::added);
  int wakes = 0;
  sub.queue->set_waker([&] { ++wakes; });
  store.put(Kind::virtual_machines, vm("ns", "a"));
  store.remove(Kind::virtual_machines, "ns", "a");
  store.put(Kind::virtual_machine_instances, vm("ns", "a"));  // other kind: not delivered
  auto events = sub.queue->take();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].type, EventType::modified);
  ASSERT_TRUE(events[0].previous);
  EXPECT_EQ(events[1].type, EventType::deleted);
  EXPECT_EQ(events[1].object->object["metadata"]["resourceVersion"],
            std::to_string(events[1].resource_version));
  EXPECT_EQ(wakes, 2);
  store.compact_all();
  EXPECT_TRUE(store.subscribe(Kind::virtual_machines, "", events[0].resource_version).too_old);
}

}  // namespace
}  // namespace bootstorm::sim::kube

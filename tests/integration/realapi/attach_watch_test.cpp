// What a real kube-apiserver does to a watch, mid-storm, with the lab attached as the cluster's KubeVirt and
// CDI controllers: it ends the streams (at their timeout, or when it shuts down), and once etcd compacted
// past a stream's resourceVersion it answers the resumption 410 Gone.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "tests/support/lab_attach_fixture.hpp"

namespace bootstorm::test_support {
namespace {

using json = nlohmann::json;
using std::chrono::steady_clock;

// Boots seconds apart, so that a storm of twelve lasts long enough for the server to end its watches in
// the middle of it: each VM's firmware takes ~4 s, give or take half.
const std::vector<std::string> kSlowBoots{"profiles.tiny.phases.firmware.fixedS=4",
                                          "profiles.tiny.phases.firmware.jitter=0.5",
                                          "kube.launcherStartS=0.5"};

class LabAttachSlowBootsTest : public LabAttachTest {
 protected:
  explicit LabAttachSlowBootsTest(std::vector<std::string> apiserver_flags = {})
      : LabAttachTest(std::move(apiserver_flags), kSlowBoots) {}

  // A storm of kInterruptedVms whose watches the server ends mid-storm, kEnds times (realapi's control
  // endpoint; `compact`: compacting etcd each time before any watch starts again). The run directory, what
  // bootstorm wrote on stderr, the control's answers and the wall time (unix s) of the last end.
  struct InterruptedStorm {
    fs::path run_dir;
    std::string err;
    std::vector<json> ends;
    double last_end = 0;
  };
  static constexpr int kInterruptedVms = 12;
  static constexpr int kEnds = 3;
  InterruptedStorm storm_with_watches_ended(const std::string& name, bool compact) {
    InterruptedStorm result;
    const fs::path out = dir_ / "runs";
    const fs::path plan = write_plan(name, "bootstorm-" + name, kInterruptedVms, "{source: none}");
    auto child = spawn_bootstorm({"run", plan.string(), "--yes"});
    // The first VMI on the server: the starts went out and bootstorm's watch is open. Then the ends, while
    // the boots (seconds apart, lab_sets_) go on.
    const auto until = steady_clock::now() + std::chrono::seconds(120);
    const auto running = [&] { return !child->wait_for(std::chrono::milliseconds(0)); };
    const auto no_vmi_yet = [&] {
      return kube_json("admin",
                       {"get", "virtualmachineinstances.kubevirt.io", "-n", "bootstorm-" + name})["items"]
          .empty();
    };
    while (steady_clock::now() < until && running() && no_vmi_yet())
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    for (int i = 0; i < kEnds && running(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(i == 0 ? 300 : 1200));
      result.ends.push_back(api_->control_post(compact ? "/end-watches?compact=true" : "/end-watches"));
      const auto now = std::chrono::system_clock::now().time_since_epoch();
      result.last_end = std::chrono::duration<double>(now).count();
    }
    const auto exit_code = child->wait_for(std::chrono::seconds(180));
    result.err = child->err();
    EXPECT_EQ(exit_code, 0) << child->out() << result.err;
    result.run_dir = run_dir_in(out);
    return result;
  }
  // Each end happened while bootstorm's watch was open (the server's answer names its User-Agent), and the
  // storm went on after the last: a milestone came after it.
  void expect_ended_mid_storm(const InterruptedStorm& storm) {
    ASSERT_EQ(storm.ends.size(), static_cast<std::size_t>(kEnds)) << "the storm ended before the watches did";
    for (const auto& end : storm.ends) {
      ASSERT_TRUE(end.is_object()) << "the control endpoint did not answer";
      bool bootstorm_ended = false;
      for (const auto& agent : end.value("agents", json::array()))
        bootstorm_ended |= agent.get<std::string>().rfind("bootstorm/kubevirt", 0) == 0;
      EXPECT_TRUE(bootstorm_ended) << end.dump();
    }
    double last_seen = 0;
    for (const auto& [vm, milestones] : journal_milestones(storm.run_dir))
      for (const auto& [milestone, events] : milestones)
        for (const auto& event : events) last_seen = std::max(last_seen, event.value("wall", 0.0));
    EXPECT_GT(last_seen, storm.last_end) << "every milestone came before the last end: not mid-storm";
  }
  // Every VM ready, and each of its milestones up to ready (guest_agent) recorded exactly once; the IP, which
  // may come after the run stopped watching, at most once.
  void expect_every_milestone_once(const fs::path& run_dir) {
    const auto rows = read_csv(run_dir / "vms.csv");
    ASSERT_EQ(rows.size(), static_cast<std::size_t>(kInterruptedVms));
    for (const auto& row : rows)
      EXPECT_EQ(row.at("status"), "ready") << row.at("vm") << ": " << row.at("reason");
    const auto seen = journal_milestones(run_dir);
    for (const auto& row : rows) {
      for (const char* milestone : kWatchedMilestones) {
        const auto vm = seen.find(row.at("vm"));
        const std::size_t times =
            vm == seen.end() || !vm->second.count(milestone) ? 0 : vm->second.at(milestone).size();
        if (std::string_view(milestone) == "ip_assigned") {
          EXPECT_LE(times, 1u) << row.at("vm") << " " << milestone;
        } else {
          EXPECT_EQ(times, 1u) << row.at("vm") << " " << milestone;
        }
      }
    }
  }
};

// Without the watch cache, every watch is served from etcd, so that one resumed from a resourceVersion etcd
// compacted away is answered 410 Gone.
class LabAttachNoWatchCacheTest : public LabAttachSlowBootsTest {
 protected:
  LabAttachNoWatchCacheTest() : LabAttachSlowBootsTest({"--watch-cache=false"}) {}
};

// kube-apiserver ends a watch on its own: when its timeout passes, and every watch when it shuts down. Three
// times in the middle of a storm the server ends every open watch (realapi's /end-watches, which returns the
// watch handler as the timeout does): bootstorm resumes each from the last resourceVersion it saw, and the
// watch cache still holds what happened in between. Nothing is lost or repeated, and nothing needed a
// re-list: every milestone of every VM once, each from the watch as it happened.
TEST_F(LabAttachSlowBootsTest, WatchesTheServerEndsMidStormResumeWithoutAGap) {
  const InterruptedStorm storm = storm_with_watches_ended("ended", false);
  ASSERT_FALSE(storm.run_dir.empty()) << storm.err;
  expect_ended_mid_storm(storm);
  expect_every_milestone_once(storm.run_dir);
  for (const auto& [vm, milestones] : journal_milestones(storm.run_dir))
    for (const char* milestone : kWatchedMilestones)
      for (const auto& event : milestones.count(milestone) ? milestones.at(milestone) : std::vector<json>{})
        EXPECT_EQ(event.value("source", ""), "watch") << vm << " " << milestone << ": " << event.dump();
  EXPECT_EQ(storm.err.find("re-listing"), std::string::npos) << storm.err;
  EXPECT_EQ(storm.err.find("dropped"), std::string::npos) << storm.err;
}

// Every watch ended mid-storm, and etcd compacted past every resourceVersion a client was sent before any
// watch starts again: bootstorm's watch, resumed from where it was, is answered 410 Gone; it re-lists, and
// what happened while it had no watch comes from the list (stamped from the VMI's own condition times). No
// milestone is lost or repeated.
TEST_F(LabAttachNoWatchCacheTest, ACompactedResourceVersionIsGoneMidStormAndTheRelistLosesNothing) {
  const InterruptedStorm storm = storm_with_watches_ended("compacted", true);
  ASSERT_FALSE(storm.run_dir.empty()) << storm.err;
  expect_ended_mid_storm(storm);
  for (const auto& end : storm.ends) EXPECT_GT(end.value("revision", 0LL), 0) << end.dump();
  EXPECT_NE(storm.err.find("watch of VirtualMachineInstances: resourceVersion"), std::string::npos)
      << storm.err;
  EXPECT_NE(storm.err.find("is gone (410); re-listing"), std::string::npos) << storm.err;
  expect_every_milestone_once(storm.run_dir);
}

}  // namespace
}  // namespace bootstorm::test_support

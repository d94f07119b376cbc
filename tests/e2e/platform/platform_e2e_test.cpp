// The platform's facts in every run directory (issue 22): a run through the lab's kubeconfig is labelled
// simulated in every artefact, as one through `lab:` is; the versions a run records are the ones the lab
// serves (read independently with kubectl); `compare` warns when two runs ran on different lab versions.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/lab_fixture.hpp"
#include "tests/support/plan_yaml.hpp"
#include "tests/support/run_files.hpp"
#include "tests/support/tools.hpp"

namespace {

namespace fs = std::filesystem;
using bootstorm::test_support::LabCliTest;
using bootstorm::test_support::PlanYaml;
using bootstorm::test_support::read_file;
using bootstorm::test_support::write_file;
using nlohmann::json;

class PlatformE2E : public LabCliTest {
 protected:
  PlatformE2E() : LabCliTest("platform-e2e") {}

  // A three-VM KubeVirt storm on worker-0 through `endpoint`; `platform_extra` are further platform keys.
  fs::path write_plan(const std::string& name, const std::string& endpoint,
                      const std::vector<std::string>& platform_extra, const fs::path& out) {
    const fs::path plan = dir_ / (name + ".yaml");
    PlanYaml{.name = name,
             .platform = {.kind = "kubevirt", .endpoint = endpoint, .extra = platform_extra},
             .golden = "{dataSource: {name: fedora-golden, namespace: golden}, clone: auto}",
             .ns = "bootstorm-platform",
             .scenarios = {{"three", {{"worker-0", 3}}}},
             .storm = "{mode: simultaneous, timeout: 2m, settle: 0s}",
             .ready = "{signal: guest_agent}",
             .cleanup = "always",
             .output = out.string()}
        .write(plan);
    return plan;
  }
};

TEST_F(PlatformE2E, ARunThroughTheLabsKubeconfigIsLabelledSimulatedInEveryArtefact) {
  if (!have_kubectl()) BOOTSTORM_MISSING_KUBECTL("it reads the lab's versions independently");
  start_lab("small");
  const fs::path out = dir_ / "out";
  const fs::path plan =
      write_plan("through-kubeconfig", "kubeconfig",
                 {"credentials: {kubeconfig: " + endpoints_["kubeconfig"].get<std::string>() + "}"}, out);
  auto r = bootstorm({"run", plan.string(), "--yes", "--out", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const fs::path run_dir = run_dir_in(out);
  ASSERT_FALSE(run_dir.empty());

  // What the lab serves, read with kubectl.
  const json version = lab_get("/version");
  const json kubevirt = lab_get("/apis/subresources.kubevirt.io/v1/version");
  const json node = kube_json({"get", "node", "worker-0", "-o", "json"});
  const json cdis = kube_json({"get", "cdis.cdi.kubevirt.io", "-o", "json"});
  ASSERT_EQ(cdis["items"].size(), 1u) << cdis.dump();

  const json summary = json::parse(read_file(run_dir / "summary.json"));
  EXPECT_EQ(summary["run"]["simulated"], true);
  EXPECT_EQ(summary["run"]["source"], "simulated");
  EXPECT_EQ(summary["run"]["lab"], "small");
  const json& platform = summary["platform"];
  EXPECT_EQ(platform["simulator"], "bootstorm lab small");
  EXPECT_EQ(platform["product"], "Kubernetes");
  EXPECT_EQ(platform["version"], version["gitVersion"]);
  EXPECT_EQ(platform["components"]["KubeVirt"], kubevirt["gitVersion"]);
  EXPECT_EQ(platform["components"]["CDI"], cdis["items"][0]["status"]["observedVersion"]);
  ASSERT_EQ(platform["hosts"].size(), 1u);
  EXPECT_EQ(platform["hosts"][0]["name"], "worker-0");
  EXPECT_EQ(platform["hosts"][0]["version"], node["status"]["nodeInfo"]["kubeletVersion"]);
  EXPECT_EQ(platform["apiBudget"]["maxConcurrent"], 64);
  EXPECT_EQ(platform["apiBudget"]["startConcurrency"], 0);

  const std::string md = read_file(run_dir / "report.md");
  EXPECT_NE(md.find("\u2014 simulated lab"), std::string::npos);
  EXPECT_NE(md.find("| Platform facts | Kubernetes " + version["gitVersion"].get<std::string>()),
            std::string::npos)
      << md;
  EXPECT_NE(read_file(run_dir / "report.html").find("<strong>Simulated lab</strong>"), std::string::npos);
  EXPECT_NE(read_file(run_dir / "metrics.prom").find("source=\"simulated\""), std::string::npos);
  EXPECT_NE(read_file(run_dir / "junit.xml").find("<property name=\"source\" value=\"simulated\"/>"),
            std::string::npos);
  const json quantiles = json::parse(read_file(run_dir / "quantiles.json"));
  ASSERT_FALSE(quantiles.empty());
  EXPECT_EQ(quantiles[0]["metadata"]["source"], "simulated");

  // `bootstorm report` re-renders it all from the journal alone.
  const std::string first = read_file(run_dir / "summary.json");
  fs::remove(run_dir / "summary.json");
  auto again = bootstorm({"report", run_dir.string()});
  ASSERT_EQ(again.exit_code, 0) << again.out << again.err;
  EXPECT_EQ(read_file(run_dir / "summary.json"), first);
}

TEST_F(PlatformE2E, CompareWarnsWhenTwoRunsRanOnDifferentLabVersions) {
  // Two labs: the small profile as shipped, and a copy whose cluster runs newer Kubernetes and KubeVirt.
  std::string profile = read_file(fs::path(BOOTSTORM_SOURCE_DIR) / "simulator/labs/small.yaml");
  const std::string anchor = "\nkube:\n";
  const auto at = profile.find(anchor);
  ASSERT_NE(at, std::string::npos);
  profile.insert(at + anchor.size(), "  serverVersion: v1.29.2\n  kubevirtVersion: v1.3.0\n");
  const fs::path upgraded = dir_ / "small-upgraded.yaml";
  write_file(upgraded, profile);

  std::vector<fs::path> runs;
  for (const std::string& lab : {std::string("small"), upgraded.string()}) {
    start_lab(lab);
    const fs::path out = dir_ / ("out-" + std::to_string(runs.size()));
    const fs::path plan = write_plan("versions", "lab:" + state_.string(), {}, out);
    auto r = bootstorm({"run", plan.string(), "--yes", "--out", out.string()});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    runs.push_back(run_dir_in(out));
    ASSERT_FALSE(runs.back().empty());
    lab_.reset();
    fs::remove_all(state_);
  }
  const json before = json::parse(read_file(runs[0] / "summary.json"));
  const json after = json::parse(read_file(runs[1] / "summary.json"));
  EXPECT_EQ(after["platform"]["components"]["KubeVirt"], "v1.3.0");
  EXPECT_EQ(after["platform"]["version"], "v1.29.2");
  EXPECT_NE(before["platform"]["components"]["KubeVirt"], "v1.3.0");

  const fs::path compared = dir_ / "compared";
  auto c = bootstorm({"compare", runs[0].string(), runs[1].string(), "--out", compared.string()});
  ASSERT_EQ(c.exit_code, 0) << c.out << c.err;
  const std::string kubevirt_line =
      "KubeVirt: " + before["platform"]["components"]["KubeVirt"].get<std::string>() + " vs v1.3.0";
  EXPECT_NE(c.err.find("warning"), std::string::npos) << c.err;
  EXPECT_NE(c.err.find(kubevirt_line), std::string::npos) << c.err;
  EXPECT_NE(c.err.find("version: " + before["platform"]["version"].get<std::string>() + " vs v1.29.2"),
            std::string::npos)
      << c.err;
  const std::string md = read_file(compared / "compare.md");
  EXPECT_NE(md.find("these runs ran on different platforms"), std::string::npos) << md;
  EXPECT_NE(md.find(kubevirt_line), std::string::npos) << md;

  // The same lab twice: nothing to warn about.
  auto same = bootstorm({"compare", runs[0].string(), runs[0].string(), "--out", (dir_ / "same").string()});
  EXPECT_EQ(same.err.find("warning"), std::string::npos) << same.err;
}

TEST_F(PlatformE2E, EachRunRecordsHowCdiClonedAndCompareWarnsWhenTwoRunsClonedDifferently) {
  if (!have_kubectl()) BOOTSTORM_MISSING_KUBECTL("it reads the DataVolumes' clone type independently");
  std::vector<fs::path> runs;
  for (const std::string method : {"csi-clone", "copy"}) {
    ASSERT_NO_FATAL_FAILURE(
        restart_lab_with("small", "\nkube:\n", "\nkube:\n  cloneStrategy: " + method + "\n"));
    const fs::path out = dir_ / ("out-" + method);
    const fs::path plan = dir_ / ("clone-" + method + ".yaml");
    PlanYaml{.name = "clones",
             .platform = {.kind = "kubevirt", .endpoint = "lab:" + state_.string()},
             .golden = "{dataSource: {name: fedora-golden, namespace: golden}}",
             .ns = "bootstorm-clones",
             .scenarios = {{"three", {{"worker-0", 3}}}},
             .storm = "{mode: simultaneous, timeout: 2m, settle: 0s}",
             .ready = "{signal: guest_agent}",
             .cleanup = "never",
             .output = out.string()}
        .write(plan);
    auto r = bootstorm({"run", plan.string(), "--yes", "--out", out.string()});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    runs.push_back(run_dir_in(out));
    ASSERT_FALSE(runs.back().empty());
    // What CDI did, as the DataVolumes say it, and what the run recorded.
    const json dvs =
        kube_json({"get", "datavolumes.cdi.kubevirt.io", "-n", "bootstorm-clones", "-o", "json"});
    ASSERT_EQ(dvs["items"].size(), 3u) << dvs.dump();
    for (const auto& dv : dvs["items"])
      EXPECT_EQ(dv["metadata"]["annotations"]["cdi.kubevirt.io/cloneType"], method) << dv.dump();
    const json summary = json::parse(read_file(runs.back() / "summary.json"));
    EXPECT_EQ(summary["platform"]["cloneMethod"], method) << summary["platform"].dump();
    // Per VM, as CDI recorded it on each DataVolume: in the journal and counted per scenario.
    EXPECT_EQ(summary["scenarios"][0]["cloneMethods"], json({{method, 3}})) << summary["scenarios"][0].dump();
    std::size_t journaled = 0;
    {
      std::istringstream journal(read_file(runs.back() / "journal.jsonl"));
      for (std::string line; std::getline(journal, line);) {
        const json event = json::parse(line, nullptr, false);
        if (!event.is_object() || event.value("type", "") != "vm_startable") continue;
        EXPECT_EQ(event.value("cloneMethod", ""), method) << line;
        ++journaled;
      }
    }
    EXPECT_EQ(journaled, 3u);
    EXPECT_NE(read_file(runs.back() / "report.md").find("Provisioning: 3 " + method + " clones in "),
              std::string::npos);
    EXPECT_EQ(summary["platform"]["storageClass"], "lab-rbd") << summary["platform"].dump();
    EXPECT_NE(read_file(runs.back() / "report.md").find("CDI clones by " + method), std::string::npos);
  }
  auto c = bootstorm({"compare", runs[0].string(), runs[1].string(), "--out", (dir_ / "compared").string()});
  ASSERT_EQ(c.exit_code, 0) << c.out << c.err;
  EXPECT_NE(c.err.find("clone method: csi-clone vs copy"), std::string::npos) << c.err;
  EXPECT_NE(c.err.find("clone method used: csi-clone vs copy"), std::string::npos) << c.err;
}

}  // namespace

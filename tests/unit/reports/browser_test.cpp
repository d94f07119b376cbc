// Renders report.html in headless Chromium (the first `chromium` on PATH) and checks what the browser built
// and drew, not the HTML text: a copy of the report with a measuring script appended is loaded with
// --dump-dom, and the script records, for every SVG figure, how many paths and bars the parsed DOM holds
// and how many have real rendered geometry (path length, bounding box inside the figure's viewBox). A
// screenshot of the unmodified report is kept beside the DOM in <build>/test-artifacts/browser/<test>/.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "reports/history.hpp"
#include "reports/reports.hpp"
#include "results/history.hpp"
#include "tests/support/tools.hpp"
#include "tests/unit/reports/fixture.hpp"

namespace bootstorm::reports {
namespace {

namespace fs = std::filesystem;

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::size_t count(const std::string& haystack, const std::string& needle) {
  std::size_t n = 0;
  for (auto pos = haystack.find(needle); pos != std::string::npos; pos = haystack.find(needle, pos + 1)) ++n;
  return n;
}

// Appended to a copy of report.html: runs after the page is parsed and writes its measurements into the DOM
// as JSON, where --dump-dom shows them. Paths count as drawn when they have a length; bars (the rects of a
// <g>: histogram bins, timeline segments) when their box has an area; every mark must lie inside the viewBox.
constexpr const char* kMeasureScript = R"(<script>
(function () {
  const figures = [];
  for (const svg of document.querySelectorAll('svg.chart')) {
    const vb = svg.viewBox.baseVal;
    const inside = (b) => b.x >= vb.x - 1 && b.y >= vb.y - 1 &&
        b.x + b.width <= vb.x + vb.width + 1 && b.y + b.height <= vb.y + vb.height + 1;
    const f = {id: svg.id, paths: 0, drawnPaths: 0, bars: 0, drawnBars: 0, outside: 0};
    for (const p of svg.querySelectorAll('path')) {
      f.paths++;
      if (p.getTotalLength() > 0) f.drawnPaths++;
      if (!inside(p.getBBox())) f.outside++;
    }
    for (const r of svg.querySelectorAll('g > rect')) {
      f.bars++;
      const b = r.getBBox();
      if (b.width > 0 && b.height > 0) f.drawnBars++;
      if (!inside(b)) f.outside++;
    }
    const box = svg.getBoundingClientRect();
    f.width = box.width;
    f.height = box.height;
    figures.push(f);
  }
  const root = document.documentElement;
  const pre = document.createElement('pre');
  pre.id = 'bootstorm-measure';
  pre.textContent = JSON.stringify({figures: figures, overflowX: root.scrollWidth - root.clientWidth});
  document.body.appendChild(pre);
})();
</script>
)";

// The number of `<path` elements inside the figure with id `id` in the report's own HTML.
std::size_t source_paths(const std::string& html, const std::string& id) {
  const auto open = html.find("id=\"" + id + "\" viewBox");
  if (open == std::string::npos) return 0;
  const auto close = html.find("</svg>", open);
  return count(html.substr(open, close - open), "<path ");
}

class Browser : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto found = test_support::find_tool("chromium");
    if (!found) BOOTSTORM_MISSING_TOOL("chromium", "chromium", "the report's browser test");
    chromium_ = *found;
    // One directory (and Chromium profile) per test: ctest runs the tests of this file side by side.
    dir_ = fs::path(BOOTSTORM_BINARY_DIR) / "test-artifacts" / "browser" /
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }

  // Runs headless Chromium with `args` (no sandbox: CI runs as root); its stdout goes to `out`.
  int chromium(const std::string& args, const fs::path& out) {
    const std::string command =
        "timeout 120 " + chromium_.string() +
        " --headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update "
        "--disable-sync --no-first-run --disable-dev-shm-usage --hide-scrollbars --user-data-dir=" +
        (dir_ / "profile").string() + " " + args + " > " + out.string() + " 2>> " +
        (dir_ / "chromium.log").string();
    return std::system(command.c_str());
  }

  // Loads a copy of `html` with the measuring script appended (`name`.html in the test's directory) and
  // dumps the DOM Chromium built into `dom`; returns Chromium's exit code.
  int dump_measured(const std::string& html, const std::string& name, int height, std::string& dom) {
    std::string measured = html;
    measured.insert(measured.rfind("</body>"), kMeasureScript);
    std::ofstream(dir_ / (name + ".html")) << measured;
    const int rc = chromium("--window-size=1280," + std::to_string(height) + " --dump-dom file://" +
                                (dir_ / (name + ".html")).string(),
                            dir_ / ("dom-" + name + ".html"));
    dom = read(dir_ / ("dom-" + name + ".html"));
    return rc;
  }

  fs::path chromium_;
  fs::path dir_;
};

// What the measuring script wrote into the DOM (null when it did not run).
nlohmann::json measurements(const std::string& dom) {
  const std::string open_tag = "<pre id=\"bootstorm-measure\">";
  const auto at = dom.find(open_tag);
  if (at == std::string::npos) return nullptr;
  return nlohmann::json::parse(
      dom.substr(at + open_tag.size(), dom.find("</pre>", at) - at - open_tag.size()));
}

TEST_F(Browser, ChromiumDrawsEveryFigureOfReportHtml) {
  const auto record = testing::fixture_record();
  ASSERT_TRUE(
      write_run_outputs(dir_ / "run", record, results::summarize(record), testing::kGeneratedAt).has_value());
  const std::string html = read(dir_ / "run" / "report.html");
  {
    std::string measured = html;
    const auto body_end = measured.rfind("</body>");
    ASSERT_NE(body_end, std::string::npos);
    measured.insert(body_end, kMeasureScript);
    std::ofstream(dir_ / "measured.html") << measured;
  }
  const int rc = chromium("--window-size=1280,2400 --dump-dom file://" + (dir_ / "measured.html").string(),
                          dir_ / "dom.html");
  const std::string dom = read(dir_ / "dom.html");
  if (rc != 0 && dom.empty()) {
    const std::string log = read(dir_ / "chromium.log").substr(0, 600);
    BOOTSTORM_MISSING_TOOL("chromium", "chromium",
                           "it did not run here, exit " + std::to_string(rc) + ": " + log);
  }

  EXPECT_EQ(count(dom, "<svg "), 6u);
  EXPECT_EQ(dom.find("<parsererror"), std::string::npos);
  EXPECT_NE(dom.find("Simulated lab"), std::string::npos);

  const auto measured = measurements(dom);
  ASSERT_FALSE(measured.is_null()) << "the measuring script did not run; DOM in " << dir_ / "dom.html";
  // Nothing wider than a 1280-pixel window: a line that cannot wrap would be cut off on screen.
  EXPECT_LE(measured["overflowX"].get<double>(), 0)
      << "the page scrolls sideways; DOM in " << dir_ / "dom.html";
  const auto& figures = measured["figures"];
  std::map<std::string, nlohmann::json> by_id;
  for (const auto& f : figures) by_id[f["id"].get<std::string>()] = f;
  ASSERT_EQ(by_id.size(), 6u) << figures.dump();
  for (const char* id : {"cdf", "histogram", "ready-over-time", "phases", "timeline-1", "timeline-2"}) {
    ASSERT_TRUE(by_id.count(id)) << id << " missing from " << figures.dump();
    const auto& f = by_id[id];
    SCOPED_TRACE(f.dump());
    EXPECT_EQ(f["paths"].get<std::size_t>(), source_paths(html, id)) << id << ": paths lost in parsing";
    EXPECT_EQ(f["drawnPaths"], f["paths"]) << id << ": a path with no length";
    EXPECT_EQ(f["drawnBars"], f["bars"]) << id << ": a bar with no area";
    EXPECT_GT(f["drawnPaths"].get<int>() + f["drawnBars"].get<int>(), 0) << id << " drew no data";
    EXPECT_EQ(f["outside"], 0) << id << ": marks outside the figure";
    EXPECT_GT(f["width"].get<double>(), 200) << id << " is not laid out on the page";
    EXPECT_GT(f["height"].get<double>(), 50) << id << " is not laid out on the page";
  }
  // The curves and the histogram carry data of their own kind.
  EXPECT_GT(by_id["cdf"]["drawnPaths"].get<int>(), 0);
  EXPECT_GT(by_id["ready-over-time"]["drawnPaths"].get<int>(), 0);
  EXPECT_GT(by_id["histogram"]["drawnBars"].get<int>(), 0);
  EXPECT_GT(by_id["timeline-1"]["drawnBars"].get<int>(), 0);
  EXPECT_GT(by_id["phases"]["drawnBars"].get<int>(), 0);

  // The screenshot, kept for a person to look at: a PNG of the requested size.
  const fs::path png = dir_ / "report.png";
  ASSERT_EQ(chromium("--window-size=1280,2400 --screenshot=" + png.string() + " file://" +
                         (dir_ / "run" / "report.html").string(),
                     dir_ / "screenshot.out"),
            0)
      << read(dir_ / "chromium.log");
  const std::string image = read(png);
  ASSERT_GT(image.size(), 24u);
  EXPECT_EQ(image.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  auto be32 = [&](std::size_t at) {
    return (std::uint32_t(std::uint8_t(image[at])) << 24) |
           (std::uint32_t(std::uint8_t(image[at + 1])) << 16) |
           (std::uint32_t(std::uint8_t(image[at + 2])) << 8) | std::uint32_t(std::uint8_t(image[at + 3]));
  };
  EXPECT_EQ(be32(16), 1280u);  // IHDR width
  EXPECT_EQ(be32(20), 2400u);  // IHDR height
  fs::remove_all(dir_ / "profile");
}

}  // namespace
}  // namespace bootstorm::reports

namespace bootstorm::reports {
namespace {

// The fixture's first storm with what vCenter's PerformanceManager would say of it: 20 s samples of two
// hosts' links and their datastore, and the VMs' disks.
results::RunRecord record_with_storage() {
  results::RunRecord r = testing::fixture_record();
  api::TelemetryReport t;
  t.source = "vsphere-perf";
  t.endpoint = "https://vcenter.lab";
  t.resolution_s = 20;
  const double t0 = r.scenarios[0].started_unix_s;
  t.from = t0 - 1;
  t.to = t0 + 60;
  for (int k = 0; k < 3; ++k) {
    const double from = t0 - 1 + 20 * k, to = from + 20;
    for (const char* host : {"r740-01", "r740-02"}) {
      const double bps = (k == 0 ? 1500e6 : 600e6) * (host[6] == '1' ? 1.0 : 0.8);
      api::StorageSample link{
          api::StorageSubject::host, host, from, to, {bps, 0, bps / 20e3, 0, 0.004 + 0.002 * k, {}}};
      api::StorageSample ds{api::StorageSubject::datastore, std::string(host) + "/tolly-aff-ds01", from, to,
                            link.rates};
      t.samples.push_back(link);
      t.samples.push_back(ds);
    }
    t.samples.push_back(
        {api::StorageSubject::vm, "bs-3f9a2c-a-01", from, to, {100e6, 0, 5000, 0, 0.003, {}}});
  }
  t.link_capacity_bytes_per_s = {{"r740-01", 1600e6}, {"r740-02", 1600e6}};
  r.scenarios[0].telemetry = t;
  r.scenarios[1].telemetry_unavailable = "vCenter's REST API has no storage statistics";
  return r;
}

TEST_F(Browser, ChromiumDrawsTheStoragePanelOnTheReadyCurvesAxis) {
  const auto record = record_with_storage();
  ASSERT_TRUE(
      write_run_outputs(dir_ / "run", record, results::summarize(record), testing::kGeneratedAt).has_value());
  const std::string html = read(dir_ / "run" / "report.html");
  std::string dom;
  const int rc = dump_measured(html, "measured-storage", 3200, dom);
  if (rc != 0 && dom.empty()) {
    BOOTSTORM_MISSING_TOOL("chromium", "chromium", "it did not run here, exit " + std::to_string(rc));
  }
  EXPECT_NE(dom.find("Storage during the storm"), std::string::npos);
  EXPECT_NE(dom.find("Storage telemetry: none (vCenter"), std::string::npos);
  const auto measured = measurements(dom);
  ASSERT_FALSE(measured.is_null()) << "the measuring script did not run";
  EXPECT_LE(measured["overflowX"].get<double>(), 0);
  std::map<std::string, nlohmann::json> by_id;
  for (const auto& f : measured["figures"]) by_id[f["id"].get<std::string>()] = f;
  for (const char* id : {"storage-0-mbps", "storage-0-iops", "storage-0-latency"}) {
    ASSERT_TRUE(by_id.count(id)) << id << " missing";
    const auto& f = by_id[id];
    SCOPED_TRACE(f.dump());
    EXPECT_EQ(f["paths"].get<std::size_t>(), source_paths(html, id));
    EXPECT_GT(f["drawnPaths"].get<int>(), 0) << id << " drew no line";
    EXPECT_EQ(f["drawnPaths"], f["paths"]);
    EXPECT_EQ(f["outside"], 0) << id << ": marks outside the figure";
    EXPECT_GT(f["width"].get<double>(), 200);
  }
  // MB/s: the datastore summed and each of the two host links.
  EXPECT_EQ(by_id["storage-0-mbps"]["paths"].get<int>() - by_id["storage-0-iops"]["paths"].get<int>(), 2);
  EXPECT_FALSE(by_id.count("storage-1-mbps")) << "the second storm has no telemetry";
}

}  // namespace
}  // namespace bootstorm::reports

namespace bootstorm::reports {
namespace {

// Twelve nightly runs of one scenario, 25 % slower from the sixth on, the golden image patched before the
// ninth, and one run that failed as a whole.
std::vector<results::HistoryInput> twelve_nightly_runs() {
  std::vector<results::HistoryInput> runs;
  for (int i = 0; i < 12; ++i) {
    results::Summary s;
    s.run.id = fmt::format("n{:02}", i + 1);
    s.run.plan = "nightly";
    s.run.platform = "kubevirt";
    s.run.source = "simulated";
    s.run.simulated = true;
    s.run.outcome = i == 3 ? "failed" : "completed";
    s.run.started_at = fmt::format("2026-11-{:02}T02:00:00.000Z", i + 1);
    s.run.golden = i < 8 ? "win11-2026-10" : "win11-2026-11";
    results::ScenarioSummary sc;
    sc.name = "24 on one node";
    sc.vms = 24;
    sc.ready_milestone = "guest_agent";
    const double jitter = 0.004 * ((i * 7) % 5 - 2);
    const double ready = (i < 5 ? 31.0 : 38.8) * (1 + jitter);
    for (const auto& [name, mean] :
         {std::pair<const char*, double>{"ready", ready}, {"running", ready / 4}, {"guest_agent", ready}}) {
      results::Distribution d;
      d.count = i == 7 ? 22 : 24;
      d.total = 24;
      d.ready_fraction = static_cast<double>(d.count) / 24;
      d.mean = mean;
      d.p50 = mean * 0.97;
      d.p95 = mean * 1.3;
      sc.milestones.push_back({name, d});
    }
    s.scenarios.push_back(sc);
    runs.push_back({fmt::format("runs/nightly-{:02}", i + 1), s});
  }
  return runs;
}

TEST_F(Browser, ChromiumDrawsEveryFigureOfHistoryHtml) {
  HistoryReportInput input;
  input.groups = results::build_history(twelve_nightly_runs(), input.options);
  input.generated_at = testing::kGeneratedAt;
  ASSERT_EQ(input.groups.size(), 1u);
  ASSERT_EQ(input.groups[0].change_points.size(), 1u);
  const std::string html = render_history_html(input);
  std::ofstream(dir_ / "history.html") << html;
  std::string dom;
  const int rc = dump_measured(html, "measured-history", 2400, dom);
  if (rc != 0 && dom.empty()) {
    BOOTSTORM_MISSING_TOOL("chromium", "chromium", "it did not run here, exit " + std::to_string(rc));
  }
  EXPECT_EQ(dom.find("<parsererror"), std::string::npos);
  EXPECT_NE(dom.find("change at run n06"), std::string::npos);
  EXPECT_NE(dom.find("The platform changed"), std::string::npos);
  EXPECT_NE(dom.find("golden image: win11-2026-10 vs win11-2026-11"), std::string::npos);
  EXPECT_NE(dom.find("Simulated lab"), std::string::npos);
  const auto measured = measurements(dom);
  ASSERT_FALSE(measured.is_null()) << "the measuring script did not run";
  EXPECT_LE(measured["overflowX"].get<double>(), 0) << "the page scrolls sideways";
  std::map<std::string, nlohmann::json> by_id;
  for (const auto& f : measured["figures"]) by_id[f["id"].get<std::string>()] = f;
  // One chart per milestone followed (mean, P50 and P95 over the runs) and one of the ready fractions.
  EXPECT_EQ(by_id.size(), 3u) << measured["figures"].dump();
  for (const char* id : {"history-0-ready", "history-0-running", "history-0-ready-fraction"}) {
    ASSERT_TRUE(by_id.count(id)) << id << " missing from " << measured["figures"].dump();
    const auto& f = by_id[id];
    SCOPED_TRACE(f.dump());
    EXPECT_EQ(f["paths"].get<std::size_t>(), source_paths(html, id)) << id << ": paths lost in parsing";
    EXPECT_EQ(f["drawnPaths"], f["paths"]) << id << ": a line with no length";
    EXPECT_EQ(f["outside"], 0) << id << ": marks outside the figure";
    EXPECT_GT(f["width"].get<double>(), 200) << id << " is not laid out on the page";
  }
  EXPECT_EQ(by_id["history-0-ready"]["drawnPaths"].get<int>(), 3);           // mean, P50, P95
  EXPECT_EQ(by_id["history-0-ready-fraction"]["drawnPaths"].get<int>(), 2);  // ready, running
  const fs::path png = dir_ / "history.png";
  EXPECT_EQ(chromium("--window-size=1280,2400 --screenshot=" + png.string() + " file://" +
                         (dir_ / "history.html").string(),
                     dir_ / "screenshot-history.out"),
            0);
  fs::remove_all(dir_ / "profile");
}

}  // namespace
}  // namespace bootstorm::reports

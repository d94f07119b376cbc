// Renders report.html in headless Chromium and checks the DOM it built: the page parses as intended and the
// SVG charts are there. Skipped when Chromium is not installed.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "reports/reports.hpp"
#include "tests/unit/reports/fixture.hpp"

namespace bootstorm::reports {
namespace {

std::size_t count(const std::string& haystack, const std::string& needle) {
  std::size_t n = 0;
  for (auto pos = haystack.find(needle); pos != std::string::npos; pos = haystack.find(needle, pos + 1)) ++n;
  return n;
}

TEST(Browser, ChromiumRendersTheChartsOfReportHtml) {
  const std::filesystem::path chromium = "/usr/bin/chromium";
  if (!std::filesystem::exists(chromium)) GTEST_SKIP() << "chromium is not installed at /usr/bin/chromium";
  const auto dir = std::filesystem::temp_directory_path() /
                   ("bootstorm-browser-" + std::to_string(reinterpret_cast<std::uintptr_t>(&count)));
  std::filesystem::remove_all(dir);
  const auto record = testing::fixture_record();
  ASSERT_TRUE(
      write_run_outputs(dir / "run", record, stats::summarize(record), testing::kGeneratedAt).has_value());
  const auto dom_file = dir / "dom.html";
  const std::string command =
      "timeout 120 " + chromium.string() +
      " --headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update "
      "--disable-sync --no-first-run --disable-dev-shm-usage --user-data-dir=" +
      (dir / "profile").string() + " --dump-dom file://" + (dir / "run" / "report.html").string() + " > " +
      dom_file.string() + " 2> " + (dir / "chromium.log").string();
  const int rc = std::system(command.c_str());
  std::ostringstream dom;
  dom << std::ifstream(dom_file).rdbuf();
  if (rc != 0 && dom.str().empty()) {
    std::ostringstream log;
    log << std::ifstream(dir / "chromium.log").rdbuf();
    std::filesystem::remove_all(dir);
    GTEST_SKIP() << "chromium could not run here (exit " << rc << "): " << log.str().substr(0, 400);
  }
  const std::string d = dom.str();
  EXPECT_EQ(count(d, "<svg "), 5u);
  for (const char* id :
       {"id=\"cdf\"", "id=\"histogram\"", "id=\"ready-over-time\"", "id=\"timeline-1\"", "id=\"timeline-2\""})
    EXPECT_NE(d.find(id), std::string::npos) << id;
  EXPECT_NE(d.find("<path d=\"M"), std::string::npos);  // the CDF curves survived parsing
  EXPECT_NE(d.find("Simulated lab"), std::string::npos);
  EXPECT_EQ(d.find("<parsererror"), std::string::npos);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace bootstorm::reports

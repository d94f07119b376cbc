// `bootstorm run --metrics-listen`: a scraper's view of a storm in progress. The storm starts 60 desktops
// on the embedded lab at 15 per second, so that its counts change for four seconds; the test scrapes
// /metrics every 100 ms while it runs and through --metrics-linger, and holds the scrapes against each other
// (nothing counted falls back), against summary.json (the last scrape is the run's result), and against
// promtool (Debian's prometheus package), which checks the text format a scrape without an Accept header
// gets, and metrics.prom.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/lab_process.hpp"
#include "tests/support/loopback.hpp"
#include "tests/support/plan_yaml.hpp"
#include "tests/support/scratch_dir.hpp"
#include "tests/support/tools.hpp"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

using bootstorm::test_support::bootstorm_binary;
using bootstorm::test_support::Child;
using bootstorm::test_support::PlanYaml;
using bootstorm::test_support::read_file;
using bootstorm::test_support::run_process;
using bootstorm::test_support::ScratchDir;

// GET /metrics on 127.0.0.1:port with `accept`; the whole answer (status line, headers, body), "" when the
// server is gone.
std::string scrape(unsigned short port, const std::string& accept = {}) {
  const int fd = bootstorm::test_support::connect_loopback(port);
  if (fd < 0) return {};
  std::string request = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n";
  if (!accept.empty()) request += "Accept: " + accept + "\r\n";
  request += "\r\n";
  if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) < 0) {
    ::close(fd);
    return {};
  }
  std::string answer;
  char buffer[65536];
  for (ssize_t n; (n = ::recv(fd, buffer, sizeof buffer, 0)) > 0;)
    answer.append(buffer, static_cast<std::size_t>(n));
  ::close(fd);
  return answer;
}

std::string body_of(const std::string& answer) {
  const auto at = answer.find("\r\n\r\n");
  return at == std::string::npos ? std::string() : answer.substr(at + 4);
}

// Every sample of a scrape: "name{labels}" -> value.
std::map<std::string, double> samples(const std::string& body) {
  std::map<std::string, double> out;
  std::istringstream in(body);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    const auto space = line.rfind(' ');
    out[line.substr(0, space)] = std::stod(line.substr(space + 1));
  }
  return out;
}

// The value of the sample whose name is `name` and whose labels hold every one of `labels`; nullopt if none.
std::optional<double> value(const std::map<std::string, double>& s, const std::string& name,
                            const std::vector<std::string>& labels = {}) {
  for (const auto& [key, v] : s) {
    if (key.rfind(name + "{", 0) != 0) continue;
    bool all = true;
    for (const auto& l : labels) all = all && key.find(l) != std::string::npos;
    if (all) return v;
  }
  return std::nullopt;
}

// promtool check metrics on `text`: "" when it passes, else what it said.
std::string promtool_check(const fs::path& promtool, const std::string& text, const fs::path& file) {
  std::ofstream(file) << text;
  const auto r =
      run_process({"/bin/sh", "-c", promtool.string() + " check metrics < " + file.string()}, file);
  return r.exit_code == 0 ? std::string() : "exit " + std::to_string(r.exit_code) + ": " + r.all();
}

TEST(LiveMetrics, AScraperSeesTheStormRiseAndEndAtTheJournalsFigures) {
  const auto promtool = bootstorm::test_support::find_promtool();
  if (!promtool)
    BOOTSTORM_MISSING_TOOL("promtool", "prometheus", "the live metrics test checks the format with it");
  ScratchDir dir("live-metrics");
  PlanYaml plan{.name = "live",
                .platform = {.kind = "kubevirt", .endpoint = "embedded", .lab = "small"},
                .golden = "{dataSource: {name: tiny-golden, namespace: golden}}",
                .scenarios = {{"sixty", {{"worker-0", 30}, {"worker-1", 30}}}},
                .storm = "{mode: ramp, perSecond: 15}",
                .output = (dir / "runs").string()};
  plan.write(dir / "plan.yaml");
  Child run({bootstorm_binary(), "run", (dir / "plan.yaml").string(), "--metrics-listen", "127.0.0.1:0",
             "--metrics-linger", "3s"},
            dir / "run.out", dir / "run.err");

  // The port, from the log line that names the URL.
  unsigned short port = 0;
  const std::regex url(R"(metrics: http://127\.0\.0\.1:(\d+)/metrics)");
  for (int i = 0; i < 300 && port == 0 && run.running(); ++i) {
    std::smatch m;
    const std::string err = run.err();
    if (std::regex_search(err, m, url)) port = static_cast<unsigned short>(std::stoi(m[1]));
    if (port == 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_NE(port, 0) << run.err();

  std::vector<std::map<std::string, double>> scrapes;
  std::string mid_storm, last, openmetrics;
  while (true) {
    const std::string answer = scrape(port);
    if (answer.empty()) break;  // the run has ended and let go of the port
    ASSERT_NE(answer.find("Content-Type: text/plain; version=0.0.4"), std::string::npos)
        << answer.substr(0, 300);
    last = body_of(answer);
    scrapes.push_back(samples(last));
    const double starts = value(scrapes.back(), "bootstorm_starts_sent_total").value_or(0);
    if (mid_storm.empty() && starts > 0 && starts < 60) {
      mid_storm = last;
      openmetrics = body_of(scrape(port, "application/openmetrics-text;version=1.0.0,text/plain;q=0.5"));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_EQ(run.wait_for(std::chrono::seconds(60)), 0) << run.err();
  ASSERT_GE(scrapes.size(), 10u);
  ASSERT_FALSE(mid_storm.empty()) << "no scrape caught the storm between its first and last start";

  // Nothing counted falls back, and the starts were seen rising.
  std::set<double> starts_seen;
  const std::vector<std::pair<std::string, std::vector<std::string>>> counted = {
      {"bootstorm_starts_sent_total", {}},
      {"bootstorm_milestone_vms", {"milestone=\"ready\""}},
      {"bootstorm_milestone_vms", {"milestone=\"running\""}},
      {"bootstorm_api_requests_total", {}}};
  for (const auto& [name, labels] : counted) {
    double previous = 0;
    for (const auto& s : scrapes) {
      const double v = value(s, name, labels).value_or(0);
      EXPECT_GE(v, previous) << name;
      previous = v;
      if (name == "bootstorm_starts_sent_total") starts_seen.insert(v);
    }
  }
  EXPECT_GE(starts_seen.size(), 4u) << "the starts should be seen at several counts on their way to 60";
  EXPECT_EQ(value(scrapes.front(), "bootstorm_run_active"), 1.0);
  EXPECT_EQ(value(scrapes.back(), "bootstorm_run_active"), 0.0) << "the linger serves the ended run";

  // The last scrape is the run's result.
  fs::path run_dir;
  for (const auto& e : fs::directory_iterator(dir / "runs")) run_dir = e.path();
  const json summary = json::parse(read_file(run_dir / "summary.json"));
  const json& sc = summary["scenarios"][0];
  const auto& end = scrapes.back();
  EXPECT_EQ(value(end, "bootstorm_starts_sent_total"), 60.0);
  EXPECT_EQ(value(end, "bootstorm_api_requests_total"), sc["apiRequests"].get<double>());
  for (const auto& [milestone, figures] : sc["milestones"].items())
    EXPECT_EQ(value(end, "bootstorm_milestone_vms", {"milestone=\"" + milestone + "\""}),
              figures["count"].get<double>())
        << milestone;
  EXPECT_NEAR(value(end, "bootstorm_fire_skew_seconds").value_or(-1), sc["fireSkewMs"].get<double>() / 1000,
              1e-6);
  EXPECT_EQ(value(end, "bootstorm_ready_ratio"), sc["milestones"]["ready"]["readyFraction"].get<double>());
  // ... and metrics.prom says the same, sample for sample, but for the live view's own gauge.
  auto file = samples(read_file(run_dir / "metrics.prom"));
  auto live = end;
  std::erase_if(live, [](const auto& kv) { return kv.first.rfind("bootstorm_run_active", 0) == 0; });
  EXPECT_EQ(file, live);

  // Every metric deploy/grafana's dashboard queries is one the run serves.
  const json dashboard =
      json::parse(read_file(fs::path(BOOTSTORM_SOURCE_DIR) / "deploy/grafana/bootstorm-storm.json"));
  std::set<std::string> queried;
  const std::regex metric(R"(bootstorm_[a-z0-9_]+)");
  for (const auto& panel : dashboard["panels"])
    for (const auto& target : panel.value("targets", json::array())) {
      const std::string expr = target.value("expr", "");
      for (std::sregex_iterator it(expr.begin(), expr.end(), metric), done; it != done; ++it)
        queried.insert(it->str());
    }
  EXPECT_GE(queried.size(), 10u);
  for (const auto& name : queried) EXPECT_NE(last.find("# HELP " + name + " "), std::string::npos) << name;

  // The formats.
  EXPECT_EQ(promtool_check(*promtool, mid_storm, dir / "mid.prom"), "");
  EXPECT_EQ(promtool_check(*promtool, last, dir / "last.prom"), "");
  EXPECT_EQ(promtool_check(*promtool, read_file(run_dir / "metrics.prom"), dir / "file.prom"), "");
  ASSERT_GE(openmetrics.size(), 6u);
  EXPECT_EQ(openmetrics.substr(openmetrics.size() - 6), "# EOF\n");
  EXPECT_NE(openmetrics.find("# TYPE bootstorm_starts_sent counter"), std::string::npos);
}

TEST(LiveMetrics, AnAddressThatCannotBeServedFailsTheRunBeforeAnythingIsMade) {
  ScratchDir dir("live-metrics-bad");
  PlanYaml plan{.name = "live",
                .platform = {.kind = "kubevirt", .endpoint = "embedded", .lab = "small"},
                .golden = "{dataSource: {name: tiny-golden, namespace: golden}}",
                .scenarios = {{"two", {{"worker-0", 2}}}},
                .output = (dir / "runs").string()};
  plan.write(dir / "plan.yaml");
  auto r = bootstorm::test_support::run_cli(
      {"run", (dir / "plan.yaml").string(), "--metrics-listen", "nowhere"}, dir / "bad");
  EXPECT_EQ(r.exit_code, 2) << r.all();
  EXPECT_NE(r.err.find("--metrics-listen nowhere is not HOST:PORT"), std::string::npos) << r.err;

  // A port already taken: the run fails at once, saying which address, and creates no VM.
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(fd, 1), 0);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  const std::string taken = "127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
  r = bootstorm::test_support::run_cli({"run", (dir / "plan.yaml").string(), "--metrics-listen", taken},
                                       dir / "taken");
  ::close(fd);
  EXPECT_EQ(r.exit_code, 1) << r.all();
  EXPECT_NE(r.all().find("--metrics-listen " + taken), std::string::npos) << r.all();
  fs::path run_dir;
  for (const auto& e : fs::directory_iterator(dir / "runs")) run_dir = e.path();
  ASSERT_FALSE(run_dir.empty());
  EXPECT_EQ(read_file(run_dir / "journal.jsonl").find("\"vm_created\""), std::string::npos);
}

}  // namespace

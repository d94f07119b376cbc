#pragma once
// Reading what a run leaves (vms.csv, journal.jsonl, RFC 3339 times) independently of the orchestrator's own
// code.
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "tests/support/child_process.hpp"

namespace bootstorm::test_support {

inline std::vector<std::string> split(const std::string& line, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : line) {
    if (c == sep) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

// A CSV file as rows of column -> value. No quoting: only for files whose cells contain no commas (the
// plan-controlled fields of the tests' vms.csv: names, hosts).
inline std::vector<std::map<std::string, std::string>> read_csv(const fs::path& path) {
  std::istringstream in(read_file(path));
  std::string line;
  std::vector<std::map<std::string, std::string>> rows;
  if (!std::getline(in, line)) return rows;
  auto header = split(line, ',');
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    auto cells = split(line, ',');
    std::map<std::string, std::string> row;
    for (std::size_t i = 0; i < header.size() && i < cells.size(); ++i) row[header[i]] = cells[i];
    rows.push_back(std::move(row));
  }
  return rows;
}

// "2026-11-30T06:49:19.014Z" -> unix seconds; NAN when it is not that shape.
inline double parse_utc(const std::string& s) {
  std::tm tm{};
  int y, mo, d, h, mi;
  double sec;
  if (std::sscanf(s.c_str(), "%d-%d-%dT%d:%d:%lfZ", &y, &mo, &d, &h, &mi, &sec) != 6) return NAN;
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = 0;
  return static_cast<double>(::timegm(&tm)) + sec;
}

// journal.jsonl of a run directory, one event per line. A torn last line (what SIGKILL or a full disk may
// leave while the run writes it) is left out; a line that is not JSON anywhere else throws.
inline std::vector<nlohmann::json> read_journal(const fs::path& run_dir) {
  std::vector<std::string> lines;
  std::ifstream in(run_dir / "journal.jsonl");
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) lines.push_back(std::move(line));
  std::vector<nlohmann::json> events;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    nlohmann::json event = nlohmann::json::parse(lines[i], nullptr, /*allow_exceptions=*/false);
    if (event.is_discarded()) {
      if (i + 1 == lines.size()) break;
      throw std::runtime_error((run_dir / "journal.jsonl").string() + " line " + std::to_string(i + 1) +
                               " is not JSON: " + lines[i]);
    }
    events.push_back(std::move(event));
  }
  return events;
}

// How many events of `type` the journal has.
inline std::size_t count_events(const std::vector<nlohmann::json>& events, const std::string& type) {
  std::size_t n = 0;
  for (const auto& event : events) n += event.value("type", "") == type;
  return n;
}

}  // namespace bootstorm::test_support

#include "orchestrator/engine/naming.hpp"

#include <fmt/format.h>

#include <cctype>
#include <ctime>
#include <random>

namespace bootstorm::engine {

std::string new_run_id() {
  std::random_device rd;
  std::uniform_int_distribution<unsigned> dist(0, 0xFFFFFF);
  return fmt::format("{:06x}", dist(rd));
}

std::string scenario_slug(std::string_view scenario_name, std::size_t max_len) {
  std::string out;
  bool dash = false;
  for (char c : scenario_name) {
    auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) && u < 0x80) {
      if (dash && !out.empty()) out += '-';
      dash = false;
      out += static_cast<char>(std::tolower(u));
    } else {
      dash = true;
    }
  }
  if (out.size() > max_len) out.resize(max_len);
  while (!out.empty() && out.back() == '-') out.pop_back();
  if (out.empty()) out = "s";
  return out;
}

std::string vm_name(const std::string& run_id, const std::string& slug, int index) {
  return fmt::format("bs-{}-{}-{:03d}", run_id, slug, index);
}

std::string run_directory_name(const std::string& plan_name, std::chrono::system_clock::time_point started,
                               const std::string& run_id) {
  std::string safe;
  for (char c : plan_name) {
    auto u = static_cast<unsigned char>(c);
    safe += (std::isalnum(u) || c == '-' || c == '_' || c == '.') && u < 0x80 ? c : '-';
  }
  if (safe.empty() || safe == "." || safe == "..") safe = "plan";
  std::time_t tt = std::chrono::system_clock::to_time_t(started);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%S", &tm);
  return fmt::format("{}-{}-{}", safe, buf, run_id);
}

}  // namespace bootstorm::engine

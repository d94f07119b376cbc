#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <system_error>

#include "common/rfc3339.hpp"
#include "reports/compare.hpp"
#include "reports/detail/format.hpp"
#include "reports/reports.hpp"

namespace bootstorm::reports {
namespace detail {

Expected<void> write_file(const std::filesystem::path& path, std::string_view content) {
  auto tmp = path;
  tmp += ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) {
      return make_error(ErrorKind::io, fmt::format("cannot write {}", tmp.string()),
                        "check that the run directory is writable and the disk is not full");
    }
    errno = 0;
    f.write(content.data(), static_cast<std::streamsize>(content.size()));
    f.flush();
    if (!f) {
      // Say why (a full disk reads "No space left on device") and leave no partial file taking the space.
      const std::string why = std::strerror(errno != 0 ? errno : EIO);
      f.close();
      std::error_code ignored;
      std::filesystem::remove(tmp, ignored);
      return make_error(ErrorKind::io, fmt::format("writing {} failed: {}", tmp.string(), why),
                        "check free space on the output file system");
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    return make_error(ErrorKind::io,
                      fmt::format("cannot rename {} to {}: {}", tmp.string(), path.string(), ec.message()),
                      "check permissions of the run directory");
  }
  return {};
}

}  // namespace detail

Expected<void> write_run_outputs(const std::filesystem::path& dir, const results::RunRecord& record,
                                 const results::Summary& summary, std::string_view generated_at) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    return make_error(ErrorKind::io,
                      fmt::format("cannot create the run directory {}: {}", dir.string(), ec.message()),
                      "choose a writable output directory (plan field `output`)");
  }
  const auto comparisons = scenario_comparisons(summary);
  const std::pair<const char*, std::string> files[] = {
      {"summary.json", render_summary_json(summary)},
      {"vms.csv", render_vms_csv(record)},
      {"report.md", detail::render_report_md_with(record, summary, comparisons, generated_at)},
      {"report.html", detail::render_report_html_with(record, summary, comparisons, generated_at)},
      {"junit.xml", render_junit_xml(record, summary)},
      {"metrics.prom", render_metrics_prom(record, summary)},
      {"quantiles.json", quantile_documents(record, summary).dump(2) + "\n"},
      {"vm-latency.json", vm_documents(record, summary).dump(2) + "\n"},
  };
  for (const auto& [name, content] : files) {
    if (auto r = detail::write_file(dir / name, content); !r) return r.error();
  }
  const bool any_telemetry =
      std::any_of(record.scenarios.begin(), record.scenarios.end(),
                  [](const results::ScenarioRecord& s) { return s.telemetry.has_value(); });
  if (any_telemetry) {
    if (auto r = detail::write_file(dir / "telemetry.csv", render_telemetry_csv(record)); !r)
      return r.error();
  }
  return {};
}

std::string utc_now_iso() {
  return utc_iso(unix_seconds(std::chrono::system_clock::now()));
}

}  // namespace bootstorm::reports

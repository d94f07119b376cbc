// KubeVirt's storage counters over a window (see the header).
#include "providers/prometheus/storage_window.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string_view>

namespace bootstorm::prometheus {

namespace {

constexpr std::size_t kMetrics = kStorageMetrics.size();
constexpr std::size_t kReadIos = 0, kWriteIos = 1, kReadBytes = 2, kWriteBytes = 3, kReadSeconds = 4,
                      kWriteSeconds = 5;

using Amounts = std::array<double, kMetrics>;

struct Vmi {
  std::string node;
  std::array<std::vector<PromSample>, kMetrics> samples;
};

// The PromQL string literal of `text`.
std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  return out + "\"";
}

// A counter's increase from `before` to `after`; a reset (VMI restarted) starts again from zero.
double increase(double before, double after) {
  return after >= before ? after - before : after;
}

api::StorageRates rates_of(const Amounts& a, double seconds) {
  api::StorageRates r;
  if (seconds <= 0) return r;
  r.read_iops = a[kReadIos] / seconds;
  r.write_iops = a[kWriteIos] / seconds;
  r.read_bytes_per_s = a[kReadBytes] / seconds;
  r.write_bytes_per_s = a[kWriteBytes] / seconds;
  if (a[kReadIos] > 0) r.read_latency_s = a[kReadSeconds] / a[kReadIos];
  if (a[kWriteIos] > 0) r.write_latency_s = a[kWriteSeconds] / a[kWriteIos];
  return r;
}

api::StorageTotals totals_of(api::StorageSubject kind, const std::string& subject, const Amounts& a) {
  api::StorageTotals t;
  t.kind = kind;
  t.subject = subject;
  t.read_bytes = a[kReadBytes];
  t.write_bytes = a[kWriteBytes];
  t.read_ios = a[kReadIos];
  t.write_ios = a[kWriteIos];
  if (a[kReadIos] > 0) t.read_latency_s = a[kReadSeconds] / a[kReadIos];
  return t;
}

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

// The scrape interval: the usual spacing of consecutive samples, to the millisecond.
double scrape_interval(const std::map<std::string, Vmi>& vmis) {
  std::vector<double> spacing;
  for (const auto& [name, vmi] : vmis) {
    const auto& s = vmi.samples[kReadBytes];
    for (std::size_t i = 1; i < s.size(); ++i) spacing.push_back(s[i].at - s[i - 1].at);
  }
  return std::round(median(std::move(spacing)) * 1000) / 1000;
}

}  // namespace

std::string raw_counter_query(std::size_t index, const std::string& namespace_, double range_s) {
  return fmt::format("{}{{namespace={}}}[{}ms]", kStorageMetrics.at(index), quoted(namespace_),
                     static_cast<long long>(std::ceil(range_s * 1000)));
}

double raw_counter_range_s(const api::TelemetryRequest& request, std::optional<double> step_s) {
  // Without the interval, two minutes hold the last scrape before the window at any usual one (up to 1 min).
  return std::max(0.0, request.to - request.from) + (step_s ? 2 * *step_s : 120);
}

Expected<api::TelemetryReport> storage_report(const std::array<QueryAnswer, 6>& answers,
                                              const api::TelemetryRequest& request,
                                              std::optional<double> grid_s, std::optional<double> scrape_s) {
  const std::set<std::string> wanted(request.vm_names.begin(), request.vm_names.end());
  std::map<std::string, Vmi> vmis;
  api::TelemetryReport report;
  report.source = "prometheus";
  report.from = request.from;
  report.to = request.to;
  for (std::size_t m = 0; m < kMetrics; ++m) {
    if (answers[m].result_type != "matrix") {
      return make_error(
          ErrorKind::protocol,
          fmt::format("The query API answered {} with a {}, not the raw samples (matrix) asked for.",
                      kStorageMetrics[m],
                      answers[m].result_type.empty() ? "nothing" : answers[m].result_type));
    }
    for (const auto& w : answers[m].warnings) report.warnings.push_back(w);
    for (const auto& series : answers[m].series) {
      auto name = series.labels.find("name");
      if (name == series.labels.end()) continue;
      if (!wanted.empty() && !wanted.count(name->second)) continue;
      Vmi& vmi = vmis[name->second];
      if (auto node = series.labels.find("node"); node != series.labels.end()) vmi.node = node->second;
      // A VMI with several drives has a series per drive: their samples add up at the same scrape.
      auto& into = vmi.samples[m];
      for (const auto& sample : series.samples) {
        auto at = std::lower_bound(into.begin(), into.end(), sample.at,
                                   [](const PromSample& s, double t) { return s.at < t; });
        if (at != into.end() && at->at == sample.at) {
          at->value += sample.value;
        } else {
          into.insert(at, sample);
        }
      }
    }
  }
  report.resolution_s = scrape_s.value_or(scrape_interval(vmis));
  if (vmis.empty()) {
    report.warnings.push_back(fmt::format(
        "Prometheus has no kubevirt_vmi_storage_* samples for the run's VMIs between {:.0f} and {:.0f} (unix "
        "s): "
        "is KubeVirt's virt-handler scraped (ServiceMonitor kubevirt), and did the VMIs run for a scrape "
        "interval?",
        request.from, request.to));
    return report;
  }
  const double step = grid_s.value_or(report.resolution_s > 0 ? report.resolution_s : 15);
  const double grid_from = std::floor(request.from / step) * step;
  const auto bins = static_cast<std::size_t>(std::max(1.0, std::ceil((request.to - grid_from) / step)));
  std::map<std::string, std::vector<Amounts>> node_bins;
  std::map<std::string, Amounts> node_totals;
  for (const auto& [name, vmi] : vmis) {
    Amounts total{};
    // The VMI's own intervals, metric by metric, keyed by their end (every metric is scraped together).
    std::map<double, std::pair<double, Amounts>> intervals;  // end -> (start, amounts)
    for (std::size_t m = 0; m < kMetrics; ++m) {
      const auto& s = vmi.samples[m];
      double before = 0;
      std::optional<double> previous_at;
      for (const auto& sample : s) {
        if (sample.at <= request.from) {
          before = sample.value;
          previous_at = sample.at;
          continue;
        }
        if (sample.at > request.to) break;
        const double amount = increase(before, sample.value);
        total[m] += amount;
        // A series that begins in the window started from zero within the scrape interval before.
        const double start =
            previous_at.value_or(sample.at - (report.resolution_s > 0 ? report.resolution_s : step));
        auto& slot = intervals[sample.at];
        slot.first = start;
        slot.second[m] += amount;
        before = sample.value;
        previous_at = sample.at;
      }
    }
    for (const auto& [end, slot] : intervals) {
      api::StorageSample sample;
      sample.kind = api::StorageSubject::vm;
      sample.subject = name;
      sample.from = slot.first;
      sample.to = end;
      sample.rates = rates_of(slot.second, end - slot.first);
      report.samples.push_back(std::move(sample));
      // Spread the interval over the node's bins in proportion to the time it overlaps each (the rate was
      // constant as far as the scrapes can tell).
      auto& per_bin = node_bins[vmi.node];
      per_bin.resize(bins, Amounts{});
      const double length = end - slot.first;
      for (std::size_t b = 0; b < bins && length > 0; ++b) {
        const double lo = grid_from + static_cast<double>(b) * step;
        const double overlap = std::min(end, lo + step) - std::max(slot.first, lo);
        if (overlap <= 0) continue;
        for (std::size_t m = 0; m < kMetrics; ++m) per_bin[b][m] += slot.second[m] * overlap / length;
      }
    }
    report.totals.push_back(totals_of(api::StorageSubject::vm, name, total));
    auto& node_total = node_totals[vmi.node];
    for (std::size_t m = 0; m < kMetrics; ++m) node_total[m] += total[m];
  }
  for (const auto& [node, per_bin] : node_bins) {
    for (std::size_t b = 0; b < per_bin.size(); ++b) {
      api::StorageSample sample;
      sample.kind = api::StorageSubject::host;
      sample.subject = node;
      sample.from = grid_from + static_cast<double>(b) * step;
      sample.to = sample.from + step;
      sample.rates = rates_of(per_bin[b], step);
      report.samples.push_back(std::move(sample));
    }
  }
  for (const auto& [node, total] : node_totals)
    report.totals.push_back(totals_of(api::StorageSubject::host, node, total));
  return report;
}

// ---- Per-node sums --------------------------------------------------------------------------------------

namespace {

std::string regex_escaped(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (std::string_view(R"(\.+*?()|[]{}^$)").find(c) != std::string_view::npos) out.push_back('\\');
    out.push_back(c);
  }
  return out;
}

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

}  // namespace

std::string name_pattern(const std::vector<std::string>& names) {
  if (names.empty()) return ".*";
  std::string_view prefix = names.front();
  for (const auto& name : names) {
    std::size_t n = 0;
    while (n < prefix.size() && n < name.size() && prefix[n] == name[n]) ++n;
    prefix = prefix.substr(0, n);
  }
  while (!prefix.empty() && is_digit(prefix.back())) prefix.remove_suffix(1);
  const bool digits_follow = std::all_of(names.begin(), names.end(), [&](const std::string& name) {
    const std::string_view rest = std::string_view(name).substr(prefix.size());
    return !rest.empty() && std::all_of(rest.begin(), rest.end(), is_digit);
  });
  return regex_escaped(prefix) + (digits_follow ? "[0-9]+" : ".*");
}

std::string node_sum_query(std::size_t index, const std::string& namespace_, const std::string& pattern) {
  return fmt::format("sum by (node) ({}{{namespace={},name=~{}}})", kStorageMetrics.at(index),
                     quoted(namespace_), quoted(pattern));
}

NodeSumGrid node_sum_grid(const api::TelemetryRequest& request, double step) {
  constexpr double kMaxIntervals = 10000;
  const double window = std::max(0.0, request.to - request.from);
  NodeSumGrid grid;
  grid.step = std::max({step, window / kMaxIntervals, 0.001});
  grid.end = request.to;
  grid.start = grid.end - std::max(1.0, std::ceil(window / grid.step - 1e-9)) * grid.step;
  return grid;
}

Expected<api::TelemetryReport> node_sum_report(const std::array<QueryAnswer, 6>& answers,
                                               const api::TelemetryRequest& request, const NodeSumGrid& grid,
                                               double scrape_s) {
  api::TelemetryReport report;
  report.source = "prometheus";
  report.from = request.from;
  report.to = request.to;
  report.resolution_s = scrape_s;
  const double spans = (grid.end - grid.start) / grid.step;
  if (!(spans >= 0.5 && spans <= 10000.5)) {
    return make_error(ErrorKind::internal, fmt::format("a node-sum grid of {} intervals", spans));
  }
  const auto instants = static_cast<std::size_t>(std::llround(spans)) + 1;
  // Per node and metric, the sum at each instant (unset where the node had no VMI yet).
  std::map<std::string, std::array<std::vector<std::optional<double>>, kMetrics>> sums;
  for (std::size_t m = 0; m < kMetrics; ++m) {
    if (answers[m].result_type != "matrix") {
      return make_error(ErrorKind::protocol,
                        fmt::format("The query API answered the range query of {} with a {}, not a matrix.",
                                    kStorageMetrics[m],
                                    answers[m].result_type.empty() ? "nothing" : answers[m].result_type));
    }
    for (const auto& w : answers[m].warnings) report.warnings.push_back(w);
    for (const auto& series : answers[m].series) {
      auto node = series.labels.find("node");
      auto& at = sums[node == series.labels.end() ? std::string() : node->second][m];
      at.resize(instants);
      for (const auto& sample : series.samples) {
        const double index = (sample.at - grid.start) / grid.step;
        if (!(index > -0.5 && index < static_cast<double>(instants) - 0.5)) continue;  // NaN too
        at[static_cast<std::size_t>(std::llround(index))] = sample.value;
      }
    }
  }
  if (sums.empty()) {
    report.warnings.push_back(fmt::format(
        "Prometheus has no kubevirt_vmi_storage_* samples for the run's VMIs between {:.0f} and {:.0f} (unix "
        "s): is KubeVirt's virt-handler scraped (ServiceMonitor kubevirt)?",
        request.from, request.to));
    return report;
  }
  for (auto& [node, per_metric] : sums) {
    Amounts total{};
    std::vector<Amounts> intervals(instants > 0 ? instants - 1 : 0, Amounts{});
    for (std::size_t m = 0; m < kMetrics; ++m) {
      auto& at = per_metric[m];
      at.resize(instants);
      // Before the node's first VMI, its sum is zero; an instant without a value keeps the last one.
      double before = at.empty() || !at[0] ? 0 : *at[0];
      for (std::size_t i = 1; i < instants; ++i) {
        if (!at[i]) continue;
        const double amount = std::max(0.0, *at[i] - before);
        intervals[i - 1][m] = amount;
        total[m] += amount;
        before = *at[i];
      }
    }
    for (std::size_t i = 0; i < intervals.size(); ++i) {
      api::StorageSample sample;
      sample.kind = api::StorageSubject::host;
      sample.subject = node;
      sample.from = grid.start + static_cast<double>(i) * grid.step;
      sample.to = sample.from + grid.step;
      sample.rates = rates_of(intervals[i], grid.step);
      report.samples.push_back(std::move(sample));
    }
    report.totals.push_back(totals_of(api::StorageSubject::host, node, total));
  }
  return report;
}

}  // namespace bootstorm::prometheus

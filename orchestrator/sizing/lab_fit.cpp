// `bootstorm lab fit` (see the header).
#include "orchestrator/sizing/lab_fit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>

#include "orchestrator/sizing/predict.hpp"
#include "results/summary.hpp"

namespace bootstorm::sizing {

namespace model = sim::model;

namespace {

constexpr double kGolden = 0.6180339887498949;
constexpr double kTolerance = 1e-4;            // log units: the fitted value to 0.01 %
constexpr double kProbe = 0.1823215567939546;  // ln 1.2: the sensitivity probe
constexpr double kMinSensitivity = 0.01;
constexpr double kCollinear = 0.999;
constexpr double kMissing = 1e6;  // a residual where the model has no ready desktop to compare

struct Observation {
  std::size_t run = 0;
  const FitRun::Scenario* scenario = nullptr;
};

std::string value_text(double v) {
  return fmt::format("{:.6g}", v);
}

Expected<double> parse_number(const std::string& key, const std::string& text) {
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty()) {
    return make_error(
        ErrorKind::invalid_input,
        fmt::format("--fit {}: the profile does not set it (the loader's default applies), so fit "
                    "has no starting point.",
                    key),
        fmt::format("Give it one with --set {}=VALUE.", key));
  }
  if (ec != std::errc() || end != text.data() + text.size()) {
    return make_error(
        ErrorKind::invalid_input,
        fmt::format("--fit {}: its value '{}' is not a number: fit changes numbers only.", key, text));
  }
  if (!(v > 0)) {
    return make_error(
        ErrorKind::invalid_input,
        fmt::format("--fit {}: its value {} is not positive: fit searches positive values on a log "
                    "scale.",
                    key, text));
  }
  return v;
}

// The model's predictions of every observation for a set of values.
class Evaluator {
 public:
  Evaluator(const std::vector<FitRun>& runs, const FitOptions& options, std::vector<Observation> observations,
            std::vector<double> initial)
      : runs_(runs),
        options_(options),
        observations_(std::move(observations)),
        initial_(std::move(initial)) {}

  // (mean, P95) per observation; values in log units relative to the initial ones.
  Expected<std::vector<std::pair<double, double>>> predict(const std::vector<double>& u) {
    std::vector<model::LabOverride> overrides = options_.fixed;
    for (std::size_t k = 0; k < options_.keys.size(); ++k)
      overrides.push_back({options_.keys[k], value_text(initial_[k] * std::exp(u[k]))});
    std::vector<std::pair<double, double>> out(observations_.size(), {0.0, 0.0});
    std::map<std::size_t, std::vector<std::size_t>> by_run;
    for (std::size_t i = 0; i < observations_.size(); ++i) by_run[observations_[i].run].push_back(i);
    for (const auto& [r, indexes] : by_run) {
      const FitRun& run = runs_[r];
      PredictOptions p;
      p.lab = options_.lab;
      p.overrides = overrides;
      p.seed = options_.seed;
      p.only_scenario = options_.only_scenario;
      p.plan_yaml = run.plan_yaml;
      p.repeat = std::max(1, options_.model_repeats);
      for (auto i : indexes) p.repeat = std::max(p.repeat, observations_[i].scenario->repeats);
      auto predicted = simulate_plan(run.plan, p);
      if (!predicted) return predicted.error();
      ++model_runs_;
      const results::Summary summary = results::summarize(record_of(*predicted));
      for (auto i : indexes) {
        double mean = 0, p95 = 0;
        int n = 0;
        for (const auto& s : summary.scenarios) {
          if (s.name != observations_[i].scenario->name) continue;
          const results::Distribution& d = s.ready();
          if (!d.mean || !d.p95) {
            n = 0;
            break;
          }
          mean += *d.mean;
          p95 += *d.p95;
          ++n;
        }
        out[i] = n == 0 ? std::pair{std::numeric_limits<double>::infinity(),
                                    std::numeric_limits<double>::infinity()}
                        : std::pair{mean / n, p95 / n};
      }
    }
    return out;
  }

  Expected<double> objective(const std::vector<double>& u) {
    auto predicted = predict(u);
    if (!predicted) return predicted.error();
    double sum = 0;
    for (std::size_t i = 0; i < observations_.size(); ++i) {
      const auto& s = *observations_[i].scenario;
      sum += residual2((*predicted)[i].first, s.mean_s) + residual2((*predicted)[i].second, s.p95_s);
    }
    return sum;
  }

  int model_runs() const { return model_runs_; }
  const std::vector<Observation>& observations() const { return observations_; }

 private:
  static double residual2(double predicted, double measured) {
    if (!std::isfinite(predicted) || predicted <= 0) return kMissing;
    const double r = std::log(predicted / measured);
    return r * r;
  }

  const std::vector<FitRun>& runs_;
  const FitOptions& options_;
  std::vector<Observation> observations_;
  std::vector<double> initial_;
  int model_runs_ = 0;
};

// Minimises f along coordinate k within [lo, hi]: a grid, then golden-section between the best point's
// neighbours.
Expected<double> minimise_along(Evaluator& e, std::vector<double> u, std::size_t k, double lo, double hi,
                                int grid) {
  auto at = [&](double x) -> Expected<double> {
    u[k] = x;
    return e.objective(u);
  };
  double best_x = lo, best_f = std::numeric_limits<double>::infinity();
  std::vector<double> xs;
  for (int i = 0; i < grid; ++i) xs.push_back(lo + (hi - lo) * i / (grid - 1));
  std::size_t best_i = 0;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    auto f = at(xs[i]);
    if (!f) return f.error();
    if (*f < best_f) {
      best_f = *f;
      best_x = xs[i];
      best_i = i;
    }
  }
  double a = xs[best_i == 0 ? 0 : best_i - 1];
  double b = xs[std::min(best_i + 1, xs.size() - 1)];
  double c = b - kGolden * (b - a), d = a + kGolden * (b - a);
  auto fc = at(c), fd = at(d);
  if (!fc) return fc.error();
  if (!fd) return fd.error();
  while (b - a > kTolerance) {
    if (*fc < *fd) {
      b = d;
      d = c;
      fd = fc;
      c = b - kGolden * (b - a);
      fc = at(c);
      if (!fc) return fc.error();
    } else {
      a = c;
      c = d;
      fc = fd;
      d = a + kGolden * (b - a);
      fd = at(d);
      if (!fd) return fd.error();
    }
  }
  const double x = (a + b) / 2;
  auto fx = at(x);
  if (!fx) return fx.error();
  return *fx <= best_f ? x : best_x;
}

double rms(const std::vector<FitPoint>& points, bool fitted) {
  double sum = 0;
  int n = 0;
  for (const auto& p : points) {
    for (auto [predicted, measured] : {std::pair{fitted ? p.fitted_mean : p.initial_mean, p.measured_mean},
                                       std::pair{fitted ? p.fitted_p95 : p.initial_p95, p.measured_p95}}) {
      const double r = std::isfinite(predicted) ? predicted / measured - 1 : 1;
      sum += r * r;
      ++n;
    }
  }
  return n == 0 ? 0 : std::sqrt(sum / n);
}

}  // namespace

std::vector<model::LabOverride> FitResult::overrides() const {
  std::vector<model::LabOverride> out = fixed;
  for (const auto& p : parameters) out.push_back({p.key, value_text(p.fitted)});
  return out;
}

Expected<FitResult> fit_lab(const std::vector<FitRun>& runs, const FitOptions& options) {
  if (options.keys.empty()) {
    return make_error(ErrorKind::invalid_input, "Nothing to fit.",
                      "Name a profile value with --fit, e.g. --fit datastores.tolly-aff-ds01.latencyMs.");
  }
  if (!(options.span > 1)) return make_error(ErrorKind::invalid_input, "--span must be more than 1.");
  for (std::size_t a = 0; a < options.keys.size(); ++a) {
    for (std::size_t b = a + 1; b < options.keys.size(); ++b) {
      if (options.keys[a] == options.keys[b])
        return make_error(ErrorKind::invalid_input, fmt::format("--fit {} is named twice.", options.keys[a]));
    }
  }
  FitResult result;
  result.fixed = options.fixed;
  auto profile = model::read_lab_profile(options.lab);
  if (!profile) return profile.error();
  result.lab_path = profile->path;
  auto fixed_text = model::apply_lab_overrides(profile->text, options.fixed);
  if (!fixed_text) return fixed_text.error();
  std::vector<double> initial;
  for (const auto& key : options.keys) {
    // A key the profile format does not have is the strict loader's error, before anything is read.
    std::vector<model::LabOverride> probe = options.fixed;
    probe.push_back({key, "1"});
    if (auto valid = model::load_lab_spec_with(options.lab, probe); !valid) {
      Error error = valid.error();
      error.message = "--fit " + key + ": " + error.message;
      return error;
    }
    auto text = model::lab_profile_value(*fixed_text, key);
    if (!text) return text.error();
    auto v = parse_number(key, *text);
    if (!v) return v.error();
    initial.push_back(*v);
    result.parameters.push_back({key, *v, *v, 0, false});
  }
  auto spec = model::load_lab_spec_with(options.lab, options.fixed);
  if (!spec) return spec.error();
  result.lab = spec->name;

  std::vector<Observation> observations;
  for (std::size_t r = 0; r < runs.size(); ++r) {
    for (const auto& s : runs[r].scenarios) {
      if (!options.only_scenario.empty() && s.name != options.only_scenario) continue;
      observations.push_back({r, &s});
    }
  }
  if (observations.empty()) {
    return make_error(ErrorKind::invalid_input,
                      options.only_scenario.empty()
                          ? std::string("The runs have no scenario with ready desktops to fit to.")
                          : fmt::format("No run has a scenario named '{}'.", options.only_scenario));
  }
  if (options.keys.size() > observations.size()) {
    return make_error(
        ErrorKind::invalid_input,
        fmt::format(
            "{} parameters from {} measured scenario(s): the runs cannot determine more parameters than "
            "they have measured layouts.",
            options.keys.size(), observations.size()),
        "Fit fewer parameters, or add runs of other layouts.");
  }

  Evaluator e(runs, options, observations, initial);
  const std::vector<double> origin(options.keys.size(), 0.0);
  auto at_origin = e.predict(origin);
  if (!at_origin) return at_origin.error();

  // What the runs can determine: each parameter must move a measured boot time, and no two alike.
  std::vector<std::vector<double>> moves;
  for (std::size_t k = 0; k < options.keys.size(); ++k) {
    std::vector<double> up = origin, down = origin;
    up[k] = kProbe;
    down[k] = -kProbe;
    auto hi = e.predict(up), lo = e.predict(down);
    if (!hi) return hi.error();
    if (!lo) return lo.error();
    std::vector<double> v;
    double largest = 0;
    for (std::size_t i = 0; i < observations.size(); ++i) {
      for (auto [h, l] :
           {std::pair{(*hi)[i].first, (*lo)[i].first}, std::pair{(*hi)[i].second, (*lo)[i].second}}) {
        const double s = std::isfinite(h) && std::isfinite(l) ? std::log(h / l) / (2 * kProbe) : 0;
        v.push_back(s);
        largest = std::max(largest, std::abs(s));
      }
    }
    result.parameters[k].sensitivity = largest;
    if (largest < kMinSensitivity) {
      return make_error(
          ErrorKind::invalid_input,
          fmt::format(
              "--fit {}: changing it by 20 % moves no measured scenario's ready mean or P95 by more than "
              "{:.1f} %: the runs cannot determine it.",
              options.keys[k], largest * kProbe * 100),
          "Fit a value these layouts depend on, or add a run of a layout that depends on it.");
    }
    moves.push_back(std::move(v));
  }
  for (std::size_t a = 0; a < moves.size(); ++a) {
    for (std::size_t b = a + 1; b < moves.size(); ++b) {
      double dot = 0, na = 0, nb = 0;
      for (std::size_t i = 0; i < moves[a].size(); ++i) {
        dot += moves[a][i] * moves[b][i];
        na += moves[a][i] * moves[a][i];
        nb += moves[b][i] * moves[b][i];
      }
      if (std::abs(dot) / std::sqrt(na * nb) > kCollinear) {
        return make_error(
            ErrorKind::invalid_input,
            fmt::format("--fit {} and --fit {} move the measured scenarios alike: the runs cannot "
                        "tell them apart.",
                        options.keys[a], options.keys[b]),
            "Fit one of them, or add a run of a layout where they differ.");
      }
    }
  }

  // Coordinate descent: the whole range on the first pass, then around the current values.
  const double span = std::log(options.span);
  std::vector<double> u = origin;
  for (int pass = 0; pass < 8; ++pass) {
    double moved = 0;
    for (std::size_t k = 0; k < u.size(); ++k) {
      const double lo = pass == 0 ? -span : std::max(-span, u[k] - 0.25);
      const double hi = pass == 0 ? span : std::min(span, u[k] + 0.25);
      auto best = minimise_along(e, u, k, lo, hi, pass == 0 ? 25 : 9);
      if (!best) return best.error();
      moved = std::max(moved, std::abs(*best - u[k]));
      u[k] = *best;
    }
    if (u.size() == 1 || moved < 1e-3) break;
  }
  for (std::size_t k = 0; k < u.size(); ++k) {
    result.parameters[k].fitted = initial[k] * std::exp(u[k]);
    result.parameters[k].at_bound = std::abs(std::abs(u[k]) - span) < 1e-3;
  }
  auto fitted = e.predict(u);
  if (!fitted) return fitted.error();
  for (std::size_t i = 0; i < observations.size(); ++i) {
    const auto& s = *observations[i].scenario;
    result.points.push_back({runs[observations[i].run].name, s.name, s.mean_s, s.p95_s, (*at_origin)[i].first,
                             (*at_origin)[i].second, (*fitted)[i].first, (*fitted)[i].second});
  }
  result.rms_initial = rms(result.points, false);
  result.rms_fitted = rms(result.points, true);
  result.model_runs = e.model_runs();
  return result;
}

Expected<std::string> fitted_profile_yaml(const FitResult& result, const std::vector<FitRun>& runs,
                                          const std::string& fitted_at) {
  auto profile = model::read_lab_profile(result.lab_path);
  if (!profile) return profile.error();
  // Named apart from the profile it came from, so that runs and predictions made with it say so.
  std::vector<model::LabOverride> overrides = result.overrides();
  if (std::none_of(overrides.begin(), overrides.end(), [](const auto& o) { return o.key == "name"; }))
    overrides.push_back({"name", result.lab + "-fitted"});
  auto text = model::apply_lab_overrides(profile->text, overrides);
  if (!text) return text.error();
  std::string head = fmt::format("# Fitted by `bootstorm lab fit` at {} from lab profile {} ({}).\n",
                                 fitted_at, result.lab, result.lab_path);
  for (const auto& o : result.fixed) head += fmt::format("# Set before fitting: {}\n", o.text());
  for (const auto& p : result.parameters) {
    head +=
        fmt::format("# Fitted: {} {} -> {} (x{:.4f}){}\n", p.key, value_text(p.initial), value_text(p.fitted),
                    p.fitted / p.initial, p.at_bound ? " AT THE EDGE OF THE SEARCHED RANGE" : "");
  }
  head += "# Runs fitted to:\n";
  for (const auto& r : runs) head += fmt::format("#   {} ({}, plan {})\n", r.name, r.source, r.plan.name);
  head += "# Ready mean / P95 per scenario: measured, then the model before and after fitting (residual).\n";
  for (const auto& p : result.points) {
    head += fmt::format(
        "#   {} / {}: measured {:.2f} / {:.2f} s; before {:.2f} / {:.2f} s; fitted {:.2f} / {:.2f} s "
        "({:+.1f} % / {:+.1f} %)\n",
        p.run, p.scenario, p.measured_mean, p.measured_p95, p.initial_mean, p.initial_p95, p.fitted_mean,
        p.fitted_p95, (p.fitted_mean / p.measured_mean - 1) * 100, (p.fitted_p95 / p.measured_p95 - 1) * 100);
  }
  head += fmt::format(
      "# RMS relative residual: {:.1f} % before, {:.1f} % after ({} model runs). The rest of the "
      "file is the profile with these values; its own comments are not kept.\n",
      result.rms_initial * 100, result.rms_fitted * 100, result.model_runs);
  return head + *text;
}

}  // namespace bootstorm::sizing

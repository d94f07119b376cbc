#pragma once
// Progress of a run for the person at the terminal: on a TTY one live status line per phase (counts,
// elapsed, ETA), redrawn at most a few times per second; otherwise plain log lines at phase changes and
// every few seconds, so that CI logs stay readable.
#include <chrono>
#include <cstdio>
#include <optional>
#include <string>

namespace bootstorm::engine {

struct ProgressCounts {
  std::size_t total = 0;
  std::size_t provisioned = 0;
  std::size_t started = 0;
  std::size_t ready = 0;
  std::size_t failed = 0;
};

class Progress {
 public:
  enum class Mode { automatic, tty, plain, none };
  explicit Progress(Mode mode, std::FILE* out = stderr);

  void phase(const std::string& name, const ProgressCounts& counts);
  void update(const ProgressCounts& counts);
  // Ends the live line (newline) so that log output does not overwrite it.
  void finish();

  // When the phase's first VM was done (seconds into the phase) and how many were done then.
  struct FirstDone {
    double at_s = 0;
    std::size_t done = 0;
  };
  // How many VMs the phase has done: provisioned (or failed) in provision, ready (or failed) in
  // storm/observe.
  static std::size_t done_in(const std::string& phase, const ProgressCounts& counts);
  // "provision 12/24 | started 0/24 | ready 0/24 | failed 0 | 3.2 s | ETA 3 s". The ETA extrapolates the pace
  // since the phase's first VM was done, not since the phase began: clones that take 190 s and finish
  // together would otherwise give "ETA 4441 s" at the first of them. Without a pace yet, no ETA.
  static std::string render(const std::string& phase, const ProgressCounts& counts, double elapsed_s,
                            std::optional<FirstDone> first_done = std::nullopt);

 private:
  void draw(bool force);

  Mode mode_;
  std::FILE* out_;
  std::string phase_;
  ProgressCounts counts_;
  std::optional<FirstDone> first_done_;
  std::chrono::steady_clock::time_point phase_start_{};
  std::chrono::steady_clock::time_point last_draw_{};
  bool line_open_ = false;
};

}  // namespace bootstorm::engine

#include "orchestrator/engine/progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include "common/log.hpp"

namespace bootstorm::engine {

Progress::Progress(Mode mode, std::FILE* out) : mode_(mode), out_(out) {
  if (mode_ == Mode::automatic) mode_ = ::isatty(::fileno(out_)) ? Mode::tty : Mode::plain;
}

std::size_t Progress::done_in(const std::string& phase, const ProgressCounts& c) {
  if (phase == "provision") return c.provisioned + c.failed;
  if (phase == "storm" || phase == "observe") return c.ready + c.failed;
  return 0;
}

std::string Progress::render(const std::string& phase, const ProgressCounts& c, double elapsed_s,
                             std::optional<FirstDone> first_done) {
  std::string eta;
  const std::size_t done = done_in(phase, c);
  if (first_done && done > first_done->done && done < c.total && elapsed_s > first_done->at_s) {
    const double pace = static_cast<double>(done - first_done->done) / (elapsed_s - first_done->at_s);
    eta = fmt::format(" | ETA {:.0f} s", static_cast<double>(c.total - done) / pace);
  }
  return fmt::format("{} | provisioned {}/{} | started {}/{} | ready {}/{} | failed {} | {:.1f} s{}", phase,
                     c.provisioned, c.total, c.started, c.total, c.ready, c.total, c.failed, elapsed_s, eta);
}

void Progress::phase(const std::string& name, const ProgressCounts& counts) {
  if (mode_ == Mode::none) return;
  if (line_open_) finish();
  phase_ = name;
  counts_ = counts;
  phase_start_ = std::chrono::steady_clock::now();
  first_done_.reset();
  if (mode_ == Mode::plain) spdlog::info("phase {}: {} VMs", name, counts.total);
  draw(true);
}

void Progress::update(const ProgressCounts& counts) {
  if (mode_ == Mode::none) return;
  counts_ = counts;
  draw(false);
}

void Progress::draw(bool force) {
  auto now = std::chrono::steady_clock::now();
  const double elapsed = std::chrono::duration<double>(now - phase_start_).count();
  if (!first_done_) {
    if (const std::size_t done = done_in(phase_, counts_); done > 0) first_done_ = FirstDone{elapsed, done};
  }
  if (mode_ == Mode::tty) {
    if (!force && now - last_draw_ < std::chrono::milliseconds(250)) return;
    last_draw_ = now;
    std::fprintf(out_, "\r\033[K%s", render(phase_, counts_, elapsed, first_done_).c_str());
    std::fflush(out_);
    line_open_ = true;
  } else if (mode_ == Mode::plain) {
    if (force) {
      last_draw_ = now;
      return;
    }
    if (now - last_draw_ < std::chrono::seconds(5)) return;
    last_draw_ = now;
    spdlog::info("{}", render(phase_, counts_, elapsed, first_done_));
  }
}

void Progress::finish() {
  if (mode_ == Mode::tty && line_open_) {
    draw(true);
    std::fputc('\n', out_);
    std::fflush(out_);
    line_open_ = false;
  }
}

}  // namespace bootstorm::engine

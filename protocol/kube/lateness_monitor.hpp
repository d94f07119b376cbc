#pragma once
// How late this process may be in handing a watch line to its handler, measured rather than assumed
// (it is the stated resolution of watch milestones, and it must never be smaller than the real error):
//  * queueing: the provider shares one event loop with the engine (start responses, journal, progress); a
//    line that reached the socket while the loop was busy waits in the loop's queue. A probe timer due every
//    kProbePeriod measures that wait (how late it runs). The bound at time t is the largest wait of the
//    probes that ran in the last kProbeWindow plus how overdue the pending probe is at t. A TLS record takes
//    up to two turns of the loop (socket read, then decryption), hence twice that wait.
//  * backlog: lines are handed over one after the other, so a line also waits for the handling of the lines
//    and records before it. The next read is issued as soon as the previous lines are handled; if data is
//    already waiting it completes within the queueing bound. So a line that follows the previous one within
//    2 x queueing + kGapMargin may have been waiting all along (it joins the backlog: its bound grows with
//    the time since the backlog began); a longer gap proves the socket had run dry (a fresh backlog).
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <deque>
#include <memory>
#include <utility>

namespace bootstorm::kube {

class LatenessMonitor : public std::enable_shared_from_this<LatenessMonitor> {
 public:
  static constexpr auto kProbePeriod = std::chrono::milliseconds(1);
  static constexpr auto kProbeWindow = std::chrono::milliseconds(250);
  static constexpr auto kGapMargin = std::chrono::milliseconds(1);

  // `other_thread`: the monitor runs on an executor of another thread (the WatchThread), so stop() posts.
  LatenessMonitor(boost::asio::any_io_executor executor, bool other_thread);

  // Starts the probe timer (on the executor given to the constructor).
  void start();
  void stop();

  // A line is handed over at `at`: the bound (seconds) on how long it waited in this process.
  double line_started(std::chrono::steady_clock::time_point at);
  void line_finished() { last_line_end_ = std::chrono::steady_clock::now(); }

 private:
  using Clock = std::chrono::steady_clock;
  void record(Clock::time_point ran, Clock::duration lag);

  boost::asio::steady_timer timer_;
  bool other_thread_;
  bool stopped_ = false;
  Clock::time_point due_ = Clock::now();
  std::deque<std::pair<Clock::time_point, Clock::duration>> recent_;
  bool in_backlog_ = false;
  Clock::time_point backlog_start_{}, last_line_end_{};
};

}  // namespace bootstorm::kube

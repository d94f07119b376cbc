#pragma once
// The instant this client saw something, on both clocks: the monotonic one for durations, the wall one for
// the journal and for comparison with the server's own timestamps.
#include <chrono>

namespace bootstorm::kube {

struct ClientInstant {
  std::chrono::steady_clock::time_point mono{};
  std::chrono::system_clock::time_point wall{};
  static ClientInstant now() { return {std::chrono::steady_clock::now(), std::chrono::system_clock::now()}; }
};

}  // namespace bootstorm::kube

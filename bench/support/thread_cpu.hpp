#pragma once
// CPU time one thread has used, in seconds: what a server thread's capacity per core is measured by, whatever
// else the machine runs. 0 when the clock cannot be read.
#include <pthread.h>

#include <ctime>
#include <thread>

namespace bootstorm::bench {

inline double thread_cpu_seconds(std::thread& thread) {
  clockid_t clock;
  timespec ts{};
  if (pthread_getcpuclockid(thread.native_handle(), &clock) != 0 || clock_gettime(clock, &ts) != 0) return 0;
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

}  // namespace bootstorm::bench

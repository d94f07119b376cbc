#include "common/async/for_each.hpp"

#include <spdlog/spdlog.h>

namespace bootstorm::async {

void log_task_exception(std::exception_ptr e, const std::string& what) {
  if (!e) return;
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& ex) {
    spdlog::error("{} failed unexpectedly: {}", what, ex.what());
  } catch (...) {
    spdlog::error("{} failed unexpectedly (unknown exception)", what);
  }
}

}  // namespace bootstorm::async

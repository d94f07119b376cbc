#pragma once
// What `bootstorm lab serve` and `bootstorm lab attach` share: serving until SIGINT or SIGTERM, and the lab
// profile changed by --set.
#include <csignal>
#include <optional>
#include <string>
#include <vector>

#include "common/expected.hpp"
#include "simulator/model/lab_spec.hpp"

namespace bootstorm::cli {

// Blocks SIGINT and SIGTERM in the calling thread, before any other thread exists, so that every thread
// inherits the mask and a sigwait() on the returned set is their only receiver.
sigset_t block_stop_signals();

// The profile `lab` with `sets` (KEY=VALUE, as for predict) applied; nullopt when there are none.
Expected<std::optional<sim::model::LabSpec>> lab_spec_with_sets(const std::string& lab,
                                                                const std::vector<std::string>& sets);

}  // namespace bootstorm::cli

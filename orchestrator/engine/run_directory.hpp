#pragma once
// A run directory: <output>/<name>, mode 0700, with the resolved plan as plan.yaml (secrets redacted). The
// run session and `bootstorm predict` make theirs here, then open the journal in it.
#include <filesystem>
#include <string>

#include "common/expected.hpp"

namespace bootstorm::engine {

Expected<std::filesystem::path> make_run_directory(const std::filesystem::path& output_dir,
                                                   const std::string& name, const std::string& plan_yaml);

}  // namespace bootstorm::engine

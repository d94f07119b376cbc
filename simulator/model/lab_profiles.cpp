// Where lab profiles are found: by name in the labs directories, or by path (lab_spec.hpp).
#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "simulator/model/lab_overrides.hpp"
#include "simulator/model/lab_spec.hpp"

namespace bootstorm::sim::model {

std::vector<std::string> labs_directories() {
  namespace fs = std::filesystem;
  if (const char* env = std::getenv("BOOTSTORM_LABS_DIR"); env && *env) return {env};
  std::vector<std::string> dirs;
  std::error_code ec;
  // An installed bootstorm: <prefix>/bin/bootstorm next to <prefix>/share/bootstorm/labs.
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) dirs.push_back((exe.parent_path().parent_path() / "share" / "bootstorm" / "labs").string());
#ifdef BOOTSTORM_SOURCE_DIR
  // A development build: the source tree it was configured from.
  dirs.push_back(std::string(BOOTSTORM_SOURCE_DIR) + "/simulator/labs");
#endif
  return dirs;
}

Expected<LabProfileText> read_lab_profile(const std::string& name_or_path) {
  namespace fs = std::filesystem;
  const bool looks_like_path =
      name_or_path.find('/') != std::string::npos ||
      (name_or_path.size() > 5 && (name_or_path.ends_with(".yaml") || name_or_path.ends_with(".yml")));
  std::vector<std::string> candidates;
  if (looks_like_path) {
    candidates.push_back(name_or_path);
  } else {
    for (const auto& dir : labs_directories()) candidates.push_back(dir + "/" + name_or_path + ".yaml");
  }
  for (const auto& path : candidates) {
    std::ifstream in(path);
    if (!in) continue;
    std::stringstream buffer;
    buffer << in.rdbuf();
    return LabProfileText{buffer.str(), path};
  }
  if (looks_like_path) {
    return make_error(ErrorKind::not_found, fmt::format("Lab profile {} cannot be read.", name_or_path),
                      "check the path, or name a lab profile without a path");
  }
  std::string looked, known;
  std::set<std::string> names;
  for (const auto& dir : labs_directories()) {
    looked += (looked.empty() ? "" : ", ") + dir;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      if (entry.path().extension() == ".yaml") names.insert(entry.path().stem().string());
    }
  }
  for (const auto& n : names) known += (known.empty() ? "" : ", ") + n;
  return make_error(ErrorKind::not_found,
                    fmt::format("Lab profile '{}' not found (looked in {}).", name_or_path,
                                looked.empty() ? "no directory" : looked),
                    known.empty()
                        ? "set BOOTSTORM_LABS_DIR to a directory of lab profiles (simulator/labs in "
                          "the source tree, share/bootstorm/labs where bootstorm is installed)"
                        : fmt::format("known labs: {}", known));
}

Expected<LabSpec> load_lab_spec(const std::string& name_or_path) {
  auto profile = read_lab_profile(name_or_path);
  if (!profile) return profile.error();
  return parse_lab_spec(profile->text, profile->path);
}

}  // namespace bootstorm::sim::model

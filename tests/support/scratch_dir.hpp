#pragma once
// The suite's one temporary directory: a fresh, private directory under $TMPDIR (mkdtemp, mode 0700), named
// after what it is for, removed with everything in it when the object goes. Every test that needs files of
// its own takes one of these (as a fixture member, or a local), so that parallel ctest runs never share a
// path and nothing is left behind.
#include <stdlib.h>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <system_error>

namespace bootstorm::test_support {

class ScratchDir {
 public:
  // `purpose` names the directory (bootstorm-<purpose>-XXXXXX), to tell leftovers apart.
  explicit ScratchDir(const std::string& purpose = "test") {
    std::string tmpl =
        (std::filesystem::temp_directory_path() / ("bootstorm-" + purpose + "-XXXXXX")).string();
    if (::mkdtemp(tmpl.data()) == nullptr)
      throw std::runtime_error("cannot create a temporary directory from " + tmpl);
    path_ = tmpl;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  // A path inside the directory.
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }
  std::string string() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

}  // namespace bootstorm::test_support

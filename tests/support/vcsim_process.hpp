#pragma once
// govmomi's vCenter simulator (tests/support/vcsim, BOOTSTORM_VCSIM) as a child process of a test: started on
// 127.0.0.1:0 with the given inventory flags, ready once it printed its one line of JSON (URL, credentials,
// CA file, inventory names and ids). Stopped when destroyed.
#include <chrono>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/child_process.hpp"

namespace bootstorm::test_support {

class VcsimProcess {
 public:
  // `inventory`: vcsim's flags for the inventory, e.g. {"-cluster", "1", "-hosts", "2", "-vms", "2"}. Its
  // files (CA, output) go to `dir`.
  VcsimProcess(const std::string& binary, const std::filesystem::path& dir,
               std::vector<std::string> inventory, const std::string& password = "vcsim-pass")
      : dir_(dir) {
    std::vector<std::string> argv{binary, "-listen", "127.0.0.1:0"};
    argv.insert(argv.end(), inventory.begin(), inventory.end());
    for (const char* a : {"-stdin=false", "-dir"}) argv.push_back(a);
    argv.push_back(dir.string());
    argv.push_back("-password");
    argv.push_back(password);
    child_ = std::make_unique<Child>(argv, dir / "vcsim.out", dir / "vcsim.err");
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    std::string line;
    while (std::chrono::steady_clock::now() < until) {
      line = read_file(dir / "vcsim.out");
      if (line.find('\n') != std::string::npos) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (line.find('\n') != std::string::npos) info_ = nlohmann::json::parse(line, nullptr, false);
  }

  // Whether it started and said where it listens; else why not (its stderr).
  bool ready() const { return info_.is_object(); }
  std::string why_not() const { return "vcsim did not start: " + read_file(dir_ / "vcsim.err"); }
  const nlohmann::json& info() const { return info_; }
  // https://127.0.0.1:PORT (the URL without /sdk).
  std::string endpoint() const {
    const std::string url = info_.at("url");
    return url.substr(0, url.find("/sdk"));
  }

 private:
  std::filesystem::path dir_;
  std::unique_ptr<Child> child_;
  nlohmann::json info_;
};

}  // namespace bootstorm::test_support

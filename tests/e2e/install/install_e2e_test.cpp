// `cmake --install` into a scratch prefix: the files land where the Debian package puts them, and the
// installed binary finds its lab profiles next to itself, with no environment variable and no source tree
// involved (a lab that exists only in the prefix is served). The package itself is checked by
// deploy/package/check in CI (it installs with apt, as root).
#include <gtest/gtest.h>

#include <filesystem>
#include <optional>
#include <string>
#include <thread>

#include "tests/support/lab_process.hpp"
#include "tests/support/scratch_dir.hpp"
#include "tests/support/tools.hpp"

namespace {

namespace fs = std::filesystem;
using namespace bootstorm::test_support;

class Installed : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    scratch_.emplace("install");
    prefix_ = scratch_->path();
    const auto cmake = find_tool("cmake");  // the build's own tool: always there
    ASSERT_TRUE(cmake) << "no cmake on PATH";
    install_ = run_process({cmake->string(), "--install", BOOTSTORM_BINARY_DIR, "--prefix", prefix_.string()},
                           prefix_ / "install", std::chrono::seconds(120));
  }
  static void TearDownTestSuite() { scratch_.reset(); }
  void SetUp() override { ASSERT_EQ(install_.exit_code, 0) << install_.out << install_.err; }

  // The installed binary, with an environment that names no lab directory.
  CliRun installed(std::vector<std::string> args, const std::string& capture) {
    args.insert(args.begin(), (prefix_ / "bin" / "bootstorm").string());
    return run_process(args, prefix_ / capture, std::chrono::seconds(60), {"BOOTSTORM_LABS_DIR="}, prefix_);
  }

  static inline std::optional<ScratchDir> scratch_;  // the prefix, for the whole suite
  static inline fs::path prefix_;
  static inline CliRun install_;
};

TEST_F(Installed, FilesLandWhereThePackagePutsThem) {
  for (const char* f :
       {"bin/bootstorm", "share/bootstorm/labs/tolly-2024.yaml", "share/bootstorm/labs/small.yaml",
        "share/bootstorm/plans/consolidation-4x16g-vs-1x64g.yaml",
        "share/bootstorm/deploy/guest/linux/bootstorm-beacon.sh",
        "share/bootstorm/deploy/kubernetes/rbac.yaml", "share/doc/bootstorm/README.md",
        "share/doc/bootstorm/LICENSE", "share/doc/bootstorm/copyright",
        "share/doc/bootstorm/changelog.Debian.gz", "share/bash-completion/completions/bootstorm"}) {
    EXPECT_TRUE(fs::is_regular_file(prefix_ / f)) << f;
  }
  const auto perms =
      fs::status(prefix_ / "share/bootstorm/deploy/guest/linux/bootstorm-beacon.sh").permissions();
  EXPECT_NE(perms & fs::perms::owner_exec, fs::perms::none) << "the guest agent script stays executable";
  EXPECT_NE(read_file(prefix_ / "share/bash-completion/completions/bootstorm")
                .find("complete -o filenames -F _bootstorm bootstorm"),
            std::string::npos);
}

TEST_F(Installed, VersionAndPlansWorkFromThePrefix) {
  auto version = installed({"version"}, "version");
  ASSERT_EQ(version.exit_code, 0) << version.err;
  EXPECT_EQ(version.out, "bootstorm " + std::string(BOOTSTORM_EXPECTED_VERSION) + "\n");
  auto validate =
      installed({"validate", (prefix_ / "share/bootstorm/plans/consolidation-4x16g-vs-1x64g.yaml").string(),
                 (prefix_ / "share/bootstorm/plans/kubevirt-density.yaml").string()},
                "validate");
  EXPECT_EQ(validate.exit_code, 0) << validate.out << validate.err;
}

TEST_F(Installed, LabsAreFoundNextToTheInstalledBinary) {
  // A profile that exists only in the prefix: found there, or the binary looked elsewhere.
  fs::copy_file(prefix_ / "share/bootstorm/labs/small.yaml",
                prefix_ / "share/bootstorm/labs/prefix-only.yaml");
  const fs::path state = prefix_ / "lab-state";
  Child lab({(prefix_ / "bin" / "bootstorm").string(), "lab", "serve", "--lab", "prefix-only", "--state-dir",
             state.string(), "--vcenter-port", "0", "--kube-port", "0"},
            prefix_ / "lab.out", prefix_ / "lab.err", {"BOOTSTORM_LABS_DIR="});
  bool ready = false;
  for (int i = 0; i < 300 && !ready; ++i) {
    ready = fs::exists(state / "endpoints.json");
    if (!ready) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(ready) << read_file(prefix_ / "lab.err");
  // An unknown name says where it looked: the prefix first.
  auto unknown =
      installed({"lab", "serve", "--lab", "no-such-lab", "--state-dir", (prefix_ / "x").string()}, "unknown");
  EXPECT_NE(unknown.exit_code, 0);
  EXPECT_NE((unknown.out + unknown.err).find("looked in " + (prefix_ / "share/bootstorm/labs").string()),
            std::string::npos)
      << unknown.out << unknown.err;
}

}  // namespace

// Every plan in tests/data/plans/invalid/ must be rejected with exactly the diagnostics of its sidecar
// <name>.expected file (one "file:line:col: message" per line, file relative to the invalid/ directory).
#include <gtest/gtest.h>

#include "orchestrator/plan/plan.hpp"
#include "tests/unit/orchestrator/plan/plan_test_util.hpp"

namespace bootstorm::plan {
namespace {

using testing::invalid_plans_dir;
using testing::plan_files;
using testing::read_lines;

class InvalidPlan : public ::testing::TestWithParam<std::filesystem::path> {};

TEST_P(InvalidPlan, ReportsExactlyTheExpectedDiagnostics) {
  const auto& path = GetParam();
  auto expected_path = path;
  expected_path.replace_extension(".expected");
  ASSERT_TRUE(std::filesystem::exists(expected_path)) << "missing " << expected_path;
  std::vector<std::string> expected = read_lines(expected_path);
  ASSERT_FALSE(expected.empty()) << expected_path << " lists no diagnostic";

  LoadResult result = load_plan_file(path.string());
  EXPECT_FALSE(result.plan.has_value());
  std::string prefix = invalid_plans_dir().string() + "/";
  std::vector<std::string> actual;
  for (const auto& d : result.diagnostics) {
    EXPECT_EQ(d.file, path.string());
    EXPECT_GT(d.line, 0) << d.to_string();
    EXPECT_GT(d.column, 0) << d.to_string();
    std::string text = d.to_string();
    ASSERT_EQ(text.rfind(prefix, 0), 0u) << text;
    actual.push_back(text.substr(prefix.size()));
  }
  EXPECT_EQ(actual, expected);
}

std::string test_name(const ::testing::TestParamInfo<std::filesystem::path>& info) {
  std::string name = info.param.filename().string();
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(AllInvalidPlans, InvalidPlan,
                         ::testing::ValuesIn(plan_files(invalid_plans_dir(), 0)), test_name);

TEST(InvalidPlans, CorpusCoversAtLeastEighteenProblems) {
  EXPECT_GE(plan_files(invalid_plans_dir(), 18).size(), 18u);
}

TEST(InvalidPlans, SeveralProblemsAreAllReportedInFileOrder) {
  LoadResult result = load_plan_file((invalid_plans_dir() / "several-problems.yaml").string());
  ASSERT_GE(result.diagnostics.size(), 5u);
  for (std::size_t i = 1; i < result.diagnostics.size(); ++i) {
    const auto& a = result.diagnostics[i - 1];
    const auto& b = result.diagnostics[i];
    EXPECT_TRUE(a.line < b.line || (a.line == b.line && a.column <= b.column))
        << a.to_string() << " before " << b.to_string();
  }
}

TEST(InvalidPlans, UnreadableFileIsADiagnosticWithoutPosition) {
  LoadResult result = load_plan_file("/nonexistent/dir/plan.yaml");
  ASSERT_EQ(result.diagnostics.size(), 1u);
  EXPECT_EQ(result.diagnostics[0].line, 0);
  EXPECT_EQ(result.diagnostics[0].to_string(),
            "/nonexistent/dir/plan.yaml: cannot read the plan file: No such file or directory");
}

TEST(InvalidPlans, TopLevelMustBeAMapping) {
  LoadResult result = load_plan_text("# comment\n- a\n- b\n", "list.yaml");
  ASSERT_EQ(result.diagnostics.size(), 1u);
  EXPECT_EQ(result.diagnostics[0].to_string(), "list.yaml:2:1: a plan must be a mapping, got a list");
}

TEST(InvalidPlans, MoreThanOneDocumentIsRefused) {
  std::string one = testing::read_text(testing::valid_plans_dir() / "minimal-vsphere.yaml");
  LoadResult result = load_plan_text(one + "---\n" + one, "two.yaml");
  ASSERT_EQ(result.diagnostics.size(), 1u);
  EXPECT_NE(result.diagnostics[0].message.find("exactly one YAML document, found 2"), std::string::npos);
}

}  // namespace
}  // namespace bootstorm::plan

#pragma once
// Golden-file comparison: tests/data/reports/<name>.golden. BOOTSTORM_UPDATE_GOLDEN=1 rewrites the files.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace bootstorm::reports::testing {

inline std::string golden_path(const std::string& name) {
  return std::string(BOOTSTORM_TEST_DATA) + "/reports/" + name + ".golden";
}

inline void expect_golden(const std::string& name, const std::string& actual) {
  const std::string path = golden_path(name);
  const char* update = std::getenv("BOOTSTORM_UPDATE_GOLDEN");
  if (update && std::string(update) == "1") {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << actual;
    return;
  }
  std::ifstream f(path, std::ios::binary);
  ASSERT_TRUE(f) << "missing golden file " << path
                 << " (run the test with BOOTSTORM_UPDATE_GOLDEN=1 to create it)";
  std::ostringstream ss;
  ss << f.rdbuf();
  const std::string expected = ss.str();
  if (actual == expected) return;
  // Point at the first differing line instead of dumping both documents.
  std::istringstream a(actual), e(expected);
  std::string la, le;
  int line = 0;
  while (true) {
    ++line;
    const bool ga = static_cast<bool>(std::getline(a, la));
    const bool ge = static_cast<bool>(std::getline(e, le));
    if (!ga && !ge) break;
    if (la != le || ga != ge) {
      ADD_FAILURE()
          << name << " differs from " << path << " at line " << line
          << "\n  expected: " << (ge ? le : "<eof>") << "\n  actual:   " << (ga ? la : "<eof>")
          << "\n(if the change is intended, rerun with BOOTSTORM_UPDATE_GOLDEN=1 and review the diff)";
      return;
    }
  }
  ADD_FAILURE() << name << " differs from " << path << " (line endings or trailing bytes)";
}

}  // namespace bootstorm::reports::testing

#pragma once
// `bootstorm check`'s table as the tests read it: one line per check, the status in the first 8 columns
// ("PASS    ", "FAIL    ", "UNKNOWN "), then the check's name.
#include <sstream>
#include <string>

namespace bootstorm::test_support {

// The line of the check `name` in `bootstorm check`'s output ("" when absent).
inline std::string check_line(const std::string& out, const std::string& name) {
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);)
    if (line.size() > 8 && line.substr(8).rfind(name, 0) == 0) return line;
  return {};
}

}  // namespace bootstorm::test_support

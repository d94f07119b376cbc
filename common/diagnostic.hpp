#pragma once
// Where a value was written in a file, and one problem found there: what every strict loader (plans,
// migration plans, platform kinds' plan sections) reports, as file:line:col: message.
#include <string>

namespace bootstorm::yaml {

// Where a value was written in its file (1-based; 0 when it was not read from a file), so that a check made
// after loading still points at the line to edit. Not part of a model's meaning: values that differ only in
// where they were written compare equal.
struct SourcePos {
  int line = 0;
  int column = 0;

  bool operator==(const SourcePos&) const { return true; }
};

// One problem found in a file: file:line:col: message (line/col are 1-based; 0 when unknown).
struct Diagnostic {
  std::string file;
  int line = 0;
  int column = 0;
  std::string message;
  std::string to_string() const;  // "plans/x.yaml:12:5: message"
};

}  // namespace bootstorm::yaml

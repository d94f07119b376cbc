#pragma once
// Kubernetes label and field selectors, as the API server parses them from `labelSelector=` and
// `fieldSelector=` query parameters.
//
// Label selector grammar (k8s.io/apimachinery/pkg/labels): comma-separated requirements
//   key | !key | key=value | key==value | key!=value | key in (a,b) | key notin (a,b) | key>N | key<N
// Field selector grammar (k8s.io/apimachinery/pkg/fields): comma-separated `path=value`, `path==value`,
// `path!=value`, where the path is a dotted JSON path (metadata.name, involvedObject.uid, ...).
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.hpp"

namespace bootstorm::sim::kube {

class LabelSelector {
 public:
  enum class Op { exists, not_exists, equals, not_equals, in, not_in, greater, less };
  struct Requirement {
    std::string key;
    Op op = Op::exists;
    std::vector<std::string> values;
  };

  // An empty selector matches everything. Errors are invalid_input with the API server's wording.
  static Expected<LabelSelector> parse(std::string_view text);

  bool empty() const { return requirements_.empty(); }
  // `labels` is the object's metadata.labels (object or null).
  bool matches(const nlohmann::json& labels) const;
  const std::vector<Requirement>& requirements() const { return requirements_; }

 private:
  std::vector<Requirement> requirements_;
};

class FieldSelector {
 public:
  struct Requirement {
    std::string path;  // "metadata.name"
    bool negate = false;
    std::string value;
  };

  // `supported` lists the field paths the resource accepts; others fail like the API server
  // ("field label not supported: x").
  static Expected<FieldSelector> parse(std::string_view text, const std::vector<std::string>& supported);

  bool empty() const { return requirements_.empty(); }
  // Missing fields compare as the empty string (as the API server's field sets do).
  bool matches(const nlohmann::json& object) const;
  const std::vector<Requirement>& requirements() const { return requirements_; }

 private:
  std::vector<Requirement> requirements_;
};

}  // namespace bootstorm::sim::kube

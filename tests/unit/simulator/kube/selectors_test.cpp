#include "simulator/kube/selectors.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace bootstorm::sim::kube {
namespace {

using json = nlohmann::json;

bool label_match(const std::string& selector, const json& labels) {
  auto parsed = LabelSelector::parse(selector);
  EXPECT_TRUE(parsed.has_value()) << selector;
  return parsed && parsed->matches(labels);
}

TEST(LabelSelector, EmptyMatchesEverything) {
  EXPECT_TRUE(label_match("", json()));
  EXPECT_TRUE(label_match("  ", json{{"a", "b"}}));
}

TEST(LabelSelector, EqualityAndInequality) {
  json labels = {{"app", "desk"}, {"run", "r1"}};
  EXPECT_TRUE(label_match("app=desk", labels));
  EXPECT_TRUE(label_match("app==desk", labels));
  EXPECT_FALSE(label_match("app=web", labels));
  EXPECT_TRUE(label_match("app!=web", labels));
  EXPECT_FALSE(label_match("app!=desk", labels));
  EXPECT_TRUE(label_match("missing!=x", labels));  // != matches objects without the label
  EXPECT_TRUE(label_match("app=desk,run=r1", labels));
  EXPECT_FALSE(label_match("app=desk,run=r2", labels));
}

TEST(LabelSelector, SetBasedAndExistence) {
  json labels = {{"tier", "gold"}, {"bootstorm.io/run", "abc"}};
  EXPECT_TRUE(label_match("tier in (gold, silver)", labels));
  EXPECT_FALSE(label_match("tier in (silver,bronze)", labels));
  EXPECT_TRUE(label_match("tier notin (silver)", labels));
  EXPECT_FALSE(label_match("tier notin (gold)", labels));
  EXPECT_TRUE(label_match("absent notin (gold)", labels));
  EXPECT_TRUE(label_match("bootstorm.io/run", labels));
  EXPECT_FALSE(label_match("!bootstorm.io/run", labels));
  EXPECT_TRUE(label_match("!absent,tier in (gold)", labels));
  EXPECT_FALSE(label_match("absent", labels));
}

TEST(LabelSelector, NumericComparisons) {
  json labels = {{"gen", "5"}};
  EXPECT_TRUE(label_match("gen>3", labels));
  EXPECT_FALSE(label_match("gen<3", labels));
}

TEST(LabelSelector, RejectsMalformed) {
  EXPECT_FALSE(LabelSelector::parse("a in b").has_value());
  EXPECT_FALSE(LabelSelector::parse("a in ()").has_value());
  EXPECT_FALSE(LabelSelector::parse("=x").has_value());
  EXPECT_FALSE(LabelSelector::parse("a=b c").has_value());
  EXPECT_FALSE(LabelSelector::parse("a>b").has_value());
}

TEST(FieldSelector, MatchesDottedPaths) {
  std::vector<std::string> supported = {"metadata.name", "metadata.namespace", "involvedObject.kind"};
  json object = {{"metadata", {{"name", "vm1"}, {"namespace", "ns"}}},
                 {"involvedObject", {{"kind", "VirtualMachine"}}}};
  auto eq = FieldSelector::parse("metadata.name=vm1", supported);
  ASSERT_TRUE(eq.has_value());
  EXPECT_TRUE(eq->matches(object));
  auto ne = FieldSelector::parse("metadata.name!=vm1", supported);
  ASSERT_TRUE(ne.has_value());
  EXPECT_FALSE(ne->matches(object));
  auto both = FieldSelector::parse("metadata.namespace==ns,involvedObject.kind=VirtualMachine", supported);
  ASSERT_TRUE(both.has_value());
  EXPECT_TRUE(both->matches(object));
  auto other = FieldSelector::parse("metadata.namespace=other", supported);
  ASSERT_TRUE(other.has_value());
  EXPECT_FALSE(other->matches(object));
}

TEST(FieldSelector, RejectsUnsupportedFields) {
  auto parsed = FieldSelector::parse("status.phase=Running", {"metadata.name"});
  ASSERT_FALSE(parsed.has_value());
  EXPECT_EQ(parsed.error().message, "field label not supported: status.phase");
  EXPECT_FALSE(FieldSelector::parse("metadata.name", {"metadata.name"}).has_value());
}

}  // namespace
}  // namespace bootstorm::sim::kube

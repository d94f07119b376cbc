// The field table (common/yaml_table.hpp): its keys are a mapping's allowed keys in declaration order, each
// field lands in its member with the reader's typed getters, checks report at the value with the field's full
// name, and custom readers run only for keys the mapping has.
#include "common/yaml_table.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

namespace bootstorm::yaml {
namespace {

struct Settings {
  std::string name;
  int count = 1;
  double rate = 0.5;
  bool enabled = false;
  std::chrono::milliseconds timeout{0};
  std::vector<std::string> seen;  // what the custom reader was called for
};

const FieldTable<Settings>& table() {
  static const auto t = FieldTable<Settings>()
                            .field("name", &Settings::name, {non_empty(), one_of({"a", "b"})})
                            .field("count", &Settings::count, {between(1, 10)})
                            .field("rate", &Settings::rate, {positive<double>()})
                            .allow("note")
                            .field("enabled", &Settings::enabled)
                            .field("timeout", &Settings::timeout, {positive<std::chrono::milliseconds>()})
                            .custom("extra", [](FieldReader& r, const MapView& view, Settings& s) {
                              if (auto v = r.get_string(view, "extra")) s.seen.push_back(*v);
                            });
  return t;
}

std::vector<std::string> read(const std::string& text, Settings& out) {
  FieldReader reader("t.yaml");
  const YAML::Node node = YAML::Load(text);
  MapView view = reader.map_view(node, "section", "section.", table().keys());
  table().read(reader, view, out);
  std::vector<std::string> messages;
  for (const auto& d : reader.diagnostics) messages.push_back(d.to_string());
  return messages;
}

TEST(FieldTable, ItsKeysAreTheAllowedKeysInDeclarationOrder) {
  EXPECT_EQ(table().keys(), (Names{"name", "count", "rate", "note", "enabled", "timeout", "extra"}));
  Settings s;
  EXPECT_EQ(read("{name: a, other: 1}", s),
            std::vector<std::string>{
                "t.yaml:1:11: unknown key 'other' in section (allowed: name, count, rate, note, enabled, "
                "timeout, extra)"});
}

TEST(FieldTable, EachFieldLandsInItsMemberTyped) {
  Settings s;
  EXPECT_TRUE(
      read("{name: b, count: 7, rate: 2.5, enabled: true, timeout: 1m30s, extra: x, note: n}", s).empty());
  EXPECT_EQ(s.name, "b");
  EXPECT_EQ(s.count, 7);
  EXPECT_DOUBLE_EQ(s.rate, 2.5);
  EXPECT_TRUE(s.enabled);
  EXPECT_EQ(s.timeout, std::chrono::seconds(90));
  EXPECT_EQ(s.seen, std::vector<std::string>{"x"});
}

TEST(FieldTable, AbsentKeysLeaveTheDefaultsAndCustomReadersAreNotCalled) {
  Settings s;
  EXPECT_TRUE(read("{name: a}", s).empty());
  EXPECT_EQ(s.count, 1);
  EXPECT_DOUBLE_EQ(s.rate, 0.5);
  EXPECT_TRUE(s.seen.empty());
}

TEST(FieldTable, AFailedCheckIsReportedAtTheValueWithTheFullNameAndTheValueIsKept) {
  Settings s;
  EXPECT_EQ(read("{name: c, count: 11, rate: -0.0, timeout: 0s}", s),
            (std::vector<std::string>{
                "t.yaml:1:8: section.name must be one of a, b, got 'c'",
                "t.yaml:1:18: section.count must be between 1 and 10, got 11",
                "t.yaml:1:28: section.rate must be greater than 0, got -0.0",
                "t.yaml:1:43: section.timeout must be greater than 0s",
            }));
  EXPECT_EQ(s.name, "c");  // later rules see what the user wrote
  EXPECT_EQ(s.count, 11);
}

TEST(FieldTable, OnlyTheFirstFailingCheckOfAFieldIsReported) {
  Settings s;
  EXPECT_EQ(read("{name: ''}", s), std::vector<std::string>{"t.yaml:1:8: section.name must not be empty"});
}

TEST(FieldTable, AWrongTypeIsTheGettersMessageAndLeavesTheMember) {
  Settings s;
  EXPECT_EQ(read("{name: a, count: \"7\", enabled: maybe}", s),
            (std::vector<std::string>{"t.yaml:1:18: section.count must be an integer, got the string \"7\"",
                                      "t.yaml:1:32: section.enabled must be true or false, got 'maybe'"}));
  EXPECT_EQ(s.count, 1);
  EXPECT_FALSE(s.enabled);
}

TEST(FieldTable, NothingIsReadFromANodeThatIsNotAMapping) {
  Settings s;
  EXPECT_EQ(read("[1, 2]", s), std::vector<std::string>{"t.yaml:1:1: section must be a mapping, got a list"});
  EXPECT_EQ(s.name, "");
}

TEST(ReadDocument, RefusesWhatCannotBeReadAndReportsASecondDocument) {
  FieldReader bad_utf8("p.yaml");
  EXPECT_FALSE(bad_utf8.read_document("name: a\nx: \xff\n", "plan", "empty"));
  ASSERT_EQ(bad_utf8.diagnostics.size(), 1u);
  EXPECT_EQ(bad_utf8.diagnostics[0].to_string(),
            "p.yaml:2:4: the plan is not valid UTF-8 (byte 0xFF): save the file as UTF-8");

  FieldReader empty("p.yaml");
  EXPECT_FALSE(empty.read_document("# nothing\n", "plan", "the plan is empty"));
  ASSERT_EQ(empty.diagnostics.size(), 1u);
  EXPECT_EQ(empty.diagnostics[0].message, "the plan is empty");

  FieldReader two("p.yaml");
  auto first = two.read_document("a: 1\n---\nb: 2\n", "plan", "empty");
  ASSERT_TRUE(first);
  EXPECT_EQ((*first)["a"].as<int>(), 1);
  ASSERT_EQ(two.diagnostics.size(), 1u);
  EXPECT_EQ(two.diagnostics[0].message, "a plan file holds exactly one YAML document, found 2");
}

}  // namespace
}  // namespace bootstorm::yaml

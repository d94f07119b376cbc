// The contract-test validator itself: it must accept conforming values and catch each kind of violation.
#include "tests/support/swagger/swagger_validator.hpp"

#include <gtest/gtest.h>

namespace bootstorm::testing {
namespace {

using nlohmann::json;

SwaggerSpec tiny_spec() {
  return SwaggerSpec(json::parse(R"({
    "swagger": "2.0",
    "paths": {"/things/{id}": {"get": {"responses": {"200": {"schema": {"$ref": "#/definitions/Thing"}},
                                                      "204": {"description": "none"}}}}},
    "definitions": {
      "State": {"type": "string", "enum": ["ON", "OFF"]},
      "Thing": {"type": "object", "required": ["id", "state"],
                "properties": {"id": {"type": "string"}, "state": {"$ref": "#/definitions/State"},
                               "count": {"type": "integer"}, "tags": {"type": "array", "items": {"type": "string"}},
                               "disks": {"type": "object", "additionalProperties": {"$ref": "#/definitions/Disk"}}}},
      "Disk": {"type": "object", "required": ["label"], "properties": {"label": {"type": "string"}}}
    }})"));
}

TEST(SwaggerValidator, AcceptsConformingValues) {
  const auto spec = tiny_spec();
  const json ok = json::parse(
      R"({"id": "t-1", "state": "ON", "count": 3, "tags": ["a"], "disks": {"2000": {"label": "d"}}})");
  EXPECT_TRUE(spec.validate(ok, "Thing").empty()) << join(spec.validate(ok, "Thing"));
  const auto schema = spec.response_schema("/things/{id}", "get", 200);
  ASSERT_TRUE(schema.has_value());
  EXPECT_TRUE(spec.validate_schema(ok, *schema).empty());
  ASSERT_TRUE(spec.response_schema("/things/{id}", "get", 204).has_value());
  EXPECT_TRUE(spec.response_schema("/things/{id}", "get", 204)->is_null());
  EXPECT_FALSE(spec.response_schema("/things/{id}", "get", 404).has_value());
}

TEST(SwaggerValidator, CatchesEachKindOfViolation) {
  const auto spec = tiny_spec();
  EXPECT_EQ(spec.validate(json::parse(R"({"id": "x"})"), "Thing").size(), 1u);               // required
  EXPECT_EQ(spec.validate(json::parse(R"({"id": 1, "state": "ON"})"), "Thing").size(), 1u);  // type
  EXPECT_EQ(spec.validate(json::parse(R"({"id": "x", "state": "MAYBE"})"), "Thing").size(),
            1u);  // enum via $ref
  EXPECT_EQ(spec.validate(json::parse(R"({"id": "x", "state": "ON", "tags": [1]})"), "Thing").size(),
            1u);  // items
  EXPECT_EQ(spec.validate(json::parse(R"({"id": "x", "state": "ON", "disks": {"a": {}}})"), "Thing").size(),
            1u);
  EXPECT_EQ(spec.validate(json::parse(R"({"id": "x", "state": "ON", "extra": 1})"), "Thing").size(), 1u);
  EXPECT_TRUE(spec.validate(json::parse(R"({"id": "x", "state": "ON", "extra": 1})"), "Thing",
                            SwaggerValidationOptions{false})
                  .empty());
  EXPECT_EQ(spec.validate(json::parse(R"({"id": "x", "state": "ON", "count": 1.5})"), "Thing").size(), 1u);
  EXPECT_FALSE(spec.validate(json::object(), "Nope").empty());
}

TEST(SwaggerValidator, LoadsTheVcenterSpec) {
  auto spec = SwaggerSpec::load(BOOTSTORM_API_SPECS "/vsphere/vcenter-7.0.3.json");
  ASSERT_TRUE(spec.has_value()) << spec.error().what();
  EXPECT_TRUE(spec->has_definition("VcenterVMSummary"));
  const json summary{{"vm", "vm-1"},
                     {"name", "a"},
                     {"power_state", "POWERED_ON"},
                     {"cpu_count", 2},
                     {"memory_size_MiB", 4096}};
  EXPECT_TRUE(spec->validate(summary, "VcenterVMSummary").empty());
  EXPECT_FALSE(
      spec->validate(json{{"vm", "vm-1"}, {"name", "a"}, {"power_state", "ON"}}, "VcenterVMSummary").empty());
}

}  // namespace
}  // namespace bootstorm::testing

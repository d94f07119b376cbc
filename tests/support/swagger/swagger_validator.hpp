#pragma once
// A small JSON-Schema-ish validator for Swagger 2.0 (OpenAPI 2) definitions, for contract tests: checks that
// a JSON value conforms to a definition of an official spec (type, properties, required, enum, items,
// additionalProperties, allOf, $ref to "#/definitions/..."). Reusable by any test:
//
//   auto spec = bootstorm::testing::SwaggerSpec::load(BOOTSTORM_API_SPECS "/vsphere/vcenter-7.0.3.json");
//   auto problems = spec->validate(json_body, "VcenterVMInfo");          // by definition name
//   auto schema = spec->response_schema("/api/vcenter/vm/{vm}", "get", 200);
//   problems = spec->validate_schema(json_body, *schema);                 // by a path's response schema
//   EXPECT_TRUE(problems.empty()) << bootstorm::testing::join(problems);
//
// Link bootstorm::test_swagger (defined in tests/support/swagger/CMakeLists.txt).
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/expected.hpp"

namespace bootstorm::testing {

struct SwaggerValidationOptions {
  // Report object members that the schema does not declare (when it has `properties` and no
  // `additionalProperties`). Swagger allows them, but a simulator that emits undeclared fields is usually
  // wrong.
  bool reject_undeclared_properties = true;
};

class SwaggerSpec {
 public:
  static Expected<SwaggerSpec> load(const std::string& path);
  explicit SwaggerSpec(nlohmann::json document) : doc_(std::move(document)) {}

  // Problems found ("$.messages[0].id: expected string, got number"); empty when the value conforms.
  std::vector<std::string> validate(const nlohmann::json& value, const std::string& definition,
                                    const SwaggerValidationOptions& options = {}) const;
  std::vector<std::string> validate_schema(const nlohmann::json& value, const nlohmann::json& schema,
                                           const SwaggerValidationOptions& options = {}) const;

  // The schema of a documented response (`path` exactly as in the spec, e.g. "/api/vcenter/vm/{vm}" or
  // "/api/vcenter/vm?action=clone"; `method` lower case). nullopt when the path, method or status is not
  // documented; a JSON null when the response is documented without a body (204).
  std::optional<nlohmann::json> response_schema(const std::string& path, const std::string& method,
                                                int status) const;
  bool has_definition(const std::string& name) const;
  const nlohmann::json& document() const { return doc_; }

 private:
  void check(const nlohmann::json& value, const nlohmann::json& schema, const std::string& where,
             const SwaggerValidationOptions& options, std::vector<std::string>& problems, int depth) const;
  nlohmann::json doc_;
};

std::string join(const std::vector<std::string>& problems);

}  // namespace bootstorm::testing

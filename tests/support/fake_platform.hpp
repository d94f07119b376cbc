#pragma once
// "fakecloud": a third platform kind that exists only in tests, described the way vsphere and kubevirt
// describe themselves (providers/<kind>/descriptor.cpp and settings.hpp). Its golden section has keys no
// built-in kind has (image, flavor) and its own typed settings. Registering it must be all it takes for its
// plans to load with its own rules and for validate, check, run, report and cleanup to work through it
// (tests/unit/orchestrator/plan/third_platform_test, tests/unit/orchestrator/engine/third_platform_test); no
// file under orchestrator/ or providers/api/ names it.
#include "common/yaml_fields.hpp"
#include "providers/api/platform_descriptor.hpp"

namespace bootstorm::test_support {

struct FakeCloudSettings final : api::KindSettings {
  std::string image;             // golden.image
  std::string flavor = "small";  // golden.flavor: small | large
  std::string clone = "thin";    // golden.clone: thin | thick
  std::string namespace_;        // the plan's namespace

  nlohmann::ordered_json plan_keys() const override {
    nlohmann::ordered_json keys;
    keys["golden"] = {{"image", image}, {"flavor", flavor}, {"clone", clone}};
    keys["namespace"] = namespace_;
    return keys;
  }
  std::string golden_image() const override { return image; }
  std::string clone_kind() const override { return clone; }
};

inline api::PlatformSettings read_fake_cloud_settings(const api::KindPlanSection& section) {
  FakeCloudSettings s;
  s.clone = section.clone;
  s.namespace_ = section.namespace_.empty() ? "fakecloud" : section.namespace_;
  if (section.golden && section.reader) {
    yaml::FieldReader& r = *section.reader;
    if (auto v = r.get_non_empty(*section.golden, "image")) s.image = *v;
    if (auto v = r.get_string(*section.golden, "flavor")) {
      r.check_enum(section.golden->value("flavor"), "golden.flavor", *v, {"small", "large"});
      s.flavor = *v;
    }
  }
  return api::make_settings(std::move(s));
}

inline api::PlatformDescriptor fake_platform_descriptor() {
  api::PlatformDescriptor d;
  d.kind = "fakecloud";
  d.api_name = "FakeCloud";
  d.credential_keys = {"usernameEnv", "passwordEnv"};
  d.credential_form = api::CredentialForm::username_password;
  d.https_endpoint_needs_credentials = "usernameEnv and passwordEnv";
  d.endpoint_words = {"metadata-service"};
  d.lab_front = api::LabFront::vcenter;
  d.starts_per_connection_refusal = "";
  d.golden_keys = {"image", "flavor", "clone"};
  d.required_golden = {{"image"}, " (the image to clone)"};
  d.clone_kinds = {"thin", "thick"};
  d.default_clone = "thin";
  d.has_namespace = true;
  d.observed_milestones = {"running"};
  d.read_settings = read_fake_cloud_settings;
  return d;
}

}  // namespace bootstorm::test_support

#pragma once
// "fakecloud": a third platform kind that exists only in tests, described the way vsphere and kubevirt
// describe themselves (providers/<kind>/descriptor.cpp). Registering it must be all it takes for plans of
// the kind to load with its own rules and for the engine to run them
// (tests/unit/orchestrator/plan/third_platform_test, tests/unit/orchestrator/engine/third_platform_test); no
// loader or engine file names it.
#include "providers/api/platform_descriptor.hpp"

namespace bootstorm::test_support {

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
  d.golden_keys = {"vm", "pvc", "clone"};
  d.required_golden = {{"vm", "pvc"}, ""};
  d.clone_kinds = {"thin", "thick"};
  d.default_clone = "thin";
  d.has_namespace = true;
  d.observed_milestones = {"running"};
  return d;
}

}  // namespace bootstorm::test_support

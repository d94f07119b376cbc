// A kind's settings as the plan and ProviderConfig carry them (providers/api/kind_settings.hpp): copies
// compare by the plan keys the kind writes, the kind's own type is what its provider reads, and settings of
// another kind are a wiring bug, not a silent default.
#include "providers/api/kind_settings.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace bootstorm::api {
namespace {

struct ImageSettings final : KindSettings {
  std::string image;
  std::string clone = "thin";
  nlohmann::ordered_json plan_keys() const override {
    return {{"golden", {{"image", image}, {"clone", clone}}}};
  }
  std::string golden_image() const override { return image; }
  std::string clone_kind() const override { return clone; }
};

struct OtherSettings final : KindSettings {
  nlohmann::ordered_json plan_keys() const override { return {{"golden", {{"vm", "g"}}}}; }
  std::string golden_image() const override { return "g"; }
  std::string clone_kind() const override { return "linked"; }
};

PlatformSettings image(const std::string& name, const std::string& clone = "thin") {
  ImageSettings s;
  s.image = name;
  s.clone = clone;
  return make_settings(s);
}

TEST(PlatformSettings, EqualWhenTheirPlanKeysAre) {
  EXPECT_EQ(image("desk"), image("desk"));
  EXPECT_NE(image("desk"), image("desk", "thick"));
  EXPECT_NE(image("desk"), PlatformSettings());
  EXPECT_EQ(PlatformSettings(), PlatformSettings());
}

TEST(PlatformSettings, AnswersWhatEveryKindAnswersAndNothingWhenEmpty) {
  EXPECT_EQ(image("desk", "thick").golden_image(), "desk");
  EXPECT_EQ(image("desk", "thick").clone_kind(), "thick");
  EXPECT_EQ(PlatformSettings().golden_image(), "");
  EXPECT_EQ(PlatformSettings().clone_kind(), "");
  EXPECT_TRUE(PlatformSettings().plan_keys().is_null());
}

TEST(PlatformSettings, TheKindReadsItsOwnTypeItsDefaultsWhenEmptyAndRefusesAnothers) {
  EXPECT_EQ(image("desk").as<ImageSettings>().image, "desk");
  EXPECT_EQ(PlatformSettings().as<ImageSettings>().clone, "thin");
  EXPECT_THROW(image("desk").as<OtherSettings>(), std::logic_error);
}

}  // namespace
}  // namespace bootstorm::api

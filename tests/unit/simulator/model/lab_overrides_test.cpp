// What-if overrides of a lab profile: paths through sections and named list items, globs that tie every match
// to one value, keys a section lacks but the format has, and the errors for everything else.
#include "simulator/model/lab_overrides.hpp"

#include <gtest/gtest.h>

namespace bootstorm::sim::model {
namespace {

std::vector<LabOverride> overrides(std::initializer_list<const char*> texts) {
  std::vector<LabOverride> out;
  for (const char* t : texts) {
    auto parsed = parse_lab_override(t);
    EXPECT_TRUE(parsed.has_value()) << t;
    if (parsed) out.push_back(*parsed);
  }
  return out;
}

const HostSpec& host(const LabSpec& spec, const std::string& name) {
  for (const auto& h : spec.hosts)
    if (h.name == name) return h;
  throw std::runtime_error("no host " + name);
}

TEST(LabOverrides, AGlobSetsEveryMatchingItemAndOthersKeepTheirValues) {
  auto spec = load_lab_spec_with("tolly-2024", overrides({"hosts.r740-*.linkMBps=3200", "seed=7"}));
  ASSERT_TRUE(spec.has_value()) << spec.error().what();
  for (const char* name : {"r740-01", "r740-02", "r740-03", "r740-04"})
    EXPECT_DOUBLE_EQ(host(*spec, name).link_mbps, 3200);
  EXPECT_DOUBLE_EQ(host(*spec, "r7625-01").link_mbps, 6400);
  EXPECT_EQ(spec->seed, 7u);
}

TEST(LabOverrides, NestedItemsAndKeysTheProfileLeftToTheirDefault) {
  auto base = load_lab_spec("tolly-2024");
  ASSERT_TRUE(base.has_value());
  const std::string profile = base->profiles.front().name;
  const std::string phase = base->profiles.front().phases.front().name;
  const std::string datastore = base->datastores.front().name;
  auto spec = load_lab_spec_with(
      "tolly-2024",
      overrides({("profiles." + profile + ".outstandingIOs=4").c_str(),
                 ("profiles." + profile + ".phases." + phase + ".fixedS=2.5").c_str(),
                 ("datastores." + datastore + ".latencyMs=0.3").c_str(), "vcenter.legacyRest=true"}));
  ASSERT_TRUE(spec.has_value()) << spec.error().what();
  EXPECT_EQ(spec->profiles.front().outstanding_ios, 4);
  EXPECT_DOUBLE_EQ(spec->profiles.front().phases.front().fixed_s, 2.5);
  EXPECT_DOUBLE_EQ(spec->datastores.front().latency_ms, 0.3);
  EXPECT_TRUE(spec->vcenter.legacy_rest) << "a key the profile leaves to its default";
}

TEST(LabOverrides, EveryMistakeNamesTheOverrideAndWhatIsThere) {
  struct Case {
    const char* text;
    const char* says;
  };
  for (const Case& c : std::vector<Case>{
           {"hosts.r740-01.linkMbps=3200", "linkMbps"},
           {"hosts.r999-01.linkMBps=3200", "no item named 'r999-01' (it has: r740-01"},
           {"hostz.r740-01.linkMBps=3200", "the profile has no 'hostz'"},
           {"hosts.r740-01.linkMBps.x=1", "is a value, not a section"},
           {"datastores=1", "is a section, not a value"},
           {"vcenter.*=1", "a glob ('*') can only name list items"},
           {"hosts.r740-01.linkMBps=fast", "linkMBps"},
       }) {
    auto spec = load_lab_spec_with("tolly-2024", overrides({c.text}));
    ASSERT_FALSE(spec.has_value()) << c.text;
    EXPECT_NE(spec.error().what().find(c.says), std::string::npos) << c.text << ": " << spec.error().what();
  }
  for (const char* bad : {"hosts.r740-01.linkMBps", "=3", "hosts..x=1", "hosts.r740-01.linkMBps="}) {
    EXPECT_FALSE(parse_lab_override(bad).has_value()) << bad;
  }
}

TEST(LabOverrides, AValueIsReadWhereTheProfileHasIt) {
  auto profile = read_lab_profile("tolly-2024");
  ASSERT_TRUE(profile.has_value());
  auto value = lab_profile_value(profile->text, "hosts.r7625-*.ioLatencyMs");
  ASSERT_TRUE(value.has_value()) << value.error().what();
  EXPECT_EQ(*value, "0.235");
  auto absent = lab_profile_value(profile->text, "vcenter.legacyRest");
  ASSERT_TRUE(absent.has_value());
  EXPECT_EQ(*absent, "") << "the loader's default applies";
}

}  // namespace
}  // namespace bootstorm::sim::model

#pragma once
// A platform kind's own part of a plan, typed by the kind (providers/<kind>/settings.hpp): the golden image
// and how to clone it, and the options only that kind has (vSphere's platform.api and storm.powerOn,
// KubeVirt's namespace). The kind's descriptor reads it from the plan (PlatformDescriptor::read_settings);
// the plan keeps it (plan::Platform::settings) and the engine hands it on to the kind's provider unopened
// (ProviderConfig::settings). Above providers/<kind>, nothing reads its fields: the loader, the resolved-plan
// emitter, the engine, the CLI and sizing ask the questions below.
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

namespace bootstorm::yaml {
class FieldReader;
struct MapView;
}  // namespace bootstorm::yaml

namespace bootstorm::api {

class KindSettings {
 public:
  virtual ~KindSettings() = default;

  // The kind's keys as the resolved plan writes them (every default filled in), by where they go:
  // {"platform": {...}, "golden": {...}, "namespace": "...", "storm": {...}}; a section without keys of the
  // kind is absent. Two settings are the same when these are.
  virtual nlohmann::ordered_json plan_keys() const = 0;
  // The golden image the clones come from, as messages and the lab name it ("win11-golden").
  virtual std::string golden_image() const = 0;
  // golden.clone, resolved (the journal's cloneKind).
  virtual std::string clone_kind() const = 0;
};

// A kind's settings with value semantics: copies share one immutable KindSettings, and two compare equal when
// their plan keys do. Empty for a plan built without a kind's reader (a test's plan of an unknown kind).
class PlatformSettings {
 public:
  PlatformSettings() = default;
  explicit PlatformSettings(std::shared_ptr<const KindSettings> settings) : settings_(std::move(settings)) {}

  explicit operator bool() const { return settings_ != nullptr; }
  const KindSettings* get() const { return settings_.get(); }

  nlohmann::ordered_json plan_keys() const {
    return settings_ ? settings_->plan_keys() : nlohmann::ordered_json();
  }
  std::string golden_image() const { return settings_ ? settings_->golden_image() : std::string(); }
  std::string clone_kind() const { return settings_ ? settings_->clone_kind() : std::string(); }

  // The kind's own type, for its provider: its defaults when empty. Settings of another kind are a wiring
  // bug (a provider built for a plan of another kind).
  template <class Settings>
  const Settings& as() const {
    static const Settings defaults{};
    if (!settings_) return defaults;
    if (const auto* typed = dynamic_cast<const Settings*>(settings_.get())) return *typed;
    throw std::logic_error("platform settings of another kind handed to a provider");
  }

  bool operator==(const PlatformSettings& other) const { return plan_keys() == other.plan_keys(); }

 private:
  std::shared_ptr<const KindSettings> settings_;
};

template <class Settings>
PlatformSettings make_settings(Settings settings) {
  return PlatformSettings(std::make_shared<const Settings>(std::move(settings)));
}

// What the plan loader hands a kind's reader: the plan's golden mapping, its keys already checked against the
// kind's golden_keys (null when the plan has none, or it is not a mapping), and the values of the keys whose
// choices the kind declares, checked and with the kind's defaults filled in. The reader reports its own
// problems through `reader`, at the line and column of the node.
struct KindPlanSection {
  yaml::FieldReader* reader = nullptr;
  const yaml::MapView* golden = nullptr;
  std::string clone;         // golden.clone: one of the kind's clone_kinds
  std::string platform_api;  // platform.api: one of the kind's platform_apis ("" when it has none)
  std::string power_on;      // storm.powerOn: one of the kind's power_on_modes ("" when it has none)
  std::string namespace_;    // the top-level namespace, a DNS label ("" when absent or the kind has none)
};

}  // namespace bootstorm::api

#pragma once
// What the plan loader asks about platform kinds, answered from the registered descriptors
// (providers/api/platform_descriptor.hpp) instead of from kind names: so that a new platform kind brings its
// own plan rules and the loader stays as it is. When the plan's kind is missing or unknown (already an
// error), the answers are those of every registered kind together, so that only what no kind accepts adds
// a second error.
#include <string>
#include <vector>

#include "providers/api/platform_descriptor.hpp"

namespace bootstorm::plan {

class PlatformRules {
 public:
  using Names = std::vector<std::string>;

  // A snapshot of the registry (api::platform_descriptors()): one plan is checked against one set of kinds.
  explicit PlatformRules(std::vector<api::PlatformDescriptor> kinds);

  // Registered kind names in registration order.
  const Names& kinds() const { return kind_names_; }
  // The descriptor of `kind`; nullptr when it is empty or not registered.
  const api::PlatformDescriptor* find(const std::string& kind) const;

  // Keys of platform.credentials and of golden for `kind` (of every kind when unknown).
  Names credential_keys(const std::string& kind) const;
  Names golden_keys(const std::string& kind) const;
  // ready.signal values for `kind` (of every kind when unknown), in boot order.
  Names ready_signals(const std::string& kind) const;
  // Words platform.endpoint may be besides embedded, lab:<state-dir> and https://, for any kind.
  Names endpoint_words() const;

  // "platform kind kubevirt", "platform kind kubevirt or fakecloud": the kinds for which `accepts` holds,
  // for messages such as "namespace applies only to platform kind kubevirt".
  template <typename Predicate>
  std::string kinds_where(Predicate accepts) const {
    Names names;
    for (const auto& d : descriptors_)
      if (accepts(d)) names.push_back(d.kind);
    return "platform kind " + (names.empty() ? std::string("(none registered)") : or_list(names));
  }

  // "a", "a or b", "a, b or c".
  static std::string or_list(const Names& names);

 private:
  std::vector<api::PlatformDescriptor> descriptors_;
  Names kind_names_;
};

}  // namespace bootstorm::plan

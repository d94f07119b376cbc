#include "orchestrator/plan/platform_rules.hpp"

#include <algorithm>

#include "common/milestone_names.hpp"

namespace bootstorm::plan {
namespace {

using Names = PlatformRules::Names;

// Ready signals every kind offers: the start call's answer, and what the engine observes itself.
const Names kEngineObservedSignals = {"start_acknowledged", "port_open", "beacon"};

bool contains(const Names& names, const std::string& value) {
  return std::find(names.begin(), names.end(), value) != names.end();
}

void append_new(Names& into, const Names& from) {
  for (const auto& name : from)
    if (!contains(into, name)) into.push_back(name);
}

}  // namespace

PlatformRules::PlatformRules(std::vector<api::PlatformDescriptor> kinds) : descriptors_(std::move(kinds)) {
  for (const auto& d : descriptors_) kind_names_.push_back(d.kind);
}

const api::PlatformDescriptor* PlatformRules::find(const std::string& kind) const {
  for (const auto& d : descriptors_)
    if (d.kind == kind) return &d;
  return nullptr;
}

Names PlatformRules::credential_keys(const std::string& kind) const {
  if (const auto* d = find(kind)) return d->credential_keys;
  Names all;
  for (const auto& d : descriptors_) append_new(all, d.credential_keys);
  return all;
}

Names PlatformRules::golden_keys(const std::string& kind) const {
  if (const auto* d = find(kind)) return d->golden_keys;
  Names all;
  for (const auto& d : descriptors_) append_new(all, d.golden_keys);
  return all;
}

Names PlatformRules::ready_signals(const std::string& kind) const {
  Names observed;
  if (const auto* d = find(kind)) {
    observed = d->observed_milestones;
  } else {
    for (const auto& each : descriptors_) append_new(observed, each.observed_milestones);
  }
  Names signals;  // in boot order, whatever order the descriptors list them in
  for (const char* name : kMilestoneNames) {
    if (contains(kEngineObservedSignals, name) || contains(observed, name)) signals.push_back(name);
  }
  return signals;
}

Names PlatformRules::endpoint_words() const {
  Names all;
  for (const auto& d : descriptors_) append_new(all, d.endpoint_words);
  return all;
}

std::string PlatformRules::or_list(const Names& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? " or " : ", ";
    out += names[i];
  }
  return out;
}

}  // namespace bootstorm::plan

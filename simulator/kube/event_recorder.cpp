// Core v1 Events recorded by the controllers, worded and named as the API server stores them.
#include "simulator/kube/detail/event_recorder.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "simulator/kube/api_objects.hpp"

namespace bootstorm::sim::kube {

using json = nlohmann::json;

EventRecorder::EventRecorder(ObjectStore& store, ObjectPublisher& publisher, std::size_t max_events)
    : store_(store), publisher_(publisher), max_events_(max_events) {}

void EventRecorder::record(const json& involved, const std::string& type, const std::string& reason,
                           const std::string& message, const std::string& component,
                           const std::string& host) {
  const json& meta = involved["metadata"];
  std::string ns = meta.value("namespace", "default");
  std::string name =
      fmt::format("{}.{:016x}", meta.value("name", "object"),
                  (static_cast<std::uint64_t>(publisher_.now() * 1e6) << 8) + (++counter_ & 0xFF));
  std::string ts = format_time(publisher_.now());
  json source = {{"component", component}};
  if (!host.empty()) source["host"] = host;
  json event = {{"apiVersion", "v1"},
                {"kind", "Event"},
                {"metadata", {{"name", name}, {"namespace", ns}}},
                {"involvedObject",
                 {{"apiVersion", involved.value("apiVersion", "")},
                  {"kind", involved.value("kind", "")},
                  {"name", meta.value("name", "")},
                  {"namespace", ns},
                  {"uid", meta.value("uid", "")},
                  {"resourceVersion", meta.value("resourceVersion", "")}}},
                {"reason", reason},
                {"message", message},
                {"source", source},
                {"firstTimestamp", ts},
                {"lastTimestamp", ts},
                {"count", 1},
                {"type", type},
                {"eventTime", nullptr},
                {"reportingComponent", component},
                {"reportingInstance", host}};
  publisher_.insert(Kind::events, std::move(event));
  order_.emplace_back(ns, name);
  while (order_.size() > max_events_) {
    publisher_.remove(Kind::events, order_.front().first, order_.front().second);
    order_.pop_front();
  }
}

void EventRecorder::forget(const std::string& ns, const std::string& name) {
  auto it = std::find(order_.begin(), order_.end(), std::make_pair(ns, name));
  if (it != order_.end()) order_.erase(it);
}

}  // namespace bootstorm::sim::kube

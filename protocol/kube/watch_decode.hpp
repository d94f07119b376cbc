#pragma once
// Watch streams and list responses of the Kubernetes API decoded: one WatchEvent per line, one ObjectList per
// list page, with a scanner that keeps only the fields the observers read.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.hpp"

namespace bootstorm::kube {

// One line of a watch stream.
struct WatchEvent {
  enum class Type { added, modified, deleted, bookmark, error };
  Type type = Type::added;
  nlohmann::json object;
  int error_code = 0;  // ERROR events: Status.code (410 = Gone)
  std::string error_message;
  std::string resource_version() const;  // object's metadata.resourceVersion
};
// What decode_watch_line keeps of the event's object. `milestone_fields` keeps only what the observers read
// (VMI milestones, DataVolume phases and CDI's clone type): kind, apiVersion, metadata {name, namespace, uid,
// resourceVersion, annotations} and
// status {phase, nodeName, phaseTransitionTimestamps, conditions, interfaces, progress}. Everything else is
// skipped by a scanner without being parsed, which makes a VMI line several times cheaper to decode
// (bench/kubevirt: watch_decode_bench). ERROR events, and any line the scanner does not follow (escaped keys,
// odd nesting), go through the full parser (which keeps every field), so the fields listed are the same
// whichever path decoded the line.
enum class WatchDecode { full, milestone_fields };
Expected<WatchEvent> decode_watch_line(std::string_view line, WatchDecode mode = WatchDecode::full);
// The watch line with only what `milestone_fields` keeps, as text: a scan and copies, no parsing. A 10,000-VM
// storm's VMI lines waiting for the provider's loop took 147 MB as they came (a VMI line is ~3 KB); compacted
// they take a fraction, and decoding them later is cheaper. decode_watch_line(*compact, milestone_fields)
// equals decode_watch_line(line, milestone_fields). nullopt: the scanner cannot follow the line (escaped
// keys, odd nesting) or it is an ERROR event — keep the line as it is.
std::optional<std::string> compact_watch_line(std::string_view line);

// A list response (VirtualMachineInstanceList, DataVolumeList): its resourceVersion and its items. With
// `milestone_fields` the items keep only the fields decode_watch_line keeps, and a 10,000-object list is not
// held as a full DOM (a full parse of 4,000 DataVolumes, plus a copy of its items, peaked at 26 MB).
struct ObjectList {
  std::string resource_version;
  std::string continue_token;  // metadata.continue: the next page of a paginated list ("" = the last page)
  std::vector<nlohmann::json> items;
};
Expected<ObjectList> decode_list(std::string_view body, WatchDecode mode = WatchDecode::full);

}  // namespace bootstorm::kube

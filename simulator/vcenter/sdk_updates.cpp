// The lab's PropertyCollector as vCenter pushes changes: collectors (the session's own and those made with
// CreatePropertyCollector), their filters, and WaitForUpdatesEx.
//
// A filter remembers what it last reported of each object; an update set holds what differs now: objects
// that entered the filter's set (all their properties), that left it, and the properties that changed. A
// model event marks the object dirty and wakes the waiting calls only of the collectors whose filters hold
// it, and a wait whose filter kept its members looks at the dirty objects alone: a wait costs the objects
// that changed, not the whole set, and no filter shape delays another's answers. Versions count answered
// update sets per collector. A call from the version before the last answer (the answer was lost) gets that
// answer again; an empty version starts over with the full state. A set with more objects than
// maxObjectUpdates is cut there and marked truncated: the rest follows at once. When an update set first
// carries a VM's milestone (powered on, Tools running, an IP address), the truth's "delivered" time is
// stamped as the answer is handed to the server and "written" when its body's write ended, as the Kubernetes
// front does for watches.
#include <fmt/format.h>

#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>

#include "common/xml_text.hpp"
#include "protocol/vim25/decode.hpp"
#include "protocol/vim25/xml_writer.hpp"
#include "simulator/vcenter/detail/sdk_faults.hpp"
#include "simulator/vcenter/detail/vcenter_front_impl.hpp"

namespace bootstorm::sim::vcenter {

namespace asio = boost::asio;
using http::ServerResponse;
namespace vim25 = vsphere::vim25;

namespace {

constexpr std::string_view kSessionCollector = "propertyCollector";

std::string session_prefix(const std::string& session_key) {
  return "session[" + session_key.substr(0, 8) + "]";
}

// The milestone a VM property's new value reveals, if any.
std::optional<model::Milestone> milestone_of(const std::string& path, const std::string& value) {
  if (path == "runtime.powerState" && value.find(">poweredOn<") != std::string::npos)
    return model::Milestone::running;
  if (path == "guest.toolsRunningStatus" && value.find(">guestToolsRunning<") != std::string::npos)
    return model::Milestone::guest_agent;
  if (path == "guest.ipAddress" && !value.empty()) return model::Milestone::ip_assigned;
  return std::nullopt;
}

std::string change(const std::string& path, const std::string& value) {
  return "<changeSet><name>" + escape_xml(path) + "</name><op>assign</op>" + value + "</changeSet>";
}

}  // namespace

// ---- collectors and filters ----

SdkCollector* VcenterFront::Impl::sdk_collector(const std::string& session_key,
                                                const std::string& collector_id) {
  if (collector_id == kSessionCollector) {
    const std::string id = session_prefix(session_key) + std::string(kSessionCollector);
    auto it = sdk_collectors.find(id);
    if (it == sdk_collectors.end()) {
      SdkCollector collector;
      collector.id = id;
      collector.session = session_key;
      it = sdk_collectors.emplace(id, std::move(collector)).first;
    }
    return &it->second;
  }
  auto it = sdk_collectors.find(collector_id);
  if (it == sdk_collectors.end() || it->second.session != session_key) return nullptr;
  return &it->second;
}

ServerResponse VcenterFront::Impl::sdk_create_collector(const std::string& session_key) {
  SdkCollector collector;
  collector.id = session_prefix(session_key) + "collector-" + std::to_string(++sdk_collector_counter);
  collector.session = session_key;
  const std::string id = collector.id;
  sdk_collectors.emplace(id, std::move(collector));
  vim25::XmlWriter w("CreatePropertyCollectorResponse");
  w.moref("returnval", {"PropertyCollector", id});
  return sdk_ok(w.finish());
}

ServerResponse VcenterFront::Impl::sdk_destroy_collector(SdkCollector& collector) {
  if (collector.id.ends_with(kSessionCollector)) {
    return sdk_fault("NotSupported", "The session's own PropertyCollector cannot be destroyed.");
  }
  for (auto& waiter : collector.waiters) waiter->cancel();
  sdk_collectors.erase(collector.id);  // waiting calls find it gone and answer so
  return sdk_ok(vim25::XmlWriter("DestroyPropertyCollectorResponse").finish());
}

ServerResponse VcenterFront::Impl::sdk_create_filter(SdkCollector& collector, const vim25::XmlNode& call) {
  SdkFilter filter;
  filter.spec = vim25::decode_filter_spec(call.child("spec"));
  std::vector<vim25::MoRef> objects;
  if (auto fault = sdk_spec_objects(filter.spec, objects)) return std::move(*fault);
  // vCenter checks the property paths when the filter is made: one object of each type answers for it.
  for (const auto& ps : filter.spec.prop_set) {
    auto sample = std::find_if(objects.begin(), objects.end(),
                               [&](const vim25::MoRef& o) { return sdk_type_of(o.value) == ps.type; });
    if (sample == objects.end()) continue;
    for (const auto& path : sdk_paths_of(ps)) {
      if (!sdk_property({ps.type, sample->value}, path)) return sdk_invalid_property(path, ps.type);
    }
  }
  filter.id = session_prefix(collector.session) + "filter-" + std::to_string(++sdk_filter_counter);
  filter.set_members(std::move(objects));
  const std::string id = filter.id;
  collector.filters.emplace(id, std::move(filter));
  for (auto& waiter : collector.waiters) waiter->cancel();
  vim25::XmlWriter w("CreateFilterResponse");
  w.moref("returnval", {"PropertyFilter", id});
  return sdk_ok(w.finish());
}

ServerResponse VcenterFront::Impl::sdk_destroy_filter(const std::string& session_key,
                                                      const vim25::MoRef& self) {
  for (auto& [id, collector] : sdk_collectors) {
    if (collector.session == session_key && collector.filters.erase(self.value))
      return sdk_ok(vim25::XmlWriter("DestroyPropertyFilterResponse").finish());
  }
  return sdk_object_not_found(self);
}

void VcenterFront::Impl::sdk_end_session(const std::string& session_key) {
  const std::string prefix = session_prefix(session_key);
  std::erase_if(sdk_views, [&](const auto& view) { return view.first.starts_with(prefix); });
  for (auto it = sdk_collectors.begin(); it != sdk_collectors.end();) {
    if (it->second.session == session_key) {
      for (auto& waiter : it->second.waiters) waiter->cancel();
      it = sdk_collectors.erase(it);
    } else {
      ++it;
    }
  }
}

ServerResponse VcenterFront::Impl::sdk_cancel_wait(SdkCollector& collector) {
  if (!collector.waiters.empty()) {
    collector.cancel_requested = true;
    for (auto& waiter : collector.waiters) waiter->cancel();
  }
  return sdk_ok(vim25::XmlWriter("CancelWaitForUpdatesResponse").finish());
}

// ---- changes ----

void VcenterFront::Impl::sdk_changed(const std::string& object_id) {
  for (auto& [id, collector] : sdk_collectors) {
    if (collector.filters.empty() || !collector.watches(object_id)) continue;
    collector.dirty.insert(object_id);
    for (auto& waiter : collector.waiters) waiter->cancel();
  }
}

void VcenterFront::Impl::sdk_membership_changed() {
  for (auto& [id, collector] : sdk_collectors) {
    if (collector.filters.empty()) continue;
    collector.membership_dirty = true;
    for (auto& waiter : collector.waiters) waiter->cancel();
  }
}

void VcenterFront::Impl::sdk_on_vm_event(const model::VmEvent& event) {
  if (sdk_collectors.empty() || !visible(event.vm)) return;
  sdk_changed(event.vm.id);
  if (event.type == model::VmEvent::Type::modified) return;
  // The VM's host, folder and pool list their VMs; views change their contents.
  sdk_changed(event.vm.host_id);
  sdk_changed(event.vm.folder_id);
  sdk_changed(event.vm.resource_pool_id);
  sdk_membership_changed();
  if (event.type == model::VmEvent::Type::deleted) sdk_forget_vm(event.vm.id);
}

// ---- WaitForUpdatesEx ----

namespace {

struct UpdateAnswer {
  std::string filter_sets;
  std::size_t objects = 0;
  bool truncated = false;
  std::vector<std::pair<std::string, model::Milestone>> milestones;  // VM id, milestone first carried here
};

// What differs, for each filter of collector `c`, from what the filter last reported: objects that entered
// (all their properties), changed (the properties that did) or left, up to `limit` objects (then truncated).
UpdateAnswer collect_updates(VcenterFront::Impl& front, SdkCollector& c, std::size_t limit) {
  UpdateAnswer answer;
  for (auto& [filter_id, filter] : c.filters) {
    if (answer.objects >= limit) {
      answer.truncated = true;
      break;
    }
    bool reevaluated = false;
    if (c.membership_dirty || !filter.evaluated) {
      std::vector<vim25::MoRef> members;
      (void)front.sdk_spec_objects(filter.spec, members);  // a view destroyed since: nothing in it
      filter.set_members(std::move(members));
      reevaluated = true;
    }
    std::string objects;
    // One object: its properties against what the filter last reported (all of them when it enters).
    auto visit = [&](const std::string& object_id) {
      const std::string type = front.sdk_type_of(object_id);
      if (type.empty()) return;  // gone: it leaves below
      auto reported = filter.reported.find(object_id);
      const bool enter = reported == filter.reported.end();
      if (!enter && !c.dirty.count(object_id)) return;
      if (answer.objects >= limit) {
        answer.truncated = true;
        return;
      }
      SdkFilter::Reported now{type, {}};
      for (const auto& ps : filter.spec.prop_set) {
        if (ps.type != type) continue;
        for (const auto& path : VcenterFront::Impl::sdk_paths_of(ps)) {
          if (auto value = front.sdk_property({type, object_id}, path)) now.values[path] = std::move(*value);
        }
      }
      std::string changes;
      for (const auto& [path, value] : now.values) {
        if (!enter) {
          auto before = reported->second.values.find(path);
          if (before != reported->second.values.end() && before->second == value) continue;
        }
        changes += change(path, value);
        if (type == "VirtualMachine") {
          if (auto m = milestone_of(path, value)) answer.milestones.emplace_back(object_id, *m);
        }
      }
      if (!enter && changes.empty()) return;
      objects += "<objectSet><kind>" + std::string(enter ? "enter" : "modify") + "</kind>" +
                 moref_element("obj", {type, object_id}) + changes + "</objectSet>";
      filter.reported[object_id] = std::move(now);
      ++answer.objects;
    };
    // With the same members, all reported, only the objects marked since can differ: a wait costs what
    // changed, not the filter's size. Otherwise every member, and those no longer there leave.
    const bool incremental = !reevaluated && filter.reported.size() == filter.members.size();
    if (incremental) {
      for (const auto& object_id : c.dirty) {
        if (answer.truncated) break;
        if (filter.member_ids.count(object_id)) visit(object_id);
      }
    } else {
      for (const auto& obj : filter.members) {
        if (answer.truncated) break;
        visit(obj.value);
      }
      for (auto it = filter.reported.begin(); !answer.truncated && it != filter.reported.end();) {
        if (filter.member_ids.count(it->first) && !front.sdk_type_of(it->first).empty()) {
          ++it;
          continue;
        }
        if (answer.objects >= limit) {
          answer.truncated = true;
          break;
        }
        objects += "<objectSet><kind>leave</kind>" + moref_element("obj", {it->second.type, it->first}) +
                   "</objectSet>";
        it = filter.reported.erase(it);
        ++answer.objects;
      }
    }
    if (!objects.empty()) {
      answer.filter_sets +=
          "<filterSet>" + moref_element("filter", {"PropertyFilter", filter_id}) + objects + "</filterSet>";
    }
  }
  return answer;
}

}  // namespace

void VcenterFront::Impl::apply_collector_version_fault() {
  model::Faults& faults = lab.faults();
  if (!faults.forget_collector_versions) return;
  faults.forget_collector_versions = false;
  // Far past any version given: a caller's next wait from its version is refused, as after a vCenter restart.
  constexpr std::uint64_t kJump = 1'000'000;
  for (auto& [id, c] : sdk_collectors) {
    c.version += kJump;
    c.answered_from.clear();
    c.last_answer.clear();
    c.versions_forgotten = true;
    for (auto& waiter : c.waiters) waiter->cancel();
    ++stats.faults_injected;
  }
}

asio::awaitable<ServerResponse> VcenterFront::Impl::sdk_wait_for_updates(
    std::string collector_id, bool legacy, std::string version, std::optional<int> max_wait_seconds,
    std::optional<int> max_object_updates) {
  auto self = shared_from_this();
  auto gone = [&] {
    return sdk_fault("ManagedObjectNotFound", "The PropertyCollector was destroyed while the call waited.",
                     moref_element("obj", {"PropertyCollector", collector_id}));
  };
  auto found = sdk_collectors.find(collector_id);
  if (found == sdk_collectors.end()) co_return gone();
  {
    SdkCollector& c = found->second;
    if (version.empty()) {
      // From the start: everything the filters hold is new to this caller.
      for (auto& [id, filter] : c.filters) filter.reported.clear();
      c.answered_from.clear();
      c.last_answer.clear();
      c.versions_forgotten = false;
    } else if (!c.last_answer.empty() && version == c.answered_from) {
      co_return sdk_ok(c.last_answer);  // the caller lost the last answer: the same changes again
    } else if (version != std::to_string(c.version)) {
      co_return sdk_fault("InvalidCollectorVersion", "The collector version '" + version + "' is not valid.");
    }
  }
  const auto deadline = max_wait_seconds ? std::chrono::steady_clock::now() +
                                               std::chrono::seconds(std::max(0, *max_wait_seconds))
                                         : std::chrono::steady_clock::time_point::max();
  const std::size_t limit = max_object_updates && *max_object_updates > 0
                                ? static_cast<std::size_t>(*max_object_updates)
                                : std::numeric_limits<std::size_t>::max();
  for (;;) {
    found = sdk_collectors.find(collector_id);
    if (found == sdk_collectors.end()) co_return gone();
    SdkCollector& c = found->second;
    if (c.cancel_requested) {
      c.cancel_requested = false;
      co_return sdk_fault("RequestCanceled", "The wait was canceled by CancelWaitForUpdates.");
    }
    if (c.versions_forgotten) {
      co_return sdk_fault("InvalidCollectorVersion", "The collector version '" + version + "' is not valid.");
    }

    // What differs from what each filter last reported.
    UpdateAnswer answer = collect_updates(*this, c, limit);
    c.membership_dirty = false;
    // A truncated set leaves the dirty marks: the next call finds what is still to send (a mark on an
    // object already sent costs a comparison, nothing more).
    if (!answer.truncated) c.dirty.clear();

    if (answer.objects > 0) {
      c.answered_from = std::to_string(c.version);
      ++c.version;
      c.last_answer = response_element(
          legacy ? "WaitForUpdatesResponse" : "WaitForUpdatesExResponse",
          "<returnval><version>" + std::to_string(c.version) + "</version>" + answer.filter_sets +
              (answer.truncated ? "<truncated>true</truncated>" : "") + "</returnval>");
      ServerResponse r = sdk_ok(c.last_answer);
      if (answer.milestones.empty()) co_return r;
      // Delivered: the answer is complete and handed to the server, which writes its headers first (a
      // client may stamp the set from them). Written: the body's write ended.
      const double delivered = lab.now();
      for (const auto& [vm, m] : answer.milestones) lab.note_milestone_delivered(vm, m, delivered);
      std::weak_ptr<Impl> weak = self;
      r.stream = [weak, body = std::move(r.body), milestones = std::move(answer.milestones)](
                     http::StreamWriter& writer) -> asio::awaitable<void> {
        std::string chunk = body;
        const bool written = co_await writer.write(std::move(chunk));
        if (auto impl = weak.lock(); impl && written) {
          const double at = impl->lab.now();
          for (const auto& [vm, m] : milestones) impl->lab.note_milestone_written(vm, m, at);
        }
      };
      r.body.clear();
      co_return r;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      co_return sdk_ok(vim25::XmlWriter("WaitForUpdatesExResponse").finish());  // nothing new in time
    }
    auto timer = std::make_shared<asio::steady_timer>(executor);
    timer->expires_at(deadline);
    c.waiters.push_back(timer);
    boost::system::error_code ec;
    co_await timer->async_wait(asio::redirect_error(asio::use_awaitable, ec));
    if (auto again = sdk_collectors.find(collector_id); again != sdk_collectors.end())
      std::erase(again->second.waiters, timer);
  }
}

}  // namespace bootstorm::sim::vcenter

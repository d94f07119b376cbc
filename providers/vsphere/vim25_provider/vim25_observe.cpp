// Vim25Provider::observe: one filter over a ListView of the run's VMs, read with WaitForUpdatesEx; the pushed
// changes become milestones (PushedMilestones). After a wait whose answer never came (a timeout, a dropped
// connection, a collector gone with an expired session) or came only to a resend, the collector and its view
// are made again and read from the start: a server may count the changes of an answer it sent as delivered
// (govmomi's simulator keeps no history of versions), so a repeat from the kept version could lose them.
// Milestones already reported are not reported twice.
#include <spdlog/spdlog.h>

#include <boost/asio/steady_timer.hpp>
#include <map>
#include <nlohmann/json.hpp>

#include "common/async/sleep.hpp"
#include "protocol/vim25/decode.hpp"
#include "protocol/vim25/messages.hpp"
#include "providers/vsphere/vim25/updates.hpp"
#include "providers/vsphere/vim25_provider/pushed_milestones.hpp"
#include "providers/vsphere/vim25_provider/vim25_provider.hpp"

namespace bootstorm::vsphere::vim25 {

namespace asio = boost::asio;
using steady = std::chrono::steady_clock;
using wall = std::chrono::system_clock;

namespace {

// A quiet wait answers empty after this long: it bounds a milestone's resolution after a quiet spell, and
// how long a stop waits for the wait in flight.
constexpr int kWaitSeconds = 1;
// Failed waits in a row before observation gives up (the engine then times the storm out).
constexpr int kMaxFailures = 30;

}  // namespace

namespace {

// What an answer showed that the plan did not expect, said once per answer: VMs already on before their
// starts (never measured), and VMs that DRS placed or moved elsewhere than the plan (noted in the journal).
void warn_of_surprises(PushedMilestones& pushed, const std::map<std::string, std::string>& host_names,
                       const api::ProviderConfig& config) {
  if (auto on = pushed.take_already_on(); !on.empty()) {
    std::string listed;
    for (std::size_t i = 0; i < on.size() && i < 5; ++i) listed += (i ? ", " : "") + on[i];
    spdlog::warn(
        "{} of the run's VMs were already powered on before the storm started ({}{}): they booted before "
        "their starts, so none of their milestones is measured; vCenter's answer to their power-on says "
        "why it refused them. Something outside this run powered them on after they were cloned.",
        on.size(), listed, on.size() > 5 ? ", ..." : "");
  }
  // Moves are reported per answer: one line naming the first few, so that a DRS rebalance of hundreds of
  // VMs stays readable.
  if (auto moves = pushed.take_moves(); !moves.empty()) {
    auto host = [&](const std::string& id) {
      const auto it = host_names.find(id);
      return it == host_names.end() ? id : it->second;
    };
    std::string listed;
    for (std::size_t i = 0; i < moves.size() && i < 5; ++i) {
      listed += (i ? "; " : "") + moves[i].vm + " on " + host(moves[i].host_id) + ", planned " +
                host(moves[i].planned_host_id);
    }
    spdlog::warn(
        "{} VMs run on another host than the plan placed them (vCenter's DRS placed or moved them): "
        "{}{}",
        moves.size(), listed, moves.size() > 5 ? "; ..." : "");
    if (config.note) {
      for (const auto& m : moves) {
        const nlohmann::json note = {
            {"vm", m.vm}, {"plannedHost", host(m.planned_host_id)}, {"host", host(m.host_id)}};
        config.note(api::kNoteVmMoved, note.dump());
      }
    }
  }
}

}  // namespace

asio::awaitable<void> Vim25Provider::observe(std::vector<api::VmHandle> vms, api::MilestoneSink sink,
                                             CancelSignal stop) {
  if (config_.dry_run || vms.empty()) co_return;
  // Counted before the first suspension: the barrier, spawned after this, finds it in prepare_storm.
  // A guard: an observation cancelled while it is being set up releases the storm too.
  struct Arming {
    Vim25Provider& provider;
    bool pending = true;
    void operator()() {
      if (!pending) return;
      pending = false;
      --provider.observations_arming_;
      provider.observation_armed_.cancel();
    }
    ~Arming() { (*this)(); }
  };
  ++observations_arming_;
  Arming armed{*this};
  PushedMilestones pushed(steady::now());
  std::vector<MoRef> refs;
  std::map<std::string, std::string> id_of;  // VM name -> managed object id (events name the VM)
  for (const auto& vm : vms) {
    id_of[vm.name] = vm.id;
    const auto planned = hosts_.find(vm.host);
    std::optional<steady::time_point> written;
    if (auto it = start_written_.find(vm.id); it != start_written_.end()) written = it->second;
    pushed.add_vm(vm.name, vm.id, planned == hosts_.end() ? std::string() : planned->second.id, written);
    refs.push_back({"VirtualMachine", vm.id});
  }
  const ServiceContent& sc = session_.service_content();
  std::unique_ptr<UpdateStream> stream;
  MoRef view;
  // Reading the filter's initial state: its first answer and, when that was truncated, the rest of it.
  bool initial = false;
  // An answer was lost on the way in the set being read: read from the start once it is read to its end.
  bool lost_answer = false;
  // The collector and its view, destroyed (best effort) so that the next turn makes them again.
  auto drop_stream = [&]() -> asio::awaitable<void> {
    if (stream) co_await stream->destroy();
    stream.reset();
    if (!view.empty()) {
      const std::string method = "DestroyView";
      const std::string element = destroy_view(view);
      (void)co_await session_.call(method, element);
      view = {};
    }
  };
  int failures = 0;
  auto previous_sent = steady::now();
  while (!stop.cancelled() && !pushed.all_reached()) {
    if (!stream) {
      const std::string method = "CreateListView";
      const std::string element = create_list_view(sc.view_manager, refs);
      auto made = co_await session_.call(method, element);
      Expected<void> created;
      if (made) {
        view = decode_moref(made->returnval());
        // Its waits are long polls, one at a time, that vCenter answers when something changed: charged to
        // the budget, never held back by it.
        stream = std::make_unique<UpdateStream>(session_, /*urgent=*/true);
        const PropertyFilterSpec spec =
            view_filter_spec(view, "VirtualMachine",
                             {"runtime.powerState", "runtime.host", "guest.toolsRunningStatus",
                              "guest.ipAddress", "guest.net"});
        created = co_await stream->create(spec);
        initial = true;
      } else {
        created = made.error();
      }
      if (!created) {
        armed();                 // not in place, and the storm will not wait for the retries
        co_await drop_stream();  // the view or collector that was made, if any
        if (++failures >= kMaxFailures) {
          spdlog::error("observing {} VMs through vCenter {} failed: {}", vms.size(), config_.endpoint,
                        created.error().what());
          co_return;
        }
        co_await async::sleep_for(std::chrono::milliseconds(500));
        continue;
      }
    }
    // Start times written since observation began tighten the lower bounds.
    for (const auto& [id, at] : start_written_) pushed.start_written(id, at);
    WaitOptions options;
    options.max_wait_seconds = kWaitSeconds;
    const auto sent = steady::now();
    auto set = co_await stream->next(options);
    if (!set) {
      armed();
      spdlog::warn("waiting for VM changes at vCenter {} failed: {}; reading the VMs' state from the start",
                   config_.endpoint, set.error().what());
      // The window of the next answer reaches back to the last wait answered (previous_sent is not moved),
      // so a milestone the lost answer carried keeps an honest bound.
      co_await drop_stream();
      if (++failures >= kMaxFailures) {
        spdlog::error("observing {} VMs through vCenter {} gave up after {} failed waits", vms.size(),
                      config_.endpoint, failures);
        co_return;
      }
      co_await async::sleep_for(std::chrono::milliseconds(200));
      continue;
    }
    failures = 0;
    // Stamped when the answer's headers arrived: the set was complete then; reading and parsing a large body
    // (1,000 VMs' changes) would add its own time to every milestone in it.
    const auto now = steady::now();
    const auto arrived =
        set->received_at != steady::time_point{} && set->received_at <= now ? set->received_at : now;
    UpdateWindow window{previous_sent, arrived,
                        wall::now() - std::chrono::duration_cast<wall::duration>(now - arrived)};
    // The initial state read before any start was asked for predates every start of the storm.
    window.before_starts = initial && starts_requested_ == 0;
    // Answered only to a resend: the first answer, lost on the way, may have carried changes this one does
    // not. Its own changes count; then the state is read from the start, in a window from the same bound.
    if (set->resent) lost_answer = true;
    if (!lost_answer) previous_sent = sent;
    if (!set->truncated) {
      // The initial state is read to the end: the next wait, sent right away, is on vCenter before the
      // storm's starts.
      initial = false;
      armed();
    }
    for (auto& ev : pushed.apply(*set, window)) {
      if (ev.milestone == api::Milestone::running) {
        if (auto it = id_of.find(ev.vm); it != id_of.end())
          acknowledge(it->second, ev.observed_mono, ev.observed_wall);
      }
      sink(std::move(ev));
    }
    warn_of_surprises(pushed, host_names_, config_);
    if (lost_answer && !set->truncated) {
      lost_answer = false;
      spdlog::info(
          "an answer from vCenter {} was lost on the way and its wait sent again: reading the VMs' "
          "state from the start",
          config_.endpoint);
      co_await drop_stream();
    }
  }
  armed();
  co_await drop_stream();
}

}  // namespace bootstorm::vsphere::vim25

#include "tests/unit/orchestrator/engine/fake_provider.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace bootstorm::test {

namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;

FakeProvider::FakeProvider(asio::any_io_executor executor, api::ProviderConfig config,
                           FakeBehaviour behaviour, std::shared_ptr<FakeRecord> record)
    : executor_(std::move(executor)),
      config_(std::move(config)),
      b_(std::move(behaviour)),
      rec_(std::move(record)) {}

asio::awaitable<void> FakeProvider::sleep(std::chrono::milliseconds d) {
  if (d.count() <= 0) co_return;
  asio::steady_timer t(executor_, d);
  co_await t.async_wait(asio::as_tuple(asio::use_awaitable));
}

api::Capabilities FakeProvider::capabilities() const {
  api::Capabilities c;
  c.observed = {{api::Milestone::running, b_.resolution_s},
                {api::Milestone::guest_agent, b_.resolution_s},
                {api::Milestone::ip_assigned, b_.resolution_s}};
  c.start_blocks_until_powered_on = b_.start_block.count() > 0;
  return c;
}

asio::awaitable<Expected<void>> FakeProvider::connect() {
  rec_->calls.push_back("connect");
  ++stats_.requests;
  if (b_.fail_connect)
    co_return make_error(ErrorKind::connect, "fake: cannot connect to " + config_.endpoint);
  co_return Expected<void>{};
}

asio::awaitable<Expected<void>> FakeProvider::check_inventory(const api::InventoryRequest& request) {
  rec_->calls.push_back("check_inventory " + std::to_string(request.total_vms));
  ++stats_.requests;
  if (b_.fail_inventory) co_return make_error(ErrorKind::not_found, "fake: host missing-host does not exist");
  co_return Expected<void>{};
}

asio::awaitable<Expected<api::VmHandle>> FakeProvider::provision(const api::VmSpec& spec) {
  rec_->calls.push_back("provision " + spec.name);
  ++stats_.requests;
  co_await sleep(b_.provision_delay);
  if (b_.provision_fail.count(spec.name)) {
    ++stats_.errors;
    co_return make_error(ErrorKind::api, "fake: clone of " + spec.name + " failed: datastore full");
  }
  api::VmHandle h{spec.name, "vm-" + std::to_string(spec.index + 1000), spec.host, spec.scenario};
  handles_[spec.name] = h;
  rec_->live.insert(spec.name);
  co_return h;
}

asio::awaitable<Expected<void>> FakeProvider::wait_startable(const api::VmHandle& vm,
                                                             std::chrono::milliseconds) {
  rec_->calls.push_back("wait_startable " + vm.name);
  co_return Expected<void>{};
}

asio::awaitable<Expected<void>> FakeProvider::prepare_storm(std::size_t expected_starts) {
  rec_->calls.push_back("prepare_storm");
  rec_->prepare_storm_expected = expected_starts;
  co_return Expected<void>{};
}

asio::awaitable<Expected<api::StartResult>> FakeProvider::start(const api::VmHandle& vm) {
  rec_->calls.push_back("start " + vm.name);
  rec_->released[vm.name] = Clock::now();
  ++stats_.requests;
  rec_->peak_starts_in_flight = std::max(rec_->peak_starts_in_flight, ++rec_->starts_in_flight);
  co_await sleep(b_.start_write_delay);
  api::StartResult r;
  r.written_mono = Clock::now();
  r.written_wall = std::chrono::system_clock::now();
  rec_->written[vm.name] = r.written_mono;
  if (b_.on_start) b_.on_start(vm.name);
  co_await sleep(b_.start_block);
  --rec_->starts_in_flight;
  if (b_.start_fail.count(vm.name)) {
    ++stats_.errors;
    co_return make_error(ErrorKind::api, "fake: power on of " + vm.name + " refused: host in maintenance");
  }
  r.acknowledged_mono = Clock::now();
  r.acknowledged_wall = std::chrono::system_clock::now();
  co_return r;
}

asio::awaitable<void> FakeProvider::observe(std::vector<api::VmHandle> vms, api::MilestoneSink sink,
                                            CancelSignal stop) {
  ++rec_->observe_calls;
  std::map<std::string, std::set<api::Milestone>> emitted;
  asio::steady_timer timer(executor_);
  while (b_.observe_ignores_stop || !stop.cancelled()) {
    bool all_done = true;
    const auto now = Clock::now();
    for (auto& vm : vms) {
      if (b_.never_boot.count(vm.name)) continue;
      auto per = b_.per_vm.find(vm.name);
      const auto& schedule = per != b_.per_vm.end() ? per->second : b_.milestones;
      auto w = rec_->written.find(vm.name);
      if (w == rec_->written.end() || b_.start_fail.count(vm.name)) {
        if (!b_.start_fail.count(vm.name)) all_done = false;
        continue;
      }
      for (auto& [m, delay] : schedule) {
        if (emitted[vm.name].count(m)) continue;
        if (now < w->second + delay) {
          all_done = false;
          continue;
        }
        emitted[vm.name].insert(m);
        api::MilestoneEvent ev;
        ev.vm = vm.name;
        ev.milestone = m;
        ev.observed_mono = now;
        ev.observed_wall = std::chrono::system_clock::now();
        ev.resolution_s = b_.resolution_s;
        ev.source = api::Source::watch;
        if (m == api::Milestone::ip_assigned) ev.detail = b_.ip;
        sink(ev);
        // A duplicate observation (a poll seeing the same state again) must be ignored by the engine.
        ev.observed_mono = Clock::now() + std::chrono::milliseconds(1);
        sink(ev);
      }
    }
    if (all_done && !b_.observe_ignores_stop) break;
    timer.expires_after(b_.observe_poll);
    co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
  }
  // Like a real watch: keep the stream until told to stop.
  while (!stop.cancelled() && !b_.observe_ignores_stop) {
    timer.expires_after(b_.observe_poll);
    co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
  }
  ++rec_->observe_returned;
}

asio::awaitable<Expected<void>> FakeProvider::stop(const api::VmHandle& vm) {
  rec_->calls.push_back("stop " + vm.name);
  if (!api::name_carries_run_id(vm.name, config_.run_id))
    co_return make_error(ErrorKind::invalid_input, "fake: refusing to stop " + vm.name);
  co_return Expected<void>{};
}

asio::awaitable<Expected<void>> FakeProvider::destroy(const api::VmHandle& vm) {
  rec_->calls.push_back("destroy " + vm.name);
  ++stats_.requests;
  if (!api::name_carries_run_id(vm.name, config_.run_id))
    co_return make_error(ErrorKind::invalid_input, "fake: refusing to delete " + vm.name);
  rec_->destroyed.push_back(vm.name);
  rec_->live.erase(vm.name);
  co_return Expected<void>{};
}

asio::awaitable<Expected<std::vector<api::VmHandle>>> FakeProvider::list_run_vms(const std::string& run_id) {
  rec_->calls.push_back("list_run_vms " + run_id);
  std::vector<api::VmHandle> out;
  for (auto& name : rec_->live)
    if (api::name_carries_run_id(name, run_id)) out.push_back(api::VmHandle{name, "vm-live-" + name, "", ""});
  for (auto& vm : b_.extra_run_vms) out.push_back(vm);
  co_return out;
}

asio::awaitable<void> FakeProvider::disconnect() {
  rec_->calls.push_back("disconnect");
  rec_->disconnected = true;
  co_return;
}

http::ApiStats FakeProvider::stats() const {
  return stats_;
}

std::function<std::unique_ptr<api::Provider>(asio::any_io_executor, const api::ProviderConfig&)> fake_factory(
    FakeBehaviour behaviour, std::shared_ptr<FakeRecord> record) {
  return [behaviour, record](asio::any_io_executor ex, const api::ProviderConfig& config) {
    return std::make_unique<FakeProvider>(ex, config, behaviour, record);
  };
}

}  // namespace bootstorm::test

// Fuzz target: vCenter response decoding, through the provider itself. A fake Transport (the provider's only
// way to the network) answers the provider's requests, in order, with the responses the input describes;
// the provider logs in (both dialects: a 404 on /api/session switches to /rest), checks the inventory
// (golden VM, hosts, datastores), lists the run's VMs and logs out. The error decoders (both error shapes)
// and the dialect unwrapping see every body as well.
//
// Input: responses separated by a line "====". Each starts with a line holding the HTTP status (three
// digits; anything else means 200), the rest is the body. When the responses run out, the transport fails
// like a refused connection.
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <cstdint>
#include <deque>
#include <exception>
#include <string>
#include <string_view>

#include "providers/vsphere/dialect.hpp"
#include "providers/vsphere/settings.hpp"
#include "providers/vsphere/vcenter_error.hpp"
#include "providers/vsphere/vsphere_provider.hpp"

namespace {

namespace asio = boost::asio;
using namespace bootstorm;

std::deque<http::Response> parse_responses(std::string_view input) {
  std::deque<http::Response> out;
  while (!input.empty() || out.empty()) {
    const auto separator = input.find("\n====\n");
    std::string_view record = input.substr(0, separator);
    input = separator == std::string_view::npos ? std::string_view() : input.substr(separator + 6);
    http::Response r;
    r.status = 200;
    const auto newline = record.find('\n');
    const std::string_view first = record.substr(0, newline);
    if (first.size() == 3 && first.find_first_not_of("0123456789") == std::string_view::npos) {
      r.status = std::stoi(std::string(first));
      record = newline == std::string_view::npos ? std::string_view() : record.substr(newline + 1);
    }
    r.body = std::string(record);
    r.headers.emplace_back("Content-Type", "application/json");
    out.push_back(std::move(r));
    if (input.empty()) break;
  }
  return out;
}

class ScriptedVcenter final : public vsphere::Transport {
 public:
  explicit ScriptedVcenter(std::deque<http::Response> responses) : responses_(std::move(responses)) {}
  asio::awaitable<Expected<http::Response>> send(http::Request) override {
    if (responses_.empty())
      co_return make_error(ErrorKind::io, "connection refused (the fuzz input has no more responses)");
    http::Response r = std::move(responses_.front());
    responses_.pop_front();
    r.written_at = r.received_at = std::chrono::steady_clock::now();
    r.written_at_wall = std::chrono::system_clock::now();
    co_return r;
  }
  asio::awaitable<Expected<void>> prewarm(std::size_t) override { co_return Expected<void>{}; }
  void close_idle() override {}

 private:
  std::deque<http::Response> responses_;
};

asio::awaitable<void> drive(vsphere::VsphereProvider& provider) {
  if (!co_await provider.connect()) co_return;
  api::InventoryRequest inventory;
  inventory.hosts = {"esx-01", "esx-02"};
  inventory.total_vms = 8;
  (void)co_await provider.check_inventory(inventory);
  (void)co_await provider.list_run_vms("3f9a2c");
  co_await provider.disconnect();
}

// Outside the extern "C" function: g++ 12 mangles two lambdas of an extern "C" function to the same name.
void decode_one(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  auto responses = parse_responses(input);
  for (const auto& r : responses) {
    auto error = vsphere::parse_vcenter_error(r.status, r.body);
    (void)vsphere::to_error(error, "fuzzing", "https://vcenter.fuzz");
    const auto body = nlohmann::json::parse(r.body, nullptr, false);
    (void)vsphere::Paths(vsphere::Dialect::api).unwrap(body);
    (void)vsphere::Paths(vsphere::Dialect::rest).unwrap(body);
  }

  asio::io_context io;
  api::ProviderConfig config;
  config.kind = "vsphere";
  config.endpoint = "https://vcenter.fuzz";
  config.username = "administrator@vsphere.local";
  config.password = "fuzz-pass";
  vsphere::Settings settings;
  settings.vm = "golden-win11";
  settings.clone = "full";
  config.settings = api::make_settings(settings);
  config.run_id = "3f9a2c";
  config.requests_per_second = 1e6;
  vsphere::VsphereProvider provider(io.get_executor(), config,
                                    std::make_unique<ScriptedVcenter>(std::move(responses)));
  asio::co_spawn(io, drive(provider), [](std::exception_ptr e) {
    if (e) std::rethrow_exception(e);  // an exception escaping the provider is a bug: a crash
  });
  io.run();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  decode_one(data, size);
  return 0;
}

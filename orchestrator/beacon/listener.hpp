#pragma once
// Guest-ready beacon: an HTTP listener that in-guest agents call once the desktop is usable.
//
//   POST /v1/ready   {"vm": "<name or platform id>", "token": "<hex>", "ip": "10.0.0.5"?}
//
// The per-VM token is hex(HMAC-SHA256(key = a random per-run secret, msg = runId + ":" + vmName)), compared
// in constant time. Bodies are bounded (4 KiB), malformed requests get 400, bad tokens 401, unknown VMs 404,
// each with a JSON {"error": "..."} reason. The first valid call per VM wins; replays get 200
// {"status": "duplicate"} and change nothing; calls after close_window() (the scenario's observe phase is
// over) get 410 and change nothing. The receive instant is stamped on arrival (steady + wall) and pushed as
// milestone `beacon` (source beacon, resolution ~0).
//
// Hostile or broken clients: a token bucket per remote address is charged by failed requests only, so a
// flood of bad requests from an address never delays or refuses the valid calls of guests behind the same
// address (a lab, a NAT); once it is empty, failures are answered 429 and their connection is closed. Every
// request must arrive whole within `request_timeout` of its first byte (a client trickling its headers is
// disconnected), idle keep-alive connections are closed after `idle_timeout`.
//
// ReadyListener is the abstract face the engine uses (no HTTP types); Listener is the implementation on
// http::Server. This header stays free of Beast and of the HTTP server header.
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "common/expected.hpp"
#include "providers/api/provider.hpp"

namespace bootstorm::beacon {

class ReadyListener {
 public:
  virtual ~ReadyListener() = default;
  // URL guests call (".../v1/ready").
  virtual std::string url() const = 0;
  // The token of `vm_name` (registered as a secret before it is returned).
  virtual std::string token_for(const std::string& vm_name) = 0;
  // Accept callbacks for this VM, by name or by platform id.
  virtual void expect(const std::string& vm_name, const std::string& platform_id) = 0;
  // Where accepted beacons go (called on the listener's executor).
  virtual void set_sink(api::MilestoneSink sink) = 0;
  // The run stopped observing the VMs expected so far (a scenario's observe phase ended): their later valid
  // calls are answered 410 and reach no sink. VMs expected afterwards (the next scenario) are not affected.
  virtual void close_window() {}
  // Graceful stop.
  virtual boost::asio::awaitable<void> stop() = 0;
};

struct ListenerOptions {
  std::string listen = "127.0.0.1:0";  // host:port to bind ("[::1]:0" for IPv6)
  std::string advertise_url;           // base URL guests use; default http://<bound address>
  std::string run_id;
  std::string secret;  // HMAC key; empty: 32 random bytes
  std::size_t max_body_bytes = 4096;
  double rate_per_second = 50;  // failed requests per second and remote address, refilled continuously
  double burst = 100;
  // A request (headers and body) must arrive within this time of its first byte.
  std::chrono::milliseconds request_timeout{std::chrono::seconds(5)};
  std::chrono::milliseconds idle_timeout{
      std::chrono::seconds(30)};  // keep-alive connection without a request
};

struct ListenerStats {
  std::uint64_t accepted = 0;
  std::uint64_t duplicates = 0;
  std::uint64_t bad_request = 0;
  std::uint64_t unauthorized = 0;
  std::uint64_t unknown_vm = 0;
  std::uint64_t rate_limited = 0;
  std::uint64_t late = 0;  // valid calls after close_window()
};

class Listener final : public ReadyListener {
 public:
  Listener(boost::asio::any_io_executor executor, ListenerOptions options);
  ~Listener() override;
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;

  // Binds and starts serving. Error when the address cannot be bound.
  Expected<void> start();
  unsigned short port() const;

  std::string url() const override;
  std::string token_for(const std::string& vm_name) override;
  void expect(const std::string& vm_name, const std::string& platform_id) override;
  void set_sink(api::MilestoneSink sink) override;
  void close_window() override;
  boost::asio::awaitable<void> stop() override;
  const ListenerStats& stats() const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

// Creates and starts a Listener (the engine's default beacon factory).
Expected<std::unique_ptr<ReadyListener>> start_listener(boost::asio::any_io_executor executor,
                                                        ListenerOptions options);

// hex(HMAC-SHA256(key, message)), lowercase.
std::string hmac_sha256_hex(std::string_view key, std::string_view message);
// Compares without early exit (time does not depend on where the strings differ).
bool constant_time_equal(std::string_view a, std::string_view b);
// Splits "host:port" / "[v6]:port"; nullopt-like: returns false when malformed.
bool split_host_port(const std::string& text, std::string& host, unsigned short& port);

}  // namespace bootstorm::beacon
